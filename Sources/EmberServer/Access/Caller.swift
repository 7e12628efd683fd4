import EmberRules

/// Responsible for: who makes a call: the admin (the server's admin credential: rules do not
/// apply, like the emulator's `owner`), a user with a verified ID token, or no one
/// (`request.auth == null`). `AuthInterceptor` binds it for the call's task; code that leaves
/// the task (a stream's queue) captures it first. Outside any call it is `.anonymous`, the most
/// restricted caller, so a lost binding can only deny.
enum Caller: Sendable {
    case admin
    case anonymous
    case user(VerifiedToken)

    @TaskLocal static var current: Caller = .anonymous
}

/// Responsible for: the claims of an ID token whose signature and times were checked, for
/// `request.auth`. Its audience and issuer are checked per database (`AccessControl`), since
/// one server holds many projects.
struct VerifiedToken: Sendable {
    let auth: RulesAuth
    let audience: [String]
    let issuer: String?
}

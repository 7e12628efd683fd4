import EmberModel

/// Responsible for: `auth` as the rules see it: null (signed out), or an object. For an ID
/// token: `{uid, provider, token: <every claim>}`; for the admin's `auth_variable_override`:
/// the object given, as it is.
public struct TreeRulesAuth: Sendable {
    let value: RuleValue

    public static let signedOut = TreeRulesAuth(value: .null)

    init(value: RuleValue) { self.value = value }

    /// A verified ID token's caller: `uid` (its `sub`), `provider` (its
    /// `firebase.sign_in_provider`, else "custom") and `token` (all claims).
    public init(uid: String, claims: MapValue) {
        var provider = "custom"
        if let f = claims.entries.first(where: { $0.key == "firebase" }), case .map(let fm) = f.value,
           let p = fm.entries.first(where: { $0.key == "sign_in_provider" }), case .string(let s) = p.value {
            provider = s
        }
        value = .object(["uid": .string(uid), "provider": .string(provider), "token": RuleValue(.map(claims))])
    }

    /// `auth_variable_override`'s JSON: an object, or null (signed out).
    public init(override json: Value) throws {
        switch json {
        case .null: value = .null
        case .map: value = RuleValue(json)
        default: throw TreeRulesError("auth_variable_override must be a JSON object or null")
        }
    }
}

/// Responsible for: `query` in a `.read` rule: how the read orders and bounds its children.
/// A read without a query has every `orderBy*` false (`orderByChild` null) and no bounds.
public struct TreeRulesQuery: Sendable {
    public var orderByKey = false
    public var orderByValue = false
    public var orderByPriority = false
    public var orderByChild: String?
    public var startAt: TreeValue?
    public var endAt: TreeValue?
    public var equalTo: TreeValue?
    public var limitToFirst: Int?
    public var limitToLast: Int?

    public init() {}

    var value: RuleValue {
        func bound(_ v: TreeValue?) -> RuleValue { v.map { RuleValue($0) } ?? .null }
        return .object([
            "orderByKey": .bool(orderByKey), "orderByValue": .bool(orderByValue),
            "orderByPriority": .bool(orderByPriority), "orderByChild": orderByChild.map { .string($0) } ?? .null,
            "startAt": bound(startAt), "endAt": bound(endAt), "equalTo": bound(equalTo),
            "limitToFirst": limitToFirst.map { .number(Double($0)) } ?? .null,
            "limitToLast": limitToLast.map { .number(Double($0)) } ?? .null,
        ])
    }
}

/// Responsible for: why an expression could not be evaluated (a missing field, a wrong type, too
/// many document reads). Firestore treats such a condition as false: the request is denied.
public struct RulesEvaluationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Responsible for: a syntax error in a rules file, with the line and column where it was found.
///
///     "3:17: expected ';' after the allow condition, found '}'"
public struct RulesParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var location: SourceLocation
    public var message: String

    public init(_ message: String, at location: SourceLocation) {
        self.message = message
        self.location = location
    }

    public var line: Int { location.line }
    public var column: Int { location.column }
    public var description: String { "\(location.line):\(location.column): \(message)" }
}

/// Responsible for: the parsed form of a rules file: the service, its nested `match` blocks,
/// their `allow` statements and `function` declarations. Pure data, built by `RulesParser` and
/// read by `RulesEvaluator`.
///
///     let set = try RulesParser.parse("service cloud.firestore { match /databases/{db}/documents { } }")
///     set.service.name   // "cloud.firestore"
public struct RuleSet: Sendable, Equatable {
    /// `rules_version = '2';` (nil when absent; Firestore then takes version 1).
    public var version: String?
    public var service: ServiceBlock
}

/// Responsible for: `service cloud.firestore { ... }`: the top-level functions and matches.
public struct ServiceBlock: Sendable, Equatable {
    public var name: String
    public var functions: [FunctionDecl]
    public var matches: [MatchBlock]
}

/// Responsible for: one `match /a/{b}/{c=**} { ... }` block and what it contains.
public struct MatchBlock: Sendable, Equatable {
    public var pattern: PathPattern
    public var functions: [FunctionDecl]
    public var allows: [AllowStatement]
    public var matches: [MatchBlock]
    public var location: SourceLocation
}

/// Responsible for: the segments of a `match` path: literal ids, `{var}` (one segment) and
/// `{var=**}` (the rest of the path, zero or more segments, bound as a path).
public struct PathPattern: Sendable, Equatable, CustomStringConvertible {
    public enum Segment: Sendable, Equatable {
        case literal(String)
        case variable(String)
        case rest(String)
    }
    public var segments: [Segment]

    public var description: String {
        segments.map { seg -> String in
            switch seg {
            case .literal(let s): return "/" + s
            case .variable(let v): return "/{\(v)}"
            case .rest(let v): return "/{\(v)=**}"
            }
        }.joined()
    }
}

/// Responsible for: the request methods a rule can grant. `read` is get + list and `write` is
/// create + update + delete.
public enum RuleMethod: String, Sendable, CaseIterable {
    case get, list, create, update, delete

    /// The methods an `allow` keyword names, or nil when it names none.
    public static func expand(_ keyword: String) -> [RuleMethod]? {
        switch keyword {
        case "read": return [.get, .list]
        case "write": return [.create, .update, .delete]
        default: return RuleMethod(rawValue: keyword).map { [$0] }
        }
    }
}

/// Responsible for: `allow get, list: if <condition>;` (no condition means `true`).
public struct AllowStatement: Sendable, Equatable {
    public var methods: [RuleMethod]
    public var condition: Expr
    public var location: SourceLocation
}

/// Responsible for: `function name(a, b) { let x = ...; return <expr>; }`.
public struct FunctionDecl: Sendable, Equatable {
    public var name: String
    public var parameters: [String]
    public var lets: [(name: String, value: Expr)]
    public var body: Expr
    public var location: SourceLocation

    public static func == (a: FunctionDecl, b: FunctionDecl) -> Bool {
        a.name == b.name && a.parameters == b.parameters && a.body == b.body
            && a.lets.map(\.name) == b.lets.map(\.name) && a.lets.map(\.value) == b.lets.map(\.value)
    }
}

/// Responsible for: a place in the rules source, 1-based.
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public init(line: Int, column: Int) { self.line = line; self.column = column }
    public var description: String { "\(line):\(column)" }
}

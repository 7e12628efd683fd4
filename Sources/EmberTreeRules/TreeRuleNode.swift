import EmberModel

/// Responsible for: the rules of one level of the tree: its `.read`, `.write` and `.validate`
/// expressions, its `.indexOn` list, its named children and at most one `$wildcard` child. A
/// named child wins over the wildcard for its key (the widget example's `$other` is "any other
/// key"). Immutable once loaded.
final class TreeRuleNode: Sendable {
    let read: RuleExpr?
    let write: RuleExpr?
    let validate: RuleExpr?
    let indexOn: [String]
    let children: [String: TreeRuleNode]
    let wildcard: (name: String, node: TreeRuleNode)?

    init(read: RuleExpr? = nil, write: RuleExpr? = nil, validate: RuleExpr? = nil, indexOn: [String] = [],
         children: [String: TreeRuleNode] = [:], wildcard: (name: String, node: TreeRuleNode)? = nil) {
        self.read = read
        self.write = write
        self.validate = validate
        self.indexOn = indexOn
        self.children = children
        self.wildcard = wildcard
    }

    /// The rules for `key` below this level, and the wildcard it binds (if one matched).
    func child(_ key: String) -> (TreeRuleNode, binding: String?)? {
        if let c = children[key] { return (c, nil) }
        if let w = wildcard { return (w.node, w.name) }
        return nil
    }
}

/// Responsible for: reading a rules source (JSON with `//` and `/* */` comments, as the
/// Realtime Database accepts) into `TreeRuleNode`s, compiling each expression, and refusing a
/// source the Realtime Database would refuse: not `{"rules": {...}}`, an unknown `.key`, two
/// wildcards at one level, a wildcard name used twice on one path, a rule neither boolean nor
/// string, an expression that does not parse or names what its kind cannot see, an `.indexOn`
/// that is not a child path or ".value".
enum TreeRulesLoader {
    static func load(_ source: String) throws -> (TreeRuleNode, strict: Value) {
        let stripped: String
        do { stripped = try stripComments(source) } catch let e as TreeRulesError { throw e }
        let json: Value
        do { json = try ValueJSON.parse(stripped, plain: true) } catch let e as EmberError {
            throw TreeRulesError("the rules are not valid JSON: \(e.message)")
        }
        guard case .map(let top) = json, top.entries.count == 1, top.entries[0].key == "rules",
              case .map(let rules) = top.entries[0].value else {
            throw TreeRulesError("the rules must be a JSON object with one key, \"rules\", whose value is an object")
        }
        return (try node(rules, at: "rules", wildcards: []), json)
    }

    private static func node(_ m: MapValue, at location: String, wildcards: [String]) throws -> TreeRuleNode {
        var read: RuleExpr?, write: RuleExpr?, validate: RuleExpr?, indexOn: [String] = []
        var children: [String: TreeRuleNode] = [:], wildcard: (name: String, node: TreeRuleNode)?
        let names = Set(wildcards)
        for (key, value) in m.entries {
            let here = location + "/" + key
            switch key {
            case ".read": read = try expression(value, .read, here, names)
            case ".write": write = try expression(value, .write, here, names)
            case ".validate": validate = try expression(value, .validate, here, names)
            case ".indexOn": indexOn = try indexes(value, here)
            default:
                if key.hasPrefix(".") { throw TreeRulesError("\(here): unknown rule '\(key)' (.read, .write, .validate or .indexOn)") }
                guard case .map(let childRules) = value else { throw TreeRulesError("\(here): the rules of a child must be an object") }
                if key.hasPrefix("$") {
                    guard key.count > 1 else { throw TreeRulesError("\(here): a wildcard needs a name after '$'") }
                    if let w = wildcard { throw TreeRulesError("\(here): a level may have one wildcard, it has \(w.name) already") }
                    if names.contains(key) { throw TreeRulesError("\(here): the wildcard \(key) is used twice on one path") }
                    try checkKey(String(key.dropFirst()), here)
                    wildcard = (key, try node(childRules, at: here, wildcards: wildcards + [key]))
                } else {
                    try checkKey(key, here)
                    children[key] = try node(childRules, at: here, wildcards: wildcards)
                }
            }
        }
        return TreeRuleNode(read: read, write: write, validate: validate, indexOn: indexOn, children: children, wildcard: wildcard)
    }

    private static func checkKey(_ key: String, _ here: String) throws {
        do { try TreeKey.validate(key) } catch let e as EmberError { throw TreeRulesError("\(here): \(e.message)") }
    }

    private static func expression(_ v: Value, _ kind: RuleParser.Kind, _ here: String, _ wildcards: Set<String>) throws -> RuleExpr {
        switch v {
        case .bool(let b): return .literal(.bool(b))
        case .string(let s):
            do { return try RuleParser.parse(s, kind: kind, wildcards: wildcards) } catch let e as RuleSyntaxError {
                throw TreeRulesError("\(here): \(e.message) (at character \(e.offset + 1) of \"\(s)\")")
            }
        default:
            throw TreeRulesError("\(here): a rule is true, false or a string expression")
        }
    }

    private static func indexes(_ v: Value, _ here: String) throws -> [String] {
        let items: [Value]
        switch v {
        case .string: items = [v]
        case .array(let a): items = a
        default: throw TreeRulesError("\(here): .indexOn is a child path or an array of them")
        }
        return try items.map { item in
            guard case .string(let s) = item else { throw TreeRulesError("\(here): .indexOn is a child path or an array of them") }
            if s == ".value" { return s }
            do {
                let p = try TreePath(parsing: s, context: ".indexOn path")
                guard !p.isRoot else { throw TreeRulesError("\(here): an empty .indexOn path") }
                return p.segments.joined(separator: "/")
            } catch let e as EmberError { throw TreeRulesError("\(here): \(e.message)") }
        }
    }

    /// The source without its comments (strings are kept whole).
    static func stripComments(_ s: String) throws -> String {
        var out = ""
        let c = Array(s.unicodeScalars)
        var i = 0
        var inString = false
        while i < c.count {
            let ch = c[i]
            if inString {
                out.unicodeScalars.append(ch)
                if ch == "\\", i + 1 < c.count { out.unicodeScalars.append(c[i + 1]); i += 2; continue }
                if ch == "\"" { inString = false }
                i += 1
            } else if ch == "\"" {
                inString = true; out.unicodeScalars.append(ch); i += 1
            } else if ch == "/", i + 1 < c.count, c[i + 1] == "/" {
                while i < c.count, c[i] != "\n" { i += 1 }
            } else if ch == "/", i + 1 < c.count, c[i + 1] == "*" {
                i += 2
                while i + 1 < c.count, !(c[i] == "*" && c[i + 1] == "/") { i += 1 }
                guard i + 1 < c.count else { throw TreeRulesError("the rules have an unterminated /* comment") }
                i += 2
                out += " "
            } else {
                out.unicodeScalars.append(ch); i += 1
            }
        }
        return out
    }
}

/// Responsible for: why a rules source was refused (the REST answer's text).
public struct TreeRulesError: Error, CustomStringConvertible {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

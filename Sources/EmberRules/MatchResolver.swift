import EmberModel

/// Responsible for: finding the `match` blocks whose full path matches a request's path, with the
/// variables each binds (`{id}` as a string, `{rest=**}` as a path) and the functions in scope.
/// `{rest=**}` matches zero or more segments anywhere in a pattern (rules_version 2), so
/// `match /{path=**}/comments/{id}` matches comments in every collection of that id.
///
///     // match /databases/{database}/documents { match /users/{uid} { ... } }
///     MatchResolver.resolve(ruleSet, path: ["databases", "(default)", "documents", "users", "al"])
///     // one hit: bindings database = "(default)", uid = "al"
struct MatchResolver {
    struct Hit {
        var block: MatchBlock
        var bindings: [String: RuleValue]
        /// Innermost scope first; the service's functions last.
        var functionScopes: [[FunctionDecl]]
    }

    /// One segment of the path a request is matched on.
    enum Segment: Equatable {
        case id(String)
        /// The document of a `list`: matches `{var}`, unbound.
        case open
        /// Any number of unknown segments (a collection-group query's parents): only
        /// `{rest=**}` matches it, and then leaves `rest` unbound.
        case anyDepth
    }

    /// `path` segments; a nil segment (the document of a `list`) matches only `{var}`, unbound.
    static func resolve(_ ruleSet: RuleSet, path: [String?]) -> [Hit] {
        resolve(ruleSet, segments: path.map { $0.map(Segment.id) ?? .open })
    }

    static func resolve(_ ruleSet: RuleSet, segments: [Segment]) -> [Hit] {
        var hits: [Hit] = []
        for block in ruleSet.service.matches {
            walk(block, remaining: segments[...], bindings: [:], scopes: [ruleSet.service.functions], into: &hits)
        }
        return hits
    }

    private static func walk(_ block: MatchBlock, remaining: ArraySlice<Segment>, bindings: [String: RuleValue],
                             scopes: [[FunctionDecl]], into hits: inout [Hit]) {
        for (rest, bound) in consume(block.pattern.segments[...], remaining, bindings) {
            let innerScopes = [block.functions] + scopes
            if rest.isEmpty { hits.append(Hit(block: block, bindings: bound, functionScopes: innerScopes)) }
            for child in block.matches {
                walk(child, remaining: rest, bindings: bound, scopes: innerScopes, into: &hits)
            }
        }
    }

    /// Every way `pattern` can consume a prefix of `path`: what is left and the bindings made.
    private static func consume(_ pattern: ArraySlice<PathPattern.Segment>, _ path: ArraySlice<Segment>,
                                _ bindings: [String: RuleValue]) -> [(ArraySlice<Segment>, [String: RuleValue])] {
        guard let first = pattern.first else { return [(path, bindings)] }
        switch first {
        case .rest(let name):
            // Zero or more segments, each way the rest of the pattern can follow.
            var out: [(ArraySlice<Segment>, [String: RuleValue])] = []
            for k in 0...path.count {
                let taken = path.prefix(k)
                var b = bindings
                if taken.contains(.anyDepth) {
                    b[name] = nil
                } else {
                    b[name] = .path(taken.compactMap { if case .id(let s) = $0 { return s } else { return nil } })
                }
                out += consume(pattern.dropFirst(), path.dropFirst(k), b)
            }
            return out
        case .literal(let text):
            // By bytes: "\u{E9}" and "e\u{301}" are two collections (a pattern on `==` would match both).
            guard case .id(let id)? = path.first, equalUTF8(id, text) else { return [] }
            return consume(pattern.dropFirst(), path.dropFirst(), bindings)
        case .variable(let name):
            var b = bindings
            switch path.first {
            case .id(let s)?: b[name] = .string(s)
            case .open?: b[name] = nil
            case .anyDepth?, nil: return []
            }
            return consume(pattern.dropFirst(), path.dropFirst(), b)
        }
    }
}

/// Responsible for: finding the `match` blocks whose full path matches a request's path, with the
/// variables each binds (`{id}` as a string, `{rest=**}` as a path) and the functions in scope.
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

    /// `path` segments; a nil segment (the document of a `list`) matches only `{var}`, unbound.
    static func resolve(_ ruleSet: RuleSet, path: [String?]) -> [Hit] {
        var hits: [Hit] = []
        for block in ruleSet.service.matches {
            walk(block, remaining: path[...], bindings: [:], scopes: [ruleSet.service.functions], into: &hits)
        }
        return hits
    }

    private static func walk(_ block: MatchBlock, remaining: ArraySlice<String?>, bindings: [String: RuleValue],
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
    private static func consume(_ pattern: ArraySlice<PathPattern.Segment>, _ path: ArraySlice<String?>,
                                _ bindings: [String: RuleValue]) -> [(ArraySlice<String?>, [String: RuleValue])] {
        guard let first = pattern.first else { return [(path, bindings)] }
        switch first {
        case .rest(let name):
            // The rest of the path, zero or more segments (rules_version 2).
            var b = bindings
            b[name] = .path(path.compactMap { $0 })
            return [(path[path.endIndex...], b)]
        case .literal(let text):
            guard let seg = path.first, seg == text else { return [] }
            return consume(pattern.dropFirst(), path.dropFirst(), bindings)
        case .variable(let name):
            guard let seg = path.first else { return [] }
            var b = bindings
            if let s = seg { b[name] = .string(s) } else { b[name] = nil }
            return consume(pattern.dropFirst(), path.dropFirst(), b)
        }
    }
}

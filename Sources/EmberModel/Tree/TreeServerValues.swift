#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: the Realtime Database's server values inside a client's write: the
/// placeholders `{".sv": "timestamp"}` (the server's clock, in ms since 1970, when it applies the
/// write) and `{".sv": {"increment": n}}` (n added to the number there, else n), as Firebase's
/// `ServerValue.timestamp()` and `ServerValue.increment(_:)` make them. A write carries them to
/// the backend or server as they are; the client shows an estimate meanwhile (`resolve`, with its
/// clock plus `.info/serverTimeOffset` and its own value for increments).
///
///     let v = TreeValue.object(TreeObject(["at": TreeServerValues.timestamp]))
///     TreeServerValues.resolve(v, at: p, read: { _ in .null }, nowMillis: 1_700_000_000_000)
public enum TreeServerValues {
    public static let key = ".sv"

    public static let timestamp = TreeValue.object(TreeObject([key: .string("timestamp")]))

    public static func increment(_ delta: TreeValue) -> TreeValue {
        .object(TreeObject([key: .object(TreeObject(["increment": delta]))]))
    }

    /// What a placeholder asks for.
    public enum Kind: Equatable, Sendable {
        case timestamp
        case increment(TreeValue)
    }

    /// The server value `o` is (an object whose only key is `.sv`), nil when it is not one;
    /// throws when it has `.sv` in a form no server knows.
    public static func kind(_ o: TreeObject) throws -> Kind? {
        let sv = o[key]
        guard sv.exists else { return nil }
        guard o.count == 1 else { throw EmberError.invalidArgument("Invalid server value: '.sv' must be the only key of its object.") }
        switch sv {
        case .string("timestamp"): return .timestamp
        case .object(let m) where m.count == 1:
            switch m["increment"] {
            case .int(let i): return .increment(.int(i))
            case .double(let d) where d.isFinite: return .increment(.double(d))
            default: break
            }
        default: break
        }
        throw EmberError.invalidArgument("Invalid server value \(sv): use {\".sv\": \"timestamp\"} or {\".sv\": {\"increment\": <number>}}.")
    }

    /// Whether `v` holds a placeholder anywhere.
    public static func contains(_ v: TreeValue) -> Bool {
        guard case .object(let o) = v else { return false }
        if o[key].exists { return true }
        for (_, c) in o.children where contains(c) { return true }
        return false
    }

    /// `v` (written at `path`) with each placeholder replaced: timestamps by `nowMillis`,
    /// increments by the number `read` gives at their place plus n.
    public static func resolve(_ v: TreeValue, at path: TreePath, read: (TreePath) -> TreeValue, nowMillis: Int64) -> TreeValue {
        guard case .object(let o) = v else { return v }
        if let k = try? kind(o) {
            switch k {
            case .timestamp: return .int(nowMillis)
            case .increment(let delta): return add(read(path), delta)
            }
        }
        guard contains(v) else { return v }
        var out = v
        for (k, c) in o.children where contains(c) {
            out.set([k.s][...], resolve(c, at: path.child(k.s), read: read, nowMillis: nowMillis))
        }
        return out
    }

    /// The ops with every placeholder resolved against `read` (nil when none has any).
    public static func resolve(_ ops: [TreeWriteOp], read: (TreePath) -> TreeValue, nowMillis: Int64) -> [TreeWriteOp]? {
        guard ops.contains(where: { contains($0.value) }) else { return nil }
        return ops.map { TreeWriteOp(path: $0.path, value: resolve($0.value, at: $0.path, read: read, nowMillis: nowMillis)) }
    }

    /// current + delta for numbers (integers while they fit, else doubles); delta otherwise.
    public static func add(_ current: TreeValue, _ delta: TreeValue) -> TreeValue {
        switch (current, delta) {
        case (.int(let a), .int(let b)):
            let (s, overflow) = a.addingReportingOverflow(b)
            return overflow ? .double(Double(a) + Double(b)) : .int(s)
        case (.int(let a), .double(let b)): return .double(Double(a) + b)
        case (.double(let a), .int(let b)): return .double(a + Double(b))
        case (.double(let a), .double(let b)): return .double(a + b)
        default: return delta
        }
    }

    /// This machine's clock, in milliseconds since 1970.
    public static func clockMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

/// Responsible for: a location in the Realtime-Database tree: its segments, parsing and
/// validation (`a/b/c`, empty segments ignored as Firebase does, at most 32 levels and 768
/// bytes), and the ancestor / descendant relations the engines index on.
///
///     let p = try TreePath(parsing: "posts/-Nabc/metrics")
///     p.parent?.description            // "/posts/-Nabc"
///     TreePath.root.isAncestor(of: p)  // true
public struct TreePath: Hashable, Sendable, CustomStringConvertible, Comparable {
    public static let maxDepth = 32
    public static let maxBytes = 768
    public let segments: [String]

    public static let root = TreePath(unchecked: [])

    public init(unchecked segments: [String]) { self.segments = segments }

    /// The first segment of the client's read-only connection state (`.info/connected`).
    public static let infoKey = ".info"

    /// Parses a slash-separated path; every segment must be a valid key, but the first may be
    /// `.info` (Firebase's paths allow it there; writes under it are refused by `TreeLimits`).
    public init(parsing s: String, context: String = "path") throws {
        let parts = splitAtSlashes(s, omittingEmpty: true)
        for (i, p) in parts.enumerated() where !(i == 0 && p == TreePath.infoKey) {
            do { try TreeKey.validate(p, context: "key") } catch let e as EmberError {
                throw EmberError.invalidArgument("Invalid \(context) '\(s)': \(e.message)")
            }
        }
        let path = TreePath(unchecked: parts)
        try path.validateSize(context: context)
        self = path
    }

    func validateSize(context: String) throws {
        if segments.count > TreePath.maxDepth {
            throw EmberError.invalidArgument("Invalid \(context) '\(self)': paths are at most \(TreePath.maxDepth) levels deep, this one has \(segments.count).")
        }
        let bytes = segments.reduce(0) { $0 + $1.utf8.count + 1 }
        if bytes > TreePath.maxBytes {
            throw EmberError.invalidArgument("Invalid \(context) '\(String(description.prefix(60)))...': paths are at most \(TreePath.maxBytes) bytes, this one has \(bytes).")
        }
    }

    public var isRoot: Bool { segments.isEmpty }
    public var count: Int { segments.count }
    public var last: String? { segments.last }
    public var parent: TreePath? { isRoot ? nil : TreePath(unchecked: Array(segments.dropLast())) }

    public func child(_ key: String) -> TreePath { TreePath(unchecked: segments + [key]) }
    public func appending(_ other: TreePath) -> TreePath { TreePath(unchecked: segments + other.segments) }

    /// True when `self` is `other` or one of its ancestors.
    public func isAncestorOrSelf(of other: TreePath) -> Bool {
        guard segments.count <= other.segments.count else { return false }
        for i in segments.indices where !equalUTF8(segments[i], other.segments[i]) { return false }
        return true
    }

    public func isAncestor(of other: TreePath) -> Bool {
        segments.count < other.segments.count && isAncestorOrSelf(of: other)
    }

    /// True when one path is an ancestor of (or equal to) the other.
    public func overlaps(_ other: TreePath) -> Bool {
        isAncestorOrSelf(of: other) || other.isAncestorOrSelf(of: self)
    }

    /// `other`'s segments after `self` (`self` must be an ancestor or equal).
    public func relative(_ other: TreePath) -> ArraySlice<String> {
        other.segments[segments.count...]
    }

    public var description: String { "/" + segments.joined(separator: "/") }

    /// Segment by segment in key order, ancestors first.
    public static func < (a: TreePath, b: TreePath) -> Bool {
        for (x, y) in zip(a.segments, b.segments) where !equalUTF8(x, y) { return TreeKey.compare(x, y) < 0 }
        return a.segments.count < b.segments.count
    }

    /// Equal when every segment has the same UTF-8 bytes ("\u{E9}" and "e\u{301}" are two keys).
    public static func == (a: TreePath, b: TreePath) -> Bool {
        a.segments.count == b.segments.count && zip(a.segments, b.segments).allSatisfy { equalUTF8($0, $1) }
    }

    public func hash(into hasher: inout Hasher) { hashUTF8Segments(segments, into: &hasher) }
}

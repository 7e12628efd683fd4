/// Responsible for: resuming a listen without sending again what a client already has, by a
/// compound hash over ranges of a node's children (the realtime protocol's listen field `ch` and
/// its `rm` range-merge push): the client cuts its cached node's children, in key order, into
/// ranges of `childrenPerRange` and sends each range's end key (`ps`, all but the last range's)
/// and hash (`hs`, `TreeHash` of the range's children as one object, "" when empty); the server
/// cuts its node at the same keys and sends only the ranges whose hash differs, as
/// `{"s": start key (exclusive, null: from the first), "e": end key (inclusive, null: to the
/// last), "m": the range's children}`; the client replaces each such range of its copy.
///
///     let points = TreeRanges.splitPoints(cached)              // client
///     let hs = TreeRanges.hashes(cached, points: points)
///     let sent = TreeRanges.differing(server, points: points, hashes: hs)   // server
///     let now = TreeRanges.merge(cached, sent)                 // client
public enum TreeRanges {
    /// Children per range: 10 children pushed to a list while away come back with at most
    /// 7 old ones from the last range.
    public static let childrenPerRange = 8
    /// Smaller nodes are resumed by their whole hash only (`h`).
    public static let minimumChildren = 32

    /// One range of the server's node a client's copy lacks.
    public struct Range: Sendable, Equatable {
        public let start: String?
        public let end: String?
        public let data: TreeValue
        public init(start: String?, end: String?, data: TreeValue) {
            self.start = start
            self.end = end
            self.data = data
        }
    }

    /// The end keys of every range but the last of `v`'s children (none for a small node).
    public static func splitPoints(_ v: TreeValue) -> [String] {
        guard case .object(let o) = v, o.count >= minimumChildren else { return [] }
        let keys = o.sortedKeys()
        return stride(from: childrenPerRange - 1, to: keys.count - 1, by: childrenPerRange).map { keys[$0] }
    }

    /// `v`'s children cut at `points` (ascending keys): points.count + 1 objects.
    public static func cut(_ v: TreeValue, points: [String]) -> [TreeValue] {
        // By bytes: keys that differ only in Unicode normalization are two children.
        var ranges = [[UTF8String: TreeValue]](repeating: [:], count: points.count + 1)
        if case .object(let o) = v {
            for (k, c) in o.children {
                // The first range whose end is at or after the key.
                var lo = 0, hi = points.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if TreeKey.compare(points[mid], k.s) < 0 { lo = mid + 1 } else { hi = mid }
                }
                ranges[lo][k] = c
            }
        }
        return ranges.map { $0.isEmpty ? .null : .object(TreeObject($0)) }
    }

    public static func hashes(_ v: TreeValue, points: [String]) -> [String] {
        cut(v, points: points).map { TreeHash.of($0) }
    }

    /// The ranges of `v` (cut at `points`) whose hash is not the client's.
    public static func differing(_ v: TreeValue, points: [String], hashes: [String]) -> [Range] {
        let ranges = cut(v, points: points)
        var out: [Range] = []
        for (i, r) in ranges.enumerated() where i >= hashes.count || TreeHash.of(r) != hashes[i] {
            out.append(Range(start: i == 0 ? nil : points[i - 1], end: i == points.count ? nil : points[i], data: r))
        }
        return out
    }

    /// `cached` with each range's children replaced by the range's data.
    public static func merge(_ cached: TreeValue, _ ranges: [Range]) -> TreeValue {
        var children: [UTF8String: TreeValue] = cached.object?.children ?? [:]
        for r in ranges {
            children = children.filter { k, _ in
                let afterStart = r.start.map { TreeKey.compare(k.s, $0) > 0 } ?? true
                let atOrBeforeEnd = r.end.map { TreeKey.compare(k.s, $0) <= 0 } ?? true
                return !(afterStart && atOrBeforeEnd)
            }
            if case .object(let o) = r.data { for (k, c) in o.children { children[k] = c } }
        }
        return children.isEmpty ? .null : .object(TreeObject(children))
    }
}

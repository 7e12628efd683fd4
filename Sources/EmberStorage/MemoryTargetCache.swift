import EmberModel

/// Responsible for: the client's listen targets in memory.
public final class MemoryTargetCache: TargetCache {
    private var targets: [String: TargetData] = [:]
    private var clock: Int64 = 0
    public init() {}
    public func get(_ targetId: String) -> TargetData? { targets[targetId] }
    /// Stores the target, stamping `lastUsed` with this cache's clock.
    public func put(_ target: TargetData) {
        clock += 1
        var t = target
        t.lastUsed = clock
        targets[t.targetId] = t
    }
    public func remove(_ targetId: String) { targets[targetId] = nil }
    public func all() -> [TargetData] { targets.values.sorted { $0.targetId < $1.targetId } }
}

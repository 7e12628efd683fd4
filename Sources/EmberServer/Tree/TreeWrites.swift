import EmberModel
import Foundation
import EmberConcurrency

/// Responsible for: applying one write of any door (REST, the realtime protocol) to a
/// namespace: its overwrites (a set, an update's children, a delete) with their server values
/// resolved and the priorities under their paths replaced, judged by the caller's rules and an
/// optional expectation on the current value (REST `if-match`, the protocol's hash), all inside
/// one backend commit on the state it applies to, and answered once it is in the file.
/// Refusals are `TreeRESTError`s: 401 (the rules), 412 (the expectation, with the value found
/// and its priorities); a store error comes as it was (nothing applied).
struct TreeWrites: Sendable {
    /// What the current value at `location` must be for the write to apply.
    struct Expectation: Sendable {
        let location: TreePath
        /// Whether the value found (and its priorities) is the expected one.
        let matches: @Sendable (_ value: TreeValue, _ priorities: TreeValue) -> Bool
    }

    let door: TreeDoor
    let priorityFlags: TreePriorityFlags

    /// `inputs`: stored paths and what to write there. Returns the data overwrites applied.
    func apply(_ who: Who, _ inputs: [(TreePath, TreeInput)], expecting expectation: Expectation? = nil,
               nowMillis now: Int64 = TreeREST.nowMillis()) async throws -> [TreeWriteOp] {
        let written = WrittenValues()
        let priorityBase = TreePriorities.base(who.namespace)
        do {
            try await door.write { [who] read in
                let ops = inputs.map { TreeWriteOp(path: $0.0, value: $0.1.resolved(at: $0.0, read: read, nowMillis: now)) }
                // Each write replaces the priorities under its path with its own (none: removed),
                // unless the namespace never had any.
                let gives = inputs.contains { $0.1.priorities.exists }
                if gives { priorityFlags.mark(who.namespace) }
                let priorityOps = gives || priorityFlags.mayHave(who.namespace, read: read)
                    ? inputs.map { TreeWriteOp(path: priorityBase.appending(TreeREST.inNamespace($0.0)), value: $0.1.priorities) }
                    : []
                guard who.mayWrite(ops, priorityOps: priorityOps, nowMillis: now, read) else {
                    written.refusal = TreeRESTError(401, "Permission denied")
                    throw EmberError(.permissionDenied, "Permission denied")
                }
                if let expectation {
                    let current = read(expectation.location)
                    let priorities = read(priorityBase.appending(TreeREST.inNamespace(expectation.location)))
                    if !expectation.matches(current, priorities) {
                        written.refusal = TreeRESTError(412, "The ETag does not match the location's", current: current, priorities: priorities)
                        throw EmberError(.failedPrecondition, "The ETag does not match the location's")
                    }
                }
                written.set(ops)
                return ops + priorityOps
            }
        } catch {
            // The request's own refusal, else the store's error.
            throw written.refusal ?? error
        }
        return written.get()
    }
}

/// Responsible for: handing the overwrites a computed write made (on the backend's queue), or
/// the request's own refusal, back to the request that asked for it. Thread-safe.
final class WrittenValues: Sendable {
    private let ops = LockedValueBox<[TreeWriteOp]>([])
    private let refused = LockedValueBox<TreeRESTError?>(nil)
    /// Why the request's own checks refused it (the rules, or the expectation with the value found).
    var refusal: TreeRESTError? {
        get { refused.current }
        set { refused.withLockedValue { $0 = newValue } }
    }
    func set(_ o: [TreeWriteOp]) { ops.withLockedValue { $0 = o } }
    func get() -> [TreeWriteOp] { ops.current }
}

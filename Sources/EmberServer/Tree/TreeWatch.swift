import EmberConcurrency
import Dispatch
import EmberBackend
import EmberModel
import EmberTreeRules

/// Responsible for: what one listener of the tree is told, whatever door it came through (an
/// SSE stream, a realtime-protocol listen): the location's whole value (or its query's result)
/// first, then, in commit order, each write as a `put` at the path it replaced (relative to the
/// location; a write above arrives cut to it, and is left out when it changes nothing here), or
/// one `patch` for the overwrites of an update that share a parent; a query sends its whole
/// result again as a `put` at the root whenever a write changes it (a `$priority` query listens
/// to the location's priorities too).
///
/// The rules keep deciding (`TreeStreamGuard`): when the read rules on the way read data, each
/// event is passed on only once a check on the tree after it allows the read (events wait
/// behind unanswered checks, so order holds); `recheck()` (a rules change, time passing) checks
/// again. A refused read is `watchCancelled`, after which nothing more is said. State and the
/// sink's calls on `queue`.
final class TreeWatch: TreeBackendClient {
    let location: TreePath
    let query: TreeRESTQuery?
    let gate: TreeStreamGuard
    let queue: DispatchQueue
    private weak var sink: (any TreeWatchSink)?
    private var connection: TreeConnection?
    /// The value at the location (to compute a query's result again, and to leave out writes
    /// that change nothing here).
    private var current: TreeValue = .null
    private var lastResult: TreeValue?
    /// A `$priority` query's location's priorities, and their value.
    private let priorityLocation: TreePath
    private var priorities: TreeValue = .null
    /// Listen results still to come before the first event (2 for a `$priority` query).
    private var awaitedResults: Int
    /// Rules checks not yet answered.
    private var checksInFlight = 0
    /// Set once cancelled or stopped: nothing more is said.
    private var ended = false

    init(request: TreeStreamRequest, sink: any TreeWatchSink, queue: DispatchQueue) {
        location = request.location
        query = request.query
        priorityLocation = request.priorities
        gate = request.guard
        awaitedResults = request.query?.byPriority == true ? 2 : 1
        self.sink = sink
        self.queue = queue
    }

    /// Starts listening (the first `put` follows); re-checks when the namespace's rules change.
    func start(backend: Backend) {
        queue.asyncConfined { [self] in
            let c = backend.connectTree(client: self, queue: queue)
            connection = c
            c.listen(location)
            if query?.byPriority == true { c.listen(priorityLocation) }
        }
        if !gate.bypassesRules {
            let me = QueueBound(WeakTreeWatch(self), on: queue)
            gate.access.watch(gate.who.namespace, ObjectIdentifier(self)) { [queue] in
                queue.async { me.value.watch?.recheck() }
            }
        }
    }

    /// Stops listening; nothing more is said after the queue runs past this point.
    func stop() {
        gate.access.unwatch(gate.who.namespace, ObjectIdentifier(self))
        queue.asyncConfined { [self] in
            ended = true
            connection?.disconnect()
            connection = nil
        }
    }

    func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent) {
        guard self.connection === connection, !ended else { return }
        if case .rejected = event { return }
        let check = gate.dependsOnData
        guard check || checksInFlight > 0 else { return deliver(event) }
        checksInFlight += 1
        let gate = self.gate
        let me = QueueBound(self, on: queue)
        connection.inspect({ read in check ? gate.allows(read) : true }) { allowed in
            let watch = me.value
            watch.checksInFlight -= 1
            guard !watch.ended else { return }
            if allowed { watch.deliver(event) } else { watch.cancel() }
        }
    }

    /// Checks the read again; cancels if it is refused. On `queue`.
    func recheck() {
        guard let connection, !ended, !gate.bypassesRules else { return }
        let gate = self.gate, me = QueueBound(self, on: queue)
        connection.inspect({ read in gate.allows(read) }) { allowed in
            let watch = me.value
            if !allowed && !watch.ended { watch.cancel() }
        }
    }

    private func cancel() {
        ended = true
        sink?.watchCancelled(self)
        gate.access.unwatch(gate.who.namespace, ObjectIdentifier(self))
        connection?.disconnect()
        connection = nil
    }

    private func deliver(_ event: TreeBackendEvent) {
        guard let sink else { return }
        switch event {
        case .listenResult(let path, let value, _):
            if path == location { current = value } else { priorities = value }
            awaitedResults -= 1
            guard awaitedResults == 0 else { return }
            if let query {
                let r = query.apply(to: current, priorities: priorities)
                lastResult = r
                sink.watch(self, put: [], r)
            } else {
                sink.watch(self, put: [], current)
            }
        case .change(let ops, _):
            guard !ops.isEmpty else { return }
            if let query {
                for op in ops {
                    if location.isAncestorOrSelf(of: op.path) {
                        current.set(location.relative(op.path), op.value)
                    } else if priorityLocation.isAncestorOrSelf(of: op.path) {
                        priorities.set(priorityLocation.relative(op.path), op.value)
                    }
                }
                // A change between the two listens' results: the second result sends it.
                guard awaitedResults == 0 else { return }
                let r = query.apply(to: current, priorities: priorities)
                if let last = lastResult, last == r { return }
                lastResult = r
                sink.watch(self, put: [], r)
                return
            }
            if ops.count == 1, ops[0].path == location, ops[0].value == current { return }
            for op in ops { current.set(location.relative(op.path), op.value) }
            let parents = Set(ops.map { $0.path.parent })
            if ops.count > 1, parents.count == 1, let parent = ops[0].path.parent, location.isAncestorOrSelf(of: parent) {
                sink.watch(self, patch: location.relative(parent), ops.map { ($0.path.last!, $0.value) })
            } else {
                for op in ops { sink.watch(self, put: location.relative(op.path), op.value) }
            }
        case .rejected, .listenRevoked, .window:
            break
        }
    }
}

/// Responsible for: receiving a `TreeWatch`'s events (on its queue) and telling its client.
protocol TreeWatchSink: AnyObject {
    /// The value at `path` (relative to the watched location) is now `value`.
    func watch(_ watch: TreeWatch, put path: ArraySlice<String>, _ value: TreeValue)
    /// These children of `path` are now these values.
    func watch(_ watch: TreeWatch, patch path: ArraySlice<String>, _ children: [(String, TreeValue)])
    /// The rules no longer allow the read; the watch said its last.
    func watchCancelled(_ watch: TreeWatch)
}

/// Responsible for: whether a watch's caller may still read its location: the namespace's rules
/// as they are now, the caller and the query the watch was opened with.
struct TreeStreamGuard: Sendable {
    let access: TreeAccess
    let who: Who
    /// The namespace's location.
    let location: TreePath
    let query: TreeRulesQuery?

    var bypassesRules: Bool { who.caller.bypassesRules }
    private var rules: TreeRules { access.currentDecider(who.namespace).rules }
    var dependsOnData: Bool { !bypassesRules && rules.readDepends(at: location).onData }
    var dependsOnClock: Bool { !bypassesRules && rules.readDepends(at: location).onClock }

    func allows(_ read: (TreePath) -> TreeValue) -> Bool {
        Who(caller: who.caller, rules: rules, namespace: who.namespace).mayRead(location, query: query, nowMillis: TreeREST.nowMillis(), read)
    }
}

/// A watch, weakly: what a rules change reaches once the watch is gone.
struct WeakTreeWatch {
    weak var watch: TreeWatch?
    init(_ watch: TreeWatch) { self.watch = watch }
}

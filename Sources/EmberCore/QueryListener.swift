import EmberModel

/// Responsible for: listen options as Firestore defines them.
public struct ListenOptions: Sendable {
    public enum Source: Sendable { case `default`, cache }
    public var includeMetadataChanges: Bool
    public var source: Source
    public init(includeMetadataChanges: Bool = false, source: Source = .default) {
        self.includeMetadataChanges = includeMetadataChanges
        self.source = source
    }
}

/// Responsible for: what one listener sees: an event per snapshot, or the error that ends it.
public enum ListenEvent: Sendable {
    case snapshot(ViewSnapshot)
    case error(EmberError)
}

/// Whether the client can reach the backend (Firestore's OnlineState).
enum OnlineState { case unknown, online, offline }

/// Responsible for: deciding, for one listener, which view snapshots become user events
/// (docs/semantics.md 9-10, Firebase JS `query_listener.ts`): the first event waits for the backend
/// unless the cache has documents or an earlier result of the query, the listener reads the cache
/// only, or the client is offline;
/// metadata-only changes are raised only with includeMetadataChanges. Worker queue only.
final class QueryListener {
    let id: Int
    let options: ListenOptions
    let token: ListenerToken
    let callback: (ListenEvent) -> Void
    private var raisedInitial = false
    private var last: ViewSnapshot?
    /// The last view snapshot seen (raised or not).
    var lastSnapshot: ViewSnapshot? { last }
    private var onlineState: OnlineState
    /// Its target had a result from the backend in the cache: the first snapshot is raised
    /// from the cache at once, even empty.
    private let hasCachedResults: Bool

    init(id: Int, options: ListenOptions, token: ListenerToken, onlineState: OnlineState, hasCachedResults: Bool = false,
         callback: @escaping (ListenEvent) -> Void) {
        self.id = id
        self.options = options
        self.token = token
        self.onlineState = onlineState
        self.hasCachedResults = hasCachedResults
        self.callback = callback
    }

    /// The event to raise for a new view snapshot, if any.
    func onViewSnapshot(_ input: ViewSnapshot) -> ViewSnapshot? {
        let snap = options.includeMetadataChanges ? input : input.withoutMetadataChanges()
        var raise: ViewSnapshot?
        if !raisedInitial {
            if shouldRaiseInitial(snap, onlineState) { raise = snap.asInitial(); raisedInitial = true }
        } else if shouldRaise(snap) {
            raise = snap
        }
        last = snap
        return raise
    }

    /// The event to raise when the online state changes (an offline client raises from cache).
    func onOnlineStateChange(_ state: OnlineState) -> ViewSnapshot? {
        onlineState = state
        if let s = last, !raisedInitial, shouldRaiseInitial(s, state) {
            raisedInitial = true
            return s.asInitial()
        }
        return nil
    }

    private func shouldRaiseInitial(_ snap: ViewSnapshot, _ state: OnlineState) -> Bool {
        if !snap.isFromCache { return true }
        if options.source == .cache { return true }
        return !snap.documents.isEmpty || hasCachedResults || state == .offline
    }

    private func shouldRaise(_ snap: ViewSnapshot) -> Bool {
        if !snap.changes.isEmpty { return true }
        let pendingChanged = last.map { $0.hasPendingWrites != snap.hasPendingWrites } ?? false
        if snap.syncStateChanged || pendingChanged { return options.includeMetadataChanges }
        return false
    }
}

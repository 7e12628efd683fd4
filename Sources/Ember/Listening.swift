import Foundation
import EmberCore

/// Responsible for: detaching a listener. `remove()` is idempotent; once it returns, the
/// listener's callback is not running and never runs again (also when called from inside it).
public final class ListenerRegistration: Sendable {
    let token: ListenerToken?

    init(token: ListenerToken?) { self.token = token }

    /// A registration for a listener that could not start: its callback gets the error once.
    static func failed(_ error: Error, firestore: Firestore, _ deliver: @escaping @Sendable (Error) -> Void) -> ListenerRegistration {
        firestore.post { deliver(error) }
        return ListenerRegistration(token: nil)
    }

    public func remove() { token?.remove() }
}

/// Where a listener reads from: the default (cache, then the backend) or the cache only.
public enum ListenSource: Sendable { case `default`, cache }

/// Where a one-shot read reads from.
public enum FirestoreSource: Sendable {
    case `default`, server, cache
    var core: GetSource {
        switch self {
        case .default: return .default
        case .server: return .server
        case .cache: return .cache
        }
    }
}

/// Responsible for: a listener's options, built fluently as in the Firebase SDK.
///
///     SnapshotListenOptions().withSource(.cache).withIncludeMetadataChanges(true)
public struct SnapshotListenOptions: Sendable {
    public private(set) var source: ListenSource = .default
    public private(set) var includeMetadataChanges = false

    public init() {}

    public func withSource(_ source: ListenSource) -> SnapshotListenOptions {
        var o = self
        o.source = source
        return o
    }

    public func withIncludeMetadataChanges(_ include: Bool) -> SnapshotListenOptions {
        var o = self
        o.includeMetadataChanges = include
        return o
    }

    var core: ListenOptions {
        ListenOptions(includeMetadataChanges: includeMetadataChanges, source: source == .cache ? .cache : .default)
    }
}

// Tests of QueryListener: which view snapshots become user events (docs/semantics.md 9-10, Firebase
// JS query_listener.ts), driven directly with snapshots.
import XCTest
import EmberModel
@testable import EmberCore

final class QueryListenerTests: XCTestCase {
    private var events: EventThread!

    override func setUp() { events = EventThread(name: "test.events") }
    override func tearDown() { events.stop() }

    private func listener(metadata: Bool = false, source: ListenOptions.Source = .default,
                          online: OnlineState = .online) -> QueryListener {
        QueryListener(id: 1, options: ListenOptions(includeMetadataChanges: metadata, source: source),
                      token: ListenerToken(events: events), onlineState: online, callback: { _ in })
    }

    private func snap(_ docs: [Document], _ changes: [DocumentChange] = [], cache: Bool, pending: Bool = false,
                      syncChanged: Bool = false) -> ViewSnapshot {
        ViewSnapshot(query: collection("c"), documents: DocumentList(docs), changes: changes, isFromCache: cache,
                     hasPendingWrites: pending, syncStateChanged: syncChanged, readTime: 0)
    }

    private let a = doc("c/a", n(1))
    private let b = doc("c/b", n(2))

    func testInitialWaitsForTheBackendWhenTheCacheIsEmptyAndOnline() {
        let l = listener()
        XCTAssertNil(l.onViewSnapshot(snap([], cache: true)))
        let ev = l.onViewSnapshot(snap([a], [DocumentChange(kind: .added, document: a, oldIndex: -1, newIndex: 0)], cache: false, syncChanged: true))
        XCTAssertEqual(ev.map(summary), ["added a -1 0"])
        XCTAssertEqual(ev?.isFromCache, false)
    }

    func testInitialIsEveryDocumentAddedEvenWhenTheSnapshotCarriedOtherChanges() {
        let l = listener()
        let s = snap([a, b], [DocumentChange(kind: .modified, document: b, oldIndex: 0, newIndex: 1)], cache: true)
        let ev = l.onViewSnapshot(s)!
        XCTAssertEqual(summary(ev), ["added a -1 0", "added b -1 1"])
        XCTAssertTrue(ev.isFromCache)
        XCTAssertTrue(ev.syncStateChanged)
    }

    func testCacheListenerAndOfflineListenerRaiseAnEmptyCacheAtOnce() {
        XCTAssertNotNil(listener(source: .cache).onViewSnapshot(snap([], cache: true)))
        XCTAssertNotNil(listener(online: .offline).onViewSnapshot(snap([], cache: true)))
    }

    func testGoingOfflineRaisesTheInitialThatWasWaiting() {
        let l = listener()
        XCTAssertNil(l.onViewSnapshot(snap([], cache: true)))
        let ev = l.onOnlineStateChange(.offline)
        XCTAssertNotNil(ev)
        XCTAssertEqual(ev?.isFromCache, true)
        XCTAssertNil(l.onOnlineStateChange(.offline), "raised once")
        XCTAssertNil(l.onOnlineStateChange(.online))
    }

    func testMetadataOnlySnapshotsNeedIncludeMetadataChanges() {
        for metadata in [false, true] {
            let l = listener(metadata: metadata)
            XCTAssertNotNil(l.onViewSnapshot(snap([a], cache: false, pending: true)))
            // the acknowledgement: a metadata change and hasPendingWrites flips
            let ack = snap([a], [DocumentChange(kind: .metadata, document: a, oldIndex: 0, newIndex: 0)], cache: false)
            let ev = l.onViewSnapshot(ack)
            XCTAssertEqual(ev.map(summary), metadata ? ["metadata a 0 0"] : nil)
            // going to cache: sync state only
            let cached = l.onViewSnapshot(snap([a], cache: true, syncChanged: true))
            XCTAssertEqual(cached != nil, metadata)
            // a real change is always raised, without its metadata-only companions for plain listeners
            let mixed = snap([a, b], [DocumentChange(kind: .added, document: b, oldIndex: -1, newIndex: 1),
                                      DocumentChange(kind: .metadata, document: a, oldIndex: 0, newIndex: 0)], cache: true)
            XCTAssertEqual(l.onViewSnapshot(mixed).map(summary), metadata ? ["added b -1 1", "metadata a 0 0"] : ["added b -1 1"])
            // nothing at all changed
            XCTAssertNil(l.onViewSnapshot(snap([a, b], cache: true)))
        }
    }
}

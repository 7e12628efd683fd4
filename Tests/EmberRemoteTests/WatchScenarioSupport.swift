import EmberBackend
import EmberConcurrency
import EmberCore
import EmberModel
@testable import EmberRemote
import EmberStorage
import Foundation
import ScriptedFirestore
import XCTest

/// One scripted watch scenario: a `ScriptedFirestore` and an Ember client of it (memory cache
/// unless given one), with listeners whose events are recorded. Steps read as the SDKs' spec
/// scenarios: the client listens, the test takes the target it added, sends watch messages and
/// checks the events raised.
final class WatchScenario {
    let server: ScriptedFirestore
    let remote: RemoteBackend
    let client: EmberClient
    private var tokens: [ListenerToken] = []

    init(persistence: Persistence = MemoryPersistence(), server: ScriptedFirestore? = nil) throws {
        self.server = try server ?? ScriptedFirestore()
        remote = try RemoteBackend(host: "127.0.0.1", port: self.server.port)
        remote.connectionLog.close()   // failures the scenarios cause are not news
        client = EmberClient(persistence: persistence, backend: Backend(persistence: MemoryPersistence()), documents: remote)
    }

    /// Listens to `query` with metadata changes; its events go to the returned recorder.
    func listen(_ query: Query, includeMetadataChanges: Bool = true) throws -> (Events, ListenerToken) {
        let events = Events()
        let token = try client.listen(query, options: ListenOptions(includeMetadataChanges: includeMetadataChanges)) { events.append($0) }
        tokens.append(token)
        return (events, token)
    }

    /// The next target the client added (other requests before it fail the test).
    func added(file: StaticString = #filePath, line: UInt = #line) throws -> Int32 {
        let r = try server.nextListen()
        guard case .add(let id, _, _, _) = r else {
            XCTFail("expected a target added, got \(r)", file: file, line: line)
            throw ScriptError("unexpected \(r)")
        }
        return id
    }

    /// Waits until the client has processed everything handed to it (the worker and the event
    /// thread are idle), after giving the wire `settle` seconds.
    func settle(_ seconds: Double = 0.2) {
        usleep(UInt32(seconds * 1_000_000))
        client.waitForBackgroundWork()
    }

    func close() {
        for t in tokens { t.remove() }
        client.close()
        remote.close()
        server.stop()
    }
}

/// A snapshot as the spec scenarios state one: documents (id:value of field v), fromCache,
/// hasPendingWrites.
func brief(_ s: ViewSnapshot) -> String {
    let docs = s.documents.map { d -> String in
        let v: String
        switch d.data["v"] {
        case .int(let i)?: v = "\(i)"
        case .string(let t)?: v = t
        case let other?: v = "\(other)"
        case nil: v = "-"
        }
        return "\(d.key.id)=\(v)\(d.hasLocalMutations ? "*" : "")"
    }
    return "[\(docs.joined(separator: " "))] cache=\(s.isFromCache) pending=\(s.hasPendingWrites)"
}

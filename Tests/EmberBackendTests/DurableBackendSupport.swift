import Foundation
import Dispatch
import EmberStorage
@testable import EmberBackend

/// Responsible for: what the tests of a backend on a file share: a directory removed when the
/// test ends, and a backend opened on a file with one connection whose events are ignored.
final class TemporaryDirectory {
    let path: String
    init(_ name: String) throws {
        path = NSTemporaryDirectory() + "ember-\(name)-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    var database: String { path + "/db.ember" }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A backend on the file at `path` and one connection to it (events go nowhere).
final class DurableBackend {
    private final class SilentClient: BackendClient, @unchecked Sendable {
        let queue = DispatchQueue(label: "test.durable.client")
        func backend(_ link: any BackendLink, didSend event: BackendEvent) {}
    }

    let persistence: SQLitePersistence
    let backend: Backend
    let connection: BackendConnection
    private let client = SilentClient()

    init(path: String, sharedDocuments: Bool = false) throws {
        persistence = try SQLitePersistence(path: path, sharedDocuments: sharedDocuments)
        backend = Backend(persistence: persistence)
        connection = backend.connect(client: client, queue: client.queue)
    }

    /// Disconnects, waits for the backend, stores the exact clock when asked (as a client's clean
    /// close does) and closes the file.
    func close(storingExactClock: Bool) {
        connection.disconnect()
        backend.flush()
        if storingExactClock { backend.storeExactClock() }
        persistence.close()
    }
}

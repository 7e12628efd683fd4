@_spi(EmberTesting) import Ember
import EmberConcurrency
import Foundation

/// Responsible for: the Swift client of the server-kill test (Tests/remote/test_kill.py): writes
/// while listening, across a SIGKILL and restart of the server, and reports what the test checks.
///
///     EmberHostClient kill-writer HOST COLLECTION BASE N PACE_MS
///
/// Sets BASE documents `b<k>` (`{"k": k}`, batches of 100) and waits for them to be acknowledged;
/// listens to COLLECTION (metadata changes included) until the server's answer holds them; then
/// every PACE_MS merges `d<i>` with `{"i": i, "n": increment(1)}` for i in 0..<N, without waiting
/// (a write made while the server is down is queued). At the end it waits (90 s at most) for
/// every acknowledgement and for a listener snapshot that is current, has no pending write and
/// holds the BASE and N documents (other clients' documents may be there too). Times are CLOCK_MONOTONIC nanoseconds (the test's clock too).
///
///     listening R            the server's first answer; R = documents the server sent so far
///     write I T              just before merging d<I>
///     ack I T                its completion (or `error I MESSAGE`)
///     offline R              a snapshot from the cache after a current one (the stream was lost)
///     online R               current again
///     final ID N             per d document in the last snapshot (N: its n)
///     base COUNT             b documents in the last snapshot
///     received R             documents the server sent in all
///     done
///
/// Exit status 2 (state on stderr) on a timeout, a listener error or a refused write.
enum KillWriter {
    /// What the listener saw, read by the main thread (in a `LockedValueBox`).
    struct Seen {
        var synced = false
        var online = false
        var lastCount = 0
        var lastPending = true
        var lastFromCache = true
        var n: [String: Int] = [:]
        var base = 0
        var acks = 0
        var error: String?
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// One line on stdout, flushed (the test reads them as they come).
    static let outLock = NSLock()
    static func say(_ line: String) {
        outLock.lock()
        print(line)
        fflush(nil)
        outLock.unlock()
    }

    static func fail(_ seen: LockedValueBox<Seen>, _ why: String) -> Never {
        let s = seen.withLockedValue { seen in "synced=\(seen.synced) online=\(seen.online) count=\(seen.lastCount) acks=\(seen.acks) pending=\(seen.lastPending)" }
        FileHandle.standardError.write("swift kill-writer: \(why); \(s)\n".data(using: .utf8)!)
        exit(2)
    }

    static func wait(_ seen: LockedValueBox<Seen>, _ what: String, seconds: Double, _ done: (Seen) -> Bool) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            let (ok, error) = seen.withLockedValue { seen in (done(seen), seen.error) }
            if let error { fail(seen, error) }
            if ok { return }
            usleep(5_000)
        }
        fail(seen, "timed out waiting for \(what)")
    }

    static func run(_ args: [String]) -> Never {
        guard args.count == 7, let base = Int(args[4]), let count = Int(args[5]), let pace = UInt32(args[6]) else {
            FileHandle.standardError.write("usage: EmberHostClient kill-writer HOST COLLECTION BASE N PACE_MS\n".data(using: .utf8)!)
            exit(64)
        }
        let (host, collection) = (args[2], args[3])
        let seen = LockedValueBox(Seen())
        let settings = FirestoreSettings()
        settings.host = host
        settings.isSSLEnabled = false
        let db: Firestore
        do { db = try Firestore.open(settings: settings) } catch { fail(seen, "open: \(error)") }
        let received: @Sendable () -> Int = { db.documentsReceivedFromServer ?? -1 }
        let coll = db.collection(collection)

        var start = 0
        while start < base {
            let batch = db.batch()
            for k in start..<min(base, start + 100) { batch.setData(["k": k], forDocument: coll.document("b\(k)")) }
            batch.commit { error in if let error { seen.withLockedValue { seen in seen.error = "seeding: \(error)" } } }
            start += 100
        }
        let seeded = Box()
        db.waitForPendingWrites { _ in seeded.set() }
        wait(seen, "the base documents' acknowledgements", seconds: 60) { _ in seeded.isSet }

        let registration = coll.addSnapshotListener(includeMetadataChanges: true) { snapshot, error in
            guard let snapshot else {
                seen.withLockedValue { seen in seen.error = "listener: \(String(describing: error))" }
                return
            }
            var line: String?
            seen.withLockedValue { seen in
                let fromCache = snapshot.metadata.isFromCache
                if !fromCache && !seen.online && seen.synced { line = "online \(received())" }
                if fromCache && seen.online { line = "offline \(received())" }
                if !fromCache && snapshot.count == base { seen.synced = true }
                if seen.synced { seen.online = !fromCache }
                seen.lastFromCache = fromCache
                seen.lastPending = snapshot.metadata.hasPendingWrites
                seen.lastCount = snapshot.count
                seen.base = 0
                seen.n = [:]
                for d in snapshot.documents {
                    if d.documentID.hasPrefix("b") {
                        seen.base += 1
                    } else if d.documentID.hasPrefix("d") {
                        seen.n[d.documentID] = d.data()["n"] as? Int ?? -1
                    }
                }
            }
            if let line { say(line) }
        }
        wait(seen, "the server's first answer", seconds: 60) { $0.synced }
        say("listening \(received())")

        for i in 0..<count {
            say("write \(i) \(now())")
            coll.document("d\(i)").setData(["i": i, "n": FieldValue.increment(Int64(1))], merge: true) { error in
                if let error {
                    say("error \(i) \(error)")
                    seen.withLockedValue { seen in seen.error = "write d\(i): \(error)" }
                } else {
                    say("ack \(i) \(now())")
                    seen.withLockedValue { seen in seen.acks += 1 }
                }
            }
            usleep(pace * 1000)
        }
        wait(seen, "every acknowledgement and a current, complete snapshot", seconds: 90) { s in
            s.acks == count && !s.lastFromCache && !s.lastPending && s.base == base && s.n.count == count
        }
        registration.remove()
        let (n, inBase) = seen.withLockedValue { seen in (seen.n, seen.base) }
        for (id, v) in n.sorted(by: { $0.key < $1.key }) { say("final \(id) \(v)") }
        say("base \(inBase)")
        say("received \(received())")
        say("done")
        db.terminate()
        exit(0)
    }

    /// A flag set once from another thread.
    final class Box: Sendable {
        private let value = LockedValueBox(false)
        func set() { value.withLockedValue { $0 = true } }
        var isSet: Bool { value.current }
    }
}

extension NSLock {
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

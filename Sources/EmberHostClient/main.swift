import EmberConcurrency
import Ember
import Foundation

// Responsible for: the Swift client process of the mixed-language tests (Tests/remote): one
// Firestore over `host`, the protocol every language's client follows (Tests/remote/README.md):
//
//     EmberHostClient HOST COLLECTION NAME NAME1,NAME2,...
//
// listens to COLLECTION (metadata changes included), waits for the server's first answer, then in
// rounds 1 and 2 sets COLLECTION/NAME to {"name": NAME, "round": r, "lang": "swift"} and waits
// (60 s at most) until every named client's document has reached round r and its own is no
// longer pending. Prints `pending <own document's hasPendingWrites, in order, repeats dropped>`,
// `saw <name> <round>` per client, `done`; exit status 2 (state on stderr) on a timeout.
// `EmberHostClient kill-writer ...` is the server-kill test's client (KillWriter.swift);
// `EmberHostClient tree-list ...` the multi-user list test's (TreeList.swift).
// `EmberHostClient tree-counter ...` the transactions test's (TreeCounter.swift).

let args = CommandLine.arguments
if args.count > 1 && args[1] == "kill-writer" { KillWriter.run(args) }
if args.count > 1 && args[1] == "tree-list" { TreeList.run(args) }
if args.count > 1 && args[1] == "tree-counter" { TreeCounter.run(args) }
guard args.count == 5 else {
    FileHandle.standardError.write("usage: EmberHostClient HOST COLLECTION NAME NAME1,NAME2,...\n".data(using: .utf8)!)
    exit(64)
}
let (host, collection, name) = (args[1], args[2], args[3])
let everyone = args[4].split(separator: ",").map(String.init)

/// What the listener saw, read by the main thread.
struct State {
    var synced = false
    var rounds: [String: Int] = [:]
    var ownPending: Bool?
    var pending: [Bool] = []
    var error: String?
}
let state = LockedValueBox(State())

func waitUntil(_ what: String, _ done: (State) -> Bool) {
    let end = Date().addingTimeInterval(60)
    while Date() < end {
        if state.withLockedValue { done($0) } { return }
        if let e = state.withLockedValue({ $0.error }) { fail("listener error: \(e)") }
        usleep(5_000)
    }
    fail("timed out waiting for \(what)")
}

func fail(_ why: String) -> Never {
    let s = state.withLockedValue { "synced=\($0.synced) rounds=\($0.rounds) pending=\($0.pending)" }
    FileHandle.standardError.write("swift client \(name): \(why); \(s)\n".data(using: .utf8)!)
    exit(2)
}

let settings = FirestoreSettings()
settings.host = host
settings.isSSLEnabled = false
let db: Firestore
do { db = try Firestore.open(settings: settings) } catch { fail("open: \(error)") }

let registration = db.collection(collection).addSnapshotListener(includeMetadataChanges: true) { snapshot, error in
    state.withLockedValue { state in
    guard let snapshot else { state.error = "\(String(describing: error))"; return }
    if !snapshot.metadata.isFromCache { state.synced = true }
    for d in snapshot.documents {
        state.rounds[d.documentID] = d.data()["round"] as? Int
        if d.documentID == name {
            let p = d.metadata.hasPendingWrites
            if state.pending.last != p { state.pending.append(p) }
            state.ownPending = p
        }
    }
    }
}

waitUntil("the server's first answer") { $0.synced }
for round in 1...2 {
    db.collection(collection).document(name).setData(["name": name, "round": round, "lang": "swift"])
    waitUntil("round \(round)") { s in
        everyone.allSatisfy { (s.rounds[$0] ?? 0) >= round } && s.ownPending == false
    }
}
registration.remove()
let (pending, rounds) = state.withLockedValue { ($0.pending, $0.rounds) }
print("pending " + pending.map { $0 ? "true" : "false" }.joined(separator: ","))
for n in everyone { print("saw \(n) \(rounds[n] ?? 0)") }
print("done")
db.terminate()

import EmberConcurrency
import Ember
import Foundation

/// Responsible for: the Swift process of the multi-user list test (Tests/remote/test_tree_lists.py):
///
///     EmberHostClient tree-list DATABASE_HOST LIST N TOTAL
///
/// A database whose tree syncs with DATABASE_HOST (`FirestoreSettings.databaseHost`, plaintext)
/// observes child_added at LIST (printing `added KEY PREV`, `-` for none), pushes N children
/// (`pushed KEY`), waits (60 s at most) until it has seen TOTAL children, prints `done`; exit
/// status 2 (state on stderr) on a timeout.
enum TreeList {
    static func run(_ args: [String]) -> Never {
        guard args.count == 6, let n = Int(args[4]), let total = Int(args[5]) else {
            TreeProcess.exit(64, "usage: EmberHostClient tree-list DATABASE_HOST LIST N TOTAL")
        }
        let db = TreeProcess.open(databaseHost: args[2])
        let lock = NSLock()
        let seen = LockedValueBox(0)
        let list = db.database().reference(withPath: args[3])
        _ = list.observe(.childAdded, andPreviousSiblingKeyWith: { snap, prev in
            lock.lock()
            print("added \(snap.key) \(prev ?? "-")")
            fflush(nil)
            seen.withLockedValue { $0 += 1 }
            lock.unlock()
        })
        for i in 0..<n {
            let child = list.childByAutoId()
            child.setValue(["from": "swift", "i": i])
            lock.lock()
            print("pushed \(child.key ?? "")")
            fflush(nil)
            lock.unlock()
        }
        let end = Date().addingTimeInterval(60)
        while seen.current < total {
            guard Date() < end else {
                TreeProcess.exit(2, "saw \(seen.current) of \(total) children in 60 s")
            }
            usleep(5_000)
        }
        print("done")
        fflush(nil)
        db.terminate(completion: nil)
        exit(0)
    }
}

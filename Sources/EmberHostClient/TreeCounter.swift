import EmberConcurrency
import Ember
import Foundation

/// Responsible for: the Swift process of the transactions test (Tests/remote/test_tree_lists.py):
///
///     EmberHostClient tree-counter DATABASE_HOST PATH N
///
/// A database whose tree syncs with DATABASE_HOST runs N transactions one after another, each
/// adding 1 to the number at PATH (`runTransactionBlock`), then prints `done`; exit status 2
/// (the error on stderr) when one fails or takes more than 30 s.
enum TreeCounter {
    static func run(_ args: [String]) -> Never {
        guard args.count == 5, let n = Int(args[4]) else {
            TreeProcess.exit(64, "usage: EmberHostClient tree-counter DATABASE_HOST PATH N")
        }
        let db = TreeProcess.open(databaseHost: args[2])
        let ref = db.database().reference(withPath: args[3])
        for i in 0..<n {
            let done = DispatchSemaphore(value: 0)
            let failure = LockedValueBox<String?>(nil)
            ref.runTransactionBlock({ data in
                data.value = ((data.value as? Int) ?? 0) + 1
                return TransactionResult.success(withValue: data)
            }, andCompletionBlock: { error, committed, _ in
                if let error { failure.withLockedValue { $0 = "\(error)" } } else if !committed { failure.withLockedValue { $0 = "not committed" } }
                done.signal()
            })
            guard done.wait(timeout: .now() + 30) == .success else {
                TreeProcess.exit(2, "transaction \(i) did not complete in 30 s")
            }
            if let failure = failure.current {
                TreeProcess.exit(2, "transaction \(i): \(failure)")
            }
        }
        print("done")
        fflush(nil)
        db.terminate(completion: nil)
        exit(0)
    }
}

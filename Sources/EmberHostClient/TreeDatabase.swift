import Ember
import Foundation

/// Responsible for: what the tree processes (TreeList, TreeCounter) share: exiting with a usage
/// or an error line on stderr, and opening a database whose tree syncs with a plaintext
/// DATABASE_HOST.
enum TreeProcess {
    static func exit(_ status: Int32, _ message: String) -> Never {
        FileHandle.standardError.write((message + "\n").data(using: .utf8)!)
        Foundation.exit(status)
    }

    /// A database whose tree syncs with `host` (`FirestoreSettings.databaseHost`, no TLS); exit
    /// status 2 when it cannot be opened.
    static func open(databaseHost host: String) -> Firestore {
        let settings = FirestoreSettings()
        settings.databaseHost = host
        settings.isSSLEnabled = false
        do { return try Firestore.open(settings: settings) } catch { exit(2, "open: \(error)") }
    }
}

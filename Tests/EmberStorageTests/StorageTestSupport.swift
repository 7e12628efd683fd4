import XCTest
import Foundation
import EmberModel
@testable import EmberStorage

func skey(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
func spath(_ s: String) -> ResourcePath { try! ResourcePath(parsing: s) }
func sdoc(_ k: String, _ d: [String: Value], version: Int64 = 1) -> Document {
    Document(key: skey(k), data: MapValue(d), version: version, createTime: version, updateTime: version)
}

/// Replaces the stored fields of `backend_docs` row `id` with bytes that do not decode (a map
/// whose one key is cut short), as a damaged file would hold them.
func damageStoredFields(ofId id: String, in p: SQLitePersistence, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertTrue(p.access(false) { db in try db.exec("UPDATE backend_docs SET data = x'81a361' WHERE id = '\(id)'"); return true },
                  file: file, line: line)
}

/// A fresh directory under /tmp, removed when the test ends.
final class TempDir {
    let path: String
    init(_ name: String = "ember") {
        path = NSTemporaryDirectory() + "\(name)-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String = "db.ember") -> String { path + "/" + name }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

func errorCode(_ e: Error) -> ErrorCode? { (e as? EmberError)?.code }

/// The directory holding the test bundle and the package's executables.
func buildProductsDirectory() -> URL {
    var url = Bundle(for: TempDir.self).bundleURL
    while url.pathExtension == "xctest" || url.lastPathComponent == "Contents" { url.deleteLastPathComponent() }
    return url
}

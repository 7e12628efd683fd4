import EmberFirestoreProto
import EmberServer
import Foundation
import GRPCCore
import XCTest

/// Every error that depends on what is stored comes after the rules' decision: a caller the
/// rules refuse gets PERMISSION_DENIED whether or not the document exists, never an error that
/// tells it exists or how large it is (the 1 MiB limit of a merged document).
final class RulesBeforeStoredDataTests: XCTestCase {
    typealias S = ServerTests

    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /locked/{id} { allow create: if true; }
            match /open/{id} { allow read, write: if true; }
          }
        }
        """

    static func merge(_ path: String, _ field: String, bytes: Int) -> Google_Firestore_V1_Write {
        var w = S.set(path, [field: S.value(String(repeating: "x", count: bytes))])
        w.updateMask.fieldPaths = [field]
        return w
    }

    static func refusal(_ body: () async throws -> Void) async -> (RPCError.Code, String)? {
        do { try await body(); return nil } catch let e as RPCError { return (e.code, e.message) } catch { return (.unknown, "\(error)") }
    }

    func testADeniedMergePastTheLimitIsDeniedNotMeasured() async throws {
        try await S.serve(rules: Self.rules) { fs, _ in
            _ = try await S.commit(fs, [S.set("locked/big", ["a": S.value(String(repeating: "a", count: 900_000))])])
            // An update (the merge of an existing document) is not allowed: refused as such, with
            // nothing of the 1.1 MB the merge would make.
            let existing = await Self.refusal { _ = try await S.commit(fs, [Self.merge("locked/big", "b", bytes: 200_000)]) }
            XCTAssertEqual(existing?.0, .permissionDenied, "\(String(describing: existing))")
            XCTAssertFalse(existing?.1.contains("bytes") ?? true, "\(String(describing: existing))")
            // (On a missing document the same merge is a create, which these rules allow; an
            // update with `exists` refused there is decided by the rules on the unconditional
            // write, BackendRulesTests' and test_review_fixes' precondition cases.)
        }
    }

    func testAnAllowedMergePastTheLimitIsStillInvalid() async throws {
        try await S.serve(rules: Self.rules) { fs, _ in
            _ = try await S.commit(fs, [S.set("open/big", ["a": S.value(String(repeating: "a", count: 900_000))])])
            let answer = await Self.refusal { _ = try await S.commit(fs, [Self.merge("open/big", "b", bytes: 200_000)]) }
            XCTAssertEqual(answer?.0, .invalidArgument, "\(String(describing: answer))")
        }
    }
}

@testable import EmberRemote
import Foundation
import ScriptedFirestore
import XCTest

/// Existence filters' bloom filters, read as the server writes them.
final class BloomFilterTests: XCTestCase {
    private let prefix = "projects/project-1/databases/database-1/documents/coll/doc"

    /// The server's own one-document filter at a 1 % false positive rate (Firestore's golden data):
    /// doc0 is in it, doc1 is not.
    func testTheServersOneDocumentFilter() throws {
        let f = try XCTUnwrap(BloomFilter(bitmap: [UInt8](Data(base64Encoded: "mwE=")!), padding: 5, hashCount: 8))
        XCTAssertEqual(f.bitCount, 11)
        XCTAssertTrue(f.mightContain(prefix + "0"))
        XCTAssertFalse(f.mightContain(prefix + "1"))
    }

    func testEveryNameInsertedIsFoundAndFewOthers() throws {
        let bitCount = 1000, hashCount = 7
        var bitmap = [UInt8](repeating: 0, count: 125)
        for i in 0..<100 {
            for bit in bloomBits(prefix + "\(i)", bitCount: bitCount, hashCount: hashCount) { bitmap[bit / 8] |= 1 << UInt8(bit % 8) }
        }
        let f = try XCTUnwrap(BloomFilter(bitmap: bitmap, padding: 0, hashCount: hashCount))
        XCTAssertTrue((0..<100).allSatisfy { f.mightContain(prefix + "\($0)") })
        let falsePositives = (100..<1100).filter { f.mightContain(prefix + "\($0)") }.count
        XCTAssertLessThan(falsePositives, 50, "about 1 % expected for 100 names in 1,000 bits with 7 hashes")
    }

    func testMalformedFiltersAreRefusedAndAnEmptyOneHoldsNothing() {
        XCTAssertNil(BloomFilter(bitmap: [1], padding: 8, hashCount: 1))
        XCTAssertNil(BloomFilter(bitmap: [1], padding: -1, hashCount: 1))
        XCTAssertNil(BloomFilter(bitmap: [1], padding: 0, hashCount: 0))
        XCTAssertNil(BloomFilter(bitmap: [], padding: 1, hashCount: 0))
        XCTAssertNil(BloomFilter(bitmap: [1], padding: 0, hashCount: -1))
        XCTAssertEqual(BloomFilter(bitmap: [], padding: 0, hashCount: 0)?.mightContain(prefix + "0"), false)
    }
}

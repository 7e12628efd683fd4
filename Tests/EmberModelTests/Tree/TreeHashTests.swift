import XCTest
@testable import EmberModel

/// SHA-1 against FIPS 180 vectors, and the node hashes against the Firebase SDKs' vectors (the
/// hash a transaction's compare-and-set sends, and the server's ETags).
final class TreeHashTests: XCTestCase {
    private func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    func testSHA1Vectors() {
        XCTAssertEqual(hex(SHA1.digest([])), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        XCTAssertEqual(hex(SHA1.digest(Array("abc".utf8))), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
                       "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        XCTAssertEqual(hex(SHA1.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))),
                       "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    func testNodeHashesMatchTheSDKs() {
        XCTAssertEqual(TreeHash.of(.null), "")
        XCTAssertEqual(TreeHash.of(.bool(true)), "E5z61QM0lN/U2WsOnusszCTkR8M=")
        XCTAssertEqual(TreeHash.of(.int(500)), "Ajg9bohDwTVmqR14o1bVJnneryM=")
        XCTAssertEqual(TreeHash.of(.double(500)), TreeHash.of(.int(500)))
        XCTAssertEqual(TreeHash.of(.string("Hello World")), "B8HWXc7zXMjrsnJxPRj7wrNGqt4=")
        XCTAssertEqual(TreeHash.of(.object(TreeObject(["foo": .string("bar")]))), "XnLeTeWQmzTHImTbSMDLg/qMrKY=")
    }
}

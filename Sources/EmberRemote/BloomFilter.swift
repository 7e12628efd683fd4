import Crypto
import Foundation

/// Responsible for: an existence filter's bloom filter of the document names still in a target
/// (Firestore's `BloomFilter`, as the SDKs and the server compute it): the MD5 of a name read as
/// two little-endian 64-bit numbers h1 and h2; bit (h1 + i·h2) mod bitCount, i < hashCount, is set
/// for every name in it (bit n is bit n % 8 of byte n / 8). A name may be in it only when all its
/// bits are set. A malformed filter is nil (the target is then listened to again, as without one).
///
///     let f = BloomFilter(bitmap: bytes, padding: 3, hashCount: 7)
///     if f?.mightContain("projects/p/databases/(default)/documents/c/a") == false { /* removed */ }
struct BloomFilter {
    let bitmap: [UInt8]
    let bitCount: Int
    let hashCount: Int

    init?(bitmap: [UInt8], padding: Int, hashCount: Int) {
        guard (0..<8).contains(padding), hashCount >= 0 else { return nil }
        if !bitmap.isEmpty && hashCount == 0 { return nil }
        if bitmap.isEmpty && padding != 0 { return nil }
        self.bitmap = bitmap
        self.bitCount = bitmap.count * 8 - padding
        self.hashCount = hashCount
    }

    func mightContain(_ name: String) -> Bool {
        guard bitCount > 0 else { return false }
        let digest = Array(Insecure.MD5.hash(data: Array(name.utf8)))
        var h1: UInt64 = 0, h2: UInt64 = 0
        for i in 0..<8 {
            h1 |= UInt64(digest[i]) << (8 * UInt64(i))
            h2 |= UInt64(digest[8 + i]) << (8 * UInt64(i))
        }
        let n = UInt64(bitCount)
        for i in 0..<UInt64(hashCount) {
            let bit = Int((h1 &+ i &* h2) % n)
            if bitmap[bit / 8] & (1 << UInt8(bit % 8)) == 0 { return false }
        }
        return true
    }
}

import Crypto
import EmberFirestoreProto
import Foundation
import SwiftProtobuf

/// A protobuf timestamp for `micros` µs since the epoch.
func timestamp(_ micros: Int64) -> Google_Protobuf_Timestamp {
    var t = Google_Protobuf_Timestamp()
    t.seconds = micros / 1_000_000
    t.nanos = Int32(micros % 1_000_000) * 1000
    return t
}

/// Responsible for: the watch messages a scenario sends, written as the SDKs' spec scenarios
/// name them: target changes (`added`, `current`, `reset`, `removed`, `global`), document
/// changes, deletes and removes, and existence filters. Versions and read times are in µs;
/// document paths are below the database's documents ("c/a"); field values are integers or
/// strings.
extension Google_Firestore_V1_ListenResponse {
    public static func target(_ kind: Google_Firestore_V1_TargetChange.TargetChangeType, _ ids: [Int32], token: String? = nil,
                       readTime: Int64? = nil) -> ListenResponse {
        var tc = Google_Firestore_V1_TargetChange()
        tc.targetChangeType = kind
        tc.targetIds = ids
        if let token { tc.resumeToken = Data(token.utf8) }
        if let readTime { tc.readTime = timestamp(readTime) }
        var r = ListenResponse()
        r.targetChange = tc
        return r
    }

    /// ADD of these targets (the server's answer to the client's add).
    public static func added(_ ids: Int32...) -> ListenResponse { target(.add, ids) }
    /// CURRENT: the server has sent everything these targets held at the snapshot to come.
    public static func current(_ ids: Int32..., token: String? = nil) -> ListenResponse { target(.current, ids, token: token) }
    public static func reset(_ ids: Int32...) -> ListenResponse { target(.reset, ids) }
    /// NO_CHANGE for these targets (with their new resume token).
    public static func noChange(_ ids: Int32..., token: String) -> ListenResponse { target(.noChange, ids, token: token) }
    /// A global snapshot: NO_CHANGE for no target, with a read time (and a token for every target).
    public static func global(_ readTime: Int64, token: String? = nil) -> ListenResponse {
        target(.noChange, [], token: token, readTime: readTime)
    }
    /// REMOVE of a target, with the error that ended it (`code` 0: removed without one).
    public static func removed(_ ids: Int32..., code: Int32 = 0, message: String = "") -> ListenResponse {
        var r = target(.remove, ids)
        if code != 0 {
            var s = Google_Rpc_Status()
            s.code = code
            s.message = message
            r.targetChange.cause = s
        }
        return r
    }

    /// A document (updated at `version`) in the targets `in` and removed from `out`.
    public static func doc(_ path: String, version: Int64, _ fields: [String: Any] = [:], in ids: [Int32],
                           out: [Int32] = []) -> ListenResponse {
        var d = Google_Firestore_V1_Document()
        d.name = ScriptedFirestore.database + "/documents/" + path
        d.createTime = timestamp(1_000)
        d.updateTime = timestamp(version)
        for (k, v) in fields.sorted(by: { $0.key < $1.key }) {
            var value = Google_Firestore_V1_Value()
            if let i = v as? Int { value.integerValue = Int64(i) } else { value.stringValue = "\(v)" }
            var entry = Google_Firestore_V1_MapField()
            entry.key = k
            entry.value = value
            d.fields.append(entry)
        }
        var dc = Google_Firestore_V1_DocumentChange()
        dc.document = d
        dc.targetIds = ids
        dc.removedTargetIds = out
        var r = ListenResponse()
        r.documentChange = dc
        return r
    }

    /// The document was deleted (at `readTime`), and so left the targets `out`.
    public static func deleted(_ path: String, readTime: Int64? = nil, out ids: [Int32]) -> ListenResponse {
        var dd = Google_Firestore_V1_DocumentDelete()
        dd.document = ScriptedFirestore.database + "/documents/" + path
        dd.removedTargetIds = ids
        if let readTime { dd.readTime = timestamp(readTime) }
        var r = ListenResponse()
        r.documentDelete = dd
        return r
    }

    /// The document left the targets `out` (its new state is not sent).
    public static func removedDoc(_ path: String, out ids: [Int32]) -> ListenResponse {
        var dr = Google_Firestore_V1_DocumentRemove()
        dr.document = ScriptedFirestore.database + "/documents/" + path
        dr.removedTargetIds = ids
        var r = ListenResponse()
        r.documentRemove = dr
        return r
    }

    /// An existence filter: the target holds `count` documents.
    public static func filter(_ id: Int32, count: Int32) -> ListenResponse {
        var f = Google_Firestore_V1_ExistenceFilter()
        f.targetID = id
        f.count = count
        var r = ListenResponse()
        r.filter = f
        return r
    }
}

extension Google_Firestore_V1_ListenResponse {
    /// An existence filter with a bloom filter of the documents (paths below the database's
    /// documents) still in the target: `bitCount` bits, `hashCount` hashes, as the server builds one.
    public static func filter(_ id: Int32, count: Int32, bloomOf paths: [String], bitCount: Int = 64, hashCount: Int = 5) -> ListenResponse {
        var r = filter(id, count: count)
        var bitmap = [UInt8](repeating: 0, count: (bitCount + 7) / 8)
        for p in paths {
            for bit in bloomBits(ScriptedFirestore.database + "/documents/" + p, bitCount: bitCount, hashCount: hashCount) {
                bitmap[bit / 8] |= 1 << UInt8(bit % 8)
            }
        }
        r.filter.unchangedNames.bits.bitmap = Data(bitmap)
        r.filter.unchangedNames.bits.padding = Int32(bitmap.count * 8 - bitCount)
        r.filter.unchangedNames.hashCount = Int32(hashCount)
        return r
    }
}

/// The bits a name sets in a bloom filter: MD5 as two little-endian 64-bit numbers h1, h2;
/// bits (h1 + i·h2) mod bitCount for i < hashCount.
public func bloomBits(_ name: String, bitCount: Int, hashCount: Int) -> [Int] {
    let d = Array(Insecure.MD5.hash(data: Array(name.utf8)))
    let h1 = (0..<8).reduce(UInt64(0)) { $0 | UInt64(d[$1]) << (8 * UInt64($1)) }
    let h2 = (0..<8).reduce(UInt64(0)) { $0 | UInt64(d[8 + $1]) << (8 * UInt64($1)) }
    return (0..<UInt64(hashCount)).map { Int((h1 &+ $0 &* h2) % UInt64(bitCount)) }
}

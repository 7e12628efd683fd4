import EmberModel

/// Responsible for: an order-preserving byte encoding of values (docs/semantics.md value order), so
/// SQLite's byte comparison of index keys follows Firestore's order: `compare(a, b) <= 0`
/// implies `encode(a) <= encode(b)` byte-wise. Numbers are encoded as doubles (ints beyond 2^53
/// may share an encoding: the index then yields a superset that the query filter narrows, as
/// Firestore's own index encoding does). Every encoding is self-delimiting, so the encodings of
/// several fields concatenate into one composite key.
///
///     IndexValueEncoder.encode(.int(1)) == IndexValueEncoder.encode(.double(1.0))   // true
public enum IndexValueEncoder {
    // Type bytes, in Firestore's cross-type order; 0x01 ends arrays and maps.
    static let tNull: UInt8 = 0x05, tBool: UInt8 = 0x0A, tNumber: UInt8 = 0x0F, tTimestamp: UInt8 = 0x14
    static let tString: UInt8 = 0x19, tBytes: UInt8 = 0x1E, tReference: UInt8 = 0x23, tGeo: UInt8 = 0x28
    static let tArray: UInt8 = 0x2D, tVector: UInt8 = 0x30, tMap: UInt8 = 0x32, end: UInt8 = 0x01

    public static func encode(_ v: Value) -> [UInt8] {
        var out: [UInt8] = []
        write(v, &out)
        return out
    }

    /// The type byte the encoding of every value of `v`'s type starts with.
    public static func typeByte(_ v: Value) -> UInt8 {
        switch v {
        case .null: return tNull
        case .bool: return tBool
        case .int, .double: return tNumber
        case .timestamp: return tTimestamp
        case .string: return tString
        case .bytes: return tBytes
        case .reference: return tReference
        case .geoPoint: return tGeo
        case .array: return tArray
        case .map(let m): return m.isVector ? tVector : tMap
        }
    }

    public static func write(_ v: Value, _ out: inout [UInt8]) {
        out.append(typeByte(v))
        switch v {
        case .null: break
        case .bool(let b): out.append(b ? 1 : 0)
        case .int(let i): writeDouble(Double(i), &out)
        case .double(let d): writeDouble(d, &out)
        case .timestamp(let t): writeU64(UInt64(bitPattern: t.micros) ^ (1 << 63), &out)
        case .string(let s): writeBytes(Array(s.utf8), &out)
        case .bytes(let b): writeBytes(b, &out)
        case .reference(let k):
            for seg in k.path.segments {
                // A numeric id (ordered first, by number) as 0x00 0x01 and its biased number: no
                // string segment starts so (an id is never empty; a leading NUL is 0x00 0xFF).
                if let n = ResourcePath.numericId(seg) {
                    out.append(0x00); out.append(0x01)
                    writeU64(UInt64(bitPattern: n) ^ (1 << 63), &out)
                } else {
                    writeBytes(Array(seg.utf8), &out)
                }
            }
            out.append(0x00); out.append(0x00)   // below any segment's first bytes: a prefix path sorts first
        case .geoPoint(let g): writeDouble(g.latitude, &out); writeDouble(g.longitude, &out)
        case .array(let a):
            for e in a { write(e, &out) }
            out.append(end)
        case .map(let m) where m.isVector:
            // Vectors order by length first: the length leads.
            let elements = m.vectorElements
            writeU64(UInt64(elements.count), &out)
            for e in elements { write(e, &out) }
            out.append(end)
        case .map(let m):
            for (k, e) in m.entries { writeBytes(Array(k.utf8), &out); write(e, &out) }
            out.append(end)
        }
    }

    /// NaN first, then -inf ... +inf; -0.0 as 0.0.
    static func writeDouble(_ d: Double, _ out: inout [UInt8]) {
        if d.isNaN { writeU64(0, &out); return }
        let x = d == 0 ? 0.0 : d
        let bits = x.bitPattern
        writeU64(x.sign == .minus ? ~bits : bits | (1 << 63), &out)
    }

    static func writeU64(_ v: UInt64, _ out: inout [UInt8]) {
        for k in stride(from: 56, through: 0, by: -8) { out.append(UInt8((v >> UInt64(k)) & 0xFF)) }
    }

    /// Bytes with 0x00 escaped as 0x00 0xFF, terminated by 0x00 0x01 (a prefix sorts first).
    static func writeBytes(_ b: [UInt8], _ out: inout [UInt8]) {
        for x in b {
            out.append(x)
            if x == 0 { out.append(0xFF) }
        }
        out.append(0x00); out.append(0x01)
    }

    /// The smallest byte string greater than every string starting with `prefix` (nil: none).
    public static func prefixSuccessor(_ prefix: [UInt8]) -> [UInt8]? {
        var p = prefix
        while let last = p.last {
            if last < 0xFF { p[p.count - 1] = last + 1; return p }
            p.removeLast()
        }
        return nil
    }
}

import EmberModel

/// Responsible for: the bytes of tree values and of a pending tree write (the client's durable
/// write queue): a tag byte per node (null, false, true, int64, double, string, object), lengths
/// and integers as little-endian fixed widths, strings as UTF-8. `decode` throws `dataLoss` on
/// bytes it did not write (a damaged row), never traps.
///
///     let b = TreeCodec.encode([TreeWriteOp(path: p, value: .int(1))])
///     try TreeCodec.decodeOps(b)        // the same ops
public enum TreeCodec {
    static let null: UInt8 = 0, falseTag: UInt8 = 1, trueTag: UInt8 = 2, intTag: UInt8 = 3,
               doubleTag: UInt8 = 4, stringTag: UInt8 = 5, objectTag: UInt8 = 6

    public static func encode(_ v: TreeValue) -> [UInt8] {
        var out: [UInt8] = []
        write(v, &out)
        return out
    }

    /// A write's overwrites: count, then (segment count, segments, value) per op.
    public static func encode(_ ops: [TreeWriteOp]) -> [UInt8] {
        var out: [UInt8] = []
        putInt(UInt64(ops.count), 4, &out)
        for op in ops {
            putInt(UInt64(op.path.count), 4, &out)
            for s in op.path.segments { putString(s, &out) }
            write(op.value, &out)
        }
        return out
    }

    public static func decodeValue<C: Collection>(_ bytes: C) throws -> TreeValue where C.Element == UInt8, C.Index == Int {
        var r = Reader(bytes: Array(bytes))
        let v = try r.value(depth: 0)
        guard r.atEnd else { throw damaged }
        return v
    }

    public static func decodeOps<C: Collection>(_ bytes: C) throws -> [TreeWriteOp] where C.Element == UInt8 {
        var r = Reader(bytes: Array(bytes))
        let n = try r.int(4)
        guard n <= UInt64(r.remaining) else { throw damaged }
        var ops: [TreeWriteOp] = []
        for _ in 0..<n {
            let depth = try r.int(4)
            guard depth <= UInt64(TreePath.maxDepth) else { throw damaged }
            var segs: [String] = []
            for _ in 0..<depth { segs.append(try r.string()) }
            ops.append(TreeWriteOp(path: TreePath(unchecked: segs), value: try r.value(depth: 0)))
        }
        guard r.atEnd else { throw damaged }
        return ops
    }

    static let damaged = EmberError(.dataLoss, "A stored tree value is damaged (unreadable bytes).")

    private static func write(_ v: TreeValue, _ out: inout [UInt8]) {
        switch v {
        case .null: out.append(null)
        case .bool(let b): out.append(b ? trueTag : falseTag)
        case .int(let i): out.append(intTag); putInt(UInt64(bitPattern: i), 8, &out)
        case .double(let d): out.append(doubleTag); putInt(d.bitPattern, 8, &out)
        case .string(let s): out.append(stringTag); putString(s, &out)
        case .object(let o):
            out.append(objectTag)
            putInt(UInt64(o.count), 4, &out)
            for (k, c) in o.children { putString(k.s, &out); write(c, &out) }
        }
    }

    private static func putInt(_ v: UInt64, _ width: Int, _ out: inout [UInt8]) {
        for i in 0..<width { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    private static func putString(_ s: String, _ out: inout [UInt8]) {
        putInt(UInt64(s.utf8.count), 4, &out)
        out.append(contentsOf: s.utf8)
    }

    private struct Reader {
        let bytes: [UInt8]
        var pos = 0
        var atEnd: Bool { pos == bytes.count }
        var remaining: Int { bytes.count - pos }

        mutating func byte() throws -> UInt8 {
            guard pos < bytes.count else { throw TreeCodec.damaged }
            pos += 1
            return bytes[pos - 1]
        }

        mutating func int(_ width: Int) throws -> UInt64 {
            guard remaining >= width else { throw TreeCodec.damaged }
            var v: UInt64 = 0
            for i in 0..<width { v |= UInt64(bytes[pos + i]) << (8 * UInt64(i)) }
            pos += width
            return v
        }

        mutating func string() throws -> String {
            let n = try int(4)
            guard n <= UInt64(remaining) else { throw TreeCodec.damaged }
            let s = String(decoding: bytes[pos..<pos + Int(n)], as: UTF8.self)
            pos += Int(n)
            return s
        }

        mutating func value(depth: Int) throws -> TreeValue {
            guard depth <= TreePath.maxDepth + 1 else { throw TreeCodec.damaged }
            switch try byte() {
            case TreeCodec.null: return .null
            case TreeCodec.falseTag: return .bool(false)
            case TreeCodec.trueTag: return .bool(true)
            case TreeCodec.intTag: return .int(Int64(bitPattern: try int(8)))
            case TreeCodec.doubleTag: return .double(Double(bitPattern: try int(8)))
            case TreeCodec.stringTag: return .string(try string())
            case TreeCodec.objectTag:
                let n = try int(4)
                guard n <= UInt64(remaining) else { throw TreeCodec.damaged }
                var d: [UTF8String: TreeValue] = [:]
                d.reserveCapacity(Int(n))
                for _ in 0..<n {
                    let k = try string()
                    d[UTF8String(k)] = try value(depth: depth + 1)
                }
                return d.isEmpty ? .null : .object(TreeObject(d))
            default: throw TreeCodec.damaged
            }
        }
    }
}

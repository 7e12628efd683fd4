import EmberModel

/// Responsible for: mutation batches as bytes, exact in both directions, for durable queues:
/// the batch becomes a `Value` tree encoded with `ValueMessagePack` (paths as segment arrays, so
/// no quoting rules are involved).
///
///     let bytes = MutationCodec.encode(batch); let back = try MutationCodec.decode(bytes)
public enum MutationCodec {
    public static func encode(_ b: MutationBatch) -> [UInt8] {
        ValueMessagePack.encode(.array([.int(b.batchId), .int(b.localWriteTime), .array(b.mutations.map(value))]))
    }

    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws -> MutationBatch {
        guard case .array(let top) = try ValueMessagePack.decode(bytes), top.count == 3,
              case .int(let id) = top[0], case .int(let t) = top[1], case .array(let ms) = top[2]
        else { throw bad("batch") }
        return MutationBatch(batchId: id, localWriteTime: t, mutations: try ms.map(mutation))
    }

    static func bad(_ what: String) -> EmberError { EmberError(.dataLoss, "A stored mutation \(what) is malformed.") }

    static func segs(_ s: [String]) -> Value { .array(s.map { .string($0) }) }
    static func strings(_ v: Value) throws -> [String] {
        guard case .array(let a) = v else { throw bad("path") }
        return try a.map { guard case .string(let s) = $0 else { throw bad("path") }; return s }
    }

    static func value(_ m: Mutation) -> Value {
        var kind: Value
        switch m.kind {
        case .set(let d): kind = .array([.int(0), .map(d)])
        case .patch(let d, let mask): kind = .array([.int(1), .map(d), .array(mask.map { segs($0.segments) })])
        case .delete: kind = .array([.int(2)])
        case .verify: kind = .array([.int(3)])
        }
        let pre: Value
        switch m.precondition {
        case .none: pre = .null
        case .exists(let b): pre = .bool(b)
        case .updateTime(let t): pre = .int(t)
        }
        let transforms: [Value] = m.transforms.map { t in
            switch t.op {
            case .serverTimestamp: return .array([segs(t.path.segments), .int(0)])
            case .increment(let v): return .array([segs(t.path.segments), .int(1), v])
            case .arrayUnion(let a): return .array([segs(t.path.segments), .int(2), .array(a)])
            case .arrayRemove(let a): return .array([segs(t.path.segments), .int(3), .array(a)])
            }
        }
        return .array([segs(m.key.path.segments), kind, pre, .array(transforms)])
    }

    static func mutation(_ v: Value) throws -> Mutation {
        guard case .array(let a) = v, a.count == 4, case .array(let k) = a[1], case .int(let tag)? = k.first,
              case .array(let trs) = a[3] else { throw bad("mutation") }
        let key = DocumentKey(unchecked: ResourcePath(segments: try strings(a[0])))
        let kind: Mutation.Kind
        switch (tag, k.count) {
        case (0, 2): guard case .map(let d) = k[1] else { throw bad("set") }; kind = .set(d)
        case (1, 3):
            guard case .map(let d) = k[1], case .array(let mask) = k[2] else { throw bad("patch") }
            kind = .patch(d, mask: try mask.map { FieldPath(unchecked: try strings($0)) })
        case (2, 1): kind = .delete
        case (3, 1): kind = .verify
        default: throw bad("kind")
        }
        let pre: Mutation.Precondition
        switch a[2] {
        case .null: pre = .none
        case .bool(let b): pre = .exists(b)
        case .int(let t): pre = .updateTime(t)
        default: throw bad("precondition")
        }
        let transforms: [FieldTransform] = try trs.map { t in
            guard case .array(let x) = t, x.count >= 2, case .int(let op) = x[1] else { throw bad("transform") }
            let path = FieldPath(unchecked: try strings(x[0]))
            switch (op, x.count) {
            case (0, 2): return FieldTransform(path: path, op: .serverTimestamp)
            case (1, 3): return FieldTransform(path: path, op: .increment(x[2]))
            case (2, 3): guard case .array(let e) = x[2] else { throw bad("transform") }; return FieldTransform(path: path, op: .arrayUnion(e))
            case (3, 3): guard case .array(let e) = x[2] else { throw bad("transform") }; return FieldTransform(path: path, op: .arrayRemove(e))
            default: throw bad("transform")
            }
        }
        return Mutation(key: key, kind: kind, transforms: transforms, precondition: pre)
    }
}

import CEmberABI
import EmberModel

// Responsible for: turning the arguments of a C write (path, data, transforms document, merge
// fields) into one Mutation, with Firestore's checks. Shared by documents, batches and
// transactions. The transforms notation is documented in include/ember.h.

enum WriteKind {
    case set
    case merge(fields: [FieldPath]?)
    case update
    /// A set with the precondition that the document does not exist (Firestore's create).
    case create
}

enum TransformSpec {
    case delete
    case op(FieldTransform.Op)
}

/// Parses the transforms document: field path -> "serverTimestamp" | "delete" |
/// {"increment": n} | {"arrayUnion": [...]} | {"arrayRemove": [...]}.
func parseTransforms(_ m: MapValue) throws -> [(FieldPath, TransformSpec)] {
    var out: [(FieldPath, TransformSpec)] = []
    for (k, v) in m.entries {
        let path = try FieldPath(parsing: k)
        let what = "transform of field '\(path)'"
        switch v {
        case .string("serverTimestamp"): out.append((path, .op(.serverTimestamp)))
        case .string("delete"): out.append((path, .delete))
        case .map(let spec) where spec.count == 1:
            let (name, arg) = spec.entries[0]
            switch (name, arg) {
            case ("increment", .int), ("increment", .double): out.append((path, .op(.increment(arg))))
            case ("increment", _): throw invalid("The \(what): increment takes an int or a double, got \(arg.typeName)")
            case ("arrayUnion", .array(let a)), ("arrayRemove", .array(let a)):
                try DocumentLimits.validate(value: .array(a), path: path.canonical)
                out.append((path, .op(name == "arrayUnion" ? .arrayUnion(a) : .arrayRemove(a))))
            case ("arrayUnion", _), ("arrayRemove", _): throw invalid("The \(what): \(name) takes an array, got \(arg.typeName)")
            default: throw invalid("Unknown \(what): '\(name)' (use increment, arrayUnion or arrayRemove)")
            }
        default:
            throw invalid("Invalid \(what): use \"serverTimestamp\", \"delete\", {\"increment\": n}, {\"arrayUnion\": [...]} or {\"arrayRemove\": [...]}")
        }
    }
    return out
}

/// The leaf paths of a map for set-merge: nested non-empty maps merge field by field.
func leafPaths(_ m: MapValue, prefix: [String] = [], into out: inout [FieldPath]) {
    for (k, v) in m.entries {
        let sub = prefix + [k]
        if case .map(let inner) = v, !inner.isEmpty { leafPaths(inner, prefix: sub, into: &out) } else { out.append(FieldPath(unchecked: sub)) }
    }
}

/// Throws when a transform's path is also written by `data` (itself or under a non-map parent).
func checkNoOverlap(_ data: MapValue, _ transforms: [(FieldPath, TransformSpec)]) throws {
    for (path, _) in transforms {
        for n in 1...path.segments.count {
            let prefix = FieldPath(unchecked: Array(path.segments[..<n]))
            guard let v = data.value(at: prefix) else { break }
            if n == path.segments.count { throw invalid("Field '\(path)' is both in the data and in the transforms") }
            if case .map = v { continue }
            throw invalid("Field '\(path)' has a transform but the data sets '\(prefix)' to a \(v.typeName)")
        }
    }
}

/// `DocumentLimits.validate(key:data:)` without its cost on valid documents: the same size, depth,
/// name and nested-array rules computed without building a field path per field; only a document
/// that breaks a rule goes through `DocumentLimits.validate`, which throws its error.
@inline(__always)
func validateLimits(_ key: DocumentKey, _ data: MapValue) throws {
    let size = limitsMapSize(data, 0)
    if size < 0 || size + DocumentLimits.nameSize(key.path) + 32 > DocumentLimits.maxDocumentBytes {
        try DocumentLimits.validate(key: key, data: data)
    }
}

/// The size `DocumentLimits` gives `m` at `depth`, or -1 when a rule is broken.
private func limitsMapSize(_ m: MapValue, _ depth: Int) -> Int {
    if depth > DocumentLimits.maxDepth { return -1 }
    var size = 0
    for (k, v) in m.entries {
        let kb = k.utf8.count
        if kb == 0 || kb > DocumentLimits.maxFieldNameBytes { return -1 }
        let s = limitsValueSize(v, depth, false)
        if s < 0 { return -1 }
        size += kb + 1 + s
    }
    return size
}

private func limitsValueSize(_ v: Value, _ depth: Int, _ inArray: Bool) -> Int {
    switch v {
    case .null, .bool: return 1
    case .int, .double, .timestamp: return 8
    case .string(let s): return s.utf8.count + 1
    case .bytes(let b): return b.count
    case .reference(let k): return DocumentLimits.nameSize(k.path)
    case .geoPoint: return 16
    case .array(let a):
        if inArray || depth + 1 > DocumentLimits.maxDepth { return -1 }
        var s = 0
        for e in a {
            let x = limitsValueSize(e, depth + 1, true)
            if x < 0 { return -1 }
            s += x
        }
        return s
    case .map(let m): return limitsMapSize(m, depth + 1)
    }
}

/// Builds the mutation of a set / merge / update from the C arguments.
func makeMutation(path: UnsafePointer<CChar>?, kind: WriteKind, format: Int32,
                  data: UnsafeRawPointer?, dataLen: Int, transforms: UnsafeRawPointer?, transformsLen: Int) throws -> Mutation {
    let key = try documentKey(path)
    let input = try decodeMap(data, dataLen, format, "data")
    let specs = try parseTransforms(try decodeMap(transforms, transformsLen, format, "transforms"))
    var ops: [FieldTransform] = []
    var deletes: [FieldPath] = []
    for (p, s) in specs {
        switch s {
        case .delete: deletes.append(p)
        case .op(let op): ops.append(FieldTransform(path: p, op: op))
        }
    }
    switch kind {
    case .set, .create:
        if let d = deletes.first { throw invalid("\"delete\" of field '\(d)' can only be used with merge and update") }
        try checkNoOverlap(input, specs)
        try validateLimits(key, input)
        if case .create = kind { return Mutation(key: key, kind: .set(input), transforms: ops, precondition: .exists(false)) }
        return Mutation(key: key, kind: .set(input), transforms: ops)
    case .merge(let fields):
        try checkNoOverlap(input, specs)
        var input = input
        var mask: [FieldPath] = []
        leafPaths(input, into: &mask)
        mask += deletes
        if let fields {
            for (i, f) in fields.enumerated() {
                if let g = fields[(i + 1)...].first(where: { $0.isPrefix(of: f) || f.isPrefix(of: $0) }) {
                    throw invalid("Invalid merge fields: '\(f)' and '\(g)' overlap (one is a prefix of the other or they are equal).")
                }
            }
            try MergeFieldDeletes.check(deletes, selectedBy: fields)
            for f in fields where input.value(at: f) == nil {
                if specs.contains(where: { $0.0 == f }) { continue }
                // Only transforms under it (their map held nothing else): the merge field
                // becomes an empty map, the transforms then fill it (Firestore's update mask).
                if specs.contains(where: { f.isPrefix(of: $0.0) }) { input.setValue(.map(MapValue()), at: f); continue }
                throw invalid("Field '\(f)' is specified in your field mask but missing from your input data.")
            }
            mask = mask.filter { m in fields.contains { $0.isPrefix(of: m) } } + fields.filter { input.value(at: $0) != nil }
            ops = ops.filter { t in fields.contains { $0.isPrefix(of: t.path) } }
        }
        try validateLimits(key, input)
        return Mutation(key: key, kind: .patch(input, mask: mask), transforms: ops)
    case .update:
        var out = MapValue()
        var mask: [FieldPath] = []
        for (k, v) in input.entries {
            let p = try FieldPath(parsing: k)
            if mask.contains(where: { $0.isPrefix(of: p) || p.isPrefix(of: $0) }) {
                throw invalid("Field '\(p)' conflicts with another field of the update")
            }
            out.setValue(v, at: p)
            mask.append(p)
        }
        // A transform inside a map value of the update (`{"c": {"d": serverTimestamp}}`, the binding
        // keeping "c" as an empty map) applies after the map replaced the field (the update mask
        // is the top-level key); a delete there is an error, as in Firestore.
        for (p, spec) in specs {
            guard let m = mask.first(where: { $0.isPrefix(of: p) || p.isPrefix(of: $0) }) else { continue }
            if p.isPrefix(of: m) { throw invalid("Field '\(p)' is both in the data and in the transforms") }
            if case .delete = spec {
                throw invalid("DELETE_FIELD can only appear at the top level of your update data (found in field '\(p)' inside '\(m)').")
            }
            guard case .map? = out.value(at: m) else { throw invalid("Field '\(p)' has a transform but the update sets '\(m)' to a value that is not a map") }
            try checkNoOverlap(out, [(p, spec)])
        }
        mask += deletes
        if mask.isEmpty && ops.isEmpty { throw invalid("An update needs at least one field") }
        try validateLimits(key, out)
        return Mutation(key: key, kind: .patch(out, mask: mask), transforms: ops, precondition: .exists(true))
    }
}

/// The merge fields given as C strings (NULL with 0: merge everything).
func mergeFields(_ fields: UnsafePointer<UnsafePointer<CChar>?>?, _ n: Int) throws -> [FieldPath]? {
    if n == 0 { return nil }
    guard n > 0 else { throw invalid("n_fields \(UInt(bitPattern: n)) is larger than any array") }
    guard let fields else { throw invalid("fields is NULL but n_fields is \(n)") }
    return try (0..<n).map { try parseFieldPath(fields[$0], "fields[\($0)]") }
}

func deleteMutation(_ path: UnsafePointer<CChar>?) throws -> Mutation {
    Mutation(key: try documentKey(path), kind: .delete)
}

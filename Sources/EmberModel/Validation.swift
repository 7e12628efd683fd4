/// Responsible for: Firestore's limits on document contents: nesting depth (at most 20 maps or
/// arrays inside one another below the document, as the Firestore emulator counts), no arrays
/// directly inside arrays, field names, and the 1 MiB document size (Firestore's storage-size formula).
///
///     try DocumentLimits.validate(key: key, data: fields)
public enum DocumentLimits {
    public static let maxDepth = 20
    public static let maxDocumentBytes = 1_048_576
    public static let maxFieldNameBytes = 1_500

    /// Throws invalid-argument when `data` breaks a limit for a document at `key`.
    public static func validate(key: DocumentKey, data: MapValue) throws {
        let size = try mapSize(data, depth: 0, path: "") + nameSize(key.path) + 32
        if size > maxDocumentBytes {
            throw EmberError.invalidArgument("Document '\(key)' is \(size) bytes, larger than the maximum of \(maxDocumentBytes) bytes (1 MiB)")
        }
    }

    /// Validates a free-standing value (a filter operand or transform argument).
    public static func validate(value: Value, depth: Int = 0, path: String = "value") throws {
        _ = try valueSize(value, depth: depth, path: path, inArray: false)
    }

    public static func nameSize(_ path: ResourcePath) -> Int {
        path.segments.reduce(16) { $0 + $1.utf8.count + 1 }
    }

    /// `depth` counts the maps and arrays from the document (0) down to and including `m`.
    static func mapSize(_ m: MapValue, depth: Int, path: String) throws -> Int {
        if depth > maxDepth {
            throw EmberError.invalidArgument("Value at '\(path)' is nested more than \(maxDepth) levels deep")
        }
        var size = 0
        for (k, v) in m.entries {
            let kb = k.utf8.count
            if kb > maxFieldNameBytes { throw EmberError.invalidArgument("Field name at '\(path)' is longer than \(maxFieldNameBytes) bytes") }
            if k.isEmpty { throw EmberError.invalidArgument("Empty field name at '\(path.isEmpty ? "document" : path)'") }
            let p = path.isEmpty ? k : path + "." + k
            size += kb + 1 + (try valueSize(v, depth: depth, path: p, inArray: false))
        }
        return size
    }

    static func valueSize(_ v: Value, depth: Int, path: String, inArray: Bool) throws -> Int {
        switch v {
        case .null, .bool: return 1
        case .int, .double, .timestamp: return 8
        case .string(let s): return s.utf8.count + 1
        case .bytes(let b): return b.count
        case .reference(let k): return nameSize(k.path)
        case .geoPoint: return 16
        case .array(let a):
            if inArray { throw EmberError.invalidArgument("Invalid data at '\(path)': nested arrays are not supported") }
            if depth + 1 > maxDepth { throw EmberError.invalidArgument("Value at '\(path)' is nested more than \(maxDepth) levels deep") }
            var s = 0
            for e in a { s += try valueSize(e, depth: depth + 1, path: path, inArray: true) }
            return s
        case .map(let m): return try mapSize(m, depth: depth + 1, path: path)
        }
    }
}

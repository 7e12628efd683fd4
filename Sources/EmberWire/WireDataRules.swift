import EmberFirestoreProto
import EmberModel

/// Responsible for: the backend's checks on what a write sends that Ember's model leaves to the
/// server, refused with INVALID_ARGUMENT in the backend's words (as the Firestore emulator
/// answers): reserved field names (`__x__`), vector values (`{"__type__": "__vector__",
/// "value": [doubles]}`: not empty, doubles only, nothing else in the map; any other `__type__`
/// is refused), arrays directly inside arrays, reserved names in field paths (masks,
/// transforms), and reserved collection and document ids in names.
public enum WireDataRules {
    /// Checks a written document's fields.
    public static func check(fields: [Google_Firestore_V1_MapField]) throws {
        for (k, v) in lastWinsByUTF8(fields.pairs) {
            if ResourcePath.isReserved(k) { throw EmberError.invalidArgument("field name \(k) is reserved") }
            try check(v, path: k, inArray: false, depth: 1)
        }
    }

    /// Checks a value a write sends (a transform's operand).
    public static func check(value: WireValue) throws {
        try check(value, path: "value", inArray: false, depth: 1)
    }

    /// Past WireCodec's bound the conversion refuses the value: the walk stops there.
    private static func check(_ v: WireValue, path: String, inArray: Bool, depth: Int) throws {
        guard depth <= WireCodec.maxDepth else { return }
        switch v.valueType {
        case .arrayValue(let a)?:
            if inArray { throw EmberError.invalidArgument("Cannot convert an array value in an array value.") }
            for e in a.values { try check(e, path: path, inArray: true, depth: depth + 1) }
        case .mapValue(let m)?:
            let fields = lastWinsByUTF8(m.fields.pairs)
            if let type = fields.first(where: { $0.key == "__type__" })?.value {
                try checkTyped(fields, type: type, path: path)
                return
            }
            for (k, e) in fields {
                if ResourcePath.isReserved(k) { throw EmberError.invalidArgument("field name '\(k)' is reserved.") }
                try check(e, path: path + "." + k, inArray: false, depth: depth + 1)
            }
        default:
            return
        }
    }

    /// A map with `__type__`: only a vector is known.
    private static func checkTyped(_ fields: [(key: String, value: WireValue)], type: WireValue, path: String) throws {
        guard case .stringValue("__vector__")? = type.valueType else {
            throw EmberError.invalidArgument("Property \(path) contains an invalid nested entity.")
        }
        guard fields.count <= 2, fields.allSatisfy({ $0.key == "__type__" || $0.key == "value" }) else {
            throw EmberError.invalidArgument("Vector Value map has extraneous entries.")
        }
        let elements: [WireValue]
        switch fields.first(where: { $0.key == "value" })?.value.valueType {
        case .arrayValue(let a)?: elements = a.values
        case nil: elements = []
        default: throw EmberError.invalidArgument("Vector must only contain values of type 'double'")
        }
        guard !elements.isEmpty else { throw EmberError.invalidArgument("Cannot have a zero length vector.") }
        for e in elements {
            guard case .doubleValue? = e.valueType else {
                throw EmberError.invalidArgument("Vector must only contain values of type 'double'")
            }
        }
    }

    /// Checks a field path a write names (an update mask's, a transform's).
    public static func check(fieldPath s: String) throws {
        // Every reserved name has '_' in the text, written or escaped (`\_`), so a path without
        // one is not parsed (the common case).
        guard s.contains("_") else { return }
        let segments = (try? FieldPath(parsing: s))?.segments ?? []
        if segments.contains(where: ResourcePath.isReserved) {
            throw EmberError.invalidArgument("Invalid reserved name in field path \(s)")
        }
    }

    /// Checks the ids of a path below the documents root (collection ids at even positions).
    public static func check(ids segments: [String]) throws {
        for (i, id) in segments.enumerated() where ResourcePath.isReserved(id) {
            if i % 2 == 0 { throw EmberError.invalidArgument("Collection id \"\(id)\" is invalid because it is reserved.") }
            throw EmberError.invalidArgument("Resource id \"\(id)\" is invalid because it is reserved.")
        }
    }
}

// Written by hand beside the generated code (`make proto` replaces only *.pb.swift and
// *.grpc.swift).

/// Responsible for: a wire map's fields (`repeated MapField`, the entries a `map<string, Value>` is
/// on the wire: see proto/ember_firestore_v1.proto) made from a key and a value, and read back as
/// (key, value) pairs in the order sent, a key possibly repeated (callers keep the last:
/// EmberModel's `lastWinsByUTF8`).
extension Google_Firestore_V1_MapField {
    public init(key: String, value: Google_Firestore_V1_Value) {
        self.init()
        self.key = key
        self.value = value
    }
}

extension Array where Element == Google_Firestore_V1_MapField {
    /// The entries as sent: in order, repeats kept.
    public var pairs: [(key: String, value: Google_Firestore_V1_Value)] { map { (key: $0.key, value: $0.value) } }
}

// Responsible for: the benchmark's document shape, shared with the peers:
// {"name": str, "age": int, "state": one of 10, "group": 0..99, "score": float}.
import EmberModel

let states = ["AZ", "CA", "CO", "FL", "GA", "IL", "NY", "OR", "TX", "WA"]

/// Document `i`: state `states[i % 10]` (so a tenth are "CA"), group `i % 100`; `age` carries
/// `seq`, the number a listener callback checks to know which write it sees.
func benchDoc(_ i: Int, seq: Int, state: String? = nil) -> MapValue {
    MapValue([
        "name": .string("user\(i)"),
        "age": .int(Int64(seq)),
        "state": .string(state ?? states[i % states.count]),
        "group": .int(Int64(i % 100)),
        "score": .double(Double(i % 1000) * 0.5),
    ])
}

/// `collection/d<i>` without parsing (the collection and id are valid by construction).
func benchKey(_ collection: String, _ i: Int) -> DocumentKey {
    DocumentKey(unchecked: ResourcePath(segments: [collection, "d\(i)"]))
}

/// The `age` field of a document, which the bench uses as a sequence number.
@inline(__always)
func seqOf(_ doc: Document) -> Int? {
    if case .int(let a)? = doc.data["age"] { return Int(a) }
    return nil
}

import EmberFirestoreProto
import EmberModel
import EmberWire

/// Responsible for: RunAggregationQuery's count, sum and avg over a query's result, as
/// Firestore computes them: count (capped by `up_to`); sum of the numeric values only, an integer
/// while every term is one and it does not overflow, else a double; avg as a double, null when no
/// document has a number there. An alias left empty is `field_N` (N from 1). The list is checked
/// by AggregationRules; with sum/avg, the query it runs over (WireQuery) holds only the documents
/// having their fields, ordered by them, as Firestore reads them from the fields' index.
struct Aggregations: Sendable {
    enum Kind: Sendable { case count(upTo: Int64?), sum(FieldPath), avg(FieldPath) }
    let items: [(alias: String, kind: Kind)]

    init(_ wire: [WireAggregation]) throws {
        _ = try AggregationRules.fields(wire)
        items = try wire.enumerated().map { i, a in
            let alias = AggregationRules.alias(a, at: i)
            switch a.operator {
            case .count(let c)?: return (alias, .count(upTo: c.hasUpTo ? c.upTo.value : nil))
            case .sum(let s)?: return (alias, .sum(try AggregationRules.field(s.field.fieldPath)))
            case .avg(let s)?: return (alias, .avg(try AggregationRules.field(s.field.fieldPath)))
            case nil: throw EmberError.invalidArgument("Aggregation '\(alias)' has no operator")
            }
        }
    }

    /// One result field per alias (aliases are distinct by their UTF-8 bytes: AggregationRules).
    func evaluate<C: Collection>(_ docs: C, codec: WireCodec) -> [Google_Firestore_V1_MapField] where C.Element == Document {
        var out: [Google_Firestore_V1_MapField] = []
        func put(_ alias: String, _ v: Value) { out.append(.init(key: alias, value: codec.wire(v))) }
        for (alias, kind) in items {
            switch kind {
            case .count(let upTo):
                let n = Int64(docs.count)
                put(alias, .int(upTo.map { min($0, n) } ?? n))
            case .sum(let f):
                var intSum: Int64 = 0
                var dbl = 0.0
                var isDouble = false
                for d in docs {
                    switch d.data.value(at: f) {
                    case .int(let i)?:
                        if isDouble { dbl += Double(i) } else {
                            let (r, o) = intSum.addingReportingOverflow(i)
                            if o { isDouble = true; dbl = Double(intSum) + Double(i) } else { intSum = r }
                        }
                    case .double(let x)?:
                        if !isDouble { isDouble = true; dbl = Double(intSum) }
                        dbl += x
                    default: break
                    }
                }
                put(alias, isDouble ? .double(dbl) : .int(intSum))
            case .avg(let f):
                var total = 0.0
                var n = 0
                for d in docs {
                    switch d.data.value(at: f) {
                    case .int(let i)?: total += Double(i); n += 1
                    case .double(let x)?: total += x; n += 1
                    default: break
                    }
                }
                put(alias, n == 0 ? .null : .double(total / Double(n)))
            }
        }
        return out
    }
}

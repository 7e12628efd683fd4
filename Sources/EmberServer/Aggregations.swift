import EmberFirestoreProto
import EmberModel

/// Responsible for: RunAggregationQuery's count, sum and avg over a query's result, as
/// Firestore computes them: count (capped by `up_to`); sum of the numeric values only, an integer
/// while every term is one and it does not overflow, else a double; avg as a double, null when no
/// document has a number there. An alias left empty is `field_N` (N from 1).
struct Aggregations: Sendable {
    enum Kind: Sendable { case count(upTo: Int64?), sum(FieldPath), avg(FieldPath) }
    let items: [(alias: String, kind: Kind)]

    init(_ wire: [Google_Firestore_V1_StructuredAggregationQuery.Aggregation], codec: WireCodec) throws {
        guard !wire.isEmpty else { throw EmberError.invalidArgument("An aggregation query needs at least one aggregation") }
        guard wire.count <= 5 else { throw EmberError.invalidArgument("An aggregation query takes at most 5 aggregations") }
        var items: [(String, Kind)] = []
        var aliases = Set<String>()
        for (i, a) in wire.enumerated() {
            let alias = a.alias.isEmpty ? "field_\(i + 1)" : a.alias
            guard aliases.insert(alias).inserted else { throw EmberError.invalidArgument("Duplicate alias '\(alias)'") }
            switch a.operator {
            case .count(let c)?:
                if c.hasUpTo, c.upTo.value <= 0 { throw EmberError.invalidArgument("up_to must be positive") }
                items.append((alias, .count(upTo: c.hasUpTo ? c.upTo.value : nil)))
            case .sum(let s)?: items.append((alias, .sum(try codec.fieldPath(s.field.fieldPath))))
            case .avg(let s)?: items.append((alias, .avg(try codec.fieldPath(s.field.fieldPath))))
            case nil: throw EmberError.invalidArgument("Aggregation '\(alias)' has no operator")
            }
        }
        self.items = items
    }

    func evaluate<C: Collection>(_ docs: C, codec: WireCodec) -> [String: WireValue] where C.Element == Document {
        var out: [String: WireValue] = [:]
        for (alias, kind) in items {
            switch kind {
            case .count(let upTo):
                let n = Int64(docs.count)
                out[alias] = codec.wire(.int(upTo.map { min($0, n) } ?? n))
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
                out[alias] = codec.wire(isDouble ? .double(dbl) : .int(intSum))
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
                out[alias] = codec.wire(n == 0 ? .null : .double(total / Double(n)))
            }
        }
        return out
    }
}

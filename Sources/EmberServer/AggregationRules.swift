import EmberFirestoreProto
import EmberModel

typealias WireAggregation = Google_Firestore_V1_StructuredAggregationQuery.Aggregation

/// Responsible for: the Firestore backend's rules on an aggregation query, with its messages
/// (WireQueryRules runs them at their place among the query's rules):
/// - the list: one to five aggregations; aliases not reserved (`__x__`) and distinct (an empty
///   alias is `field_N`, N from 1); sum/avg of a valid path, not `__name__`; count's `up_to` not
///   negative;
/// - the index: sum and avg read the field's index, so their fields come after the query's
///   orders (explicit, then inequality fields) and before `__name__`; a query already ordered
///   by `__name__` before them (explicitly, or by an inequality on it) is refused, as the
///   emulator refuses it.
///
///     let fields = try AggregationRules.fields(aq.aggregations)   // sorted sum/avg fields
enum AggregationRules {
    static let maxAggregations = 5

    static func alias(_ a: WireAggregation, at index: Int) -> String {
        a.alias.isEmpty ? "field_\(index + 1)" : a.alias
    }

    /// Checks the list; returns the distinct sum/avg fields, sorted.
    static func fields(_ wire: [WireAggregation]) throws -> [FieldPath] {
        guard !wire.isEmpty else { throw EmberError.invalidArgument("Aggregations can not be empty.") }
        guard wire.count <= maxAggregations else { throw EmberError.invalidArgument("An aggregation query takes at most \(maxAggregations) aggregations") }
        var fields = Set<FieldPath>()
        for (i, a) in wire.enumerated() {
            let name = alias(a, at: i)
            if WirePropertyPath.isReserved(name) { throw EmberError.invalidArgument("The property.name \"\(name)\" is reserved.") }
            switch a.operator {
            case .count(let c)?:
                if c.hasUpTo, c.upTo.value < 0 {
                    throw EmberError.invalidArgument("The `up_to` value in a COUNT aggregation must be greater than or equal to zero.")
                }
            case .sum(let s)?: fields.insert(try field(s.field.fieldPath))
            case .avg(let s)?: fields.insert(try field(s.field.fieldPath))
            case nil: throw EmberError.invalidArgument("Aggregation '\(name)' has no operator")
            }
        }
        var aliases = Set<UTF8String>()   // by bytes: "\u{E9}" and "e\u{301}" are two aliases
        for (i, a) in wire.enumerated() {
            let name = alias(a, at: i)
            guard aliases.insert(UTF8String(name)).inserted else { throw EmberError.invalidArgument("Aggregation aliases contain duplicate alias: \(name).") }
        }
        return fields.sorted { $0.compare($1) < 0 }
    }

    static func field(_ path: String) throws -> FieldPath {
        let f = try WirePropertyPath.parse(path)
        if f.isDocumentId { throw EmberError.invalidArgument("Aggregations are not supported for the property: __key__") }
        return f
    }

    /// `orderBy`: the explicit order-bys; `inequalities`: the fields of inequality filters.
    static func checkIndex(_ fields: [FieldPath], orderBy: [FieldPath], inequalities: [FieldPath]) throws {
        guard !fields.isEmpty else { return }
        var prefix = orderBy
        for f in Set(inequalities).sorted(by: { $0.compare($1) < 0 }) where !prefix.contains(f) { prefix.append(f) }
        guard let key = prefix.firstIndex(where: { $0.isDocumentId }) else { return }
        let missing = fields.filter { !prefix[..<key].contains($0) }
        if !missing.isEmpty {
            throw EmberError.invalidArgument("This query requires an index that has fields [\(missing.map { $0.canonical }.joined(separator: ", "))] after __name__ and Firestore does not currently support such an index. Please try the query again with additional ordering on those fields.")
        }
    }
}

import EmberFirestoreProto
import EmberModel
import EmberWire
@testable import EmberServer
import XCTest

/// Wire queries built in a line, for the tests of WireQueryRules, AggregationRules and WireQuery.
enum W {
    static let parent = "projects/p/databases/(default)/documents"
    static let db = try! DatabaseName(project: "p", database: "(default)")

    static func int(_ i: Int64) -> WireValue { var v = WireValue(); v.integerValue = i; return v }
    static func dbl(_ d: Double) -> WireValue { var v = WireValue(); v.doubleValue = d; return v }
    static func str(_ s: String) -> WireValue { var v = WireValue(); v.stringValue = s; return v }
    static func ref(_ path: String) -> WireValue { var v = WireValue(); v.referenceValue = parent + "/" + path; return v }
    static func list(_ values: [WireValue]) -> WireValue {
        var v = WireValue()
        v.arrayValue.values = values
        return v
    }
    static func ints(_ r: Range<Int64>) -> WireValue { list(r.map(int)) }

    static func field(_ path: String, _ op: StructuredQuery.FieldFilter.Operator, _ v: WireValue) -> StructuredQuery.Filter {
        var f = StructuredQuery.Filter()
        f.fieldFilter.field.fieldPath = path
        f.fieldFilter.op = op
        f.fieldFilter.value = v
        return f
    }

    static func unary(_ path: String, _ op: StructuredQuery.UnaryFilter.Operator) -> StructuredQuery.Filter {
        var f = StructuredQuery.Filter()
        f.unaryFilter.field.fieldPath = path
        f.unaryFilter.op = op
        return f
    }

    static func and(_ fs: StructuredQuery.Filter...) -> StructuredQuery.Filter { composite(.and, fs) }
    static func or(_ fs: StructuredQuery.Filter...) -> StructuredQuery.Filter { composite(.or, fs) }
    static func composite(_ op: StructuredQuery.CompositeFilter.Operator, _ fs: [StructuredQuery.Filter]) -> StructuredQuery.Filter {
        var f = StructuredQuery.Filter()
        f.compositeFilter.op = op
        f.compositeFilter.filters = fs
        return f
    }

    static func query(_ filter: StructuredQuery.Filter? = nil, order: [String] = [], descending: Bool = false,
                      limit: Int32? = nil, offset: Int32 = 0, collection: String = "c") -> StructuredQuery {
        var sq = StructuredQuery()
        var from = StructuredQuery.CollectionSelector()
        from.collectionID = collection
        sq.from = [from]
        if let filter { sq.where = filter }
        sq.orderBy = order.map { path in
            var o = StructuredQuery.Order()
            o.field.fieldPath = path
            o.direction = descending ? .descending : .ascending
            return o
        }
        if let limit { sq.limit.value = limit }
        sq.offset = offset
        return sq
    }

    static func cursor(_ values: WireValue...) -> Google_Firestore_V1_Cursor {
        var c = Google_Firestore_V1_Cursor()
        c.values = values
        c.before = true
        return c
    }

    static func sum(_ path: String, _ alias: String) -> WireAggregation {
        var a = WireAggregation()
        a.alias = alias
        a.sum.field.fieldPath = path
        return a
    }

    static func avg(_ path: String, _ alias: String) -> WireAggregation {
        var a = WireAggregation()
        a.alias = alias
        a.avg.field.fieldPath = path
        return a
    }

    static func count(_ alias: String, upTo: Int64? = nil) -> WireAggregation {
        var a = WireAggregation()
        a.alias = alias
        a.count = .init()
        if let upTo { a.count.upTo.value = upTo }
        return a
    }

    static func doc(_ id: String, _ fields: [String: Value], collection: String = "c") -> Document {
        Document(key: db.key(ResourcePath(segments: [collection, id])), data: MapValue(fields), version: 1, createTime: 1, updateTime: 1)
    }

    /// The message a wire query is refused with, nil when it is accepted.
    static func refusal(_ sq: StructuredQuery, parent: String = parent, aggregations: [WireAggregation]? = nil) -> String? {
        do {
            _ = try WireQuery(parent: parent, structured: sq, aggregations: aggregations)
            return nil
        } catch let e as EmberError {
            XCTAssertEqual(e.code, .invalidArgument, e.message)
            return e.message
        } catch {
            return "\(error)"
        }
    }
}

/// A wire map's fields read and written by name in tests (the generated type is a list of
/// entries: see MapField in proto/ember_firestore_v1.proto).
extension Array where Element == Google_Firestore_V1_MapField {
    subscript(name: String) -> Google_Firestore_V1_Value? {
        get { last { $0.key.utf8.elementsEqual(name.utf8) }?.value }
        set {
            removeAll { $0.key.utf8.elementsEqual(name.utf8) }
            if let newValue { append(.init(key: name, value: newValue)) }
        }
    }

    /// The entries of `d` (in no particular order).
    init(_ d: [String: Google_Firestore_V1_Value]) {
        self = []
        for (k, v) in d { self[k] = v }
    }
}

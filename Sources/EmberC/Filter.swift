import CEmberABI
import EmberModel

// Responsible for: ember_filter, a field comparison or an AND/OR of filters, kept as given and
// checked against a query when added to it (document-id operands depend on the query's path).

indirect enum RawFilter {
    case field(FieldPath, FilterOperator, Value)
    case composite(CompositeFilter.Op, [RawFilter])

    /// Levels of and/or above a field filter (a field filter: 1); never more than `maxDepth`.
    var depth: Int {
        switch self {
        case .field: return 1
        case .composite(_, let parts): return 1 + (parts.map(\.depth).max() ?? 0)
        }
    }
    static let maxDepth = 100

    /// The model filter for `q`: document-id strings become references, values are validated.
    func build(for q: Query) throws -> Filter {
        switch self {
        case .field(let path, let op, let value):
            func operand(_ v: Value) throws -> Value {
                guard path.isDocumentId, case .string(let s) = v else { return v }
                if q.isCollectionGroupQuery {
                    guard let p = try? ResourcePath(parsing: s), p.isDocumentPath else {
                        throw invalid("Invalid query. When querying a collection group by documentId(), the value provided must result in a valid document path, but '\(s)' is not because it has an odd number of segments.")
                    }
                    return .reference(DocumentKey(unchecked: p))
                }
                if s.isEmpty || s.utf8.contains(0x2F) {
                    throw invalid("Invalid query. When querying a collection by documentId(), you must provide a plain document ID, but '\(s)' contains a '/' character or is empty.")
                }
                try ResourcePath.validateSegment(s)
                return .reference(DocumentKey(unchecked: q.path.appending(s)))
            }
            var v = value
            if op.takesArray {
                guard case .array(let a) = value else { throw invalid("Invalid query. A non-empty array is required for '\(op.rawValue)' filters.") }
                v = .array(try a.map(operand))
            } else {
                v = try operand(value)
            }
            // in / not-in / array-contains-any list values, each of which may be an array.
            if op.takesArray, case .array(let elements) = v {
                for e in elements { try DocumentLimits.validate(value: e) }
            } else {
                try DocumentLimits.validate(value: v)
            }
            return .field(FieldFilter(field: path, op: op, value: v))
        case .composite(let op, let fs):
            return .composite(CompositeFilter(op: op, filters: try fs.map { try $0.build(for: q) }))
        }
    }
}

final class CFilter: Counted {
    let raw: RawFilter
    init(_ raw: RawFilter) { self.raw = raw }
}

let operators: [FilterOperator] = [.lessThan, .lessThanOrEqual, .equal, .notEqual, .greaterThan, .greaterThanOrEqual,
                                   .arrayContains, .arrayContainsAny, .in, .notIn]

func filterOperator(_ op: Int32) throws -> FilterOperator {
    guard op >= 0, Int(op) < operators.count else { throw invalid("Unknown operator \(op): use EMBER_OP_*") }
    return operators[Int(op)]
}

func rawField(_ field: UnsafePointer<CChar>?, _ op: Int32, _ format: Int32, _ value: UnsafeRawPointer?, _ len: Int) throws -> RawFilter {
    let path = try parseFieldPath(field)
    let o = try filterOperator(op)
    return .field(path, o, try decodeValue(value, len, format, "value"))
}

@_cdecl("ember_filter_field")
public func ember_filter_field(_ field: UnsafePointer<CChar>?, _ op: Int32, _ format: Int32, _ value: UnsafeRawPointer?,
                               _ len: Int, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) { retained(CFilter(try rawField(field, op, format, value, len))) }
}

func composite(_ op: CompositeFilter.Op, _ filters: UnsafePointer<OpaquePointer?>?, _ n: Int) throws -> OpaquePointer {
    guard n >= 0 else { throw invalid("n \(UInt(bitPattern: n)) is larger than any array") }
    if n > 0 && filters == nil { throw invalid("filters is NULL but n is \(n)") }
    let parts = try (0..<n).map { try object(filters![$0], CFilter.self, "filters[i]").raw }
    // Bounded so that building, validating and freeing a filter never recurses past the stack.
    if let deepest = parts.map(\.depth).max(), deepest >= RawFilter.maxDepth {
        throw invalid("Filters nest at most \(RawFilter.maxDepth) deep (an and/or inside an and/or ...)")
    }
    return retained(CFilter(.composite(op, parts)))
}

@_cdecl("ember_filter_and")
public func ember_filter_and(_ filters: UnsafePointer<OpaquePointer?>?, _ n: Int, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) { try composite(.and, filters, n) }
}

@_cdecl("ember_filter_or")
public func ember_filter_or(_ filters: UnsafePointer<OpaquePointer?>?, _ n: Int, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) { try composite(.or, filters, n) }
}

@_cdecl("ember_filter_release")
public func ember_filter_release(_ f: OpaquePointer?) {
    guard let f else { return }
    Unmanaged<CFilter>.fromOpaque(UnsafeRawPointer(f)).release()
}

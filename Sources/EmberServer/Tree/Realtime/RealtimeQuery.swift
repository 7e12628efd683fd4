import EmberModel

extension TreeRESTQuery {
    /// A realtime listen's or get's query object (firebase-js-sdk `QueryParams.ts`): `i` the index
    /// (".key", ".value", a child path; none: priorities), `sp`/`sn`/`sin` the start value, key
    /// and inclusiveness, `ep`/`en`/`ein` the end, `l` the limit from `vf` ("l" first, "r"
    /// last). Refused (as the REST parameters are) when it makes no query.
    static func wire(_ q: MapValue) throws -> TreeRESTQuery? {
        var params: [String: String] = [:]
        func json(_ v: Value) -> String { ValueJSON.render(v, plain: true) }
        let index = q["i"]
        switch index {
        case nil: params["orderBy"] = "\"$priority\""
        case .string(".key")?: params["orderBy"] = "\"$key\""
        case .string(".value")?: params["orderBy"] = "\"$value\""
        case .string(let path)?: params["orderBy"] = json(.string(path))
        default: throw EmberError.invalidArgument("a query's index ('i') must be a string")
        }
        func bound(_ value: Value?, _ name: Value?) -> String? {
            guard let value else { return nil }
            if case .string(let k)? = name { return json(value) + "," + json(.string(k)) }
            return json(value)
        }
        let inclusiveStart = q["sin"].map { if case .bool(let b) = $0 { return b }; return true } ?? true
        let inclusiveEnd = q["ein"].map { if case .bool(let b) = $0 { return b }; return true } ?? true
        if let s = bound(q["sp"], q["sn"]) { params[inclusiveStart ? "startAt" : "startAfter"] = s }
        if let e = bound(q["ep"], q["en"]) { params[inclusiveEnd ? "endAt" : "endBefore"] = e }
        if case .int(let n)? = q["l"] {
            let last: Bool
            if case .string("r")? = q["vf"] { last = true } else { last = false }
            params[last ? "limitToLast" : "limitToFirst"] = String(n)
        }
        // Only an order with no bound or limit: the whole location (firebase sends it untagged).
        if params.count == 1 && index == nil { return nil }
        do { return try parse(params) } catch let e as TreeRESTError { throw EmberError.invalidArgument(e.message) }
    }
}

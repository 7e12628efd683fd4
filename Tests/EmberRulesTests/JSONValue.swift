// Test support: plain JSON (as the differential cases file holds it) to EmberModel values.
// Integers stay ints and numbers written with a fraction or exponent (2.0 too) become doubles,
// as the recorder sent them: the file is read with JSONSerialization, whose numbers keep that
// difference (JSONDecoder would read 2.0 as an integer).
import EmberModel
import Foundation

enum JSONValue {
    case null, bool(Bool), int(Int64), double(Double), string(String), array([JSONValue]), object([String: JSONValue])

    /// A value of JSONSerialization's output.
    init(_ any: Any) throws {
        switch any {
        case is NSNull: self = .null
        case let s as String: self = .string(s)
        case let a as [Any]: self = .array(try a.map(JSONValue.init))
        case let o as [String: Any]: self = .object(try o.mapValues(JSONValue.init))
        case let n as NSNumber:
            switch String(cString: n.objCType) {
            case "c", "B": self = .bool(n.boolValue)
            case "d", "f": self = .double(n.doubleValue)
            default: self = .int(n.int64Value)
            }
        default: throw CocoaError(.coderReadCorrupt)
        }
    }

    static func parse(_ data: Data) throws -> JSONValue { try JSONValue(JSONSerialization.jsonObject(with: data)) }

    var value: Value {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(\.value))
        case .object(let o): return .map(MapValue(o.mapValues(\.value)))
        }
    }

    var map: MapValue? { if case .map(let m) = value { return m }; return nil }

    subscript(_ key: String) -> JSONValue? { if case .object(let o) = self { return o[key] }; return nil }
    var string: String? { if case .string(let s) = self { return s }; return nil }
    var array: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    var int: Int? { if case .int(let i) = self { return Int(i) }; return nil }
    var isNull: Bool { if case .null = self { return true }; return false }
}

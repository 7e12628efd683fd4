import EmberModel
import JWTKit

/// Responsible for: a JWT payload as every claim it holds (strings, numbers, booleans, nulls,
/// lists and maps, nested at most `maxDepth` deep), for `request.auth.token`. The signature is
/// checked by jwt-kit before this is trusted; the time, audience and issuer claims by
/// `TokenVerifier` and `AccessControl`.
struct TokenClaims: JWTPayload {
    static let maxDepth = 16
    let claims: MapValue

    init(from decoder: any Decoder) throws {
        guard case .map(let m) = try TokenClaims.decode(decoder, depth: 0) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "the payload is not a JSON object"))
        }
        claims = m
    }

    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(claims, .init(codingPath: [], debugDescription: "Ember only verifies tokens"))
    }

    /// Checked by TokenVerifier, with its leeway.
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static func decode(_ decoder: any Decoder, depth: Int) throws -> Value {
        guard depth < maxDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "claims nested too deeply"))
        }
        if let object = try? decoder.container(keyedBy: Key.self) {
            var m: [String: Value] = [:]
            for k in object.allKeys { m[k.stringValue] = try decode(object.superDecoder(forKey: k), depth: depth + 1) }
            return .map(MapValue(m))
        }
        if var list = try? decoder.unkeyedContainer() {
            var a: [Value] = []
            while !list.isAtEnd { a.append(try decode(try list.superDecoder(), depth: depth + 1)) }
            return .array(a)
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { return .null }
        if let b = try? single.decode(Bool.self) { return .bool(b) }
        if let i = try? single.decode(Int64.self) { return .int(i) }
        if let d = try? single.decode(Double.self) { return .double(d) }
        return .string(try single.decode(String.self))
    }

    func string(_ name: String) -> String? {
        if case .string(let s)? = claims[name] { return s }
        return nil
    }

    /// A NumericDate claim (seconds since 1970), nil when absent or not a number.
    func seconds(_ name: String) -> Double? {
        switch claims[name] {
        case .int(let i)?: return Double(i)
        case .double(let d)?: return d
        default: return nil
        }
    }

    /// `aud`, a string or a list of strings.
    var audience: [String] {
        switch claims["aud"] {
        case .string(let s)?: return [s]
        case .array(let a)?: return a.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
        default: return []
        }
    }
}

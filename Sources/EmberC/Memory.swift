import CEmberABI
import EmberModel
#if canImport(Glibc)
import Glibc
#endif

// Responsible for: the library-wide shims: version, error-code names, buffers, the instance
// counter, value conversion between the two formats, path checks and auto ids.

let versionNumber: Int32 = 6000
// C strings made once and never written or freed: the C caller only reads them.
nonisolated(unsafe) let versionString: UnsafeMutablePointer<CChar> = cCopy("0.6.0")
nonisolated(unsafe) let codeNames: [UnsafeMutablePointer<CChar>] = ErrorCode.allCases.map { cCopy($0.name) }

@_cdecl("ember_libversion_number")
public func ember_libversion_number() -> Int32 { versionNumber }

@_cdecl("ember_libversion")
public func ember_libversion() -> UnsafePointer<CChar> { UnsafePointer(versionString) }

@_cdecl("ember_error_code_name")
public func ember_error_code_name(_ code: Int32) -> UnsafePointer<CChar> {
    UnsafePointer(codeNames[Int(ErrorCode(rawValue: code)?.rawValue ?? ErrorCode.unknown.rawValue)])
}

@_cdecl("ember_free")
public func ember_free(_ p: UnsafeMutableRawPointer?) { free(p) }

@_cdecl("ember_instance_count")
public func ember_instance_count() -> Int64 { Int64(liveObjects.load(ordering: .relaxed)) }

@_cdecl("ember_value_convert")
public func ember_value_convert(_ data: UnsafeRawPointer?, _ len: Int, _ from: Int32, _ to: Int32,
                                _ outLen: UnsafeMutablePointer<Int>?, _ err: UnsafeMutablePointer<ember_error>?) -> UnsafeMutablePointer<CChar>? {
    wrap(err, nil) {
        let v = try decodeValue(data, len, from, "data")
        return try encode(v, to, outLen)
    }
}

@_cdecl("ember_path_kind")
public func ember_path_kind(_ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> Int32 {
    wrap(err, Int32(EMBER_PATH_INVALID)) {
        if let path, let n = fastSegmentCount(path) { return n % 2 == 0 ? Int32(EMBER_PATH_DOCUMENT) : Int32(EMBER_PATH_COLLECTION) }
        let p = try ResourcePath(parsing: try text(path, "path"))
        return p.isDocumentPath ? Int32(EMBER_PATH_DOCUMENT) : Int32(EMBER_PATH_COLLECTION)
    }
}

let autoIdAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

@_cdecl("ember_auto_id")
public func ember_auto_id(_ out: UnsafeMutablePointer<CChar>?) {
    guard let out else { return }
    var g = SystemRandomNumberGenerator()
    for i in 0..<20 { out[i] = CChar(bitPattern: autoIdAlphabet[Int(g.next(upperBound: UInt64(autoIdAlphabet.count)))]) }
    out[20] = 0
}

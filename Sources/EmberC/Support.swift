import CEmberABI
import EmberModel
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// Responsible for: what every shim shares: the one helper that turns Swift errors into an
// `ember_error` (realm's wrap_err), the live-object counter, C strings and buffers in and out.
// Nothing here is exported: only the @_cdecl functions of this target are.

/// Runs `body`; on success sets err->code = EMBER_OK, on a thrown error fills `err` and returns
/// `failure`. Every @_cdecl body goes through it, so no Swift error crosses the ABI.
@inline(__always)
func wrap<T>(_ err: UnsafeMutablePointer<ember_error>?, _ failure: T, _ body: () throws -> T) -> T {
    do {
        let r = try body()
        if let err { err.pointee.code = 0; err.pointee.message.0 = 0 }
        return r
    } catch let e as EmberError {
        fill(err, e.code.rawValue, e.message)
    } catch {
        fill(err, ErrorCode.internal.rawValue, "\(error)")
    }
    return failure
}

/// Writes a code and message (truncated on a UTF-8 boundary, NUL-terminated) into `err`.
func fill(_ err: UnsafeMutablePointer<ember_error>?, _ code: Int32, _ message: String) {
    guard let err else { return }
    err.pointee.code = code
    withUnsafeMutableBytes(of: &err.pointee.message) { raw in
        var n = 0
        let cap = raw.count - 1
        var bytes = message.utf8.makeIterator()
        while n < cap, let b = bytes.next() { raw[n] = b; n += 1 }
        // Cut inside a character (the first byte that did not fit continues it): drop the bytes
        // of that character already written, its continuation bytes and then its lead byte.
        if n == cap, let next = bytes.next(), next & 0xC0 == 0x80 {
            while n > 0 && raw[n - 1] & 0xC0 == 0x80 { n -= 1 }
            if n > 0 { n -= 1 }
        }
        raw[n] = 0
    }
}

func fill(_ err: UnsafeMutablePointer<ember_error>?, _ e: EmberError) { fill(err, e.code.rawValue, e.message) }

/// An `ember_error` value for a callback (`nil` is success).
func errorValue(_ e: EmberError?) -> ember_error {
    var out = ember_error()
    if let e { fill(&out, e) } else { out.code = 0; out.message.0 = 0 }
    return out
}

/// Reads a caller's ember_error back (a transaction function's reason for aborting).
func readError(_ e: ember_error) -> EmberError {
    var copy = e
    let message: String = withUnsafeBytes(of: &copy.message) { raw in
        let n = raw.firstIndex(of: 0) ?? raw.count
        return String(decoding: raw[..<n], as: UTF8.self)
    }
    return EmberError(ErrorCode(rawValue: e.code) ?? .unknown, message)
}

func invalid(_ message: String) -> EmberError { EmberError.invalidArgument(message) }

// MARK: live objects

let liveObjects = Atomic<Int>(0)

/// Base of every object handed to C: counted by ember_instance_count().
class Counted {
    init() { liveObjects.add(1, ordering: .relaxed) }
    deinit { liveObjects.subtract(1, ordering: .relaxed) }
}

@inline(__always) func retained<T: AnyObject>(_ o: T) -> OpaquePointer { OpaquePointer(Unmanaged.passRetained(o).toOpaque()) }
@inline(__always) func unretained<T: AnyObject>(_ o: T) -> OpaquePointer { OpaquePointer(Unmanaged.passUnretained(o).toOpaque()) }

/// The object behind a handle, or invalid-argument when the handle is NULL.
@inline(__always)
func object<T: AnyObject>(_ p: OpaquePointer?, _ type: T.Type, _ what: StaticString) throws -> T {
    guard let p else { throw invalid("\(what) is NULL") }
    return Unmanaged<T>.fromOpaque(UnsafeRawPointer(p)).takeUnretainedValue()
}

// MARK: input

/// A C string as a Swift string: NULL and invalid UTF-8 are invalid-argument errors.
func text(_ p: UnsafePointer<CChar>?, _ what: String) throws -> String {
    guard let p else { throw invalid("\(what) is NULL") }
    guard let s = String(validatingCString: p) else { throw invalid("\(what) is not valid UTF-8") }
    return s
}

let EMBER_NTS_VALUE = Int(bitPattern: UInt.max)

/// One value from a caller's buffer in `format`.
func decodeValue(_ p: UnsafeRawPointer?, _ len: Int, _ format: Int32, _ what: String) throws -> Value {
    guard let p else { throw invalid("\(what) is NULL") }
    var n = len
    if len == EMBER_NTS_VALUE {
        guard format == Int32(EMBER_FORMAT_JSON) else { throw invalid("\(what): EMBER_NTS is only for JSON text") }
        n = strlen(p.assumingMemoryBound(to: CChar.self))
    }
    // A size_t past what a buffer can hold (the caller's negative int, say) arrives negative here.
    guard n >= 0 else { throw invalid("\(what): length \(UInt(bitPattern: n)) is larger than any buffer") }
    let buf = UnsafeBufferPointer(start: p.assumingMemoryBound(to: UInt8.self), count: n)
    switch format {
    case Int32(EMBER_FORMAT_MSGPACK):
        return try ValueMessagePack.decode(buf)
    case Int32(EMBER_FORMAT_JSON):
        guard let s = String(validating: buf, as: UTF8.self) else { throw invalid("\(what) is not valid UTF-8") }
        return try ValueJSON.parse(s)
    default:
        throw invalid("Unknown format \(format): use EMBER_FORMAT_MSGPACK (0) or EMBER_FORMAT_JSON (1)")
    }
}

/// A map from the caller (NULL with length 0 is the empty map).
func decodeMap(_ p: UnsafeRawPointer?, _ len: Int, _ format: Int32, _ what: String) throws -> MapValue {
    if p == nil && len == 0 { return MapValue() }
    guard case .map(let m) = try decodeValue(p, len, format, what) else { throw invalid("\(what) must be a map") }
    return m
}

/// Encodes `v` into a malloc'ed, NUL-terminated buffer the caller frees with ember_free.
func encode(_ v: Value, _ format: Int32, _ outLen: UnsafeMutablePointer<Int>?) throws -> UnsafeMutablePointer<CChar> {
    switch format {
    case Int32(EMBER_FORMAT_MSGPACK):
        return try output(ValueMessagePack.encode(v), outLen)
    case Int32(EMBER_FORMAT_JSON):
        var s = ValueJSON.render(v)
        return try s.withUTF8 { try output($0, outLen) }
    default:
        throw invalid("Unknown format \(format): use EMBER_FORMAT_MSGPACK (0) or EMBER_FORMAT_JSON (1)")
    }
}

func output<C: Collection>(_ bytes: C, _ outLen: UnsafeMutablePointer<Int>?) throws -> UnsafeMutablePointer<CChar> where C.Element == UInt8 {
    let n = bytes.count
    guard let raw = malloc(n + 1) else { throw EmberError(.resourceExhausted, "Out of memory") }
    let p = raw.assumingMemoryBound(to: UInt8.self)
    let copied: Void? = bytes.withContiguousStorageIfAvailable { b in
        if n > 0 { memcpy(p, b.baseAddress!, n) }
    }
    if copied == nil {
        var i = 0
        for b in bytes { p[i] = b; i += 1 }
    }
    p[n] = 0
    outLen?.pointee = n
    return raw.assumingMemoryBound(to: CChar.self)
}

/// A malloc'ed copy of `s` with a NUL (freed by its owner with free()).
func cCopy(_ s: String) -> UnsafeMutablePointer<CChar> {
    var s = s
    return s.withUTF8 { u in
        let p = malloc(u.count + 1)!.assumingMemoryBound(to: UInt8.self)
        if u.count > 0 { memcpy(p, u.baseAddress!, u.count) }
        p[u.count] = 0
        return UnsafeMutableRawPointer(p).assumingMemoryBound(to: CChar.self)
    }
}

func parseFieldPath(_ p: UnsafePointer<CChar>?, _ what: String = "field_path") throws -> FieldPath {
    try FieldPath(parsing: try text(p, what))
}

/// A document key from a C path. The common case (ASCII, valid, no surrounding slashes to
/// strip beyond one each) is parsed straight from the bytes; anything else goes through
/// `DocumentKey(parsing:)`, which also produces every error message and splits at the same
/// "/" bytes.
func documentKey(_ p: UnsafePointer<CChar>?, _ what: String = "path") throws -> DocumentKey {
    guard let p else { throw invalid("\(what) is NULL") }
    if let key = fastDocumentKey(p) { return key }
    return try DocumentKey(parsing: try text(p, what))
}

@inline(__always)
private func fastDocumentKey(_ p: UnsafePointer<CChar>) -> DocumentKey? {
    var segments: [String] = []
    segments.reserveCapacity(4)
    let ok = scanPath(p) { u, len in segments.append(String(decoding: UnsafeBufferPointer(start: u, count: len), as: UTF8.self)) }
    guard ok, segments.count % 2 == 0 else { return nil }
    return DocumentKey(unchecked: ResourcePath(segments: segments))
}

/// The number of segments of a valid ASCII path, or nil (then `ResourcePath(parsing:)` decides).
func fastSegmentCount(_ p: UnsafePointer<CChar>) -> Int? {
    var n = 0
    return scanPath(p) { _, _ in n += 1 } ? n : nil
}

/// Splits an ASCII path the way `ResourcePath(parsing:)` does, calling `segment` for each id;
/// false (possibly after some calls) for anything that path would refuse or that is not ASCII.
@inline(__always)
private func scanPath(_ p: UnsafePointer<CChar>, _ segment: (UnsafePointer<UInt8>, Int) -> Void) -> Bool {
    let n = strlen(p)
    if n == 0 || n > ResourcePath.maxBytes { return false }
    return p.withMemoryRebound(to: UInt8.self, capacity: n) { u -> Bool in
        var start = 0, end = n
        if u[0] == 0x2F { start = 1 }
        if end > start && u[end - 1] == 0x2F { end -= 1 }
        if start >= end { return false }
        var s = start
        var i = start
        while true {
            let atEnd = i == end
            let c: UInt8 = atEnd ? 0x2F : u[i]
            if c >= 0x80 { return false }
            if c == 0x2F {
                let len = i - s
                if len == 0 { return false }                                                  // "//" or an empty segment
                if len <= 2 && u[s] == 0x2E && (len == 1 || u[s + 1] == 0x2E) { return false }   // "." or ".."
                if len >= 4 && u[s] == 0x5F && u[s + 1] == 0x5F && u[i - 1] == 0x5F && u[i - 2] == 0x5F { return false }
                segment(u + s, len)
                if atEnd { break }
                s = i + 1
            }
            i += 1
        }
        // A stripped slash next to another ("//x", "x//") is refused by the full parser.
        if start == 1 && n > 1 && u[1] == 0x2F { return false }
        if end < n && end > 0 && u[end - 1] == 0x2F { return false }
        return true
    }
}

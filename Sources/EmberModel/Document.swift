import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: one immutable version of a document: its key, fields and times, or the
/// knowledge that it does not exist (`exists == false`, a tombstone at a known version).
///
///     let d = Document(key: key, data: fields, version: 17, createTime: 17, updateTime: 17)
///
/// A document read from a file keeps its fields as stored (`storedFields`, `ValueMessagePack`) and
/// decodes them on first use of `data`: a result handed to the C ABI as bytes, or filtered on one
/// field (`field(_:)` reads that field from the bytes), is never decoded. Any thread may decode
/// first; the loser of the exchange drops its copy.
public final class Document: @unchecked Sendable, CustomStringConvertible { // immutable; `decoded` is set once, atomically
    public let key: DocumentKey
    public let exists: Bool
    /// The backend commit version this state reflects (µs); 0 when never seen by the backend.
    public let version: Int64
    public let createTime: Int64
    public let updateTime: Int64
    /// True when local, unacknowledged writes are applied on top of the backend's version.
    public let hasLocalMutations: Bool
    /// The fields as stored (`ValueMessagePack.encode(.map(data))`) when the document was read
    /// from a file; nil for a document built from values.
    public let storedFields: [UInt8]?
    /// The fields of a document built from values (empty when `storedFields` holds them).
    private let built: MapValue
    /// A retained `DecodedFields` once `storedFields` were decoded.
    private let decoded = Atomic<UnsafeMutableRawPointer?>(nil)

    public init(key: DocumentKey, data: MapValue, version: Int64, createTime: Int64, updateTime: Int64, hasLocalMutations: Bool = false) {
        self.key = key
        self.built = data
        self.storedFields = nil
        self.exists = true
        self.version = version
        self.createTime = createTime
        self.updateTime = updateTime
        self.hasLocalMutations = hasLocalMutations
    }

    /// A document whose fields are `stored` as a file holds them (the encoding of a map), decoded
    /// when first read.
    public init(key: DocumentKey, storedFields stored: [UInt8], version: Int64, createTime: Int64, updateTime: Int64) {
        self.key = key
        self.built = MapValue()
        self.storedFields = stored
        self.exists = true
        self.version = version
        self.createTime = createTime
        self.updateTime = updateTime
        self.hasLocalMutations = false
    }

    private init(missing key: DocumentKey, version: Int64, hasLocalMutations: Bool) {
        self.key = key
        self.built = MapValue()
        self.storedFields = nil
        self.exists = false
        self.version = version
        self.createTime = 0
        self.updateTime = 0
        self.hasLocalMutations = hasLocalMutations
    }

    deinit {
        if let p = decoded.load(ordering: .acquiring) { Unmanaged<DecodedFields>.fromOpaque(p).release() }
    }

    /// A tombstone: the document is known not to exist at `version`.
    public static func missing(_ key: DocumentKey, version: Int64, hasLocalMutations: Bool = false) -> Document {
        Document(missing: key, version: version, hasLocalMutations: hasLocalMutations)
    }

    /// The fields. Stored bytes that do not decode (a damaged file: only Ember writes them) read
    /// as no fields, reported once on stderr; `decodedData()` and `storedFieldsError` report them.
    public var data: MapValue {
        guard let stored = storedFields else { return built }
        return fields(stored).map
    }

    /// The fields, or data-loss when the stored bytes do not decode.
    public func decodedData() throws -> MapValue {
        guard let stored = storedFields else { return built }
        let f = fields(stored)
        if let e = f.error { throw e }
        return f.map
    }

    /// Data-loss when the stored bytes do not decode (decoding them if that was not done yet);
    /// nil for readable fields and for documents built from values. Point reads check it, so a
    /// write never builds on a damaged document as if it were empty.
    public var storedFieldsError: EmberError? {
        guard let stored = storedFields else { return nil }
        return fields(stored).error
    }

    /// True once a decode of the stored bytes failed (without decoding them now): the C ABI hands
    /// on the bytes of every other stored document.
    public var storedFieldsKnownDamaged: Bool { decodedBox?.error != nil }

    /// The published decode of `storedFields`, nil until one was made.
    @inline(__always)
    private var decodedBox: DecodedFields? {
        decoded.load(ordering: .acquiring).map { Unmanaged<DecodedFields>.fromOpaque($0).takeUnretainedValue() }
    }

    @inline(__always)
    private func fields(_ stored: [UInt8]) -> DecodedFields { decodedBox ?? decode(stored) }

    /// False while stored fields wait to be decoded (tests use it to see what a read decoded).
    public var fieldsDecoded: Bool { storedFields == nil || decodedBox != nil }

    private func decode(_ stored: [UInt8]) -> DecodedFields {
        let box: DecodedFields
        do {
            box = DecodedFields(try stored.withUnsafeBufferPointer { try ValueMessagePack.decodeMap($0) }, nil)
        } catch {
            Document.reportUndecodable(key, error)
            box = DecodedFields(MapValue(), EmberError(.dataLoss, "The stored fields of document '\(key)' are damaged (\(error)): restore the database file from a copy."))
        }
        let made = Unmanaged.passRetained(box).toOpaque()
        let (won, current) = decoded.compareExchange(expected: nil, desired: made,
                                                     successOrdering: .acquiringAndReleasing,
                                                     failureOrdering: .acquiring)
        if won { return box }
        Unmanaged<DecodedFields>.fromOpaque(made).release()
        return Unmanaged<DecodedFields>.fromOpaque(current!).takeUnretainedValue()
    }

    private static let reportedUndecodable = Atomic<Bool>(false)

    private static func reportUndecodable(_ key: DocumentKey, _ error: Error) {
        guard !reportedUndecodable.exchange(true, ordering: .relaxed) else { return }
        StorageErrorLog.report("the stored fields of \(key) do not decode (\(error)); read as empty")
    }

    /// The value at a field path; `__name__` yields the document's reference. Fields not yet
    /// decoded are read from the stored bytes without decoding the others.
    public func field(_ path: FieldPath) -> Value? {
        if path.segments.count == 1 && path.segments[0] == "__name__" { return .reference(key) }
        if let stored = storedFields, decodedBox == nil {
            // Keys out of order or damaged bytes: the full decode below reports or accepts them.
            do { return try stored.withUnsafeBufferPointer { try ValueMessagePack.field(path.segments, in: $0) } } catch {}
        }
        let fields = data
        return path.segments.count == 1 ? fields[path.segments[0]] : fields.value(at: path)
    }

    /// Same key, existence, data and pending state (versions aside).
    public func hasSameContent(as other: Document) -> Bool {
        guard exists == other.exists && hasLocalMutations == other.hasLocalMutations else { return false }
        if let a = storedFields, let b = other.storedFields, a == b { return true }
        return data == other.data
    }

    public var description: String {
        exists ? "Document(\(key), v\(version)\(hasLocalMutations ? ", local" : ""))" : "Missing(\(key), v\(version))"
    }
}

/// Responsible for: holding a stored document's fields once decoded, or the reason they did not
/// decode (one allocation, shared by every reader of that `Document`).
private final class DecodedFields {
    let map: MapValue
    let error: EmberError?
    init(_ map: MapValue, _ error: EmberError?) { self.map = map; self.error = error }
}

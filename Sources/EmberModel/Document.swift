/// Responsible for: one immutable version of a document: its key, fields and times, or the
/// knowledge that it does not exist (`exists == false`, a tombstone at a known version).
///
///     let d = Document(key: key, data: fields, version: 17, createTime: 17, updateTime: 17)
public final class Document: @unchecked Sendable, CustomStringConvertible {
    public let key: DocumentKey
    public let data: MapValue
    public let exists: Bool
    /// The backend commit version this state reflects (µs); 0 when never seen by the backend.
    public let version: Int64
    public let createTime: Int64
    public let updateTime: Int64
    /// True when local, unacknowledged writes are applied on top of the backend's version.
    public let hasLocalMutations: Bool

    public init(key: DocumentKey, data: MapValue, version: Int64, createTime: Int64, updateTime: Int64, hasLocalMutations: Bool = false) {
        self.key = key
        self.data = data
        self.exists = true
        self.version = version
        self.createTime = createTime
        self.updateTime = updateTime
        self.hasLocalMutations = hasLocalMutations
    }

    private init(missing key: DocumentKey, version: Int64, hasLocalMutations: Bool) {
        self.key = key
        self.data = MapValue()
        self.exists = false
        self.version = version
        self.createTime = 0
        self.updateTime = 0
        self.hasLocalMutations = hasLocalMutations
    }

    /// A tombstone: the document is known not to exist at `version`.
    public static func missing(_ key: DocumentKey, version: Int64, hasLocalMutations: Bool = false) -> Document {
        Document(missing: key, version: version, hasLocalMutations: hasLocalMutations)
    }

    /// The value at a field path; `__name__` yields the document's reference.
    @inlinable
    public func field(_ path: FieldPath) -> Value? {
        if path.segments.count == 1 {
            if path.segments[0] == "__name__" { return .reference(key) }
            return data[path.segments[0]]
        }
        return data.value(at: path)
    }

    /// Same key, existence, data and pending state (versions aside).
    public func hasSameContent(as other: Document) -> Bool {
        exists == other.exists && hasLocalMutations == other.hasLocalMutations && data == other.data
    }

    public var description: String {
        exists ? "Document(\(key), v\(version)\(hasLocalMutations ? ", local" : ""))" : "Missing(\(key), v\(version))"
    }
}

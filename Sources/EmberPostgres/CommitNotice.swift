import EmberModel
import Foundation

/// Responsible for: a small commit carried in its NOTIFY's payload, so the other instances
/// apply it without reading the log (when it is the next position they need; otherwise they
/// read the log as always). The payload is base64 of Ember's MessagePack: the position, the
/// commit time and each write (collection path, id, fields or null, create time), exactly the
/// rows `ember_commit` logged. Commits past `maxBytes` are announced by id only.
enum CommitNotice {
    /// PostgreSQL's payloads stop at 8000 bytes.
    static let maxBytes = 7000

    static func encode(_ changes: [LoggedChange]) -> String? {
        guard let first = changes.first else { return nil }
        var writes: [Value] = []
        for c in changes {
            guard let parent = c.key.path.parent else { return nil }
            writes.append(.array([.string(parent.canonical), .string(c.key.id), c.fields.map { .bytes($0) } ?? .null, .int(c.createTime)]))
        }
        let value = Value.array([.int(first.seq), .int(first.commitTime), .array(writes)])
        let text = Data(ValueMessagePack.encode(value)).base64EncodedString()
        return text.utf8.count <= maxBytes ? text : nil
    }

    static func decode(_ text: Substring) -> [LoggedChange]? {
        guard let data = Data(base64Encoded: String(text)),
              case .array(let top)? = try? ValueMessagePack.decode(Array(data)), top.count == 3,
              case .int(let seq) = top[0], case .int(let time) = top[1], case .array(let writes) = top[2] else { return nil }
        var out: [LoggedChange] = []
        for (i, w) in writes.enumerated() {
            guard case .array(let f) = w, f.count == 4, case .string(let parent) = f[0], case .string(let id) = f[1],
                  case .int(let created) = f[3],
                  let key = try? DocumentKey(path: ResourcePath(parsing: parent).appending(id)) else { return nil }
            let fields: [UInt8]?
            switch f[2] {
            case .bytes(let b): fields = b
            case .null: fields = nil
            default: return nil
            }
            out.append(LoggedChange(seq: seq, index: i + 1, key: key, fields: fields, createTime: created, commitTime: time))
        }
        return out.isEmpty ? nil : out
    }
}

/// Responsible for: a single write to one document (set, patch, delete, verify) with its field
/// transforms and precondition, and applying it to a document locally or at the backend.
///
///     let m = Mutation(key: key, kind: .set(fields))
///     let local = m.applyLocally(to: remoteDoc, localWriteTime: now)
public struct Mutation: Sendable {
    public enum Kind: Sendable {
        /// Replace the whole document.
        case set(MapValue)
        /// For each path of the mask: take the value from `data`, or delete the field when `data` has none.
        case patch(MapValue, mask: [FieldPath])
        case delete
        /// Checks the precondition only (transactions' reads).
        case verify
    }

    public enum Precondition: Sendable, Equatable {
        case none
        case exists(Bool)
        case updateTime(Int64)
    }

    public let key: DocumentKey
    public let kind: Kind
    public let transforms: [FieldTransform]
    public let precondition: Precondition

    public init(key: DocumentKey, kind: Kind, transforms: [FieldTransform] = [], precondition: Precondition = .none) {
        self.key = key
        self.kind = kind
        self.transforms = transforms
        self.precondition = precondition
    }

    public var isPatch: Bool { if case .patch = kind { return true } else { return false } }

    /// A whole-document set with no precondition and no transform: its result does not depend on
    /// the stored document, except for the create time it keeps.
    public var isBlindSet: Bool {
        guard case .set = kind, precondition == .none else { return false }
        return transforms.isEmpty
    }

    /// Applies the mutation as the client sees it before the backend has it: server timestamps
    /// read as null; a failing precondition leaves the document as it is.
    public func applyLocally(to doc: Document?, localWriteTime: Int64) -> Document? {
        if !preconditionHolds(doc) { return doc }
        let version = doc?.version ?? 0
        switch kind {
        case .delete:
            return Document.missing(key, version: version, hasLocalMutations: true)
        case .verify:
            return doc
        case .set, .patch:
            var data = newData(base: doc)
            for t in transforms { data.setValue(t.op.applyLocally(to: data.value(at: t.path)), at: t.path) }
            let existed = doc?.exists == true
            return Document(key: key, data: data, version: version,
                            createTime: existed ? doc!.createTime : 0, updateTime: existed ? doc!.updateTime : 0,
                            hasLocalMutations: true)
        }
    }

    /// Applies the mutation at the backend at `commitTime`, throwing when the precondition fails.
    /// Returns nil for a verify (no change).
    public func applyAtBackend(to doc: Document?, commitTime: Int64) throws -> Document? {
        try checkPrecondition(doc)
        switch kind {
        case .verify: return nil
        case .delete: return Document.missing(key, version: commitTime)
        case .set, .patch:
            var data = newData(base: doc)
            for t in transforms { data.setValue(t.op.applyAtBackend(to: data.value(at: t.path), commitTime: commitTime), at: t.path) }
            let existed = doc?.exists == true
            return Document(key: key, data: data, version: commitTime,
                            createTime: existed ? doc!.createTime : commitTime, updateTime: commitTime)
        }
    }

    private func newData(base doc: Document?) -> MapValue {
        switch kind {
        case .set(let d): return d
        case .patch(let d, let mask):
            var data = doc?.exists == true ? doc!.data : MapValue()
            for path in mask { data.setValue(d.value(at: path), at: path) }
            return data
        default: return MapValue()
        }
    }

    func preconditionHolds(_ doc: Document?) -> Bool {
        switch precondition {
        case .none: return true
        case .exists(let e): return (doc?.exists == true) == e
        case .updateTime(let t): return doc?.exists == true && doc!.updateTime == t
        }
    }

    private func checkPrecondition(_ doc: Document?) throws {
        switch precondition {
        case .none: return
        case .exists(true):
            if doc?.exists != true { throw EmberError(.notFound, "No document to update: \(key)") }
        case .exists(false):
            if doc?.exists == true { throw EmberError(.alreadyExists, "Document already exists: \(key)") }
        case .updateTime(let t):
            let current = doc?.exists == true ? doc!.updateTime : 0
            // "The target document must exist and have been last updated at that time": a missing document fails even for 0.
            if doc?.exists != true || current != t { throw EmberError(.failedPrecondition, "The document \(key) changed since it was read (update time \(current), expected \(t))") }
        }
    }
}

/// Responsible for: one field transform (server timestamp, increment, array union/remove).
public struct FieldTransform: Sendable {
    public enum Op: Sendable {
        case serverTimestamp
        case increment(Value)
        case arrayUnion([Value])
        case arrayRemove([Value])

        func applyLocally(to base: Value?) -> Value {
            if case .serverTimestamp = self { return .null }
            return apply(to: base)
        }

        func applyAtBackend(to base: Value?, commitTime: Int64) -> Value {
            if case .serverTimestamp = self { return .timestamp(Timestamp(micros: commitTime)) }
            return apply(to: base)
        }

        private func apply(to base: Value?) -> Value {
            switch self {
            case .serverTimestamp: return .null
            case .increment(let operand):
                switch (base, operand) {
                case (.int(let a)?, .int(let b)):
                    let (sum, overflow) = a.addingReportingOverflow(b)
                    return .int(overflow ? (b > 0 ? Int64.max : Int64.min) : sum)
                case (.int(let a)?, .double(let b)): return .double(Double(a) + b)
                case (.double(let a)?, .int(let b)): return .double(a + Double(b))
                case (.double(let a)?, .double(let b)): return .double(a + b)
                default: return operand
                }
            case .arrayUnion(let elements):
                var arr: [Value] = []
                if case .array(let a)? = base { arr = a }
                // Elements are equal as Firestore's order has them equal (1 and 1.0, NaN and NaN),
                // as the backend (the emulator) applies these transforms.
                for e in elements where !arr.contains(where: { Value.compare($0, e) == 0 }) { arr.append(e) }
                return .array(arr)
            case .arrayRemove(let elements):
                guard case .array(let a)? = base else { return .array([]) }
                return .array(a.filter { x in !elements.contains { Value.compare($0, x) == 0 } })
            }
        }
    }

    public let path: FieldPath
    public let op: Op
    public init(path: FieldPath, op: Op) { self.path = path; self.op = op }
}

/// Responsible for: a group of mutations applied atomically, in order, with the time it was made locally.
public struct MutationBatch: Sendable {
    public let batchId: Int64
    public let localWriteTime: Int64
    public let mutations: [Mutation]

    public init(batchId: Int64, localWriteTime: Int64, mutations: [Mutation]) {
        self.batchId = batchId
        self.localWriteTime = localWriteTime
        self.mutations = mutations
    }

    public static let maxOperations = 500
}

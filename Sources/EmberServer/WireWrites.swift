import EmberFirestoreProto
import EmberModel
import EmberWire

typealias WireWrite = Google_Firestore_V1_Write

/// Responsible for: turning wire writes into Ember mutations for one database, with Firestore's
/// checks: one operation per write, a mask only on an update, transforms on distinct fields not
/// in the mask, the document within Firestore's size and depth limits; and reading the results
/// back (transform results from the committed document).
struct WireWrites: Sendable {
    let codec: WireCodec

    func mutation(_ w: WireWrite) throws -> Mutation {
        let precondition = try self.precondition(w)
        let transforms = try w.updateTransforms.map(transform)
        switch w.operation {
        case .update(let doc)?:
            let (db, key) = try DatabaseName.parse(document: doc.name)
            guard db == codec.db else { throw EmberError.invalidArgument("Document '\(doc.name)' is not in database '\(codec.db.name)'") }
            try WireDataRules.check(fields: doc.fields)
            for f in w.updateMask.fieldPaths { try WireDataRules.check(fieldPath: f) }
            let data = try codec.map(doc.fields)
            try DocumentLimits.validate(key: key, data: data)
            try checkTransformFields(transforms, mask: w.hasUpdateMask ? w.updateMask.fieldPaths : [])
            if w.hasUpdateMask {
                let mask = try w.updateMask.fieldPaths.map { try codec.fieldPath($0) }
                return Mutation(key: key, kind: .patch(data, mask: mask), transforms: transforms, precondition: precondition)
            }
            return Mutation(key: key, kind: .set(data), transforms: transforms, precondition: precondition)
        case .delete(let name)?:
            guard !w.hasUpdateMask, transforms.isEmpty else { throw EmberError.invalidArgument("A delete cannot have an update mask or transforms") }
            let (db, key) = try DatabaseName.parse(document: name)
            guard db == codec.db else { throw EmberError.invalidArgument("Document '\(name)' is not in database '\(codec.db.name)'") }
            return Mutation(key: key, kind: .delete, precondition: precondition)
        case .transform(let t)?:
            guard !w.hasUpdateMask, transforms.isEmpty else { throw EmberError.invalidArgument("A transform write cannot have an update mask or update transforms") }
            let (db, key) = try DatabaseName.parse(document: t.document)
            guard db == codec.db else { throw EmberError.invalidArgument("Document '\(t.document)' is not in database '\(codec.db.name)'") }
            let ts = try t.fieldTransforms.map(transform)
            try checkTransformFields(ts, mask: [])
            return Mutation(key: key, kind: .patch(MapValue(), mask: []), transforms: ts, precondition: precondition)
        case nil:
            throw EmberError.invalidArgument("A write needs an operation (update, delete or transform)")
        }
    }

    private func precondition(_ w: WireWrite) throws -> Mutation.Precondition {
        guard w.hasCurrentDocument else { return .none }
        switch w.currentDocument.conditionType {
        case .exists(let e)?: return .exists(e)
        case .updateTime(let t)?: return .updateTime(WireCodec.micros(t))
        case nil: return .none
        }
    }

    private func transform(_ t: Google_Firestore_V1_DocumentTransform.FieldTransform) throws -> FieldTransform {
        try WireDataRules.check(fieldPath: t.fieldPath)
        let path = try codec.fieldPath(t.fieldPath)
        switch t.transformType {
        case .setToServerValue(let v)?:
            guard v == .requestTime else { throw EmberError.invalidArgument("Unknown server value for field '\(t.fieldPath)'") }
            return FieldTransform(path: path, op: .serverTimestamp)
        case .increment(let v)?:
            let n = try codec.value(v)
            guard n.isNumber else { throw EmberError.invalidArgument("Increment needs a number for field '\(t.fieldPath)'") }
            return FieldTransform(path: path, op: .increment(n))
        case .appendMissingElements(let a)?:
            return FieldTransform(path: path, op: .arrayUnion(try a.values.map { try codec.value($0) }))
        case .removeAllFromArray(let a)?:
            return FieldTransform(path: path, op: .arrayRemove(try a.values.map { try codec.value($0) }))
        case .maximum?, .minimum?:
            throw EmberError(.unimplemented, "The maximum and minimum transforms are not supported")
        case nil:
            throw EmberError.invalidArgument("A field transform needs a transform type (field '\(t.fieldPath)')")
        }
    }

    private func checkTransformFields(_ ts: [FieldTransform], mask: [String]) throws {
        var seen = Set<FieldPath>()
        for t in ts {
            if !seen.insert(t.path).inserted {
                throw EmberError.invalidArgument("Field '\(t.path)' is specified more than once in the transforms")
            }
        }
        for m in mask {
            let p = try codec.fieldPath(m)
            if seen.contains(p) { throw EmberError.invalidArgument("Field '\(m)' cannot be both updated and transformed") }
        }
    }

    /// The WriteResult of `m` given the committed document for its key: the document's update
    /// time (the previous one when the commit left it unchanged), none after a delete.
    func result(of m: Mutation, committed doc: Document?, commitTime: Int64) -> Google_Firestore_V1_WriteResult {
        var r = Google_Firestore_V1_WriteResult()
        if case .delete = m.kind { return r }
        r.updateTime = WireCodec.timestamp(micros: doc?.exists == true ? doc!.updateTime : commitTime)
        if !m.transforms.isEmpty, let doc {
            r.transformResults = m.transforms.map { t in
                codec.wire(doc.data.value(at: t.path) ?? .null)
            }
        }
        return r
    }
}

import EmberFirestoreProto
import EmberModel
import EmberWire

typealias WireWrite = Google_Firestore_V1_Write

/// Responsible for: Ember's mutations as wire writes, and the server's write results as
/// `MutationResult`s. A set is an `update` without a mask, a patch an `update` with its mask
/// (possibly empty: transforms only), transforms go as `update_transforms`. A transaction's
/// verify (a read's precondition, with nothing written) has no write of its own on the public
/// wire: it goes as a write that changes nothing under the same precondition (an empty-mask
/// update for "unchanged since", a delete for "still missing"), checked in the same atomic commit.
///
///     let w = RemoteWrites(codec: codec).write(mutation)
struct RemoteWrites {
    let codec: WireCodec

    func write(_ m: Mutation) -> WireWrite {
        var w = WireWrite()
        switch m.kind {
        case .set(let data):
            w.update = document(m.key, data)
        case .patch(let data, let mask):
            w.update = document(m.key, data)
            var dm = Google_Firestore_V1_DocumentMask()
            dm.fieldPaths = mask.map { $0.canonical }
            w.updateMask = dm
        case .delete:
            w.delete = codec.name(of: m.key)
        case .verify:
            if m.precondition == .exists(false) {
                w.delete = codec.name(of: m.key)
            } else {
                w.update = document(m.key, MapValue())
                w.updateMask = Google_Firestore_V1_DocumentMask()
            }
        }
        w.updateTransforms = m.transforms.map(transform)
        switch m.precondition {
        case .none: break
        case .exists(let e): w.currentDocument.exists = e
        case .updateTime(let t): w.currentDocument.updateTime = WireCodec.timestamp(micros: t)
        }
        return w
    }

    private func document(_ key: DocumentKey, _ data: MapValue) -> WireDocument {
        var d = WireDocument()
        d.name = codec.name(of: key)
        d.fields = codec.wireFields(data)
        return d
    }

    private func transform(_ t: FieldTransform) -> Google_Firestore_V1_DocumentTransform.FieldTransform {
        var w = Google_Firestore_V1_DocumentTransform.FieldTransform()
        w.fieldPath = t.path.canonical
        switch t.op {
        case .serverTimestamp: w.setToServerValue = .requestTime
        case .increment(let v): w.increment = codec.wire(v)
        case .arrayUnion(let vs): w.appendMissingElements = array(vs)
        case .arrayRemove(let vs): w.removeAllFromArray = array(vs)
        }
        return w
    }

    private func array(_ vs: [Value]) -> Google_Firestore_V1_ArrayValue {
        var a = Google_Firestore_V1_ArrayValue()
        a.values = vs.map(codec.wire)
        return a
    }

    /// The result of one write: the document's update time (the commit time when the server sent
    /// none, as after a delete) and its transforms' values.
    func result(_ r: Google_Firestore_V1_WriteResult, commitTime: Int64) throws -> MutationResult {
        MutationResult(version: r.hasUpdateTime ? WireCodec.micros(r.updateTime) : commitTime,
                       transformResults: try r.transformResults.map { try codec.value($0) })
    }
}

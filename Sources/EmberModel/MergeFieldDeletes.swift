/// Responsible for: Firestore's rule on field deletes in a set with explicit merge fields: each
/// delete must be one of the merge fields itself. A delete no merge field selects would be
/// dropped silently, and one inside a merged field's value would be replaced by that value, so
/// both are refused (Firestore's conformance cases set-del-nomerge and set-del-nonleaf).
public enum MergeFieldDeletes {
    public static func check(_ deletes: [FieldPath], selectedBy fields: [FieldPath]) throws {
        for d in deletes where !fields.contains(d) {
            if let f = fields.first(where: { $0.isPrefix(of: d) }) {
                throw EmberError.invalidArgument("Cannot delete field '\(d)' inside the value of merge field '\(f)': name '\(d)' itself in the merge fields.")
            }
            throw EmberError.invalidArgument("Cannot delete field '\(d)': it is not one of the merge fields.")
        }
    }
}

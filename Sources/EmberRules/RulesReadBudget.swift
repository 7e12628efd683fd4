import EmberModel

/// Responsible for: the documents one request's rules read with `get()` / `exists()`: each
/// distinct document is read once (repeats are free) and at most `limit` are (Firestore's: 10
/// for a single-document request or a query, 20 for a batch or transaction), across every
/// evaluation the request makes (each way a query can match, each document a batch writes).
///
///     let budget = RulesReadBudget(limit: 20)
///     for write in batch { rules.evaluate(request(write), lookup: lookup, budget: budget) }
public final class RulesReadBudget {
    public static let singleRequest = 10
    public static let batch = 20

    public let limit: Int
    /// By the path's UTF-8 bytes (segments joined with "/", none of which holds one).
    var reads: [[UInt8]: MapValue?] = [:]

    public init(limit: Int = RulesReadBudget.singleRequest) { self.limit = limit }
}

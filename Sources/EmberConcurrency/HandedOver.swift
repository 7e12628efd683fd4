/// Responsible for: a caller's closure or value carried to the one thread that uses it from then
/// on (Ember's event thread runs a user's callbacks there, one at a time). The caller hands it
/// over and never touches it again, so no two threads use it at once.
///
///     let block = HandedOver(updateBlock)
///     thread.post { _ = block.value(tx) }
public struct HandedOver<Value>: @unchecked Sendable { // used by one thread at a time, after the hand-off
    public let value: Value
    public init(_ value: Value) { self.value = value }
}

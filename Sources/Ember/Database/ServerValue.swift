import Foundation

/// Responsible for: Firebase's `ServerValue`: placeholders in tree writes that the server (or
/// the in-process backend) fills in when it applies the write; the client shows its estimate
/// until then (its clock plus `.info/serverTimeOffset`; its own value plus the delta).
///
///     ref.child("lastOnline").onDisconnectSetValue(ServerValue.timestamp())
///     ref.child("likes").setValue(ServerValue.increment(1))
public enum ServerValue {
    /// The server's time when it applies the write, in milliseconds since 1970.
    public static func timestamp() -> [AnyHashable: Any] { [".sv": "timestamp"] }

    /// The number there plus `delta` when the server applies the write (`delta` when there is
    /// no number there).
    public static func increment(_ delta: NSNumber) -> [AnyHashable: Any] { [".sv": ["increment": delta]] }
}

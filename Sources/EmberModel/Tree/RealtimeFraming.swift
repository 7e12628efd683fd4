/// Responsible for: the realtime protocol's framing over WebSocket text frames (firebase-js-sdk
/// `WebSocketConnection.ts`): a message longer than `frameLimit` characters goes as a frame
/// holding the count of frames, then its pieces; a frame of at most 6 characters that reads as a
/// number is such a count (the client's keep-alive is a bare "0": nothing follows); anything
/// else is a whole message. Incoming messages are bounded by `maxMessageBytes`. Both ends use it:
/// `ember serve`'s sessions and Ember's tree clients.
public struct RealtimeFraming: Sendable {
    public static let frameLimit = 16384

    public let maxMessageBytes: Int
    private var remaining = 0
    private var parts = ""

    public init(maxMessageBytes: Int) { self.maxMessageBytes = maxMessageBytes }

    /// Feeds one text frame; returns a message once one is whole.
    public mutating func feed(_ frame: String) throws -> String? {
        if remaining == 0 {
            if frame.utf8.count <= 6, let n = Int(frame) {
                // Clients fill every frame but the last: more frames than that is no honest message.
                guard n >= 0, n <= maxMessageBytes / Self.frameLimit + 2 else { throw RealtimeProtocolError("a message of \(n) frames is too large") }
                remaining = n
                parts = ""
                return nil
            }
            guard frame.utf8.count <= maxMessageBytes else { throw RealtimeProtocolError("a message over \(maxMessageBytes) bytes") }
            return frame
        }
        parts += frame
        guard parts.utf8.count <= maxMessageBytes else { throw RealtimeProtocolError("a message over \(maxMessageBytes) bytes") }
        remaining -= 1
        guard remaining == 0 else { return nil }
        defer { parts = "" }
        return parts
    }

    /// The frames carrying `message` (never a bare count of 0: a client would wait forever).
    public static func frames(_ message: String) -> [String] {
        let scalars = message.unicodeScalars
        guard scalars.count > frameLimit else { return [message] }
        var out: [String] = []
        var piece = String.UnicodeScalarView()
        // (A view's `count` walks it: counting that way made a 1 MB message take seconds.)
        var n = 0
        for s in scalars {
            piece.append(s)
            n += 1
            if n == frameLimit {
                out.append(String(piece))
                piece = String.UnicodeScalarView()
                n = 0
            }
        }
        if !piece.isEmpty { out.append(String(piece)) }
        return [String(out.count)] + out
    }
}

/// Responsible for: why a realtime connection was closed for what its peer sent.
public struct RealtimeProtocolError: Error, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
}

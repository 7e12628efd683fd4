import EmberConcurrency
import Dispatch
import Foundation
import GRPCCore
#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: telling why a client cannot reach its server, as the Firebase SDKs' "Could
/// not reach Cloud Firestore backend" does. Each failed attempt to open the Listen or Write
/// stream before the server answered is one line naming the address, whether TLS was on, how
/// many attempts failed since the server last answered, the cause and the next retry delay,
/// with a hint when the cause looks like TLS against a plaintext server (or the reverse) or an
/// untrusted certificate. One `ConnectionLog` per `RemoteBackend`, shared by its links' streams.
///
/// Where the lines go: by default `ember: ...` on stderr, as the library's other warnings; a
/// program with its own log installs a handler. They cannot spam (at most one line a second per
/// connection; the streams retry with a backoff up to 60 s), nor block or stop the client: they
/// are written on a queue of their own, a line is dropped while the one before is still being
/// written (a full pipe), and a closed stderr raises no SIGPIPE.
///
///     log.failed(error, retryIn: 1.2)   // a stream's attempt failed; one line on stderr:
///     // ember: could not reach the server at 127.0.0.1:8080 (TLS on): 1 failed attempt since it
///     // last answered; most recent error: ...: handshakeFailed(...WRONG_VERSION_NUMBER); retrying
///     // in 1.2 s. Writes stay queued ... The server may not speak TLS ...: turn it off: ssl=False ...
///     log.reached()                      // the server answered: the count starts again
public final class ConnectionLog {
    public typealias Handler = @Sendable (String) -> Void

    let address: String
    let tls: Bool
    private let lock = NSLock()
    private var failures = 0
    private var lastLine: DispatchTime?
    private var closed = false
    /// Lines less than this apart are not written (both streams failing on one connection).
    static let quiet = 1.0

    init(address: String, tls: Bool) {
        self.address = address
        self.tls = tls
    }

    /// A stream failed before the server answered it; it is opened again in `retryIn` seconds.
    /// Any thread; returns at once.
    func failed(_ error: Error, retryIn seconds: Double) {
        let now = DispatchTime.now()
        lock.lock()
        if closed { lock.unlock(); return }
        failures += 1
        let n = failures
        if let last = lastLine, now.uptimeNanoseconds < last.uptimeNanoseconds + UInt64(ConnectionLog.quiet * 1e9) {
            lock.unlock()
            return
        }
        lastLine = now
        lock.unlock()
        ConnectionLog.emit(line(failures: n, error: error, retryIn: seconds))
    }

    /// The server answered: the count starts again. A failure in the next second (the other
    /// stream, on the connection that just came back) is counted, not told.
    func reached() {
        lock.lock()
        failures = 0
        lastLine = DispatchTime.now()
        lock.unlock()
    }

    /// Nothing more is told (the client is closing: its streams end with errors of their own).
    func close() {
        lock.lock()
        closed = true
        lock.unlock()
    }

    /// Whether a stream's `error` says the server was not reached (UNAVAILABLE, or no gRPC status
    /// at all), rather than the server's refusal (a status of its own).
    static func isUnreachable(_ error: Error) -> Bool {
        if let r = error as? RPCError { return r.code == .unavailable }
        return !(error is CancellationError)
    }

    /// The line for the `failures`th failed attempt (no prefix, no newline).
    func line(failures: Int, error: Error, retryIn seconds: Double) -> String {
        let cause = ConnectionLog.cause(of: error)
        var s = "could not reach the server at \(address) (TLS \(tls ? "on" : "off")): "
        s += failures == 1 ? "1 failed attempt" : "\(failures) failed attempts"
        s += " since it last answered; most recent error: \(cause); retrying in "
        s += seconds < 0.05 ? "a moment" : String(format: "%.1f s", seconds)
        s += ". Writes stay queued and listeners serve the cache until it answers."
        if let hint = ConnectionLog.hint(cause: cause, tls: tls) { s += " " + hint }
        return s
    }

    /// The error as one line: a gRPC error's message with its causes, innermost last, without
    /// the channel's preamble and the source paths of the TLS library.
    static func cause(of error: Error) -> String {
        var parts: [String] = []
        var next: Error? = error
        while let e = next, parts.count < 4 {
            if let r = e as? RPCError {
                parts.append(r.message.isEmpty ? "\(r.code)" : r.message)
                next = r.cause
            } else {
                parts.append(String(describing: e))
                next = nil
            }
        }
        var text = parts.map { $0.hasSuffix(".") ? String($0.dropLast()) : $0 }.joined(separator: ": ")
        // A stream failed fast repeats the connection's error: say it once.
        for preamble in ["Channel is in a transient failure state and 'wait for ready' isn't enabled", ".", ":", " "] {
            if text.hasPrefix(preamble) { text.removeFirst(preamble.count) }
        }
        text = text.replacingOccurrences(of: #" at /[^ \]\)]*:[0-9]+"#, with: "", options: .regularExpression)
        return String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }

    /// What to change when `cause` looks like a TLS mismatch or an untrusted certificate.
    static func hint(cause: String, tls: Bool) -> String? {
        let c = cause.lowercased()
        let off = "ssl=False in Python, FirestoreSettings.isSSLEnabled = false in Swift, ember_settings.ssl = false in C, "
            + "Settings::set_ssl_enabled(false) in C++"
        if tls {
            if c.contains("certificate") || c.contains("cert_") {
                return "The server's certificate is not trusted: give its CA as ssl_ca_file (Python), "
                    + "trustedCertificatesFile (Swift), ember_settings.ssl_ca_file (C), Settings::set_ssl_ca_file (C++)."
            }
            let plaintext = ["wrong_version_number", "wrong version number", "packet_length_too_long", "record_too_large",
                             "http_request", "uncleanshutdown", "unclean shutdown"]
            if plaintext.contains(where: c.contains) {
                return "The server may not speak TLS (TLS is on by default with a host): for a plaintext server "
                    + "(`ember serve` without --tls-cert, the Firestore emulator) turn it off: \(off)."
            }
        } else {
            let tlsServer = ["before completing the http/2 connection preface", "frame size", "frametoolarge"]
            if tlsServer.contains(where: c.contains) {
                return "The server may expect TLS (`ember serve --tls-cert`): turn TLS on, the default with a host "
                    + "(ssl=True in Python, isSSLEnabled = true in Swift, ember_settings.ssl = true in C, "
                    + "Settings::set_ssl_enabled(true) in C++)."
            }
        }
        return nil
    }

    // MARK: where lines go

    /// The installed handler, and whether a line is being written.
    private struct Sink { var handler: Handler?; var writing = false }
    private static let sink = LockedValueBox(Sink())
    private static let output = DispatchQueue(label: "ember.connection-log")

    /// Installs `handler` for every client's lines (nil: back to stderr). It runs on a queue of
    /// Ember's, one line at a time, and must not call back into a client.
    public static func setHandler(_ handler: Handler?) {
        sink.withLockedValue { $0.handler = handler }
    }

    private static func emit(_ message: String) {
        let busy = sink.withLockedValue { s -> Bool in
            if s.writing { return true }   // the line before is still being written
            s.writing = true
            return false
        }
        if busy { return }
        output.async {
            if let h = sink.current.handler { h(message) } else { writeToStderr("ember: \(message)\n") }
            sink.withLockedValue { $0.writing = false }
        }
    }

    /// Writes `text` to fd 2 with SIGPIPE held off this thread (a closed pipe must not end the
    /// host process), consuming the SIGPIPE the write raised, as libpq does.
    private static func writeToStderr(_ text: String) {
        var pipe = sigset_t(), old = sigset_t(), pending = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipe, &old)
        sigpending(&pending)
        let wasPending = sigismember(&pending, SIGPIPE) == 1
        var t = text
        let failedWithPipe = t.withUTF8 { b -> Bool in
            var off = 0
            while off < b.count {
                let n = write(2, b.baseAddress! + off, b.count - off)
                if n > 0 { off += n; continue }
                if n < 0, errno == EINTR { continue }
                return n < 0 && errno == EPIPE
            }
            return false
        }
        if failedWithPipe, !wasPending {
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            while sigtimedwait(&pipe, nil, &zero) < 0, errno == EINTR {}
        }
        pthread_sigmask(SIG_SETMASK, &old, nil)
    }
}

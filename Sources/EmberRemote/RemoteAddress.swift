import EmberModel

/// Responsible for: reading a server's address as the public settings give it (`host:port`, the
/// form of Firebase's `FirestoreSettings.host` and of `FIRESTORE_EMULATOR_HOST`) into the host and
/// the port `RemoteBackend` connects to, refusing with INVALID_ARGUMENT what is not one: an empty
/// text, a NUL or control character, a space, a scheme or a path, no port, a port outside 1-65535,
/// an IPv6 address outside brackets.
///
///     let a = try RemoteAddress(parsing: "127.0.0.1:8080")   // host "127.0.0.1", port 8080
///     let b = try RemoteAddress(parsing: "[::1]:8080")       // host "::1"
///     try RemoteAddress(parsing: "localhost")                // invalidArgument: no port
public struct RemoteAddress: Equatable, Sendable {
    public let host: String
    public let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public init(parsing text: String) throws {
        func refuse(_ why: String) -> EmberError {
            EmberError.invalidArgument("Invalid host '\(RemoteAddress.printable(text))': \(why)")
        }
        if text.isEmpty {
            throw EmberError.invalidArgument("The host is empty: give the server as host:port (e.g. 127.0.0.1:8080), or no host for the in-process backend")
        }
        if text.unicodeScalars.contains(where: { $0.value == 0 }) { throw refuse("it contains a NUL character") }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == " " }) {
            throw refuse("it contains a space or a control character")
        }
        if text.utf8.contains(0x2F) { throw refuse("give host:port only, without a scheme or a path (e.g. 127.0.0.1:8080)") }
        let name: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw refuse("the IPv6 address has no closing ']'") }
            name = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw refuse("no port: use [address]:port, e.g. [::1]:8080") }
            portText = rest.dropFirst()
            if name.isEmpty { throw refuse("the address between the brackets is empty") }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw refuse("no port: use host:port, e.g. 127.0.0.1:8080") }
            name = text[..<colon]
            portText = text[text.index(after: colon)...]
            if name.contains(":") { throw refuse("write an IPv6 address in brackets, e.g. [::1]:8080") }
            if name.isEmpty { throw refuse("no host before the port") }
        }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), (1...65535).contains(port)
        else { throw refuse("the port must be a number in 1-65535") }
        self.host = String(name)
        self.port = port
    }

    /// `host:port`, with brackets around an IPv6 address.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `text` with control characters escaped, for an error message.
    static func printable(_ text: String) -> String {
        var out = ""
        for s in text.unicodeScalars {
            if s.value < 0x20 || s.value == 0x7F { out += "\\u{\(String(s.value, radix: 16))}" } else { out.unicodeScalars.append(s) }
        }
        return out
    }
}

extension RemoteAddress {
    /// The most servers one setting may name.
    public static let maxHosts = 16

    /// A comma-separated list of `host:port` servers, for a client that moves on to the next one
    /// when one fails ("10.0.0.1:8080,10.0.0.2:8080"). One server is the list of one. Each entry
    /// is read as `init(parsing:)` reads it; an empty entry, or more than `maxHosts`, is refused
    /// with INVALID_ARGUMENT.
    public static func list(parsing text: String) throws -> [RemoteAddress] {
        guard text.contains(",") else { return [try RemoteAddress(parsing: text)] }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count <= maxHosts else {
            throw EmberError.invalidArgument("Invalid host list: \(parts.count) servers, at most \(maxHosts)")
        }
        return try parts.map { part in
            guard !part.isEmpty else {
                throw EmberError.invalidArgument("Invalid host list '\(printable(text))': an entry is empty (give host:port,host:port)")
            }
            return try RemoteAddress(parsing: String(part))
        }
    }
}

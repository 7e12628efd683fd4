/// Responsible for: the one error type every Ember layer throws, carrying a Firestore-style
/// status code and a message that names what was wrong.
///
///     throw EmberError(.invalidArgument, "Invalid document path 'a': needs an even number of segments")
public struct EmberError: Error, Equatable, CustomStringConvertible, Sendable {
    public let code: ErrorCode
    public let message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.name): \(message)" }

    public static func invalidArgument(_ message: String) -> EmberError { EmberError(.invalidArgument, message) }

    /// `error` as an EmberError (storage layers throw EmberErrors with the SQLite cause mapped to
    /// a code; anything else is internal).
    public static func storage(_ error: Error) -> EmberError {
        error as? EmberError ?? EmberError(.internal, "\(error)")
    }
}

/// Responsible for: the stable numeric error codes (gRPC / Firestore status codes) shared by the
/// Swift API, the C ABI (`EMBER_ERR_*`) and the Python exception classes.
public enum ErrorCode: Int32, Sendable, CaseIterable {
    case ok = 0
    case cancelled = 1
    case unknown = 2
    case invalidArgument = 3
    case deadlineExceeded = 4
    case notFound = 5
    case alreadyExists = 6
    case permissionDenied = 7
    case resourceExhausted = 8
    case failedPrecondition = 9
    case aborted = 10
    case outOfRange = 11
    case unimplemented = 12
    case `internal` = 13
    case unavailable = 14
    case dataLoss = 15
    case unauthenticated = 16

    public var name: String {
        switch self {
        case .ok: return "OK"
        case .cancelled: return "CANCELLED"
        case .unknown: return "UNKNOWN"
        case .invalidArgument: return "INVALID_ARGUMENT"
        case .deadlineExceeded: return "DEADLINE_EXCEEDED"
        case .notFound: return "NOT_FOUND"
        case .alreadyExists: return "ALREADY_EXISTS"
        case .permissionDenied: return "PERMISSION_DENIED"
        case .resourceExhausted: return "RESOURCE_EXHAUSTED"
        case .failedPrecondition: return "FAILED_PRECONDITION"
        case .aborted: return "ABORTED"
        case .outOfRange: return "OUT_OF_RANGE"
        case .unimplemented: return "UNIMPLEMENTED"
        case .internal: return "INTERNAL"
        case .unavailable: return "UNAVAILABLE"
        case .dataLoss: return "DATA_LOSS"
        case .unauthenticated: return "UNAUTHENTICATED"
        }
    }
}

import Foundation
import EmberModel

/// Responsible for: Firestore's timestamp as the Firebase Apple SDK shapes it (seconds and
/// nanoseconds; Ember keeps microsecond precision).
///
///     let t = Timestamp(date: Date()); t.dateValue()
public final class Timestamp: NSObject, Sendable {
    public let seconds: Int64
    public let nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds / 1000 * 1000
    }

    public convenience init(date: Date) {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        let m = EmberModel.Timestamp(micros: micros)
        self.init(seconds: m.seconds, nanoseconds: m.nanoseconds)
    }

    public static func timestamp() -> Timestamp { Timestamp(date: Date()) }
    public func dateValue() -> Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9) }

    var model: EmberModel.Timestamp { EmberModel.Timestamp(seconds: seconds, nanoseconds: nanoseconds) }
    convenience init(_ m: EmberModel.Timestamp) { self.init(seconds: m.seconds, nanoseconds: m.nanoseconds) }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let o = object as? Timestamp else { return false }
        return o.seconds == seconds && o.nanoseconds == nanoseconds
    }
    public override var hash: Int { seconds.hashValue ^ nanoseconds.hashValue }
    public override var description: String { "<FIRTimestamp: seconds=\(seconds) nanoseconds=\(nanoseconds)>" }
}

/// Responsible for: a geographic point value.
public final class GeoPoint: NSObject, Sendable {
    public let latitude: Double
    public let longitude: Double
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
    public override func isEqual(_ object: Any?) -> Bool {
        guard let o = object as? GeoPoint else { return false }
        return o.latitude == latitude && o.longitude == longitude
    }
    public override var hash: Int { latitude.hashValue ^ longitude.hashValue }
    public override var description: String { "<FIRGeoPoint: (\(latitude), \(longitude))>" }
}

/// Responsible for: a path to a field, for names that contain dots or other special characters.
///
///     FieldPath(["regions", "bay.area"]); FieldPath.documentID()
public final class FieldPath: NSObject, Sendable {
    let model: EmberModel.FieldPath?
    let error: EmberError?

    public init(_ fieldNames: [String]) {
        do { model = try EmberModel.FieldPath(fieldNames); error = nil } catch { model = nil; self.error = error as? EmberError }
    }

    init(model: EmberModel.FieldPath) { self.model = model; self.error = nil }

    public static func documentID() -> FieldPath { FieldPath(model: .documentId) }

    public override var description: String { model?.canonical ?? "<invalid field path>" }
}

/// Responsible for: the sentinel values of writes: server timestamp, delete, increment, array union/remove.
///
///     ref.updateData(["count": FieldValue.increment(Int64(1)), "old": FieldValue.delete()])
public final class FieldValue: NSObject {
    enum Kind {
        case delete
        case serverTimestamp
        case increment(EmberModel.Value)
        case arrayUnion([Any])
        case arrayRemove([Any])
    }
    let kind: Kind
    init(_ kind: Kind) { self.kind = kind }

    public static func delete() -> FieldValue { FieldValue(.delete) }
    public static func serverTimestamp() -> FieldValue { FieldValue(.serverTimestamp) }
    public static func increment(_ l: Int64) -> FieldValue { FieldValue(.increment(.int(l))) }
    public static func increment(_ d: Double) -> FieldValue { FieldValue(.increment(.double(d))) }
    public static func arrayUnion(_ elements: [Any]) -> FieldValue { FieldValue(.arrayUnion(elements)) }
    public static func arrayRemove(_ elements: [Any]) -> FieldValue { FieldValue(.arrayRemove(elements)) }
}

/// The error type of every failing call (a Firestore status code and a message).
public typealias FirestoreError = EmberModel.EmberError
public typealias FirestoreErrorCode = EmberModel.ErrorCode

/// The NSError domain of Ember's errors (Firebase's `FirestoreErrorDomain`).
public let FirestoreErrorDomain = "FIRFirestoreErrorDomain"

/// Ember's errors bridge to NSError as the Firebase SDK's do: domain `FirestoreErrorDomain`, the
/// Firestore status code as `code`, the message as `localizedDescription`. A transaction block
/// reports errors through `errorPointer` as NSError; this keeps their status code.
extension EmberError: CustomNSError {
    public static var errorDomain: String { FirestoreErrorDomain }
    public var errorCode: Int { Int(code.rawValue) }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }

    /// The Ember error an NSError of `FirestoreErrorDomain` stands for (nil for other domains).
    init?(bridged e: NSError) {
        guard e.domain == FirestoreErrorDomain, let c = ErrorCode(rawValue: Int32(truncatingIfNeeded: e.code)) else { return nil }
        self.init(c, e.localizedDescription)
    }
}

// ember/firestore/types.h: the small value types of the C++ API (after firebase-cpp-sdk's
// firebase/firestore/*.h): Error, Timestamp, GeoPoint, Source, MetadataChanges, SnapshotMetadata,
// Settings, and the shared owner of the C database handle.
//
//   if (error == Error::kErrorOk) { ... } else { std::cout << "Listen failed: " << error; }
#ifndef EMBER_FIRESTORE_TYPES_H
#define EMBER_FIRESTORE_TYPES_H

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "ember.h"

namespace ember {
namespace firestore {

/// Error codes, as firebase::firestore::Error (and the C ABI's EMBER_ERR_*: the same numbers).
/// An unscoped enum, as firebase's: `Error::kErrorOk`, and `std::cout << error` prints the number.
enum Error {
  kErrorOk = 0,
  kErrorNone = 0,
  kErrorCancelled = 1,
  kErrorUnknown = 2,
  kErrorInvalidArgument = 3,
  kErrorDeadlineExceeded = 4,
  kErrorNotFound = 5,
  kErrorAlreadyExists = 6,
  kErrorPermissionDenied = 7,
  kErrorResourceExhausted = 8,
  kErrorFailedPrecondition = 9,
  kErrorAborted = 10,
  kErrorOutOfRange = 11,
  kErrorUnimplemented = 12,
  kErrorInternal = 13,
  kErrorUnavailable = 14,
  kErrorDataLoss = 15,
  kErrorUnauthenticated = 16
};

/// "OK", "INVALID_ARGUMENT", ... (the C ABI's names).
inline const char* ErrorName(Error error) { return ember_error_code_name(static_cast<int32_t>(error)); }

/// A point in time: seconds since the Unix epoch and nanoseconds (Ember keeps microseconds).
class Timestamp {
 public:
  Timestamp() = default;
  Timestamp(int64_t seconds, int32_t nanoseconds) : seconds_(seconds), nanoseconds_(nanoseconds) {}
  int64_t seconds() const { return seconds_; }
  int32_t nanoseconds() const { return nanoseconds_; }
  std::string ToString() const {
    return "Timestamp(seconds=" + std::to_string(seconds_) + ", nanoseconds=" + std::to_string(nanoseconds_) + ")";
  }
  friend bool operator==(const Timestamp& a, const Timestamp& b) {
    return a.seconds_ == b.seconds_ && a.nanoseconds_ == b.nanoseconds_;
  }
  friend bool operator!=(const Timestamp& a, const Timestamp& b) { return !(a == b); }
  friend bool operator<(const Timestamp& a, const Timestamp& b) {
    return a.seconds_ < b.seconds_ || (a.seconds_ == b.seconds_ && a.nanoseconds_ < b.nanoseconds_);
  }
  friend std::ostream& operator<<(std::ostream& out, const Timestamp& t) { return out << t.ToString(); }

 private:
  int64_t seconds_ = 0;
  int32_t nanoseconds_ = 0;
};

/// A latitude and longitude.
class GeoPoint {
 public:
  GeoPoint() = default;
  GeoPoint(double latitude, double longitude) : latitude_(latitude), longitude_(longitude) {}
  double latitude() const { return latitude_; }
  double longitude() const { return longitude_; }
  std::string ToString() const {
    return "GeoPoint(latitude=" + std::to_string(latitude_) + ", longitude=" + std::to_string(longitude_) + ")";
  }
  friend bool operator==(const GeoPoint& a, const GeoPoint& b) {
    return a.latitude_ == b.latitude_ && a.longitude_ == b.longitude_;
  }
  friend bool operator!=(const GeoPoint& a, const GeoPoint& b) { return !(a == b); }
  friend std::ostream& operator<<(std::ostream& out, const GeoPoint& g) { return out << g.ToString(); }

 private:
  double latitude_ = 0;
  double longitude_ = 0;
};

/// Where a get reads from.
enum class Source { kDefault = EMBER_SOURCE_DEFAULT, kServer = EMBER_SOURCE_SERVER, kCache = EMBER_SOURCE_CACHE };

/// Whether a listener also sees changes of the snapshot metadata only.
enum class MetadataChanges { kExclude, kInclude };

/// Where a listener listens (SnapshotListenOptions' source).
enum class ListenSource { kDefault, kCache };

/// has_pending_writes: local writes not yet acknowledged are in the snapshot;
/// is_from_cache: the snapshot came from the local cache (offline, cache source, not yet confirmed).
class SnapshotMetadata {
 public:
  SnapshotMetadata() = default;
  SnapshotMetadata(bool has_pending_writes, bool is_from_cache)
      : has_pending_writes_(has_pending_writes), is_from_cache_(is_from_cache) {}
  bool has_pending_writes() const { return has_pending_writes_; }
  bool is_from_cache() const { return is_from_cache_; }
  std::string ToString() const {
    return std::string("SnapshotMetadata{has_pending_writes=") + (has_pending_writes_ ? "true" : "false") +
           ", is_from_cache=" + (is_from_cache_ ? "true" : "false") + "}";
  }
  friend bool operator==(const SnapshotMetadata& a, const SnapshotMetadata& b) {
    return a.has_pending_writes_ == b.has_pending_writes_ && a.is_from_cache_ == b.is_from_cache_;
  }
  friend bool operator!=(const SnapshotMetadata& a, const SnapshotMetadata& b) { return !(a == b); }
  friend std::ostream& operator<<(std::ostream& out, const SnapshotMetadata& m) { return out << m.ToString(); }

 private:
  bool has_pending_writes_ = false;
  bool is_from_cache_ = false;
};

/// Settings of Firestore::Create (ember_settings).
class Settings {
 public:
  static constexpr int64_t kCacheSizeUnlimited = EMBER_CACHE_SIZE_UNLIMITED;
  Settings() = default;
  /// Where the database lives; empty: in memory.
  const std::string& path() const { return path_; }
  void set_path(std::string path) { path_ = std::move(path); }
  bool is_persistence_enabled() const { return persistence_; }
  void set_persistence_enabled(bool enabled) { persistence_ = enabled; }
  int64_t cache_size_bytes() const { return cache_size_bytes_; }
  void set_cache_size_bytes(int64_t value) { cache_size_bytes_ = value; }
  /// The server the documents sync with, "host:port" (`ember serve`, the Firestore emulator);
  /// empty (Ember's default; firebase-cpp's is firestore.googleapis.com): the in-process
  /// backend.
  const std::string& host() const { return host_; }
  void set_host(std::string host) { host_ = std::move(host); }
  /// The server the tree (ember::database) syncs with, "host:port": the tree port of `ember
  /// serve` (--database-port, 9000 by default) or any Realtime Database realtime-protocol
  /// server (firebase-cpp: Database::UseEmulator(host, port)). TLS, its CA file and the auth
  /// token are those of `host`. Empty: the tree stays with the in-process backend.
  const std::string& database_host() const { return database_host_; }
  void set_database_host(std::string host) { database_host_ = std::move(host); }
  /// TLS to the host: true by default, as in firebase-cpp (`ember serve --tls-cert ...`); set
  /// false for a plaintext server (the emulator, an `ember serve` without --tls-cert):
  /// `settings.set_ssl_enabled(false)`. A server that cannot be reached is no error: writes
  /// stay pending and each failed attempt is one stderr line, "ember: could not reach the
  /// server at HOST (TLS on|off): ..." with the cause (naming this setting when TLS met a
  /// plaintext server).
  bool is_ssl_enabled() const { return ssl_enabled_; }
  void set_ssl_enabled(bool enabled) { ssl_enabled_ = enabled; }
  /// With TLS: a PEM file of the certificates the server's is verified against; empty: the
  /// system's roots.
  const std::string& ssl_ca_file() const { return ssl_ca_file_; }
  void set_ssl_ca_file(std::string path) { ssl_ca_file_ = std::move(path); }
  /// The caller's ID token (a JWT) sent as `authorization: Bearer` on every call, for a server
  /// whose security rules decide by request.auth; empty: anonymous.
  const std::string& auth_token() const { return auth_token_; }
  void set_auth_token(std::string token) { auth_token_ = std::move(token); }

 private:
  std::string path_;
  bool persistence_ = false;
  int64_t cache_size_bytes_ = EMBER_CACHE_SIZE_DEFAULT;
  std::string host_;
  std::string database_host_;
  bool ssl_enabled_ = true;
  std::string ssl_ca_file_;
  std::string auth_token_;
};

namespace internal {

/// Owns the C database handle; shared by everything made from one Firestore (references,
/// queries, snapshots), released when the last of them goes. Firestore's destructor closes it.
struct DbHandle {
  explicit DbHandle(ember_db* d) : db(d) {}
  ~DbHandle() { ember_db_release(db); }
  DbHandle(const DbHandle&) = delete;
  DbHandle& operator=(const DbHandle&) = delete;
  ember_db* db;
};
using Db = std::shared_ptr<DbHandle>;

inline ember_error NewError() {
  ember_error e;
  e.code = EMBER_OK;
  e.message[0] = '\0';
  return e;
}

inline ember_error MakeError(Error code, const std::string& message) {
  ember_error e;
  e.code = static_cast<int32_t>(code);
  size_t n = message.size() < EMBER_ERROR_MESSAGE_SIZE - 1 ? message.size() : EMBER_ERROR_MESSAGE_SIZE - 1;
  message.copy(e.message, n);
  e.message[n] = '\0';
  return e;
}

}  // namespace internal
}  // namespace firestore
}  // namespace ember

#endif

// ember/firestore/snapshots.h: what reads and listeners hand back (after firebase-cpp-sdk):
// DocumentSnapshot, DocumentChange, QuerySnapshot, and ListenerRegistration. Snapshots keep a
// reference on the C snapshot (ember_*_retain/_release): copies are cheap and may outlive the
// callback that received them.
//
//   for (const DocumentChange& dc : snapshot.DocumentChanges())
//     if (dc.type() == DocumentChange::Type::kAdded) std::cout << dc.document().id() << '\n';
#ifndef EMBER_FIRESTORE_SNAPSHOTS_H
#define EMBER_FIRESTORE_SNAPSHOTS_H

#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "field_value.h"
#include "types.h"

namespace ember {
namespace firestore {

class DocumentReference;

/// One document as read (it may not exist). An invalid snapshot (is_valid() false) is what a
/// listener receives alongside an error.
class DocumentSnapshot {
 public:
  /// How to read a pending ServerTimestamp: Ember reads it as null (kNone) in every case.
  enum class ServerTimestampBehavior { kNone, kEstimate, kPrevious, kDefault = kNone };

  DocumentSnapshot() = default;
  /// Takes a reference on `doc` (owned or borrowed).
  DocumentSnapshot(const ember_document* doc, internal::Db db) : doc_(ember_document_retain(doc)), db_(std::move(db)) {}
  DocumentSnapshot(const DocumentSnapshot& o) : doc_(ember_document_retain(o.doc_)), db_(o.db_) {}
  DocumentSnapshot(DocumentSnapshot&& o) noexcept : doc_(o.doc_), db_(std::move(o.db_)) { o.doc_ = nullptr; }
  DocumentSnapshot& operator=(DocumentSnapshot o) noexcept {
    std::swap(doc_, o.doc_);
    std::swap(db_, o.db_);
    return *this;
  }
  ~DocumentSnapshot() { ember_document_release(doc_); }

  bool is_valid() const { return doc_ != nullptr; }
  /// The document's id ("SF"); "" when invalid.
  std::string id() const { return doc_ ? ember_document_id(doc_) : ""; }
  /// Ember's addition: the full path ("cities/SF").
  std::string path() const { return doc_ ? ember_document_path(doc_) : ""; }
  DocumentReference reference() const;
  SnapshotMetadata metadata() const {
    if (!doc_) return SnapshotMetadata();
    return SnapshotMetadata(ember_document_has_pending_writes(doc_), ember_document_is_from_cache(doc_));
  }
  bool exists() const { return doc_ && ember_document_exists(doc_); }

  /// Every field; empty when the document does not exist.
  MapFieldValue GetData(ServerTimestampBehavior = ServerTimestampBehavior::kDefault) const {
    if (!exists()) return MapFieldValue();
    size_t len = 0;
    char* bytes = ember_document_data(doc_, EMBER_FORMAT_MSGPACK, &len, nullptr);
    FieldValue v = bytes ? FieldValue::FromMsgpack(bytes, len, db_) : FieldValue();
    ember_free(bytes);
    return v.map_value();
  }
  /// One field by field path ("name", "address.city"); an invalid FieldValue when absent.
  FieldValue Get(const std::string& field, ServerTimestampBehavior = ServerTimestampBehavior::kDefault) const {
    if (!exists()) return FieldValue();
    size_t len = 0;
    char* bytes = ember_document_get(doc_, field.c_str(), EMBER_FORMAT_MSGPACK, &len, nullptr);
    FieldValue v = bytes ? FieldValue::FromMsgpack(bytes, len, db_) : FieldValue();
    ember_free(bytes);
    return v;
  }
  FieldValue Get(const char* field) const { return Get(std::string(field)); }

  /// "DocumentSnapshot(id=SF, metadata=SnapshotMetadata{...}, doc={name: 'San Francisco'})".
  std::string ToString() const {
    if (!doc_) return "DocumentSnapshot(invalid)";
    std::string out = "DocumentSnapshot(id=" + id() + ", metadata=" + metadata().ToString() + ", doc=";
    out += exists() ? FieldValue::Map(GetData()).ToString() : "null";
    return out + ")";
  }
  friend std::ostream& operator<<(std::ostream& out, const DocumentSnapshot& s) { return out << s.ToString(); }

  /// The C snapshot (borrowed): for mixing with the C ABI.
  const ember_document* handle() const { return doc_; }

 private:
  const ember_document* doc_ = nullptr;
  internal::Db db_;
};

/// One change between two snapshots of a query.
class DocumentChange {
 public:
  enum class Type { kAdded, kModified, kRemoved };
  /// The index of a document that was not (old_index of kAdded) or is no more (new_index of
  /// kRemoved) in the snapshot.
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  DocumentChange() = default;
  DocumentChange(Type type, DocumentSnapshot document, std::size_t old_index, std::size_t new_index)
      : type_(type), document_(std::move(document)), old_index_(old_index), new_index_(new_index) {}

  Type type() const { return type_; }
  DocumentSnapshot document() const { return document_; }
  std::size_t old_index() const { return old_index_; }
  std::size_t new_index() const { return new_index_; }
  bool is_valid() const { return document_.is_valid(); }

 private:
  Type type_ = Type::kAdded;
  DocumentSnapshot document_;
  std::size_t old_index_ = npos;
  std::size_t new_index_ = npos;
};

/// The result of a query: its documents in query order and the changes since the last one.
class QuerySnapshot {
 public:
  QuerySnapshot() = default;
  QuerySnapshot(const ember_snapshot* s, internal::Db db) : s_(ember_snapshot_retain(s)), db_(std::move(db)) {}
  QuerySnapshot(const QuerySnapshot& o) : s_(ember_snapshot_retain(o.s_)), db_(o.db_) {}
  QuerySnapshot(QuerySnapshot&& o) noexcept : s_(o.s_), db_(std::move(o.db_)) { o.s_ = nullptr; }
  QuerySnapshot& operator=(QuerySnapshot o) noexcept {
    std::swap(s_, o.s_);
    std::swap(db_, o.db_);
    return *this;
  }
  ~QuerySnapshot() { ember_snapshot_release(s_); }

  bool is_valid() const { return s_ != nullptr; }
  std::size_t size() const { return s_ ? ember_snapshot_size(s_) : 0; }
  bool empty() const { return size() == 0; }
  SnapshotMetadata metadata() const {
    if (!s_) return SnapshotMetadata();
    return SnapshotMetadata(ember_snapshot_has_pending_writes(s_), ember_snapshot_is_from_cache(s_));
  }
  std::vector<DocumentSnapshot> documents() const {
    std::vector<DocumentSnapshot> out;
    for (std::size_t i = 0; i < size(); i++) out.emplace_back(ember_snapshot_document(s_, i), db_);
    return out;
  }
  /// The changes since the listener's previous snapshot (all "added" for the first one). Ember
  /// lists the changes its listener raised: metadata-only changes appear only for a listener that
  /// includes metadata changes, whatever the argument says.
  std::vector<DocumentChange> DocumentChanges(MetadataChanges = MetadataChanges::kExclude) const {
    std::vector<DocumentChange> out;
    std::size_t n = s_ ? ember_snapshot_change_count(s_) : 0;
    for (std::size_t i = 0; i < n; i++) {
      ember_document_change c;
      if (!ember_snapshot_change(s_, i, &c, nullptr)) break;
      DocumentChange::Type t = c.type == EMBER_CHANGE_ADDED ? DocumentChange::Type::kAdded
                               : c.type == EMBER_CHANGE_MODIFIED ? DocumentChange::Type::kModified
                                                                 : DocumentChange::Type::kRemoved;
      out.emplace_back(t, DocumentSnapshot(c.document, db_), c.old_index, c.new_index);
    }
    return out;
  }

  const ember_snapshot* handle() const { return s_; }

 private:
  const ember_snapshot* s_ = nullptr;
  internal::Db db_;
};

/// A started listener. Remove() stops it: idempotent, and once it returns the callback is not
/// running and never runs again (from inside the callback: it runs no more after it returns).
/// As in firebase, destroying (or copying) a registration does not remove the listener; it ends
/// when removed, after an error, or when its Firestore is destroyed.
class ListenerRegistration {
 public:
  ListenerRegistration() = default;
  explicit ListenerRegistration(ember_listener_token token) : token_(token) {}
  void Remove() {
    ember_listener_token t = token_;
    token_ = 0;
    ember_listener_remove(t);
  }
  bool is_valid() const { return token_ != 0; }
  /// The C token (0 once removed through this object).
  ember_listener_token token() const { return token_; }

 private:
  ember_listener_token token_ = 0;
};

}  // namespace firestore
}  // namespace ember

#endif

// ember/firestore/references.h: DocumentReference, Query and CollectionReference (after
// firebase-cpp-sdk): reads, writes returning Future<void>, and snapshot listeners taking
// std::function<void(const Snapshot&, Error, const std::string&)>.
//
//   DocumentReference doc_ref = db->Collection("cities").Document("SF");
//   ListenerRegistration r = doc_ref.AddSnapshotListener(MetadataChanges::kInclude,
//       [](const DocumentSnapshot& snapshot, Error error, const std::string& message) { ... });
//   r.Remove();
//
// Errors follow firebase-cpp: no exceptions; a refused call completes its Future with the error
// code and message, and a listener that cannot start gets the error in its callback (once, on
// the event thread) and never runs again. An invalid query built step by step keeps the first
// error and reports it when run.
#ifndef EMBER_FIRESTORE_REFERENCES_H
#define EMBER_FIRESTORE_REFERENCES_H

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "field_value.h"
#include "future.h"
#include "snapshots.h"
#include "types.h"

namespace ember {
namespace firestore {

class CollectionReference;
class Query;

/// How Set writes: overwrite (default), merge every given field, or merge the listed fields.
class SetOptions {
 public:
  enum class Type { kOverwrite, kMergeAll, kMergeSpecific };
  SetOptions() = default;
  static SetOptions Merge() { SetOptions o; o.type_ = Type::kMergeAll; return o; }
  static SetOptions MergeFields(const std::vector<std::string>& fields) {
    SetOptions o;
    o.type_ = Type::kMergeSpecific;
    o.fields_ = fields;
    return o;
  }
  Type type() const { return type_; }
  const std::vector<std::string>& fields() const { return fields_; }

 private:
  Type type_ = Type::kOverwrite;
  std::vector<std::string> fields_;
};

namespace internal {

template <typename Snapshot>
using Listener = std::function<void(const Snapshot&, Error, const std::string&)>;

/// A listener's context in the C ABI: the user's function and the database (for snapshots).
template <typename Snapshot>
struct ListenerContext {
  Listener<Snapshot> fn;
  Db db;
};

template <typename Snapshot>
inline void FreeListener(void* ctx) noexcept { delete static_cast<ListenerContext<Snapshot>*>(ctx); }

inline void OnDocument(void* ctx, const ember_document* doc, const ember_error* error) noexcept {
  auto* c = static_cast<ListenerContext<DocumentSnapshot>*>(ctx);
  if (error) c->fn(DocumentSnapshot(), static_cast<Error>(error->code), error->message);
  else c->fn(DocumentSnapshot(doc, c->db), kErrorOk, std::string());
}

inline void OnQuery(void* ctx, const ember_snapshot* snapshot, const ember_error* error) noexcept {
  auto* c = static_cast<ListenerContext<QuerySnapshot>*>(ctx);
  if (error) c->fn(QuerySnapshot(), static_cast<Error>(error->code), error->message);
  else c->fn(QuerySnapshot(snapshot, c->db), kErrorOk, std::string());
}

/// Hands a listener that could not start its error on the event thread, as a failed listen
/// would (through a one-shot cache-only listener, which answers at once); on the calling thread
/// when the database cannot take even that (closed).
template <typename Snapshot>
struct FailedListen {
  Listener<Snapshot> fn;
  ember_error error;
  std::mutex mu;                    // held while the token is being set
  ember_listener_token token = 0;
  bool fired = false;               // event thread only
  static void Fire(void* ctx, const ember_document*, const ember_error*) noexcept {
    auto* f = static_cast<FailedListen*>(ctx);
    if (f->fired) return;
    f->fired = true;
    ember_listener_token t;
    {
      std::lock_guard<std::mutex> lock(f->mu);
      t = f->token;
    }
    ember_listener_remove(t);
    f->fn(Snapshot(), static_cast<Error>(f->error.code), f->error.message);
  }
  static void Free(void* ctx) noexcept { delete static_cast<FailedListen*>(ctx); }
};

template <typename Snapshot>
ListenerRegistration DeliverError(const Db& db, Listener<Snapshot> fn, const ember_error& error) {
  auto* f = new FailedListen<Snapshot>();
  f->fn = std::move(fn);
  f->error = error;
  ember_error err = NewError();
  ember_listener_token t = 0;
  {
    std::lock_guard<std::mutex> lock(f->mu);
    if (db)
      t = ember_doc_listen(db->db, "_ember_/listen-error", EMBER_LISTEN_SOURCE_CACHE, &FailedListen<Snapshot>::Fire,
                           f, &FailedListen<Snapshot>::Free, &err);
    f->token = t;
  }
  if (t == 0) {
    f->fn(Snapshot(), static_cast<Error>(error.code), error.message);
    delete f;
    return ListenerRegistration();
  }
  return ListenerRegistration(t);
}

/// The C calls of one write kind, shared by documents, batches and transactions.
/// True when `s` can cross the C ABI as a NUL-terminated string. Otherwise fills *err
/// (kErrorInvalidArgument): C would read only what precedes the NUL (another document).
inline bool NoNul(const std::string& s, const char* what, ember_error* err) {
  if (s.find('\0') == std::string::npos) return true;
  *err = MakeError(kErrorInvalidArgument, std::string(what) + " must not contain a NUL character");
  return false;
}

/// `settings` as the C ABI's ember_settings (its strings BORROWED from `settings`); false with
/// `err` filled when a string holds a NUL (C would read only what precedes it).
inline bool CSettings(const Settings& settings, ember_settings* s, ember_error* err) {
  ember_settings_init(s);
  s->path = settings.path().empty() ? nullptr : settings.path().c_str();
  s->persistence = settings.is_persistence_enabled();
  s->cache_size_bytes = settings.cache_size_bytes();
  s->host = settings.host().empty() ? nullptr : settings.host().c_str();
  s->ssl = settings.is_ssl_enabled();
  s->ssl_ca_file = settings.ssl_ca_file().empty() ? nullptr : settings.ssl_ca_file().c_str();
  s->auth_token = settings.auth_token().empty() ? nullptr : settings.auth_token().c_str();
  s->database_host = settings.database_host().empty() ? nullptr : settings.database_host().c_str();
  return NoNul(settings.path(), "Settings path", err) && NoNul(settings.host(), "Settings host", err) &&
         NoNul(settings.database_host(), "Settings database_host", err) &&
         NoNul(settings.ssl_ca_file(), "Settings ssl_ca_file", err) && NoNul(settings.auth_token(), "Settings auth_token", err);
}

inline bool PayloadOk(const WritePayload& p, ember_error* err) {
  if (p.error.empty()) return true;
  *err = MakeError(kErrorInvalidArgument, p.error);
  return false;
}

inline std::vector<const char*> FieldList(const SetOptions& options) {
  std::vector<const char*> out;
  for (const auto& f : options.fields()) out.push_back(f.c_str());
  return out;
}

inline WritePayload SetPayload(const MapFieldValue& data, const SetOptions& options) {
  return SplitWrite(data, false, options.type() != SetOptions::Type::kOverwrite);
}

}  // namespace internal

/// A document's location ("cities/SF"); reads, writes and listens to it.
class DocumentReference {
 public:
  DocumentReference() = default;
  DocumentReference(internal::Db db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}

  bool is_valid() const { return db_ != nullptr; }
  /// The last segment of the path ("SF").
  std::string id() const { return path_.substr(path_.rfind('/') + 1); }
  const std::string& path() const { return path_; }
  CollectionReference Parent() const;
  CollectionReference Collection(const std::string& collection_path) const;

  Future<DocumentSnapshot> Get(Source source = Source::kDefault) const {
    ember_error err = internal::NewError();
    if (!internal::NoNul(path_, "document path", &err)) return internal::Failed<DocumentSnapshot>(err);
    ember_document* doc = ember_doc_get(Raw(), path_.c_str(), static_cast<ember_source>(source), &err);
    if (!doc) return internal::Failed<DocumentSnapshot>(err);
    internal::Promise<DocumentSnapshot> p;
    p.Succeed(DocumentSnapshot(doc, db_));
    ember_document_release(doc);
    return p.future();
  }

  /// Writes the document (SetOptions: overwrite, merge, merge fields). Completes when the
  /// backend acknowledges (listeners see the write at once, with has_pending_writes).
  Future<void> Set(const MapFieldValue& data, const SetOptions& options = SetOptions()) const {
    internal::WritePayload p = internal::SetPayload(data, options);
    std::vector<const char*> fields = internal::FieldList(options);
    return internal::Write([&](ember_write_cb cb, void* ctx, ember_error* err) {
      if (!internal::PayloadOk(p, err) || !internal::NoNul(path_, "document path", err)) return false;
      if (options.type() == SetOptions::Type::kOverwrite)
        return ember_doc_set(Raw(), path_.c_str(), EMBER_FORMAT_MSGPACK, p.data.data(), p.data.size(),
                             p.transforms.empty() ? nullptr : p.transforms.data(), p.transforms.size(), cb, ctx, err);
      return ember_doc_merge(Raw(), path_.c_str(), EMBER_FORMAT_MSGPACK, p.data.data(), p.data.size(),
                             p.transforms.empty() ? nullptr : p.transforms.data(), p.transforms.size(),
                             fields.empty() ? nullptr : fields.data(), fields.size(), cb, ctx, err);
    });
  }

  /// Updates fields of an existing document; the keys are field paths ("address.city").
  /// Fails with kErrorNotFound when the document does not exist.
  Future<void> Update(const MapFieldValue& data) const {
    internal::WritePayload p = internal::SplitWrite(data, true, false);  // an update replaces a map value whole
    return internal::Write([&](ember_write_cb cb, void* ctx, ember_error* err) {
      if (!internal::PayloadOk(p, err) || !internal::NoNul(path_, "document path", err)) return false;
      return ember_doc_update(Raw(), path_.c_str(), EMBER_FORMAT_MSGPACK, p.data.data(), p.data.size(),
                              p.transforms.empty() ? nullptr : p.transforms.data(), p.transforms.size(), cb, ctx, err);
    });
  }

  Future<void> Delete() const {
    return internal::Write([&](ember_write_cb cb, void* ctx, ember_error* err) {
      if (!internal::NoNul(path_, "document path", err)) return false;
      return ember_doc_delete(Raw(), path_.c_str(), cb, ctx, err);
    });
  }

  /// Listens to the document: the current state first, then every change.
  /// @warning The callback runs on Ember's event thread, one at a time; it may call into Ember,
  /// including Remove() of its own registration.
  ListenerRegistration AddSnapshotListener(internal::Listener<DocumentSnapshot> callback) const {
    return AddSnapshotListener(MetadataChanges::kExclude, std::move(callback));
  }
  ListenerRegistration AddSnapshotListener(MetadataChanges metadata_changes,
                                           internal::Listener<DocumentSnapshot> callback) const {
    return Listen(metadata_changes == MetadataChanges::kInclude ? EMBER_LISTEN_INCLUDE_METADATA_CHANGES : 0,
                  std::move(callback));
  }
  /// Ember's addition (SnapshotListenOptions): metadata changes and source in one call.
  ListenerRegistration AddSnapshotListener(MetadataChanges metadata_changes, ListenSource source,
                                           internal::Listener<DocumentSnapshot> callback) const {
    uint32_t flags = (metadata_changes == MetadataChanges::kInclude ? EMBER_LISTEN_INCLUDE_METADATA_CHANGES : 0) |
                     (source == ListenSource::kCache ? EMBER_LISTEN_SOURCE_CACHE : 0);
    return Listen(flags, std::move(callback));
  }

  friend bool operator==(const DocumentReference& a, const DocumentReference& b) {
    return a.db_ == b.db_ && a.path_ == b.path_;
  }
  friend bool operator!=(const DocumentReference& a, const DocumentReference& b) { return !(a == b); }
  std::string ToString() const { return "DocumentReference(" + path_ + ")"; }
  friend std::ostream& operator<<(std::ostream& out, const DocumentReference& r) { return out << r.ToString(); }

  const internal::Db& db() const { return db_; }

 private:
  ember_db* Raw() const { return db_ ? db_->db : nullptr; }
  ListenerRegistration Listen(uint32_t flags, internal::Listener<DocumentSnapshot> callback) const {
    ember_error err = internal::NewError();
    if (!internal::NoNul(path_, "document path", &err)) return internal::DeliverError(db_, std::move(callback), err);
    auto* ctx = new internal::ListenerContext<DocumentSnapshot>{std::move(callback), db_};
    ember_listener_token t = ember_doc_listen(Raw(), path_.c_str(), flags, &internal::OnDocument, ctx,
                                              &internal::FreeListener<DocumentSnapshot>, &err);
    if (t != 0) return ListenerRegistration(t);
    internal::Listener<DocumentSnapshot> fn = std::move(ctx->fn);
    delete ctx;
    return internal::DeliverError(db_, std::move(fn), err);
  }

  internal::Db db_;
  std::string path_;
};

/// A query: filters, order, limits and cursors over a collection (or a collection group).
/// Each builder call returns a new Query.
class Query {
 public:
  enum class Direction { kAscending, kDescending };

  Query() = default;
  virtual ~Query() = default;
  Query(const Query&) = default;
  Query& operator=(const Query&) = default;
  /// Ember's addition: takes ownership of a C query `q` (NULL with `err` saying why it could not
  /// be made: the Query then reports that error when run).
  Query(internal::Db db, ember_query* q, const ember_error& err)
      : db_(std::move(db)), q_(q ? std::make_shared<Handle>(q) : nullptr), err_(err) {}

  bool is_valid() const { return q_ != nullptr || err_.code != EMBER_OK; }

  Query WhereEqualTo(const std::string& field, const FieldValue& value) const { return Where(field, EMBER_OP_EQUAL, value); }
  Query WhereNotEqualTo(const std::string& field, const FieldValue& value) const { return Where(field, EMBER_OP_NOT_EQUAL, value); }
  Query WhereLessThan(const std::string& field, const FieldValue& value) const { return Where(field, EMBER_OP_LESS_THAN, value); }
  Query WhereLessThanOrEqualTo(const std::string& field, const FieldValue& value) const { return Where(field, EMBER_OP_LESS_THAN_OR_EQUAL, value); }
  Query WhereGreaterThan(const std::string& field, const FieldValue& value) const { return Where(field, EMBER_OP_GREATER_THAN, value); }
  Query WhereGreaterThanOrEqualTo(const std::string& field, const FieldValue& value) const { return Where(field, EMBER_OP_GREATER_THAN_OR_EQUAL, value); }
  Query WhereArrayContains(const std::string& field, const FieldValue& value) const { return Where(field, EMBER_OP_ARRAY_CONTAINS, value); }
  Query WhereArrayContainsAny(const std::string& field, const std::vector<FieldValue>& values) const { return Where(field, EMBER_OP_ARRAY_CONTAINS_ANY, FieldValue::Array(values)); }
  Query WhereIn(const std::string& field, const std::vector<FieldValue>& values) const { return Where(field, EMBER_OP_IN, FieldValue::Array(values)); }
  Query WhereNotIn(const std::string& field, const std::vector<FieldValue>& values) const { return Where(field, EMBER_OP_NOT_IN, FieldValue::Array(values)); }

  Query OrderBy(const std::string& field, Direction direction = Direction::kAscending) const {
    return Step([&](ember_query* q, ember_error* e) {
      if (!internal::NoNul(field, "field path", e)) return false;
      return ember_query_order_by(q, field.c_str(), direction == Direction::kDescending, e);
    });
  }
  Query Limit(int32_t limit) const {
    return Step([&](ember_query* q, ember_error* e) { return ember_query_limit(q, limit, e); });
  }
  Query LimitToLast(int32_t limit) const {
    return Step([&](ember_query* q, ember_error* e) { return ember_query_limit_to_last(q, limit, e); });
  }
  Query StartAt(const DocumentSnapshot& snapshot) const { return Cursor(EMBER_CURSOR_START_AT, snapshot); }
  Query StartAt(const std::vector<FieldValue>& values) const { return Cursor(EMBER_CURSOR_START_AT, values); }
  Query StartAfter(const DocumentSnapshot& snapshot) const { return Cursor(EMBER_CURSOR_START_AFTER, snapshot); }
  Query StartAfter(const std::vector<FieldValue>& values) const { return Cursor(EMBER_CURSOR_START_AFTER, values); }
  Query EndBefore(const DocumentSnapshot& snapshot) const { return Cursor(EMBER_CURSOR_END_BEFORE, snapshot); }
  Query EndBefore(const std::vector<FieldValue>& values) const { return Cursor(EMBER_CURSOR_END_BEFORE, values); }
  Query EndAt(const DocumentSnapshot& snapshot) const { return Cursor(EMBER_CURSOR_END_AT, snapshot); }
  Query EndAt(const std::vector<FieldValue>& values) const { return Cursor(EMBER_CURSOR_END_AT, values); }

  /// Runs the query once (blocking the caller until the answer; the Future is complete).
  Future<QuerySnapshot> Get(Source source = Source::kDefault) const {
    if (err_.code != EMBER_OK) return internal::Failed<QuerySnapshot>(err_);
    ember_error err = internal::NewError();
    ember_snapshot* s = ember_query_get(q_ ? q_->q : nullptr, static_cast<ember_source>(source), &err);
    if (!s) return internal::Failed<QuerySnapshot>(err);
    internal::Promise<QuerySnapshot> p;
    p.Succeed(QuerySnapshot(s, db_));
    ember_snapshot_release(s);
    return p.future();
  }

  /// Ember's addition (firebase: Count().Get()): the number of matching documents at the backend.
  Future<int64_t> Count() const {
    if (err_.code != EMBER_OK) return internal::Failed<int64_t>(err_);
    ember_error err = internal::NewError();
    int64_t n = 0;
    if (!ember_query_count(q_ ? q_->q : nullptr, &n, &err)) return internal::Failed<int64_t>(err);
    internal::Promise<int64_t> p;
    p.Succeed(std::move(n));
    return p.future();
  }

  /// Listens to the query: its result first, then every change.
  /// @warning The callback runs on Ember's event thread, one at a time; it may call into Ember,
  /// including Remove() of its own registration.
  ListenerRegistration AddSnapshotListener(internal::Listener<QuerySnapshot> callback) const {
    return AddSnapshotListener(MetadataChanges::kExclude, std::move(callback));
  }
  ListenerRegistration AddSnapshotListener(MetadataChanges metadata_changes,
                                           internal::Listener<QuerySnapshot> callback) const {
    return Listen(metadata_changes == MetadataChanges::kInclude ? EMBER_LISTEN_INCLUDE_METADATA_CHANGES : 0,
                  std::move(callback));
  }
  /// Ember's addition (SnapshotListenOptions): metadata changes and source in one call.
  ListenerRegistration AddSnapshotListener(MetadataChanges metadata_changes, ListenSource source,
                                           internal::Listener<QuerySnapshot> callback) const {
    uint32_t flags = (metadata_changes == MetadataChanges::kInclude ? EMBER_LISTEN_INCLUDE_METADATA_CHANGES : 0) |
                     (source == ListenSource::kCache ? EMBER_LISTEN_SOURCE_CACHE : 0);
    return Listen(flags, std::move(callback));
  }

  /// The first error of the builder calls (kErrorOk when the query is well formed so far).
  Error error() const { return static_cast<Error>(err_.code); }
  std::string error_message() const { return err_.message; }

 protected:
  struct Handle {
    explicit Handle(ember_query* query) : q(query) {}
    ~Handle() { ember_query_release(q); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ember_query* q;
  };

  internal::Db db_;

 private:
  template <typename F>
  Query Step(F&& f) const {
    if (err_.code != EMBER_OK || !q_) return *this;
    ember_query* copy = ember_query_copy(q_->q);
    ember_error err = internal::NewError();
    if (!f(copy, &err)) {
      ember_query_release(copy);
      return Query(db_, nullptr, err);
    }
    return Query(db_, copy, err);
  }
  Query Where(const std::string& field, ember_op op, const FieldValue& value) const {
    internal::MsgpackWriter w;
    value.Encode(w);
    return Step([&](ember_query* q, ember_error* e) {
      if (value.is_sentinel() || !value.is_valid()) {
        *e = internal::MakeError(kErrorInvalidArgument, "Invalid query. A FieldValue sentinel or invalid value is not a filter operand");
        return false;
      }
      if (w.too_deep) { *e = internal::MakeError(kErrorInvalidArgument, "Invalid query. The value is nested too deeply"); return false; }
      if (!internal::NoNul(field, "field path", e)) return false;
      return ember_query_where(q, field.c_str(), op, EMBER_FORMAT_MSGPACK, w.bytes.data(), w.bytes.size(), e);
    });
  }
  Query Cursor(ember_cursor cursor, const DocumentSnapshot& snapshot) const {
    return Step([&](ember_query* q, ember_error* e) { return ember_query_cursor_document(q, cursor, snapshot.handle(), e); });
  }
  Query Cursor(ember_cursor cursor, const std::vector<FieldValue>& values) const {
    internal::MsgpackWriter w;
    FieldValue::Array(values).Encode(w);
    return Step([&](ember_query* q, ember_error* e) {
      if (w.too_deep) { *e = internal::MakeError(kErrorInvalidArgument, "Invalid query. A cursor value is nested too deeply"); return false; }
      return ember_query_cursor(q, cursor, EMBER_FORMAT_MSGPACK, w.bytes.data(), w.bytes.size(), e);
    });
  }
  ListenerRegistration Listen(uint32_t flags, internal::Listener<QuerySnapshot> callback) const {
    ember_error err = err_;
    if (err.code == EMBER_OK) {
      auto* ctx = new internal::ListenerContext<QuerySnapshot>{std::move(callback), db_};
      ember_listener_token t = ember_query_listen(q_ ? q_->q : nullptr, flags, &internal::OnQuery, ctx,
                                                  &internal::FreeListener<QuerySnapshot>, &err);
      if (t != 0) return ListenerRegistration(t);
      callback = std::move(ctx->fn);
      delete ctx;
    }
    return internal::DeliverError(db_, std::move(callback), err);
  }

  std::shared_ptr<Handle> q_;
  ember_error err_ = internal::NewError();
};

/// A collection ("cities", "cities/SF/landmarks"): a Query over all its documents, and the
/// factory of its documents' references.
class CollectionReference : public Query {
 public:
  CollectionReference() = default;
  CollectionReference(internal::Db db, std::string path) : Query(Make(db, path)), path_(std::move(path)) {}

  std::string id() const { return path_.substr(path_.rfind('/') + 1); }
  const std::string& path() const { return path_; }
  /// The document holding this subcollection; an invalid reference for a root collection.
  DocumentReference Parent() const {
    size_t slash = path_.rfind('/');
    if (slash == std::string::npos) return DocumentReference();
    return DocumentReference(db_, path_.substr(0, slash));
  }
  DocumentReference Document(const std::string& document_path) const {
    return DocumentReference(db_, path_ + "/" + document_path);
  }
  /// A new document with a random id.
  DocumentReference Document() const {
    char id[21];
    ember_auto_id(id);
    return Document(id);
  }
  /// Writes a new document with a random id; the Future's result is its reference.
  Future<DocumentReference> Add(const MapFieldValue& data) const {
    DocumentReference doc = Document();
    internal::Promise<DocumentReference> p;
    doc.Set(data).OnCompletion([p, doc](const Future<void>& f) {
      if (f.error() == kErrorOk) p.Succeed(DocumentReference(doc)); else p.Fail(f.error(), f.error_message());
    });
    return p.future();
  }

 private:
  static Query Make(const internal::Db& db, const std::string& path) {
    ember_error err = internal::NewError();
    if (!internal::NoNul(path, "collection path", &err)) return Query(db, nullptr, err);
    ember_query* q = ember_query_new(db ? db->db : nullptr, path.c_str(), &err);
    return Query(db, q, err);
  }
  std::string path_;
};

inline CollectionReference DocumentReference::Parent() const {
  return CollectionReference(db_, path_.substr(0, path_.rfind('/')));
}
inline CollectionReference DocumentReference::Collection(const std::string& collection_path) const {
  return CollectionReference(db_, path_ + "/" + collection_path);
}
inline DocumentReference DocumentSnapshot::reference() const { return DocumentReference(db_, path()); }
inline FieldValue FieldValue::Reference(const DocumentReference& reference) {
  FieldValue v(Type::kReference);
  v.s_ = reference.path();
  v.db_ = reference.db();
  return v;
}
inline DocumentReference FieldValue::reference_value() const {
  return is_reference() ? DocumentReference(db_, s_) : DocumentReference();
}

}  // namespace firestore
}  // namespace ember

#endif

// ember/firestore/database.h: Firestore (the database), WriteBatch and Transaction (after
// firebase-cpp-sdk). A Firestore owns one ember_db: destroying it closes the database (every
// listener ends, unacknowledged writes complete with kErrorCancelled); references, queries and
// snapshots made from it stay safe to use and then fail with kErrorFailedPrecondition.
//
//   std::unique_ptr<Firestore> firestore = Firestore::Create();
//   Firestore* db = firestore.get();
//   db->Collection("cities").Document("SF").Set({{"name", FieldValue::String("San Francisco")}});
#ifndef EMBER_FIRESTORE_DATABASE_H
#define EMBER_FIRESTORE_DATABASE_H

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "field_value.h"
#include "future.h"
#include "references.h"
#include "snapshots.h"
#include "types.h"

namespace ember {
namespace firestore {

/// Up to 500 writes applied atomically by Commit(). Copies share the same batch. A refused write
/// (bad path, sentinel in an array...) is remembered and fails the commit.
class WriteBatch {
 public:
  WriteBatch() = default;
  explicit WriteBatch(ember_batch* batch, const ember_error& err)
      : b_(batch ? std::shared_ptr<ember_batch>(batch, &ember_batch_release) : nullptr),
        err_(std::make_shared<ember_error>(err)) {}

  WriteBatch& Set(const DocumentReference& document, const MapFieldValue& data, const SetOptions& options = SetOptions()) {
    internal::WritePayload p = internal::SetPayload(data, options);
    std::vector<const char*> fields = internal::FieldList(options);
    return Step([&](ember_batch* b, ember_error* e) {
      if (!internal::PayloadOk(p, e) || !internal::NoNul(document.path(), "document path", e)) return false;
      if (options.type() == SetOptions::Type::kOverwrite)
        return ember_batch_set(b, document.path().c_str(), EMBER_FORMAT_MSGPACK, p.data.data(), p.data.size(),
                               p.transforms.empty() ? nullptr : p.transforms.data(), p.transforms.size(), e);
      return ember_batch_merge(b, document.path().c_str(), EMBER_FORMAT_MSGPACK, p.data.data(), p.data.size(),
                               p.transforms.empty() ? nullptr : p.transforms.data(), p.transforms.size(),
                               fields.empty() ? nullptr : fields.data(), fields.size(), e);
    });
  }
  WriteBatch& Update(const DocumentReference& document, const MapFieldValue& data) {
    internal::WritePayload p = internal::SplitWrite(data, true, false);  // an update replaces a map value whole
    return Step([&](ember_batch* b, ember_error* e) {
      if (!internal::PayloadOk(p, e) || !internal::NoNul(document.path(), "document path", e)) return false;
      return ember_batch_update(b, document.path().c_str(), EMBER_FORMAT_MSGPACK, p.data.data(), p.data.size(),
                                p.transforms.empty() ? nullptr : p.transforms.data(), p.transforms.size(), e);
    });
  }
  WriteBatch& Delete(const DocumentReference& document) {
    return Step([&](ember_batch* b, ember_error* e) {
      return internal::NoNul(document.path(), "document path", e) && ember_batch_delete(b, document.path().c_str(), e);
    });
  }
  /// Applies every write at once; completes when the backend acknowledges.
  Future<void> Commit() {
    if (err_ && err_->code != EMBER_OK) return internal::Failed<void>(*err_);
    ember_batch* b = b_.get();
    return internal::Write([&](ember_write_cb cb, void* ctx, ember_error* err) { return ember_batch_commit(b, cb, ctx, err); });
  }

 private:
  template <typename F>
  WriteBatch& Step(F&& f) {
    if (!err_) err_ = std::make_shared<ember_error>(internal::MakeError(kErrorFailedPrecondition, "invalid WriteBatch"));
    if (err_->code == EMBER_OK) {
      ember_error e = internal::NewError();
      if (!f(b_.get(), &e)) *err_ = e;
    }
    return *this;
  }
  std::shared_ptr<ember_batch> b_;
  std::shared_ptr<ember_error> err_;
};

/// The reads and writes of one attempt of RunTransaction: reads first, then writes.
class Transaction {
 public:
  Transaction(ember_transaction* tx, internal::Db db) : tx_(tx), db_(std::move(db)) {}
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  /// Reads at the backend; an invalid snapshot with *error set on failure.
  DocumentSnapshot Get(const DocumentReference& document, Error* error = nullptr, std::string* error_message = nullptr) {
    ember_error err = internal::NewError();
    ember_document* doc = internal::NoNul(document.path(), "document path", &err)
        ? ember_transaction_get(tx_, document.path().c_str(), &err) : nullptr;
    if (error) *error = static_cast<Error>(err.code);
    if (error_message) *error_message = err.message;
    if (!doc) return DocumentSnapshot();
    DocumentSnapshot s(doc, db_);
    ember_document_release(doc);
    return s;
  }
  void Set(const DocumentReference& document, const MapFieldValue& data, const SetOptions& options = SetOptions()) {
    internal::WritePayload p = internal::SetPayload(data, options);
    std::vector<const char*> fields = internal::FieldList(options);
    Record([&](ember_error* e) {
      if (!internal::PayloadOk(p, e) || !internal::NoNul(document.path(), "document path", e)) return false;
      if (options.type() == SetOptions::Type::kOverwrite)
        return ember_transaction_set(tx_, document.path().c_str(), EMBER_FORMAT_MSGPACK, p.data.data(), p.data.size(),
                                     p.transforms.empty() ? nullptr : p.transforms.data(), p.transforms.size(), e);
      return ember_transaction_merge(tx_, document.path().c_str(), EMBER_FORMAT_MSGPACK, p.data.data(), p.data.size(),
                                     p.transforms.empty() ? nullptr : p.transforms.data(), p.transforms.size(),
                                     fields.empty() ? nullptr : fields.data(), fields.size(), e);
    });
  }
  void Update(const DocumentReference& document, const MapFieldValue& data) {
    internal::WritePayload p = internal::SplitWrite(data, true, false);  // an update replaces a map value whole
    Record([&](ember_error* e) {
      if (!internal::PayloadOk(p, e) || !internal::NoNul(document.path(), "document path", e)) return false;
      return ember_transaction_update(tx_, document.path().c_str(), EMBER_FORMAT_MSGPACK, p.data.data(), p.data.size(),
                                      p.transforms.empty() ? nullptr : p.transforms.data(), p.transforms.size(), e);
    });
  }
  void Delete(const DocumentReference& document) {
    Record([&](ember_error* e) {
      return internal::NoNul(document.path(), "document path", e) && ember_transaction_delete(tx_, document.path().c_str(), e);
    });
  }
  /// The first refused write of this attempt (it fails the commit).
  const ember_error& write_error() const { return write_error_; }

 private:
  template <typename F>
  void Record(F&& f) {
    ember_error e = internal::NewError();
    if (!f(&e) && write_error_.code == EMBER_OK) write_error_ = e;
  }
  ember_transaction* tx_;
  internal::Db db_;
  ember_error write_error_ = internal::NewError();
};

/// The database: the entry point to collections and documents, batches, transactions and the
/// network switch. Not copyable; destroying it closes the database.
class Firestore {
 public:
  /// Opens a database with its own in-process backend (in memory by default), or with its
  /// documents synced with `settings.host()`. On failure returns nullptr and fills `error` /
  /// `error_message` when given.
  static std::unique_ptr<Firestore> Create(const Settings& settings = Settings(), Error* error = nullptr,
                                           std::string* error_message = nullptr) {
    ember_settings s;
    ember_error err = internal::NewError();
    ember_db* db = internal::CSettings(settings, &s, &err) ? ember_db_open(&s, &err) : nullptr;
    if (error) *error = static_cast<Error>(err.code);
    if (error_message) *error_message = err.message;
    if (!db) return nullptr;
    return std::unique_ptr<Firestore>(new Firestore(std::make_shared<internal::DbHandle>(db), settings));
  }

  ~Firestore() { ember_db_close(db_->db, nullptr); }
  Firestore(const Firestore&) = delete;
  Firestore& operator=(const Firestore&) = delete;

  const Settings& settings() const { return settings_; }

  CollectionReference Collection(const std::string& collection_path) const {
    return CollectionReference(db_, collection_path);
  }
  DocumentReference Document(const std::string& document_path) const { return DocumentReference(db_, document_path); }
  /// Every collection with this id, wherever it is.
  Query CollectionGroup(const std::string& collection_id) const {
    ember_error err = internal::NewError();
    if (!internal::NoNul(collection_id, "collection id", &err)) return Query(db_, nullptr, err);
    ember_query* q = ember_query_new_collection_group(db_->db, collection_id.c_str(), &err);
    return Query(db_, q, err);
  }

  WriteBatch batch() const {
    ember_error err = internal::NewError();
    ember_batch* b = ember_batch_new(db_->db, &err);
    return WriteBatch(b, err);
  }

  /// Runs `update` until its commit succeeds (at most 5 attempts when documents it read
  /// changed). `update` returns kErrorOk to commit, anything else to abort with that error and
  /// the message it wrote. Deviation: it runs on the calling thread, which RunTransaction blocks
  /// until the end; the returned Future is already complete.
  Future<void> RunTransaction(std::function<Error(Transaction&, std::string&)> update) const {
    struct Ctx {
      std::function<Error(Transaction&, std::string&)>* fn;
      internal::Db db;
    } ctx{&update, db_};
    ember_error err = internal::NewError();
    bool ok = ember_db_run_transaction(db_->db, 0, [](ember_transaction* tx, void* c, ember_error* e) -> bool {
      Ctx* x = static_cast<Ctx*>(c);
      Transaction t(tx, x->db);
      std::string message;
      Error code = (*x->fn)(t, message);
      if (code != kErrorOk) {
        *e = internal::MakeError(code, message);
        return false;
      }
      if (t.write_error().code != EMBER_OK) {
        *e = t.write_error();
        return false;
      }
      return true;
    }, &ctx, &err);
    return internal::FromCall(ok, err);
  }

  /// While disabled, writes queue and listeners serve the cache (is_from_cache). Complete at once.
  Future<void> DisableNetwork() const {
    ember_error err = internal::NewError();
    return internal::FromCall(ember_db_disable_network(db_->db, &err), err);
  }
  Future<void> EnableNetwork() const {
    ember_error err = internal::NewError();
    return internal::FromCall(ember_db_enable_network(db_->db, &err), err);
  }
  /// Completes (on the event thread) once every write made so far is acknowledged. With a
  /// host, as in firebase-cpp, it waits while the server is unreachable (the writes stay queued;
  /// the reason is on stderr, see Settings::set_ssl_enabled).
  Future<void> WaitForPendingWrites() const {
    ember_db* db = db_->db;
    return internal::Write([&](ember_write_cb cb, void* ctx, ember_error* err) {
      return ember_db_wait_for_pending_writes(db, cb, ctx, err);
    });
  }
  /// Closes the database now (what the destructor does); later calls fail.
  Future<void> Terminate() const {
    ember_error err = internal::NewError();
    return internal::FromCall(ember_db_close(db_->db, &err), err);
  }

  /// The C database (borrowed): for mixing with the C ABI.
  ember_db* handle() const { return db_->db; }

 private:
  Firestore(internal::Db db, Settings settings) : db_(std::move(db)), settings_(std::move(settings)) {}
  internal::Db db_;
  Settings settings_;
};

}  // namespace firestore
}  // namespace ember

#endif

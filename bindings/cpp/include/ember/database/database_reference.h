// ember/database/database_reference.h: DatabaseReference (after
// firebase::database::DatabaseReference): a location in the tree; writes return Future<void>
// completed (on the event thread) when the backend acknowledges, while listeners see the write
// at once. It is also the Query of every child of the location, ordered by key.
//
//   DatabaseReference post = database->GetReference("posts").PushChild();   // key: a push id
//   post.SetValue(std::map<std::string, ember::Variant>{{"title", "Hi"}, {"stars", 0}});
//   post.UpdateChildren({{"stars", 1}, {"/user-posts/alice/" + post.key_string() + "/stars", 1}});
#ifndef EMBER_DATABASE_DATABASE_REFERENCE_H
#define EMBER_DATABASE_DATABASE_REFERENCE_H

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "common.h"
#include "data_snapshot.h"
#include "mutable_data.h"
#include "query.h"

namespace ember {
namespace database {

class Database;

class DatabaseReference : public Query {
 public:
  /// An invalid reference.
  DatabaseReference() = default;
  /// Ember's addition: takes ownership of `ref` (nullptr with `err` saying why it could not be
  /// made: the reference is then invalid and its calls fail with that error).
  DatabaseReference(internal::State state, ember_ref* ref, const ember_error& err)
      : Query(Make(state, ref, err)), ref_(ref ? std::make_shared<RefHandle>(ref) : nullptr) {}

  bool is_valid() const { return ref_ != nullptr && Query::is_valid(); }
  bool is_root() const { return ref_ && ember_ref_key(ref_->r) == nullptr; }
  /// The last path segment (a push id for PushChild); nullptr at the root. Valid while the
  /// reference lives.
  const char* key() const { return ref_ ? ember_ref_key(ref_->r) : nullptr; }
  std::string key_string() const {
    const char* k = key();
    return k ? k : "";
  }
  /// Ember's addition (firebase-cpp has url()): the path, "/posts/abc" ("/" at the root).
  std::string url() const { return path(); }

  /// The location `path` ("a/b") below this one; invalid (with the error) for a bad path.
  DatabaseReference Child(const char* path) const {
    if (!ref_) return *this;
    ember_error err = internal::NewError();
    ember_ref* c = path ? ember_ref_child(ref_->r, path, &err) : nullptr;
    if (!path) err = internal::MakeError(EMBER_ERR_INVALID_ARGUMENT, "Child: the path is null");
    return DatabaseReference(state_, c, err);
  }
  DatabaseReference Child(const std::string& path) const {
    if (ref_ && path.find('\0') != std::string::npos)
      return DatabaseReference(state_, nullptr, internal::MakeError(EMBER_ERR_INVALID_ARGUMENT, "Child: the path must not contain a NUL character"));
    return Child(path.c_str());
  }
  /// A new child whose key is a push id (time-ordered, strictly increasing in the process).
  /// Nothing is written until SetValue.
  DatabaseReference PushChild() const {
    if (!ref_) return *this;
    ember_error err = internal::NewError();
    ember_ref* c = ember_ref_push(ref_->r, &err);
    return DatabaseReference(state_, c, err);
  }
  /// The parent location; an invalid reference at the root.
  DatabaseReference GetParent() const {
    ember_ref* p = ref_ ? ember_ref_parent(ref_->r) : nullptr;
    if (!p) return DatabaseReference(state_, nullptr, internal::MakeError(EMBER_ERR_INVALID_ARGUMENT, "the root has no parent"));
    return DatabaseReference(state_, p, internal::NewError());
  }
  DatabaseReference GetRoot() const {
    if (!state_) return DatabaseReference();
    ember_error err = internal::NewError();
    ember_ref* r = ember_ref_new(state_->db, nullptr, &err);
    return DatabaseReference(state_, r, err);
  }

  /// Replaces the data here (null removes it).
  Future<void> SetValue(Variant value) const {
    return WithValue(value, [&](const std::string& bytes, ember_write_cb cb, void* ctx, ember_error* e) {
      return ember_ref_set(ref_->r, EMBER_FORMAT_MSGPACK, bytes.data(), bytes.size(), cb, ctx, e);
    });
  }
  /// Multi-path update, atomic for listeners: a map from paths relative to here ("a/b") to
  /// values (null removes). Paths may not contain one another.
  Future<void> UpdateChildren(Variant values) const {
    if (!values.is_map()) return internal::Failed<void>(kErrorInvalidVariantType, "UpdateChildren takes a map");
    return WithValue(values, [&](const std::string& bytes, ember_write_cb cb, void* ctx, ember_error* e) {
      return ember_ref_update(ref_->r, EMBER_FORMAT_MSGPACK, bytes.data(), bytes.size(), cb, ctx, e);
    });
  }
  Future<void> UpdateChildren(const std::map<std::string, Variant>& values) const { return UpdateChildren(Variant(values)); }
  /// Removes the data here.
  Future<void> RemoveValue() const {
    if (!is_valid()) return internal::Failed<void>(InvalidError());
    return internal::Write([&](ember_write_cb cb, void* ctx, ember_error* e) { return ember_ref_remove(ref_->r, cb, ctx, e); });
  }

  /// firebase-cpp's transaction functions: change `data` and return kTransactionResultSuccess
  /// to write it, or kTransactionResultAbort.
  typedef TransactionResult (*DoTransactionWithContext)(MutableData* data, void* context);
  typedef std::function<TransactionResult(MutableData* data)> DoTransactionFunction;

  /// Writes what `run_transaction` makes of the value here, atomically against every other
  /// writer: it runs (on the event thread) with what this client has (null when it has nothing
  /// yet) and again, up to 25 times, whenever the server's value had changed. The future
  /// completes with the committed data; it fails with kErrorTransactionAbortedByUser when the
  /// function aborted, kErrorMaxRetries after 25 lost attempts, kErrorInvalidVariantType for a
  /// value the tree cannot hold (or an exception the function threw), kErrorPermissionDenied
  /// when the server's rules refused it. `trigger_local_events`: each attempt raises local events
  /// at once, else listeners hear only the committed value.
  Future<DataSnapshot> RunTransaction(DoTransactionFunction run_transaction, bool trigger_local_events = true) const {
    if (!is_valid()) return internal::Failed<DataSnapshot>(InvalidError());
    if (!run_transaction) return internal::Failed<DataSnapshot>(kErrorInvalidArgument, "RunTransaction: the function is empty");
    auto* c = new TxContext{std::move(run_transaction), {}, state_, path_, key_string(), kErrorNone, std::string()};
    Future<DataSnapshot> f = c->promise.future();
    ember_error err = internal::NewError();
    if (!ember_ref_transaction(ref_->r, EMBER_FORMAT_MSGPACK, trigger_local_events, &TxUpdate, &TxDone, c, &err)) {
      internal::Fail(c->promise, err);
      delete c;
    }
    return f;
  }
  Future<DataSnapshot> RunTransaction(DoTransactionWithContext run_transaction, void* context,
                                      bool trigger_local_events = true) const {
    if (!run_transaction) return internal::Failed<DataSnapshot>(kErrorInvalidArgument, "RunTransaction: the function is null");
    return RunTransaction([run_transaction, context](MutableData* data) { return run_transaction(data, context); },
                          trigger_local_events);
  }

  /// Ember's addition: the C location (borrowed; nullptr when invalid).
  const ember_ref* ref_handle() const { return ref_ ? ref_->r : nullptr; }

  friend bool operator==(const DatabaseReference& a, const DatabaseReference& b) {
    return a.state_ == b.state_ && a.path_ == b.path_ && a.is_valid() == b.is_valid();
  }
  friend bool operator!=(const DatabaseReference& a, const DatabaseReference& b) { return !(a == b); }

 private:
  struct RefHandle {
    explicit RefHandle(ember_ref* ref) : r(ref) {}
    ~RefHandle() { ember_ref_release(r); }
    RefHandle(const RefHandle&) = delete;
    RefHandle& operator=(const RefHandle&) = delete;
    ember_ref* r;
  };

  /// One RunTransaction's function, promise and the error its last attempt left.
  struct TxContext {
    DoTransactionFunction fn;
    firestore::internal::Promise<DataSnapshot> promise;
    internal::State state;
    std::string path;
    std::string key;
    Error failure;            // why the last attempt did not write (kErrorNone: it did)
    std::string message;
  };
  static bool TxUpdate(void* ctx, const void* current, size_t len, ember_tree_tx* tx) {
    auto* c = static_cast<TxContext*>(ctx);
    MutableData data(internal::VariantFromMsgpack(static_cast<const char*>(current), len), c->key);
    TransactionResult r;
    try {
      r = c->fn(&data);
    } catch (const std::exception& e) {
      c->failure = kErrorInvalidVariantType;
      c->message = std::string("the transaction function threw: ") + e.what();
      return false;
    } catch (...) {
      c->failure = kErrorInvalidVariantType;
      c->message = "the transaction function threw";
      return false;
    }
    if (r != kTransactionResultSuccess) {
      c->failure = kErrorTransactionAbortedByUser;
      c->message = GetErrorMessage(kErrorTransactionAbortedByUser);
      return false;
    }
    firestore::internal::MsgpackWriter w;
    std::string error;
    ember_error err = internal::NewError();
    if (!internal::EncodeVariant(data.root_value(), w, error)) {
      c->failure = kErrorInvalidVariantType;
      c->message = error;
      return false;
    }
    if (!ember_tree_tx_set(tx, w.bytes.data(), w.bytes.size(), &err)) {
      c->failure = kErrorInvalidVariantType;
      c->message = err.message;
      return false;
    }
    c->failure = kErrorNone;
    return true;
  }
  static void TxDone(void* ctx, const ember_error* error, bool committed, const ember_tree_snapshot* snapshot) {
    std::unique_ptr<TxContext> c(static_cast<TxContext*>(ctx));
    if (error->code != EMBER_OK) {
      c->promise.Fail(error->code == EMBER_ERR_ABORTED ? kErrorMaxRetries : ErrorFromCode(error->code), error->message);
    } else if (!committed) {
      c->promise.Fail(c->failure == kErrorNone ? kErrorTransactionAbortedByUser : c->failure, c->message);
    } else {
      c->promise.Succeed(DataSnapshot(snapshot, c->state, c->path));
    }
  }

  static Query Make(const internal::State& state, ember_ref* ref, const ember_error& err) {
    if (!ref) return Query(state, nullptr, std::string(), err);
    ember_error e = internal::NewError();
    ember_tree_query* q = ember_tree_query_new(ref, &e);
    return Query(state, q, ember_ref_path(ref), e);
  }
  template <typename Call>
  Future<void> WithValue(const Variant& value, Call&& call) const {
    if (!is_valid()) return internal::Failed<void>(InvalidError());
    firestore::internal::MsgpackWriter w;
    std::string error;
    if (!internal::EncodeVariant(value, w, error)) return internal::Failed<void>(kErrorInvalidVariantType, error);
    return internal::Write([&](ember_write_cb cb, void* ctx, ember_error* e) { return call(w.bytes, cb, ctx, e); });
  }

  std::shared_ptr<RefHandle> ref_;
};

inline DatabaseReference Query::GetReference() const {
  if (!q_) return DatabaseReference(state_, nullptr, InvalidError());
  return DatabaseReference(state_, ember_tree_query_ref(q_->q), internal::NewError());
}

inline DatabaseReference DataSnapshot::GetReference() const {
  if (!state_) return DatabaseReference();
  ember_error err = internal::NewError();
  ember_ref* r = ember_ref_new(state_->db, path_.c_str(), &err);
  return DatabaseReference(state_, r, err);
}

}  // namespace database
}  // namespace ember

#endif

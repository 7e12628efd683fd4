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

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "common.h"
#include "data_snapshot.h"
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

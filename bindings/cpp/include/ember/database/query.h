// ember/database/query.h: Query (after firebase::database::Query): a location with one
// order-by, a range and a limit (docs/semantics.md 15-21); reads and listeners.
//
//   Query top = database->GetReference("posts").OrderByChild("metrics/views").LimitToLast(10);
//   top.AddChildListener(&my_child_listener);   // events report changes to the window
//   ...
//   top.RemoveChildListener(&my_child_listener);
//
// Errors follow the Firestore part of the wrapper: no exceptions. A builder call that breaks a
// rule (two order-bys, a limit of 0, ...) returns an invalid Query (is_valid() false) that
// keeps the error (error(), error_message()); GetValue() on it fails with that error and a
// listener added to it gets OnCancelled (on the event thread).
#ifndef EMBER_DATABASE_QUERY_H
#define EMBER_DATABASE_QUERY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "common.h"
#include "data_snapshot.h"
#include "listener.h"

namespace ember {
namespace database {

class DatabaseReference;

namespace internal {

/// The context of one C observer: its registration and which event it serves.
struct ObserverCtx {
  std::shared_ptr<Registration> reg;
  State state;
  ember_event_type type;
};

inline void FreeObserver(void* ctx) noexcept { delete static_cast<ObserverCtx*>(ctx); }

inline void OnTreeEvent(void* ctx, const ember_tree_snapshot* snapshot, const char* prev_key,
                        const ember_error* error) noexcept {
  auto* c = static_cast<ObserverCtx*>(ctx);
  Registration& r = *c->reg;
  if (error) {
    // The observer ended: end the whole registration (a child listener's other observers
    // too), once, then tell the listener.
    std::vector<ember_listener_token> tokens;
    {
      std::lock_guard<std::mutex> lock(r.mu);
      if (r.removed) return;
      r.removed = true;
      tokens.swap(r.tokens);
    }
    {
      std::lock_guard<std::mutex> lock(c->state->mu);
      auto& regs = c->state->registrations;
      for (auto it = regs.begin(); it != regs.end(); ++it)
        if (it->get() == &r) { regs.erase(it); break; }
    }
    for (ember_listener_token t : tokens) ember_listener_remove(t);
    Error e = ErrorFromCode(error->code);
    if (r.kind == Registration::kValue) r.value->OnCancelled(e, error->message);
    else r.child->OnCancelled(e, error->message);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.removed) return;
  }
  if (c->type == EMBER_EVENT_VALUE) {
    r.value->OnValueChanged(DataSnapshot(snapshot, c->state, r.path));
    return;
  }
  const char* key = ember_tree_snapshot_key(snapshot);
  DataSnapshot s(snapshot, c->state, JoinPath(r.path, key ? key : ""));
  switch (c->type) {
    case EMBER_EVENT_CHILD_ADDED: r.child->OnChildAdded(s, prev_key); break;
    case EMBER_EVENT_CHILD_CHANGED: r.child->OnChildChanged(s, prev_key); break;
    case EMBER_EVENT_CHILD_MOVED: r.child->OnChildMoved(s, prev_key); break;
    case EMBER_EVENT_CHILD_REMOVED: r.child->OnChildRemoved(s); break;
    default: break;
  }
}

/// Hands a listener that could not be attached its error through OnCancelled on the event
/// thread (a one-shot cache-only document listener, which answers at once); on the calling
/// thread when the database cannot take even that (closed).
struct FailedAdd {
  ValueListener* value = nullptr;
  ChildListener* child = nullptr;
  ember_error error;
  std::mutex mu;
  ember_listener_token token = 0;
  bool fired = false;
  void Tell() {
    Error e = ErrorFromCode(error.code);
    if (value) value->OnCancelled(e, error.message);
    else child->OnCancelled(e, error.message);
  }
  static void Fire(void* ctx, const ember_document*, const ember_error*) noexcept {
    auto* f = static_cast<FailedAdd*>(ctx);
    ember_listener_token t;
    {
      std::lock_guard<std::mutex> lock(f->mu);
      if (f->fired) return;
      f->fired = true;
      t = f->token;
    }
    if (t) ember_listener_remove(t);
    f->Tell();
  }
  static void Free(void* ctx) noexcept { delete static_cast<FailedAdd*>(ctx); }
};

inline void DeliverError(const State& state, ValueListener* value, ChildListener* child, const ember_error& error) {
  auto* f = new FailedAdd();
  f->value = value;
  f->child = child;
  f->error = error;
  ember_error err = NewError();
  ember_listener_token t = state ? ember_doc_listen(state->db, "_ember_/listen-error", EMBER_LISTEN_SOURCE_CACHE,
                                                    &FailedAdd::Fire, f, &FailedAdd::Free, &err)
                                 : 0;
  if (t == 0) {
    f->Tell();
    delete f;
    return;
  }
  bool fired;
  {
    std::lock_guard<std::mutex> lock(f->mu);  // f lives until this observer is removed
    f->token = t;
    fired = f->fired;
  }
  if (fired) ember_listener_remove(t);
}

/// GetValue's one-shot value observer.
struct OneShot {
  firestore::internal::Promise<DataSnapshot> promise;
  State state;
  std::string path;
  std::mutex mu;
  ember_listener_token token = 0;
  bool fired = false;

  static void Fire(void* ctx, const ember_tree_snapshot* snapshot, const char*, const ember_error* error) noexcept {
    OneShot& o = **static_cast<std::shared_ptr<OneShot>*>(ctx);
    ember_listener_token t;
    {
      std::lock_guard<std::mutex> lock(o.mu);
      if (o.fired) return;
      o.fired = true;
      t = o.token;
    }
    if (t) ember_listener_remove(t);
    if (error) Fail(o.promise, *error);
    else o.promise.Succeed(DataSnapshot(snapshot, o.state, o.path));
  }
  static void Free(void* ctx) noexcept {
    auto* holder = static_cast<std::shared_ptr<OneShot>*>(ctx);
    OneShot& o = **holder;
    bool fired;
    {
      std::lock_guard<std::mutex> lock(o.mu);
      fired = o.fired;
      o.fired = true;
    }
    if (!fired) o.promise.Fail(kErrorWriteCanceled, "the database closed before the value was read");
    delete holder;
  }
};

}  // namespace internal

class Query {
 public:
  /// An invalid query.
  Query() = default;
  virtual ~Query() = default;
  Query(const Query&) = default;
  Query& operator=(const Query&) = default;
  Query(Query&&) = default;
  Query& operator=(Query&&) = default;

  /// Ember's addition: takes ownership of `q` at `path`, "/posts"
  /// (nullptr with `err` saying why it could not be made: the Query is then invalid).
  Query(internal::State state, ember_tree_query* q, std::string path, const ember_error& err)
      : state_(std::move(state)), q_(q ? std::make_shared<Handle>(q) : nullptr), path_(std::move(path)), err_(err) {}

  /// Valid when it was made without error (every builder call on an invalid query keeps it so).
  bool is_valid() const { return q_ != nullptr && err_.code == EMBER_OK; }
  /// Ember's addition: the first error of the builder calls (kErrorNone when well formed), its
  /// message, and the location's path ("/posts").
  Error error() const { return ErrorFromCode(err_.code); }
  std::string error_message() const { return err_.message; }
  const std::string& path() const { return path_; }

  /// The query's location.
  DatabaseReference GetReference() const;

  Query OrderByKey() const {
    return Step("key", [](ember_tree_query* q, ember_error* e) { return ember_tree_query_order_by_key(q, e); }, &Params::order);
  }
  Query OrderByValue() const {
    return Step("value", [](ember_tree_query* q, ember_error* e) { return ember_tree_query_order_by_value(q, e); }, &Params::order);
  }
  /// Orders by the value at a child path, possibly nested ("metrics/views").
  Query OrderByChild(const char* path) const {
    std::string p = path ? path : "";
    return Step("child:" + p, [&](ember_tree_query* q, ember_error* e) {
      if (!path) { *e = internal::MakeError(EMBER_ERR_INVALID_ARGUMENT, "OrderByChild: the path is null"); return false; }
      return ember_tree_query_order_by_child(q, path, e);
    }, &Params::order);
  }
  Query OrderByChild(const std::string& path) const {
    if (path.find('\0') == std::string::npos) return OrderByChild(path.c_str());
    return Step("child:", [](ember_tree_query*, ember_error* e) {
      *e = internal::MakeError(EMBER_ERR_INVALID_ARGUMENT, "OrderByChild: the path must not contain a NUL character");
      return false;
    }, &Params::order);
  }
  /// Ember has no priorities: an invalid query (kErrorInvalidArgument).
  Query OrderByPriority() const {
    return Step("priority", [](ember_tree_query*, ember_error* e) {
      *e = internal::MakeError(EMBER_ERR_INVALID_ARGUMENT, "OrderByPriority: Ember has no priorities");
      return false;
    }, &Params::order);
  }

  /// Bounds: a null, bool, number or string value (a string for OrderByKey), and optionally the
  /// key that breaks ties among children with that value.
  Query StartAt(Variant order_value) const { return Bound(EMBER_TREE_START_AT, order_value, nullptr); }
  Query StartAt(Variant order_value, const char* child_key) const { return Bound(EMBER_TREE_START_AT, order_value, child_key); }
  Query StartAfter(Variant order_value) const { return Bound(EMBER_TREE_START_AFTER, order_value, nullptr); }
  Query StartAfter(Variant order_value, const char* child_key) const { return Bound(EMBER_TREE_START_AFTER, order_value, child_key); }
  Query EndAt(Variant order_value) const { return Bound(EMBER_TREE_END_AT, order_value, nullptr); }
  Query EndAt(Variant order_value, const char* child_key) const { return Bound(EMBER_TREE_END_AT, order_value, child_key); }
  Query EndBefore(Variant order_value) const { return Bound(EMBER_TREE_END_BEFORE, order_value, nullptr); }
  Query EndBefore(Variant order_value, const char* child_key) const { return Bound(EMBER_TREE_END_BEFORE, order_value, child_key); }
  Query EqualTo(Variant order_value) const { return Bound(EMBER_TREE_EQUAL_TO, order_value, nullptr); }
  Query EqualTo(Variant order_value, const char* child_key) const { return Bound(EMBER_TREE_EQUAL_TO, order_value, child_key); }

  Query LimitToFirst(size_t limit) const {
    return Step("first:" + std::to_string(limit), [&](ember_tree_query* q, ember_error* e) {
      return ember_tree_query_limit_to_first(q, static_cast<int64_t>(limit), e);
    }, &Params::limit);
  }
  Query LimitToLast(size_t limit) const {
    return Step("last:" + std::to_string(limit), [&](ember_tree_query* q, ember_error* e) {
      return ember_tree_query_limit_to_last(q, static_cast<int64_t>(limit), e);
    }, &Params::limit);
  }

  /// Reads the data once. The Future completes on the event thread when the value is known (it
  /// does not block: safe to call from a listener; Await() it elsewhere). Deviation: offline,
  /// it completes from what the client holds through a listener there, else only once back
  /// online (ember_ref_get would fail with EMBER_ERR_UNAVAILABLE; the Realtime Database errors).
  Future<DataSnapshot> GetValue() const {
    if (!is_valid()) return internal::Failed<DataSnapshot>(InvalidError());
    auto shot = std::make_shared<internal::OneShot>();
    shot->state = state_;
    shot->path = path_;
    Future<DataSnapshot> f = shot->promise.future();
    auto* holder = new std::shared_ptr<internal::OneShot>(shot);
    ember_error err = internal::NewError();
    ember_listener_token t = ember_tree_query_observe(q_->q, EMBER_EVENT_VALUE, &internal::OneShot::Fire, holder,
                                                      &internal::OneShot::Free, &err);
    if (t == 0) {
      delete holder;
      return internal::Failed<DataSnapshot>(err);
    }
    bool fired;
    {
      std::lock_guard<std::mutex> lock(shot->mu);
      shot->token = t;
      fired = shot->fired;
    }
    if (fired) ember_listener_remove(t);
    return f;
  }

  /// Attaches a listener (kept by the caller until removed). Adding the same listener twice to
  /// the same query does nothing.
  void AddValueListener(ValueListener* listener) const { Add(internal::Registration::kValue, listener, nullptr); }
  void AddChildListener(ChildListener* listener) const { Add(internal::Registration::kChild, nullptr, listener); }
  /// Detaches `listener` from this query (same location and parameters). When it returns, the
  /// listener is not running (except in the very callback that removes it) and is not called
  /// again. Listeners on other queries and on child locations stay.
  void RemoveValueListener(ValueListener* listener) const {
    Remove([&](const internal::Registration& r) { return r.kind == internal::Registration::kValue && r.value == listener; });
  }
  void RemoveChildListener(ChildListener* listener) const {
    Remove([&](const internal::Registration& r) { return r.kind == internal::Registration::kChild && r.child == listener; });
  }
  /// Detaches every value (child) listener of this query; not those on child locations.
  void RemoveAllValueListeners() const {
    Remove([](const internal::Registration& r) { return r.kind == internal::Registration::kValue; });
  }
  void RemoveAllChildListeners() const {
    Remove([](const internal::Registration& r) { return r.kind == internal::Registration::kChild; });
  }

  /// Ember's addition: the C query (borrowed; nullptr when invalid).
  const ember_tree_query* handle() const { return q_ ? q_->q : nullptr; }

  friend bool operator==(const Query& a, const Query& b) { return a.state_ == b.state_ && a.Spec() == b.Spec(); }
  friend bool operator!=(const Query& a, const Query& b) { return !(a == b); }

 protected:
  struct Handle {
    explicit Handle(ember_tree_query* query) : q(query) {}
    ~Handle() { ember_tree_query_release(q); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ember_tree_query* q;
  };
  /// The parameters as text: the query's identity for removing listeners.
  struct Params {
    std::string order, start, end, limit;
  };


  std::string Spec() const {
    return path_ + "|" + params_.order + "|" + params_.start + "|" + params_.end + "|" + params_.limit;
  }
  ember_error InvalidError() const {
    return err_.code != EMBER_OK ? err_ : internal::MakeError(EMBER_ERR_INVALID_ARGUMENT, "invalid Query");
  }

  internal::State state_;
  std::shared_ptr<Handle> q_;
  std::string path_;
  Params params_;
  ember_error err_ = internal::NewError();

 private:
  template <typename F>
  Query Step(const std::string& text, F&& f, std::string Params::*slot) const {
    if (!is_valid()) return *this;
    Query out = *this;
    ember_tree_query* copy = ember_tree_query_copy(q_->q);
    ember_error err = internal::NewError();
    if (!f(copy, &err)) {
      ember_tree_query_release(copy);
      out.q_ = nullptr;
      out.err_ = err;
      return out;
    }
    out.q_ = std::make_shared<Handle>(copy);
    std::string& s = out.params_.*slot;
    s = s.empty() ? text : s + ";" + text;
    return out;
  }
  Query Bound(ember_tree_bound bound, const Variant& value, const char* key) const {
    firestore::internal::MsgpackWriter w;
    std::string encode_error;
    bool encoded = internal::EncodeVariant(value, w, encode_error);
    static const char* const names[] = {"start_at", "start_after", "end_at", "end_before", "equal_to"};
    std::string text = std::string(names[bound]) + ":" + value.ToString() + (key ? std::string(":") + key : "");
    auto apply = [&](ember_tree_query* q, ember_error* e) {
      if (!encoded) { *e = internal::MakeError(EMBER_ERR_INVALID_ARGUMENT, encode_error); return false; }
      return ember_tree_query_bound(q, bound, EMBER_FORMAT_MSGPACK, w.bytes.data(), w.bytes.size(), key, e);
    };
    if (bound == EMBER_TREE_EQUAL_TO) {
      Query out = Step(text, apply, &Params::start);
      if (out.is_valid()) out.params_.end = out.params_.end.empty() ? text : out.params_.end + ";" + text;
      return out;
    }
    return Step(text, apply, bound <= EMBER_TREE_START_AFTER ? &Params::start : &Params::end);
  }

  void Add(internal::Registration::Kind kind, ValueListener* value, ChildListener* child) const {
    if (!value && !child) return;
    if (!is_valid()) {
      internal::DeliverError(state_, value, child, InvalidError());
      return;
    }
    auto reg = std::make_shared<internal::Registration>();
    reg->kind = kind;
    reg->value = value;
    reg->child = child;
    reg->spec = Spec();
    reg->path = path_;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      for (const auto& r : state_->registrations)
        if (r->kind == kind && r->value == value && r->child == child && r->spec == reg->spec) return;
      state_->registrations.push_back(reg);
    }
    static const ember_event_type child_events[] = {EMBER_EVENT_CHILD_REMOVED, EMBER_EVENT_CHILD_ADDED,
                                                    EMBER_EVENT_CHILD_MOVED, EMBER_EVENT_CHILD_CHANGED};
    static const ember_event_type value_events[] = {EMBER_EVENT_VALUE};
    const ember_event_type* types = kind == internal::Registration::kValue ? value_events : child_events;
    size_t n = kind == internal::Registration::kValue ? 1 : 4;
    for (size_t i = 0; i < n; i++) {
      auto* ctx = new internal::ObserverCtx{reg, state_, types[i]};
      ember_error err = internal::NewError();
      ember_listener_token t = ember_tree_query_observe(q_->q, types[i], &internal::OnTreeEvent, ctx,
                                                        &internal::FreeObserver, &err);
      if (t == 0) {
        delete ctx;
        bool was_removed;
        {
          std::lock_guard<std::mutex> lock(reg->mu);
          was_removed = reg->removed;
        }
        internal::DbState* st = state_.get();
        st->Unregister([&](const internal::Registration& r) { return &r == reg.get(); });
        if (!was_removed) internal::DeliverError(state_, value, child, err);
        return;
      }
      bool removed;
      {
        std::lock_guard<std::mutex> lock(reg->mu);
        removed = reg->removed;
        if (!removed) reg->tokens.push_back(t);
      }
      if (removed) ember_listener_remove(t);
    }
  }
  template <typename Pred>
  void Remove(Pred&& pred) const {
    if (!state_ || !is_valid()) return;
    std::string spec = Spec();
    state_->Unregister([&](const internal::Registration& r) { return r.spec == spec && pred(r); });
  }
};

}  // namespace database
}  // namespace ember

#endif

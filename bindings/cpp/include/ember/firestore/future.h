// ember/firestore/future.h: the result of an asynchronous call (after firebase::Future<T>):
// status(), error(), error_message(), result(), OnCompletion(). Ember adds Await(), which blocks
// the caller until the future completes (never call it from a listener or completion callback
// for a write: those run on the event thread that would complete it).
//
//   db->Collection("cities").Document("SF").Set(data).OnCompletion([](const Future<void>& f) {
//     if (f.error() != Error::kErrorOk) std::cout << f.error_message() << std::endl; });
#ifndef EMBER_FIRESTORE_FUTURE_H
#define EMBER_FIRESTORE_FUTURE_H

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "types.h"

namespace ember {
namespace firestore {

enum FutureStatus { kFutureStatusComplete, kFutureStatusPending, kFutureStatusInvalid };

namespace internal {

template <typename T>
struct FutureResult {
  std::unique_ptr<T> value;
  const T* get() const { return value.get(); }
  void set(T&& v) { value.reset(new T(std::move(v))); }
};
template <>
struct FutureResult<void> {
  const void* get() const { return nullptr; }
};

template <typename T>
class FutureFwd;

/// The state shared by a future's copies and the one who completes it.
template <typename T>
struct FutureState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int error = 0;
  std::string message;
  FutureResult<T> result;
  std::vector<std::function<void()>> callbacks;

  /// Completes once (later calls do nothing); runs the OnCompletion callbacks on this thread.
  template <typename Fill>
  void Complete(int code, const std::string& msg, Fill&& fill) {
    std::vector<std::function<void()>> run;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (done) return;
      fill(result);
      error = code;
      message = msg;
      done = true;
      run.swap(callbacks);
    }
    cv.notify_all();
    for (auto& f : run) f();
  }
};

}  // namespace internal

/// A future result of type T (void: no result). Copies share the same result.
template <typename T>
class Future {
 public:
  using State = internal::FutureState<T>;
  /// An invalid future (status kFutureStatusInvalid).
  Future() = default;
  explicit Future(std::shared_ptr<State> state) : state_(std::move(state)) {}

  FutureStatus status() const {
    if (!state_) return kFutureStatusInvalid;
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->done ? kFutureStatusComplete : kFutureStatusPending;
  }
  /// The error code once complete (0 = ok; an Error value).
  int error() const {
    if (!state_) return kErrorFailedPrecondition;
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->error;
  }
  /// The error message once complete ("" when ok). Valid while the future lives.
  const char* error_message() const {
    if (!state_) return "invalid future";
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->message.c_str();
  }
  /// The result once complete without error; nullptr before (and always for Future<void>).
  auto result() const -> decltype(std::declval<internal::FutureResult<T>>().get()) {
    if (!state_) return nullptr;
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->done ? state_->result.get() : nullptr;
  }
  /// Runs `callback` once the future completes: at once on this thread when it already has,
  /// else on the thread that completes it (for writes: Ember's event thread).
  void OnCompletion(std::function<void(const Future<T>&)> callback) const {
    if (!state_) return;
    Future<T> self = *this;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (!state_->done) {
        state_->callbacks.push_back([self, callback]() { callback(self); });
        return;
      }
    }
    callback(self);
  }
  /// Ember's addition: blocks until complete, or at most `timeout_ms` (negative: no limit).
  /// Returns whether it completed.
  bool Await(int64_t timeout_ms = -1) const {
    if (!state_) return false;
    std::unique_lock<std::mutex> lock(state_->mu);
    if (timeout_ms < 0) {
      state_->cv.wait(lock, [this] { return state_->done; });
      return true;
    }
    return state_->cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return state_->done; });
  }

 private:
  std::shared_ptr<State> state_;
};

namespace internal {

/// A pending future and the means to complete it.
template <typename T>
struct Promise {
  std::shared_ptr<FutureState<T>> state = std::make_shared<FutureState<T>>();
  Future<T> future() const { return Future<T>(state); }
  void Fail(int code, const std::string& message) const {
    state->Complete(code, message, [](FutureResult<T>&) {});
  }
  void Fail(const ember_error& err) const { Fail(err.code, err.message); }
  template <typename U = T>
  void Succeed(U&& value) const {
    state->Complete(0, std::string(), [&](FutureResult<T>& r) { r.set(std::forward<U>(value)); });
  }
  void Succeed() const {
    state->Complete(0, std::string(), [](FutureResult<T>&) {});
  }
};

template <typename T>
Future<T> Failed(const ember_error& err) {
  Promise<T> p;
  p.Fail(err);
  return p.future();
}
inline Future<void> Done() {
  Promise<void> p;
  p.Succeed();
  return p.future();
}
/// A completed Future<void> from a C call's result.
inline Future<void> FromCall(bool ok, const ember_error& err) { return ok ? Done() : Failed<void>(err); }

/// An ember_write_cb whose ctx is a heap-allocated Promise<void> (freed here).
inline void CompleteWrite(void* ctx, const ember_error* error) {
  Promise<void>* p = static_cast<Promise<void>*>(ctx);
  if (error->code == EMBER_OK) p->Succeed(); else p->Fail(*error);
  delete p;
}

/// Starts a C write taking (cb, ctx, err) and returns its future: completed on the event thread
/// when the backend answers, or at once when the call refuses.
template <typename Call>
Future<void> Write(Call&& call) {
  Promise<void>* p = new Promise<void>();
  Future<void> f = p->future();
  ember_error err = NewError();
  if (!call(&CompleteWrite, static_cast<void*>(p), &err)) {
    p->Fail(err);
    delete p;
  }
  return f;
}

}  // namespace internal
}  // namespace firestore
}  // namespace ember

#endif

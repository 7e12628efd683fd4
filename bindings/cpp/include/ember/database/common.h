// ember/database/common.h: the shared pieces of the tree API (after firebase-cpp-sdk's
// firebase/database/common.h): the Error codes, ember::Future (the same Future as the Firestore
// part), and the internal state shared by everything made from one Database.
#ifndef EMBER_DATABASE_COMMON_H
#define EMBER_DATABASE_COMMON_H

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../firestore/future.h"
#include "../firestore/types.h"
#include "../variant.h"
#include "ember.h"

namespace ember {

// firebase::Future and its status names live in namespace firebase: the same here, so that
// firebase-cpp code needs only its namespace changed.
using firestore::Future;
using firestore::FutureStatus;
using firestore::kFutureStatusComplete;
using firestore::kFutureStatusInvalid;
using firestore::kFutureStatusPending;

namespace database {

/// Error codes of firebase::database (same names and numbers), plus one of Ember's.
/// The C ABI's codes map to them as ErrorFromCode says; messages are Ember's, unchanged.
enum Error {
  kErrorNone = 0,
  kErrorDisconnected,
  kErrorExpiredToken,
  kErrorInvalidToken,
  kErrorMaxRetries,
  kErrorNetworkError,
  kErrorOperationFailed,
  kErrorOverriddenBySet,
  kErrorPermissionDenied,
  kErrorUnavailable,
  kErrorUnknownError,
  kErrorWriteCanceled,
  kErrorInvalidVariantType,
  kErrorConflictingOperationInProgress,
  kErrorTransactionAbortedByUser,
  /// Ember's addition: a bad key, path, value or query (EMBER_ERR_INVALID_ARGUMENT), which
  /// firebase-cpp reports by logging and returning an invalid object.
  kErrorInvalidArgument = 100,
};

/// The Error of an EMBER_ERR_* code: CANCELLED -> kErrorWriteCanceled; INVALID_ARGUMENT,
/// OUT_OF_RANGE -> kErrorInvalidArgument; FAILED_PRECONDITION (use after close, a blocking read
/// from a callback) -> kErrorOperationFailed; UNAVAILABLE -> kErrorUnavailable;
/// PERMISSION_DENIED, UNAUTHENTICATED -> kErrorPermissionDenied; DEADLINE_EXCEEDED ->
/// kErrorNetworkError; anything else -> kErrorUnknownError.
inline Error ErrorFromCode(int32_t code) {
  switch (code) {
    case EMBER_OK: return kErrorNone;
    case EMBER_ERR_CANCELLED: return kErrorWriteCanceled;
    case EMBER_ERR_INVALID_ARGUMENT: case EMBER_ERR_OUT_OF_RANGE: return kErrorInvalidArgument;
    case EMBER_ERR_FAILED_PRECONDITION: return kErrorOperationFailed;
    case EMBER_ERR_UNAVAILABLE: return kErrorUnavailable;
    case EMBER_ERR_PERMISSION_DENIED: case EMBER_ERR_UNAUTHENTICATED: return kErrorPermissionDenied;
    case EMBER_ERR_DEADLINE_EXCEEDED: return kErrorNetworkError;
    default: return kErrorUnknownError;
  }
}

/// firebase-cpp's GetErrorMessage: a fixed description of each code.
inline const char* GetErrorMessage(Error error) {
  switch (error) {
    case kErrorNone: return "The operation was a success, no error occurred.";
    case kErrorDisconnected: return "The operation had to be aborted due to a network disconnect.";
    case kErrorExpiredToken: return "The supplied auth token has expired.";
    case kErrorInvalidToken: return "The specified authentication token is invalid.";
    case kErrorMaxRetries: return "The transaction had too many retries.";
    case kErrorNetworkError: return "The operation could not be performed due to a network error.";
    case kErrorOperationFailed: return "The server indicated that this operation failed.";
    case kErrorOverriddenBySet: return "The transaction was overridden by a subsequent set.";
    case kErrorPermissionDenied: return "This client does not have permission to perform this operation.";
    case kErrorUnavailable: return "The service is unavailable.";
    case kErrorUnknownError: return "An unknown error occurred.";
    case kErrorWriteCanceled: return "The write was canceled locally.";
    case kErrorInvalidVariantType: return "You specified an invalid Variant type for a field.";
    case kErrorConflictingOperationInProgress: return "An operation that conflicts with this one is already in progress.";
    case kErrorTransactionAbortedByUser: return "The transaction was aborted by the user.";
    case kErrorInvalidArgument: return "An argument (key, path, value or query) is invalid.";
  }
  return "An unknown error occurred.";
}

class ValueListener;
class ChildListener;

namespace internal {

/// One AddValueListener / AddChildListener: the listener, the query it is on (spec), and the
/// C observers serving it (one for a value listener, four for a child listener).
struct Registration {
  enum Kind { kValue, kChild };
  Kind kind;
  ValueListener* value = nullptr;
  ChildListener* child = nullptr;
  std::string spec;   // the query's identity: location and parameters
  std::string path;   // the query's location ("/posts")
  std::mutex mu;
  std::vector<ember_listener_token> tokens;
  bool removed = false;    // removed, or ended by an error: no callback from now on
};

/// What every reference, query and snapshot of one Database shares: the C database (kept alive
/// by the root ember_ref; released here when this Database opened it) and the listener registry.
struct DbState {
  DbState(ember_db* d, bool owns) : db(d), owned(owns) {}
  ~DbState() {
    ember_ref_release(root);
    if (owned) ember_db_release(db);
  }
  DbState(const DbState&) = delete;
  DbState& operator=(const DbState&) = delete;

  ember_db* db;
  bool owned;
  ember_ref* root = nullptr;
  std::mutex mu;
  std::vector<std::shared_ptr<Registration>> registrations;

  /// Takes the registrations `pred` selects out of the registry and stops their observers.
  /// When it returns, none of their callbacks is running (except the caller's own, when called
  /// from one) or will run again.
  template <typename Pred>
  void Unregister(Pred&& pred) {
    std::vector<std::shared_ptr<Registration>> gone;
    {
      std::lock_guard<std::mutex> lock(mu);
      auto mid = std::stable_partition(registrations.begin(), registrations.end(),
                                       [&](const std::shared_ptr<Registration>& r) { return !pred(*r); });
      gone.assign(mid, registrations.end());
      registrations.erase(mid, registrations.end());
    }
    for (auto& r : gone) Stop(*r);
  }
  static void Stop(Registration& r) {
    std::vector<ember_listener_token> tokens;
    {
      std::lock_guard<std::mutex> lock(r.mu);
      r.removed = true;
      tokens.swap(r.tokens);
    }
    for (ember_listener_token t : tokens) ember_listener_remove(t);
  }
};
using State = std::shared_ptr<DbState>;

using ember::internal::DecodeVariant;
using ember::internal::EncodeVariant;
using ember::internal::VariantFromMsgpack;

inline ember_error NewError() { return firestore::internal::NewError(); }
inline ember_error MakeError(int32_t code, const std::string& message) {
  return firestore::internal::MakeError(static_cast<firestore::Error>(code), message);
}

/// Fails a promise with the Error of an ember_error.
template <typename T>
void Fail(const firestore::internal::Promise<T>& p, const ember_error& err) {
  p.Fail(ErrorFromCode(err.code), err.message);
}
template <typename T>
Future<T> Failed(Error code, const std::string& message) {
  firestore::internal::Promise<T> p;
  p.Fail(code, message);
  return p.future();
}
template <typename T>
Future<T> Failed(const ember_error& err) { return Failed<T>(ErrorFromCode(err.code), err.message); }

/// An ember_write_cb whose ctx is a heap-allocated Promise<void> (freed here).
inline void CompleteWrite(void* ctx, const ember_error* error) {
  auto* p = static_cast<firestore::internal::Promise<void>*>(ctx);
  if (error->code == EMBER_OK) p->Succeed(); else Fail(*p, *error);
  delete p;
}

/// Starts a C write taking (cb, ctx, err); its Future completes (on the event thread) when the
/// backend acknowledges, or at once when the call refuses.
template <typename Call>
Future<void> Write(Call&& call) {
  auto* p = new firestore::internal::Promise<void>();
  Future<void> f = p->future();
  ember_error err = NewError();
  if (!call(&CompleteWrite, static_cast<void*>(p), &err)) {
    Fail(*p, err);
    delete p;
  }
  return f;
}

/// "/posts" + "abc" -> "/posts/abc"; "/" + "abc" -> "/abc".
inline std::string JoinPath(const std::string& parent, const std::string& child) {
  if (parent.empty() || parent == "/") return "/" + child;
  return parent + "/" + child;
}

}  // namespace internal
}  // namespace database
}  // namespace ember

#endif

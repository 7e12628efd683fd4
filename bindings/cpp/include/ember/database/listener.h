// ember/database/listener.h: ValueListener and ChildListener (after firebase-cpp-sdk's
// firebase/database/listener.h). Subclass one, attach it with Query::AddValueListener /
// AddChildListener, detach it with RemoveValueListener / RemoveChildListener (or RemoveAll*).
// The listener object stays the caller's: keep it alive until it is removed.
//
// @warning The methods run on the database's event thread, one at a time, in docs/semantics.md 20's
// order for one change (child removed, added, moved, changed, then value). They may call into
// Ember, including removing this or any other listener, but not block on GetValue().Await().
#ifndef EMBER_DATABASE_LISTENER_H
#define EMBER_DATABASE_LISTENER_H

#include "common.h"
#include "data_snapshot.h"

namespace ember {
namespace database {

class ValueListener {
 public:
  virtual ~ValueListener() {}
  /// The data at the location (the query's window for a query): at once when attached, then
  /// after every change.
  virtual void OnValueChanged(const DataSnapshot& snapshot) = 0;
  /// The listener could not start or was ended by an error; no call follows.
  virtual void OnCancelled(const Error& error, const char* error_message) = 0;
};

class ChildListener {
 public:
  virtual ~ChildListener() {}
  /// A child entered the location (once per existing child when attached). previous_sibling_key
  /// is the key of the child before it in the query's order, nullptr when it is first.
  virtual void OnChildAdded(const DataSnapshot& snapshot, const char* previous_sibling_key) = 0;
  /// A child's data changed (anywhere below it).
  virtual void OnChildChanged(const DataSnapshot& snapshot, const char* previous_sibling_key) = 0;
  /// A child changed place in the query's order (its ordered value changed).
  virtual void OnChildMoved(const DataSnapshot& snapshot, const char* previous_sibling_key) = 0;
  /// A child left the location (or the query's window); the snapshot holds its last data.
  virtual void OnChildRemoved(const DataSnapshot& snapshot) = 0;
  /// The listener could not start or was ended by an error; no call follows.
  virtual void OnCancelled(const Error& error, const char* error_message) = 0;
};

}  // namespace database
}  // namespace ember

#endif

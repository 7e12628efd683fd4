// ember/database.h: the header-only C++17 API of Ember's Realtime-Database-style tree,
// mirroring firebase-cpp-sdk's firebase/database.h over the C ABI (ember.h; link with -lember).
// Include this one header.
//
//   #include "ember/database.h"
//   using namespace ember::database;
//   std::unique_ptr<Database> database = Database::Create();     // or GetInstance(firestore)
//   DatabaseReference posts = database->GetReference("posts");
//   posts.PushChild().SetValue(std::map<std::string, ember::Variant>{{"title", "Hi"}});
//   posts.OrderByChild("stars").LimitToLast(10).AddChildListener(&listener);
//
// A Database is the tree of an Ember database: Database::Create() opens a database of its own
// (as Firestore::Create does), Database::GetInstance(firestore) is the tree of an open
// Firestore (same store, backend, network switch and event thread as its documents).
//
// Threads: every call may be made from any thread; listener methods and write completions run
// on the database's event thread, one at a time, and may call back into Ember.
#ifndef EMBER_DATABASE_H
#define EMBER_DATABASE_H

#include <memory>
#include <string>
#include <utility>

#include "firestore.h"
#include "variant.h"
#include "database/common.h"
#include "database/data_snapshot.h"
#include "database/listener.h"
#include "database/query.h"
#include "database/database_reference.h"

namespace ember {
namespace database {

/// The tree of one Ember database. Not copyable. References, queries and snapshots made from
/// it stay safe to use after it is gone (they then fail with kErrorOperationFailed once the
/// database is closed).
class Database {
 public:
  /// Opens a database with its own in-process backend (in memory by default), as
  /// Firestore::Create does; destroying the Database closes it (every listener ends, writes not
  /// yet acknowledged complete with kErrorWriteCanceled). nullptr on failure, with `error` /
  /// `error_message` filled when given.
  static std::unique_ptr<Database> Create(const firestore::Settings& settings = firestore::Settings(),
                                          Error* error = nullptr, std::string* error_message = nullptr) {
    ember_settings s;
    ember_error err = internal::NewError();
    ember_db* db = firestore::internal::CSettings(settings, &s, &err) ? ember_db_open(&s, &err) : nullptr;
    if (error) *error = ErrorFromCode(err.code);
    if (error_message) *error_message = err.message;
    if (!db) return nullptr;
    return Make(db, true, error, error_message);
  }

  /// The tree of `firestore`'s database (firebase-cpp: GetInstance(app)). The Firestore keeps
  /// owning the database: this Database must not outlive it in use (once the Firestore is
  /// destroyed, the database is closed and calls fail). nullptr for nullptr.
  static std::unique_ptr<Database> GetInstance(firestore::Firestore* firestore) {
    if (!firestore) return nullptr;
    return Make(firestore->handle(), false, nullptr, nullptr);
  }

  ~Database() {
    if (state_->owned) ember_db_close(state_->db, nullptr);
  }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// The root, or the location `path` ("posts/abc"; leading, trailing and doubled slashes are
  /// ignored). An invalid reference (with the error) for a bad path.
  DatabaseReference GetReference() const { return GetReference(static_cast<const char*>(nullptr)); }
  DatabaseReference GetReference(const char* path) const {
    ember_error err = internal::NewError();
    ember_ref* r = ember_ref_new(state_->db, path, &err);
    return DatabaseReference(state_, r, err);
  }
  DatabaseReference GetReference(const std::string& path) const {
    ember_error err = internal::NewError();
    if (!firestore::internal::NoNul(path, "GetReference: the path", &err)) return DatabaseReference(state_, nullptr, err);
    return GetReference(path.c_str());
  }

  /// The network switch (shared with the documents): offline, writes queue and listeners serve
  /// what the client has; online, queued writes go to the backend.
  void GoOffline() { ember_db_disable_network(state_->db, nullptr); }
  void GoOnline() { ember_db_enable_network(state_->db, nullptr); }

  /// Ember's addition: the C database (borrowed), for mixing with the C ABI.
  ember_db* handle() const { return state_->db; }

 private:
  static std::unique_ptr<Database> Make(ember_db* db, bool owned, Error* error, std::string* error_message) {
    auto state = std::make_shared<internal::DbState>(db, owned);
    ember_error err = internal::NewError();
    state->root = ember_ref_new(db, nullptr, &err);  // keeps the database's handle alive
    if (!state->root) {
      if (error) *error = ErrorFromCode(err.code);
      if (error_message) *error_message = err.message;
      return nullptr;
    }
    return std::unique_ptr<Database>(new Database(std::move(state)));
  }
  explicit Database(internal::State state) : state_(std::move(state)) {}
  internal::State state_;
};

}  // namespace database
}  // namespace ember

#endif

// Tests of the C++ tree wrapper (bindings/cpp/include/ember/database.h): Variant round trips,
// child events with previous keys, value events, ordered and limited queries, listener removal
// (also from inside a callback, and not recursive), errors through Futures and OnCancelled,
// the Firestore-shared database, the network switch, threads, and no Ember object left at the
// end of each test.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ember/database.h"

using namespace ember::database;
using ember::Variant;
using Map = std::map<std::string, Variant>;

static int failures = 0, checks = 0;
#define CHECK(c) do { checks++; if (!(c)) { failures++; std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

static void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

static void ExpectNoInstances(const char* test) {
  for (int i = 0; i < 200 && ember_instance_count() != 0; i++) Sleep(5);
  checks++;
  if (ember_instance_count() != 0) {
    failures++;
    std::fprintf(stderr, "FAIL [%s]: %lld Ember objects alive\n", test, (long long)ember_instance_count());
  }
}

/// Waits for every event posted so far (a write's completion comes after them).
static void Barrier(Database* db) {
  static int64_t n = 0;
  CHECK(db->GetReference("test/barrier").SetValue(Variant::FromInt64(++n)).Await(5000));
}

/// Records every event as a line ("added b after a"); optional hook runs inside the callback.
class Recorder : public ChildListener, public ValueListener {
 public:
  std::function<void(const std::string&)> hook;
  void OnChildAdded(const DataSnapshot& s, const char* p) override { Log("added " + s.key_string() + " after " + K(p)); }
  void OnChildChanged(const DataSnapshot& s, const char* p) override { Log("changed " + s.key_string() + " after " + K(p)); }
  void OnChildMoved(const DataSnapshot& s, const char* p) override { Log("moved " + s.key_string() + " after " + K(p)); }
  void OnChildRemoved(const DataSnapshot& s) override { Log("removed " + s.key_string()); }
  void OnValueChanged(const DataSnapshot& s) override {
    std::string line = "value";
    for (const DataSnapshot& c : s.children()) line += " " + c.key_string();
    if (!s.has_children()) line += " " + s.value().ToString();
    Log(line);
  }
  void OnCancelled(const Error& e, const char* m) override { Log("cancelled " + std::to_string(e) + " " + m); }

  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::string> out;
    out.swap(lines_);
    return out;
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(5), [&] { return lines_.size() >= n; });
  }

 private:
  static std::string K(const char* p) { return p ? p : "null"; }
  void Log(const std::string& line) {
    {
      std::lock_guard<std::mutex> l(mu_);
      lines_.push_back(line);
    }
    cv_.notify_all();
    if (hook) hook(line);
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
};

static bool Same(const std::vector<std::string>& got, const std::vector<std::string>& want, int line) {
  if (got == want) return true;
  std::fprintf(stderr, "  line %d: got:", line);
  for (const auto& s : got) std::fprintf(stderr, " [%s]", s.c_str());
  std::fprintf(stderr, "\n  want:");
  for (const auto& s : want) std::fprintf(stderr, " [%s]", s.c_str());
  std::fprintf(stderr, "\n");
  return false;
}
#define EVENTS(rec, ...) CHECK(Same((rec).Take(), std::vector<std::string>{__VA_ARGS__}, __LINE__))
#define NO_EVENTS(rec) CHECK(Same((rec).Take(), std::vector<std::string>{}, __LINE__))

static Variant Read(const Query& q) {
  ember::Future<DataSnapshot> f = q.GetValue();
  CHECK(f.Await(5000));
  CHECK(f.error() == kErrorNone);
  return f.result() ? f.result()->value() : Variant();
}

static void VariantRoundTrip() {
  auto db = Database::Create();
  Variant data = Map{{"null", Variant()},  // vanishes, as in the Realtime Database
                     {"t", true},
                     {"i", Variant::FromInt64(INT64_MIN)},
                     {"d", 1.0},
                     {"half", 0.5},
                     {"s", "h\xC3\xA9llo \"q\""},
                     {"list", std::vector<Variant>{1, "a", false}},
                     {"nested", Map{{"a", Map{{"b", 2}}}}}};
  DatabaseReference ref = db->GetReference("values");
  ember::Future<void> f = ref.SetValue(data);
  CHECK(f.Await(5000) && f.error() == kErrorNone);
  Variant back = Read(ref);
  Variant want = data;
  want.map().erase(Variant("null"));
  CHECK(back == want);
  if (back != want) std::fprintf(stderr, "  %s\n  %s\n", back.ToString().c_str(), want.ToString().c_str());
  CHECK(back.map()[Variant("i")].is_int64());
  CHECK(back.map()[Variant("d")].is_double());  // 1.0 stays a double
  CHECK(Variant(1) != Variant(1.0));
  CHECK(Variant(1.0).ToString() == "1.0" && Variant(1).ToString() == "1");
  // Integer and bool map keys become strings; others are refused.
  std::map<Variant, Variant> odd{{Variant(7), "seven"}};
  CHECK(ref.Child("odd").SetValue(odd).Await(5000));
  CHECK(Read(ref.Child("odd/7")) == Variant("seven"));
  std::map<Variant, Variant> bad{{Variant(1.5), "x"}};
  ember::Future<void> b = ref.Child("bad").SetValue(bad);
  CHECK(b.status() == ember::kFutureStatusComplete && b.error() == kErrorInvalidVariantType);
  // A snapshot's accessors.
  ember::Future<DataSnapshot> g = ref.GetValue();
  CHECK(g.Await(5000));
  const DataSnapshot& s = *g.result();
  CHECK(s.exists() && s.has_children() && s.key_string() == "values" && s.path() == "/values");
  CHECK(s.children_count() == 8);  // with "odd"
  CHECK(s.Child("nested/a/b").value() == Variant(2) && s.Child("nested/a/b").key_string() == "b");
  CHECK(s.Child("nested/a/b").path() == "/values/nested/a/b");
  CHECK(s.HasChild("list") && !s.HasChild("nope") && !s.Child("nope").exists());
  CHECK(s.Child("nested").GetReference().path() == "/values/nested");
  CHECK(s.priority().is_null());
  CHECK(!DataSnapshot().is_valid() && DataSnapshot().key() == nullptr);
  // References.
  CHECK(db->GetReference().is_root() && db->GetReference().key() == nullptr);
  CHECK(ref.Child("a/b").key_string() == "b" && ref.Child("a/b").GetParent().path() == "/values/a");
  CHECK(!db->GetReference().GetParent().is_valid());
  CHECK(ref.Child("a").GetRoot().is_root());
  CHECK(ref.PushChild().key_string().size() == 20);
}

static void ChildEventsWithPreviousKeys() {
  auto db = Database::Create();
  DatabaseReference list = db->GetReference("list");
  CHECK(list.SetValue(Map{{"a", 1}, {"b", 2}, {"c", 3}}).Await(5000));
  Recorder rec;
  Query q = list.OrderByValue();
  q.AddChildListener(&rec);
  q.AddValueListener(&rec);
  Barrier(db.get());
  EVENTS(rec, "added a after null", "added b after a", "added c after b", "value a b c");
  list.Child("a").SetValue(10);  // a moves to the end
  Barrier(db.get());
  EVENTS(rec, "moved a after c", "changed a after c", "value b c a");
  list.Child("d").SetValue(0);
  Barrier(db.get());
  EVENTS(rec, "added d after null", "value d b c a");
  list.Child("c").RemoveValue();
  Barrier(db.get());
  EVENTS(rec, "removed c", "value d b a");
  // The ordered value changes but the place does not: moved still fires (JS indexedValueChanged).
  list.Child("b").SetValue(3);
  Barrier(db.get());
  EVENTS(rec, "moved b after d", "changed b after d", "value d b a");
  // A multi-path update is one change: one value event.
  list.UpdateChildren({{"b", Variant()}, {"e", 5}, {"d", 20}});
  Barrier(db.get());
  EVENTS(rec, "removed b", "added e after null", "moved d after a", "changed d after a", "value e a d");
  // Adding the same listener again does nothing.
  q.AddChildListener(&rec);
  Barrier(db.get());
  NO_EVENTS(rec);
  q.RemoveChildListener(&rec);
  q.RemoveValueListener(&rec);
  list.Child("f").SetValue(1);
  Barrier(db.get());
  NO_EVENTS(rec);
}

static void LimitedQueries() {
  auto db = Database::Create();
  DatabaseReference scores = db->GetReference("scores");
  CHECK(scores.SetValue(Map{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}}).Await(5000));
  Recorder first, last;
  Query top = scores.OrderByValue().LimitToFirst(2);
  Query bottom = scores.OrderByValue().LimitToLast(2);
  top.AddChildListener(&first);
  bottom.AddChildListener(&last);
  Barrier(db.get());
  EVENTS(first, "added a after null", "added b after a");
  EVENTS(last, "added c after null", "added d after c");
  scores.Child("a").RemoveValue();  // the first window refills with c
  Barrier(db.get());
  EVENTS(first, "removed a", "added c after b");
  NO_EVENTS(last);
  scores.Child("e").SetValue(9);  // the last window keeps the last two
  Barrier(db.get());
  NO_EVENTS(first);
  EVENTS(last, "removed c", "added e after d");
  CHECK(Read(scores.OrderByKey().StartAfter("b").EndBefore("e")).ToString() == "{\"c\":3,\"d\":4}");
  CHECK(Read(scores.OrderByValue().EqualTo(4)).ToString() == "{\"d\":4}");
  CHECK(Read(scores.OrderByValue().StartAt(3, "d")).ToString() == "{\"d\":4,\"e\":9}");
  // A value snapshot of a query lists its children in the query's order.
  ember::Future<DataSnapshot> f = scores.OrderByValue().LimitToLast(3).GetValue();
  CHECK(f.Await(5000));
  std::string keys;
  for (const DataSnapshot& c : f.result()->children()) keys += c.key_string();
  CHECK(keys == "cde");
  top.RemoveAllChildListeners();
  bottom.RemoveAllChildListeners();
}

static void RemovalInsideCallbacks() {
  auto db = Database::Create();
  DatabaseReference list = db->GetReference("list");
  CHECK(list.SetValue(Map{{"a", 1}, {"b", 2}, {"c", 3}}).Await(5000));
  // A child listener that removes itself on its first event: nothing follows.
  Recorder self;
  self.hook = [&](const std::string&) { list.RemoveChildListener(&self); };
  list.AddChildListener(&self);
  Barrier(db.get());
  list.Child("d").SetValue(4);
  Barrier(db.get());
  EVENTS(self, "added a after null");
  // A value listener that removes another one (and all child listeners) from its callback.
  Recorder killer, victim;
  list.AddValueListener(&victim);
  Barrier(db.get());
  victim.Take();
  killer.hook = [&](const std::string&) {
    list.RemoveValueListener(&victim);
    list.RemoveAllValueListeners();
  };
  list.AddValueListener(&killer);
  Barrier(db.get());
  EVENTS(killer, "value a b c d");
  list.Child("e").SetValue(5);
  Barrier(db.get());
  NO_EVENTS(killer);
  NO_EVENTS(victim);
  // GetValue from inside a callback completes (it does not block).
  Recorder reader;
  std::atomic<int> got{0};
  reader.hook = [&](const std::string&) {
    list.RemoveValueListener(&reader);
    list.Child("a").GetValue().OnCompletion([&](const ember::Future<DataSnapshot>& f) {
      if (f.error() == kErrorNone && f.result()->value() == Variant(1)) got++;
    });
  };
  list.AddValueListener(&reader);
  for (int i = 0; i < 500 && got == 0; i++) Sleep(10);
  CHECK(got == 1);
}

static void RemoveAllIsNotRecursive() {
  auto db = Database::Create();
  DatabaseReference game = db->GetReference("game");
  CHECK(game.SetValue(Map{{"score", 0}}).Await(5000));
  Recorder top, child, childEvents, query;
  game.AddValueListener(&top);
  game.AddChildListener(&childEvents);
  game.Child("score").AddValueListener(&child);
  game.OrderByValue().AddValueListener(&query);
  Barrier(db.get());
  top.Take(); child.Take(); childEvents.Take(); query.Take();
  game.RemoveAllValueListeners();  // this query only: not the child's, not child listeners, not other queries
  game.Child("score").SetValue(1);
  Barrier(db.get());
  NO_EVENTS(top);
  EVENTS(child, "value 1");
  EVENTS(childEvents, "changed score after null");
  EVENTS(query, "value score");
  game.RemoveAllChildListeners();
  game.OrderByValue().RemoveAllValueListeners();
  game.Child("score").RemoveValueListener(&child);
  game.Child("score").SetValue(2);
  Barrier(db.get());
  NO_EVENTS(child);
  NO_EVENTS(childEvents);
  NO_EVENTS(query);
}

static void Errors() {
  auto db = Database::Create();
  // Bad keys and paths.
  DatabaseReference bad = db->GetReference("a").Child("b.c");
  CHECK(!bad.is_valid());
  CHECK(bad.error() == kErrorInvalidArgument);
  ember::Future<void> w = bad.SetValue(1);
  CHECK(w.status() == ember::kFutureStatusComplete && w.error() == kErrorInvalidArgument);
  CHECK(std::string(w.error_message()).find("b.c") != std::string::npos);
  CHECK(db->GetReference("a").SetValue(Map{{"x$y", 1}}).error() == kErrorInvalidArgument);
  CHECK(db->GetReference("a").UpdateChildren(Variant(3)).error() == kErrorInvalidVariantType);
  CHECK(db->GetReference("a").UpdateChildren({{"b", 1}, {"b/c", 2}}).error() == kErrorInvalidArgument);
  CHECK(bad.GetValue().error() == kErrorInvalidArgument);
  // Invalid queries: the error reaches GetValue and, once, OnCancelled on the event thread.
  Query q = db->GetReference("a").LimitToFirst(0);
  CHECK(!q.is_valid() && q.error() == kErrorInvalidArgument);
  CHECK(q.OrderByKey().error_message() == q.error_message());  // the first error is kept
  Recorder rec;
  std::thread::id caller = std::this_thread::get_id(), seen;
  rec.hook = [&](const std::string&) { seen = std::this_thread::get_id(); };
  q.AddValueListener(&rec);
  CHECK(rec.WaitFor(1));
  std::vector<std::string> lines = rec.Take();
  CHECK(lines.size() == 1 && lines[0].find("cancelled 100 ") == 0);
  CHECK(seen != caller);
  q.AddChildListener(&rec);
  CHECK(rec.WaitFor(1));
  Barrier(db.get());
  CHECK(rec.Take().size() == 1);
  CHECK(db->GetReference().OrderByPriority().error() == kErrorInvalidArgument);
  // Use after close: writes, reads and listeners fail.
  DatabaseReference ref = db->GetReference("a");
  db.reset();
  CHECK(ref.SetValue(1).error() == kErrorOperationFailed);
  CHECK(ref.GetValue().error() == kErrorOperationFailed);
  Recorder late;
  ref.AddValueListener(&late);
  CHECK(late.WaitFor(1));
  lines = late.Take();
  CHECK(lines.size() == 1 && lines[0].find("cancelled 6 ") == 0);
}

static void SharedWithFirestore() {
  auto firestore = ember::firestore::Firestore::Create();
  auto db = Database::GetInstance(firestore.get());
  CHECK(db != nullptr);
  CHECK(db->handle() == firestore->handle());
  Recorder rec;
  DatabaseReference r = db->GetReference("shared");
  r.AddValueListener(&rec);
  CHECK(rec.WaitFor(1));
  EVENTS(rec, "value null");
  // Offline (the one network switch): local writes raise events at once, acknowledgements wait.
  db->GoOffline();
  ember::Future<void> w = r.SetValue("offline");
  CHECK(rec.WaitFor(1));
  EVENTS(rec, "value \"offline\"");
  Sleep(50);
  CHECK(w.status() == ember::kFutureStatusPending);
  firestore->EnableNetwork();
  CHECK(w.Await(5000) && w.error() == kErrorNone);
  db->GoOffline();
  db->GoOnline();
  // Documents and the tree live side by side.
  CHECK(firestore->Collection("c").Document("d").Set({{"n", ember::firestore::FieldValue::Integer(1)}}).Await(5000));
  CHECK(Read(r) == Variant("offline"));
  // Destroying the Firestore closes the database: the listener ends, calls fail.
  firestore.reset();
  CHECK(r.SetValue(1).error() == kErrorOperationFailed);
  Sleep(20);
  NO_EVENTS(rec);
  r.RemoveValueListener(&rec);  // harmless after close
}

static void Threads() {
  auto db = Database::Create();
  DatabaseReference base = db->GetReference("threads");
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; t++) {
    ts.emplace_back([&, t] {
      Recorder rec;
      DatabaseReference mine = base.Child("t" + std::to_string(t));
      for (int i = 0; i < 20; i++) {
        mine.AddChildListener(&rec);
        mine.AddValueListener(&rec);
        mine.PushChild().SetValue(i);
        if (i % 3 == 0) mine.RemoveAllChildListeners(); else mine.RemoveChildListener(&rec);
        mine.RemoveValueListener(&rec);
      }
      if (mine.GetValue().Await(5000)) ok++;
    });
  }
  for (auto& t : ts) t.join();
  CHECK(ok == 4);
  ember::Future<DataSnapshot> f = base.GetValue();
  CHECK(f.Await(5000) && f.result()->children_count() == 4 && f.result()->Child("t0").children_count() == 20);
}

// RunTransaction: firebase-cpp's counter, MutableData's child writes, abort, an invalid value,
// the context-pointer form, and threads contending on one counter.
static TransactionResult AddTen(MutableData* data, void* context) {
  *static_cast<int*>(context) += 1;
  data->set_value(data->value().is_int64() ? data->value().int64_value() + 10 : 10);
  return kTransactionResultSuccess;
}

// Settings::database_host: a bad address is refused by Create; an unreachable server is not an
// error (writes wait, listeners serve what the client has).
static void DatabaseHostSetting() {
  ember::firestore::Settings settings;
  settings.set_database_host("no port here");
  Error error = kErrorNone;
  std::string message;
  CHECK(Database::Create(settings, &error, &message) == nullptr);
  CHECK(error == kErrorInvalidArgument && message.find("database_host") != std::string::npos);
  settings.set_database_host(std::string("127.0.0.1:9\0", 12));
  CHECK(Database::Create(settings, &error, &message) == nullptr && error == kErrorInvalidArgument);
  settings.set_database_host("127.0.0.1:1");
  settings.set_ssl_enabled(false);
  std::unique_ptr<Database> db = Database::Create(settings, &error, &message);
  CHECK(db != nullptr && error == kErrorNone);
  if (!db) return;
  ember::Future<void> pending = db->GetReference("queued").SetValue(1);
  CHECK(pending.status() == ember::kFutureStatusPending);
}

static void Transactions() {
  std::unique_ptr<Database> db = Database::Create();
  DatabaseReference counter = db->GetReference("counter");
  std::vector<Variant> seen;
  auto increment = [&seen](MutableData* data) {
    seen.push_back(data->value());
    data->set_value(data->value().is_int64() ? data->value().int64_value() + 1 : 1);
    return kTransactionResultSuccess;
  };
  for (int i = 1; i <= 3; i++) {
    ember::Future<DataSnapshot> f = counter.RunTransaction(increment);
    CHECK(f.Await(5000) && f.error() == kErrorNone);
    CHECK(f.result() && f.result()->value() == Variant::FromInt64(i));
  }
  CHECK(!seen.empty() && seen[0].is_null());
  CHECK(Read(counter) == Variant::FromInt64(3));

  int calls = 0;
  ember::Future<DataSnapshot> ten = counter.RunTransaction(AddTen, &calls);
  CHECK(ten.Await(5000) && ten.error() == kErrorNone && calls >= 1);
  CHECK(Read(counter) == Variant::FromInt64(13));

  DatabaseReference stats = db->GetReference("stats");
  ember::Future<DataSnapshot> c = stats.RunTransaction([](MutableData* data) {
    CHECK(data->value().is_null() && data->key_string() == "stats");
    data->Child("views/today").set_value(3);
    data->Child("likes").set_value(1);
    CHECK(data->children_count() == 2 && data->HasChild("views/today"));
    std::vector<MutableData> kids = data->children();
    CHECK(kids.size() == 2 && kids[0].key_string() == "likes" && kids[1].key_string() == "views");
    return kTransactionResultSuccess;
  });
  CHECK(c.Await(5000) && c.error() == kErrorNone);
  CHECK(Read(stats.Child("views/today")) == Variant::FromInt64(3));

  ember::Future<DataSnapshot> aborted = counter.RunTransaction([](MutableData*) { return kTransactionResultAbort; });
  CHECK(aborted.Await(5000) && aborted.error() == kErrorTransactionAbortedByUser);
  ember::Future<DataSnapshot> bad = counter.RunTransaction([](MutableData* data) {
    std::map<Variant, Variant> m;
    m[Variant(1.5)] = Variant("double keys are not tree keys");
    data->set_value(Variant(m));
    return kTransactionResultSuccess;
  });
  CHECK(bad.Await(5000) && bad.error() == kErrorInvalidVariantType);
  CHECK(Read(counter) == Variant::FromInt64(13));
  ember::Future<DataSnapshot> empty = counter.RunTransaction(DatabaseReference::DoTransactionFunction());
  CHECK(empty.status() == ember::kFutureStatusComplete && empty.error() == kErrorInvalidArgument);

  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&counter, &failed] {
      for (int i = 0; i < 10; i++) {
        ember::Future<DataSnapshot> f = counter.RunTransaction([](MutableData* data) {
          data->set_value(data->value().int64_value() + 1);
          return kTransactionResultSuccess;
        });
        if (!f.Await(10000) || f.error() != kErrorNone) failed++;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failed == 0);
  CHECK(Read(counter) == Variant::FromInt64(53));
}

int main() {
  VariantRoundTrip();
  ExpectNoInstances("VariantRoundTrip");
  ChildEventsWithPreviousKeys();
  ExpectNoInstances("ChildEventsWithPreviousKeys");
  LimitedQueries();
  ExpectNoInstances("LimitedQueries");
  RemovalInsideCallbacks();
  ExpectNoInstances("RemovalInsideCallbacks");
  RemoveAllIsNotRecursive();
  ExpectNoInstances("RemoveAllIsNotRecursive");
  Errors();
  ExpectNoInstances("Errors");
  SharedWithFirestore();
  ExpectNoInstances("SharedWithFirestore");
  Threads();
  ExpectNoInstances("Threads");
  Transactions();
  ExpectNoInstances("Transactions");
  DatabaseHostSetting();
  ExpectNoInstances("DatabaseHostSetting");
  std::printf("C++ tree wrapper: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

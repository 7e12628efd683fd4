// Tests of the C++ wrapper (bindings/cpp/include/ember/firestore.h): value round trips,
// transforms, errors through Futures and listener callbacks, listener removal from inside a
// callback, document changes, batches, transactions, the network switch, and no Ember object
// left at the end of each test.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ember/firestore.h"

using namespace ember::firestore;

static int failures = 0, checks = 0;
#define CHECK(c) do { checks++; if (!(c)) { failures++; std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

/// Counts callbacks; the test waits for a count (at most 5 s).
struct Counter {
  std::mutex mu;
  std::condition_variable cv;
  int n = 0;
  void Add() { std::lock_guard<std::mutex> l(mu); n++; cv.notify_all(); }
  bool Wait(int target) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::seconds(5), [&] { return n >= target; });
  }
  int Get() { std::lock_guard<std::mutex> l(mu); return n; }
};

static void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

static void ExpectNoInstances(const char* test) {
  for (int i = 0; i < 200 && ember_instance_count() != 0; i++) Sleep(5);
  checks++;
  if (ember_instance_count() != 0) {
    failures++;
    std::fprintf(stderr, "FAIL [%s]: %lld Ember objects alive\n", test, (long long)ember_instance_count());
  }
}

static void ValuesRoundTrip() {
  auto firestore = Firestore::Create();
  Firestore* db = firestore.get();
  const uint8_t bytes[] = {0, 1, 2, 255};
  MapFieldValue data{
      {"null", FieldValue::Null()},
      {"bool", FieldValue::Boolean(true)},
      {"int", FieldValue::Integer(1)},
      {"big", FieldValue::Integer(INT64_MIN)},
      {"double", FieldValue::Double(1.0)},
      {"nan", FieldValue::Double(std::nan(""))},
      {"string", FieldValue::String("h\xC3\xA9llo \"quoted\"")},
      {"blob", FieldValue::Blob(bytes, sizeof bytes)},
      {"time", FieldValue::Timestamp(Timestamp(1714564800, 1000))},
      {"geo", FieldValue::GeoPoint(GeoPoint(37.77, -122.42))},
      {"ref", FieldValue::Reference(db->Document("cities/SF"))},
      {"array", FieldValue::Array({FieldValue::Integer(1), FieldValue::String("a")})},
      {"map", FieldValue::Map({{"a.b", FieldValue::Integer(2)}, {"n", FieldValue::Map({{"x", FieldValue::Null()}})}})},
  };
  DocumentReference doc = db->Document("c/values");
  Future<void> f = doc.Set(data);
  CHECK(f.Await(5000));
  CHECK(f.error() == kErrorOk);
  Future<DocumentSnapshot> g = doc.Get();
  CHECK(g.status() == kFutureStatusComplete && g.result() != nullptr);
  MapFieldValue back = g.result()->GetData();
  CHECK(back.size() == data.size());
  for (const auto& kv : data) {
    bool same = back.count(kv.first) && back[kv.first] == kv.second;
    if (!same) std::fprintf(stderr, "  field %s: %s != %s\n", kv.first.c_str(), kv.second.ToString().c_str(),
                            back.count(kv.first) ? back[kv.first].ToString().c_str() : "(missing)");
    CHECK(same);
  }
  CHECK(back["int"].type() == FieldValue::Type::kInteger);
  CHECK(back["double"].type() == FieldValue::Type::kDouble);
  CHECK(back["blob"].blob_size() == 4 && back["blob"].blob_value()[3] == 255);
  CHECK(back["ref"].reference_value().path() == "cities/SF");
  CHECK(g.result()->Get("map.`a.b`").integer_value() == 2);
  CHECK(!g.result()->Get("missing").is_valid());
  CHECK(g.result()->id() == "values");
  CHECK(g.result()->reference() == doc);
  CHECK(FieldValue::Map(back).ToString() == FieldValue::Map(back).ToString());
}

static void Transforms() {
  auto firestore = Firestore::Create();
  DocumentReference doc = firestore->Document("c/t");
  CHECK(doc.Set({{"n", FieldValue::Integer(1)}, {"a", FieldValue::Array({FieldValue::Integer(1), FieldValue::Integer(2)})},
                 {"gone", FieldValue::Boolean(true)}, {"m", FieldValue::Map({{"keep", FieldValue::Integer(1)}})}})
            .Await(5000));
  Future<void> u = doc.Update({{"n", FieldValue::Increment(2)},
                               {"a", FieldValue::ArrayUnion({FieldValue::Integer(3)})},
                               {"gone", FieldValue::Delete()},
                               {"m.at", FieldValue::ServerTimestamp()}});
  CHECK(u.Await(5000) && u.error() == kErrorOk);
  DocumentSnapshot s = *doc.Get().result();
  CHECK(s.Get("n").integer_value() == 3);
  CHECK(s.Get("a").array_value().size() == 3);
  CHECK(!s.Get("gone").is_valid());
  CHECK(s.Get("m.keep").integer_value() == 1);
  CHECK(s.Get("m.at").is_timestamp());
  CHECK(doc.Set({{"a", FieldValue::ArrayRemove({FieldValue::Integer(1)})}, {"x", FieldValue::Double(0.5)}},
                SetOptions::Merge()).Await(5000));
  s = *doc.Get().result();
  CHECK(s.Get("a").array_value().size() == 2 && s.Get("n").integer_value() == 3 && s.Get("x").double_value() == 0.5);
  CHECK(doc.Set({{"n", FieldValue::Integer(9)}, {"x", FieldValue::Integer(9)}}, SetOptions::MergeFields({"n"})).Await(5000));
  s = *doc.Get().result();
  CHECK(s.Get("n").integer_value() == 9 && s.Get("x").double_value() == 0.5);
}

static void Errors() {
  auto firestore = Firestore::Create();
  Firestore* db = firestore.get();
  Future<void> f = db->Document("c/missing").Update({{"x", FieldValue::Integer(1)}});
  CHECK(f.Await(5000) && f.error() == kErrorNotFound && std::strlen(f.error_message()) > 0);
  f = db->Document("c").Set({});
  CHECK(f.status() == kFutureStatusComplete && f.error() == kErrorInvalidArgument);
  f = db->Document("c/x").Set({{"a", FieldValue::Array({FieldValue::ServerTimestamp()})}});
  CHECK(f.error() == kErrorInvalidArgument);
  f = db->Document("c/x").Set({{"a", FieldValue::Delete()}});
  CHECK(f.error() == kErrorInvalidArgument);
  Query bad = db->Collection("c").WhereIn("x", {});
  CHECK(bad.error() == kErrorInvalidArgument);
  CHECK(bad.OrderBy("y").error() == kErrorInvalidArgument);   // the first error sticks
  CHECK(bad.Get().error() == kErrorInvalidArgument);
  CHECK(db->Collection("c//d").Get().error() == kErrorInvalidArgument);
  // A listener that cannot start gets its error once, on the event thread.
  Counter calls;
  std::atomic<int> code{-1};
  std::thread::id caller = std::this_thread::get_id(), callback_thread;
  db->Collection("c").LimitToLast(1).AddSnapshotListener(
      [&](const QuerySnapshot& s, Error e, const std::string& message) {
        code = e;
        callback_thread = std::this_thread::get_id();
        CHECK(!s.is_valid() && !message.empty());
        calls.Add();
      });
  CHECK(calls.Wait(1));
  CHECK(code == kErrorInvalidArgument);
  CHECK(callback_thread != caller);
  db->Document("c/y").Set({{"z", FieldValue::Integer(1)}}).Await(5000);
  Sleep(20);
  CHECK(calls.Get() == 1);
  // After Terminate everything fails with kErrorFailedPrecondition; the listener errors at once.
  DocumentReference doc = db->Document("c/y");
  CHECK(db->Terminate().error() == kErrorOk);
  CHECK(doc.Get().error() == kErrorFailedPrecondition);
  CHECK(doc.Set({}).error() == kErrorFailedPrecondition);
  Counter closed;
  doc.AddSnapshotListener([&](const DocumentSnapshot&, Error e, const std::string&) {
    CHECK(e == kErrorFailedPrecondition);
    closed.Add();
  });
  CHECK(closed.Wait(1));
}

static void RemoveFromInsideCallback() {
  auto firestore = Firestore::Create();
  Firestore* db = firestore.get();
  Counter events;
  auto registration = std::make_shared<ListenerRegistration>();
  *registration = db->Document("c/a").AddSnapshotListener(
      MetadataChanges::kInclude, [&events, registration](const DocumentSnapshot&, Error, const std::string&) {
        events.Add();
        if (events.Get() == 2) { registration->Remove(); registration->Remove(); }
      });
  CHECK(events.Wait(1));
  db->Document("c/a").Set({{"x", FieldValue::Integer(1)}});
  CHECK(events.Wait(2));
  db->Document("c/a").Set({{"x", FieldValue::Integer(2)}}).Await(5000);
  db->Document("c/a").Set({{"x", FieldValue::Integer(3)}}).Await(5000);
  Sleep(30);
  CHECK(events.Get() == 2);
  registration->Remove();  // idempotent from outside too
  registration.reset();    // the callback's copy went with its context
}

static void ChangesAndIndexes() {
  auto firestore = Firestore::Create();
  Firestore* db = firestore.get();
  std::mutex mu;
  std::vector<std::string> seen;
  Counter events;
  db->Collection("c").OrderBy("n").AddSnapshotListener([&](const QuerySnapshot& s, Error e, const std::string&) {
    CHECK(e == kErrorOk);
    std::string line;
    for (const DocumentChange& dc : s.DocumentChanges()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%c%s:%d>%d ", "AMR"[static_cast<int>(dc.type())], dc.document().id().c_str(),
                    dc.old_index() == DocumentChange::npos ? -1 : static_cast<int>(dc.old_index()),
                    dc.new_index() == DocumentChange::npos ? -1 : static_cast<int>(dc.new_index()));
      line += buf;
    }
    { std::lock_guard<std::mutex> l(mu); seen.push_back(line); }
    events.Add();
  });
  CHECK(events.Wait(1));
  db->Document("c/b").Set({{"n", FieldValue::Integer(2)}});
  CHECK(events.Wait(2));
  db->Document("c/a").Set({{"n", FieldValue::Integer(1)}});
  CHECK(events.Wait(3));
  db->Document("c/b").Update({{"n", FieldValue::Integer(0)}});
  CHECK(events.Wait(4));
  db->Document("c/a").Delete();
  CHECK(events.Wait(5));
  std::lock_guard<std::mutex> l(mu);
  CHECK(seen.size() >= 5);
  if (seen.size() >= 5) {
    CHECK(seen[0] == "");
    CHECK(seen[1] == "Ab:-1>0 ");
    CHECK(seen[2] == "Aa:-1>0 ");
    CHECK(seen[3] == "Mb:1>0 ");
    CHECK(seen[4] == "Ra:1>-1 ");
  }
}

static void BatchTransactionNetwork() {
  auto firestore = Firestore::Create();
  Firestore* db = firestore.get();
  WriteBatch batch = db->batch();
  batch.Set(db->Document("c/a"), {{"n", FieldValue::Integer(1)}})
      .Set(db->Document("c/b"), {{"n", FieldValue::Integer(2)}})
      .Delete(db->Document("c/zz"));
  Future<void> c = batch.Commit();
  CHECK(c.Await(5000) && c.error() == kErrorOk);
  CHECK(batch.Commit().error() == kErrorFailedPrecondition);   // a batch commits once
  WriteBatch bad = db->batch();
  bad.Set(db->Document("c"), {});
  CHECK(bad.Commit().error() == kErrorInvalidArgument);

  Future<void> t = db->RunTransaction([&](Transaction& tx, std::string&) -> Error {
    Error e;
    DocumentSnapshot a = tx.Get(db->Document("c/a"), &e);
    if (e != kErrorOk) return e;
    tx.Update(db->Document("c/a"), {{"n", FieldValue::Integer(a.Get("n").integer_value() + 10)}});
    return kErrorOk;
  });
  CHECK(t.error() == kErrorOk);
  CHECK(db->Document("c/a").Get().result()->Get("n").integer_value() == 11);
  t = db->RunTransaction([](Transaction&, std::string& message) -> Error {
    message = "changed my mind";
    return kErrorAborted;
  });
  CHECK(t.error() == kErrorAborted && std::string(t.error_message()) == "changed my mind");

  CHECK(db->DisableNetwork().error() == kErrorOk);
  Future<void> w = db->Document("c/off").Set({{"x", FieldValue::Boolean(true)}});
  CHECK(!w.Await(50));                                       // queued while offline
  CHECK(db->Document("c/off").Get(Source::kCache).result()->metadata().has_pending_writes());
  CHECK(db->Document("c/nope").Get().error() == kErrorUnavailable);
  Counter completed;
  w.OnCompletion([&](const Future<void>& f) { CHECK(f.error() == kErrorOk); completed.Add(); });
  CHECK(db->EnableNetwork().error() == kErrorOk);
  CHECK(completed.Wait(1));
  CHECK(db->WaitForPendingWrites().Await(5000));
  QuerySnapshot all = *db->Collection("c").Get().result();
  CHECK(all.size() == 3 && !all.metadata().is_from_cache());
  CHECK(db->Collection("c").WhereGreaterThan("n", FieldValue::Integer(1)).Count().result() != nullptr);
  Future<DocumentReference> added = db->Collection("c").Add({{"auto", FieldValue::Boolean(true)}});
  CHECK(added.Await(5000) && added.result() && added.result()->id().size() == 20);
  // A write still waiting when the database closes completes with kErrorCancelled.
  db->DisableNetwork();
  Future<void> pending = db->Document("c/late").Set({});
  firestore.reset();
  CHECK(pending.Await(5000) && pending.error() == kErrorCancelled);
}

// In a snapshot with several changes, each change's document is the changed one.
static void ChangeDocumentIsTheChangedOne() {
  auto firestore = Firestore::Create();
  Firestore* db = firestore.get();
  for (const char* id : {"DC", "LA", "TOK"})
    db->Document(std::string("cities/") + id).Set({{"name", FieldValue::String(std::string(id) == "DC" ? "Washington" : std::string(id) == "LA" ? "Los Angeles" : "Tokyo")}});
  std::mutex mu;
  std::string line;
  Counter events;
  ListenerRegistration r = db->Collection("cities").OrderBy("name").AddSnapshotListener(
      [&](const QuerySnapshot& s, Error e, const std::string&) {
        CHECK(e == kErrorOk);
        std::string l;
        for (const DocumentChange& dc : s.DocumentChanges()) l += std::string(1, "AMR"[static_cast<int>(dc.type())]) + dc.document().id() + " ";
        { std::lock_guard<std::mutex> g(mu); line = l; }
        events.Add();
      });
  CHECK(events.Wait(1));
  WriteBatch b = db->batch();
  b.Set(db->Document("cities/A1"), {{"name", FieldValue::String("Aachen")}});
  b.Set(db->Document("cities/A2"), {{"name", FieldValue::String("Abu Dhabi")}});
  b.Delete(db->Document("cities/LA"));
  b.Set(db->Document("cities/DC"), {{"name", FieldValue::String("Aaa")}});  // moves before the added ones
  b.Commit();
  CHECK(events.Wait(2));
  { std::lock_guard<std::mutex> g(mu); CHECK(line == "RLA AA1 AA2 MDC "); if (line != "RLA AA1 AA2 MDC ") std::fprintf(stderr, "changes: %s\n", line.c_str()); }
  r.Remove();
}

// A std::string holding a NUL is refused before it reaches C (it would
// name another document); values nested too deeply are refused, never a stack overflow.
static void NulAndDepthAreRefused() {
  auto firestore = Firestore::Create();
  Firestore* db = firestore.get();
  CHECK(db->Document("c/a").Set({{"v", FieldValue::String("original")}}).Await(5000));
  std::string nul_id("c/a\0b", 5);
  Future<void> w = db->Document(nul_id).Set({{"v", FieldValue::String("overwritten")}});
  CHECK(w.Await(5000) && w.error() == kErrorInvalidArgument);
  CHECK(db->Document(nul_id).Update({{"v", FieldValue::Integer(1)}}).error() == kErrorInvalidArgument);
  CHECK(db->Document(nul_id).Delete().error() == kErrorInvalidArgument);
  CHECK(db->Document(nul_id).Get().error() == kErrorInvalidArgument);
  CHECK(db->Document("c/a").Get().result()->Get("v").string_value() == "original");
  CHECK(db->Collection(std::string("c\0d", 3)).Get().error() == kErrorInvalidArgument);
  CHECK(db->CollectionGroup(std::string("g\0h", 3)).Get().error() == kErrorInvalidArgument);
  CHECK(db->Collection("c").WhereEqualTo(std::string("f\0g", 3), FieldValue::Integer(1)).Get().error() == kErrorInvalidArgument);
  CHECK(db->Collection("c").OrderBy(std::string("f\0g", 3)).Get().error() == kErrorInvalidArgument);
  WriteBatch b = db->batch();
  b.Set(db->Document(nul_id), {{"v", FieldValue::Integer(1)}});
  CHECK(b.Commit().error() == kErrorInvalidArgument);
  FieldValue deep = FieldValue::Integer(1);
  for (int i = 0; i < 200; i++) deep = FieldValue::Array({deep});
  CHECK(db->Document("c/deep").Set({{"v", deep}}).error() == kErrorInvalidArgument);
  CHECK(db->Document("c/deep").Update({{"v", FieldValue::ArrayUnion({deep})}}).error() == kErrorInvalidArgument);
  CHECK(db->Collection("c").WhereEqualTo("v", deep).Get().error() == kErrorInvalidArgument);
  CHECK(db->Collection("c").OrderBy("v").StartAt({deep}).Get().error() == kErrorInvalidArgument);
  FieldValue deep_map = FieldValue::Integer(1);
  for (int i = 0; i < 200; i++) deep_map = FieldValue::Map({{"m", deep_map}});
  CHECK(db->Document("c/deep").Set({{"v", deep_map}}).error() == kErrorInvalidArgument);
  CHECK(!db->Document("c/deep").Get().result()->exists());
}

// Settings::set_host, set_ssl_enabled, set_ssl_ca_file, set_auth_token:
// refusals through Create's error and message; a host nothing answers at opens (the connection
// is made in the background) and its writes wait.
static void HostSettings() {
  Settings defaults;
  CHECK(defaults.host().empty() && defaults.is_ssl_enabled());
  auto open = [](const std::string& host, bool ssl, Error* error, std::string* message) {
    Settings s;
    s.set_host(host);
    s.set_ssl_enabled(ssl);
    return Firestore::Create(s, error, message);
  };
  Error error = kErrorOk;
  std::string message;
  {
    // TLS (the default) opens; an unreadable CA file and a token with a NUL or a space do not.
    auto tls = open("127.0.0.1:9", true, &error, &message);
    CHECK(tls != nullptr && error == kErrorOk);
    Settings s;
    s.set_host("127.0.0.1:9");
    s.set_ssl_ca_file("/nonexistent/ca.pem");
    CHECK(Firestore::Create(s, &error, &message) == nullptr);
    CHECK(error == kErrorInvalidArgument && message.find("Cannot read the trusted certificates file") != std::string::npos);
    s.set_ssl_ca_file("");
    s.set_auth_token(std::string("a\0b", 3));
    CHECK(Firestore::Create(s, &error, &message) == nullptr);
    CHECK(error == kErrorInvalidArgument && message.find("Settings auth_token must not contain a NUL") != std::string::npos);
    s.set_auth_token("two words");
    CHECK(Firestore::Create(s, &error, &message) == nullptr);
    CHECK(error == kErrorInvalidArgument && message.find("Invalid auth token") != std::string::npos);
    s.set_auth_token("header.payload.signature");
    auto with_token = Firestore::Create(s, &error, &message);
    CHECK(with_token != nullptr && error == kErrorOk);
  }
  CHECK(open(std::string("127.0.0.1\0:8080", 15), false, &error, &message) == nullptr);
  CHECK(error == kErrorInvalidArgument && message.find("Settings host must not contain a NUL") != std::string::npos);
  CHECK(open("localhost", false, &error, &message) == nullptr);
  CHECK(error == kErrorInvalidArgument && message.find("no port") != std::string::npos);
  auto db = open("127.0.0.1:9", false, &error, &message);
  CHECK(db != nullptr && error == kErrorOk);
  if (db) {
    Future<void> w = db->Document("c/a").Set({{"v", FieldValue::Integer(1)}});
    Sleep(50);
    CHECK(w.status() == kFutureStatusPending);   // nothing answers at the discard port
  }
}

int main() {
#define RUN(t) do { t(); ExpectNoInstances(#t); } while (0)
  RUN(ValuesRoundTrip);
  RUN(Transforms);
  RUN(Errors);
  RUN(RemoveFromInsideCallback);
  RUN(ChangesAndIndexes);
  RUN(BatchTransactionNetwork);
  RUN(ChangeDocumentIsTheChangedOne);
  RUN(NulAndDepthAreRefused);
  RUN(HostSettings);
  std::printf("C++ wrapper tests: %d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}

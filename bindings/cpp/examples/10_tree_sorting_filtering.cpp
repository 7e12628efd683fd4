// Seed 002, "Sorting and filtering data": the seed's queries in C++ (myTopPostsQuery ordered by
// starCount, postsByMostPopular by the nested child metrics/views, recentPostsQuery limited to
// the first 100), then how each order-by sorts (docs/semantics.md 15-16), the filters, a limit
// window refilling (docs/semantics.md 21) and the errors of docs/semantics.md 19.
#include <string>

#include "tree_example.h"

using namespace ember::database;  // firebase-cpp: firebase::database
using ember::Variant;
using Map = std::map<std::string, Variant>;

static std::string getUid() { return "alice"; }

/// Prints a query's children in its order.
static void Show(const char* what, const Query& query) {
  ember::Future<DataSnapshot> result = query.GetValue();
  result.Await(5000);
  std::cout << what << ":";
  if (result.error() != kErrorNone) {
    std::cout << " error " << result.error() << ": " << result.error_message() << std::endl;
    return;
  }
  for (const DataSnapshot& child : result.result()->children()) std::cout << " " << child.key();
  std::cout << std::endl;
}

/// Prints the child events of a window.
class WindowListener : public ChildListener {
 public:
  void OnChildAdded(const DataSnapshot& s, const char* prev) override {
    std::cout << "  child_added " << s.key() << " after " << tree_example::Key(prev) << std::endl;
  }
  void OnChildChanged(const DataSnapshot& s, const char*) override { std::cout << "  child_changed " << s.key() << std::endl; }
  void OnChildMoved(const DataSnapshot& s, const char* prev) override {
    std::cout << "  child_moved " << s.key() << " after " << tree_example::Key(prev) << std::endl;
  }
  void OnChildRemoved(const DataSnapshot& s) override { std::cout << "  child_removed " << s.key() << std::endl; }
  void OnCancelled(const Error& error, const char* error_message) override {
    std::cout << "  cancelled: " << error << " " << error_message << std::endl;
  }
};

int main() {
  std::unique_ptr<Database> database = Database::Create();
  {
  DatabaseReference ref = database->GetReference();
  ref.Child("user-posts").Child(getUid()).SetValue(Map{
      {"p1", Map{{"title", "one"}, {"starCount", 5}}},
      {"p2", Map{{"title", "two"}, {"starCount", 1}}},
      {"p3", Map{{"title", "three"}, {"starCount", 3}}}});
  // The seed's example data.
  ref.Child("posts").SetValue(Map{
      {"ts-functions", Map{{"metrics", Map{{"views", 1200000}, {"likes", 251000}, {"shares", 1200}}},
                           {"title", "Why you should use TypeScript for writing Cloud Functions"},
                           {"author", "Doug"}}},
      {"android-arch-3", Map{{"metrics", Map{{"views", 900000}, {"likes", 117000}, {"shares", 144}}},
                             {"title", "Using Android Architecture Components with Firebase Realtime Database (Part 3)"},
                             {"author", "Doug"}}}});
  tree_example::Barrier(database.get());

  // ---- the seed's samples, in C++
  // My top posts by number of stars
  Query myTopPostsQuery = ref.Child("user-posts").Child(getUid()).OrderByChild("starCount");
  Query postsByMostPopular = ref.Child("posts").OrderByChild("metrics/views");
  // Last 100 posts, these are automatically the 100 most recent
  // due to sorting by push() keys
  Query recentPostsQuery = ref.Child("posts").LimitToFirst(100);
  // ----
  Show("myTopPostsQuery", myTopPostsQuery);
  Show("postsByMostPopular", postsByMostPopular);
  Show("recentPostsQuery", recentPostsQuery);

  std::cout << "-- OrderByKey: 32-bit integer keys first, numerically, then strings" << std::endl;
  DatabaseReference keys = ref.Child("keys");
  for (const char* k : {"foo", "100", "003", "bar", "9", "03", "0", "20", "5", "3"}) keys.Child(k).SetValue(true);
  tree_example::Barrier(database.get());
  Show("OrderByKey", keys.OrderByKey());

  std::cout << "-- OrderByChild: missing/null < false < true < numbers < strings < objects, ties by key" << std::endl;
  DatabaseReference items = ref.Child("items");
  items.SetValue(Map{{"a", Map{{"v", "x"}}},
                     {"b", Map{{"v", Map{{"deep", 1}}}}},
                     {"c", Map{{"v", 2.5}}},
                     {"d", Map{{"v", true}}},
                     {"e", Map{{"other", 1}}},
                     {"f", Map{{"v", false}}},
                     {"g", Map{{"v", -1}}},
                     {"h", Map{{"v", "a"}}},
                     {"i", Map{{"v", 2.5}}}}).Await(5000);
  Show("OrderByChild(v)", items.OrderByChild("v"));
  std::cout << "-- OrderByValue" << std::endl;
  DatabaseReference scores = ref.Child("scores");
  scores.SetValue(Map{{"ann", 30}, {"bob", 10}, {"cat", 20}, {"dan", 20}, {"eve", "n/a"}}).Await(5000);
  Show("OrderByValue", scores.OrderByValue());

  std::cout << "-- filters" << std::endl;
  Show("StartAt(20)", scores.OrderByValue().StartAt(20));
  Show("StartAt(20, \"dan\")", scores.OrderByValue().StartAt(20, "dan"));
  Show("StartAfter(20)", scores.OrderByValue().StartAfter(20));
  Show("EndAt(20)", scores.OrderByValue().EndAt(20));
  Show("EndBefore(20)", scores.OrderByValue().EndBefore(20));
  Show("EqualTo(20)", scores.OrderByValue().EqualTo(20));
  Show("StartAt(10).EndAt(20).LimitToLast(2)", scores.OrderByValue().StartAt(10).EndAt(20).LimitToLast(2));
  Show("OrderByKey().StartAt(\"b\").EndBefore(\"d\")", scores.OrderByKey().StartAt("b").EndBefore("d"));

  std::cout << "-- a LimitToFirst(2) window refills when a child leaves" << std::endl;
  WindowListener window;
  Query lowest = scores.OrderByValue().LimitToFirst(2);
  lowest.AddChildListener(&window);
  tree_example::Barrier(database.get());
  std::cout << " bob leaves" << std::endl;
  scores.Child("bob").RemoveValue();
  tree_example::Barrier(database.get());
  std::cout << " fay arrives with 1" << std::endl;
  scores.Child("fay").SetValue(1);
  tree_example::Barrier(database.get());
  lowest.RemoveChildListener(&window);
  std::cout << "-- LimitToLast(2) keeps the last two" << std::endl;
  Query highest = scores.OrderByValue().LimitToLast(2);
  highest.AddChildListener(&window);
  tree_example::Barrier(database.get());
  std::cout << " gus arrives with 99" << std::endl;
  scores.Child("gus").SetValue(99);
  tree_example::Barrier(database.get());
  highest.RemoveChildListener(&window);

  std::cout << "-- errors: the builder call returns an invalid Query that keeps the error" << std::endl;
  Query bad[] = {scores.OrderByKey().OrderByValue(), scores.LimitToFirst(0), scores.LimitToFirst(1).LimitToLast(1),
                 scores.OrderByKey().StartAt(1), scores.OrderByValue().StartAt(Map{{"a", 1}}),
                 scores.EqualTo(Variant("a")).StartAt("b"), scores.OrderByChild(""), scores.OrderByChild("$key")};
  for (const Query& q : bad) std::cout << q.is_valid() << " " << q.error() << " " << q.error_message() << std::endl;
  Show("GetValue of an invalid query", bad[0]);
  }
  return tree_example::Finish(std::move(database));
}

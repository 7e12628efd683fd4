// Seed 002, "Listen for child events": the seed's comments sample (observe childAdded and
// childRemoved on commentsRef, keeping a list of comments in step with a table view), in C++
// as a ChildListener. Then every child event with its previous sibling's key, on a query
// ordered by value (docs/semantics.md 20: removed, added, moved, changed, then value).
#include <vector>

#include "tree_example.h"

using namespace ember::database;  // firebase-cpp: firebase::database

// ---- the seed's sample, in C++ (the table view is a line of output)
class CommentsListener : public ChildListener {
 public:
  std::vector<DataSnapshot> comments;
  // Listen for new comments in the Firebase database
  void OnChildAdded(const DataSnapshot& snapshot, const char* previous_sibling_key) override {
    comments.push_back(snapshot);
    std::cout << "insertRows at row " << comments.size() - 1 << ": " << snapshot.Child("text").value() << std::endl;
  }
  // Listen for deleted comments in the Firebase database
  void OnChildRemoved(const DataSnapshot& snapshot) override {
    int index = IndexOfMessage(snapshot);
    comments.erase(comments.begin() + index);
    std::cout << "deleteRows at row " << index << ": " << snapshot.Child("text").value() << std::endl;
  }
  void OnChildChanged(const DataSnapshot& snapshot, const char* previous_sibling_key) override {}
  void OnChildMoved(const DataSnapshot& snapshot, const char* previous_sibling_key) override {}
  void OnCancelled(const Error& error, const char* error_message) override {
    std::cout << "cancelled: " << error << " " << error_message << std::endl;
  }

 private:
  int IndexOfMessage(const DataSnapshot& snapshot) const {
    for (size_t i = 0; i < comments.size(); i++)
      if (comments[i].key_string() == snapshot.key_string()) return static_cast<int>(i);
    return -1;
  }
};
// ----

/// Prints every event with its previous sibling's key.
class PrintingListener : public ChildListener, public ValueListener {
 public:
  void OnChildAdded(const DataSnapshot& s, const char* prev) override { Print("child_added", s, prev); }
  void OnChildChanged(const DataSnapshot& s, const char* prev) override { Print("child_changed", s, prev); }
  void OnChildMoved(const DataSnapshot& s, const char* prev) override { Print("child_moved", s, prev); }
  void OnChildRemoved(const DataSnapshot& s) override { std::cout << "  child_removed " << s.key() << std::endl; }
  void OnValueChanged(const DataSnapshot& s) override {
    std::cout << "  value [";
    for (const DataSnapshot& c : s.children()) std::cout << " " << c.key() << "=" << c.value();
    std::cout << " ]" << std::endl;
  }
  void OnCancelled(const Error& error, const char* error_message) override {
    std::cout << "  cancelled: " << error << " " << error_message << std::endl;
  }

 private:
  static void Print(const char* what, const DataSnapshot& s, const char* prev) {
    std::cout << "  " << what << " " << s.key() << "=" << s.value() << " after " << tree_example::Key(prev) << std::endl;
  }
};

int main() {
  std::unique_ptr<Database> database = Database::Create();
  {
  DatabaseReference commentsRef = database->GetReference("post-comments/post-1");
  commentsRef.Child("c1").SetValue(std::map<std::string, ember::Variant>{{"text", "first!"}, {"author", "ann"}});
  commentsRef.Child("c2").SetValue(std::map<std::string, ember::Variant>{{"text", "nice post"}, {"author", "bob"}});
  tree_example::Barrier(database.get());
  CommentsListener comments;
  std::cout << "-- attach: childAdded once per existing comment" << std::endl;
  commentsRef.AddChildListener(&comments);
  tree_example::Barrier(database.get());
  std::cout << "-- a new comment (PushChild), then c1 deleted" << std::endl;
  commentsRef.PushChild().SetValue(std::map<std::string, ember::Variant>{{"text", "thanks"}, {"author", "cat"}});
  commentsRef.Child("c1").RemoveValue();
  tree_example::Barrier(database.get());
  std::cout << "comments now: " << comments.comments.size() << std::endl;
  commentsRef.RemoveChildListener(&comments);

  DatabaseReference scores = database->GetReference("scores");
  scores.SetValue(std::map<std::string, ember::Variant>{{"ann", 10}, {"bob", 20}, {"cat", 30}}).Await(5000);
  PrintingListener printer;
  Query byScore = scores.OrderByValue();
  std::cout << "-- attach to scores ordered by value" << std::endl;
  byScore.AddChildListener(&printer);
  byScore.AddValueListener(&printer);
  tree_example::Barrier(database.get());
  std::cout << "-- ann scores 25: she moves after bob" << std::endl;
  scores.Child("ann").SetValue(25);
  tree_example::Barrier(database.get());
  std::cout << "-- dan joins with 5" << std::endl;
  scores.Child("dan").SetValue(5);
  tree_example::Barrier(database.get());
  std::cout << "-- bob leaves" << std::endl;
  scores.Child("bob").RemoveValue();
  tree_example::Barrier(database.get());
  std::cout << "-- one multi-path update: cat 1, eve 40 (one value event)" << std::endl;
  scores.UpdateChildren({{"cat", 1}, {"eve", 40}});
  tree_example::Barrier(database.get());
  byScore.RemoveChildListener(&printer);
  byScore.RemoveValueListener(&printer);
  }
  return tree_example::Finish(std::move(database));
}

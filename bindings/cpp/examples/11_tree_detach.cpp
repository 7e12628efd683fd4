// Seed 002, "Detach listeners": removeObserverWithHandle (C++: RemoveValueListener /
// RemoveChildListener) removes one listener; removeAllObservers (C++: RemoveAllValueListeners /
// RemoveAllChildListeners) removes every one at that location, but not those on child
// locations, which have to be removed on their own references.
#include <string>

#include "tree_example.h"

using namespace ember::database;  // firebase-cpp: firebase::database

class NamedListener : public ValueListener {
 public:
  explicit NamedListener(std::string name) : name_(std::move(name)) {}
  void OnValueChanged(const DataSnapshot& snapshot) override {
    std::cout << "  " << name_ << " sees " << snapshot.value() << std::endl;
  }
  void OnCancelled(const Error& error, const char* error_message) override {
    std::cout << "  " << name_ << " cancelled: " << error << " " << error_message << std::endl;
  }

 private:
  std::string name_;
};

int main() {
  std::unique_ptr<Database> database = Database::Create();
  {
  DatabaseReference ref = database->GetReference("game");
  ref.SetValue(std::map<std::string, ember::Variant>{{"score", 0}}).Await(5000);
  NamedListener one("one"), two("two"), child("child");
  DatabaseReference score = ref.Child("score");
  ref.AddValueListener(&one);
  ref.AddValueListener(&two);
  score.AddValueListener(&child);
  tree_example::Barrier(database.get());
  std::cout << "-- score 1" << std::endl;
  score.SetValue(1);
  tree_example::Barrier(database.get());
  // ---- the seed's sample, in C++ (removeObserverWithHandle)
  ref.RemoveValueListener(&one);
  // ----
  std::cout << "-- removed one; score 2" << std::endl;
  score.SetValue(2);
  tree_example::Barrier(database.get());
  // ---- the seed's sample, in C++ (removeAllObservers)
  ref.RemoveAllValueListeners();
  // ----
  std::cout << "-- removed all at game; score 3: the child location's listener stays" << std::endl;
  score.SetValue(3);
  tree_example::Barrier(database.get());
  score.RemoveAllValueListeners();
  std::cout << "-- removed all at game/score; score 4: nothing" << std::endl;
  score.SetValue(4);
  tree_example::Barrier(database.get());
  }
  return tree_example::Finish(std::move(database));
}

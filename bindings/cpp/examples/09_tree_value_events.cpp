// Seed 002, "Listen for value events": a value observer on the comments list gets the whole
// list as one DataSnapshot and loops over its children (Swift: for child in snapshot.children).
// Even a query that matches one child gives a list of one.
#include "tree_example.h"

using namespace ember::database;  // firebase-cpp: firebase::database

// ---- the seed's sample, in C++ (Swift: _commentsRef.observe(.value) { snapshot in for child in snapshot.children { ... } })
class CommentsValueListener : public ValueListener {
 public:
  void OnValueChanged(const DataSnapshot& snapshot) override {
    // Loop over children
    std::cout << "value: " << snapshot.children_count() << " children" << std::endl;
    for (const DataSnapshot& child : snapshot.children()) {
      // ...
      std::cout << "  " << child.key() << ": " << child.value() << std::endl;
    }
  }
  void OnCancelled(const Error& error, const char* error_message) override {
    std::cout << "cancelled: " << error << " " << error_message << std::endl;
  }
};
// ----

int main() {
  std::unique_ptr<Database> database = Database::Create();
  {
  DatabaseReference _commentsRef = database->GetReference("post-comments/post-1");
  _commentsRef.SetValue(std::map<std::string, ember::Variant>{
      {"c1", std::map<std::string, ember::Variant>{{"text", "first!"}, {"stars", 2}}},
      {"c2", std::map<std::string, ember::Variant>{{"text", "nice post"}, {"stars", 5}}}}).Await(5000);
  CommentsValueListener listener;
  _commentsRef.AddValueListener(&listener);
  tree_example::Barrier(database.get());
  std::cout << "-- c2 gets a star" << std::endl;
  _commentsRef.Child("c2/stars").SetValue(6);
  tree_example::Barrier(database.get());
  _commentsRef.RemoveValueListener(&listener);

  std::cout << "-- a query matching one child still gives a list" << std::endl;
  Query five = _commentsRef.OrderByChild("stars").EqualTo(6);
  five.AddValueListener(&listener);
  tree_example::Barrier(database.get());
  five.RemoveValueListener(&listener);

  std::cout << "-- GetValue: one snapshot, read once" << std::endl;
  ember::Future<DataSnapshot> result = _commentsRef.GetValue();
  if (result.Await(5000) && result.error() == kErrorNone) {
    const DataSnapshot& snapshot = *result.result();
    std::cout << "exists " << snapshot.exists() << ", has_children " << snapshot.has_children() << ", value "
              << snapshot.value() << std::endl;
  }
  std::cout << "-- arrays: dense integer keys read back as a vector" << std::endl;
  DatabaseReference list = database->GetReference("lists/colors");
  list.SetValue(std::vector<ember::Variant>{"red", "green", "blue"}).Await(5000);
  ember::Future<DataSnapshot> colors = list.GetValue();
  colors.Await(5000);
  ember::Variant v = colors.result()->value();
  std::cout << "type " << ember::Variant::TypeName(v.type()) << ", value " << v << std::endl;
  list.Child("1").RemoveValue().Await(5000);
  colors = list.GetValue();
  colors.Await(5000);
  v = colors.result()->value();
  std::cout << "after removing 1: type " << ember::Variant::TypeName(v.type()) << ", value " << v << std::endl;
  }
  return tree_example::Finish(std::move(database));
}

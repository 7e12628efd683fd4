// Seed 002, "Get a FIRDatabaseReference" and "Append to a list of data": a reference to the
// root, then childByAutoId (C++: PushChild) and getKey (C++: key()). Push ids are random in
// their last 12 characters, so the output shows their properties, not the ids themselves.
#include <vector>

#include "tree_example.h"

using namespace ember::database;  // firebase-cpp: firebase::database

int main() {
  std::unique_ptr<Database> database = Database::Create();
  // ---- the seed's sample (Swift: ref = Database.database().reference())
  DatabaseReference ref = database->GetReference();
  // ----
  {
  std::cout << "root: is_root=" << ref.is_root() << " key=" << tree_example::Key(ref.key()) << std::endl;
  // childByAutoId: a new child with a time-ordered unique key; getKey returns it.
  DatabaseReference posts = ref.Child("posts");
  std::vector<std::string> keys;
  for (int i = 0; i < 3; i++) {
    DatabaseReference post = posts.PushChild();
    keys.push_back(post.key_string());
    post.SetValue(std::map<std::string, ember::Variant>{{"title", "post " + std::to_string(i)}, {"starCount", 0}});
  }
  tree_example::Barrier(database.get());
  bool increasing = keys[0] < keys[1] && keys[1] < keys[2];
  std::cout << "3 push ids of " << keys[0].size() << " characters, increasing: " << increasing << std::endl;
  // The list reads back in creation order, because push ids sort by time.
  ember::Future<DataSnapshot> result = posts.GetValue();
  result.Await(5000);
  int i = 0;
  for (const DataSnapshot& child : result.result()->children()) {
    std::cout << "child " << i << ": key is push id " << i << ": " << (child.key_string() == keys[i])
              << ", title " << child.Child("title").value() << std::endl;
    i++;
  }
  // 10,000 pushes in a tight loop: strictly increasing, also within one millisecond.
  std::string last;
  bool ok = true;
  for (int n = 0; n < 10000; n++) {
    std::string k = posts.PushChild().key_string();
    ok = ok && k > last;
    last = k;
  }
  std::cout << "10000 more push ids strictly increasing: " << ok << std::endl;
  }
  ref = DatabaseReference();
  return tree_example::Finish(std::move(database));
}

// Seed 000, "Events for local changes": the seed's C++ sample. A local write raises an event
// at once ("Local"), before the backend has it; the acknowledgement alone raises nothing here.
#include "example.h"

using namespace ember::firestore;  // the seed: firebase::firestore

void Sample(Firestore* db) {
  // ---- the seed's sample, verbatim
DocumentReference doc_ref = db->Collection("cities").Document("SF");
doc_ref.AddSnapshotListener([](const DocumentSnapshot& snapshot,
                               Error error, const std::string& errorMsg) {
  if (error == Error::kErrorOk) {
    const char* source =
        snapshot.metadata().has_pending_writes() ? "Local" : "Server";
    if (snapshot.exists()) {
      std::cout << source << " data: " << snapshot.Get("name").string_value()
                << std::endl;
    } else {
      std::cout << source << " data: null" << std::endl;
    }
  } else {
    std::cout << "Listen failed: " << error << std::endl;
  }
});
  // ----
}

int main() {
  std::unique_ptr<Firestore> firestore = Firestore::Create();
  Firestore* db = firestore.get();
  db->Collection("cities").Document("SF").Set({{"name", FieldValue::String("San Francisco")}});
  example::Barrier(db);
  Sample(db);
  example::Barrier(db);
  std::cout << "-- local write" << std::endl;
  db->Collection("cities").Document("SF").Set({{"name", FieldValue::String("San Francisco (local)")}});
  example::Barrier(db);
  std::cout << "-- a write while the network is off stays local" << std::endl;
  db->DisableNetwork();
  db->Collection("cities").Document("SF").Set({{"name", FieldValue::String("SF")}});
  db->EnableNetwork();
  example::Barrier(db);
  return example::Finish(std::move(firestore));
}

// Seed 000, "Detach a listener": the seed's C++ sample, then the same with a listener that counts
// its snapshots, removed (twice: Remove() is idempotent) while writes go on.
#include "example.h"

using namespace ember::firestore;  // the seed: firebase::firestore

void Sample(Firestore* db) {
  // ---- the seed's sample, verbatim
// Add a listener
Query query = db->Collection("cities");
ListenerRegistration registration = query.AddSnapshotListener(
    [](const QuerySnapshot& snapshot, Error error, const std::string& errorMsg) { /* ... */ });
// Stop listening to changes
registration.Remove();
  // ----
}

int main() {
  std::unique_ptr<Firestore> firestore = Firestore::Create();
  Firestore* db = firestore.get();
  Sample(db);
  {
  Query query = db->Collection("cities");
  ListenerRegistration registration = query.AddSnapshotListener(
      [](const QuerySnapshot& snapshot, Error error, const std::string& errorMsg) {
        std::cout << "snapshot: " << snapshot.size() << " cities" << std::endl;
      });
  example::Barrier(db);
  db->Collection("cities").Document("SF").Set({{"name", FieldValue::String("San Francisco")}});
  example::Barrier(db);
  std::cout << "-- Remove()" << std::endl;
  registration.Remove();
  registration.Remove();
  std::cout << "-- writes after Remove() raise nothing" << std::endl;
  db->Collection("cities").Document("LA").Set({{"name", FieldValue::String("Los Angeles")}});
  example::Barrier(db);
  }
  return example::Finish(std::move(firestore));
}

// Seed 000, "Events for metadata changes": the seed's C++ sample registers a listener with
// MetadataChanges::kInclude (its body is the seed's `/* ... */`); main() then adds the same
// listener with a body that prints what it sees.
#include "example.h"

using namespace ember::firestore;  // the seed: firebase::firestore

void Sample(Firestore* db) {
  // ---- the seed's sample, verbatim
DocumentReference doc_ref = db->Collection("cities").Document("SF");
doc_ref.AddSnapshotListener(
    MetadataChanges::kInclude,
    [](const DocumentSnapshot& snapshot, Error error, const std::string& errorMsg) { /* ... */ });
  // ----
}

int main() {
  std::unique_ptr<Firestore> firestore = Firestore::Create();
  Firestore* db = firestore.get();
  Sample(db);
  ListenerRegistration registration = db->Collection("cities").Document("SF").AddSnapshotListener(
      MetadataChanges::kInclude, [](const DocumentSnapshot& snapshot, Error error, const std::string& errorMsg) {
        if (error != Error::kErrorOk) {
          std::cout << "Listen failed: " << error << " " << errorMsg << std::endl;
          return;
        }
        std::cout << snapshot.metadata() << " exists=" << snapshot.exists() << std::endl;
      });
  example::Barrier(db);
  std::cout << "-- set: a local event, then the acknowledgement (metadata only)" << std::endl;
  db->Collection("cities").Document("SF").Set({{"name", FieldValue::String("San Francisco")}});
  example::Barrier(db);
  std::cout << "-- network off (from the cache), then on (from the server again)" << std::endl;
  db->DisableNetwork();
  db->EnableNetwork();
  example::Barrier(db);
  registration.Remove();
  return example::Finish(std::move(firestore));
}

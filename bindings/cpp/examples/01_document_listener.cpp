// Seed 000 (get realtime updates), "Listen to a document": the seed's C++ sample.
#include "example.h"

using namespace ember::firestore;  // the seed: firebase::firestore

void Sample(Firestore* db) {
  // ---- the seed's sample, verbatim
DocumentReference doc_ref = db->Collection("cities").Document("SF");
doc_ref.AddSnapshotListener(
    [](const DocumentSnapshot& snapshot, Error error, const std::string& errorMsg) {
      if (error == Error::kErrorOk) {
        if (snapshot.exists()) {
          std::cout << "Current data: " << snapshot << std::endl;
        } else {
          std::cout << "Current data: null" << std::endl;
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
  Sample(db);
  example::Barrier(db);
  std::cout << "-- set cities/SF" << std::endl;
  db->Collection("cities").Document("SF").Set({{"name", FieldValue::String("San Francisco")},
                                               {"state", FieldValue::String("CA")}});
  example::Barrier(db);
  std::cout << "-- update population" << std::endl;
  db->Collection("cities").Document("SF").Update({{"population", FieldValue::Integer(860000)}});
  example::Barrier(db);
  std::cout << "-- delete cities/SF" << std::endl;
  db->Collection("cities").Document("SF").Delete();
  example::Barrier(db);
  return example::Finish(std::move(firestore));
}

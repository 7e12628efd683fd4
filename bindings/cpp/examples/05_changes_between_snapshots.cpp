// Seed 000, "View changes between snapshots": the seed's C++ sample.
#include "example.h"

using namespace ember::firestore;  // the seed: firebase::firestore

void Sample(Firestore* db) {
  // ---- the seed's sample, verbatim
db->Collection("cities")
    .WhereEqualTo("state", FieldValue::String("CA"))
    .AddSnapshotListener([](const QuerySnapshot& snapshot, Error error, const std::string& errorMsg) {
      if (error == Error::kErrorOk) {
        for (const DocumentChange& dc : snapshot.DocumentChanges()) {
          switch (dc.type()) {
            case DocumentChange::Type::kAdded:
              std::cout << "New city: "
                        << dc.document().Get("name").string_value() << std::endl;
              break;
            case DocumentChange::Type::kModified:
              std::cout << "Modified city: "
                        << dc.document().Get("name").string_value() << std::endl;
              break;
            case DocumentChange::Type::kRemoved:
              std::cout << "Removed city: "
                        << dc.document().Get("name").string_value() << std::endl;
              break;
          }
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
  example::AddCities(db);
  Sample(db);
  example::Barrier(db);
  std::cout << "-- add San Diego" << std::endl;
  db->Collection("cities").Document("SD").Set({{"name", FieldValue::String("San Diego")}, {"state", FieldValue::String("CA")}});
  example::Barrier(db);
  std::cout << "-- modify Los Angeles" << std::endl;
  db->Collection("cities").Document("LA").Update({{"population", FieldValue::Integer(3900001)}});
  example::Barrier(db);
  std::cout << "-- delete San Francisco" << std::endl;
  db->Collection("cities").Document("SF").Delete();
  example::Barrier(db);
  return example::Finish(std::move(firestore));
}

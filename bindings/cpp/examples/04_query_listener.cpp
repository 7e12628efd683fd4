// Seed 000, "Listen to multiple documents in a collection": the seed's C++ sample (it prints
// `error`, i.e. 0, after "Current cities in CA: ", as the seed does).
#include "example.h"

using namespace ember::firestore;  // the seed: firebase::firestore

void Sample(Firestore* db) {
  // ---- the seed's sample, verbatim
db->Collection("cities")
    .WhereEqualTo("state", FieldValue::String("CA"))
    .AddSnapshotListener([](const QuerySnapshot& snapshot, Error error, const std::string& errorMsg) {
      if (error == Error::kErrorOk) {
        std::vector<std::string> cities;
        std::cout << "Current cities in CA: " << error << std::endl;
        for (const DocumentSnapshot& doc : snapshot.documents()) {
          cities.push_back(doc.Get("name").string_value());
          std::cout << "" << cities.back() << std::endl;
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
  std::cout << "-- Tokyo changes, not in CA: no event" << std::endl;
  db->Collection("cities").Document("TOK").Update({{"population", FieldValue::Integer(9000001)}});
  example::Barrier(db);
  std::cout << "-- LA leaves CA" << std::endl;
  db->Collection("cities").Document("LA").Update({{"state", FieldValue::String("NV")}});
  example::Barrier(db);
  return example::Finish(std::move(firestore));
}

// Helpers shared by the C++ examples (bindings/cpp/examples): the seed's example cities and a
// barrier. The seed's C++ samples themselves are copied verbatim into each example's Sample()
// function, with only the include and the namespace changed (firebase::firestore ->
// ember::firestore). Their output is compared with the *.expected file beside each one.
#ifndef EMBER_CPP_EXAMPLE_H
#define EMBER_CPP_EXAMPLE_H

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "ember/firestore.h"

namespace example {

using ember::firestore::FieldValue;
using ember::firestore::Firestore;

/// Returns once every event Ember has posted so far has been delivered: a write's completion
/// runs on the event thread after the events posted before its acknowledgement (the backend
/// answers in order), so the listeners' output is complete when it returns.
inline void Barrier(Firestore* db) {
  static int64_t n = 0;
  auto done = db->Collection("examples").Document("barrier").Set({{"n", FieldValue::Integer(++n)}});
  if (!done.Await(5000)) std::cout << "(barrier timed out)" << std::endl;
}

/// The example data of the Firestore pages: five cities.
inline void AddCities(Firestore* db) {
  struct City { const char* id; const char* name; const char* state; const char* country; bool capital; int64_t population; };
  const City cities[] = {{"SF", "San Francisco", "CA", "USA", false, 860000},
                         {"LA", "Los Angeles", "CA", "USA", false, 3900000},
                         {"DC", "Washington D.C.", nullptr, "USA", true, 680000},
                         {"TOK", "Tokyo", nullptr, "Japan", true, 9000000},
                         {"BJ", "Beijing", nullptr, "China", true, 21500000}};
  for (const City& c : cities) {
    db->Collection("cities").Document(c.id).Set({{"name", FieldValue::String(c.name)},
                                                 {"state", c.state ? FieldValue::String(c.state) : FieldValue::Null()},
                                                 {"country", FieldValue::String(c.country)},
                                                 {"capital", FieldValue::Boolean(c.capital)},
                                                 {"population", FieldValue::Integer(c.population)}});
  }
  Barrier(db);
}

/// Ends the program: closes the database, then checks that no Ember object is left.
inline int Finish(std::unique_ptr<Firestore> firestore) {
  firestore.reset();
  for (int i = 0; i < 200 && ember_instance_count() != 0; i++) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  if (ember_instance_count() != 0) {
    std::cout << "leak: " << ember_instance_count() << " Ember objects alive" << std::endl;
    return 1;
  }
  return 0;
}

}  // namespace example

#endif

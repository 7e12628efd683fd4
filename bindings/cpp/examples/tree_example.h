// Helpers shared by the C++ tree examples (bindings/cpp/examples/1*_tree_*.cpp): a barrier and
// the end-of-program leak check. Seed 002 (the Realtime Database page for Apple platforms) has
// Swift and Objective-C samples only; each example's Sample() is their translation to the C++
// API (firebase-cpp-sdk's firebase::database, here ember::database), keeping the samples' names
// and structure. Their output is compared with the *.expected file beside each one.
#ifndef EMBER_CPP_TREE_EXAMPLE_H
#define EMBER_CPP_TREE_EXAMPLE_H

#include <cstdint>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>

#include "ember/database.h"

namespace tree_example {

using ember::database::Database;

/// Returns once every event Ember has posted so far has been delivered: a write's completion
/// runs on the event thread after the events posted before its acknowledgement.
inline void Barrier(Database* database) {
  static int64_t n = 0;
  auto done = database->GetReference("examples/barrier").SetValue(ember::Variant::FromInt64(++n));
  if (!done.Await(5000)) std::cout << "(barrier timed out)" << std::endl;
}

/// Ends the program: closes the database, then checks that no Ember object is left.
inline int Finish(std::unique_ptr<Database> database) {
  database.reset();
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

/// "null" for a null key.
inline std::string Key(const char* key) { return key ? key : "null"; }

}  // namespace tree_example

#endif

// ember/firestore.h: the header-only C++17 API of Ember, mirroring firebase-cpp-sdk's
// firebase/firestore.h over the C ABI (ember.h; link with -lember). Include this one header.
//
//   #include "ember/firestore.h"
//   using namespace ember::firestore;
//   std::unique_ptr<Firestore> firestore = Firestore::Create();
//   Firestore* db = firestore.get();
//   db->Collection("cities").Document("SF").AddSnapshotListener(
//       [](const DocumentSnapshot& snapshot, Error error, const std::string& errorMsg) { ... });
//
// Threads: every call may be made from any thread; listener callbacks and write completions run
// on the database's event thread, one at a time, and may call back into Ember.
#ifndef EMBER_FIRESTORE_H
#define EMBER_FIRESTORE_H

#include "firestore/types.h"
#include "firestore/future.h"
#include "firestore/field_value.h"
#include "firestore/snapshots.h"
#include "firestore/references.h"
#include "firestore/database.h"

#endif

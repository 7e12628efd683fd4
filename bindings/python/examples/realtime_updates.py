"""The Python samples of the seed page "Cloud Firestore: get realtime updates"
(../../../../shared/seeds/000_18d4e45601ffac8a.txt), run on Ember.

Only the import and client lines differ from google-cloud-firestore:
    from google.cloud import firestore          ->  import ember as firestore
    from google.cloud.firestore_v1.base_query import FieldFilter  ->  from ember import FieldFilter
    db = firestore.Client()                      ->  db = firestore.Client()   (in memory here)
The sample blocks are verbatim; the lines marked "driver" make the script end by itself.
"""
import threading

import ember as firestore
from ember import FieldFilter

db = firestore.Client()

# ---- sample: listen to a document --------------------------------------------------------
# Create an Event for notifying main thread.
callback_done = threading.Event()

# Create a callback on_snapshot function to capture changes
def on_snapshot(doc_snapshot, changes, read_time):
    for doc in doc_snapshot:
        print(f"Received document snapshot: {doc.id}")
    callback_done.set()

doc_ref = db.collection("cities").document("SF")

# Watch the document
doc_watch = doc_ref.on_snapshot(on_snapshot)
# ---- end of sample -------------------------------------------------------------------------

assert callback_done.wait(5), "driver: no document snapshot"          # driver
callback_done.clear()                                                  # driver
doc_ref.set({"name": "San Francisco", "state": "CA"})                  # driver
assert callback_done.wait(5), "driver: no snapshot after the write"   # driver

# ---- sample: listen to multiple documents in a collection -----------------------------------
# Create an Event for notifying main thread.
callback_done = threading.Event()

# Create a callback on_snapshot function to capture changes
def on_snapshot(col_snapshot, changes, read_time):
    print("Callback received query snapshot.")
    print("Current cities in California:")
    for doc in col_snapshot:
        print(f"{doc.id}")
    callback_done.set()

col_query = db.collection("cities").where(filter=FieldFilter("state", "==", "CA"))

# Watch the collection query
query_watch = col_query.on_snapshot(on_snapshot)
# ---- end of sample -------------------------------------------------------------------------

assert callback_done.wait(5), "driver: no query snapshot"             # driver
query_watch.unsubscribe()                                              # driver

# ---- sample: view changes between snapshots ------------------------------------------------
# Create an Event for notifying main thread.
delete_done = threading.Event()

# Create a callback on_snapshot function to capture changes
def on_snapshot(col_snapshot, changes, read_time):
    print("Callback received query snapshot.")
    print("Current cities in California: ")
    for change in changes:
        if change.type.name == "ADDED":
            print(f"New city: {change.document.id}")
        elif change.type.name == "MODIFIED":
            print(f"Modified city: {change.document.id}")
        elif change.type.name == "REMOVED":
            print(f"Removed city: {change.document.id}")
            delete_done.set()

col_query = db.collection("cities").where(filter=FieldFilter("state", "==", "CA"))

# Watch the collection query
query_watch = col_query.on_snapshot(on_snapshot)
# ---- end of sample -------------------------------------------------------------------------

db.collection("cities").document("LA").set({"name": "Los Angeles", "state": "CA"})   # driver
db.collection("cities").document("LA").update({"population": 3900000})              # driver
db.collection("cities").document("LA").delete()                                     # driver
assert delete_done.wait(5), "driver: no REMOVED change"                             # driver
query_watch.unsubscribe()                                                            # driver

# ---- sample: detach a listener ---------------------------------------------------------------
# Terminate watch on a document
doc_watch.unsubscribe()
# ---- end of sample -------------------------------------------------------------------------

db.close()                                                             # driver
print("done")                                                          # driver

"""Ember's seed scenario in Python (`make demo`): a document listener with metadata changes
(local write first, with has_pending_writes, then the acknowledgement), a query listener with
document changes, a cache-only listener, and the network switched off and on."""
import threading
import time

import ember

db = ember.Client()
sf = db.collection("cities").document("SF")
seen = threading.Event()


def on_doc(docs, changes, read_time):
    d = docs[0]
    source = "Local" if d.metadata.has_pending_writes else "Server"
    print(f"  [doc]   {source} data: {d.to_dict()}  (from_cache={d.metadata.from_cache})")
    seen.set()


def on_query(docs, changes, read_time):
    for c in changes:
        print(f"  [query] {c.type.name:8} {c.document.id}  old_index={c.old_index} new_index={c.new_index}")
    print(f"  [query] now {[d.id for d in docs]} (from_cache={docs.metadata.from_cache})")


def on_cache(docs, changes, read_time):
    print(f"  [cache] {len(docs)} Californian cities in the cache")


print("1. listeners")
doc_watch = sf.on_snapshot(on_doc, include_metadata_changes=True)
ca = db.collection("cities").where(filter=ember.FieldFilter("state", "==", "CA")).order_by("name")
query_watch = ca.on_snapshot(on_query)
cache_watch = ca.on_snapshot(on_cache, source=ember.ListenSource.CACHE)
time.sleep(0.05)

print("2. a write: seen locally at once, then acknowledged")
result = sf.set({"name": "San Francisco", "state": "CA", "population": 860000})
result.wait(5)
print(f"  acknowledged at {result.update_time}")
db.collection("cities").document("LA").set({"name": "Los Angeles", "state": "CA"}).wait(5)
time.sleep(0.05)

print("3. network off: writes queue, listeners serve the cache")
db.disable_network()
pending = sf.update({"population": ember.Increment(1)})
time.sleep(0.05)
print(f"  acknowledged while offline? {pending.done}")

print("4. network on: the queued write is acknowledged")
db.enable_network()
pending.wait(5)
db.wait_for_pending_writes()
time.sleep(0.05)

for w in (doc_watch, query_watch, cache_watch):
    w.unsubscribe()
db.close()
print("done")

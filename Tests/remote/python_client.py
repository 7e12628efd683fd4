"""The Python client process of the mixed-language tests (README.md has the protocol):

    python python_client.py HOST COLLECTION NAME NAME1,NAME2,...

One `ember.Client(host=HOST, ssl=False)`: listens to COLLECTION (metadata changes included),
waits for the server's first answer, then in rounds 1 and 2 sets COLLECTION/NAME and waits (60 s
at most) until every named client's document reached the round and its own is acknowledged.
Prints `pending ...`, `saw NAME ROUND` per client, `done`; exit status 2 on a timeout."""
import sys
import threading
import time

import ember

host, collection, name, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
lock = threading.Lock()
state = {"synced": False, "rounds": {}, "own_pending": None, "pending": [], "error": None}


def on_snapshot(snapshot, changes, read_time):
    with lock:
        if not snapshot.metadata.from_cache:
            state["synced"] = True
        for doc in snapshot:
            state["rounds"][doc.id] = doc.get("round")
            if doc.id == name:
                p = doc.metadata.has_pending_writes
                if not state["pending"] or state["pending"][-1] != p:
                    state["pending"].append(p)
                state["own_pending"] = p


def wait_until(what, done):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with lock:
            if done():
                return
        time.sleep(0.005)
    with lock:
        print(f"python client {name}: timed out waiting for {what}; {state}", file=sys.stderr)
    sys.exit(2)


db = ember.Client(host=host, ssl=False)
watch = db.collection(collection).on_snapshot(on_snapshot, include_metadata_changes=True)
wait_until("the server's first answer", lambda: state["synced"])
for r in (1, 2):
    db.collection(collection).document(name).set({"name": name, "round": r, "lang": "python"})
    wait_until(f"round {r}", lambda: all((state["rounds"].get(n) or 0) >= r for n in names)
               and state["own_pending"] is False)
watch.unsubscribe()
print("pending " + ",".join("true" if p else "false" for p in state["pending"]))
for n in names:
    print(f"saw {n} {state['rounds'].get(n) or 0}")
print("done")
db.close()

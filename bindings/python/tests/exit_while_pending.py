"""Exits while callbacks are pending: many listeners, a burst of writes from several threads,
slow callbacks, and no unsubscribe / close. Must exit with status 0 and nothing on stderr."""
import threading
import time

import ember

db = ember.Client()
count = [0]


def slow(docs, changes, read_time):
    count[0] += 1
    time.sleep(0.0005)


watches = [db.collection("c").on_snapshot(slow, include_metadata_changes=True) for _ in range(5)]
watches += [db.document(f"c/{i}").on_snapshot(slow) for i in range(5)]


def writer(t):
    for i in range(200):
        try:
            db.document(f"c/{i % 10}").set({"t": t, "i": i})
        except (ember.FailedPreconditionError, ember.CancelledError):
            # The client closed at exit (expected): a write after the close is refused, and one
            # the close caught before its acknowledgement is cancelled (set() waits for it).
            return


threads = [threading.Thread(target=writer, args=(t,), daemon=True) for t in range(3)]
for t in threads:
    t.start()
time.sleep(0.01)
print("exiting with callbacks pending", flush=True)

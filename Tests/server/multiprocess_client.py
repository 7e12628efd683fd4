"""A client process of test_multiprocess.py (google-cloud-firestore, unchanged).

  listen HOST PREFIX N       waits (bounded) until collection PREFIX holds exactly the documents
                             w0..w{N-1} each with value "final", printing 'converged' or the state
  write  HOST PREFIX W N     writes documents w{W}, w{W+2}, ... (< N): "draft" then "final", and
                             a scratch document it creates then deletes
"""
import json
import os
import sys
import threading
import time

os.environ["FIRESTORE_EMULATOR_HOST"] = sys.argv[2]
from google.auth.credentials import AnonymousCredentials  # noqa: E402
from google.cloud import firestore  # noqa: E402

mode, prefix = sys.argv[1], sys.argv[3]
db = firestore.Client(project="demo-ember", credentials=AnonymousCredentials())
col = db.collection(prefix)

if mode == "write":
    w, n = int(sys.argv[4]), int(sys.argv[5])
    for i in range(w, n, 2):
        col.document(f"w{i}").set({"v": "draft", "i": i})
        col.document(f"w{i}").update({"v": "final"})
        col.document(f"scratch{w}").set({"i": i})
    col.document(f"scratch{w}").delete()
    print("wrote", flush=True)
else:
    n = int(sys.argv[4])
    expected = {f"w{i}": "final" for i in range(n)}
    state = {}
    done = threading.Event()

    def on(docs, changes, read_time):
        state.clear()
        state.update({d.id: d.to_dict().get("v") for d in docs})
        if state == expected:
            done.set()

    watch = col.on_snapshot(on)
    ok = done.wait(float(os.environ.get("EMBER_MP_TIMEOUT", "90")))
    watch.unsubscribe()
    print("converged" if ok else "stuck " + json.dumps(state, sort_keys=True), flush=True)
    sys.exit(0 if ok else 1)

"""Scenarios: listeners (Listen). Each records the sequence of snapshots a listener sees while the
scenario writes, one write at a time, waiting (bounded) for the snapshot each write should cause.

The events are what google-cloud-firestore makes of the server's messages: the documents in
order and the changes (type, id, old_index, new_index). The client's indexes are its own (a
MODIFIED change's old_index is where the document was before any change of that snapshot, the
new_index where it is after all of them, counted over a list that still holds the removed
documents): the same messages give the same numbers, so they are compared as they are."""
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from normalize import Recorder, scenario

DESC = firestore.Query.DESCENDING


def watch(target, steps, server_times=False):
    """Listens to `target`, runs each (write, expected) step, and returns the events.

    expected: True (one snapshot must come), False (none should: waits Recorder.QUIET)."""
    rec = Recorder(server_times)
    w = target.on_snapshot(rec)
    try:
        rec.expect()
        for write, expected in steps:
            write()
            rec.expect() if expected else rec.expect_none()
    finally:
        w.unsubscribe()
    return rec.events


@scenario
def listen_document(db, p):
    c = db.collection(p + "listen")
    ref = c.document("solo")
    return watch(ref, [
        (lambda: ref.set({"v": 1}), True),
        (lambda: ref.update({"v": 2, "m": {"x": 1}}), True),
        (lambda: c.document("other").set({"v": 1}), False),
        (lambda: ref.collection("sub").document("x").set({"v": 1}), False),
        (lambda: ref.delete(), True),
        (lambda: ref.delete(), False),
        (lambda: ref.set({"v": 3}), True),
    ])


@scenario
def listen_existing_document(db, p):
    ref = db.collection(p + "listen").document("d")
    ref.set({"v": 0})
    return watch(ref, [
        (lambda: ref.set({"v": 0, "w": firestore.SERVER_TIMESTAMP}), True),
        (lambda: ref.update({"w": firestore.DELETE_FIELD}), True),
        (lambda: ref.update({"n": firestore.Increment(1)}), True),
    ], server_times=True)


@scenario
def listen_query_window(db, p):
    # A filtered, ordered, limited query: documents enter, move within, and leave the window.
    c = db.collection(p + "listen")
    c.document("a").set({"n": 1})
    c.document("b").set({"n": 2})
    q = c.where(filter=FieldFilter("n", ">=", 1)).order_by("n").limit(3)
    return watch(q, [
        (lambda: c.document("c").set({"n": 0}), False),              # outside the filter
        (lambda: c.document("a").update({"n": 10}), True),           # moves to the end
        (lambda: c.document("z").set({"n": 5}), True),               # enters; the window is full
        (lambda: c.document("y").set({"n": 1.5}), True),             # enters, pushes a out
        (lambda: c.document("a").update({"n": 11}), False),          # outside the window
        (lambda: c.document("b").delete(), True),                    # leaves; a comes back
        (lambda: c.document("c").update({"n": -1}), False),
        (lambda: c.document("y").update({"n": 1.5, "x": 1}), True),  # changes in place
        (lambda: c.document("z").update({"n": 0}), True),            # leaves by the filter
    ])


@scenario
def listen_collection(db, p):
    c = db.collection(p + "listen")
    c.document("a").set({"n": 1})

    def batch(*ops):
        def run():
            b = db.batch()
            for op in ops:
                op(b)
            b.commit()
        return run

    return watch(c, [
        (batch(lambda b: b.set(c.document("b"), {"n": 2}), lambda b: b.set(c.document("c"), {"n": 3})), True),
        (batch(lambda b: b.delete(c.document("a")), lambda b: b.update(c.document("b"), {"n": 20}),
               lambda b: b.set(c.document("d"), {"n": 4})), True),
        (lambda: c.document("b").collection("sub").document("x").set({"n": 5}), False),
        (lambda: db.collection(p + "elsewhere").document("a").set({"n": 1}), False),
        (batch(lambda b: b.delete(c.document("c")), lambda b: b.delete(c.document("d"))), True),
    ])


@scenario
def listen_ordered_desc(db, p):
    c = db.collection(p + "listen")
    for i, k in enumerate("abcd"):
        c.document(k).set({"n": i, "s": "x" if i % 2 else "y"})
    q = c.where(filter=FieldFilter("s", "==", "x")).order_by("n", direction=DESC)
    return watch(q, [
        (lambda: c.document("a").update({"s": "x"}), True),
        (lambda: c.document("b").update({"n": 10}), True),
        (lambda: c.document("d").update({"s": "y"}), True),
        (lambda: c.document("e").set({"n": 2, "s": "x"}), True),
    ])


@scenario
def listen_collection_group(db, p):
    g = p + "items"
    a = db.collection(p + "lists").document("a").collection(g)
    b = db.collection(p + "lists").document("b").collection(g)
    a.document("1").set({"n": 1})
    return watch(db.collection_group(g).order_by("n"), [
        (lambda: b.document("1").set({"n": 0}), True),
        (lambda: db.collection(g).document("top").set({"n": 5}), True),
        (lambda: db.collection(p + "lists").document("a").collection(p + "not").document("x").set({"n": 1}), False),
        (lambda: a.document("1").delete(), True),
    ])


@scenario
def listen_two_at_once(db, p):
    # Two listeners of one client, each on its own stream: each sees only its own target.
    c = db.collection(p + "listen")
    doc_rec, query_rec = Recorder(), Recorder()
    w1 = c.document("a").on_snapshot(doc_rec)
    w2 = c.where(filter=FieldFilter("n", ">", 1)).on_snapshot(query_rec)
    try:
        doc_rec.expect()
        query_rec.expect()
        c.document("a").set({"n": 1})
        doc_rec.expect()
        query_rec.expect_none()
        c.document("a").set({"n": 2})
        doc_rec.expect()
        query_rec.expect()
        c.document("b").set({"n": 3})
        query_rec.expect()
        doc_rec.expect_none()
    finally:
        w1.unsubscribe()
        w2.unsubscribe()
    return {"document": doc_rec.events, "query": query_rec.events}

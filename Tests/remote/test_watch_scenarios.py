"""Watch scenarios through Python: Ember's Python client of a scripted Firestore server
(scripted.py) sees what the Firebase SDKs' spec scenarios require, item by item of the
watch rules in docs/remote.md: when events are raised, with which documents and metadata,
and what the client sends. The Swift scenarios (Tests/EmberRemoteTests/WatchScenarioTests.swift)
hold the same rules closer to the core."""
import os
import time

import pytest

import ember
from scripted import (Recorder, ScriptedServer, added, current, deleted, doc, existence_filter, global_,
                      removed)


@pytest.fixture
def server():
    program = os.environ.get("EMBER_SCRIPTED_FIRESTORE", "")
    if not os.access(program, os.X_OK):
        pytest.fail(f"EMBER_SCRIPTED_FIRESTORE: no program at '{program}' (`make test-remote` builds it)", pytrace=False)
    s = ScriptedServer(program)
    yield s
    s.stop()


@pytest.fixture
def db(server):
    client = ember.Client(host=f"127.0.0.1:{server.port}", ssl=False)
    yield client
    client.close()


def synced(server, db, path="c"):
    """Listens to `path` (metadata changes included) and plays a=1 into it until current."""
    rec = Recorder()
    watch = db.collection(path).on_snapshot(rec, include_metadata_changes=True)
    t = server.added()
    server.send(added(t), doc(f"{path}/a", 1000, {"v": 1}, [t]), current(t, token="t1"), global_(1000))
    assert rec.wait(1) == ["[a=1] cache=False pending=False"]
    return rec, watch, t


def settle():
    time.sleep(0.3)


def test_1_acknowledged_write_stays_pending_until_watch_catches_up(server, db):
    rec, _, t = synced(server, db)
    db.document("c/a").set({"v": 2})
    rec.wait(2)
    assert server.call("next_write") == {"seen": "writes", "paths": ["c/a"]}
    server.call("ack", version=3000)
    server.send(doc("c/a", 2000, {"v": 7}, [t]), global_(2000))
    settle()
    assert rec.snaps == ["[a=1] cache=False pending=False", "[a=2*] cache=False pending=True"]
    server.send(doc("c/a", 3000, {"v": 2}, [t]), global_(3000))
    assert rec.wait(3)[-1] == "[a=2] cache=False pending=False"


def test_2_limbo_document_resolved_by_a_document_target(server, db):
    synced(server, db)
    rec = Recorder()
    db.collection("c").where("v", ">", 0).on_snapshot(rec, include_metadata_changes=True)
    t2 = server.added()
    server.send(added(t2), current(t2, token="t2"), global_(2000))
    limbo = server.next_listen()
    assert (limbo["seen"], limbo["path"], limbo["token"]) == ("add", "c/a", None)
    server.send(added(limbo["target"]), current(limbo["target"], token="l1"), global_(3000))
    assert rec.wait(2) == ["[a=1] cache=True pending=False", "[] cache=False pending=False"]
    assert server.next_listen() == {"seen": "remove", "target": limbo["target"]}
    assert server.call("unary_calls") == {"calls": []}


def test_3_document_delete_removes_a_cached_document(server, db):
    _, watch, t = synced(server, db)
    watch.unsubscribe()
    assert server.next_listen() == {"seen": "remove", "target": t}
    rec = Recorder()
    db.collection("c").on_snapshot(rec, include_metadata_changes=True)
    t2 = server.added()
    server.send(added(t2), deleted("c/a", 2000, [t2]), current(t2, token="t2"), global_(2000))
    assert rec.wait(2) == ["[a=1] cache=True pending=False", "[] cache=False pending=False"]


def test_4_existence_filters(server, db):
    rec = Recorder()
    db.document("c/a").on_snapshot(rec, include_metadata_changes=True)
    t = server.added()
    server.send(added(t), doc("c/a", 1000, {"v": 1}, [t]), current(t, token="t1"), global_(1000))
    rec.wait(1)
    server.send(existence_filter(t, 0), global_(2000))
    assert rec.wait(2)[-1] == "[] cache=False pending=False", "a document target counted 0: deleted at once"

    q, _, tq = synced(server, db, "d")
    server.send(existence_filter(tq, 2), global_(3000))
    assert q.wait(2)[-1] == "[a=1] cache=True pending=False", "a mismatch: fromCache while the query runs again"
    assert server.next_listen() == {"seen": "remove", "target": tq}
    again = server.next_listen()
    assert (again["seen"], again["token"]) == ("add", None)


def test_5_one_global_snapshot_one_event_per_query(server, db):
    first, _, t1 = synced(server, db)
    second = Recorder()
    db.collection("c").where("v", ">", 0).on_snapshot(second, include_metadata_changes=True)
    second.wait(1)
    t2 = server.added()
    server.send(added(t2), doc("c/b", 2000, {"v": 2}, [t1, t2]), doc("c/a", 1000, {"v": 1}, [t2]),
                current(t2, token="t2"), global_(2000))
    first.wait(2)
    second.wait(2)
    settle()
    assert first.snaps == ["[a=1] cache=False pending=False", "[a=1 b=2] cache=False pending=False"]
    assert second.snaps == ["[a=1] cache=True pending=False", "[a=1 b=2] cache=False pending=False"]


def test_6_online_state_unknown_then_offline(server, db):
    rec, _, _ = synced(server, db)
    server.call("fail_listen")
    resumed = server.next_listen()
    assert (resumed["seen"], resumed["token"]) == ("add", "t1")
    settle()
    assert len(rec.snaps) == 1, "one failure raises nothing"
    server.call("fail_listen")
    assert rec.wait(2)[-1] == "[a=1] cache=True pending=False", "a second failure: offline"


def test_7_cached_results_raised_at_once(server, db):
    rec = Recorder()
    db.collection("e").on_snapshot(rec, include_metadata_changes=True)
    t = server.added()
    server.send(added(t), doc("e/a", 1000, {"v": 1}, [t]), global_(1000))
    assert rec.wait(1) == ["[a=1] cache=True pending=False"], "not current at a global snapshot: raised from the cache"
    server.send(current(t, token="t1"), global_(2000))
    assert rec.wait(2)[-1] == "[a=1] cache=False pending=False"

    empty = Recorder()
    watch = db.collection("f").on_snapshot(empty, include_metadata_changes=True)
    tf = server.added()
    server.send(added(tf), current(tf, token="f1"), global_(3000))
    assert empty.wait(1) == ["[] cache=False pending=False"]
    watch.unsubscribe()
    again = Recorder()
    db.collection("f").on_snapshot(again, include_metadata_changes=True)
    assert again.wait(1) == ["[] cache=True pending=False"], "a query synced before: its cached result at once, even empty"


def test_8_global_token_is_what_a_resume_sends(server, db):
    synced(server, db)
    server.send(global_(2000, token="g2"))
    settle()
    server.call("fail_listen")
    resumed = server.next_listen()
    assert (resumed["seen"], resumed["token"]) == ("add", "g2")


def test_9_the_wire_as_the_sdks_send_it(server, db):
    db.collection("c").order_by("v", direction=ember.Query.DESCENDING).limit(2).on_snapshot(Recorder())
    first = server.next_listen()
    assert (first["seen"], first["limit"]) == ("add", 2)
    db.collection("c").order_by("v").limit_to_last(2).on_snapshot(Recorder())
    settle()
    assert server.call("pending_listens") == {"seen_list": []}, "limit and its limit-to-last mirror share a target"
    db.document("c/x").set({"v": 1})
    assert server.call("next_write") == {"seen": "writes", "paths": ["c/x"]}
    server.call("ack", version=2000)
    settle()
    db.disable_network()
    assert server.call("next_write") == {"seen": "empty"}
    assert server.call("next_write") == {"seen": "closed"}
    assert server.next_listen() == {"seen": "closed"}

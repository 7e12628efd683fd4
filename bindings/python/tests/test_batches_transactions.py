"""Batches and transactions (google-cloud-firestore shapes)."""
import threading

import pytest

import ember


def test_batch(db):
    a, b, c = db.document("c/a"), db.document("c/b"), db.document("c/c")
    c.set({"x": 1})
    batch = db.batch()
    batch.set(a, {"n": 1}).set(b, {"n": 2}, merge=True)
    batch.update(c, {"x": ember.Increment(1)})
    batch.delete(db.document("c/none"))
    assert len(batch) == 4
    results = batch.commit()
    assert len(results) == 4 and results[0].wait(5).update_time is not None
    assert a.get().to_dict() == {"n": 1} and c.get().to_dict() == {"x": 2}
    with pytest.raises(ember.FailedPreconditionError):
        batch.commit()


def test_batch_context_manager_and_create(db):
    with db.batch() as batch:
        batch.create(db.document("c/new"), {"a": 1})
    assert db.document("c/new").get().exists
    # As google-cloud-firestore: the create is a write with a precondition; commit() raises.
    b = db.batch()
    b.set(db.document("c/other"), {"b": 1})
    b.create(db.document("c/new"), {"a": 2})
    with pytest.raises(ember.AlreadyExistsError):
        b.commit()
    assert db.document("c/new").get().to_dict() == {"a": 1}
    assert not db.document("c/other").get().exists       # nothing of the batch applied


def test_batch_is_atomic_for_listeners(db, recorder):
    w = db.collection("c").on_snapshot(recorder)
    recorder.wait(1)
    batch = db.batch()
    for i in range(10):
        batch.set(db.document(f"c/{i}"), {"i": i})
    batch.commit()
    docs, changes, _ = recorder.wait(2)
    assert len(docs) == 10 and len(changes) == 10
    w.unsubscribe()


def test_batch_errors(db):
    batch = db.batch()
    with pytest.raises(ember.InvalidArgumentError):
        batch.set(db.document("c/a"), {"a": [[1]]})
    batch.update(db.document("c/missing"), {"a": 1})
    with pytest.raises(ember.NotFoundError):
        batch.commit()[0].wait(5)
    big = db.batch()
    with pytest.raises(ember.EmberError):
        for i in range(501):
            big.set(db.document(f"c/{i}"), {"i": i})
        big.commit()[0].wait(5)


def test_empty_batch_commits(db):
    assert db.batch().commit() == []


def test_transactional(db):
    src, dst = db.document("acct/a"), db.document("acct/b")
    src.set({"balance": 100}); dst.set({"balance": 0})
    transaction = db.transaction()

    @ember.transactional
    def move(transaction, src, dst, amount):
        s = src.get(transaction=transaction)
        d = transaction.get(dst)
        if s.get("balance") < amount:
            raise ValueError("insufficient funds")
        transaction.update(src, {"balance": s.get("balance") - amount})
        transaction.set(dst, {"balance": next(iter(d)).get("balance") + amount})
        return "moved"

    assert move(transaction, src, dst, 30) == "moved"
    assert src.get().get("balance") == 70 and dst.get().get("balance") == 30
    with pytest.raises(ValueError, match="insufficient"):
        move(transaction, src, dst, 1000)
    assert src.get().get("balance") == 70
    assert not transaction.in_progress


def test_transaction_retried_on_contention(db):
    ref = db.document("counters/c")
    ref.set({"n": 0}).wait(5)
    attempts = []

    @ember.transactional
    def bump(transaction):
        attempts.append(1)
        n = transaction.get(ref).get("n")
        if len(attempts) == 1:
            ref.set({"n": 100}).wait(5)   # a concurrent writer: the first attempt must lose
        transaction.update(ref, {"n": n + 1})

    bump(db.transaction())
    assert len(attempts) >= 2 and ref.get().get("n") == 101


def test_transactions_from_threads(db):
    ref = db.document("counters/t")
    ref.set({"n": 0}).wait(5)

    @ember.transactional
    def inc(transaction):
        transaction.update(ref, {"n": transaction.get(ref).get("n") + 1})

    errors = []

    def worker():
        for _ in range(5):
            try:
                inc(db.transaction(max_attempts=50))
            except Exception as e:  # pragma: no cover
                errors.append(e)

    ts = [threading.Thread(target=worker) for _ in range(4)]
    [t.start() for t in ts]; [t.join() for t in ts]
    assert not errors and ref.get().get("n") == 20


def test_transaction_errors(db):
    t = db.transaction()
    with pytest.raises(ember.FailedPreconditionError, match="not in progress"):
        t.set(db.document("a/b"), {})
    with pytest.raises(ember.InvalidArgumentError, match="max_attempts"):
        db.transaction(max_attempts=0)
    with pytest.raises(ember.InvalidArgumentError, match="Transaction"):
        ember.transactional(lambda tx: None)("not a transaction")
    ro = db.transaction(read_only=True)
    with pytest.raises(ember.InvalidArgumentError, match="read-only"):
        ember.transactional(lambda tx: tx.set(db.document("a/b"), {}))(ro)
    db.disable_network()
    with pytest.raises(ember.UnavailableError):
        ember.transactional(lambda tx: None)(db.transaction())
    db.enable_network()


def test_transaction_create(db):
    ref = db.document("c/created")

    @ember.transactional
    def make(transaction):
        transaction.create(ref, {"a": 1})

    make(db.transaction())
    with pytest.raises(ember.AlreadyExistsError):
        make(db.transaction())

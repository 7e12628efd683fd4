"""Tree transactions from Python (`Reference.transaction`, firebase_admin's shape): the function
gets the current value (None first when the client knows nothing) and returns the new one; the
call returns the value written; an exception from the function is raised from the call; values
the tree cannot hold are refused; threads contending on one counter add up; a transaction from
a callback is refused."""
import threading

import pytest

import ember


def test_counter_and_the_value_written(db):
    counter = db.reference("counter")
    seen = []

    def increment(current):
        seen.append(current)
        return (current or 0) + 1

    assert counter.transaction(increment) == 1
    assert counter.transaction(increment) == 2
    assert seen[0] is None
    assert counter.get() == 2


def test_the_first_call_sees_none_when_nothing_is_known_then_the_backends_value(db):
    db.reference("n").set({"a": 1}).wait()
    other = db.reference("n")      # a fresh reference: the client keeps no listen at "n"
    seen = []

    def update(current):
        seen.append(current)
        return {"a": (current or {"a": 0})["a"] + 10}

    assert other.transaction(update) == {"a": 11}
    assert seen[-1] == {"a": 1}


def test_an_exception_in_the_function_is_raised_and_nothing_is_written(db):
    ref = db.reference("x")
    ref.set(5).wait()

    class Boom(Exception):
        pass

    def fail(current):
        raise Boom("no")

    with pytest.raises(Boom):
        ref.transaction(fail)
    assert ref.get() == 5


def test_none_deletes_and_bad_values_are_refused(db):
    ref = db.reference("y")
    ref.set("here").wait()
    assert ref.transaction(lambda current: None) is None
    assert ref.get() is None
    with pytest.raises(ember.InvalidArgumentError, match="unsupported value type"):
        ref.transaction(lambda current: object())
    with pytest.raises(ember.InvalidArgumentError):
        ref.transaction("not a function")


def test_threads_contending_on_one_counter_add_up(db):
    counter = db.reference("contended")
    errors = []

    def worker():
        try:
            for _ in range(25):
                counter.transaction(lambda current: (current or 0) + 1)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert counter.get() == 100


def test_a_transaction_from_a_callback_is_refused(db):
    ref = db.reference("cb")
    ref.set(1).wait()
    outcome = []
    done = threading.Event()

    def on_value(snap, _):
        if done.is_set():
            return
        try:
            ref.transaction(lambda current: 2)
        except ember.FailedPreconditionError as e:
            outcome.append(str(e))
        done.set()

    handle = ref.observe(ember.EventType.VALUE, on_value)
    assert done.wait(5)
    ref.remove_observer(handle)
    assert outcome and "callback" in outcome[0]

"""The error table: one class per C error code, all EmberError, built-in bases where they fit."""
import pickle

import pytest

import ember
from ember import _ember, _errors


def test_one_class_per_code_from_the_table():
    codes = [row[0] for row in _errors.TABLE]
    assert codes == list(range(1, 17))
    for code, cname, name, bases in _errors.TABLE:
        cls = getattr(ember, name)
        assert issubclass(cls, ember.EmberError) and cls.code == code and cls.code_name == cname
        assert cname == _ember.error_code_name(code)  # the same names as the C ABI
        for b in bases:
            assert issubclass(cls, b)
        e = cls("message naming the_argument", code)
        assert str(e) == "message naming the_argument" and e.code == code


@pytest.mark.parametrize("name,base", [
    ("InvalidArgumentError", ValueError), ("NotFoundError", LookupError), ("DeadlineExceededError", TimeoutError),
    ("UnavailableError", ConnectionError), ("PermissionDeniedError", PermissionError),
    ("UnimplementedError", NotImplementedError), ("OutOfRangeError", IndexError),
])
def test_builtin_bases(name, base):
    assert issubclass(getattr(ember, name), base)


def test_errors_pickle():
    e = pickle.loads(pickle.dumps(ember.NotFoundError("gone", 5)))
    assert isinstance(e, ember.NotFoundError) and str(e) == "gone" and e.code == 5


def test_abi_errors_become_the_right_class(db):
    with pytest.raises(ember.InvalidArgumentError) as e:
        _ember.path_kind("a//b")
    assert e.value.code == 3 and "a//b" in str(e.value) or "segment" in str(e.value).lower()
    with pytest.raises(ember.NotFoundError):
        db.document("a/missing").update({"x": 1}).wait(5)


def test_messages_name_the_argument(db):
    with pytest.raises(ember.InvalidArgumentError, match="where\\(op_string\\)"):
        db.collection("c").where("a", "~", 1)
    with pytest.raises(ember.InvalidArgumentError, match="document_data: field 'a'"):
        db.document("c/d").set({"a": object()})
    with pytest.raises(ember.InvalidArgumentError, match="field_updates: field 'x.y'"):
        db.document("c/d").update({"x.y": 2**64})
    with pytest.raises(ember.InvalidArgumentError, match="limit\\(count\\)"):
        db.collection("c").limit(-1)


def test_version():
    assert ember.__version__ == _ember.VERSION and _ember.VERSION_NUMBER == _ember.HEADER_VERSION_NUMBER

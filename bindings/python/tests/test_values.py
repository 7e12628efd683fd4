"""Values round-trip exactly through libember (MessagePack), and bad values name the field."""
import datetime as dt
import math

import pytest

import ember
from ember import _ember

UTC = dt.timezone.utc


def roundtrip(db, value):
    ref = db.document("v/x")
    ref.set({"v": value})
    return ref.get().to_dict()["v"]


@pytest.mark.parametrize("value", [
    None, True, False, 0, 1, -1, 127, 128, -33, 255, 65536, 2**31, -2**31 - 1, 2**63 - 1, -2**63,
    0.5, 1.0, -2.25, 1e308, 5e-324, "", "héllo ✓", "x" * 70000, b"", b"\x00\xff" * 40000,
    [], [1, "a", None], {"a": {"b": {"c": [1, 2]}}}, {"odd.key": 2, "`q`": 3, "sp ace": 1},
])
def test_roundtrip(db, value):
    got = roundtrip(db, value)
    assert got == value and type(got) is type(value)


def test_special_floats(db):
    assert math.isnan(roundtrip(db, float("nan")))
    assert roundtrip(db, float("inf")) == float("inf")
    assert roundtrip(db, float("-inf")) == float("-inf")
    z = roundtrip(db, -0.0)
    assert z == 0.0 and math.copysign(1, z) == -1
    one = roundtrip(db, 1.0)
    assert type(one) is float


def test_datetime_microseconds(db):
    t = dt.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert roundtrip(db, t) == t
    naive = dt.datetime(1999, 12, 31, 23, 59, 59, 1)
    assert roundtrip(db, naive) == naive.replace(tzinfo=UTC)
    other = dt.datetime(2024, 1, 1, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    got = roundtrip(db, other)
    assert got == other and got.tzinfo == UTC
    old = dt.datetime(1, 1, 1, tzinfo=UTC)
    assert roundtrip(db, old) == old
    before_epoch = dt.datetime(1969, 7, 20, 20, 17, 40, 5, tzinfo=UTC)
    assert roundtrip(db, before_epoch) == before_epoch


def test_geopoint_and_reference(db):
    g = roundtrip(db, ember.GeoPoint(37.77, -122.42))
    assert isinstance(g, ember.GeoPoint) and g == ember.GeoPoint(37.77, -122.42)
    r = roundtrip(db, db.document("cities/SF"))
    assert isinstance(r, ember.DocumentReference) and r == db.document("cities/SF") and r.path == "cities/SF"


def test_nested_mixed(db):
    v = {"l": [{"t": dt.datetime(2020, 2, 29, tzinfo=UTC), "g": ember.GeoPoint(0, 0)}, b"x", 1.5],
         "m": {"n": {"o": None}}}
    assert roundtrip(db, v) == v


def test_tuple_and_bytearray_are_accepted(db):
    assert roundtrip(db, (1, 2)) == [1, 2]
    assert roundtrip(db, bytearray(b"ab")) == b"ab"


def test_int_out_of_range_names_field(db):
    with pytest.raises(ember.InvalidArgumentError, match="'a.b'.*64-bit"):
        db.document("v/x").set({"a": {"b": 2**63}})


def test_unsupported_type_names_field(db):
    with pytest.raises(ember.InvalidArgumentError, match="'x'.*unsupported value type set"):
        db.document("v/x").set({"x": {1, 2}})


def test_non_str_key(db):
    with pytest.raises(ember.InvalidArgumentError, match="keys must be str"):
        db.document("v/x").set({1: "a"})


def test_document_must_be_dict(db):
    with pytest.raises(TypeError, match="document_data must be a dict"):
        db.document("v/x").set(["a"])


def test_array_in_array_rejected(db):
    with pytest.raises(ember.InvalidArgumentError):
        db.document("v/x").set({"a": [[1]]})


def test_encode_decode_helpers():
    data = _ember.encode({"a": [1, 2.5, "s", None, True]})
    assert _ember.decode(data) == {"a": [1, 2.5, "s", None, True]}
    js = _ember.convert(data, 0, 1)
    assert b'"a"' in js and b"2.5" in js
    with pytest.raises(ember.InvalidArgumentError):
        _ember.convert(b"\xc1", 0, 1)


def test_empty_field_name_rejected(db):
    with pytest.raises(ember.InvalidArgumentError, match="Empty field name"):
        db.document("v/x").set({"": 1})


def test_map_keys_decode_the_same_whatever_was_decoded_before():
    # Short ASCII keys are shared between decodes (a small table, replaced on collision): 3,000
    # distinct keys collide in it, and each must still come back as itself, twice over.
    keys = [f"k{i}" for i in range(3000)] + ["", "a" * 40, "b" * 41, "é", "ключ", "x\u00e9y", "a" * 39 + "é"]
    for _ in range(2):
        for start in range(0, len(keys), 50):
            d = {k: i for i, k in enumerate(keys[start:start + 50])}
            back = _ember.decode(_ember.encode(d))
            assert back == d and list(back) == list(d)
            assert all(type(k) is str for k in back)


def test_snapshot_projection_and_read_time_start_unset(db):
    ref = db.document("v/p")
    ref.set({"a": 1, "b": {"c": 2}})
    snap = ref.get()
    assert snap._fields is None and snap._rt is None
    assert snap.to_dict() == {"a": 1, "b": {"c": 2}}
    rt = snap.read_time
    assert snap._rt is rt and snap.read_time is rt
    assert ref.get(field_paths=["b.c"]).to_dict() == {"b": {"c": 2}}


def test_fields_differing_only_in_normalization_are_two(db):
    # "\u00e9" and "e\u0301" are two field names (as in Firestore), in any order and nested;
    # only a name repeated exactly is one field.
    a, b = "\u00e9", "e\u0301"
    ref = db.collection("c").document("d")
    ref.set({a: 1, b: 2, "m": {b: 3, a: 4}})
    assert ref.get().to_dict() == {a: 1, b: 2, "m": {a: 4, b: 3}}
    assert [d.id for d in db.collection("c").where(filter=ember.FieldFilter(b, "==", 2)).get()] == ["d"]
    assert [d.id for d in db.collection("c").where(filter=ember.FieldFilter(b, "==", 1)).get()] == []

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ember.checkpoint import _state

scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text()
           | st.binary(max_size=16)
           | st.integers(-(2**300), 2**300))
values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=4) | st.tuples(kids, kids)
    | st.dictionaries(st.text(max_size=6) | st.just("__ember__"), kids, max_size=4),
    max_leaves=20)


def _same(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@given(values)
def test_json_round_trip_is_exact(value):
    text = json.dumps(_state.encode(value), allow_nan=False)
    assert _same(_state.decode(json.loads(text)), value)


def test_numpy_values_round_trip():
    value = {"key": np.arange(5, dtype=np.uint32), "pos": np.int64(7), "f": np.float32(0.5)}
    out = _state.decode(json.loads(json.dumps(_state.encode(value))))
    np.testing.assert_array_equal(out["key"], value["key"])
    assert out["key"].dtype == np.uint32 and out["pos"].dtype == np.int64
    assert type(out["f"]) is np.float32


def test_huge_ints_beyond_the_decimal_digit_limit():
    big = 7**20000  # far more than 4300 decimal digits
    assert _state.decode(json.loads(json.dumps(_state.encode(big)))) == big


def test_unsupported_values_name_the_path():
    with pytest.raises(TypeError, match=r"state\['a'\]\[1\]: cannot checkpoint a set"):
        _state.encode({"a": [1, {2}]})
    with pytest.raises(TypeError, match="keys must be str"):
        _state.encode({1: 2})

"""Property tests: broadcasting and indexing agree with numpy on random shapes and keys."""

from __future__ import annotations

import re

import numpy as np
import pytest

# hypothesis is in the test extra; a bare GPU machine (cupy, numpy, pytest only) lacks it
pytest.importorskip("hypothesis", reason="hypothesis is not installed (ember-core[test])")
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
    "minimum": np.minimum, "equal": np.equal, "less": np.less, "greater_equal": np.greater_equal,
    "squared_difference": lambda x, y: np.square(x - y), "atan2": np.arctan2,
    "floormod": np.mod, "pow": np.power,
}
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


def _data(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.5, 2.0, shape).astype(np.float32)


@FAST
@given(name=st.sampled_from(sorted(BINARY)),
       shp=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
       seed=st.integers(0, 2**16))
def test_broadcasting_matches_numpy(name, shp, seed):
    rng = np.random.default_rng(seed)
    a, b = (_data(rng, s) for s in shp.input_shapes)
    got = getattr(em, name)(em.constant(a), em.constant(b))
    want = BINARY[name](a, b)
    assert got.shape == shp.result_shape == want.shape
    assert got.dtype == want.dtype
    assert_allclose(got.numpy(), want, rtol=1e-6)


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


@FAST
@given(name=st.sampled_from(sorted(set(BINARY) & set(em.REGISTRY))), a=shapes, b=shapes,
       python_operand=st.booleans())
def test_incompatible_shapes_raise_naming_op_and_shapes(name, a, b, python_operand):
    # primitives only: a composite (squared_difference) names the primitive that failed
    assume(not _broadcastable(a, b))
    x = em.zeros(a)
    y = np.zeros(b, np.float32) if python_operand else em.zeros(b)
    want = re.escape(f"{name}: ") + ".*" + re.escape(
        f"(inputs: float32{list(a)}, float32{list(b)})")
    with pytest.raises(em.InvalidArgumentError, match=want):
        getattr(em, name)(x, y)


@FAST
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
def test_basic_indexing_matches_numpy(data, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    got = em.constant(a)[key]
    assert got.shape == a[key].shape
    assert_array_equal(got.numpy(), a[key])


@FAST
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
       as_tensor=st.booleans())
def test_integer_array_indexing_matches_numpy(data, shape, as_tensor):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    key = data.draw(hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(
        min_dims=0, max_dims=2, max_side=4)))
    ekey = tuple(em.constant(k) for k in key) if as_tensor else key
    got = em.constant(a)[ekey]
    assert_array_equal(got.numpy(), a[key])


@FAST
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
def test_boolean_mask_indexing_matches_numpy(data, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    k = data.draw(st.integers(1, len(shape)))
    mask = data.draw(hnp.arrays(np.bool_, shape[:k]))
    got = em.constant(a)[em.constant(mask)]
    assert_array_equal(got.numpy(), a[mask])
    assert_array_equal(em.boolean_mask(em.constant(a), mask).numpy(), a[mask])


@FAST
@given(data=st.data(), shape=hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4))
def test_mixed_slice_and_array_index(data, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    idx = data.draw(hnp.arrays(np.int64, st.integers(0, 3),
                               elements=st.integers(-shape[1], shape[1] - 1)))
    key = (slice(None, None, -1), idx)
    assert_array_equal(em.constant(a)[key].numpy(), a[key])
    upd = np.ones(a[key].shape, np.float32)
    want = a.copy()
    np.add.at(want, key, upd)
    assert_array_equal(em.index_add(em.constant(a), key, upd).numpy(), want)

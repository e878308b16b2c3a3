"""nn.ops.norm (keras.ops.norm) against numpy's linalg.norm, Keras's reference backend."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape

INF = np.inf
CASES = [  # (shape, ord, axis, keepdims)
    ((5,), None, None, False), ((3, 4), None, None, True), ((2, 3, 4), None, None, False),
    ((5,), 1, None, False), ((5,), INF, None, False), ((5,), -INF, None, False),
    ((5,), 0, None, False), ((5,), 3, None, False), ((5,), 0.5, None, False),
    ((3, 4), 2, 1, False), ((3, 4), 1, 0, True), ((2, 3, 4), INF, -1, False),
    ((3, 4), "fro", None, False), ((3, 4), "nuc", None, False), ((3, 4), 1, None, False),
    ((3, 4), -1, None, False), ((3, 4), INF, None, False), ((3, 4), -INF, None, False),
    ((3, 4), 2, None, False), ((3, 4), -2, None, False),
    ((2, 3, 4), "fro", (1, 2), True), ((2, 3, 4), "nuc", (2, 0), False),
    ((2, 3, 4), 1, (2, 1), False), ((2, 3, 4), INF, (0, 2), True),
    ((2, 3, 4), -2, (1, 2), False),
]


@pytest.mark.parametrize("shape,ord,axis,keepdims", CASES)
def test_norm_is_numpy_s(shape, ord, axis, keepdims):
    x = np.random.default_rng(0).standard_normal(shape)
    x[..., 0] = 0.0  # zeros for ord=0
    got = nn.ops.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    want = np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_integers_compute_in_float32_and_bad_ords_are_named():
    assert nn.ops.norm(np.array([3, 4])).dtype == em.float32
    assert float(nn.ops.norm(np.array([3, 4]))) == 5.0
    with pytest.raises(em.InvalidArgumentError, match="'nuc' is not a vector norm"):
        nn.ops.norm(np.ones(3), ord="nuc")
    with pytest.raises(em.InvalidArgumentError, match="3 is not a matrix norm"):
        nn.ops.norm(np.ones((2, 2)), ord=3)
    with pytest.raises(em.InvalidArgumentError, match="needs a 1-D or 2-D x"):
        nn.ops.norm(np.ones((2, 2, 2)), ord=1)


def test_the_euclidean_norm_differentiates():
    x = np.random.default_rng(1).standard_normal((3, 4))
    tape.check_gradients(lambda t: nn.ops.norm(t, axis=1), [x], order=2)
    tape.check_gradients(lambda t: nn.ops.norm(t, ord="fro"), [x], order=1)


def test_slice_update_with_tensor_starts_stays_traced_and_differentiates():
    from ember import graph

    @graph.function
    def put(x, i):
        return nn.ops.slice_update(x, [i, 1], em.constant([[5.0, 6.0]]))

    for i in range(3):
        want = np.zeros((3, 4), np.float32)
        want[i, 1:3] = [5.0, 6.0]
        np.testing.assert_array_equal(put(em.zeros((3, 4)), em.constant(i)).numpy(), want)
    assert put.experimental_get_tracing_count() == 1  # the start is never read on the host
    x = np.random.default_rng(2).standard_normal((3, 4))
    u = np.random.default_rng(3).standard_normal((2, 2))
    tape.check_gradients(
        lambda a, b: nn.ops.slice_update(a, em.constant([1, 2]), b) ** 2, [x, u], order=2)
    with pytest.raises(em.InvalidArgumentError, match="indices must be in"):
        nn.ops.slice_update(em.zeros((3, 4)), em.constant([2, 0]), em.ones((2, 2)))

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

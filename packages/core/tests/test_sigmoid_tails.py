"""``sigmoid`` is accurate to a few ulps in both tails, as TensorFlow's and PyTorch's.

The ``(tanh(x / 2) + 1) / 2`` ember used before lost the negative tail to cancellation: 0 at
x = -20 where the sigmoid is 2.1e-9, 2.98e-8 at -17.8 where it is 1.86e-8, so that
``log(sigmoid(x))`` was -inf where TensorFlow gives -20 (found porting TensorFlow's
"Logistic regression with Core APIs")."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember.core as em


def _reference(x: np.ndarray) -> np.ndarray:
    """The sigmoid in Python's doubles, from the side that cannot cancel."""
    def one(v: float) -> float:
        if math.isnan(v):
            return math.nan
        if v >= 0:
            return 1.0 / (1.0 + math.exp(-v))
        e = math.exp(v) if v > -745 else 0.0
        return e / (1.0 + e)
    return np.array([one(float(v)) for v in x.ravel()]).reshape(x.shape)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_both_tails_to_a_few_ulps(device, dtype):
    x = np.concatenate([np.linspace(-80, 80, 4001), [-17.8, -20.0, -30.0, -60.0, 0.0, -0.0]])
    x = x.astype(dtype)
    got = em.sigmoid(em.constant(x)).numpy()
    assert got.dtype == dtype
    want = _reference(x)
    tiny = np.finfo(dtype).tiny
    normal = want > tiny
    rel = np.abs(got[normal] - want[normal]) / want[normal]
    assert rel.max() < 4 * np.finfo(dtype).eps, (rel.max(), x[normal][rel.argmax()])
    assert got[x == -20.0][0] > 0 and got[x == 80.0][0] == 1.0


def test_limits_and_nan(device):
    x = np.array([-np.inf, -200.0, -100.0, np.inf, 200.0, np.nan], np.float32)
    got = em.sigmoid(em.constant(x)).numpy()
    assert got[:3].tolist() == [0.0, 0.0, 0.0]  # exp(100) overflows float32: the limit
    assert got[3:5].tolist() == [1.0, 1.0] and np.isnan(got[5])


def test_log_of_a_tail_is_finite(device):
    got = em.math.log(em.sigmoid(em.constant([-20.0, -50.0, -80.0]))).numpy()
    np.testing.assert_allclose(got, [-20.0, -50.0, -80.0], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_rounds_the_float32_sigmoid_once(dtype):
    with em.device("/cpu:0"):
        x = em.cast(em.constant(np.linspace(-20, 20, 801)), dtype)
        got = em.sigmoid(x)
        assert got.dtype == x.dtype
        want = em.cast(em.sigmoid(em.cast(x, em.float32)), dtype)
        assert np.array_equal(got.numpy().astype(np.float32), want.numpy().astype(np.float32))


def test_scalars_and_integers(device):
    assert float(em.sigmoid(em.constant(0.0))) == 0.5
    got = em.sigmoid(em.constant([-30, 0, 30]))
    assert got.dtype == em.float32
    np.testing.assert_allclose(got.numpy(), _reference(np.array([-30.0, 0.0, 30.0])),
                               rtol=1e-6)

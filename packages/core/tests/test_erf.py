"""The CPU's erf without scipy (``_erf``, Cephes' rational approximations): within a few
units in the last place of Python's ``math.erf`` everywhere, in each dtype."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ember.core import _erf


def test_float64_matches_math_erf_to_the_last_places():
    x = np.concatenate([np.linspace(-9.0, 9.0, 200_001), [0.0, -0.0, 1.0, -1.0, 8.0, 27.0,
                                                           1e-300, -5e-324, 0.4769362762]])
    want = np.array([math.erf(v) for v in x])
    got = _erf.erf(x)
    assert got.dtype == np.float64
    rel = np.abs(got - want) / np.maximum(np.abs(want), np.finfo(np.float64).tiny)
    assert rel.max() < 4 * np.finfo(np.float64).eps, (rel.max(), x[rel.argmax()])
    assert np.signbit(_erf.erf(np.array([-0.0])))[0]  # erf(-0) is -0


def test_edges():
    got = _erf.erf(np.array([np.inf, -np.inf, np.nan, 40.0, -40.0]))
    assert got[:2].tolist() == [1.0, -1.0] and np.isnan(got[2]) and got[3:].tolist() == [1, -1]
    assert _erf.erf(np.zeros((0, 3))).shape == (0, 3)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_smaller_floats_are_rounded_once_from_float64(dtype):
    x = np.random.default_rng(0).standard_normal(10_000).astype(dtype) * 3
    got = _erf.erf(x)
    assert got.dtype == dtype
    want = np.array([math.erf(float(v)) for v in x]).astype(dtype)
    assert np.array_equal(got, want)


def test_integers_compute_in_float64():
    assert _erf.erf(np.array([0, 1, -2])).dtype == np.float64

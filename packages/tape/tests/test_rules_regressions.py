"""Focused tests for gradient bugs the spec-table checks found."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import tape


@pytest.mark.parametrize("dtype", [em.int32, em.bool_])
def test_cast_to_integer_or_bool_has_no_gradient(dtype):
    # Was: the int/bool target was seeded with ones and cast's rule passed them back, so
    # d cast(x, int32)/dx came out as 1 (TF gives None; PyTorch: no grad_fn).
    x = em.constant([1.5, -2.3])
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
        y = em.cast(x, dtype)
    assert t.gradient(y, x) is None
    assert t.gradient(y, x, output_gradients=em.constant([1.0, 2.0])) is None
    np.testing.assert_array_equal(t.gradient(y, x, unconnected_gradients="zero").numpy(), [0, 0])


def test_gradient_does_not_flow_through_an_integer_round_trip():
    # The rounding step is not differentiable: only the direct + x path contributes.
    x = em.constant([1.5, -2.3], dtype=em.float64)
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.cast(em.cast(x, em.int32), em.float64) * 3.0 + x
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [1.0, 1.0])


def test_cast_between_floats_keeps_its_gradient():
    x = em.constant([1.5, -2.3], dtype=em.float64)
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.cast(x, em.float32) * 2.0
    g = t.gradient(y, x)
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g.numpy(), [2.0, 2.0])

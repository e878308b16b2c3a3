"""Gradient rules on the conv/pool/relu path allocate one result-sized array, not float
masks and products of them. Measured with tracemalloc, which sees numpy's allocations."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import tape

SHAPE = (16, 32, 32, 16)  # 1 MiB of float32


def _gradient_peak(f, x):
    """(peak growth of numpy's memory during the gradient, in inputs' sizes; gradient)."""
    with tape.GradientTape() as t:
        t.watch(x)
        y = f(x)
    dy = em.ones_like(y)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        g = t.gradient(y, x, output_gradients=dy)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if x.device != "/cpu:0":
        # On the GPU double, device buffers are hidden from tracemalloc, but a fused
        # kernel runs as numpy on the host and its temporaries are seen; a GPU has none.
        # The values are still checked there; the peak is the host's to measure.
        return None, g.numpy()
    return (peak - base) / x.numpy().nbytes, g.numpy()


def _below(peak, limit):
    return peak is None or peak < limit


def _x():
    return em.constant(np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32))


def test_relu_gradient_is_one_pass():
    x = _x()
    peak, g = _gradient_peak(em.nn_ops.relu, x)
    assert_allclose(g, (x.numpy() > 0).astype(np.float32))
    # the gradient and a bool mask (it was a float copy of the mask and the product)
    assert _below(peak, 1.6), f"relu's gradient peaked at {peak:.2f} inputs"


@pytest.mark.parametrize("pool", ["tiled", "windows"])
def test_max_pool_gradient_keeps_no_float_mask(pool):
    x = _x()
    stride = 2 if pool == "tiled" else 1  # 2x2/2 tiles the input: one reduce_max
    peak, g = _gradient_peak(lambda v: em.nn_ops.max_pool2d(v, 2, stride), x)
    xs = x.numpy()
    if pool == "tiled":
        b = xs.reshape(16, 16, 2, 16, 2, 16)
        want = (b == b.max(axis=(2, 4), keepdims=True)).reshape(SHAPE).astype(np.float32)
        assert_allclose(g, want)
        # the gradient and a bool mask (it was a float mask, a quotient and a product)
        assert _below(peak, 2.0), f"max-pool's gradient peaked at {peak:.2f} inputs"
    else:
        assert_allclose(g.sum(), 16 * 31 * 31 * 16)  # every window sends its 1 somewhere
        # overlapping windows: each window's gradient goes to its first maximum, as
        # TensorFlow's and PyTorch's, through a select of the windows (3.75 inputs) and its
        # gradient, a bool mask and the image: 11.3 inputs (it was 7 while ties shared the
        # gradient through reduce_max's rule; 12 before that, a float mask, a quotient and
        # a product, each window-sized)
        assert _below(peak, 12), f"max-pool's gradient peaked at {peak:.2f} inputs"


def test_max_gradient_splits_ties():
    x = em.constant(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]], np.float32))
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.reduce_max(x, axis=1)
    assert_allclose(t.gradient(y, x).numpy(), [[0, 0.5, 0.5], [0.5, 0, 0.5]])

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


def _sparse_xent_composed(labels, logits):
    """The unfused composition the fused ``sparse_softmax_xent`` op replaces."""
    picked = em.squeeze(em.take_along_axis(logits, em.expand_dims(labels, -1), -1), -1)
    return em.subtract(em.reduce_logsumexp(logits, -1), picked)


def test_fused_sparse_cross_entropy_matches_the_composition_to_second_order():
    rng = np.random.default_rng(3)
    x = em.Variable(rng.standard_normal((5, 4)).astype(np.float64))
    y = em.constant([0, 3, 1, 1, 2])
    w = em.constant(rng.standard_normal(5))
    got, want = [], []
    for f, out in ((em.nn_ops.sparse_softmax_cross_entropy_with_logits, got),
                   (_sparse_xent_composed, want)):
        with tape.GradientTape() as outer:
            with tape.GradientTape() as inner:
                loss = em.reduce_sum(em.multiply(f(y, x), w))
            g = inner.gradient(loss, x)
            gg = em.reduce_sum(em.multiply(g, g))
        out += [loss.numpy(), g.numpy(), outer.gradient(gg, x).numpy()]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_fused_sparse_cross_entropy_gives_no_gradient_for_a_bad_label_off_the_host(backend):
    """Off the host labels are checked on the device and reported at the next read (core's
    test_device_errors); meanwhile an out-of-range one gives its example a NaN loss and,
    as the composition did, no gradient (not softmax - 0)."""
    if backend == "/cpu:0":
        pytest.skip("on the host a bad label is an error at the call (core's test_errors)")
    x = em.Variable([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    with tape.GradientTape() as t:
        loss = em.nn_ops.sparse_softmax_cross_entropy_with_logits(em.constant([2, 3]), x)
    grad = t.gradient(loss, x)
    with pytest.raises(em.InvalidArgumentError, match="labels must be in"):
        grad.numpy()
    g = grad.numpy()
    assert np.isnan(loss.numpy()[1])
    p = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(g, [p - [0, 0, 1], [0, 0, 0]], rtol=1e-6, atol=1e-7)


def test_a_scatter_update_gives_its_updates_the_gradient_of_where_they_land():
    """With repeats refused (ember-core's test_scatter_repeats.py), every update lands and
    gets the gradient of its own target, never of another's."""
    u = em.constant([1.0, 2.0])
    with tape.GradientTape() as g:
        g.watch(u)
        y = em.tensor_scatter_nd_update(em.zeros([3]), [[2], [0]], u)
        loss = em.reduce_sum(y * em.constant([10.0, 1.0, 3.0]))
    np.testing.assert_array_equal(g.gradient(loss, u).numpy(), [3.0, 10.0])


@pytest.mark.parametrize("layer", ["relu", "dense", "conv"])
def test_a_second_derivative_through_relu_is_zeros_not_none(layer):
    # keras-io's WGAN-GP: the gradient penalty's gradient for a bias that reaches the
    # critic's input-gradient only through relu masks. TensorFlow's ReluGrad gives zeros
    # there (connected); ember gave None, as if the bias did not reach the penalty.
    b = em.Variable(np.float32(0.5))
    x = em.constant(np.array([[1.0, -2.0]], np.float32))
    w = em.constant(np.array([[3.0], [1.0]], np.float32))
    with tape.GradientTape() as outer:
        with tape.GradientTape() as inner:
            inner.watch(x)
            if layer == "relu":
                y = em.nn_ops.relu(3.0 * x + b)
            elif layer == "dense":
                y = em.nn_ops.dense(x, w, em.reshape(b, [1]), activation="relu")
            else:
                img = em.reshape(x, [1, 1, 2, 1])
                y = em.nn_ops.bias_activation(
                    em.nn_ops.conv2d(img, em.reshape(w, [1, 2, 1, 1]), padding="SAME"),
                    em.reshape(b, [1]), "relu")
            s = em.reduce_sum(y)
        g = inner.gradient(s, x)
        penalty = em.reduce_sum(g * g)
    got = outer.gradient(penalty, b)
    assert got is not None
    assert float(got) == 0.0


def test_a_list_of_tensors_converts_by_stacking_so_gradients_flow_through_it():
    # TensorFlow packs [a, b] into one tensor with an op; ember read the values into a
    # constant, so d/da of reduce_sum(convert_to_tensor([a, b]) * a) lost the 2a + b's 2a
    # part (5 for 7) and reduce_sum([a * a, b]) gave None
    a, b = em.constant(2.0), em.constant(3.0)
    with tape.GradientTape(persistent=True) as t:
        t.watch(a)
        y1 = em.reduce_sum(em.convert_to_tensor([a, b]) * a)
        y2 = em.reduce_sum([a * a, b, 1.0])
        y3 = em.reduce_sum(em.convert_to_tensor([[a, 1.0], [b, a]]))
    assert float(t.gradient(y1, a)) == 7.0
    assert float(t.gradient(y2, a)) == 4.0
    assert float(t.gradient(y3, a)) == 2.0
    with tape.GradientTape() as t:
        t.watch(a)
        y4 = em.reduce_sum(em.constant([a, b]) * a)  # em.constant reads values, as TF's
    assert float(t.gradient(y4, a)) == 5.0

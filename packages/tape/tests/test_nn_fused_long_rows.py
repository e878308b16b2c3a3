"""bias_activation on convolution-sized inputs: the host adds the bias over rows taken
together (the bias repeated to their length), which the op table's small cases never
reach; the result must be numpy's broadcast sum to the bit, whatever the row count, and
its gradient right (here with the tape's tests: ember-core's session has no ember-tape)."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import tape


@pytest.mark.parametrize("shape", [
    (64, 28, 28, 32),  # LeNet's first layer: rows taken 512 at a time
    (1, 4099, 1, 24),  # a prime number of rows: none taken together
    (3, 24000, 3),  # 72000 rows: 64 at a time (the power of two that divides them)
    (2, 300, 300),  # channels of 300: long rows already
])
@pytest.mark.parametrize("activation", ["relu", "linear"])
def test_bias_activation_is_the_broadcast_sum(backend, shape, activation):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[-1]).astype(np.float32)
    want = x + b
    if activation == "relu":
        want = np.maximum(want, np.float32(0))
    xe, be = em.constant(x), em.constant(b)
    with tape.GradientTape() as t:
        t.watch([xe, be])
        y = em.nn_ops.bias_activation(xe, be, activation)
    assert y.device == backend
    assert_array_equal(y.numpy(), want)
    dy = rng.standard_normal(shape).astype(np.float32)
    dx, db = t.gradient(y, [xe, be], output_gradients=em.constant(dy))
    dz = np.where(want > 0, dy, np.float32(0)) if activation == "relu" else dy
    assert_array_equal(dx.numpy(), dz)
    np.testing.assert_allclose(db.numpy(), dz.reshape(-1, shape[-1]).sum(0, dtype=np.float64),
                               rtol=1e-4, atol=1e-3)


def test_a_strided_input_is_summed_as_it_is():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 30, 30, 16)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    view = em.constant(x)[:, 1:-1, 1:-1, :]  # not contiguous
    y = em.nn_ops.bias_activation(view, em.constant(b))
    assert_array_equal(y.numpy(), np.maximum(x[:, 1:-1, 1:-1, :] + b, np.float32(0)))

"""Gradients flow through em.TensorArray's writes and reads, as through TF's."""

import numpy as np

import ember.core as em
from ember import tape


def test_the_gradient_through_writes_and_stack_is_the_chain_rule():
    x = em.Variable([1.0, -2.0])
    with tape.GradientTape() as t:
        ta = em.TensorArray(em.float32, size=3)
        s = x
        for i in range(3):
            s = s * 3.0
            ta = ta.write(i, s)
        y = em.reduce_sum(ta.stack() * ta.stack())  # sum_i (3^i x)^2, i = 1..3
    want = 2 * (9 + 81 + 729) * np.array([1.0, -2.0], np.float32)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), want, rtol=1e-6)


def test_the_gradient_through_unstack_and_read():
    x = em.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tape.GradientTape() as t:
        ta = em.TensorArray(em.float32, size=2).unstack(x)
        y = em.reduce_sum(ta.read(1) * 5.0)
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [[0, 0], [5, 5]])

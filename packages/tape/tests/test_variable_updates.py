"""A variable's assign_add/assign_sub under a tape: recorded as ops (never written in place
while a tape records), so gradients see the updated value."""

import numpy as np
from numpy.testing import assert_array_equal

import ember.core as em
from ember import tape


def test_a_tape_sees_the_update_as_an_op():
    v = em.Variable(np.full(3, 2.0, np.float32))
    with tape.GradientTape() as t:
        v.assign_sub(em.constant(np.ones(3, np.float32)))
        y = em.reduce_sum(v * v)
    assert_array_equal(t.gradient(y, v).numpy(), np.full(3, 2.0))

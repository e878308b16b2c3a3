"""A variable's assign_add/assign_sub under a tape: recorded as ops (never written in place
while a tape records), so gradients see the updated value."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import tape


def test_a_tape_sees_the_update_as_an_op():
    v = em.Variable(np.full(3, 2.0, np.float32))
    with tape.GradientTape() as t:
        v.assign_sub(em.constant(np.ones(3, np.float32)))
        y = em.reduce_sum(v * v)
    assert_array_equal(t.gradient(y, v).numpy(), np.full(3, 2.0))


@pytest.mark.parametrize(("update", "want"), [
    (lambda v: v.assign_add(1.0), 16.0), (lambda v: v.assign_sub(1.0), 8.0),
    (lambda v: v.assign(v + 1.0), 16.0), (lambda v: v.assign(3.0), 16.0)])
def test_an_assign_between_two_reads_has_no_gradient(update, want):
    """TensorFlow 2.21: each read of a variable is its own tensor, and an assign has no
    gradient, so d/dv of ``(v*v) * v`` with an update between the reads is
    ``new * 2v + v*v`` (16 after assign_add(1) from 2; ember gave 20, counting the first
    read again through the update)."""
    v = em.Variable(2.0)
    with tape.GradientTape() as t:
        y = v * v
        update(v)
        z = y * v
    assert float(t.gradient(z, v)) == want


def test_a_value_assigned_keeps_its_own_gradient():
    """``v.assign(u)`` where ``u = w * 2``: z = u * v reads v as a new tensor, so
    dz/dw = 2 * v_read = 12 and dz/dv = u = 6 (TensorFlow 2.21)."""
    w, v = em.Variable(3.0), em.Variable(2.0)
    with tape.GradientTape(persistent=True) as t:
        u = w * 2.0
        v.assign(u)
        z = u * v
    assert float(t.gradient(z, w)) == 12.0 and float(t.gradient(z, v)) == 6.0

"""``extend.map_variable_reads`` (layers' autocast under a mixed-precision policy): a tape
differentiates through the mapped read back to the variable, in the variable's dtype."""

import numpy as np

import ember.core as em
from ember import tape
from ember.core import extend


def test_the_tape_differentiates_through_mapped_reads():
    v = em.Variable(np.array([1.5, -2.0], np.float32))
    seen = []

    def half(var, value):
        seen.append(var)
        return em.cast(value, em.float16)

    # (the mapping itself: core's test_extend.py::test_map_variable_reads_maps_op_reads)
    with tape.GradientTape() as t, extend.map_variable_reads(half):
        y = em.reduce_sum(em.multiply(v, v))
    assert y.dtype == em.float16 and seen == [v, v]
    (g,) = t.gradient(y, [v])
    assert g.dtype == em.float32  # the cast's gradient goes back to the variable's dtype
    np.testing.assert_allclose(g.numpy(), [3.0, -4.0])
    assert v.value().dtype == em.float32  # outside the block, reads are plain again

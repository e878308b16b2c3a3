"""The strict double's ``ElementwiseKernel`` reading its outputs, as cupy 14 lets it (an
output is ``T &o = _raw_o[_ind.get()]``, a reference to its element): an update in place
of arrays the caller passes, refused where cupy would read uninitialised memory or where
one element would read another that the same launch writes."""

from __future__ import annotations

import numpy as np
import pytest


def test_an_output_the_caller_passes_is_read_as_its_element_then_updated(gpu):
    xp = gpu.backend.xp
    acc = xp.ElementwiseKernel("T x", "T o, T before", "before = o; o = o | x; o = o + x",
                               "accumulate")
    o = xp.asarray(np.array([0, 1, 2, 4], np.int64))
    before = xp.empty((4,), np.int64)
    gpu.backend.counters.reset()
    acc(xp.asarray(np.array([1, 1, 0, 1], np.int64)), o, before)
    assert gpu.backend.counters.launches == 1
    assert before.get().tolist() == [0, 1, 2, 4]
    assert o.get().tolist() == [2, 2, 2, 6]  # (o | x) + x, element by element
    # one-element views of one array are separate outputs (each its own element)
    h = xp.asarray(np.array([3, 5], np.int64))
    xp.ElementwiseKernel("T a", "T p, T q", "T was = p; p = q; q = was + a", "swap")(
        xp.asarray(np.array([10], np.int64)), h[0:1], h[1:2])
    assert h.get().tolist() == [5, 13]


def test_reading_an_output_the_call_allocates_is_refused(gpu):
    xp = gpu.backend.xp
    k = xp.ElementwiseKernel("T x", "T o", "o = o + x", "uninitialised")
    with pytest.raises(ValueError, match=r"\['o'\] are read before they are assigned"):
        k(xp.asarray(np.ones(3, np.float32)))
    # assigned first, then read: defined however the output is made
    ok = xp.ElementwiseKernel("T x", "T o", "o = x; o = o + x", "assigned_first")
    assert ok(xp.asarray(np.ones(3, np.float32))).get().tolist() == [2, 2, 2]


def test_an_input_overlapping_an_output_at_other_elements_is_refused(gpu):
    """A race on a GPU: element 1 may read element 0 before or after its thread writes."""
    xp = gpu.backend.xp
    k = xp.ElementwiseKernel("T x", "T o", "o = o + x", "racy")
    o = xp.asarray(np.arange(4, dtype=np.float32))
    with pytest.raises(ValueError, match="input 'x' overlaps output 'o' at other elements"):
        k(o[0:1], o)
    with pytest.raises(ValueError, match="overlaps"):
        k(o[::-1], o)
    k(o, o)  # the same element: no race
    assert o.get().tolist() == [0, 2, 4, 6]
    # nor along axes of length 1, whatever their strides (a kept-dims norm's (1, 1) written
    # in place by graph mode's fused chain: clip_by_norm on the GPU)
    one = xp.asarray(np.full((1, 1), 2, np.float32))
    k(one, one)
    assert one.get().tolist() == [[4]]

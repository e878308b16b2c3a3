"""Indices out of bounds raise an error that names the op, the axis and the values, on
every backend. cupy wraps such indices around where numpy raises, and the strict double
does as cupy does, so on a GPU these checks are all that stands between a bad index and a
silently wrong value."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core import nn_ops
from ember.core.testing import simulated_gpus

P = np.arange(12, dtype=np.float32).reshape(3, 4)

OUT_OF_BOUNDS = [  # (call, error pattern)
    (lambda p: em.gather(p, [0, 3]),
     r"gather: indices must be in \[0, 3\) for axis 0 of size 3, got values from 0 to 3"),
    (lambda p: em.gather(p, [[4]], axis=1), r"gather: .*axis 1 of size 4.* from 4 to 4"),
    (lambda p: em.gather(p, [[0], [4], [1]], axis=1, batch_dims=1),
     r"gather: .*axis 1 of size 4"),
    (lambda p: em.gather_nd(p, [[0, 1], [2, 4]]),
     r"gather_nd: .*column 1 of the index \(axis 1 of size 4\), got values from 1 to 4"),
    (lambda p: em.gather_nd(p, [[3]]), r"gather_nd: .*column 0 .*axis 0 of size 3"),
    (lambda p: p[em.constant([1, 3])],
     r"getitem: indices must be in \[-3, 3\) for axis 0 of size 3, got values from 1 to 3"),
    (lambda p: p[em.constant([-4])], r"getitem: indices must be in \[-3, 3\)"),
    (lambda p: p[:, em.constant([5])], r"getitem: .*axis 1 of size 4"),
    (lambda p: p[..., em.constant([4])], r"getitem: .*axis 1 of size 4"),
    (lambda p: em.take_along_axis(p, em.constant([[0], [4], [1]]), 1),
     r"take_along_axis: indices must be in \[-4, 4\) for axis 1"),
    (lambda p: em.tensor_scatter_nd_update(p, [[3]], np.ones((1, 4), np.float32)),
     r"tensor_scatter_nd_update: .*column 0 .*axis 0 of size 3"),
    (lambda p: em.tensor_scatter_nd_add(p, [[0, 9]], [1.0]),
     r"tensor_scatter_nd_add: .*axis 1 of size 4\), got values from 9 to 9"),
    (lambda p: em.scatter_nd([[3]], [1.0], [3]), r"scatter_nd: .*axis 0 of size 3"),
    (lambda p: em.gather(p, [-1]), r"gather: indices must not be negative"),
]


@pytest.mark.parametrize(("call", "pattern"), OUT_OF_BOUNDS,
                         ids=[f"case{i}" for i in range(len(OUT_OF_BOUNDS))])
def test_an_index_out_of_bounds_raises_naming_op_axis_and_values(device, call, pattern):
    with pytest.raises(em.IndexOutOfRangeError, match=pattern):
        call(em.constant(P))


def test_indices_in_bounds_pick_what_numpy_picks(device):
    p = em.constant(P)
    assert_array_equal(em.gather(p, [2, 0]).numpy(), P[[2, 0]])
    assert_array_equal(p[em.constant([-3, 2])].numpy(), P[[-3, 2]])  # numpy's negatives
    assert_array_equal(p[:, em.constant([-1])].numpy(), P[:, [-1]])
    idx = np.array([[3], [0], [-4]])
    assert_array_equal(em.take_along_axis(p, em.constant(idx), 1).numpy(),
                       np.take_along_axis(P, idx, 1))
    assert_array_equal(em.gather_nd(p, [[2, 3], [0, 0]]).numpy(), P[[2, 0], [3, 0]])
    assert_array_equal(em.sort(em.constant([3.0, 1.0, 2.0])).numpy(), [1.0, 2.0, 3.0])
    assert_array_equal(em.gather(p, np.zeros(0, np.int64)).numpy(), P[:0])  # no index


def test_the_strict_double_wraps_as_cupy_does():
    """The reason for the checks: cupy's integer-array indexing wraps around."""
    with simulated_gpus(1, strict=True) as (gpu,):
        xp = gpu.backend.xp
        x = xp.asarray(np.arange(3))
        assert x[xp.asarray(np.array([1, 3, -4]))].get().tolist() == [1, 0, 2]
        y = xp.zeros((2, 3))
        y[:, xp.asarray(np.array([4]))] = 1.0
        assert y.get()[:, 1].tolist() == [1.0, 1.0]
        assert xp.take(x, xp.asarray(np.array([5]))).get().tolist() == [2]


def test_embedding_lookup_and_gather_check_on_the_gpu_too():
    with simulated_gpus(1, strict=True), em.device("/gpu:0"):
        with pytest.raises(em.IndexOutOfRangeError, match="gather: .*from 0 to 7"):
            em.gather(em.ones([3, 2]), em.constant([0, 7]))
        with pytest.raises(em.InvalidArgumentError, match="embedding_lookup: ids must be"):
            nn_ops.embedding_lookup(em.ones([3, 2]), em.constant([7]))


def test_indices_given_on_the_host_are_checked_there_and_device_ones_in_one_copy():
    with simulated_gpus(1, strict=True) as (gpu,), em.device("/gpu:0"):
        p, counters = em.constant(P), gpu.backend.counters
        ids = em.constant([[0, 3], [2, 1]])
        counters.reset()
        em.gather(p, [2, 0])
        p[np.array([1, -1])]
        em.gather_nd(p, [[0, 3], [2, 1]])
        assert counters.to_host == 0  # checked before the upload
        em.gather_nd(p, ids)
        assert counters.to_host == 1  # both columns' extremes in one copy

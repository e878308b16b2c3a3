"""TensorFlow's argument checks of slice, scatter_nd and the tensor_scatter_nd ops: a
begin/size outside the tensor, or updates of another shape, were clipped, wrapped or
broadcast without an error (the tensor-slicing guide's port found them)."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em

T1 = np.arange(8)


@pytest.mark.parametrize("begin, size, match", [
    ([6], [5], r"size\[0\] must be -1 or in \[0, 2\]"),
    ([-1], [1], r"begin\[0\] must be in \[0, 8\]"),
    ([-3], [2], r"begin\[0\] must be in \[0, 8\]"),
    ([1], [-2], r"size\[0\] must be -1 or in \[0, 7\]"),
    ([9], [0], r"begin\[0\] must be in \[0, 8\]"),
])
def test_slice_refuses_what_tensorflow_refuses(device, begin, size, match):
    with em.device(device), pytest.raises(em.InvalidArgumentError, match=match):
        em.slice(em.constant(T1), begin, size)


def test_slice_needs_one_entry_per_axis_and_takes_the_edges(device):
    with em.device(device):
        with pytest.raises(em.InvalidArgumentError, match="one entry per axis"):
            em.slice(em.ones([2, 3]), [1], [1])
        t = em.constant(T1)
        assert em.slice(t, [8], [0]).shape == (0,)
        assert em.slice(t, [1], [-1]).numpy().tolist() == T1[1:].tolist()
        assert em.slice(t, [0], [8]).numpy().tolist() == T1.tolist()


@pytest.mark.parametrize("call", [
    lambda: em.scatter_nd([[1], [2]], [5], [4]),
    lambda: em.scatter_nd([[1], [2]], 5, [4]),
    lambda: em.tensor_scatter_nd_add(em.zeros([4, 2]), [[0], [1]], [1.0, 1.0]),
    lambda: em.tensor_scatter_nd_update(em.zeros([4, 2]), [[0], [1]], em.ones([1, 2])),
    lambda: em.tensor_scatter_nd_sub(em.zeros([4]), [[0], [1]], [1.0]),
])
def test_updates_of_another_shape_are_refused_not_broadcast(device, call):
    with em.device(device), pytest.raises(em.InvalidArgumentError,
                                          match=r"updates must have shape indices.shape"):
        call()


def test_gather_nd_with_an_empty_index_copies_params_per_row(device):
    with em.device(device):
        p = np.arange(6).reshape(3, 2)
        got = em.gather_nd(em.constant(p), np.zeros((2, 0), np.int32))
        assert got.shape == (2, 3, 2) and (got.numpy() == p).all()


def test_tensor_scatter_nd_sub_subtracts_and_duplicates_add_up(device):
    with em.device(device):
        got = em.tensor_scatter_nd_sub(em.ones([4]), [[1], [3], [1]], [1.0, 2.0, 3.0])
        assert got.numpy().tolist() == [1.0, -3.0, 1.0, -1.0]

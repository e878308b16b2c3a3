"""An update op (index_update, tensor_scatter_nd_update) refuses indices that pick one
element twice: numpy keeps the last update, cupy lands an undefined one, TensorFlow calls
the order nondeterministic, and every repeated update would get a gradient although one
at most landed. Adding ops (index_add, tensor_scatter_nd_add) still accumulate repeats."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core.testing import simulated_gpus

X = np.arange(12, dtype=np.float32).reshape(4, 3)

REPEATS = [  # (call, error pattern)
    (lambda x, t: em.tensor_scatter_nd_update(x, t([[1], [3], [1]]), em.ones([3, 3])),
     r"tensor_scatter_nd_update: the indices pick the same element more than once \(at "
     r"\(1,\) along the indexed axes, of sizes \(4,\); 1 repeat"),
    (lambda x, t: em.tensor_scatter_nd_update(x, t([[0, 2], [0, 2]]), em.ones([2])),
     r"tensor_scatter_nd_update: .*\(0, 2\) along the indexed axes, of sizes \(4, 3\)"),
    (lambda x, t: em.index_update(x, (t([0, 2, 0]),), em.ones([3, 3])),
     r"index_update: .*\(0,\) along"),
    (lambda x, t: em.index_update(x, (t([0, 2, 0]), t([1, 1, 1])), em.ones([3])),
     r"index_update: .*\(0, 1\) along the indexed axes, of sizes \(4, 3\)"),
    (lambda x, t: em.index_update(x, (t([0, -4]),), em.ones([2, 3])),  # -4 is 0
     r"index_update: .*\(0,\) along"),
    (lambda x, t: em.index_update(x, (slice(None), t([2, 2])), em.ones([4, 2])),
     r"index_update: .*\(2,\) along the indexed axes, of sizes \(3,\)"),
    (lambda x, t: em.index_update(x, (t([[1], [2]]), t([0, 0])), em.ones([2, 2])),
     r"index_update: .*repeat"),  # broadcast (2, 1) x (2,): (1, 0) twice, (2, 0) twice
]
GIVEN = {"host list": lambda v: v, "tensor": em.constant}


@pytest.mark.parametrize("given", list(GIVEN))
@pytest.mark.parametrize(("call", "pattern"), REPEATS)
def test_repeated_targets_are_refused_on_every_backend(call, pattern, given, device):
    with em.device(device):
        x = em.constant(X)
        with pytest.raises(em.InvalidArgumentError, match=pattern):
            call(x, GIVEN[given])


@pytest.mark.parametrize("given", list(GIVEN))
def test_distinct_targets_update_as_numpy(given, device):
    t = GIVEN[given]
    with em.device(device):
        x = em.constant(X)
        got = em.index_update(x, (t([[1], [2]]), t([0, 2])), em.constant([[5.0, 6.0],
                                                                            [7.0, 8.0]]))
        want = X.copy()
        want[np.array([[1], [2]]), np.array([0, 2])] = [[5.0, 6.0], [7.0, 8.0]]
        assert_array_equal(got.numpy(), want)
        got = em.tensor_scatter_nd_update(x, t([[3], [0]]), em.zeros([2, 3]))
        want = X.copy()
        want[[3, 0]] = 0
        assert_array_equal(got.numpy(), want)
        # adding ops accumulate repeats, as before
        got = em.tensor_scatter_nd_add(x, t([[1], [1]]), em.ones([2, 3]))
        want = X.copy()
        want[1] += 2
        assert_array_equal(got.numpy(), want)


def test_host_given_distinct_indices_read_nothing_from_the_gpu():
    with simulated_gpus(1, strict=True) as (gpu,), em.device("/gpu:0"):
        x, counters = em.constant(X), gpu.backend.counters
        counters.reset()
        em.tensor_scatter_nd_update(x, [[1], [3]], em.ones([2, 3]))
        assert counters.to_host == 0  # bounds and repeats both checked before the upload
        em.tensor_scatter_nd_update(x, em.constant([[1], [3]]), em.ones([2, 3]))
        assert counters.to_host >= 1  # device indices: the device is asked

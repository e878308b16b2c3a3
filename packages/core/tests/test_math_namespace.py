"""``em.math``: TensorFlow's ``tf.math`` names. The functions written there are in the op
table (``testing/_table_math_tf.py``: values against numpy, gradients against finite
differences and PyTorch); this file checks the rest: names, edge values and errors."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em


def test_tensorflow_names_are_embers_functions():
    assert em.math.is_nan is em.isnan and em.math.is_finite is em.isfinite
    assert em.math.reduce_sum is em.reduce_sum and em.math.rint is em.round
    assert em.math.softmax is em.nn_ops.softmax
    for name in em.math.__all__:
        assert callable(getattr(em.math, name)), name


def test_empty_segments_take_tensorflows_values(device):
    with em.device(device):
        data = em.constant([[1.0, -2.0], [3.0, 4.0]])
        ids = em.constant([0, 0])
        low, high = np.finfo(np.float32).min, np.finfo(np.float32).max
        np.testing.assert_array_equal(em.math.unsorted_segment_max(data, ids, 2).numpy(),
                                      [[3.0, 4.0], [low, low]])
        np.testing.assert_array_equal(em.math.unsorted_segment_min(data, ids, 2).numpy(),
                                      [[1.0, -2.0], [high, high]])
        for fn in (em.math.unsorted_segment_sum, em.math.unsorted_segment_mean,
                   em.math.unsorted_segment_sqrt_n):
            np.testing.assert_array_equal(fn(data, ids, 3).numpy()[1:], 0.0)
        ints = em.math.unsorted_segment_max(em.constant([5, 7], em.int32), [1, 1], 2)
        assert ints.numpy().tolist() == [np.iinfo(np.int32).min, 7]
        # the sorted forms give 0 for an id no row has (TensorFlow's)
        got = em.math.segment_max(em.constant([1.0, 2.0, 5.0]), em.constant([0, 0, 2]))
        assert got.numpy().tolist() == [2.0, 0.0, 5.0]


def test_segment_arguments_are_checked_by_name():
    data = em.constant([1.0, 2.0, 3.0])
    with pytest.raises(em.InvalidArgumentError, match=r"unsorted_segment_sum: segment id 5 "
                                                      r"is out of range \[0, 3\)"):
        em.math.unsorted_segment_sum(data, [0, 5, 1], 3)
    with pytest.raises(em.InvalidArgumentError, match=r"prefix of data's shape \(3,\)"):
        em.math.unsorted_segment_sum(data, [[0, 1, 2]], 3)
    with pytest.raises(em.InvalidArgumentError, match="segment_ids must be integers"):
        em.math.unsorted_segment_mean(data, [0.0, 1.0, 1.0], 2)
    with pytest.raises(em.InvalidArgumentError, match="num_segments must be an integer"):
        em.math.unsorted_segment_max(data, [0, 1, 1], -1)
    with pytest.raises(em.InvalidArgumentError, match="segment_sum: segment_ids must be "
                                                      "sorted"):
        em.math.segment_sum(data, em.constant([1, 0, 1]))
    # num_segments as a tensor (tf.shape(x)[0]), and negative ids dropping their rows
    got = em.math.unsorted_segment_sum(data, [0, -1, 0], em.constant(2))
    assert got.numpy().tolist() == [4.0, 0.0]


def test_bincount_as_tensorflow():
    a = em.constant([1, 1, 4, 2])
    assert em.math.bincount(a).numpy().tolist() == [0, 2, 1, 0, 1]
    assert em.math.bincount(a).dtype == em.int32
    assert em.math.bincount(a, maxlength=3).numpy().tolist() == [0, 2, 1]
    assert em.math.bincount(a, minlength=7).numpy().tolist() == [0, 2, 1, 0, 1, 0, 0]
    w = em.math.bincount(a, weights=em.constant([0.5, 0.25, 2.0, 1.0]))
    assert w.dtype == em.float32 and w.numpy().tolist() == [0.0, 0.75, 1.0, 0.0, 2.0]
    assert em.math.bincount(a, binary_output=True).numpy().tolist() == [0, 1, 1, 0, 1]
    with pytest.raises(em.InvalidArgumentError, match="bincount: arr must be non-negative"):
        em.math.bincount(em.constant([1, -1]))
    with pytest.raises(em.InvalidArgumentError, match="bincount: axis=-1"):
        em.math.bincount(em.constant([[1, 2]]), axis=-1)


def test_small_functions_against_numpy(device):
    with em.device(device):
        p = em.constant([[0.1, 0.9, 0.0], [0.2, 0.3, 0.5], [0.4, 0.4, 0.2]])
        got = em.math.in_top_k(em.constant([1, 0, 1]), p, 1).numpy().tolist()
        assert got == [True, False, True]  # a tie with the k-th counts as in
        perm = np.random.default_rng(0).permutation(9)
        inv = em.math.invert_permutation(em.constant(perm)).numpy()
        np.testing.assert_array_equal(inv[perm], np.arange(9))
        assert bool(em.math.is_non_decreasing(em.constant([1, 1, 2])).numpy())
        assert not bool(em.math.is_strictly_increasing(em.constant([1, 1, 2])).numpy())
        x = em.constant([0.5, -2.0])
        np.testing.assert_allclose(em.math.polyval([2.0, em.constant(-1.0), 3.0], x).numpy(),
                                   np.polyval([2.0, -1.0, 3.0], [0.5, -2.0]), rtol=1e-6)
        assert float(em.math.zero_fraction(em.constant([0.0, 1.0, 0.0, 2.0]))) == 0.5
        assert em.math.scalar_mul(2, x).numpy().tolist() == [1.0, -4.0]
        with pytest.raises(em.InvalidArgumentError, match="scalar_mul: scalar must be 0-d"):
            em.math.scalar_mul(em.constant([1.0, 2.0]), x)
        # the no-NaN functions: 0 where numpy gives inf or nan
        y = em.constant([0.0, 4.0])
        assert em.math.divide_no_nan(x, y).numpy().tolist() == [0.0, -0.5]
        assert em.math.reciprocal_no_nan(y).numpy().tolist() == [0.0, 0.25]
        inf = em.constant([np.inf, 2.0])
        assert em.math.multiply_no_nan(inf, y).numpy().tolist() == [0.0, 8.0]


def test_confusion_matrix_checks_its_inputs_as_tensorflow_asserts():
    got = em.math.confusion_matrix([0, 1, 1, 2], [0, 2, 1, 2], num_classes=4)
    assert got.dtype == np.int32 and got.shape == (4, 4)
    assert got.numpy()[1].tolist() == [0, 1, 1, 0]
    with pytest.raises(em.InvalidArgumentError, match="below num_classes 2"):
        em.math.confusion_matrix([0, 3], [0, 1], num_classes=2)
    with pytest.raises(em.InvalidArgumentError, match="non-negative"):
        em.math.confusion_matrix([0, -1], [0, 1])
    with pytest.raises(em.InvalidArgumentError, match="one shape"):
        em.math.confusion_matrix([0, 1, 2], [0, 1])
    with pytest.raises(em.InvalidArgumentError, match="integers"):
        em.math.confusion_matrix([0.0, 1.0], [0, 1])

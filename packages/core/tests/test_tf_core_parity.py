"""Op values and dtypes where ember differed silently from TensorFlow 2.21 (a differential
sweep of ember.core against it): each case holds TensorFlow's answer, written down from
``tf_core_parity_reference.py`` beside this file (run with a TensorFlow interpreter; this
test never imports TensorFlow). Every case runs on the CPU and on the strict GPU double."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember.core as em

NAN, INF = math.nan, math.inf
I32_MIN, I32_MAX = -2**31, 2**31 - 1


def _segments(fn):
    return lambda: fn(em.constant([1, 2, 3, 4, 5, 6]), em.constant([0, 0, 2, 3, 3, 3]))


def _unsorted(fn, dtype=np.int32):
    return lambda: fn(em.constant(np.array([1, 2, 3, 4, 5, 6], dtype)),
                      em.constant([3, 0, 3, 0, 1, 3]), 5)


# (id, the ember call, TensorFlow's value, TensorFlow's dtype)
CASES = [
    # 1. an infinite global norm makes every entry NaN (clip_ops.py: "all entries NaN")
    ("clip_by_global_norm_inf",
     lambda: em.clip_by_global_norm([em.constant([INF, 1.0, 2.0])], 1.0)[0][0],
     [NAN, NAN, NAN], "float32"),
    ("clip_by_global_norm_nan",
     lambda: em.clip_by_global_norm([em.constant([NAN, 1.0])], 1.0)[0][0], [NAN, NAN],
     "float32"),
    ("clip_by_global_norm_finite",
     lambda: em.clip_by_global_norm([em.constant([3.0, 4.0])], 1.0)[0][0], [0.6, 0.8],
     "float32"),
    # 2. one_hot's dtype comes from on_value / off_value
    ("one_hot_ints", lambda: em.one_hot([0, 2], 3, on_value=3, off_value=1),
     [[3, 1, 1], [1, 1, 3]], "int32"),
    ("one_hot_off_only", lambda: em.one_hot([0, 2], 3, off_value=2),
     [[1, 2, 2], [2, 2, 1]], "int32"),
    ("one_hot_float_on", lambda: em.one_hot([0, 2], 3, on_value=3.0),
     [[3, 0, 0], [0, 0, 3]], "float32"),
    ("one_hot_bools", lambda: em.one_hot([0, 2], 3, on_value=True, off_value=False),
     [[True, False, False], [False, False, True]], "bool"),
    ("one_hot_int_into_dtype", lambda: em.one_hot([0, 2], 3, on_value=3, dtype=em.float64),
     [[3, 0, 0], [0, 0, 3]], "float64"),
    ("one_hot_int64_tensor", lambda: em.one_hot([0, 2], 3, on_value=em.constant(2, em.int64)),
     [[2, 0, 0], [0, 0, 2]], "int64"),
    ("one_hot_default", lambda: em.one_hot([1], 2), [[0, 1]], "float32"),
    # 3. segment reductions keep an integer dtype (the empty segment: the dtype's bounds)
    ("segment_max_int", _segments(em.math.segment_max), [2, 0, 3, 6], "int32"),
    ("segment_min_int", _segments(em.math.segment_min), [1, 0, 3, 4], "int32"),
    ("segment_mean_int", _segments(em.math.segment_mean), [1, 0, 3, 5], "int32"),
    ("segment_mean_int_negative",
     lambda: em.math.segment_mean(em.constant([-3, 0, 5]), em.constant([0, 0, 1])), [-1, 5],
     "int32"),
    ("segment_sum_int", _segments(em.math.segment_sum), [3, 0, 3, 15], "int32"),
    ("unsorted_segment_max_int", _unsorted(em.math.unsorted_segment_max),
     [4, 5, I32_MIN, 6, I32_MIN], "int32"),
    ("unsorted_segment_min_int", _unsorted(em.math.unsorted_segment_min),
     [2, 5, I32_MAX, 1, I32_MAX], "int32"),
    ("unsorted_segment_max_int64", _unsorted(em.math.unsorted_segment_max, np.int64),
     [4, 5, -2**63, 6, -2**63], "int64"),
    ("unsorted_segment_min_uint8", _unsorted(em.math.unsorted_segment_min, np.uint8),
     [2, 5, 255, 1, 255], "uint8"),
    ("unsorted_segment_mean_int32", _unsorted(em.math.unsorted_segment_mean),
     [3.0, 5.0, 0.0, 10 / 3, 0.0], "float64"),
    ("unsorted_segment_mean_int8", _unsorted(em.math.unsorted_segment_mean, np.int8),
     [3.0, 5.0, 0.0, 10 / 3, 0.0], "float32"),
    ("unsorted_segment_sum_int", _unsorted(em.math.unsorted_segment_sum),
     [6, 5, 0, 10, 0], "int32"),
    ("unsorted_segment_max_float16", _unsorted(em.math.unsorted_segment_max, np.float16),
     [4, 5, -65504, 6, -65504], "float16"),
    # 4. sharded embedding tables are split by "div" (TF2's only strategy)
    ("embedding_lookup_shards",
     lambda: em.nn_ops.embedding_lookup([em.constant(np.arange(10.).reshape(2, 5)),
                                         em.constant(np.arange(10., 20.).reshape(2, 5))],
                                        [1, 2])[:, 0], [5.0, 10.0], "float64"),
    # 5. multiply_no_nan is 0 only where y is 0
    ("multiply_no_nan",
     lambda: em.math.multiply_no_nan(em.constant([-1.0, INF, 2.0, NAN]),
                                     em.constant([INF, 0.0, NAN, 0.0])),
     [-INF, 0.0, NAN, 0.0], "float32"),
    # 6. argsort is stable (sort_ops.py: "always stable"), in either direction
    ("argsort_ties", lambda: em.argsort(em.constant([3.0, 1, 2, 1, 3, 2, 1, 0, 3])),
     [7, 1, 3, 6, 2, 5, 0, 4, 8], "int32"),
    ("argsort_ties_descending",
     lambda: em.argsort(em.constant([3.0, 1, 2, 1, 3, 2, 1, 0, 3]), direction="DESCENDING"),
     [0, 4, 8, 2, 5, 1, 3, 6, 7], "int32"),
    ("argsort_ties_stable_false",
     lambda: em.argsort(em.constant([1, 1, 1, 1, 0, 0, 0, 0] * 4), stable=False)[:8],
     [4, 5, 6, 7, 12, 13, 14, 15], "int32"),
    # 8. clip_by_value with min > max gives min
    ("clip_by_value_min_above_max", lambda: em.clip_by_value(em.constant([0.0, 5.0]), 2.0, -1.0),
     [2.0, 2.0], "float32"),
    ("clip_by_value_ordinary", lambda: em.clip_by_value(em.constant([-3.0, 0.5, 5.0]), -1.0, 2.0),
     [-1.0, 0.5, 2.0], "float32"),
    # 9. reduce_euclidean_norm keeps an integer dtype (the root truncated)
    ("euclidean_norm_int32",
     lambda: em.math.reduce_euclidean_norm(em.constant([[1, 2, 2], [4, 5, 6]])), 9, "int32"),
    ("euclidean_norm_int32_axis",
     lambda: em.math.reduce_euclidean_norm(em.constant([[1, 2, 2], [4, 5, 6]]), axis=1),
     [3, 8], "int32"),
    ("euclidean_norm_uint8",
     lambda: em.math.reduce_euclidean_norm(em.constant([3, 4], em.uint8)), 5, "uint8"),
    ("euclidean_norm_float16",
     lambda: em.math.reduce_euclidean_norm(em.constant([3.0, 4.0], em.float16)), 5.0, "float16"),
    # 10. float floordiv is floor(x / y)
    ("floordiv_float_inf",
     lambda: em.math.floordiv(em.constant([-1.0, -INF, 5.0, 7.0, -1.0]),
                              em.constant([INF, -7.3, INF, 2.0, 1e30])),
     [-0.0, INF, 0.0, 3.0, -1.0], "float32"),
    # 13. convert_image_dtype honours saturate=False (TF's CPU conversion: wraps)
    ("convert_image_dtype_no_saturate",
     lambda: em.image.convert_image_dtype(
         em.constant([1.5, -0.5, 2.0, 0.5, 1.0, -3.0, NAN, 1e12, 20.0]), em.uint8),
     [127, 129, 255, 127, 255, 2, 0, 0, 246], "uint8"),
    ("convert_image_dtype_saturate",
     lambda: em.image.convert_image_dtype(
         em.constant([1.5, -0.5, 2.0, 0.5, 1.0, -3.0, NAN, 1e12, 20.0]), em.uint8,
         saturate=True),
     [255, 0, 255, 127, 255, 0, 0, 255, 255], "uint8"),
    ("convert_image_dtype_int8_no_saturate",
     lambda: em.image.convert_image_dtype(em.constant([1.5, -0.5, 1.0, -3.0]), em.int8),
     [-65, -63, 127, -126], "int8"),
    ("convert_image_dtype_int32_no_saturate",
     lambda: em.image.convert_image_dtype(em.constant([1.5, -0.5, 0.5, 1.0]), em.int32),
     [I32_MIN, -1073741824, 1073741824, I32_MIN], "int32"),
    ("convert_image_dtype_int32_saturate",
     lambda: em.image.convert_image_dtype(em.constant([1.5, -0.5, 0.5, 1.0]), em.int32,
                                          saturate=True),
     [2147483520, -1073741824, 1073741824, 2147483520], "int32"),
    ("convert_image_dtype_int_to_int_saturate",
     lambda: em.image.convert_image_dtype(em.constant([-5, 127], em.int8), em.uint8,
                                          saturate=True), [0, 254], "uint8"),
    ("convert_image_dtype_int_to_int_no_saturate",
     lambda: em.image.convert_image_dtype(em.constant([-5, 127], em.int8), em.uint8),
     [246, 254], "uint8"),
    ("convert_image_dtype_narrowing_saturate",
     lambda: em.image.convert_image_dtype(em.constant([-5, I32_MAX], em.int32), em.uint8,
                                          saturate=True), [0, 255], "uint8"),
    # 14. the extremes of an empty axis: TensorFlow's identities
    ("reduce_max_empty", lambda: em.reduce_max(em.zeros([0, 3]), axis=0), [-INF] * 3,
     "float32"),
    ("reduce_max_empty_all", lambda: em.reduce_max(em.zeros([0])), -INF, "float32"),
    ("reduce_min_empty", lambda: em.reduce_min(em.zeros([2, 0]), axis=1), [INF, INF],
     "float32"),
    ("reduce_max_empty_keepdims",
     lambda: em.reduce_max(em.zeros([2, 0]), axis=1, keepdims=True), [[-INF], [-INF]],
     "float32"),
    ("reduce_max_empty_int", lambda: em.reduce_max(em.zeros([0], em.int32)), I32_MIN, "int32"),
    ("reduce_min_empty_int", lambda: em.reduce_min(em.zeros([0], em.int32)), I32_MAX, "int32"),
    ("reduce_max_empty_uint8", lambda: em.reduce_max(em.zeros([0], em.uint8)), 0, "uint8"),
    ("reduce_max_empty_float16", lambda: em.reduce_max(em.zeros([0], em.float16)), -INF,
     "float16"),
    ("reduce_max_nonempty_of_empty", lambda: em.reduce_max(em.zeros([0, 3]), axis=1),
     np.zeros([0]), "float32"),
    ("reduce_logsumexp_empty", lambda: em.reduce_logsumexp(em.zeros([0])), -INF, "float32"),
    ("reduce_logsumexp_empty_axis", lambda: em.reduce_logsumexp(em.zeros([2, 0]), axis=1),
     [-INF, -INF], "float32"),
    ("reduce_logsumexp_empty_keepdims",
     lambda: em.reduce_logsumexp(em.zeros([2, 0]), axis=1, keepdims=True), [[-INF], [-INF]],
     "float32"),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("call,want,dtype", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_values_and_dtypes_are_tensorflows(device, call, want, dtype):
    with em.device(device):
        got = call()
    assert got.dtype == np.dtype(dtype)
    want = np.asarray(want, dtype=np.float64 if dtype != "bool" else bool)
    if dtype.startswith("float"):  # TensorFlow's float32 numbers, written as float64
        rtol = {"float16": 1e-3, "float32": 1e-6}.get(dtype, 1e-12)
        np.testing.assert_allclose(got.numpy().astype(want.dtype), want, rtol=rtol)
    else:
        np.testing.assert_array_equal(got.numpy().astype(want.dtype), want)
    if dtype.startswith("float"):  # the sign of a zero too (-1. // inf is -0.0)
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got.numpy())[zero], np.signbit(want)[zero])


# (id, the ember call, the error's type, a pattern of its message); TensorFlow raises too,
# but for the uneven shards (which it reads by its "div" formula, not as they are split)
REFUSED = [
    # 7. integer division by zero
    ("floordiv_int_by_zero", lambda: em.math.floordiv(em.constant([7, -7]), em.constant([0, 2])),
     em.InvalidArgumentError, r"floordiv: Integer division by zero"),
    ("floormod_int_by_zero", lambda: em.math.floormod(em.constant([7, -7]), em.constant([0, 0])),
     em.InvalidArgumentError, r"floormod: Integer division by zero"),
    ("floordiv_uint8_by_zero",
     lambda: em.constant([7], em.uint8) // em.constant([0], em.uint8),
     em.InvalidArgumentError, r"floordiv: Integer division by zero"),
    # 11. cumsum of bool
    ("cumsum_bool", lambda: em.math.cumsum(em.constant([True, False, True])), em.DTypeError,
     r"cumsum: x must be a number tensor, got dtype bool"),
    # 12. a constant the tensor's dtype cannot hold
    ("pad_int_by_fraction",
     lambda: em.pad(em.constant([1, 2]), [[1, 1]], constant_values=1.5), em.DTypeError,
     r"pad: constant_values 1.5 cannot pad a int32 tensor"),
    ("pad_bool_by_two", lambda: em.pad(em.constant([True]), [[1, 1]], constant_values=2),
     em.DTypeError, r"pad: constant_values 2 cannot pad a bool tensor"),
    # 2. on/off values of different dtypes, or not of dtype
    ("one_hot_mixed_values", lambda: em.one_hot([0], 2, on_value=3, off_value=1.5),
     em.DTypeError, r"one_hot: on_value's dtype int32 differs from off_value's float32"),
    ("one_hot_value_not_of_dtype", lambda: em.one_hot([0], 2, on_value=1.5, dtype=em.int32),
     em.DTypeError, r"one_hot: on_value's dtype float32 does not match dtype=int32"),
    # 3. a root of integers
    ("unsorted_segment_sqrt_n_int",
     lambda: em.math.unsorted_segment_sqrt_n(em.constant([1, 2]), [0, 0], 1), em.DTypeError,
     r"unsorted_segment_sqrt_n: data must be floating or complex, got dtype int32"),
    # 4. TensorFlow 1's partition strategy, and shards not split by "div"
    ("embedding_lookup_mod",
     lambda: em.nn_ops.embedding_lookup(em.ones([4, 2]), [1], partition_strategy="mod"),
     em.InvalidArgumentError, r"partition_strategy='mod' is TensorFlow 1's"),
    ("embedding_lookup_uneven_shards",
     lambda: em.nn_ops.embedding_lookup([em.ones([1, 2]), em.ones([3, 2])], [1]),
     em.InvalidArgumentError, r"shards of sizes \[1, 3\] are not TensorFlow's 'div' split "
                              r"of 4 ids over 2 shards \(\[2, 2\]\)"),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("call,error,match", [c[1:] for c in REFUSED],
                         ids=[c[0] for c in REFUSED])
def test_tensorflows_refusals_are_refused_by_name(device, call, error, match):
    with em.device(device), pytest.raises(error, match=match):
        call().numpy()  # on a GPU, a division by zero raises at the next read


def test_integer_division_by_zero_on_a_gpu_makes_no_sync_until_a_read(strict_gpu_default):
    c = strict_gpu_default.backend.counters
    x, ok, zero = em.constant([7, -7]), em.constant([2, 3]), em.constant([0, 3])
    float(em.reduce_sum(em.floordiv(x, ok)))  # the device's error flag exists from here
    c.reset()
    q = em.floordiv(x, zero)
    r = em.floormod(x, zero)
    assert (c.syncs, c.to_host, c.from_host, c.async_to_host) == (0, 0, 0, 0)
    with pytest.raises(em.InvalidArgumentError,
                       match=r"floordiv: Integer division by zero: the divisor y has zeros "
                             r"\(1 zero; the first of 2 failed checks on /gpu:0"):
        q.numpy()
    assert r.numpy().tolist()[1] == -7 % 3  # reported once: the flag is clear again
    assert em.floordiv(x, ok).numpy().tolist() == [3, -3]


def test_a_zero_divisor_names_its_count_dtype_and_shape_on_the_cpu():
    with em.device("/cpu:0"), pytest.raises(
            em.InvalidArgumentError,
            match=r"floordiv: Integer division by zero: the divisor y has zeros \(2 of 3, "
                  r"dtype int64, shape \(3,\)\)"):
        em.floordiv(em.constant([1, 2, 3], em.int64), em.constant([0, 1, 0], em.int64))


def test_argsort_keeps_validating_stable():
    with pytest.raises(em.InvalidArgumentError, match="argsort: stable must be a bool"):
        em.argsort(em.constant([1.0]), stable="yes")

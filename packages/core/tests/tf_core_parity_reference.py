"""TensorFlow's answers for ``test_tf_core_parity.py``: run with an interpreter that has
TensorFlow 2.21 (never in ember's process) and compare its lines with the test's CASES and
REFUSED tables, which hold these values written down::

    python packages/core/tests/tf_core_parity_reference.py
"""

from __future__ import annotations

import math

import numpy as np

try:  # run with TensorFlow's own interpreter; the tests never import this script
    import tensorflow as tf  # type: ignore[import-not-found]
except ImportError:
    tf = None

NAN, INF = math.nan, math.inf
t = tf.constant


def _seg(fn):
    return lambda: fn(t([1, 2, 3, 4, 5, 6]), t([0, 0, 2, 3, 3, 3]))


def _uns(fn, dtype=np.int32):
    return lambda: fn(t(np.array([1, 2, 3, 4, 5, 6], dtype)), t([3, 0, 3, 0, 1, 3]), 5)


def _img(x, dtype, saturate=False):
    return lambda: tf.image.convert_image_dtype(t(x), dtype, saturate=saturate)


X9 = [1.5, -0.5, 2.0, 0.5, 1.0, -3.0, NAN, 1e12, 20.0]
CASES = {
    "clip_by_global_norm_inf": lambda: tf.clip_by_global_norm([t([INF, 1.0, 2.0])], 1.0)[0][0],
    "clip_by_global_norm_nan": lambda: tf.clip_by_global_norm([t([NAN, 1.0])], 1.0)[0][0],
    "clip_by_global_norm_finite": lambda: tf.clip_by_global_norm([t([3.0, 4.0])], 1.0)[0][0],
    "one_hot_ints": lambda: tf.one_hot([0, 2], 3, on_value=3, off_value=1),
    "one_hot_off_only": lambda: tf.one_hot([0, 2], 3, off_value=2),
    "one_hot_float_on": lambda: tf.one_hot([0, 2], 3, on_value=3.0),
    "one_hot_bools": lambda: tf.one_hot([0, 2], 3, on_value=True, off_value=False),
    "one_hot_int_into_dtype": lambda: tf.one_hot([0, 2], 3, on_value=3, dtype=tf.float64),
    "one_hot_int64_tensor": lambda: tf.one_hot([0, 2], 3, on_value=t(2, tf.int64)),
    "one_hot_default": lambda: tf.one_hot([1], 2),
    "segment_max_int": _seg(tf.math.segment_max),
    "segment_min_int": _seg(tf.math.segment_min),
    "segment_mean_int": _seg(tf.math.segment_mean),
    "segment_mean_int_negative": lambda: tf.math.segment_mean(t([-3, 0, 5]), t([0, 0, 1])),
    "segment_sum_int": _seg(tf.math.segment_sum),
    "unsorted_segment_max_int": _uns(tf.math.unsorted_segment_max),
    "unsorted_segment_min_int": _uns(tf.math.unsorted_segment_min),
    "unsorted_segment_max_int64": _uns(tf.math.unsorted_segment_max, np.int64),
    "unsorted_segment_min_uint8": _uns(tf.math.unsorted_segment_min, np.uint8),
    "unsorted_segment_mean_int32": _uns(tf.math.unsorted_segment_mean),
    "unsorted_segment_mean_int8": _uns(tf.math.unsorted_segment_mean, np.int8),
    "unsorted_segment_sum_int": _uns(tf.math.unsorted_segment_sum),
    "unsorted_segment_max_float16": _uns(tf.math.unsorted_segment_max, np.float16),
    "embedding_lookup_shards": lambda: tf.nn.embedding_lookup(
        [t(np.arange(10.).reshape(2, 5)), t(np.arange(10., 20.).reshape(2, 5))], [1, 2])[:, 0],
    "multiply_no_nan": lambda: tf.math.multiply_no_nan(t([-1.0, INF, 2.0, NAN]),
                                                       t([INF, 0.0, NAN, 0.0])),
    "argsort_ties": lambda: tf.argsort(t([3.0, 1, 2, 1, 3, 2, 1, 0, 3])),
    "argsort_ties_descending": lambda: tf.argsort(t([3.0, 1, 2, 1, 3, 2, 1, 0, 3]),
                                                  direction="DESCENDING"),
    "argsort_ties_stable_false": lambda: tf.argsort(t([1, 1, 1, 1, 0, 0, 0, 0] * 4),
                                                    stable=False)[:8],
    "clip_by_value_min_above_max": lambda: tf.clip_by_value(t([0.0, 5.0]), 2.0, -1.0),
    "clip_by_value_ordinary": lambda: tf.clip_by_value(t([-3.0, 0.5, 5.0]), -1.0, 2.0),
    "euclidean_norm_int32": lambda: tf.math.reduce_euclidean_norm(t([[1, 2, 2], [4, 5, 6]])),
    "euclidean_norm_int32_axis": lambda: tf.math.reduce_euclidean_norm(
        t([[1, 2, 2], [4, 5, 6]]), axis=1),
    "euclidean_norm_uint8": lambda: tf.math.reduce_euclidean_norm(t([3, 4], tf.uint8)),
    "euclidean_norm_float16": lambda: tf.math.reduce_euclidean_norm(t([3.0, 4.0], tf.float16)),
    "floordiv_float_inf": lambda: tf.math.floordiv(t([-1.0, -INF, 5.0, 7.0, -1.0]),
                                                   t([INF, -7.3, INF, 2.0, 1e30])),
    "convert_image_dtype_no_saturate": _img(X9, tf.uint8),
    "convert_image_dtype_saturate": _img(X9, tf.uint8, True),
    "convert_image_dtype_int8_no_saturate": _img([1.5, -0.5, 1.0, -3.0], tf.int8),
    "convert_image_dtype_int32_no_saturate": _img([1.5, -0.5, 0.5, 1.0], tf.int32),
    "convert_image_dtype_int32_saturate": _img([1.5, -0.5, 0.5, 1.0], tf.int32, True),
    "convert_image_dtype_int_to_int_saturate": lambda: tf.image.convert_image_dtype(
        t([-5, 127], tf.int8), tf.uint8, saturate=True),
    "convert_image_dtype_int_to_int_no_saturate": lambda: tf.image.convert_image_dtype(
        t([-5, 127], tf.int8), tf.uint8),
    "convert_image_dtype_narrowing_saturate": lambda: tf.image.convert_image_dtype(
        t([-5, 2**31 - 1], tf.int32), tf.uint8, saturate=True),
    "reduce_max_empty": lambda: tf.reduce_max(tf.zeros([0, 3]), axis=0),
    "reduce_max_empty_all": lambda: tf.reduce_max(tf.zeros([0])),
    "reduce_min_empty": lambda: tf.reduce_min(tf.zeros([2, 0]), axis=1),
    "reduce_max_empty_keepdims": lambda: tf.reduce_max(tf.zeros([2, 0]), axis=1, keepdims=True),
    "reduce_max_empty_int": lambda: tf.reduce_max(tf.zeros([0], tf.int32)),
    "reduce_min_empty_int": lambda: tf.reduce_min(tf.zeros([0], tf.int32)),
    "reduce_max_empty_uint8": lambda: tf.reduce_max(tf.zeros([0], tf.uint8)),
    "reduce_max_empty_float16": lambda: tf.reduce_max(tf.zeros([0], tf.float16)),
    "reduce_max_nonempty_of_empty": lambda: tf.reduce_max(tf.zeros([0, 3]), axis=1),
    "reduce_logsumexp_empty": lambda: tf.reduce_logsumexp(tf.zeros([0])),
    "reduce_logsumexp_empty_axis": lambda: tf.reduce_logsumexp(tf.zeros([2, 0]), axis=1),
    "reduce_logsumexp_empty_keepdims": lambda: tf.reduce_logsumexp(tf.zeros([2, 0]), axis=1,
                                                                   keepdims=True),
}
REFUSED = {
    "floordiv_int_by_zero": lambda: tf.math.floordiv(t([7, -7]), t([0, 2])),
    "floormod_int_by_zero": lambda: tf.math.floormod(t([7, -7]), t([0, 0])),
    "floordiv_uint8_by_zero": lambda: t([7], tf.uint8) // t([0], tf.uint8),
    "cumsum_bool": lambda: tf.math.cumsum(t([True, False, True])),
    "pad_int_by_fraction": lambda: tf.pad(t([1, 2]), [[1, 1]], constant_values=1.5),
    "pad_bool_by_two": lambda: tf.pad(t([True]), [[1, 1]], constant_values=2),
    "one_hot_mixed_values": lambda: tf.one_hot([0], 2, on_value=3, off_value=1.5),
    "one_hot_value_not_of_dtype": lambda: tf.one_hot([0], 2, on_value=1.5, dtype=tf.int32),
    "unsorted_segment_sqrt_n_int": lambda: tf.math.unsorted_segment_sqrt_n(t([1, 2]), [0, 0], 1),
    "embedding_lookup_mod": lambda: tf.nn.embedding_lookup(  # TF2 has no such argument
        tf.ones([4, 2]), [1], partition_strategy="mod"),
}

if __name__ == "__main__":
    for key, fn in CASES.items():
        got = fn()
        print(key, got.dtype.name, got.numpy().tolist())
    for key, fn in REFUSED.items():
        try:
            fn()
            print(key, "NOT REFUSED")
        except Exception as e:  # any refusal
            print(key, "refused:", type(e).__name__, str(e).splitlines()[0][:100])

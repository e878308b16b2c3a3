"""Histogram bucketing: TensorBoard's own, on CPU with numpy and on GPU with cupy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ember.summary import histogram_buckets
from ember.summary._histogram import _buckets, _on_gpu

finite = st.floats(-1e6, 1e6, allow_nan=False, width=64)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=20),
                  elements=finite),
       st.integers(0, 40))
def test_matches_tensorboards_histogram_pb(data, bucket_count):
    summary_v2 = pytest.importorskip("tensorboard.plugins.histogram.summary_v2")
    if data.size:  # TensorBoard's own bucketing divides by zero on a subnormal range
        assume((data.max() - data.min()) / max(bucket_count, 1) > 0 or data.max() == data.min())
    from tensorboard.util import tensor_util

    expected = tensor_util.make_ndarray(
        summary_v2.histogram_pb("h", data, buckets=bucket_count).value[0].tensor)
    got = histogram_buckets(data, bucket_count)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def test_default_is_30_buckets_and_counts_everything():
    data = np.random.default_rng(0).normal(size=1000)
    out = histogram_buckets(data)
    assert out.shape == (30, 3)
    assert out[:, 2].sum() == 1000
    np.testing.assert_allclose(out[1:, 0], out[:-1, 1])


def test_non_finite_values_are_kept_where_they_can_be():
    out = histogram_buckets([1.0, 2.0, 3.0, -np.inf, np.inf, np.inf, np.nan], 2)
    assert out.tolist() == [[1.0, 2.0, 2.0], [2.0, 3.0, 4.0]]
    only_inf = histogram_buckets([np.inf, -np.inf], 3)
    assert only_inf[:, 2].tolist() == [0.0, 0.0, 2.0]
    assert histogram_buckets([np.nan], 3).tolist() == [[0.0, 0.0, 0.0]] * 3


@pytest.mark.parametrize("data, counts", [([5e-324, 0.0, 0.0], [2.0, 1.0]),
                                          ([-1.7e308, 1.7e308, 0.0], [1.0, 2.0])])
def test_ranges_too_small_or_too_large_for_the_arithmetic(data, counts):
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        out = histogram_buckets(np.array(data), 2)
    assert out[:, 2].tolist() == counts
    assert out[0, 0] == min(data) and out[-1, 1] == max(data)


def test_a_constant_puts_everything_in_the_last_bucket():
    out = histogram_buckets(np.full(7, 2.5), 4)
    assert out.tolist() == [[2.5, 2.5, 0.0]] * 3 + [[2.5, 2.5, 7.0]]


def test_integer_and_bool_data():
    assert histogram_buckets(np.arange(10), 5)[:, 2].tolist() == [2.0] * 5
    assert histogram_buckets(np.array([True, False, True]), 2)[:, 2].tolist() == [1.0, 2.0]


class _GpuLooking:
    device = "/gpu:0"


class _CpuLooking:
    device = "/cpu:0"


def test_gpu_detection_is_duck_typed():
    assert _on_gpu(_GpuLooking())
    assert not _on_gpu(_CpuLooking())
    assert not _on_gpu(np.zeros(3))
    assert not _on_gpu([1.0])


def test_gpu_looking_data_without_cupy_falls_back_to_the_host(monkeypatch):
    class Tensor(_GpuLooking):
        def __array__(self, dtype=None, copy=None):
            return np.arange(4.0)

    import builtins

    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy":
            raise ImportError("no cupy here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    assert histogram_buckets(Tensor(), 2)[:, 2].tolist() == [2.0, 2.0]


def test_the_same_code_runs_on_cupy():
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        pytest.skip(f"cupy cannot reach a GPU: {e}")
    data = np.random.default_rng(0).normal(size=(100, 100))
    on_gpu = cupy.asarray(data)
    np.testing.assert_allclose(histogram_buckets(on_gpu, 30), _buckets(np, data, 30))

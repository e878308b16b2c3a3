"""The strict double's ``cupy.ReductionKernel``: map, reduce along ``axis``, post map, in
one launch; a scalar argument is in scope after the reduction and an array input is not
(nvrtc's error, as cupy's generated kernel gives); what it does not model raises. ember's
one-kernel mean and cross-entropy row sums run on it."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em


def _mean_kernel(xp):
    return xp.ReductionKernel("T x, float32 n", "T y", "x", "a + b", "y = a / n", "0", "mean")


@pytest.mark.parametrize(("axis", "keepdims"), [(None, False), (1, False), (0, True),
                                                ((0, 2), False), (-1, True)])
def test_a_reduction_maps_reduces_and_post_maps_in_one_launch(gpu, axis, keepdims):
    xp = gpu.backend.xp
    host = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    n = host.size // np.sum(host, axis=axis, keepdims=keepdims).size
    gpu.backend.counters.reset()
    got = _mean_kernel(xp)(xp.asarray(host), n, axis=axis, keepdims=keepdims)
    assert gpu.backend.counters.launches == 1
    want = host.mean(axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == np.float32
    assert_allclose(got.get(), want, rtol=1e-5, atol=1e-6)


def test_the_map_broadcasts_its_inputs_and_max_min_reduce(gpu):
    xp = gpu.backend.xp
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = x.max(1, keepdims=True)
    sum_exp = xp.ReductionKernel("T x, T m", "T s", "exp(x - m)", "a + b", "s = a", "0",
                                 "sum_exp")
    assert_allclose(sum_exp(xp.asarray(x), xp.asarray(m), axis=1).get(),
                    np.exp(x - m).sum(1), rtol=1e-6)
    top = xp.ReductionKernel("T x", "T y", "x * x", "max(a, b)", "y = a", "0", "top")
    assert top(xp.asarray(x - 6), axis=0).get().tolist() == [36, 25, 16, 25]


def test_what_is_out_of_scope_or_not_modelled_is_refused(gpu):
    xp = gpu.backend.xp
    x = xp.asarray(np.ones((2, 3), np.float32))
    reads_x = xp.ReductionKernel("T x", "T y", "x", "a + b", "y = a / x", "0", "reads_x")
    with pytest.raises(Exception, match=r"reads the array input\(s\) \['x'\]"):
        reads_x(x)
    undefined = xp.ReductionKernel("T x", "T y", "x", "a + b", "y = a / n", "0", "undefined")
    with pytest.raises(Exception, match=r"\['n'\] are undefined"):
        undefined(x)
    with pytest.raises(NotImplementedError, match="reduce_expr"):
        xp.ReductionKernel("T x", "T y", "x", "a * b", "y = a", "1", "product")


def test_a_captured_reduction_reads_its_input_at_each_launch(gpu):
    xp, cuda = gpu.backend.xp, gpu.backend.xp.cuda
    x = xp.asarray(np.ones((4, 2), np.float32))
    k = _mean_kernel(xp)
    k(x, 4, axis=0)  # compiled outside the capture
    stream = cuda.Stream(non_blocking=True)
    with cuda.using_allocator(cuda.MemoryPool().malloc), stream:
        stream.begin_capture()
        y = k(x, 4, axis=0)
        graph = stream.end_capture()
    x[...] = xp.asarray(np.full((4, 2), 3, np.float32))
    graph.launch(stream)
    stream.synchronize()
    assert y.get().tolist() == [3, 3]


def test_reduce_mean_is_one_kernel_on_a_gpu(gpu):
    with em.device("/gpu:0"):
        x = em.constant(np.arange(24, dtype=np.float32).reshape(4, 6))
        em.reduce_mean(x, 0)
        gpu.backend.counters.reset()
        got = em.reduce_mean(x, 0)
        assert gpu.backend.counters.launches == 1
        assert_allclose(got.numpy(), np.arange(24, dtype=np.float32).reshape(4, 6).mean(0))


def test_an_empty_reduction_gives_the_identity(gpu):
    xp = gpu.backend.xp
    low = xp.ReductionKernel("T x", "T y", "x", "min(a, b)", "y = a", "INFINITY", "low")
    got = low(xp.asarray(np.zeros((0, 3), np.float32)), axis=0)
    assert got.get().tolist() == [np.inf] * 3

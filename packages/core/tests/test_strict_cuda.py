"""Stream capture on the strict GPU double (``testing/_strict_cuda``): what CUDA and cupy
forbid while a stream captures raises here too, and a graph's launches compute again from
the buffers it was captured with."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from ember.core.testing import simulated_gpus


@pytest.fixture
def be():
    """The backend of one strict simulated GPU."""
    with simulated_gpus(1, strict=True) as (gpu,):
        yield gpu.backend


def _capture(be, fn, *args):
    xp = be.xp
    pool = xp.cuda.MemoryPool()
    stream = xp.cuda.Stream(non_blocking=True)
    with xp.cuda.using_allocator(pool.malloc), stream:
        stream.begin_capture()
        try:
            out = fn(*args)
        finally:
            graph = stream.end_capture()
    return graph, out


def test_a_launch_computes_again_from_the_buffers_contents(be):
    xp = be.xp
    x = xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    w = xp.asarray(np.ones((3, 2), np.int32))
    acc = xp.zeros((2, 2), np.float64)

    def step(x):
        # an integer matmul (cupy's own kernel: a float one calls cuBLAS, which cupy
        # refuses during capture, see test_strict_libraries), a ufunc, a view
        h = xp.tanh(x @ w)[:, ::-1]
        acc[...] += h  # an in-place write into a buffer made before the capture
        return (h * 2.0).astype(np.float64), xp.sum(h, axis=0)

    graph, (a, b) = _capture(be, step, x)
    assert graph.private_pool
    # CUDA runs nothing during capture: what the capture allocated holds garbage
    assert np.isnan(a._a).all() and np.isnan(b._a).all()
    for k in range(3):
        x[...] = xp.asarray(np.full((2, 3), k, np.int32))
        before = acc._a.copy()
        graph.launch()
        # eager on the device: its tanh and sum round as a GPU's, the replay's must too
        hx = xp.tanh(xp.asarray(np.full((2, 3), k, np.int32)) @ w)[:, ::-1]
        h = hx.get()
        assert_array_equal(a._a, (h * 2.0).astype(np.float64))
        assert_array_equal(b._a, xp.sum(hx, axis=0).get())
        assert_array_equal(acc._a, before + h)
    assert graph.launches == 3


def test_views_of_buffers_made_before_a_capture_keep_their_contents(be):
    # CUDA only records a capture's work: a buffer alive before it keeps its values, and a
    # view taken during the capture (an array method: reshape, transpose, ravel) is no
    # allocation of the capture. The double once took a method's result for a fresh buffer
    # (the method's own array was not among the arrays the call read) and filled it, so the
    # constants a graph reads turned NaN: graph.function's 1x1 convolution of an em.zeros.
    xp = be.xp
    const = xp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    x = xp.asarray(np.ones((4, 2), np.float32))

    def step(x):
        views = (const.reshape(4, 3), const.transpose(), const.ravel(), const.T, const[1:])
        return tuple(xp.sum(v) for v in views) + (xp.tanh(const.reshape(-1)[:8]).reshape(4, 2)
                                                  + x,)

    graph, outs = _capture(be, step, x)
    assert_array_equal(const._a, np.arange(12, dtype=np.float32).reshape(3, 4))
    assert all(np.isnan(o._a).all() for o in outs)  # what the capture allocated: garbage
    graph.launch()
    assert [float(o._a) for o in outs[:5]] == [66.0, 66.0, 66.0, 66.0, 60.0]
    eager = xp.tanh(xp.asarray(np.arange(8, dtype=np.float32))).reshape(4, 2) + x
    assert_array_equal(outs[5]._a, eager.get())


def test_what_cuda_forbids_during_a_capture_raises(be):
    xp = be.xp
    x = xp.asarray(np.ones(3, np.float32))
    host = np.ones(3, np.float32)
    for forbidden, what in [(lambda: xp.asarray(host), "H2D transfers"),
                            (lambda: be.from_host(host, 0), "H2D transfers"),
                            (lambda: x.get(), "D2H transfers"),
                            (lambda: float(xp.sum(x)), "D2H transfers"),
                            (lambda: bool(x[0] > 0), "D2H transfers"),
                            (lambda: be.synchronize(), "synchronous API calls")]:
        stream = xp.cuda.Stream(non_blocking=True)
        with stream:
            stream.begin_capture()
            with pytest.raises(RuntimeError, match=f"capturing, so {what} are disallowed"):
                forbidden()
            stream.end_capture()
    assert be.capture is None
    xp.asarray(host)  # allowed again once the capture ended


def test_capture_needs_its_own_stream_and_a_private_pool_is_reported(be):
    xp = be.xp
    with pytest.raises(RuntimeError, match="default .legacy. stream"):
        xp.cuda.Stream.null.begin_capture()
    x = xp.asarray(np.ones(3, np.float32))
    stream = xp.cuda.Stream(non_blocking=True)
    stream.begin_capture()  # the work below is issued on the legacy stream, not on it
    with pytest.raises(RuntimeError, match="legacy default stream"):
        xp.exp(x)
    stream.end_capture()
    with stream:  # captured without using_allocator: the shared pool
        stream.begin_capture()
        xp.exp(x)
        graph = stream.end_capture()
    assert not graph.private_pool
    with pytest.raises(RuntimeError, match="not capturing"):
        stream.end_capture()


def test_another_threads_work_during_a_capture_runs_as_usual_outside_the_graph(be):
    # cupy captures in relaxed mode and its current stream is per thread: a dataset's map
    # worker may upload and compute while the training thread captures its step
    import threading

    xp = be.xp
    x = xp.asarray(np.arange(4, dtype=np.float32))
    seen = {}

    def worker():
        y = xp.asarray(np.full(4, 3.0, np.float32))  # an upload, on the worker's stream
        seen["sum"] = float((y * 2.0).sum())         # a kernel and a read back
        seen["stream"] = be.current_stream is be.null_stream

    def step(x):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        return x + 1.0

    graph, out = _capture(be, step, x)
    assert seen == {"sum": 24.0, "stream": True}
    kernels_before = be.counters.launches
    graph.launch()
    assert_array_equal(out._a, np.arange(4, dtype=np.float32) + 1.0)
    assert be.counters.launches - kernels_before == graph.kernels == 1  # the worker's are not in it
    with pytest.raises(RuntimeError, match="capturing, so H2D transfers are disallowed"):
        _capture(be, lambda: xp.asarray(np.ones(2, np.float32)))  # the capturing thread's

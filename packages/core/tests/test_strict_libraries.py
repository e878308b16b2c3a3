"""The strict double refuses, while a stream captures, the calls that reach cuBLAS, cuSOLVER
or cuRAND in cupy 14, with cupy's own error (``testing/_strict_libraries``): a CUDA-graph
capture that fails on a GPU for that reason fails in CI too."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from ember.core.testing import backend_tolerance, simulated_gpus
from ember.core.testing._strict_libraries import CUBLAS, CURAND, CUSOLVER, library
from ember.core.testing._strict_nvmath import without_nvmath


def _refused(lib):
    return pytest.raises(NotImplementedError,
                         match=f"^calling {lib} API during stream capture is currently "
                               "unsupported$")


@pytest.fixture
def be():
    """The backend of one strict simulated GPU, its ``xp.matmul`` cupy's own (as without
    nvmath-python: ember's products through it are test_nvmath_products')."""
    with simulated_gpus(1, strict=True) as (gpu,), without_nvmath(gpu):
        yield gpu.backend


@contextlib.contextmanager
def capturing(be):
    xp = be.xp
    stream = xp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            yield
        finally:
            stream.end_capture()


def _arr(be, shape, dtype=np.float32, seed=0):
    return be.xp.asarray(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def _spd(be, *batch):
    a = np.random.default_rng(1).standard_normal((*batch, 3, 3))
    return be.xp.asarray(a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3))


def test_a_float_product_is_refused_and_an_integer_one_captures(be):
    xp = be.xp
    a, b = _arr(be, (3, 4)), _arr(be, (4, 2))
    ai, bi = (xp.asarray(np.arange(12, dtype=np.int32).reshape(s)) for s in ((3, 4), (4, 3)))
    for product in (lambda: xp.matmul(a, b), lambda: a @ b, lambda: xp.dot(a, b),
                    lambda: a.dot(b), lambda: np.dot(a, b), lambda: xp.tensordot(a, b, 1),
                    lambda: xp.einsum("ij,jk->ik", a, b),
                    lambda: xp.matmul(a.astype(np.float16), b.astype(np.float16))):
        with capturing(be), _refused(CUBLAS):
            product()
    stream = xp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        out = ai @ bi  # cupy's own integer GEMM kernel
        graph = stream.end_capture()
    graph.launch()
    assert_array_equal(out.get(), np.arange(12).reshape(3, 4) @ np.arange(12).reshape(4, 3))


def test_products_without_a_gemm_capture(be):
    xp = be.xp
    v, m = _arr(be, (4,)), _arr(be, (3, 4))
    hv, hm = v.get(), m.get()
    calls = [  # (device call, numpy's answer)
        (lambda: xp.matmul(v, v), hv @ hv),  # one element: cupy's own reduction kernel
        (lambda: xp.dot(m[:1], v), hm[:1] @ hv),
        (lambda: xp.vdot(v, v), np.vdot(hv, hv)),
        (lambda: xp.outer(v, v), np.outer(hv, hv)),
        (lambda: xp.einsum("ij,ij->ij", m, m), hm * hm),  # element-wise: no contraction
        (lambda: xp.einsum("ij->j", m), hm.sum(0)),
        (lambda: xp.linalg.norm(m), np.linalg.norm(hm)),  # element-wise and a reduction
        (lambda: xp.linalg.norm(m, axis=1), np.linalg.norm(hm, axis=1)),
        (lambda: xp.fft.rfft(v), np.fft.rfft(hv)),  # cuFFT: cupy allows it
    ]
    stream = xp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        outs = [call() for call, _ in calls]  # none raises: no library cupy refuses
        graph = stream.end_capture()
    graph.launch()  # the captured work computes again, and gives numpy's answers
    for out, (_, want) in zip(outs, calls):
        assert_allclose(out.get(), want, rtol=1e-5, atol=1e-6)


def test_linear_algebra_names_the_library_cupy_calls(be):
    xp = be.xp
    a, batch = _spd(be), _spd(be, 2)
    rhs, rhs_batch = _arr(be, (3, 2)).astype(np.float64), _arr(be, (2, 3, 2)).astype(np.float64)
    cases = [
        (lambda: xp.linalg.inv(a), CUSOLVER),  # getrf/getrs
        (lambda: xp.linalg.inv(batch), CUBLAS),  # getrfBatched/getriBatched
        (lambda: xp.linalg.solve(a, rhs), CUSOLVER),
        (lambda: xp.linalg.solve(batch, rhs_batch), CUBLAS),  # batched_gesv
        (lambda: xp.linalg.det(a), CUBLAS),  # getrfBatched for small matrices
        (lambda: xp.linalg.slogdet(batch), CUBLAS),
        (lambda: xp.linalg.cholesky(a), CUSOLVER),
        (lambda: xp.linalg.qr(a), CUSOLVER),
        (lambda: xp.linalg.svd(a), CUSOLVER),
        (lambda: xp.linalg.eigh(a), CUSOLVER),
        (lambda: xp.linalg.norm(a, 2), CUSOLVER),  # the largest singular value
        (lambda: np.linalg.inv(a), CUSOLVER),  # numpy's function on a device array
    ]
    refused = []
    for call, lib in cases:
        with capturing(be), _refused(lib) as info:
            call()
        refused.append(str(info.value).split()[1])
    assert refused == [lib for _, lib in cases]


def test_the_refusal_comes_before_a_factorizations_status_read(be):
    a = _spd(be)
    with be.linalg_errors(), capturing(be), _refused(CUSOLVER):  # not the D2H status read
        be.xp.linalg.inv(a)
    before = be.counters.scalar_reads
    with be.linalg_errors():
        be.xp.linalg.inv(a)
    assert be.counters.scalar_reads == before + 1  # outside a capture: read as before


def test_random_draws_are_refused_where_cupy_calls_curand(be):
    xp = be.xp
    with capturing(be), _refused(CURAND):
        xp.random.normal(size=4)
    with capturing(be), _refused(CURAND):
        xp.random.rand(3)
    with capturing(be), pytest.raises(RuntimeError, match="D2H transfers are disallowed"):
        xp.random.exponential(1.0, size=3)  # checks its parameter on the host first
    with capturing(be):
        xp.random.gamma(2.0, size=3)  # cupy's own kernel


def test_outside_a_capture_everything_runs(be):
    xp = be.xp
    a, b, m = _arr(be, (3, 4)), _arr(be, (4, 2)), _spd(be)
    rtol, atol = backend_tolerance(np.float32, "/gpu:0")  # cuBLAS rounds otherwise
    assert_allclose((a @ b).get(), a.get() @ b.get(), rtol=rtol, atol=atol)
    xp.linalg.inv(m)
    xp.linalg.qr(m)
    xp.random.normal(size=4)
    assert be.capture is None


def test_arrays_from_a_submodule_are_plain_arrays(be):
    """An array that xp.random or xp.linalg made has cupy's methods and operators: ``**`` on
    it is a power, not cupy.random.power."""
    xp = be.xp
    r, q = xp.random.normal(size=(3, 3)), xp.linalg.inv(_spd(be))
    hr, hq = r.get(), q.get()
    stream = xp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        squared, shifted = r ** 2, q + 1.0  # element-wise kernels: no library refuses
        graph = stream.end_capture()
    graph.launch()
    assert_allclose(squared.get(), hr ** 2, rtol=1e-6)
    assert_allclose(shifted.get(), hq + 1.0, rtol=1e-6)
    with capturing(be), _refused(CUBLAS):
        q.dot(q)  # the method form of a float product: cuBLAS


def test_matmul_in_place_rebinds_as_cupy_does(be):
    """cupy.ndarray has no ``__imatmul__``: ``a @= b`` is ``a = a @ b``."""
    a = _arr(be, (2, 2))
    kept, value = a, a.get()
    a @= _arr(be, (2, 2), seed=1)
    assert a is not kept
    assert_array_equal(kept.get(), value)
    with capturing(be), _refused(CUBLAS):
        a @= a


@pytest.mark.parametrize(("qual", "args", "lib"), [
    ("matmul", ((3, 4), (4, 5)), CUBLAS),
    ("matmul", ((4,), (4,)), None),  # one element
    ("matmul", ((1, 4), (4, 1)), None),
    ("matmul", ((2, 1, 4), (2, 4, 1)), CUBLAS),  # batched: no one-element shortcut
    ("matmul", ((0, 4), (4, 5)), None),  # empty
    ("dot", ((3, 4), (4, 5)), CUBLAS),
    ("inner", ((3, 4), (5, 4)), CUBLAS),
    ("vdot", ((3, 4), (3, 4)), None),
    ("tensordot", ((3, 4), (3, 4)), None),  # axes=2: one element
    ("linalg.det", ((256, 256),), CUBLAS),  # batch * 65536 >= n * n
    ("linalg.det", ((257, 257),), CUSOLVER),
    ("linalg.solve", ((2, 257, 257), (2, 257, 1)), CUSOLVER),  # over the batched limit
    ("linalg.inv", ((0, 0),), None),
    ("linalg.norm", ((3, 4),), None),
])
def test_the_rule_table_for_float32(qual, args, lib):
    arrays = tuple(np.ones(s, np.float32) for s in args)
    assert library(qual, arrays, {}) == lib


def test_the_rule_table_by_dtype():
    for dtype, lib in [(np.float16, CUBLAS), (np.float64, CUBLAS), (np.complex64, CUBLAS),
                       (np.int32, None), (np.int64, None), (np.bool_, None)]:
        a, b = np.ones((3, 4), dtype), np.ones((4, 5), dtype)
        assert library("matmul", (a, b), {}) == lib, dtype
        assert library("einsum", ("ij,jk->ik", a, b), {}) == lib, dtype
    ints = np.ones((3, 4), np.int32)
    assert library("matmul", (ints, np.ones((4, 2), np.float32)), {}) == CUBLAS  # float64
    assert library("einsum", ("ij,jk", ints, ints.T), {"dtype": np.float32}) == CUBLAS
    c = np.ones((3, 4), np.float32)
    assert library("asfortranarray", (c,), {}) == CUBLAS  # cuBLAS geam transposes it
    assert library("asfortranarray", (c.T,), {}) is None  # already Fortran-ordered
    assert library("asfortranarray", (c.astype(np.int32),), {}) is None

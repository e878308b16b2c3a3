"""Products run as one direct ``cublasLtMatmul`` call with their nvmath plan
(``_cublaslt_direct``), on the strict double's fake nvmath and its fake
``nvmath.bindings.cublasLt.matmul``: the same bits and kernels as ``Matmul.execute``,
captured as ``execute`` is; a plan that lacks what the direct call reads (another
nvmath-python) runs through ``execute``; and the fake refuses a call whose handles,
pointers or workspace are not its plan's."""

from __future__ import annotations

import types

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from ember.core._nvmath_products import Products
from ember.core.testing import _strict_launches as launches
from ember.core.testing._strict_nvmath import NVMATH


@pytest.fixture
def gpu(strict_gpu_default):  # the double, made the default device
    return strict_gpu_default


rng = np.random.default_rng(11)


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


CASES = {  # name: (a, b) as numpy arrays
    "matrix": (_f32(64, 48), _f32(48, 32)),
    "split_k": (_f32(128, 784), _f32(784, 256)),  # planned with a workspace
    "transposed_a": (_f32(48, 64).T, _f32(48, 32)),
    "vector": (_f32(48), _f32(48, 32)),
    "batch": (_f32(3, 16, 8), _f32(3, 8, 4)),
    "gates": (_f32(5, 1, 6, 8), _f32(4, 8, 3)),
    "float16": (_f32(32, 16).astype(np.float16), _f32(16, 8).astype(np.float16)),
}


def _run(gpu, fn, direct):
    """``fn()``'s result on the host and the products' launches (``_products``), with
    the products' direct calls on or off."""
    products = gpu.backend.products
    products.direct_calls = direct
    try:
        with launches.recording() as rec:
            got = fn()
        rec = _products(rec)
        if isinstance(got, tuple):
            return tuple(gpu.backend.to_host(g) for g in got), rec
        return gpu.backend.to_host(got), rec
    finally:
        products.direct_calls = True


def _products(rec):
    """The recorded launches of products (cuBLASLt's), not of the arrays made for them."""
    return [(q, ns) for q, ns in rec if q in ("cublasLt.matmul", "nvmath.Matmul.execute")]


def _dev(gpu, a):
    xp = gpu.backend.xp
    return xp.asarray(np.ascontiguousarray(a.T)).T if not a.flags.c_contiguous else xp.asarray(a)


@pytest.mark.parametrize("name", CASES)
def test_a_direct_call_gives_executes_bits_and_kernels(gpu, name):
    xp = gpu.backend.xp
    a, b = (_dev(gpu, x) for x in CASES[name])
    direct, rec_direct = _run(gpu, lambda: xp.matmul(a, b), True)
    executed, rec_exec = _run(gpu, lambda: xp.matmul(a, b), False)
    assert_array_equal(direct.view(np.uint8), executed.view(np.uint8))
    assert {q for q, _ in rec_direct} == {"cublasLt.matmul"}
    assert {q for q, _ in rec_exec} == {"nvmath.Matmul.execute"}
    assert [n for _, ns in rec_direct for n in ns] == [n for _, ns in rec_exec for n in ns]
    assert direct.shape == np.matmul(*CASES[name]).shape


def test_operands_in_a_root_of_any_axis_order_are_read_where_they_lie(gpu):
    """``empty_like`` of a transposed array owns one block in the argument's axis order;
    the fake reads a raw address in such a block as the GPU would (it once read a
    reordered copy: an FFT convolution's batched complex product went wrong)."""
    xp = gpu.backend.xp
    t = xp.asarray(rng.standard_normal((2, 20, 3)) + 1j).transpose(1, 2, 0)  # (20, 3, 2)
    a = xp.empty_like(t)
    a[...] = t
    assert not a.flags.c_contiguous and not a.flags.f_contiguous and a.base is None
    b = xp.asarray(rng.standard_normal((20, 2, 4)) + 0j)
    direct, rec = _run(gpu, lambda: xp.matmul(a, b), True)
    assert [q for q, _ in rec] == ["cublasLt.matmul"]
    want = np.matmul(gpu.backend.to_host(a), gpu.backend.to_host(b))
    np.testing.assert_allclose(direct, want, rtol=1e-12)


def test_the_epilogs_products_through_a_direct_call_are_executes(gpu):
    """A dense layer's BIAS product (the bias read at the descriptor's pointer) and its
    weight gradient's BGRADA product (the bias gradient written at it)."""
    products, xp = gpu.backend.products, gpu.backend.xp
    x, w, bias, dz = (xp.asarray(v) for v in (_f32(16, 12), _f32(12, 8), _f32(8), _f32(16, 8)))
    for fn in (lambda: products.linear(x, w, bias), lambda: products.weight_grad(x, dz)):
        direct, rec = _run(gpu, fn, True)
        executed, _ = _run(gpu, fn, False)
        assert [q for q, _ in rec] == ["cublasLt.matmul"]
        for d, e in zip(direct if isinstance(direct, tuple) else (direct,),
                        executed if isinstance(executed, tuple) else (executed,)):
            assert_array_equal(d.view(np.uint8), e.view(np.uint8))
    out, grad = (gpu.backend.to_host(v) for v in products.weight_grad(x, dz))
    np.testing.assert_allclose(grad, gpu.backend.to_host(dz).sum(0), rtol=1e-5, atol=1e-5)


def test_a_direct_call_captured_replays_with_new_inputs(gpu):
    xp = gpu.backend.xp
    a, b = xp.asarray(_f32(64, 48)), xp.asarray(_f32(48, 32))
    out = xp.empty((64, 32), np.float32)
    xp.matmul(a, b, out=out)  # planned outside the capture
    s = xp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        with launches.recording() as rec:
            xp.matmul(a, b, out=out)
        graph = s.end_capture()
    assert [q for q, _ in _products(rec)] == ["cublasLt.matmul"]
    new = _f32(64, 48)
    a[...] = xp.asarray(new)
    graph.launch(s)
    s.synchronize()
    want = gpu.backend.to_host(xp.matmul(a, b))
    assert_array_equal(gpu.backend.to_host(out), want)


def test_an_nvmath_without_the_direct_calls_needs_runs_through_execute(gpu):
    """Another nvmath-python (no ``bindings.cublasLt``, or a Matmul without the
    attributes read): slower, never wrong."""
    xp = gpu.backend.xp
    older = types.SimpleNamespace(linalg=NVMATH.linalg)  # no bindings
    products = Products(xp._xp, older)
    a, b = xp.asarray(_f32(8, 6)), xp.asarray(_f32(6, 4))
    with launches.recording() as rec:
        got = products.matmul(a, b)
    assert [q for q, _ in _products(rec)] == ["nvmath.Matmul.execute"]
    (planned,) = [p for plans in products._plans.values() for _, p in plans]
    assert planned.direct is None
    assert_array_equal(gpu.backend.to_host(got), gpu.backend.to_host(gpu.backend.products.matmul(a, b)))


def _planned_call(gpu):
    """A planned product's direct call and its operands."""
    xp = gpu.backend.xp
    products = gpu.backend.products
    a, b, c = xp.asarray(_f32(128, 784)), xp.asarray(_f32(784, 256)), xp.empty((128, 256), np.float32)
    xp.matmul(a, b, out=c)
    (planned,) = [p for plans in products._plans.values() for _, p in plans
                  if p.mm._meta[0][1] == (128, 784)]
    return planned, a, b, c


def test_the_fake_cublaslt_refuses_what_is_not_its_plans(gpu):
    planned, a, b, c = _planned_call(gpu)
    mm, xp = planned.mm, gpu.backend.xp
    lt = NVMATH.bindings.cublasLt.matmul
    ws = xp.cuda.alloc(mm.workspace.size)
    stream = xp.cuda.get_current_stream().ptr
    good = [mm.handle, mm.mm_desc, int(mm.alpha.ctypes.data), a.data.ptr, mm.a_layout_ptr,
            b.data.ptr, mm.b_layout_ptr, int(mm.beta.ctypes.data), c.data.ptr, mm.c_layout_ptr,
            c.data.ptr, mm.d_layout_ptr, int(mm.cached_best_algorithm_struct.ctypes.data),
            ws.ptr, mm.workspace.size, stream]
    lt(*good)  # the call ember makes
    for i, value, match in (
            (1, 0xDEAD0, "no live matmul descriptor"),
            (2, int(np.ones(1, np.float32).ctypes.data), "another alpha"),
            (4, mm.b_layout_ptr, "another A's layout"),
            (13, 0, "workspace"),
            (14, 0, "workspace"),
            (3, a.data.ptr + 4, "aligned less"),
            (5, a.data.ptr + 4 * 784 * 100, "is not inside a live array's buffer"),
            (10, b.data.ptr, "in-place form")):
        args = list(good)
        args[i] = value
        with pytest.raises((RuntimeError, NotImplementedError), match=match):
            lt(*args)


def test_the_fake_cublaslt_reads_and_writes_the_arrays_at_its_pointers(gpu):
    """The double resolves raw addresses to its arrays: a call with another A (same
    layout) multiplies that A, into the C at its pointer."""
    planned, a, b, c = _planned_call(gpu)
    xp = gpu.backend.xp
    other = xp.asarray(_f32(128, 784))
    products = gpu.backend.products
    with products._lock:
        planned.direct.run(xp, other, b, c)
    want = gpu.backend.to_host(xp.matmul(other, b))
    assert_array_equal(gpu.backend.to_host(c), want)

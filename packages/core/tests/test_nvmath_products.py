"""Float matrix products on a GPU through nvmath-python (``_nvmath_products``), on the strict
double's fake nvmath (``testing/_strict_nvmath``): planned once per layout, laid out as
cupy's, capturable in a CUDA graph where cupy's cuBLAS is refused; and the fake refuses
what nvmath (or CUDA under a capture) refuses."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from ember.core._nvmath_products import MISSING, REASON_ATTR, ProductNotPlanned
from ember.core.testing._strict_nvmath import NVMATH, without_nvmath


@pytest.fixture
def gpu(strict_gpu_default):  # the double, made the default device
    return strict_gpu_default

rng = np.random.default_rng(7)


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)




def _product(xp, a, b, **kw):
    return xp.matmul(xp.asarray(a), xp.asarray(b), **kw)


LAYOUTS = {  # name: (a, b) as numpy arrays (views where the name says so)
    "matrix": (_f32(6, 5), _f32(5, 4)),
    "transposed_a": (_f32(5, 6).T, _f32(5, 4)),
    "transposed_b": (_f32(6, 5), _f32(4, 5).T),
    "vector_matrix": (_f32(5), _f32(5, 4)),
    "matrix_vector": (_f32(6, 5), _f32(5)),
    "batch_equal": (_f32(3, 6, 5), _f32(3, 5, 4)),
    "batch_times_matrix": (_f32(3, 6, 5), _f32(5, 4)),
    "batch_of_one": (_f32(1, 6, 5), _f32(3, 5, 4)),
    "gates": (_f32(7, 1, 6, 5), _f32(4, 5, 3)),  # a recurrent layer's (steps, 1) x (gates,)
    "strided": (_f32(6, 10)[:, ::2], _f32(5, 4)),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_products_run_through_nvmath_laid_out_as_cupys(gpu, name):
    a, b = LAYOUTS[name]
    products, xp = gpu.backend.products, gpu.backend.xp
    got = _product(xp, np.ascontiguousarray(a) if name != "strided" else a, b)
    if name.startswith("transposed"):  # views on the device, not copies
        got = xp.matmul(*(xp.asarray(np.ascontiguousarray(x.T)).T if not x.flags.c_contiguous
                          else xp.asarray(x) for x in (a, b)))
    assert products.executed > 0 and products.fell_back == 0
    want = np.matmul(a, b)
    assert got.shape == want.shape and got.flags.c_contiguous  # cupy's result layout
    assert_allclose(gpu.backend.to_host(got), want, rtol=2e-6, atol=1e-6)


def test_a_layout_is_planned_once_and_its_result_differs_from_cupys_cublas(gpu):
    products, xp = gpu.backend.products, gpu.backend.xp
    a, b = xp.asarray(_f32(64, 48)), xp.asarray(_f32(48, 32))
    first = gpu.backend.to_host(xp.matmul(a, b))
    planned = products.planned
    again = gpu.backend.to_host(xp.matmul(a, b))
    assert products.planned == planned == 1
    assert_array_equal(first, again)
    with without_nvmath(gpu):
        cublas = gpu.backend.to_host(xp.matmul(a, b))
    assert products.fell_back == 1
    # another library rounds other ways: a step that mixed them would show
    assert not np.array_equal(first, cublas)
    assert_allclose(first, cublas, rtol=1e-5, atol=1e-6)


def test_integer_and_mixed_products_stay_cupys(gpu):
    products, xp = gpu.backend.products, gpu.backend.xp
    got = xp.matmul(xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
                    xp.asarray(np.ones((3, 2), np.int32)))
    assert_array_equal(gpu.backend.to_host(got), [[3, 3], [12, 12]])
    assert products.executed == 0 and products.fell_back == 1


def test_out_is_written_in_place_or_through_one_copy_where_it_overlaps(gpu):
    xp = gpu.backend.xp
    a, b = xp.asarray(_f32(4, 4)), xp.asarray(_f32(4, 4))
    want = np.matmul(gpu.backend.to_host(a), gpu.backend.to_host(b))
    out = xp.empty((4, 4), np.float32)
    assert xp.matmul(a, b, out=out) is out
    assert_allclose(gpu.backend.to_host(out), want, rtol=2e-6, atol=1e-6)
    assert xp.matmul(a, b, out=a) is a  # out= is an operand: cupy's answer all the same
    assert_allclose(gpu.backend.to_host(a), want, rtol=2e-6, atol=1e-6)


def _capture(gpu, fn):
    cuda = gpu.backend.xp.cuda
    stream = cuda.Stream(non_blocking=True)
    with cuda.using_allocator(cuda.MemoryPool().malloc), stream:
        stream.begin_capture()
        try:
            result = fn()
        finally:
            graph = stream.end_capture()
    return graph, result


def test_a_product_planned_before_a_capture_is_captured_and_relaunched(gpu):
    xp, counters = gpu.backend.xp, gpu.backend.counters
    a, b = xp.asarray(_f32(128, 784)), xp.asarray(_f32(784, 256))
    eager = gpu.backend.to_host(xp.matmul(a, b))  # plans
    graph, result = _capture(gpu, lambda: xp.matmul(a, b))
    counters.reset()
    graph.launch()
    assert counters.graph_launches == 1 and counters.launches == 2  # GEMM + split-K
    assert_array_equal(gpu.backend.to_host(result), eager)
    xp.copyto(a, xp.asarray(_f32(128, 784)))  # new inputs in the graph's buffers
    graph.launch()
    assert_array_equal(gpu.backend.to_host(result),
                       gpu.backend.to_host(xp.matmul(a, b)))


def test_a_layout_first_seen_during_a_capture_is_not_planned_there(gpu):
    xp = gpu.backend.xp
    a, b = xp.asarray(_f32(3, 5)), xp.asarray(_f32(5, 2))
    with pytest.raises(ProductNotPlanned, match=r"first seen during the capture"):
        _capture(gpu, lambda: xp.matmul(a, b))


def test_without_nvmath_cupys_refusal_says_it_is_not_installed(gpu):
    xp = gpu.backend.xp
    a, b = xp.asarray(_f32(3, 5)), xp.asarray(_f32(5, 2))
    with without_nvmath(gpu):
        xp.matmul(a, b)
        with pytest.raises(NotImplementedError, match="cuBLAS API during stream capture") as e:
            _capture(gpu, lambda: xp.matmul(a, b))
    assert getattr(e.value, REASON_ATTR) == MISSING
    assert "pip install ember-core[cuda12]" in MISSING


# --- the fake nvmath refuses what nvmath (or CUDA during a capture) refuses ------------------
def _mm(gpu, a, b, c=None, **kw):
    xp = gpu.backend.xp
    adv = NVMATH.linalg.advanced
    if c is not None:
        kw = {"beta": 0.0, "options": adv.MatmulOptions(inplace=True), **kw}
        return adv.Matmul(xp.asarray(a), xp.asarray(b), c=c, **kw)
    return adv.Matmul(xp.asarray(a), xp.asarray(b), **kw)


def test_the_fake_refuses_what_nvmath_refuses(gpu):
    xp, adv = gpu.backend.xp, NVMATH.linalg.advanced
    with pytest.raises(ValueError, match=r"dtype of operand A \(int32\) is not supported"):
        _mm(gpu, np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="Unsupported combination of dtypes"):
        _mm(gpu, _f32(2, 2), np.ones((2, 2)))
    with pytest.raises(ValueError, match="'K' extent must match"):
        _mm(gpu, _f32(2, 3), _f32(2, 2))
    with pytest.raises(ValueError, match="batch dimensions of operands A"):
        _mm(gpu, _f32(2, 2, 3), _f32(3, 3, 2))
    with pytest.raises(ValueError, match="Unsupported layout"):
        adv.Matmul(xp.asarray(_f32(4, 6))[:, ::2], xp.asarray(_f32(3, 2)))
    with pytest.raises(ValueError, match="leading dimension longer than its stride"):
        adv.Matmul(xp.broadcast_to(xp.asarray(_f32(1, 3)), (4, 3)), xp.asarray(_f32(3, 2)))
    with pytest.raises(ValueError, match="inplace if operand C is not provided"):
        _mm(gpu, _f32(2, 2), _f32(2, 2), options=adv.MatmulOptions(inplace=True))
    with pytest.raises(ValueError, match="beta must be provided"):
        adv.Matmul(xp.asarray(_f32(2, 2)), xp.asarray(_f32(2, 2)), c=xp.empty((2, 2)))
    mm = _mm(gpu, _f32(4, 3), _f32(3, 2))
    with pytest.raises(RuntimeError, match="before plan"):
        mm.execute()
    mm.plan()
    with pytest.raises(ValueError, match="strides of the new operand must match"):
        mm.reset_operands(a=xp.asarray(_f32(3, 4)).T)
    with pytest.raises(ValueError, match="extents of the new operand must match"):
        mm.reset_operands(a=xp.asarray(_f32(5, 3)))
    mm.free()
    with pytest.raises(adv.InvalidMatmulState):
        mm.execute()


def test_the_fake_plans_outside_captures_and_holds_its_plan_to_its_alignment(gpu):
    xp = gpu.backend.xp
    c = xp.empty((4, 2), np.float32)
    mm = _mm(gpu, _f32(4, 3), _f32(3, 2), c=c)
    with pytest.raises(RuntimeError, match="synchronous API calls are disallowed"):
        _capture(gpu, mm.plan)
    mm.plan()
    got = mm.execute()
    assert got is c
    buf = xp.asarray(_f32(13))
    mm.reset_operands(a=buf[1:].reshape(4, 3))  # 4 bytes past an aligned address
    with pytest.raises(RuntimeError, match="aligned to 4 bytes, the plan assumed 256"):
        mm.execute()


def test_the_fake_refuses_an_event_captured_and_waited_on_from_another_stream(gpu):
    xp = gpu.backend.xp
    a, b, c = xp.asarray(_f32(4, 3)), xp.asarray(_f32(3, 2)), xp.empty((4, 2), np.float32)
    kept = _mm(gpu, _f32(4, 3), _f32(3, 2), c=c)
    kept.plan()
    kept.execute()  # the workspace is allocated on the legacy stream, and kept

    def twice():
        kept.reset_operands(a=a, b=b, c=c)
        kept.execute()
        kept.reset_operands(a=a, b=b, c=c)  # (nvmath 1.0: no wait here)
        kept.execute(release_workspace=True)  # the legacy stream waits for the capture

    with pytest.raises(RuntimeError, match="cudaErrorStreamCaptureImplicit"):
        _capture(gpu, twice)
    released = _mm(gpu, _f32(4, 3), _f32(3, 2), c=c)
    released.plan()
    released.execute(release_workspace=True)

    def twice_released():  # ember's way: the workspace goes back after each execute
        for _ in range(2):
            released.reset_operands(a=a, b=b, c=c)
            released.execute(release_workspace=True)

    _capture(gpu, twice_released)


def test_an_unsplit_product_is_one_kernel_where_cublaslt_would_split_k(gpu):
    """The LSTM's recurrent gradient, (64, 512) @ (512, 128): cuBLASLt adds a split-K
    reduction after its GEMM on an H200; planned with no reduction scheme allowed
    (``matmul_unsplit``) it is the GEMM alone, the same product to rounding."""
    backend = gpu.backend
    xp, counters, products = backend.xp, backend.counters, backend.products
    a, b = xp.asarray(_f32(64, 512)), xp.asarray(_f32(128, 512)).T
    split = xp.matmul(a, b)
    counters.reset()
    split = xp.matmul(a, b)
    assert counters.launches == 2  # GEMM + split-K reduction
    planned = products.planned
    unsplit = xp.matmul_unsplit(a, b)
    assert products.planned == planned + 1  # a plan of its own, not the split one
    counters.reset()
    unsplit = xp.matmul_unsplit(a, b)
    assert counters.launches == 1 and products.planned == planned + 1
    want = np.matmul(backend.to_host(a), backend.to_host(b))
    assert_allclose(backend.to_host(unsplit), want, rtol=2e-5, atol=2e-5)
    assert not np.array_equal(backend.to_host(unsplit), backend.to_host(split))  # another algorithm
    with without_nvmath(gpu):  # cupy's cuBLAS has no such preference: its product
        counters.reset()
        xp.matmul_unsplit(a, b)
        assert counters.launches == 2 and products.fell_back == 1


def test_the_fake_takes_nvmaths_reduction_scheme_preference_and_refuses_the_rest(gpu):
    adv = NVMATH.linalg.advanced
    counters = gpu.backend.counters
    none = adv.MatmulReductionScheme.NONE
    for prefs in (adv.MatmulPlanPreferences(reduction_scheme_mask=none),
                  {"reduction_scheme_mask": none}):
        mm = _mm(gpu, _f32(64, 512), _f32(512, 128))
        mm.plan(preferences=prefs)
        counters.reset()
        mm.execute()
        assert counters.launches == 1
    mm = _mm(gpu, _f32(64, 512), _f32(512, 128))
    mm.plan(preferences=adv.MatmulPlanPreferences())  # every scheme: it splits
    counters.reset()
    mm.execute()
    assert counters.launches == 2
    for bad in ({"reduction_scheme_mask": adv.MatmulReductionScheme.INPLACE}, {"limit": 1}):
        with pytest.raises(NotImplementedError, match="not modelled by the strict double"):
            mm.plan(preferences=bad)
    with pytest.raises(ValueError):
        mm.plan(preferences={"reduction_scheme_mask": 8})


def test_a_product_owns_its_buffer_as_cupys_does(gpu):
    """A product's result is an array of its own, not a reshaped view of one: graph mode
    writes a later step in place only into arrays that own their buffer (a view here
    left a traced chain after a product with no step in place on a GPU)."""
    xp = gpu.backend.xp
    for a, b in (LAYOUTS["matrix"], LAYOUTS["batch_equal"]):
        out = _product(xp, a, b)
        assert out.base is None and gpu.backend.owns(out)


# The parameters of nvmath-python 1.0.0's ``Matmul`` methods (``ember-core[cuda12]``
# requires >= 1.0), read from its wheel's ``nvmath/linalg/advanced/matmulmod.py``:
# (positional-only, positional-or-keyword, keyword-only), ``self`` left out. The fake is
# called exactly as the real one is; a call the real one would refuse (a positional
# operand to ``reset_operands``) must fail on the double too.
NVMATH_1_0_0 = {
    "__init__": (["a", "b"], ["c"], ["alpha", "beta", "qualifiers", "quantization_scales",
                                     "options", "stream"]),
    "plan": ([], [], ["preferences", "algorithms", "epilog", "epilog_inputs", "stream"]),
    "reset_operands": ([], [], ["a", "b", "c", "alpha", "beta", "quantization_scales",
                                "epilog_inputs", "stream"]),
    "release_operands": ([], [], []),
    "execute": ([], [], ["algorithm", "release_workspace", "stream"]),
    "free": ([], [], []),
}


@pytest.mark.parametrize("method", sorted(NVMATH_1_0_0))
def test_the_fake_matmul_takes_the_arguments_nvmath_1_0_takes(method):
    import inspect

    params = list(inspect.signature(getattr(NVMATH.linalg.advanced.Matmul, method))
                  .parameters.values())[1:]
    kinds = inspect.Parameter
    got = ([p.name for p in params if p.kind is kinds.POSITIONAL_ONLY],
           [p.name for p in params if p.kind is kinds.POSITIONAL_OR_KEYWORD],
           sorted(p.name for p in params if p.kind is kinds.KEYWORD_ONLY))
    want = NVMATH_1_0_0[method]
    assert got == (want[0], want[1], sorted(want[2]))


def test_operands_are_released_and_then_all_given_again_as_nvmath_1_0_wants(gpu):
    """nvmath 1.0.0: ``reset_operands()`` with nothing raises (it dropped the operands in
    earlier versions, and ember relied on that: on a GPU every product would have gone
    back to cupy); ``release_operands()`` drops them, and then all are required."""
    xp = gpu.backend.xp
    a, b, c = xp.asarray(_f32(4, 3)), xp.asarray(_f32(3, 2)), xp.empty((4, 2), np.float32)
    mm = _mm(gpu, _f32(4, 3), _f32(3, 2), c=c)
    mm.plan()
    with pytest.raises(ValueError, match="requires at least one operand"):
        mm.reset_operands()
    with pytest.raises(TypeError):
        mm.reset_operands(a, b, c)  # keyword-only
    mm.release_operands()
    with pytest.raises(RuntimeError, match="after the operands have been released"):
        mm.execute()
    with pytest.raises(ValueError, match="all required operands must be provided"):
        mm.reset_operands(a=a, b=b)
    mm.reset_operands(a=a, b=b, c=c)
    assert mm.execute() is c
    assert_allclose(c.get(), a.get() @ b.get(), rtol=1e-5)


def test_a_product_leaves_its_plan_without_operands(gpu):
    """Products release the operands after each execute: a plan keeps no activation
    alive, and the next call gives them all again."""
    xp = gpu.backend.xp
    products = gpu.backend.products
    x = xp.asarray(_f32(6, 5))
    y = xp.matmul(x, xp.asarray(_f32(5, 4)))
    assert products.executed >= 1 and y.shape == (6, 4)
    for plans in products._plans.values():
        for _, planned in plans:
            assert planned.mm.operands is None

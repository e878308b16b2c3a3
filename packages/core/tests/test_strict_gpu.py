"""The strict cupy-like GPU double: what it refuses, what it counts, and bfloat16 on a GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember.core.testing import (
    CUPY_LACKS,
    StrictArray,
    backend_scope,
    backends_to_test,
    simulated_gpus,
)
from ember.core.testing._strict_kernels import CompileException


def test_arrays_are_their_own_type_and_refuse_implicit_host_conversion(gpu):
    x = em.constant([1.0, 2.0])
    assert x.device == "/gpu:0"
    assert type(x._data) is StrictArray and not isinstance(x._data, np.ndarray)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(x._data)
    assert_allclose(x.numpy(), [1.0, 2.0])  # the explicit copy works


@pytest.mark.parametrize("mix", [
    lambda xp, a, h: a + h,
    lambda xp, a, h: h * a,
    lambda xp, a, h: np.add(a, h),
    lambda xp, a, h: np.concatenate([a, h]),
    lambda xp, a, h: xp.where(a > 1, a, h),
], ids=["operator", "reflected", "ufunc", "array_function", "xp_function"])
def test_mixing_with_host_arrays_raises_type_error(gpu, mix):
    a = em.constant([1.0, 2.0])._data
    with pytest.raises(TypeError):
        mix(gpu.xp, a, np.ones(2, np.float32))


def test_numpy_functions_dispatch_to_the_device(gpu):
    a = em.constant([[1.0, 2.0], [3.0, 4.0]])._data
    assert type(np.exp(a)) is StrictArray
    assert type(np.sum(a)) is StrictArray  # reductions stay on the device (0-d), as cupy
    assert type(a[0, 1]) is StrictArray
    assert type(gpu.xp.zeros((2,))) is StrictArray  # creation functions make device arrays


@pytest.mark.parametrize("op", ["__iand__", "__ior__", "__ixor__", "__ilshift__",
                                "__irshift__", "__ifloordiv__", "__imod__", "__ipow__"])
def test_augmented_assignments_write_in_place_as_cupys_do(gpu, op):
    host = np.array([6, 5, 3], np.int32)
    other = np.array([2, 1], np.int32)
    a = gpu.xp.asarray(host)
    view = a[1:]  # a view: only writing in place changes ``a``
    assert getattr(view, op)(gpu.xp.asarray(other)) is view
    getattr(host[1:], op)(other)
    assert a.get().tolist() == host.tolist()


def test_scalar_reads_and_host_copies_are_counted(gpu):
    x = em.constant([1.0, 2.0, 3.0])
    c = gpu.backend.counters
    c.reset()
    s = em.reduce_sum(x)
    transfers = {k: v for k, v in c.snapshot().items() if k not in ("launches",
                                                                    "graph_launches")}
    assert transfers == {"syncs": 0, "scalar_reads": 0, "to_host": 0, "async_to_host": 0,
                         "from_host": 0}
    assert c.launches == 1  # the sum: one CUB reduction (test_launch_counter.py)
    assert float(s) == 6.0
    assert c.syncs == 1
    assert s._data.item() == 6.0 and c.scalar_reads == 1 and c.syncs == 2
    assert bool(s._data) and int(s._data) == 6 and c.scalar_reads == 3
    x._data.get()
    x.numpy()
    assert c.to_host == 3 and c.syncs == 6


def test_python_numbers_are_uploaded_once_per_value_and_dtype(gpu):
    """An upload from pageable host memory waits for the device: ``x * 2.0`` in an eager
    loop must not upload its 2.0 at every step. Each value (by its bits) and dtype is
    uploaded once; the results stay exact."""
    x = em.constant([1.0, -2.0])
    x64 = em.constant([0.0, 1.0], dtype=em.float64)
    c = gpu.backend.counters
    c.reset()
    for _ in range(3):
        y = x * 2.5 + 1
    assert c.from_host == 2, c  # 2.5 and 1, as float32, once each
    assert_allclose(y.numpy(), [3.5, -4.0])
    z = x64 * 2.5  # a new dtype: a new upload
    assert c.from_host == 3 and z.numpy().tolist() == [0.0, 2.5]
    zero = em.maximum(x64, 0.0)
    neg = em.minimum(x64, -0.0)  # -0.0 is not the cached 0.0
    assert c.from_host == 5, c
    assert not np.signbit(zero.numpy()[0]) and np.signbit(neg.numpy()[0])
    v = em.Variable(0)
    c.reset()
    for _ in range(4):
        v.assign_add(1)
    assert int(v) == 4 and c.from_host == 1, c


def test_what_cupy_lacks_is_missing(gpu):
    assert "errstate" in CUPY_LACKS
    with pytest.raises(AttributeError, match="errstate"):
        gpu.xp.errstate
    with pytest.raises(AttributeError, match="frompyfunc"):
        gpu.xp.frompyfunc
    with pytest.raises(AttributeError, match="eig"):
        gpu.xp.linalg.eig
    a = em.constant([[2.0, 0.0], [0.0, 3.0]])._data
    with pytest.raises(TypeError):
        np.linalg.eig(a)  # numpy's own function: the array refuses it as cupy's would
    with pytest.raises(AttributeError, match="tobytes"):
        a.tobytes()


def test_arrays_of_two_gpus_do_not_mix():
    with simulated_gpus(2, strict=True) as (g0, g1):
        a = em.constant([1.0])._data
        with pytest.raises(ValueError, match="/gpu:0"):
            g1.xp.add(a, a)


def test_non_strict_simulated_gpus_keep_numpy_arrays():
    with simulated_gpus(1):
        assert type(em.constant([1.0])._data) is np.ndarray


def test_strict_must_be_a_bool():
    with pytest.raises(TypeError, match="strict"), simulated_gpus(1, strict="yes"):
        pass


@pytest.mark.parametrize("make", [
    lambda: em.constant([1.0], dtype=em.bfloat16),
    lambda: em.cast(em.constant([1.0]), em.bfloat16),
    lambda: em.zeros([2], dtype=em.bfloat16),
    lambda: em.ones([2], dtype="bfloat16"),
], ids=["constant", "cast", "zeros", "ones"])
def test_bfloat16_on_gpu_is_a_clear_error(gpu, make):
    """Decision: ember does not emulate bfloat16 on a GPU; asked for one there (a GPU scope,
    or a cast of a GPU tensor), it raises a DTypeError naming the op and the dtype (cupy has
    no bfloat16 before 14, and its 14 support is experimental)."""
    with em.device("/gpu:0"), pytest.raises(em.DTypeError, match="bfloat16 is not supported on"):
        make()


@pytest.mark.parametrize("make", [
    lambda: em.constant([1.0], dtype=em.bfloat16),
    lambda: em.constant(np.array([1.0], dtype=em.bfloat16)),
    lambda: em.convert_to_tensor(np.array([1.0], dtype=em.bfloat16)),
    lambda: em.zeros([1], dtype=em.bfloat16) + 1,
    lambda: em.ones([1], dtype="bfloat16"),
    lambda: em.Variable(np.array([1.0], dtype=em.bfloat16)),
    lambda: em.random.normal([1], dtype=em.bfloat16) * 0 + 1,
], ids=["constant", "constant-numpy", "convert", "zeros", "ones", "variable", "random"])
def test_bfloat16_without_a_scope_stays_on_the_host(gpu, make):
    """Soft placement, as TensorFlow's: with no device scope a new bfloat16 tensor goes to
    /cpu:0 even where the default device is a GPU, so code written for the CPU keeps
    working on a GPU machine; other dtypes still go to the GPU."""
    t = make()
    assert t.device == "/cpu:0" and t.dtype == em.bfloat16
    assert_allclose(np.asarray(t.numpy(), np.float32), [1.0])
    assert em.constant([1.0]).device == "/gpu:0"
    with pytest.raises(em.DTypeError, match=r"copy to GPU: dtype bfloat16 .* /gpu:0"):
        t.gpu()  # it does not reach the GPU by a later copy either


def test_bfloat16_copy_to_gpu_names_the_copy(gpu):
    with em.device("/cpu:0"):
        c = em.constant([1.0], dtype=em.bfloat16)
    with pytest.raises(em.DTypeError, match=r"copy to GPU: dtype bfloat16 .* /gpu:0"):
        c.gpu()
    assert_allclose(c.numpy().astype(np.float32), [1.0])  # it stays usable on the CPU


def test_backends_to_test_reads_the_environment(monkeypatch):
    monkeypatch.delenv("EMBER_TEST_BACKENDS", raising=False)
    assert backends_to_test() == ["cpu", "strict-gpu"]
    monkeypatch.setenv("EMBER_TEST_BACKENDS", "cpu,gpu")
    assert backends_to_test() == ["cpu", "gpu"]
    monkeypatch.setenv("EMBER_TEST_BACKENDS", "cpu,tpu")
    with pytest.raises(ValueError, match="tpu"):
        backends_to_test()


def test_backend_scope_places_new_tensors():
    with backend_scope("strict-gpu") as name:
        assert name == "/gpu:0" and type(em.constant(1.0)._data) is StrictArray
    with backend_scope("cpu") as name:
        assert em.constant(1.0).device == "/cpu:0"
    with pytest.raises(ValueError, match="unknown backend"), backend_scope("tpu"):
        pass


def test_sparse_cross_entropy_checks_labels_without_a_sync_on_gpu(gpu):
    """On the CPU a bad label is an error at the call; on a GPU, reading labels back each
    step would sync, so the op checks them on the device and the next read raises
    (test_device_errors.py); the example's loss is NaN."""
    logits = em.constant([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    labels = em.constant([2, 3])
    gpu.backend.counters.reset()
    loss = em.nn_ops.sparse_softmax_cross_entropy_with_logits(labels, logits)
    assert gpu.backend.counters.syncs == 0
    with pytest.raises(em.InvalidArgumentError, match="labels must be in"):
        loss.numpy()
    got = loss.numpy()
    assert_allclose(got[0], np.log(np.exp([1.0, 2.0, 3.0]).sum()) - 3.0, rtol=1e-6)
    assert np.isnan(got[1])
    with em.device("/cpu:0"), pytest.raises(em.InvalidArgumentError, match="labels must be in"):
        em.nn_ops.sparse_softmax_cross_entropy_with_logits(em.constant([2, 3]),
                                                          em.constant([[1.0, 2.0, 3.0]] * 2))


def test_every_name_listed_as_lacking_is_a_numpy_name():
    """CUPY_LACKS hides numpy names; a name numpy does not have would hide nothing."""
    missing = []
    for qual in CUPY_LACKS:
        obj = np
        for part in qual.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                missing.append(qual)
                break
    assert CUPY_LACKS and missing == []


def test_elementwise_kernels_evaluate_their_c_and_refuse_what_nvcc_or_the_double_would(gpu):
    x = em.constant([1.0, -2.0, float("nan"), 0.5])
    a = x._data
    xp = gpu.backend.xp
    k = xp.ElementwiseKernel("T a, T b", "T o, T p",
                             "T t = a * b - a / 2; o = (t > 0 || isnan(t)) ? t : 0; "
                             "p = -tanh(t)", "k")
    o, p = k(a, a)
    t = a.get() * a.get() - a.get() / 2
    np.testing.assert_array_equal(o.get(), np.where((t > 0) | np.isnan(t), t, 0))
    np.testing.assert_array_equal(p.get(), -xp.tanh(xp.asarray(t)).get())  # as cupy.tanh
    assert o.dtype == np.float32 and type(o) is StrictArray
    out = xp.empty_like(a)
    assert xp.ElementwiseKernel("T a", "T o", "o = exp(a)", "e")(a, out) is out
    np.testing.assert_array_equal(out.get(), xp.exp(a).get())
    for op, why in [("o = expf(a)", "'expf' is not a CUDA math function"),
                    ("o = a * 2.0", "floating-point literal"),
                    ("o = a * q", "'q'"), ("o = (a + 1", "ends early"),
                    ("q = a", "identifier 'q' is undefined"),
                    ("T q = a", "outputs ['o'] are never assigned"),
                    ("a = a; o = a", "'a' is const"), ("T o = a", "'o' is already declared"),
                    ("o = a % 2", "must have integral type")]:
        bad = xp.ElementwiseKernel("T a", "T o", op, "bad")  # as cupy: compiled when called
        with pytest.raises(CompileException, match=r"\.cu\(1\): error: .*" + re.escape(why)):
            bad(a)
    assert not issubclass(CompileException, ValueError)  # cupy's is a plain Exception
    with pytest.raises(TypeError, match="Type is mismatched"):
        xp.ElementwiseKernel("T a, T b", "T o", "o = a + b", "m")(a, em.constant([1.0] * 4,
                                                                               dtype=em.float64)._data)
    with pytest.raises(TypeError, match="Wrong number of arguments"):
        k(a)


def test_kernels_nvrtc_refused_on_the_h200_are_refused_on_the_double(gpu):
    """Two compile errors the H200 found in ember's own kernels (float16 ReLU, int32 max
    pool), which the double had evaluated: a float16 ternary against an integer and
    ``isnan`` of an integer are ambiguous overloads to nvrtc."""
    xp = gpu.backend.xp
    h = em.constant([1.0, -2.0], dtype=em.float16)._data
    n = em.constant([1, -2])._data
    ambiguous = xp.ElementwiseKernel("T a", "T o", "o = a > 0 ? a : 0", "relu")
    with pytest.raises(CompileException, match=r'error: ambiguous "\?" operation: .*"float16"'):
        ambiguous(h)
    assert ambiguous(n).get().tolist() == [1, 0]  # an int against an int is fine
    assert ambiguous(em.constant([1.0, -2.0])._data).get().tolist() == [1.0, 0.0]  # float
    fixed = xp.ElementwiseKernel("T a", "T o", "o = a > (T)0 ? a : (T)0", "relu_cast")
    assert fixed(h).get().tolist() == [1.0, 0.0] and fixed(h).dtype == np.float16
    nan_of_int = xp.ElementwiseKernel("T a", "T o", "o = isnan(a) ? (T)0 : a", "nan")
    with pytest.raises(CompileException, match='more than one instance of overloaded '
                                               'function "isnan"'):
        nan_of_int(n)
    assert nan_of_int(h).get().tolist() == [1.0, -2.0]


def test_the_strict_double_casts_floats_to_ints_as_cupy_does():
    """cupy's documented difference: a GPU's conversion saturates (and takes NaN to 0)
    where numpy on x86 gives the type's minimum or wraps."""
    v = np.array([np.nan, np.inf, -np.inf, -1.0, 3e9, 2.7, -2.7, 300.0], np.float32)
    with simulated_gpus(1, strict=True) as (gpu,):
        xp = gpu.backend.xp
        x = xp.asarray(v)
        assert x.astype(np.int32).get().tolist() == [0, 2147483647, -2147483648, -1,
                                                     2147483647, 2, -2, 300]
        assert x.astype(np.uint32).get().tolist() == [0, 4294967295, 0, 0, 3000000000, 2,
                                                      0, 300]
        assert x.astype(np.uint8).get().tolist() == [0, 255, 0, 0, 255, 2, 0, 255]
        assert xp.asarray(np.array([1e300, -1e300])).astype(np.int64).get().tolist() == [
            2**63 - 1, -2**63]


def test_cast_of_undefined_floats_is_the_same_on_every_device():
    v = [np.nan, np.inf, -np.inf, -1.0, 3e9, 2.7, -2.7, 300.0]
    want = {em.int32: [0, 2**31 - 1, -2**31, -1, 2**31 - 1, 2, -2, 300],
            em.uint8: [0, 255, 0, 0, 255, 2, 0, 255]}
    with simulated_gpus(1, strict=True):
        for dtype, expected in want.items():
            for dev in ("/cpu:0", "/gpu:0"):
                with em.device(dev):
                    got = em.cast(em.constant(v, dtype=em.float32), dtype)
                assert got.numpy().tolist() == expected, (dev, dtype)



def test_repeated_targets_with_different_values_land_the_first_not_numpys_last(gpu):
    xp = gpu.xp
    a = xp.zeros(5)
    a[np.array([1, 1, 3])] = xp.asarray(np.array([7.0, 8.0, 9.0]))
    assert_allclose(gpu.backend.to_host(a), [0, 7, 0, 9, 0])  # numpy: [0, 8, 0, 9, 0]
    # repeats that write the same value, and a view's elements, are as in numpy
    base = xp.zeros((3, 4))
    col = base[:, 1]
    col[np.array([2, 2, 0])] = 5.0
    assert_allclose(gpu.backend.to_host(base)[:, 1], [5, 0, 5])
    rows = xp.zeros((2, 3))
    rows[np.array([0, 0]), :] = xp.asarray(np.array([[1.0, 2, 3], [4, 5, 6]]))
    assert_allclose(gpu.backend.to_host(rows), [[1, 2, 3], [0, 0, 0]])
    # an index list is an index array; values with leading 1s broadcast as numpy's do
    listed = xp.zeros(4)
    listed[[2, 2]] = xp.asarray(np.array([1.0, 2.0]))
    assert_allclose(gpu.backend.to_host(listed), [0, 0, 1, 0])
    lead = xp.zeros((2, 3))
    lead[np.array([0, 0])] = xp.asarray(np.arange(6.0).reshape(1, 2, 3))
    assert_allclose(gpu.backend.to_host(lead), [[0, 1, 2], [0, 0, 0]])
    # numpy's checks still apply: -1 does not fit uint8, repeated or not
    small = xp.zeros(3, dtype=np.uint8)
    with pytest.raises(OverflowError):
        small[np.array([0, 0])] = -1

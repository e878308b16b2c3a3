"""ember.core.extend: the public surface that extensions (ember-tape, graph mode) build on."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember.core import extend
from ember.core.testing import OpLog

_names = itertools.count()


@pytest.fixture(autouse=True)
def _forget_test_ops():
    """Unregister the ops a test registers (the op-table tests check every registered op)."""
    before = set(extend.REGISTRY)
    yield
    for name in set(extend.REGISTRY) - before:
        del extend.REGISTRY[name]


def _name(stem: str) -> str:
    """A fresh op name (the registry is global and keeps every registration)."""
    return f"test_extend_{stem}_{next(_names)}"



def test_register_and_run_an_op_with_attrs():
    op = extend.register_op(_name("scale"), lambda be, x, factor: x * factor, family="math")
    assert isinstance(op, extend.OpDef) and extend.REGISTRY[op.name] is op
    y = extend.run_op(op, (em.constant([1.0, 2.0]),), {"factor": 3.0})
    assert_allclose(y.numpy(), [3.0, 6.0])
    y2 = extend.run_op(op.name, [np.array([1.0], np.float32)], {"factor": 2.0})  # by name
    assert_allclose(y2.numpy(), [2.0])


def test_run_op_is_recorded_with_its_inputs_attrs_and_outputs():
    op = extend.register_op(_name("scale"), lambda be, x, factor: x * factor, family="math")
    log = OpLog()
    x = em.constant([1.0])
    with extend.recording_to(log):
        y = extend.run_op(op, (x,), {"factor": 2.0})
    assert log.ops == [(op.name, (x,), {"factor": 2.0}, (y,))]


def test_register_op_rejects_bad_arguments_by_name():
    with pytest.raises(KeyError, match="already registered"):
        extend.register_op("add", lambda be, x, y: x + y, family="math")
    with pytest.raises(TypeError, match="forward must be callable"):
        extend.register_op(_name("bad"), 3, family="math")
    with pytest.raises(TypeError, match="out must be callable"):
        extend.register_op(_name("bad"), lambda be, x: x, family="math", out="no")
    with pytest.raises(ValueError, match="promote must be one of"):
        extend.register_op(_name("bad"), lambda be, x: x, family="math", promote="some")
    with pytest.raises(TypeError, match="family"):
        extend.register_op(_name("bad"), lambda be, x: x, family="")


def test_promote_is_honoured():
    op = extend.register_op(_name("plus"), lambda be, x, y: x + y, family="math", promote="all")
    y = extend.run_op(op, (em.constant([1], em.int32), em.constant([0.5], em.float32)))
    assert y.dtype == em.float64 or y.dtype == em.float32
    assert_allclose(y.numpy(), [1.5])


def test_out_form_is_stored_and_computes_into_the_buffer(device):
    def out(be, x, out):
        return be.xp.multiply(x, 2, out=out)

    op = extend.register_op(_name("twice"), lambda be, x: x * 2, family="math", out=out)
    plain = extend.register_op(_name("twice"), lambda be, x: x * 2, family="math")
    assert extend.out_form(op) is out and extend.out_form(op.name) is out
    assert extend.out_form(plain) is None
    x = em.constant([1.0, 2.0])
    dev = extend.device_of(x)
    assert dev.name == device
    # the buffer is an array of the inputs' device, as graph mode's dead buffers are (a
    # host array on a GPU is refused by cupy, as by the strict double)
    buf = dev.backend.xp.empty(2, np.float32)
    res = extend.out_form(op)(dev.backend, extend.array_of(x), out=buf)
    assert res is buf
    assert_allclose(extend.tensor_from_array(buf, dev).numpy(), extend.run_op(op, (x,)).numpy())
    with pytest.raises(KeyError, match="no op named"):
        extend.out_form("no_such_op_anywhere")


def test_run_op_names_unknown_ops_and_wraps_forward_errors():
    with pytest.raises(KeyError, match="no op named 'nope_not_an_op'"):
        extend.run_op("nope_not_an_op", (1.0,))
    op = extend.register_op(_name("bad_forward"), lambda be, x: x.reshape((7, 7)), family="math")
    with pytest.raises(em.InvalidArgumentError, match=op.name):
        extend.run_op(op, (em.constant([1.0, 2.0]),))


def test_tensor_from_array_does_not_copy_and_round_trips():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = extend.tensor_from_array(a, "/cpu:0")
    assert type(t) is em.Tensor
    assert extend.array_of(t) is a
    assert extend.device_of(t).name == t.device == "/cpu:0"
    assert isinstance(extend.device_of(t), em.Device)
    assert t.shape == (2, 3) and t.dtype == em.float32
    with em.device("/cpu:0"):
        assert extend.tensor_from_array(a).device == "/cpu:0"
    assert extend.tensor_from_array(np.float32(2.0), extend.device_of(t)).shape == ()


def test_tensor_from_array_rejects_what_is_not_an_array_of_the_device():
    with pytest.raises(TypeError, match="expected a backend array, got list"):
        extend.tensor_from_array([1.0, 2.0], "/cpu:0")

    class Fake:
        dtype = np.dtype(np.float32)
        shape = (1,)

    with pytest.raises(TypeError, match="cannot live on /cpu:0"):
        extend.tensor_from_array(Fake(), "/cpu:0")



def test_tensor_from_array_on_a_simulated_gpu_takes_only_its_arrays():
    from ember.core.testing import simulated_gpus

    with simulated_gpus(1, strict=True):
        gpu = em.get_device("/gpu:0")
        host = np.ones(2, np.float32)
        with pytest.raises(TypeError, match="cannot live on /gpu:0"):
            extend.tensor_from_array(host, gpu)
        with pytest.raises(TypeError, match="cannot live on /gpu:0"):
            extend.tensor_from_array(np.float32(1.0), gpu)
        arr = gpu.backend.from_host(host, gpu.index)
        t = extend.tensor_from_array(arr, gpu)
        assert t.device == "/gpu:0" and extend.array_of(t) is arr
        assert_allclose((t * 2).numpy(), [2.0, 2.0])


def test_read_without_recording_is_not_seen_but_value_is():
    v = em.Variable([1.0, 2.0])
    log = OpLog()
    with extend.recording_to(log):
        quiet = extend.read_without_recording(v)
        assert log.reads == []
        loud = v.value()
    assert len(log.reads) == 1 and log.reads[0][0] is v
    assert quiet is loud  # the same immutable value tensor
    v.assign([5.0, 6.0])
    assert_allclose(quiet.numpy(), [1.0, 2.0])  # earlier reads keep what they saw
    assert_allclose(extend.read_without_recording(v).numpy(), [5.0, 6.0])


def test_notify_op_tells_every_active_recorder():
    a, b = OpLog(), OpLog()
    x = em.constant(1.0)
    extend.notify_op(extend.REGISTRY["exp"], (x,), None, (x,))  # none active: no effect
    with extend.recording_to(a, b):
        extend.notify_op(extend.REGISTRY["exp"], (x,), None, (x,))
    assert [o[0] for o in a.ops] == ["exp"] and [o[0] for o in b.ops] == ["exp"]


def test_recording_to_replaces_the_active_set_and_restores_it():
    outer, inner = OpLog(), OpLog()
    x = em.constant(2.0)
    with extend.recording_to(outer):
        em.exp(x)
        with extend.recording_to(inner):
            assert extend.active_recorders() == (inner,)
            em.log(x)
        with extend.recording_to():
            em.sin(x)  # nobody records this
        em.cos(x)
    assert extend.active_recorders() == ()
    assert [o[0] for o in outer.ops] == ["exp", "cos"]
    assert [o[0] for o in inner.ops] == ["log"]


def test_recording_to_restores_after_an_error_and_rejects_non_recorders():
    log = OpLog()
    with pytest.raises(RuntimeError):
        with extend.recording_to(log):
            raise RuntimeError("boom")
    assert extend.active_recorders() == ()
    with pytest.raises(TypeError, match="not a Recorder"):
        with extend.recording_to(object()):
            pass


@pytest.mark.parametrize("dtype, expected", [
    (em.float32, True), (em.bfloat16, True), (em.float16, True), (em.complex64, True),
    ("float64", True), (np.int32, False), (em.bool_, False), ("uint8", False),
])
def test_is_differentiable(dtype, expected):
    assert extend.is_differentiable(dtype) is expected


def test_extend_is_exported_and_lists_what_it_holds():
    assert em.extend is extend
    for name in extend.__all__:
        assert hasattr(extend, name), name


def test_map_variable_reads_maps_op_reads():
    # (the tape differentiating through the mapping: packages/tape/tests/test_extend_reads.py)
    v = em.Variable(np.array([1.5, -2.0], np.float32))
    seen = []

    def half(var, value):
        seen.append(var)
        return em.cast(value, em.float16)

    with extend.map_variable_reads(half):
        y = em.reduce_sum(em.multiply(v, v))
        inner_off = None
        with extend.map_variable_reads(None):
            inner_off = v.value().dtype
        raw = extend.read_without_recording(v).dtype
    assert y.dtype == em.float16 and seen == [v, v]
    assert inner_off == em.float32 and raw == em.float32
    np.testing.assert_allclose(y.numpy(), 1.5 ** 2 + 2.0 ** 2)
    assert v.value().dtype == em.float32  # outside the block, reads are plain again


def test_elementwise_kernel_is_made_once_per_name_and_options_and_honours_them():
    """``extend.elementwise_kernel``: kept per namespace, name and nvrtc options; without
    ``--fmad=false`` the strict double contracts ``a * b + c`` into one rounding, as nvcc
    does, and with it keeps the ops' two."""
    from ember.core.testing import simulated_gpus

    with simulated_gpus(1, strict=True), em.device("/gpu:0"):
        rng = np.random.default_rng(3)
        a, b, c = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))
        ts = [em.constant(v) for v in (a, b, c)]
        xp = extend.device_of(ts[0]).xp
        make = [lambda o=o: extend.elementwise_kernel(xp, "doctest_axpy", "T a, T b, T c",
                                                      "T y", "y = a * b + c", o)
                for o in ((), ("--fmad=false",))]
        fused, exact = make[0](), make[1]()
        assert make[0]() is fused and make[1]() is exact and fused is not exact
        arrays = [extend.array_of(t) for t in ts]
        two_roundings = extend.array_of(ts[0] * ts[1] + ts[2]).get()
        assert np.array_equal(exact(*arrays).get(), two_roundings)
        one_rounding = (a.astype(np.float64) * b + c).astype(np.float32)
        assert np.array_equal(fused(*arrays).get(), one_rounding)
        assert not np.array_equal(one_rounding, two_roundings)  # (the case tells them apart)

"""Variable: mutable named state that takes part in every op like a tensor."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember.core.testing import (
    OP_SPECS,
    backend_tolerance,
    get_spec,
    make_case,
    numpy_args,
    run_case,
)


def test_construction_and_attributes():
    v = em.Variable(5.0, name="weight")
    assert v.name == "weight:0" and v.trainable is True
    assert v.shape == () and v.dtype == em.float32
    assert v.device == em.current_device().name  # /gpu:0 where a GPU is present
    assert em.Variable(10).dtype == em.int32
    assert em.Variable([1, 2], dtype=em.float64).dtype == em.float64
    assert em.Variable(em.constant([1, 2]), dtype=em.float32).dtype == em.float32
    assert em.Variable(lambda: em.zeros([2, 3])).shape == (2, 3)
    assert em.Variable(1.0, trainable=False).trainable is False
    assert em.Variable(1.0).name == "Variable:0"
    assert em.Variable(1.0).uid != em.Variable(1.0).uid


def test_repr():
    v = em.Variable(3.0, name="w")
    assert repr(v) == "<ember.Variable 'w:0' shape=() dtype=float32, numpy=3.0>"
    assert repr(em.Variable([1, 2], name="b")) == (
        "<ember.Variable 'b:0' shape=(2,) dtype=int32, numpy=[1 2]>")


def test_assign_family():
    v = em.Variable(10)
    assert v.assign(5) is v
    assert int(v) == 5
    v.assign_add(5)
    assert int(v) == 10
    v.assign_sub(em.constant(3))
    assert int(v) == 7
    assert_array_equal(v.numpy(), 7)
    w = em.Variable([1.0, 2.0])
    w.assign(np.array([3.0, 4.0]))  # float64 numpy into float32: same kind, cast
    assert w.dtype == em.float32
    assert_array_equal(w.numpy(), [3.0, 4.0])


def test_read_value_is_a_tensor_snapshot():
    v = em.Variable([1.0, 2.0])
    r = v.read_value()
    assert type(r) is em.Tensor
    early = v * 1
    v.assign([5.0, 6.0])
    assert_array_equal(r.numpy(), [1.0, 2.0])
    assert_array_equal(early.numpy(), [1.0, 2.0])
    assert_array_equal(v.value().numpy(), [5.0, 6.0])


def test_shape_mismatch_names_variable():
    v = em.Variable([1.0, 2.0], name="bias")
    with pytest.raises(em.InvalidArgumentError,
                       match=r"assign: variable 'bias:0' has shape \(2,\), value has shape \(3,\)"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(em.InvalidArgumentError, match=r"assign_add: variable 'bias:0'"):
        v.assign_add(em.ones([2, 2]))


def test_dtype_mismatch_names_variable():
    v = em.Variable([1, 2], name="count")
    with pytest.raises(em.InvalidArgumentError,
                       match="assign: variable 'count:0' has dtype int32, value has dtype float32"):
        v.assign(em.constant([1.5, 2.5]))
    with pytest.raises(em.InvalidArgumentError, match="assign_sub: variable 'count:0'"):
        v.assign_sub(em.constant([1.5, 2.5]))


def test_conversions_and_protocols():
    v = em.Variable([[1.0, 2.0], [3.0, 4.0]])
    assert len(v) == 2
    assert [r.numpy().tolist() for r in v] == [[1.0, 2.0], [3.0, 4.0]]
    assert_array_equal(np.asarray(v), v.numpy())
    s = em.Variable(2)
    assert int(s) == 2 and float(s) == 2.0 and bool(s) and "%d" % s == "2"  # noqa: UP031
    assert list(range(s)) == [0, 1]
    assert f"{em.Variable(1.25):.1f}" == "1.2"
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(v)
    assert hash(v) == id(v)


def test_operators_and_numpy_never_wins():
    v = em.Variable([1.0, 2.0])
    for r in (v + 1, 1 + v, v * v, np.array([1.0, 1.0], np.float32) - v, -v, v @ v, v[0]):
        assert type(r) is em.Tensor
    assert_array_equal((v == 2.0).numpy(), [False, True])
    assert float(v @ v) == 5.0


# Every table op with a Variable in place of its first tensor argument.
_VAR_CASES = []
for _s in OP_SPECS:
    if _s.ref is None or _s.name in ("convert_to_tensor", "constant"):
        continue
    _c = _s.cases[0]
    _dt = _s.dtypes[0]
    _raw, _ = make_case(_s, _c, _dt)
    if _raw and isinstance(_raw[0], np.ndarray):
        _VAR_CASES.append((_s, _c, _dt))


@pytest.mark.parametrize(("spec", "case", "dtype"), _VAR_CASES,
                         ids=[s.name for s, _, _ in _VAR_CASES])
def test_variable_takes_part_in_every_op(spec, case, dtype):
    raw, kwargs = make_case(spec, case, dtype)
    args = numpy_args(raw)
    want, _, _ = run_case(spec, case, dtype)
    var_args = [em.Variable(args[0])] + [em.constant(a) if isinstance(a, np.ndarray) else a
                                         for a in args[1:]]
    got = spec.fn(*var_args, **kwargs)
    w = want if isinstance(want, (tuple, list)) else [want]
    g = got if isinstance(got, (tuple, list)) else [got]
    assert len(g) == len(w)
    for a, b in zip(g, w):
        if isinstance(b, (tuple, list)):
            continue
        assert type(a) is em.Tensor
        # a GPU's libraries round otherwise: the table's tolerance for where ``a`` lives
        rtol, atol = backend_tolerance(a.dtype, a.device, spec.tol.get(a.dtype))
        assert_allclose(a.numpy().astype(np.float64), b.numpy().astype(np.float64),
                        rtol=rtol, atol=atol)


def test_cast_to_device_and_assign_across_devices():
    from ember.core.testing import simulated_gpus

    with simulated_gpus(1):
        with em.device("/cpu:0"):
            v = em.Variable([1.0, 2.0])
        g = em.constant([3.0, 4.0])  # on /gpu:0
        v.assign(g)  # copied to the variable's device
        assert v.device == "/cpu:0"
        v.to_device("/gpu:0")
        assert v.device == "/gpu:0"
        assert v.cpu().device == "/cpu:0" and v.gpu().device == "/gpu:0"
        assert_array_equal(v.numpy(), [3.0, 4.0])


def test_get_variable_pattern():
    em.random.set_seed(1)
    v = em.Variable(em.random.normal([]), name="var")
    assert v.shape == () and v.name == "var:0"
    assert get_spec("random.normal") is not None

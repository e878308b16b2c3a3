"""Tensor behaviour: printing, dtype inference, numpy interop, Python protocols, operators."""

from __future__ import annotations

import operator
import pickle

import ml_dtypes
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em


# --- printing -----------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "text"), [
    (5, "ember.Tensor(5, shape=(), dtype=int32)"),
    ([[4.0]], "ember.Tensor([[4.]], shape=(1, 1), dtype=float32)"),
    (True, "ember.Tensor(True, shape=(), dtype=bool)"),
    ([1, 2, 3], "ember.Tensor([1 2 3], shape=(3,), dtype=int32)"),
    (np.zeros((0, 2), np.float64), "ember.Tensor([], shape=(0, 2), dtype=float64)"),
])
def test_repr_and_str(value, text):
    t = em.constant(value)
    assert repr(t) == text
    assert str(t) == text


def test_format_shows_the_values_as_tensorflow():
    """``f"{t}"`` is numpy's formatting of the values (TensorFlow 2.21:
    ``f"{tf.size(tf.zeros([40, 30]))}"`` is ``1200``), not ``str(t)``; a spec formats a
    one-element tensor's number, and a many-element one refuses it as numpy does."""
    assert f"{em.size(em.zeros([40, 30]))}" == "1200"
    assert f"{em.constant([1.0, 2.0])}" == "[1. 2.]"
    assert f"{em.constant(0.123456):.3f}" == "0.123"
    assert f"{em.constant(7):>4}" == "   7"
    assert f"{em.Variable(2.5)}" == "2.5"
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{em.constant([1.0, 2.0]):.3f}"


def test_print_large_tensor_is_summarised():
    text = repr(em.zeros([10000]))
    assert "..." in text and text.endswith("shape=(10000,), dtype=float32)")


# --- dtype inference ------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "dtype"), [
    (1, em.int32), (1.0, em.float32), (True, em.bool), (1j, em.complex64),
    ([1, 2], em.int32), ([1.0, 2], em.float32), ([[True]], em.bool),
    (2**40, em.int64),
    (np.float64(1.0), em.float64), (np.arange(3, dtype=np.int16), em.int16),
    (np.ones(2, np.float16), em.float16), (np.ones(2, ml_dtypes.bfloat16), em.bfloat16),
    (np.uint8(3), em.uint8),
])
def test_dtype_inference(value, dtype):
    assert em.constant(value).dtype == dtype
    assert em.convert_to_tensor(value).dtype == dtype


@pytest.mark.parametrize("dtype", [em.float16, em.bfloat16, em.float64, em.float32])
def test_weak_python_scalars_take_the_tensor_dtype(dtype):
    t = em.ones([2], dtype=dtype)
    for r in (t * 2.0, 2.0 * t, t + 1, t - 3, t / 2, 1 / t, t ** 2, em.maximum(t, 0.5)):
        assert r.dtype == dtype


def test_weak_int_scalars_keep_int_dtypes():
    for dt in (em.int8, em.uint8, em.int64):
        assert (em.ones([2], dtype=dt) + 1).dtype == dt
    with pytest.raises(em.InvalidArgumentError, match="add: Python int 300 does not fit"):
        em.ones([2], dtype=em.uint8) + 300


def test_numpy_scalar_is_not_weak():
    assert (em.ones([2], dtype=em.float16) * np.float32(2)).dtype == em.float32


def test_constant_with_dtype_and_shape():
    assert_array_equal(em.constant(1, dtype=em.float64, shape=[2, 2]).numpy(), np.ones((2, 2)))
    assert em.constant([1, 2], dtype="float16").dtype == em.float16
    assert_array_equal(em.constant([1, 2, 3, 4], shape=(2, 2)).numpy(), [[1, 2], [3, 4]])


def test_convert_to_tensor_refuses_silent_cast():
    with pytest.raises(em.DTypeError, match="convert_to_tensor: tensor has dtype int32, "
                                            "requested float32"):
        em.convert_to_tensor(em.constant(1), dtype=em.float32)


# --- numpy interop --------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "dtype", "bad"), [
    ([1.5, 2.0], em.int32, "[1.5]"),
    (np.array([np.nan, 1.0]), em.int64, "[nan]"),
    (np.array([3e9], np.float32), em.int32, "[3000000000.0]"),
    (np.array([-1.0, 2.0]), em.uint8, "[-1.0]"),
    ([3_000_000_000], em.int32, "[3000000000]"),
    (np.array([300], np.int64), em.uint8, "[300]"),
    (2.5, em.int32, "[2.5]"),
])
def test_a_dtype_that_would_change_the_values_is_refused(value, dtype, bad):
    """numpy truncates, maps NaN to the minimum and wraps without a word; ember refuses
    (TensorFlow refuses floats for an integer dtype) and says how em.cast converts."""
    for make in (em.constant, em.convert_to_tensor):
        with pytest.raises(em.DTypeError) as e:
            make(value, dtype=dtype)
        assert bad in str(e.value) and "em.cast" in str(e.value), str(e.value)
    v = em.Variable(np.zeros(np.shape(value)), dtype=dtype)
    with pytest.raises(em.DTypeError, match=r"assign: .*em\.cast"):
        v.assign(value)
    assert not v.numpy().any()  # the refused assignment changed nothing


def test_whole_numbers_convert_to_an_integer_dtype():
    assert em.constant([1.0, -2.0, 2.0**31 - 1], dtype=em.int32).numpy().tolist() == [
        1, -2, 2**31 - 1]
    assert em.constant(np.array([255.0], np.float32), dtype=em.uint8).numpy().tolist() == [255]
    assert em.constant(em.constant([4.0]), dtype=em.int64).numpy().tolist() == [4]
    assert em.constant(np.array([7], np.int64), dtype=em.int8).numpy().tolist() == [7]
    assert em.constant([True, False], dtype=em.int32).numpy().tolist() == [1, 0]


def test_numpy_returns_host_ndarray():
    a = em.constant([[1.0, 2.0]]).numpy()
    assert type(a) is np.ndarray
    assert_array_equal(a, [[1.0, 2.0]])


def test_numpy_is_a_copy_writing_into_it_changes_no_tensor_or_variable(device):
    """TensorFlow's numpy() copies: tensors are immutable. ember's handed its own buffer
    back on the CPU, so a write changed the tensor (and a variable, behind assign)."""
    with em.device(device):
        t = em.constant([1.0, 2.0, 3.0])
        a = t.numpy()
        a[0] = 99.0
        assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])
        v = em.Variable([1.0, 2.0])
        v.numpy()[0] = 7.0
        assert_array_equal(v.numpy(), [1.0, 2.0])


def test_numpy_of_a_scalar_is_a_numpy_scalar_as_tensorflows():
    s = em.constant(4).numpy()
    assert type(s) is np.int32 and s == 4
    assert {s: 1}[np.int32(4)] == 1  # hashable, unlike a 0-d array
    assert type(em.constant(2.5).numpy()) is np.float32
    assert type(em.Variable(1.0).numpy()) is np.float32


def test_asarray_is_a_read_only_view_on_the_cpu_and_copy_true_a_writable_copy():
    with em.device("/cpu:0"):  # (a GPU tensor's host array is a copy of its own)
        t = em.constant([1.0, 2.0])
    view = np.asarray(t)
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 5.0
    c = np.array(t, copy=True)
    c[0] = 5.0
    assert_array_equal(t.numpy(), [1.0, 2.0])


def test_array_protocol_and_numpy_functions():
    t = em.constant([[1.0, 2.0], [3.0, 4.0]])
    a = np.ones((2, 2), np.float32) * 2
    r = np.multiply(t, a)
    assert type(r) is np.ndarray
    assert_array_equal(r, [[2.0, 4.0], [6.0, 8.0]])
    assert_array_equal(np.asarray(t, dtype=np.float64), t.numpy().astype(np.float64))
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert_allclose(np.mean(t), 2.5)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.pow, operator.lt, operator.ge, operator.eq])
def test_numpy_never_wins(op):
    a = np.array([1.0, 2.0], np.float32)
    t = em.constant([3.0, 4.0])
    r = op(a, t)
    assert type(r) is em.Tensor
    assert_array_equal(r.numpy(), op(a, t.numpy()))


def test_numpy_array_operand_keeps_its_dtype():
    r = em.constant([1.0, 2.0]) + np.array([1.0, 2.0])
    assert r.dtype == em.float64


# --- Python scalar conversions --------------------------------------------------------------
def test_scalar_conversions():
    t = em.constant(3)
    assert int(t) == 3 and float(t) == 3.0 and bool(t) is True and complex(t) == 3
    assert "%d" % t == "3"  # noqa: UP031
    assert f"{em.constant(2.5):.2f}" == "2.50"
    assert list(range(t)) == [0, 1, 2]
    assert [10, 20, 30, 40][t] == 40
    assert bool(em.constant(0.0)) is False
    assert int(em.constant([[7]])) == 7  # one element, any rank


@pytest.mark.parametrize("fn", [int, float, bool, complex])
def test_scalar_conversion_of_non_scalar_raises(fn):
    with pytest.raises(em.InvalidArgumentError, match=r"needs a tensor with one element, "
                                                      r"got shape \(2,\)"):
        fn(em.constant([1, 2]))


def test_index_needs_integer_tensor():
    with pytest.raises(em.DTypeError, match="only integer tensors can be used as an index"):
        range(em.constant(2.0))


def test_if_on_tensor_condition():
    x = em.constant(2)
    assert (x > 0) is not True  # a tensor, not a Python bool
    taken = "yes" if x > 0 else "no"
    assert taken == "yes"


# --- equality, hashing, iteration, length ----------------------------------------------------
def test_eq_is_elementwise():
    r = em.constant([1, 2, 3]) == 2
    assert type(r) is em.Tensor and r.dtype == em.bool
    assert_array_equal(r.numpy(), [False, True, False])
    assert_array_equal((em.constant([1, 2]) != em.constant([1, 3])).numpy(), [False, True])
    assert (em.constant(0) == None) is False  # noqa: E711
    assert (em.constant(0) != None) is True  # noqa: E711


def test_hash_is_identity():
    a, b = em.constant(1), em.constant(1)
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b" and len({a, b, a}) == 2
    assert a.ref() is a


def test_iteration_and_len():
    t = em.constant([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(type(r) is em.Tensor for r in rows)
    assert_array_equal(rows[2].numpy(), [5, 6])
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(em.constant(1))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(em.constant(1)).__next__()


def test_no_pickling():
    with pytest.raises(TypeError, match="ember tensors are not pickled"):
        pickle.dumps(em.constant(1.0))


def test_immutable_no_item_assignment():
    t = em.constant([1, 2])
    with pytest.raises(TypeError):
        t[0] = 5
    with pytest.raises(AttributeError):
        t.foo = 1


def test_inplace_operator_rebinds():
    t = em.constant([1, 2])
    before = t
    t += 5
    assert t is not before
    assert_array_equal(before.numpy(), [1, 2])
    assert_array_equal(t.numpy(), [6, 7])


def test_properties():
    t = em.zeros([2, 3, 4])
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.size == 24 and t.dtype == em.float32
    assert t.device == em.current_device().name  # /gpu:0 where a GPU is present
    assert t.T.shape == (4, 3, 2)


# --- every operator ---------------------------------------------------------------------------
A = np.array([[1.5, -2.0], [3.0, 4.0]], np.float32)
B = np.array([[2.0, 0.5], [-1.0, 3.0]], np.float32)
IA = np.array([[5, -6], [7, 12]], np.int32)
IB = np.array([[2, 3], [-4, 5]], np.int32)

BINARY = [
    (operator.add, A, B), (operator.sub, A, B), (operator.mul, A, B),
    (operator.truediv, A, B), (operator.floordiv, A, B), (operator.mod, A, B),
    (operator.floordiv, IA, IB), (operator.mod, IA, IB),
    (operator.pow, np.abs(A), B), (operator.matmul, A, B),
    (operator.lt, A, B), (operator.le, A, A), (operator.gt, A, B), (operator.ge, A, B),
    (operator.eq, A, A), (operator.ne, A, B),
    (operator.and_, IA, IB), (operator.or_, IA, IB), (operator.xor, IA, IB),
    (operator.and_, A > 0, B > 0), (operator.or_, A > 0, B > 0), (operator.xor, A > 0, B > 0),
    (operator.lshift, np.abs(IA), np.abs(IB)), (operator.rshift, np.abs(IA), np.abs(IB)),
]


@pytest.mark.parametrize(("op", "x", "y"), BINARY,
                         ids=[f"{o.__name__}-{x.dtype}" for o, x, _ in BINARY])
def test_binary_operators(op, x, y, device):
    with em.device(device):
        tx, ty = em.constant(x), em.constant(y)
    want = op(x, y)
    for got in (op(tx, ty), op(tx, y), op(x, ty)):
        assert type(got) is em.Tensor and got.dtype == want.dtype
        assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize(("op", "x"), [(operator.neg, A), (operator.pos, A), (abs, A),
                                       (operator.invert, IA), (operator.invert, A > 0)])
def test_unary_operators(op, x):
    got = op(em.constant(x))
    assert type(got) is em.Tensor
    assert_array_equal(got.numpy(), op(x))


@pytest.mark.parametrize(("op", "scalar", "x"), [
    (operator.add, 2, IA), (operator.sub, 2, IA), (operator.mul, 3, IA),
    (operator.truediv, 1.0, A), (operator.floordiv, 20, IB), (operator.mod, 20, IB),
    (operator.pow, 2.0, A), (operator.and_, 6, IA), (operator.or_, 6, IA),
    (operator.xor, 6, IA),
])
def test_reflected_operators_with_python_scalars(op, scalar, x):
    got = op(scalar, em.constant(x))
    assert got.dtype == x.dtype
    assert_allclose(got.numpy(), op(np.asarray(scalar, x.dtype), x), rtol=1e-6)


def test_getitem_operator():
    t = em.constant(A)
    assert_array_equal(t[1:, ::-1].numpy(), A[1:, ::-1])
    assert_array_equal(t[em.constant([1, 0])].numpy(), A[[1, 0]])
    assert_array_equal(t[t > 0].numpy(), A[A > 0])
    assert float(t[0, 1]) == -2.0


def test_a_scalar_prints_in_its_own_dtypes_digits():
    # TensorFlow prints float32 0.1 as 0.1 (a Python float would show 0.10000000149011612)
    assert repr(em.constant(0.1)) == "ember.Tensor(0.1, shape=(), dtype=float32)"
    assert repr(em.constant(0.1, dtype=em.float16)) == "ember.Tensor(0.1, shape=(), dtype=float16)"
    assert repr(em.constant(6.0)) == "ember.Tensor(6.0, shape=(), dtype=float32)"
    assert repr(em.constant(7)) == "ember.Tensor(7, shape=(), dtype=int32)"


def test_tensorflows_shape_methods_and_newaxis():
    t = em.zeros([2, 3])
    assert t.get_shape() == (2, 3) and em.Variable([1.0]).get_shape() == (1,)
    t.set_shape([None, 3])  # an eager shape is known: set_shape checks it
    t.set_shape(None)
    with pytest.raises(ValueError, match=r"shape \(2, 3\) is not compatible with the "
                                         r"supplied shape \(3, 3\)"):
        t.set_shape([3, 3])
    with pytest.raises(ValueError, match="not compatible"):
        t.set_shape([2])
    assert em.newaxis is None and t[:, em.newaxis].shape == (2, 1, 3)


@pytest.mark.parametrize("axes, match", [
    (([0, 1], [0]), "pair 2 axes of a with 1 of b"),
    (3, r"axes=3 must be in \[0, 2\]"),
    ((5, 0), "axis 5 is out of range for rank 2"),
    ("x", "must be an int or a pair"),
])
def test_tensordot_refuses_axes_it_cannot_pair(axes, match):
    with pytest.raises(em.InvalidArgumentError, match=match):
        em.tensordot(em.ones([3, 4]), em.ones([3, 4]), axes)


def test_l2_normalize_floors_the_norm_at_sqrt_epsilon_as_tensorflow():
    # x * rsqrt(max(sum(x**2), epsilon)): a vector shorter than sqrt(1e-12) = 1e-6 is
    # scaled by 1e6, not to unit length
    x = em.constant([[1e-8, -2e-8], [3.0, 4.0]])
    np.testing.assert_allclose(em.nn_ops.l2_normalize(x, axis=1).numpy(),
                               [[0.01, -0.02], [0.6, 0.8]], rtol=1e-5)
    np.testing.assert_allclose(em.nn_ops.l2_normalize(x, dim=1).numpy()[1], [0.6, 0.8])
    with pytest.raises(em.InvalidArgumentError, match="give axis= or its TF 1.x spelling"):
        em.nn_ops.l2_normalize(x, axis=1, dim=1)


def test_a_list_holding_tensors_packs_with_the_first_tensor_s_dtype():
    a, b = em.constant(2.0), em.constant([1.0, 2.0])
    t = em.convert_to_tensor([a, 3, np.float64(4.5)])
    assert t.dtype == em.float32
    np.testing.assert_array_equal(t.numpy(), [2.0, 3.0, 4.5])
    nested = em.convert_to_tensor([[a, 1.0], (2.0, em.Variable(5.0))])
    np.testing.assert_array_equal(nested.numpy(), [[2.0, 1.0], [2.0, 5.0]])
    with pytest.raises(em.DTypeError, match="tensor has dtype int32, requested float32"):
        em.convert_to_tensor([a, em.constant(1)])
    with pytest.raises(em.InvalidArgumentError, match="entry 1 has shape"):
        em.convert_to_tensor([a, b])
    assert em.convert_to_tensor([a, 1], dtype=em.float32).dtype == em.float32
    assert em.reduce_sum([a, a]).numpy() == 4.0  # ops take such lists too


def test_range_and_linspace_infer_tensorflow_s_dtypes():
    assert em.range(5).dtype == em.int32 and em.range(1.0, 3).dtype == em.float32
    assert em.range(np.float64(1.0), 3.0).dtype == em.float64   # numpy's dtype kept
    assert em.range(em.constant(1, em.int64), 3).dtype == em.int64
    assert em.range(2**40, 2**40 + 2).dtype == em.int64
    assert em.linspace(em.constant(-2.0, em.float64), 2.0, 5).dtype == em.float64
    assert em.linspace(np.float16(0), 1, 3).dtype == em.float16
    assert em.linspace(-2, 2, 5).dtype == em.float32  # (TensorFlow: float64 for integers)
    np.testing.assert_array_equal(em.linspace(-2, 2, 5).numpy(), [-2, -1, 0, 1, 2])

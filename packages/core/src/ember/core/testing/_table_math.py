"""Specs for the element-wise math family (ember.core._ops.math and relu)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._ops import math as m
from .._ops.define_nn import relu
from .._promote import result_type
from ._spec import (
    BF16,
    BOOL,
    F16,
    F32,
    F64,
    FLOATS,
    I32,
    I64,
    INTS,
    LOW,
    NUMERIC,
    U8,
    Case,
    OpSpec,
    args,
    arr,
    binary,
    case,
    sample,
    to_float,
    unary,
    vectorize_float,
    weak,
)

_f = to_float


def _special(rng: np.random.Generator, dt: np.dtype) -> list[Any]:
    x = sample(rng, (2, 4), dt, "any")
    x[0, 0], x[0, 1], x[1, 2] = np.nan, np.inf, -np.inf
    return [x]


_SPECIAL = (case("specials", _special), case("empty", args(arr(0, 2))))
_ALL = NUMERIC + (BOOL,)


def _unaries() -> list[OpSpec]:
    u = unary
    return [
        u("negative", m.negative, np.negative, dtypes=NUMERIC + LOW, torch="neg"),
        u("abs", m.abs, np.abs, dtypes=NUMERIC + LOW, torch="abs"),
        u("sign", m.sign, np.sign, dtypes=NUMERIC, torch="sign"),
        u("square", m.square, np.square, dtypes=NUMERIC + LOW, torch="square"),
        u("sqrt", m.sqrt, lambda x: np.sqrt(_f(x)), domain="positive",
          dtypes=NUMERIC + LOW, torch="sqrt"),
        u("rsqrt", m.rsqrt, lambda x: 1 / np.sqrt(_f(x)), domain="positive", torch="rsqrt",
          dtypes=FLOATS + (I32,)),
        u("reciprocal", m.reciprocal, lambda x: np.reciprocal(_f(x)), torch="reciprocal",
          dtypes=FLOATS + (I32,)),
        u("exp", m.exp, lambda x: np.exp(_f(x)), dtypes=NUMERIC + LOW, torch="exp"),
        u("expm1", m.expm1, lambda x: np.expm1(_f(x)), torch="expm1"),
        u("log", m.log, lambda x: np.log(_f(x)), domain="positive", dtypes=NUMERIC + LOW,
          torch="log"),
        u("log1p", m.log1p, lambda x: np.log1p(_f(x)), domain="positive", torch="log1p"),
        u("sin", m.sin, lambda x: np.sin(_f(x)), torch="sin", dtypes=FLOATS + (I32,)),
        u("cos", m.cos, lambda x: np.cos(_f(x)), torch="cos"),
        u("tan", m.tan, lambda x: np.tan(_f(x)), domain="unit", torch="tan"),
        u("tanh", m.tanh, lambda x: np.tanh(_f(x)), dtypes=FLOATS + LOW, torch="tanh"),
        u("asin", m.asin, lambda x: np.arcsin(_f(x)), domain="unit", torch="asin"),
        u("acos", m.acos, lambda x: np.arccos(_f(x)), domain="unit", torch="acos"),
        u("atan", m.atan, lambda x: np.arctan(_f(x)), domain="any", torch="atan"),
        u("sinh", m.sinh, lambda x: np.sinh(_f(x)), domain="any", torch="sinh"),
        u("cosh", m.cosh, lambda x: np.cosh(_f(x)), torch="cosh"),
        u("asinh", m.asinh, lambda x: np.arcsinh(_f(x)), domain="any", torch="asinh"),
        u("acosh", m.acosh, lambda x: np.arccosh(_f(x)), domain="above_one", torch="acosh"),
        u("atanh", m.atanh, lambda x: np.arctanh(_f(x)), domain="unit", torch="atanh"),
        u("erf", m.erf, vectorize_float(math.erf), torch="erf", tol={F32: (1e-5, 1e-6)}),
        u("sigmoid", m.sigmoid, lambda x: 1 / (1 + np.exp(-_f(x))), dtypes=FLOATS + LOW,
          torch="sigmoid", tol={F64: (1e-12, 1e-14)}),
        u("softplus", m.softplus, lambda x: np.log1p(np.exp(_f(x))),
          torch="nn.functional.softplus"),
        u("floor", m.floor, np.floor, dtypes=FLOATS + LOW, torch="floor"),
        u("ceil", m.ceil, np.ceil, dtypes=FLOATS + LOW, torch="ceil"),
        u("round", m.round, np.round, dtypes=FLOATS, torch="round"),
        u("relu", relu, lambda x: np.maximum(x, 0), dtypes=NUMERIC + LOW, torch="relu"),
        u("identity", m.identity, np.copy, dtypes=_ALL + LOW, torch="clone"),
        u("stop_gradient", m.stop_gradient, np.copy, dtypes=_ALL, torch="Tensor.detach"),
        u("check_numerics", m.check_numerics, lambda x, message: np.copy(x),
          dtypes=FLOATS + LOW, torch="clone", kwargs={"message": "checked"}),
        OpSpec("debugging.check_indices", m.check_indices,
               lambda x, limit, message: np.copy(x),
               [Case("in_range", lambda rng, dt: [rng.integers(0, 5, (3, 4)).astype(dt)]),
                Case("empty", lambda rng, dt: [np.zeros((0,), dt)])],
               INTS + (U8,), False, (), None, kwargs={"limit": 5, "message": "ids"}),
        OpSpec("debugging.check_range", m.check_range,
               lambda x, minval, maxval, message: np.copy(x),
               [Case("in_range", lambda rng, dt: [rng.uniform(0, 1, (3, 4)).astype(dt)]),
                Case("empty", lambda rng, dt: [np.zeros((0,), dt)])],
               FLOATS, True, (0,), None,
               kwargs={"minval": 0.0, "maxval": 1.0, "message": "p"}),
        u("logical_not", m.logical_not, np.logical_not, dtypes=(BOOL,),
          differentiable=False, torch="logical_not"),
        u("invert", m.invert, np.invert, dtypes=INTS + (U8, BOOL), differentiable=False,
          torch="bitwise_not"),
        OpSpec("isnan", m.isnan, np.isnan, _SPECIAL, FLOATS + (F16,), False, (), None),
        OpSpec("isinf", m.isinf, np.isinf, _SPECIAL, FLOATS, False, (), None),
        OpSpec("isfinite", m.isfinite, np.isfinite, _SPECIAL, FLOATS, False, (), None),
    ]


def _binaries() -> list[OpSpec]:
    b = binary
    lat = ("lattice_a", "lattice_b")
    cmp = {"domains": ("grid", "grid"), "differentiable": False, "py_scalar": weak(1.0, 1)}
    logic = {"dtypes": (BOOL,), "differentiable": False, "py_scalar": weak(0.0)}
    bits = {"dtypes": INTS + (U8, BOOL), "differentiable": False, "py_scalar": weak(0.0, 6)}
    shift = {"dtypes": INTS + (U8,), "domains": ("small", "shift"), "differentiable": False}
    return [
        b("add", m.add, np.add, dtypes=NUMERIC + LOW + (U8,), torch="add",
          py_scalar=weak(1.5)),
        b("subtract", m.subtract, np.subtract, dtypes=NUMERIC + LOW, torch="sub",
          py_scalar=weak(1.5)),
        b("multiply", m.multiply, np.multiply, dtypes=NUMERIC + LOW + (U8,), torch="mul",
          py_scalar=weak(2.5)),
        b("divide", m.divide, lambda x, y: np.true_divide(_f(np.asarray(x)), _f(np.asarray(y))),
          dtypes=NUMERIC + LOW, torch="div",
          py_scalar=weak(4.0)),
        _floor_division(b("floordiv", m.floordiv, _floordiv_ref, dtypes=NUMERIC,
                          differentiable=False, py_scalar=weak(0.75, 2)), "floor_divide"),
        _floor_division(b("floormod", m.floormod, np.mod, dtypes=NUMERIC,
                          py_scalar=weak(0.75, 2), domains=lat), "remainder"),
        b("pow", m.pow, np.power, domains=("positive", "real"), torch="pow",
          py_scalar=weak(2.0)),
        OpSpec("pow.int", m.pow, np.power, (
            case("ints", args(arr(3, 4), arr(1, 4, domain="small"))),
            case("int_scalar", args(arr(3), 3))), INTS, True, ()),
        b("maximum", m.maximum, np.maximum, domains=lat, dtypes=NUMERIC + (F16,),
          torch="maximum"),
        b("minimum", m.minimum, np.minimum, domains=lat, dtypes=NUMERIC, torch="minimum"),
        b("atan2", m.atan2, lambda y, x: np.arctan2(_f(y), _f(x)), torch="atan2"),
        b("squared_difference", m.squared_difference, lambda x, y: np.square(x - y),
          dtypes=NUMERIC, py_scalar=weak(0.5)),
        OpSpec("add_n", lambda *xs: m.add_n(list(xs)), lambda *xs: sum(xs[1:], xs[0]), (
            case("three", args(arr(3, 4), arr(3, 4), arr(3, 4))),
            case("scalars", args(arr(), arr(), arr()))), NUMERIC, True, (0, 1, 2)),
        OpSpec("add_n.one", lambda x: m.add_n([x]), lambda x: x, (
            case("one", args(arr(2))),), NUMERIC, True, (0,)),
        b("equal", m.equal, np.equal, dtypes=_ALL, torch="eq", **cmp),
        b("not_equal", m.not_equal, np.not_equal, dtypes=_ALL, torch="ne", **cmp),
        b("less", m.less, np.less, dtypes=NUMERIC, torch="lt", **cmp),
        b("less_equal", m.less_equal, np.less_equal, dtypes=NUMERIC, torch="le", **cmp),
        b("greater", m.greater, np.greater, dtypes=NUMERIC, torch="gt", **cmp),
        b("greater_equal", m.greater_equal, np.greater_equal, dtypes=NUMERIC, torch="ge",
          **cmp),
        b("logical_and", m.logical_and, np.logical_and, torch="logical_and", **logic),
        b("logical_or", m.logical_or, np.logical_or, torch="logical_or", **logic),
        b("logical_xor", m.logical_xor, np.logical_xor, torch="logical_xor", **logic),
        b("bitwise_and", m.bitwise_and, np.bitwise_and, torch="bitwise_and", **bits),
        b("bitwise_or", m.bitwise_or, np.bitwise_or, torch="bitwise_or", **bits),
        b("bitwise_xor", m.bitwise_xor, np.bitwise_xor, torch="bitwise_xor", **bits),
        b("left_shift", m.left_shift, np.left_shift, torch="bitwise_left_shift", **shift),
        b("right_shift", m.right_shift, np.right_shift, torch="bitwise_right_shift", **shift),
    ]


def _exact_multiples(rng: np.random.Generator, dt: np.dtype) -> list[Any]:
    """x a whole multiple of y in decimals (1.05 = 3 * 0.35) but not in binary: there
    numpy's fmod-based answer and cupy's floor(x / y) differ (float32 1.05 % 0.35 is
    0.34999996 in numpy, -2.98e-08 from cupy; 1.8 // -0.6 is -4 in float64 numpy, while
    floor(1.8 / -0.6), TensorFlow's floordiv, is -3)."""
    if np.dtype(dt).kind in "iu":
        return [np.array([6, -6, 9, 7, -7, 0], dt), np.array([3, 3, -3, 2, -2, 5], dt)]
    return [np.array([1.05, -0.7, 2.1, 1.8, -1.95, 1.75, -1.05], dt),
            np.array([0.35, 0.35, 0.7, -0.6, -0.65, -0.35, 0.35], dt)]


def _division_edges(rng: np.random.Generator, dt: np.dtype) -> list[Any]:
    """Signed zeros, infinities, NaN and zero divisors; for integers signs, zero and the
    one overflow, the minimum // -1 (numpy wraps); an integer zero divisor raises, as
    TensorFlow's (``tests/test_tf_core_parity.py``)."""
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        return [np.array([7, -7, 0, info.min, info.max, -5, 7, -7], dt),
                np.array([-2, 2, -3, -1, -1, 3, 7, -7], dt)]
    inf, nan = math.inf, math.nan
    return [np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, inf, -inf, nan, 1.0, -1.0, 1.0, -1.0,
                      3.0, 0.0], dt),
            np.array([1.0, 1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 2.0, 1.0, inf, inf, -inf, 0.0,
                      -0.0, 0.0], dt)]


def _floordiv_ref(x: Any, y: Any) -> np.ndarray:
    """TensorFlow's floordiv: numpy's for integers, ``floor(x / y)`` for floats (numpy's
    own, Python's, differs at exact multiples and infinities: -1 // inf is -1 there)."""
    x, y = np.asarray(x), np.asarray(y)
    if np.result_type(x, y).kind in "iub":
        return np.floor_divide(x, y)  # type: ignore[no-any-return]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor(x / y)  # type: ignore[no-any-return]


def _floor_division(spec: OpSpec, torch_name: str) -> OpSpec:
    """``spec`` with the cases where GPUs compute floor division and modulo otherwise
    (ember gives one answer on every device), and PyTorch's ``torch_name`` as the
    reference except for the minimum // -1 (a trap in C). For floats, TensorFlow's
    floordiv is ``floor(x / y)`` (PyTorch's ``floor_divide`` is Python's), and the
    gradient of floormod for y is ``-floor(x / y)`` (TensorFlow's FloorMod gradient;
    PyTorch's uses its own quotient)."""

    def torch_ref(T: Any, x: Any, y: Any) -> Any:
        y = y if isinstance(y, T.Tensor) else T.tensor(y)
        if not y.is_floating_point() and (bool((y == 0).any()) or (
                bool((y == -1).any()) and bool((x == T.iinfo(x.dtype).min).any()))):
            return None
        if not y.is_floating_point():
            return getattr(T, torch_name)(x, y)
        if torch_name == "floor_divide":
            return T.floor(x / y)
        return _torch_floormod(T).apply(x, y)

    cases = (case("exact_multiples", _exact_multiples), case("division_edges", _division_edges))
    return dataclasses.replace(spec, cases=spec.cases + cases, torch=torch_ref)


def _torch_floormod(T: Any) -> Any:
    """``torch.remainder`` with TensorFlow's gradient: ``dy`` for x, ``-dy * floor(x / y)``
    for y (each summed to its operand's shape)."""

    class FloorMod(T.autograd.Function):  # type: ignore[misc, name-defined]
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            ctx.save_for_backward(x, y)
            return T.remainder(x, y)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, y = ctx.saved_tensors
            gy = -g * T.floor(x / y)
            return g.sum_to_size(x.shape), gy.sum_to_size(y.shape)

    return FloorMod


def _cast_ref(x: np.ndarray, dtype: Any) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind not in "iu" or x.dtype.kind not in "fV":
        return x.astype(dtype)
    info = np.iinfo(dt)

    def one(v: float) -> int:  # exact, in Python integers
        if math.isnan(v):
            return 0
        if math.isinf(v):
            return info.max if v > 0 else info.min
        return min(max(math.trunc(v), info.min), info.max)

    return np.array([one(float(v)) for v in x.ravel()], dtype=dt).reshape(x.shape)


# floats C leaves undefined when cast to an integer type (NaN, infinities, out of range),
# and the edges of the ranges; other dtypes get a few small integers
_CAST_EDGES = (math.nan, math.inf, -math.inf, 3e9, -3e9, 1e19, -1e19, 2.7, -2.7, 127.5,
               -128.9, -129.0, 255.9, 256.0, -0.5, -1.0, 65504.0, 4294967040.0)


def _cast_edges(rng: np.random.Generator, dt: np.dtype) -> list[Any]:
    if np.dtype(dt).kind not in "fV":
        return [np.arange(-3, 4).astype(dt)]
    with np.errstate(over="ignore"):
        return [np.array(_CAST_EDGES).astype(dt)]


def _where_ref(c: np.ndarray, x: Any = None, y: Any = None) -> np.ndarray:
    if x is None:
        return np.stack(np.nonzero(c), axis=-1).astype(np.int64)
    return np.where(c, x, y)


def _clip_ref(t: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
    """TensorFlow's order: the upper bound first, so lo > hi gives lo."""
    dt = result_type(t, lo, hi)  # Python bounds are weakly typed (docs/guide/dtypes.md)
    return np.maximum(np.minimum(t.astype(dt), hi), lo).astype(dt)


def _bool(*shape: int) -> Any:
    return lambda rng, dt: sample(rng, shape, BOOL)


def _others() -> list[OpSpec]:
    lat = "lattice_a"
    return [
        OpSpec("cast", m.cast, _cast_ref, (
            case("to_int32", args(arr(3, 4, domain="any")), dtype=I32),
            case("to_float16", args(arr(5)), dtype=F16),
            case("to_bfloat16", args(arr(5)), dtype=BF16),
            case("to_float64", args(arr(2, 3)), dtype=F64),
            case("to_bool", args(arr(4, domain="grid")), dtype=BOOL),
            case("empty", args(arr(0, 2)), dtype=I32),
            *(case(f"edges_to_{np.dtype(d).name}", _cast_edges, dtype=d)
              for d in (np.int8, np.uint8, np.int16, np.uint16, I32, np.uint32, I64,
                        np.uint64)),
        ), NUMERIC + LOW + (BOOL,), True, (0,), _torch_cast),
        OpSpec("where", m.where, _where_ref, (
            case("same", args(_bool(3, 4), arr(3, 4), arr(3, 4))),
            case("broadcast", args(_bool(3, 1), arr(1, 4), arr(3, 4))),
            case("scalar_branch", lambda rng, dt: [sample(rng, (2, 3), BOOL),
                                                   sample(rng, (2, 3), dt), weak(0.0, 0)(dt)]),
            case("scalar_zero_first", lambda rng, dt: [sample(rng, (2, 3), BOOL),
                                                       weak(0.0, 0)(dt), sample(rng, (2, 3), dt)]),
            case("empty", args(_bool(0, 2), arr(0, 2), arr(0, 2))),
        ), NUMERIC + (BOOL,), True, (1, 2), lambda T, c, x, y: T.where(c, x, y)),
        OpSpec("where_indices", m.where, _where_ref, (
            case("matrix", args(arr(3, 4))), case("vector", args(arr(6))),
            case("empty", args(arr(0, 3))),
        ), (BOOL, I32), False, (), lambda T, c: T.nonzero(c)),
        OpSpec("clip_by_value", m.clip_by_value, _clip_ref, (
            case("python_bounds", args(arr(3, 4, domain=lat), -0.5, 0.5)),
            case("tensor_bounds", args(arr(3, 4, domain=lat), arr(1, 4, domain="lattice_b"),
                                       lambda rng, dt: sample(rng, (3, 1), dt, "lattice_b") + 2)),
            case("scalar", args(arr(domain=lat), -1, 1)),
        ), NUMERIC, True, (0,), lambda T, t, lo, hi: T.clamp(T.clamp(t, max=hi), min=lo)),
    ]


def _torch_dtype(T: Any, dtype: Any) -> Any:
    return getattr(T, np.dtype(dtype).name if np.dtype(dtype) != BOOL else "bool")


def _torch_cast(T: Any, x: Any, dtype: Any) -> Any:
    """``x.to(dtype)``; None where C leaves a float-to-integer cast undefined (NaN,
    infinities, out of range), which PyTorch leaves undefined too."""
    dt = np.dtype(dtype)
    if dt.kind in "iu" and x.is_floating_point():
        info = np.iinfo(dt)
        v = x.double()
        if not bool(((v > info.min - 1.0) & (v < info.max + 1.0)).all()):
            return None
    return x.to(_torch_dtype(T, dtype))


def specs() -> list[OpSpec]:
    return _unaries() + _binaries() + _others()

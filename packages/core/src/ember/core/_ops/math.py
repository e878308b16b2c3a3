"""Element-wise math: arithmetic, transcendental functions, comparisons, logic, cast."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtypes
from .._device_errors import check_nonzero
from .._errors import DTypeError, InvalidArgumentError
from .._registry import execute, register
from .._tensor import Tensor
from . import _args
from ._define import _F32, binary, to_float, unary

F = "math"

# --- arithmetic -------------------------------------------------------------------------
add = binary("add", "add", F, "x + y, element-wise with broadcasting.")
subtract = binary("subtract", "subtract", F, "x - y, element-wise.")
multiply = binary("multiply", "multiply", F, "x * y, element-wise.")
divide = binary("divide", lambda be, x, y: be.xp.true_divide(to_float(x), to_float(y)), F,
                "x / y, element-wise true division; integers and bools divide to float32 "
                "(float64 only when an operand is float64).",
                cuda="{0} / {1}")


def _floordiv(be: Any, x: Any, y: Any) -> Any:
    if not _dtypes.is_floating(x.dtype):
        _no_zero_divisor(be, y, "floordiv")
        return _int_floordiv(be.xp, x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        return be.xp.floor(x / y)  # TensorFlow's: floor(x / y) (-1 // inf is -0.0)


def _floormod(be: Any, x: Any, y: Any) -> Any:
    if not _dtypes.is_floating(x.dtype):
        _no_zero_divisor(be, y, "floormod")
        return be.xp.remainder(x, y)  # cupy's integer kernel gives numpy's answers
    return _float_divmod(be.xp, x, y)[1]


def _no_zero_divisor(be: Any, y: Any, op: str) -> None:
    """Integer division by zero raises, as TensorFlow's: at once for host arrays; on a
    GPU the op records the check in the device's error flag and the next read of a result
    there raises (``_device_errors``: no sync per call)."""
    what = "Integer division by zero: the divisor y has zeros"
    if be.xp is np:
        zeros = int(np.count_nonzero(y == 0)) if y.size else 0
        if zeros:
            raise InvalidArgumentError(f"{op}: {what} ({zeros} of {y.size}, dtype "
                                       f"{y.dtype}, shape {tuple(y.shape)})")
    else:
        check_nonzero(be, y, op, what)


def _int_floordiv(xp: Any, x: Any, y: Any) -> Any:
    """Integer floor division, numpy's answer on every device (a zero divisor is refused
    first, see ``_no_zero_divisor``); the one overflow, the type's minimum // -1, wraps to
    the minimum (numpy's answer; C leaves it undefined, so a GPU's kernel may give
    anything)."""
    if x.dtype.kind != "i":
        return xp.floor_divide(x, y)
    minus_one = y == -1
    return xp.where(minus_one, -x, xp.floor_divide(x, xp.where(minus_one, 1, y)))


def _float_divmod(xp: Any, x: Any, y: Any) -> tuple[Any, Any]:
    """Float ``(x // y, x % y)`` as numpy computes them, the same on every device
    (``floormod`` uses the remainder; ``floordiv`` is TensorFlow's ``floor(x / y)``).

    numpy starts from the exact ``fmod`` and corrects it (Python's semantics, CPython's
    ``float_divmod``); cupy computes ``floor(x / y)`` and ``x - floor(x / y) * y`` instead
    (an FMA on a GPU), which at exact multiples gives another quotient and a remainder of
    the wrong sign: float32 ``1.05 % 0.35`` was -2.98e-08 on a GPU, where numpy gives
    0.34999996. So ember computes numpy's way with element-wise steps every backend has:
    ``x % y`` takes the sign of ``y`` (a zero remainder too: ``-1.0 % 1.0`` is +0.0,
    ``1.0 % -1.0`` -0.0), ``x - (x % y)`` is a whole multiple of ``y`` up to rounding
    (the quotient is snapped to the nearest whole number), and a zero divisor gives
    ``x / y`` (inf or NaN) and a NaN remainder, as numpy. float16 and bfloat16 compute in
    float32, as numpy does for float16.
    """
    dt = x.dtype
    if dt.itemsize < 4:
        x, y = x.astype(np.float32), y.astype(np.float32)
    zero = x.dtype.type(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mod = xp.fmod(x, y)
        div = (x - mod) / y
        fix = (mod != 0) & ((y < 0) != (mod < 0))  # fmod has the sign of x: move it to y's
        mod = xp.where(fix, mod + y, mod)
        mod = xp.where(mod == 0, xp.copysign(zero, y), mod)
        div = xp.where(fix, div - 1, div)
        q = xp.floor(div)
        q = xp.where(div - q > 0.5, q + 1, q)  # snapped to the nearest whole number
        ratio = x / y
        q = xp.where(div == 0, xp.copysign(zero, ratio), q)
        q = xp.where(y == 0, ratio, q)
    if dt.itemsize < 4:
        return q.astype(dt), mod.astype(dt)
    return q, mod


floordiv = binary("floordiv", _floordiv, F,
                  "x // y, element-wise floor division: TensorFlow's, floor(x / y) for "
                  "floats (-1. // inf is -0.0, -inf // -7.3 is inf; Python's and numpy's "
                  "answers differ there) and the floor of the quotient for integers. "
                  "Integer division by zero raises InvalidArgumentError, as TensorFlow's "
                  "(on a GPU at the next read of a result there, without a sync per "
                  "call).", differentiable=False)
floormod = binary("floormod", _floormod, F,
                  "x % y with the sign of y (Python's modulo), element-wise: numpy's answer "
                  "on every device, where cupy's own differs at exact multiples (float32 "
                  "1.05 % 0.35 is 0.34999996, not -3e-08). Integer modulo by zero raises "
                  "InvalidArgumentError, as TensorFlow's (on a GPU at the next read of a "
                  "result there, without a sync per call); a float zero divisor gives NaN.")
pow = binary("pow", "power", F, "x ** y, element-wise.")
maximum = binary("maximum", "maximum", F, "Element-wise maximum.")
minimum = binary("minimum", "minimum", F, "Element-wise minimum.")
atan2 = binary("atan2", lambda be, y, x: be.xp.arctan2(to_float(y), to_float(x)), F,
               "Element-wise arctangent of y / x with the quadrant from both signs.")
truediv = divide
mod = floormod

negative = unary("negative", "negative", F, "-x, element-wise.")
abs = unary("abs", "abs", F, "|x|, element-wise.")
sign = unary("sign", "sign", F, "-1, 0 or 1 by the sign of x (gradient 0).")
square = unary("square", "square", F, "x * x, element-wise.")
sqrt = unary("sqrt", lambda be, x: be.xp.sqrt(to_float(x)), F, "Square root, element-wise.",
             cuda="sqrt({0})")
rsqrt = unary("rsqrt", lambda be, x: 1 / be.xp.sqrt(to_float(x)), F, "1 / sqrt(x), element-wise.",
              cuda="1 / sqrt({0})")
reciprocal = unary("reciprocal", lambda be, x: be.xp.reciprocal(to_float(x)), F,
                   "1 / x, element-wise.",
                   cuda="1 / {0}")
exp = unary("exp", lambda be, x: be.xp.exp(to_float(x)), F, "e ** x, element-wise.",
            cuda="exp({0})")
expm1 = unary("expm1", lambda be, x: be.xp.expm1(to_float(x)), F, "exp(x) - 1, accurate near 0.",
              cuda="expm1({0})")
log = unary("log", lambda be, x: be.xp.log(to_float(x)), F, "Natural logarithm, element-wise.",
            cuda="log({0})")
log1p = unary("log1p", lambda be, x: be.xp.log1p(to_float(x)), F, "log(1 + x), accurate near 0.",
              cuda="log1p({0})")
sin = unary("sin", lambda be, x: be.xp.sin(to_float(x)), F, "Sine, element-wise.",
            cuda="sin({0})")
cos = unary("cos", lambda be, x: be.xp.cos(to_float(x)), F, "Cosine, element-wise.",
            cuda="cos({0})")
tan = unary("tan", lambda be, x: be.xp.tan(to_float(x)), F, "Tangent, element-wise.")
tanh = unary("tanh", lambda be, x: be.xp.tanh(to_float(x)), F, "Hyperbolic tangent.",
             cuda="tanh({0})")
asin = unary("asin", lambda be, x: be.xp.arcsin(to_float(x)), F,
             "Arcsine, element-wise (NaN outside [-1, 1]).")
acos = unary("acos", lambda be, x: be.xp.arccos(to_float(x)), F,
             "Arccosine, element-wise (NaN outside [-1, 1]).")
atan = unary("atan", lambda be, x: be.xp.arctan(to_float(x)), F, "Arctangent, element-wise.")
sinh = unary("sinh", lambda be, x: be.xp.sinh(to_float(x)), F, "Hyperbolic sine.")
cosh = unary("cosh", lambda be, x: be.xp.cosh(to_float(x)), F, "Hyperbolic cosine.")
asinh = unary("asinh", lambda be, x: be.xp.arcsinh(to_float(x)), F,
              "Inverse hyperbolic sine.")
acosh = unary("acosh", lambda be, x: be.xp.arccosh(to_float(x)), F,
              "Inverse hyperbolic cosine (NaN below 1).")
atanh = unary("atanh", lambda be, x: be.xp.arctanh(to_float(x)), F,
              "Inverse hyperbolic tangent (NaN outside [-1, 1]; +-inf at +-1).")
erf = unary("erf", lambda be, x: be.erf(to_float(x)), F, "The error function, element-wise.")
floor = unary("floor", "floor", F, "Round down (gradient 0).")
ceil = unary("ceil", "ceil", F, "Round up (gradient 0).")
round = unary("round", "round", F,
              "Round half to even, as numpy and TensorFlow (gradient 0).")


def _sigmoid(be: Any, x: Any) -> Any:
    """``1 / (1 + exp(-x))``, accurate to a few ulps in both tails, as TensorFlow's and
    PyTorch's: ``exp(-x)`` overflowing to inf (x below -88 in float32) gives 0, the limit.
    (``(tanh(x / 2) + 1) / 2``, used before, lost the tail to cancellation: 0 at x = -20
    where the sigmoid is 2e-9, so ``log(sigmoid(x))`` became -inf.) Float16 and bfloat16
    compute in float32 and round once."""
    x = to_float(x)
    dt = x.dtype
    xp = be.xp
    if dt.kind == "c":
        return 1 / (1 + xp.exp(-x))
    if dt.itemsize < 4:
        return _sigmoid(be, x.astype(_F32)).astype(dt)
    one = dt.type(1)
    t = xp.empty_like(x)  # (a 0-d negative() would be a scalar, not an array)
    xp.negative(x, out=t)
    if xp is np:  # the overflow to inf is the point: no warning (cupy gives none)
        with np.errstate(over="ignore"):
            xp.exp(t, out=t)
    else:
        xp.exp(t, out=t)
    t += one
    return xp.divide(one, t, out=t)


def _softplus(be: Any, x: Any) -> Any:
    return be.xp.logaddexp(to_float(x), 0)


sigmoid = unary("sigmoid", _sigmoid, F, "1 / (1 + exp(-x)), computed stably.")
softplus = unary("softplus", _softplus, F, "log(1 + exp(x)), computed stably.")

# --- comparisons and logic (not differentiable) -----------------------------------------
equal = binary("equal", "equal", F, "x == y, element-wise.", False)
not_equal = binary("not_equal", "not_equal", F, "x != y.", False)
less = binary("less", "less", F, "x < y, element-wise.", False)
less_equal = binary("less_equal", "less_equal", F, "x <= y.", False)
greater = binary("greater", "greater", F, "x > y.", False)
greater_equal = binary("greater_equal", "greater_equal", F,
                       "x >= y.", False)
logical_and = binary("logical_and", "logical_and", F,
                     "Element-wise logical and.", False)
logical_or = binary("logical_or", "logical_or", F,
                    "Element-wise logical or.", False)
logical_xor = binary("logical_xor", "logical_xor", F,
                     "Element-wise logical xor.", False)
logical_not = unary("logical_not", "logical_not", F,
                    "Element-wise logical not.", False)
bitwise_and = binary("bitwise_and", "bitwise_and", F,
                     "x & y (logical for bool tensors).", False)
bitwise_or = binary("bitwise_or", "bitwise_or", F,
                    "x | y (logical for bool tensors).", False)
bitwise_xor = binary("bitwise_xor", "bitwise_xor", F,
                     "x ^ y (logical for bool tensors).", False)
invert = unary("invert", "invert", F, "~x (logical not for bool).", False)
left_shift = binary("left_shift", "left_shift", F, "x << y.", False)
right_shift = binary("right_shift", "right_shift", F, "x >> y.", False)
isnan = unary("isnan", "isnan", F, "True where x is NaN.", False)
isinf = unary("isinf", "isinf", F, "True where x is +-inf.", False)
isfinite = unary("isfinite", "isfinite", F,
                 "True where x is neither NaN nor inf.", False)

# --- identity, cast, where --------------------------------------------------------------
_identity = register("identity", lambda be, x: x, family=F)
_stop = register("stop_gradient", lambda be, x: x, family=F)


def identity(x: Any, name: str | None = None) -> Any:
    """The same value as a new tensor (gradient passes through)."""
    return execute(_identity, (x,))


def stop_gradient(x: Any, name: str | None = None) -> Any:
    """The same value, but gradients do not flow through it."""
    return execute(_stop, (x,))


def _cast(be: Any, x: Any, dtype: np.dtype) -> Any:
    if dtype.kind in "iu" and _dtypes.is_floating(x.dtype):
        return float_to_int(be.xp, x, dtype)
    return x.astype(dtype, copy=False)


def float_to_int(xp: Any, x: Any, dtype: np.dtype) -> Any:
    """Floats to ``dtype``, defined everywhere and the same on every device: truncation
    toward zero, values beyond the integer range saturate at its bounds, NaN becomes 0.

    C leaves the rest undefined, so numpy and cupy disagree: on x86 numpy turns NaN and
    every out-of-range value into the type's minimum (or wraps unsigned ones), while
    cupy saturates (a GPU's conversion instruction). The bounds are powers of two, exact
    in every float type (or infinite in float16, where only infinities pass them).
    """
    info = np.iinfo(dtype)
    signed = info.min < 0
    with np.errstate(invalid="ignore", over="ignore"):
        # the first value too large, and (signed) the last valid one or (unsigned) -1
        hi = x.dtype.type(2.0 ** (info.bits - (1 if signed else 0)))
        lo = x.dtype.type(float(info.min) if signed else -1.0)
        raw = x.astype(dtype)
        # NaN passes neither; an infinite bound (float16 for 32 and 64 bits) lets every
        # finite value through and no infinity
        ok = (x < hi) & ((x >= lo) if signed and np.isfinite(lo) else (x > lo))
        if xp is np and ok.all():
            return raw
        fix = xp.where(x > 0, dtype.type(info.max), dtype.type(info.min if signed else 0))
        fix = xp.where(x != x, dtype.type(0), fix)  # NaN
    return xp.where(ok, raw, fix)


_cast_op = register("cast", _cast, family=F)


def cast(x: Any, dtype: Any, name: str | None = None) -> Any:
    """``x`` converted to ``dtype``.

    Floats to ints truncate toward zero, as TensorFlow. NaN becomes 0 and values beyond
    the integer type's range saturate at its bounds, on every device (numpy's own cast
    gives the minimum or wraps there, cupy's saturates: ember defines it, see
    :func:`float_to_int`).

    Examples:
        >>> import ember.core as em
        >>> em.cast(em.constant([1.7, -1.7]), em.int32)
        ember.Tensor([ 1 -1], shape=(2,), dtype=int32)
    """
    return execute(_cast_op, (x,), {"dtype": _dtypes.as_dtype(dtype)})


def _where(be: Any, c: Any, x: Any, y: Any) -> Any:
    if be.xp is np:
        picked = _select_or_zero(c, x, y)
        if picked is not None:
            return picked
    return be.xp.where(c, x, y)


_SAME_WIDTH_INT = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}


def _select_or_zero(c: Any, x: Any, y: Any) -> Any:
    """``numpy.where(c, x, 0)`` (or ``where(c, 0, y)``) as a bitwise AND with a mask of all
    ones or all zeros: the same bits (NaN and -0.0 included), in a fifth of the time on
    this machine (a gradient rule's common form: relu's; max-pooling's, whose ``x``
    broadcasts over the pooling windows). None when the arguments are not that form."""
    if c.dtype != np.bool_ or type(x) is not np.ndarray or type(y) is not np.ndarray:
        return None
    if y.ndim == 0:
        a, zero, keep = x, y, True
    elif x.ndim == 0:
        a, zero, keep = y, x, False
    else:
        return None
    it = _SAME_WIDTH_INT.get(a.dtype)
    if it is None or zero.dtype != a.dtype or zero.view(it) != 0 or c.ndim == 0 \
            or a.ndim > c.ndim or any(n not in (1, m) for n, m in
                                      zip(a.shape[::-1], c.shape[::-1])):
        return None  # (the result's shape must be the condition's: ``a`` broadcasts to it)
    # True -> -1 (all bits set) and False -> 0, or the other way round for where(c, 0, y).
    mask = np.negative(c, dtype=it) if keep else np.add(c, -1, dtype=it)
    return np.bitwise_and(a.view(it), mask, out=mask).view(a.dtype)


_where_op = register("where", _where, family=F)
_nonzero_op = register("where_indices",
                       lambda be, c: be.xp.stack(be.xp.nonzero(c), axis=-1).astype(np.int64),
                       family=F, differentiable=False)


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Any:
    """Pick from ``x`` where ``condition`` is true, else from ``y`` (broadcasting).

    With only ``condition``, return the int64 coordinates of its true elements, shape
    ``(num_true, rank)``.
    """
    if x is None and y is None:
        return execute(_nonzero_op, (condition,))
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    return execute(_where_op, (condition, x, y))


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Any:
    """Clamp ``t`` to ``[clip_value_min, clip_value_max]`` element-wise, as TensorFlow:
    ``maximum(minimum(t, clip_value_max), clip_value_min)``, so a ``clip_value_min``
    above ``clip_value_max`` gives ``clip_value_min``."""
    return maximum(minimum(t, clip_value_max), clip_value_min)


def add_n(inputs: Any, name: str | None = None) -> Any:
    """The element-wise sum of a list of tensors of one shape and dtype (TensorFlow's
    ``add_n``; no broadcasting: a shape that differs is an error naming both)."""
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)) or not inputs:
        raise InvalidArgumentError(f"add_n: inputs must be a non-empty list of tensors, "
                                   f"got {type(inputs).__name__}")
    xs = [_args.tensor(x) for x in inputs]
    for i, x in enumerate(xs[1:], 1):
        if x.shape != xs[0].shape or x.dtype != xs[0].dtype:
            raise InvalidArgumentError(
                f"add_n: inputs[{i}] is {x.dtype.name}{list(x.shape)}, inputs[0] "
                f"{xs[0].dtype.name}{list(xs[0].shape)}; add_n adds tensors of one shape "
                "and dtype")
    total = xs[0] if len(xs) > 1 else identity(xs[0])
    for x in xs[1:]:
        total = add(total, x)
    return total


def squared_difference(x: Any, y: Any, name: str | None = None) -> Any:
    """(x - y) ** 2, element-wise."""
    return square(subtract(x, y))


# --- check_numerics ---------------------------------------------------------------------
def _check_numerics(be: Any, x: Any, message: str) -> Any:
    bad = ~be.xp.isfinite(x)
    if bool(bad.any()):
        n_nan = int(be.xp.isnan(x).sum())
        n_inf = int(bad.sum()) - n_nan
        raise InvalidArgumentError(f"check_numerics: {message} : Tensor had "
                                   f"{n_nan} NaN and {n_inf} Inf values (shape "
                                   f"{tuple(x.shape)}, dtype {x.dtype})")
    return x


_check_op = register("check_numerics", _check_numerics, family=F)


# --- check_indices, check_range --------------------------------------------------------
def _check_range(be: Any, x: Any, low: Any, high: Any, open_high: bool, message: str) -> Any:
    if x.size:
        lo, hi = x.min(), x.max()
        if bool(lo < low) or bool(hi > high if not open_high else hi >= high) or \
                (x.dtype.kind in "fc" and (bool(be.xp.isnan(lo)) or bool(be.xp.isnan(hi)))):
            end = ")" if open_high else "]"
            raise InvalidArgumentError(f"{message} must be in [{low}, {high}{end}, got values "
                                       f"from {lo.item()} to {hi.item()} (shape "
                                       f"{tuple(x.shape)})")
    return x


_check_range_op = register("check_range", _check_range, family=F)


def check_indices(indices: Any, limit: int, message: str, name: str | None = None) -> Any:
    """``indices`` unchanged, or an error starting with ``message`` when one lies outside
    ``[0, limit)``.

    The check is an op: graph mode (ember-graph) runs it on every replay, where a check
    written in Python with ``int(reduce_max(...))`` would run only while tracing. On a GPU
    it reads two numbers back (a sync).

    Args:
        indices: an integer tensor (class labels, token ids, gather indices).
        limit: one past the largest valid index.
        message: what the indices are, as the error starts with it (``"labels"``,
            ``"embedding_lookup: ids"``).
        name: unused (TensorFlow compatibility).

    Returns:
        ``indices``' value as a new tensor.

    Raises:
        InvalidArgumentError: an index is out of range, or ``message`` is not a str.
        DTypeError: ``indices`` is not an integer tensor.

    Examples:
        >>> import ember.core as em
        >>> em.debugging.check_indices(em.constant([0, 2]), 3, "labels")
        ember.Tensor([0 2], shape=(2,), dtype=int32)
    """
    if not isinstance(message, str):
        raise InvalidArgumentError(f"check_indices: message must be a str, got "
                                   f"{type(message).__name__}")
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)):
        raise InvalidArgumentError(f"check_indices: limit must be an int, got "
                                   f"{type(limit).__name__}")
    t = _args.tensor(indices)
    if t.dtype.kind not in "iu":
        raise DTypeError(f"check_indices: expects an integer tensor, got {t.dtype}")
    return execute(_check_range_op, (t,), {"low": 0, "high": int(limit), "open_high": True,
                                           "message": message})


def check_range(tensor: Any, minval: float, maxval: float, message: str,
                name: str | None = None) -> Any:
    """``tensor`` unchanged, or an error starting with ``message`` when a value lies
    outside ``[minval, maxval]`` (or is NaN).

    An op, as ``check_indices``: graph mode runs it on every replay. Gradients pass
    through unchanged.

    Args:
        tensor: a real tensor.
        minval: the smallest allowed value.
        maxval: the largest allowed value.
        message: what the values are, as the error starts with it.
        name: unused (TensorFlow compatibility).

    Returns:
        ``tensor``'s value as a new tensor.

    Raises:
        InvalidArgumentError: a value is out of range or NaN, or ``message`` is not a str.

    Examples:
        >>> import ember.core as em
        >>> em.debugging.check_range(em.constant([0.2, 1.0]), 0.0, 1.0, "probabilities")
        ember.Tensor([0.2 1. ], shape=(2,), dtype=float32)
    """
    if not isinstance(message, str):
        raise InvalidArgumentError(f"check_range: message must be a str, got "
                                   f"{type(message).__name__}")
    t = _args.tensor(tensor)
    if t.dtype.kind not in "iuf" and t.dtype != _dtypes.bfloat16:
        raise DTypeError(f"check_range: expects a real tensor, got {t.dtype}")
    return execute(_check_range_op, (t,), {"low": float(minval), "high": float(maxval),
                                           "open_high": False, "message": message})


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Any:
    """``tensor`` unchanged, or an error naming ``message`` when it holds a NaN or an Inf.

    Gradients pass through unchanged and are checked in turn (as TensorFlow).

    Args:
        tensor: a floating-point tensor.
        message: the text the error starts with.
        name: unused (TensorFlow compatibility).

    Returns:
        ``tensor``'s value as a new tensor.

    Raises:
        InvalidArgumentError: the tensor holds NaN or Inf values.
        DTypeError: the tensor is not floating point.

    Examples:
        >>> import ember.core as em
        >>> em.check_numerics(em.constant([1., 2.]), "weights")
        ember.Tensor([1. 2.], shape=(2,), dtype=float32)
    """
    if not isinstance(message, str):
        raise InvalidArgumentError(f"check_numerics: message must be a str, got "
                                   f"{type(message).__name__}")
    t = _args.tensor(tensor)
    if not _dtypes.is_floating(t.dtype):
        raise DTypeError(f"check_numerics: expects a floating-point tensor, got {t.dtype}")
    return execute(_check_op, (t,), {"message": message})

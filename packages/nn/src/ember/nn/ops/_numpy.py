"""``keras.ops``' numpy-like functions (``keras.ops.numpy``) over ember ops.

numpy's semantics (``split`` at indices, ``dot`` of N-D arrays, ``take`` with ``axis=None``
flattening) with Keras 3's dtypes: Python ints give int32 and floats float32, integer
means and divisions give float32, sums of bools and small integers int32, indices int32.
Every function computes with ember ops on its input's device and is differentiable where
Keras's is. Shapes and indexing are in ``_shapes``.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

import ember.core as em

from ._core import (
    as_float,
    as_floats,
    axes_of,
    host_int,
    host_ints,
    ints_for_bools,
    on_device_of,
    reject,
    tensor,
)

_F32 = em.float32
_any = builtins.any  # this module defines its own any, all, max, min, sum and round


# --- element-wise ------------------------------------------------------------------------
def abs(x: Any) -> em.Tensor:
    return em.abs(tensor(x))


absolute = abs


def add(x1: Any, x2: Any) -> em.Tensor:
    return em.add(x1, x2)


def subtract(x1: Any, x2: Any) -> em.Tensor:
    return em.subtract(x1, x2)


def multiply(x1: Any, x2: Any) -> em.Tensor:
    return em.multiply(x1, x2)


def divide(x1: Any, x2: Any) -> em.Tensor:
    """x1 / x2; integers divide to float32."""
    return em.divide(x1, x2)


true_divide = divide


def divide_no_nan(x1: Any, x2: Any) -> em.Tensor:
    """x1 / x2, and 0 where x2 is 0 (with a zero gradient there); in Keras's
    ``result_type(x1, x2, float)`` (float16 with an int tensor or a number: float16)."""
    num, den = as_floats(x1, x2)
    zero = em.equal(den, 0)
    q = em.divide(num, em.where(zero, em.ones_like(den), den))
    return em.where(zero, em.zeros_like(q), q)


def floor_divide(x1: Any, x2: Any) -> em.Tensor:
    """floor(x1 / x2); two bools divide as int32 (as Keras)."""
    return em.floordiv(*ints_for_bools(x1, x2))


def mod(x1: Any, x2: Any) -> em.Tensor:
    """x1 % x2 with the sign of x2 (Python's and numpy's modulo); two bools give int32."""
    return em.floormod(*ints_for_bools(x1, x2))


def power(x1: Any, x2: Any) -> em.Tensor:
    """x1 ** x2; two bools give int32 (as Keras)."""
    return em.pow(*ints_for_bools(x1, x2))


def maximum(x1: Any, x2: Any) -> em.Tensor:
    return em.maximum(x1, x2)


def minimum(x1: Any, x2: Any) -> em.Tensor:
    return em.minimum(x1, x2)


def negative(x: Any) -> em.Tensor:
    return em.negative(tensor(x))


def sign(x: Any) -> em.Tensor:
    """-1, 0 or 1 by the sign of each element (a bool is its own sign, as in Keras)."""
    t = tensor(x)
    return em.identity(t) if t.dtype == em.bool_ else em.sign(t)


def square(x: Any) -> em.Tensor:
    """x * x; bools square as int32 (as Keras)."""
    t = tensor(x)
    return em.square(em.cast(t, em.int32) if t.dtype == em.bool_ else t)


def sqrt(x: Any) -> em.Tensor:
    return em.sqrt(as_float(x))


def reciprocal(x: Any) -> em.Tensor:
    return em.reciprocal(as_float(x))


def exp(x: Any) -> em.Tensor:
    return em.exp(as_float(x))


def expm1(x: Any) -> em.Tensor:
    return em.expm1(as_float(x))


def log(x: Any) -> em.Tensor:
    return em.log(as_float(x))


def log1p(x: Any) -> em.Tensor:
    return em.log1p(as_float(x))


def log2(x: Any) -> em.Tensor:
    return em.multiply(log(x), 1 / math.log(2))


def log10(x: Any) -> em.Tensor:
    return em.multiply(log(x), 1 / math.log(10))


def sin(x: Any) -> em.Tensor:
    return em.sin(as_float(x))


def cos(x: Any) -> em.Tensor:
    return em.cos(as_float(x))


def tan(x: Any) -> em.Tensor:
    return em.tan(as_float(x))


def tanh(x: Any) -> em.Tensor:
    return em.tanh(as_float(x))


def sinh(x: Any) -> em.Tensor:
    """(e^x - e^-x) / 2, from expm1 (accurate near 0)."""
    t = as_float(x)
    return em.multiply(em.subtract(em.expm1(t), em.expm1(em.negative(t))), 0.5)


def cosh(x: Any) -> em.Tensor:
    t = as_float(x)
    return em.multiply(em.add(em.exp(t), em.exp(em.negative(t))), 0.5)


def ceil(x: Any) -> em.Tensor:
    """Round up; integers come back as float32 (as Keras)."""
    return em.ceil(as_float(x))


def floor(x: Any) -> em.Tensor:
    return em.floor(as_float(x))


def round(x: Any, decimals: int = 0) -> em.Tensor:
    """Round half to even to ``decimals`` places (integers with ``decimals >= 0`` as they are)."""
    t = tensor(x)
    d = int(decimals)
    if t.dtype.kind in "biu":
        if d < 0:
            raise reject("round", "decimals", decimals, "negative decimals on an integer "
                         "tensor; cast it to a float dtype first")
        return em.identity(t)
    if d == 0:
        return em.round(t)
    scale = 10.0 ** d
    return em.divide(em.round(em.multiply(t, scale)), scale)


def clip(x: Any, x_min: Any, x_max: Any) -> em.Tensor:
    """``x`` clamped to ``[x_min, x_max]``; bools clip as int32."""
    t = tensor(x)
    if t.dtype == em.bool_:
        t = em.cast(t, em.int32)
    return em.minimum(em.maximum(t, x_min), x_max)


def equal(x1: Any, x2: Any) -> em.Tensor:
    return em.equal(x1, x2)


def not_equal(x1: Any, x2: Any) -> em.Tensor:
    return em.not_equal(x1, x2)


def greater(x1: Any, x2: Any) -> em.Tensor:
    return em.greater(x1, x2)


def greater_equal(x1: Any, x2: Any) -> em.Tensor:
    return em.greater_equal(x1, x2)


def less(x1: Any, x2: Any) -> em.Tensor:
    return em.less(x1, x2)


def less_equal(x1: Any, x2: Any) -> em.Tensor:
    return em.less_equal(x1, x2)


def _bool(x: Any) -> em.Tensor:
    t = tensor(x)
    return t if t.dtype == em.bool_ else em.cast(t, em.bool_)


def logical_and(x1: Any, x2: Any) -> em.Tensor:
    return em.logical_and(_bool(x1), _bool(x2))


def logical_or(x1: Any, x2: Any) -> em.Tensor:
    return em.logical_or(_bool(x1), _bool(x2))


def logical_xor(x1: Any, x2: Any) -> em.Tensor:
    return em.logical_xor(_bool(x1), _bool(x2))


def logical_not(x: Any) -> em.Tensor:
    return em.logical_not(_bool(x))


def isfinite(x: Any) -> em.Tensor:
    return em.isfinite(tensor(x))


def isinf(x: Any) -> em.Tensor:
    return em.isinf(tensor(x))


def isnan(x: Any) -> em.Tensor:
    return em.isnan(tensor(x))


def where(condition: Any, x1: Any = None, x2: Any = None) -> Any:
    """``x1`` where ``condition`` holds, else ``x2``; with neither, the indices of the true
    elements as a tuple of int32 tensors, one per axis (numpy's ``nonzero``; the count is
    read to the host)."""
    c = _bool(condition)
    if x1 is None and x2 is None:
        coords = em.cast(em.where(c), em.int32)
        return tuple(coords[:, i] for i in range(c.ndim))
    if x1 is None or x2 is None:
        raise em.InvalidArgumentError("ember.nn.ops.where: give both x1 and x2, or neither")
    return em.where(c, x1, x2)


def nonzero(x: Any) -> tuple[em.Tensor, ...]:
    """The indices of the nonzero elements, a tuple of int32 tensors (one per axis)."""
    result: tuple[em.Tensor, ...] = where(x)
    return result


# --- reductions --------------------------------------------------------------------------
def _axis(fn: str, axis: Any, ndim: int) -> Any:
    return None if axis is None else axes_of(fn, axis, ndim)


def _sum_dtype(t: em.Tensor) -> em.Tensor:
    """bool, int8 and int16 sum as int32, uint8 and uint16 as uint32 (as JAX and Keras)."""
    if t.dtype in (em.bool_, em.int8, em.int16):
        return em.cast(t, em.int32)
    if t.dtype in (em.uint8, em.uint16):
        return em.cast(t, em.uint32)
    return t


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    t = _sum_dtype(tensor(x))
    return em.reduce_sum(t, _axis("sum", axis, t.ndim), keepdims=keepdims)


def prod(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> em.Tensor:
    t = _sum_dtype(tensor(x)) if dtype is None else tensor(x, dtype)
    return em.reduce_prod(t, _axis("prod", axis, t.ndim), keepdims=keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    """The mean; integer and bool tensors average as float32."""
    t = as_float(x)
    return em.reduce_mean(t, _axis("mean", axis, t.ndim), keepdims=keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    t = as_float(x)
    return em.reduce_variance(t, _axis("var", axis, t.ndim), keepdims=keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    t = as_float(x)
    return em.reduce_std(t, _axis("std", axis, t.ndim), keepdims=keepdims)


def max(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> em.Tensor:
    """The maximum, no less than ``initial`` when given."""
    t = tensor(x)
    ax = _axis("max", axis, t.ndim)
    if t.size == 0 and initial is not None:
        return full_like(em.reduce_sum(t, ax, keepdims=keepdims), initial)
    out = em.reduce_max(t, ax, keepdims=keepdims)
    return out if initial is None else em.maximum(out, initial)


def min(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> em.Tensor:
    """The minimum, no more than ``initial`` when given."""
    t = tensor(x)
    ax = _axis("min", axis, t.ndim)
    if t.size == 0 and initial is not None:
        return full_like(em.reduce_sum(t, ax, keepdims=keepdims), initial)
    out = em.reduce_min(t, ax, keepdims=keepdims)
    return out if initial is None else em.minimum(out, initial)


def amax(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    return max(x, axis, keepdims)


def amin(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    return min(x, axis, keepdims)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    t = _bool(x)
    return em.reduce_all(t, _axis("all", axis, t.ndim), keepdims=keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    t = _bool(x)
    return em.reduce_any(t, _axis("any", axis, t.ndim), keepdims=keepdims)


def count_nonzero(x: Any, axis: Any = None) -> em.Tensor:
    """The number of nonzero elements (int32)."""
    t = tensor(x)
    return em.count_nonzero(t, _axis("count_nonzero", axis, t.ndim), dtype=em.int32)


def _arg(fn: str, x: Any, axis: Any, keepdims: bool) -> em.Tensor:
    t = tensor(x)
    if t.ndim == 0:
        return em.zeros((), em.int32) if axis is None else em.cast(em.zeros_like(t), em.int32)
    f = em.argmax if fn == "argmax" else em.argmin
    if axis is None:
        out = f(em.reshape(t, (-1,)), 0, output_type=np.int32)
        return em.reshape(out, (1,) * t.ndim) if keepdims else out
    a = axes_of(fn, axis, t.ndim)[0]
    out = f(t, a, output_type=np.int32)
    return em.expand_dims(out, a) if keepdims else out


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    """The index of the largest value (int32; over the flattened tensor when axis is None)."""
    return _arg("argmax", x, axis, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    """The index of the smallest value (int32; over the flattened tensor when axis is None)."""
    return _arg("argmin", x, axis, keepdims)


def average(x: Any, axis: Any = None, weights: Any = None) -> em.Tensor:
    """The (weighted) mean; 1-D ``weights`` weigh the entries along ``axis``."""
    t = as_float(x)
    if weights is None:
        return mean(t, axis)
    w = as_float(weights)
    ax = _axis("average", axis, t.ndim)
    if w.shape != t.shape:
        if ax is None or len(ax) != 1 or w.ndim != 1 or w.shape[0] != t.shape[ax[0]]:
            raise em.InvalidArgumentError(
                f"ember.nn.ops.average: weights of shape {w.shape} must have the shape of x "
                f"{t.shape}, or be 1-D along one axis (axis={axis!r})")
        w = em.reshape(w, [-1 if i == ax[0] else 1 for i in range(t.ndim)])
    return em.divide(em.reduce_sum(em.multiply(t, w), ax),
                     em.reduce_sum(em.multiply(em.ones_like(t), w), ax))


def cumsum(x: Any, axis: Any = None, dtype: Any = None) -> em.Tensor:
    """The running sum along ``axis`` (of the flattened tensor when None); bools as int32."""
    t = tensor(x) if dtype is None else tensor(x, dtype)
    if t.dtype == em.bool_:
        t = em.cast(t, em.int32)
    if axis is None:
        t, axis = em.reshape(t, (-1,)), 0
    return em.cumsum(t, axes_of("cumsum", axis, t.ndim)[0])


def cumprod(x: Any, axis: Any = None, dtype: Any = None) -> em.Tensor:
    """The running product along ``axis`` (of the flattened tensor when None), as
    log2(n) element-wise products with shifted copies (differentiable, zeros included)."""
    t = tensor(x) if dtype is None else tensor(x, dtype)
    if t.dtype == em.bool_:
        t = em.cast(t, em.int32)
    if axis is None:
        t, axis = em.reshape(t, (-1,)), 0
    a = axes_of("cumprod", axis, t.ndim)[0]
    n, k = t.shape[a], 1
    lead = (builtins.slice(None),) * a
    while k < n:
        ones = em.ones_like(t[lead + (builtins.slice(0, k),)])
        t = em.multiply(t, em.concat([ones, t[lead + (builtins.slice(0, n - k),)]], a))
        k *= 2
    return t


# --- creation ----------------------------------------------------------------------------
def _dtype_or(dtype: Any, default: Any = _F32) -> Any:
    return default if dtype is None else em.as_dtype(dtype)


def zeros(shape: Any, dtype: Any = None) -> em.Tensor:
    return em.zeros(host_ints(shape), _dtype_or(dtype))


def ones(shape: Any, dtype: Any = None) -> em.Tensor:
    return em.ones(host_ints(shape), _dtype_or(dtype))


def empty(shape: Any, dtype: Any = None) -> em.Tensor:
    """A tensor of ``shape`` (ember fills it with zeros)."""
    return zeros(shape, dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> em.Tensor:
    """``fill_value`` (broadcast) in a tensor of ``shape``, float32 unless ``dtype`` says."""
    return em.broadcast_to(tensor(fill_value, _dtype_or(dtype)), host_ints(shape))


def zeros_like(x: Any, dtype: Any = None) -> em.Tensor:
    return em.zeros_like(tensor(x), dtype)


def ones_like(x: Any, dtype: Any = None) -> em.Tensor:
    return em.ones_like(tensor(x), dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> em.Tensor:
    t = tensor(x)
    dt = t.dtype if dtype is None else em.as_dtype(dtype)
    with on_device_of(t):
        return em.broadcast_to(tensor(fill_value, dt), t.shape)


def _py_dtype(values: list[Any]) -> Any:
    """Keras's dtype for numbers given without one: float32 (float64 if a value is) when
    any is a float, else int32 (int64 if a value is)."""
    dts = [em.as_dtype(v.dtype) for v in values if hasattr(v, "dtype")]
    if _any(isinstance(v, float) for v in values) or _any(d.kind == "f" for d in dts):
        return em.float64 if em.float64 in dts else _F32
    return em.int64 if em.int64 in dts else em.int32


def _scalar(v: Any) -> Any:
    if isinstance(v, (em.Tensor, em.Variable)):
        return tensor(v).numpy().reshape(()).item()
    return v.item() if isinstance(v, np.generic) else v


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> em.Tensor:
    """``start, start + step, ...`` below ``stop`` (``arange(n)`` counts from 0); int32 for
    ints and float32 for floats unless ``dtype`` says."""
    given = [v for v in (start, stop, step) if v is not None]
    dt = _py_dtype(given) if dtype is None else em.as_dtype(dtype)
    start, stop, step = (_scalar(v) if v is not None else None for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    return em.range(start, stop, 1 if step is None else step, dtype=dt)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (scalars or tensors: the new
    axis goes at ``axis``); integer dtypes floor, as numpy."""
    num = int(num)
    if num < 0:
        raise em.InvalidArgumentError(f"ember.nn.ops.linspace: num must be >= 0, got {num}")
    dt = _py_dtype([start, stop, 1.0]) if dtype is None else em.as_dtype(dtype)
    work = dt if dt.kind == "f" else _F32
    a, b = tensor(start, work), tensor(stop, work)
    a, b = em.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)), \
        em.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape))
    div = num - 1 if endpoint else num
    step = em.divide(em.subtract(b, a), div) if div > 0 else em.subtract(b, a)
    with on_device_of(a):
        t = em.reshape(em.range(0, num, 1, dtype=work), (num,) + (1,) * a.ndim)
    y = em.add(a, em.multiply(t, step)) if div > 0 else em.add(a, em.multiply(t, 0))
    if endpoint and num > 1:
        y = em.concat([y[:-1], em.expand_dims(b, 0)], 0)
    if a.ndim:
        dst = axes_of("linspace", axis, y.ndim)[0]
        order = list(range(1, y.ndim))
        order.insert(dst, 0)
        y = em.transpose(y, order)
    elif axis not in (0, -1):
        raise em.InvalidArgumentError(f"ember.nn.ops.linspace: axis {axis} is out of range "
                                      "for scalar start and stop")
    if dt.kind in "iu":
        y = em.floor(y)
    y = em.cast(y, dt) if y.dtype != dt else y
    if not retstep:
        return y
    if a.ndim == 0 and not isinstance(start, em.Tensor) and not isinstance(stop, em.Tensor):
        return y, float(step.numpy()) if div > 0 else float("nan")
    return y, step


def eye(N: Any, M: Any = None, k: int = 0, dtype: Any = None) -> em.Tensor:
    """An N x M matrix with ones on diagonal ``k`` (float32 unless ``dtype`` says)."""
    n = host_int(N)
    m = n if M is None else host_int(M)
    d = em.subtract(em.reshape(em.range(m), (1, m)), em.reshape(em.range(n), (n, 1)))
    return em.cast(em.equal(d, int(k)), _dtype_or(dtype))


def identity(n: Any, dtype: Any = None) -> em.Tensor:
    return eye(n, dtype=dtype)


def tri(N: Any, M: Any = None, k: int = 0, dtype: Any = None) -> em.Tensor:
    """Ones at and below diagonal ``k`` of an N x M matrix, zeros above."""
    n = host_int(N)
    m = n if M is None else host_int(M)
    d = em.subtract(em.reshape(em.range(m), (1, m)), em.reshape(em.range(n), (n, 1)))
    return em.cast(em.less_equal(d, int(k)), _dtype_or(dtype))


def _triangle(fn: str, x: Any, k: int, lower: bool) -> em.Tensor:
    t = tensor(x)
    if t.ndim < 2:
        raise em.InvalidArgumentError(f"ember.nn.ops.{fn}: x must have rank >= 2, got shape "
                                      f"{t.shape}")
    n, m = t.shape[-2:]
    with on_device_of(t):
        d = em.subtract(em.reshape(em.range(m), (1, m)), em.reshape(em.range(n), (n, 1)))
        keep = em.less_equal(d, int(k)) if lower else em.greater_equal(d, int(k))
        return em.where(keep, t, em.zeros((), t.dtype))


def tril(x: Any, k: int = 0) -> em.Tensor:
    """``x`` with the elements above diagonal ``k`` of its last two axes zeroed."""
    return _triangle("tril", x, k, True)


def triu(x: Any, k: int = 0) -> em.Tensor:
    """``x`` with the elements below diagonal ``k`` of its last two axes zeroed."""
    return _triangle("triu", x, k, False)


def array(x: Any, dtype: Any = None) -> em.Tensor:
    from ._core import convert_to_tensor
    return convert_to_tensor(x, dtype)


def copy(x: Any) -> em.Tensor:
    return em.identity(tensor(x))


# --- products ----------------------------------------------------------------------------
def matmul(x1: Any, x2: Any) -> em.Tensor:
    """The matrix product; two int8 operands give int32 (Keras's rule: int8 products
    accumulate there)."""
    a, b = tensor(x1), tensor(x2)
    if a.dtype == em.int8 and b.dtype == em.int8:
        a, b = em.cast(a, em.int32), em.cast(b, em.int32)
    return em.matmul(a, b)


def dot(x1: Any, x2: Any) -> em.Tensor:
    """numpy's dot: products of scalars, inner product of vectors, matrix product, and for
    N-D a sum over the last axis of x1 and the second to last of x2."""
    a, b = tensor(x1), tensor(x2)
    if a.ndim == 0 or b.ndim == 0:
        return em.multiply(a, b)
    if b.ndim == 1:
        return em.tensordot(a, b, [[a.ndim - 1], [0]])
    if a.ndim >= 2 and b.ndim == 2:
        return em.matmul(a, b)
    return em.tensordot(a, b, [[a.ndim - 1], [b.ndim - 2]])


def tensordot(x1: Any, x2: Any, axes: Any = 2) -> em.Tensor:
    if not isinstance(axes, (int, np.integer)):
        first, second = axes
        axes = ([int(first)] if isinstance(first, (int, np.integer)) else list(first),
                [int(second)] if isinstance(second, (int, np.integer)) else list(second))
    else:
        axes = int(axes)
    return em.tensordot(tensor(x1), tensor(x2), axes)


def outer(x1: Any, x2: Any) -> em.Tensor:
    return em.multiply(em.reshape(tensor(x1), (-1, 1)), em.reshape(tensor(x2), (1, -1)))


def einsum(subscripts: str, *operands: Any, **kwargs: Any) -> em.Tensor:
    """Einstein summation; an equation without ``->`` gives numpy's implicit output (the
    letters used once, in alphabetical order, after any ``...``)."""
    for k, v in kwargs.items():
        raise reject("einsum", k, v, "einsum takes no keyword arguments in ember")
    return em.einsum(subscripts, *[tensor(o) for o in operands])  # (em's is implicit too)


# --- more of numpy's element-wise functions ----------------------------------------------
def arctan2(x1: Any, x2: Any) -> em.Tensor:
    """The angle of (x2, x1), in Keras's ``result_type(x1, x2, float)`` (a Python float
    counts as float32 there: float16 with ``2.5`` gives float32, with ``2`` float16)."""
    return em.atan2(*as_floats(x1, x2, weak=False))


def arctan(x: Any) -> em.Tensor:
    t = as_float(x)
    return em.atan2(t, em.ones_like(t))


def arcsin(x: Any) -> em.Tensor:
    t = as_float(x)
    return em.atan2(t, em.sqrt(em.subtract(1, em.square(t))))


def arccos(x: Any) -> em.Tensor:
    t = as_float(x)
    return em.atan2(em.sqrt(em.subtract(1, em.square(t))), t)


def arcsinh(x: Any) -> em.Tensor:
    """sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))): accurate near 0 and odd."""
    t = as_float(x)
    a = em.abs(t)
    inner_ = em.add(a, em.divide(em.square(a), em.add(em.sqrt(em.add(em.square(a), 1)), 1)))
    return em.multiply(em.sign(t), em.log1p(inner_))


def arccosh(x: Any) -> em.Tensor:
    t = as_float(x)
    return em.log(em.add(t, em.sqrt(em.multiply(em.subtract(t, 1), em.add(t, 1)))))


def arctanh(x: Any) -> em.Tensor:
    t = as_float(x)
    return em.multiply(em.subtract(em.log1p(t), em.log1p(em.negative(t))), 0.5)


def exp2(x: Any) -> em.Tensor:
    return em.exp(em.multiply(as_float(x), math.log(2)))


def logaddexp(x1: Any, x2: Any) -> em.Tensor:
    """log(exp(x1) + exp(x2)), without overflow, in Keras's ``result_type(x1, x2, float)``
    (a Python float counts as float32 there, as in ``arctan2``)."""
    a, b = as_floats(x1, x2, weak=False)
    hi = em.maximum(a, b)
    return em.add(hi, em.softplus(em.negative(em.abs(em.subtract(a, b)))))


def hypot(x1: Any, x2: Any) -> em.Tensor:
    """sqrt(x1^2 + x2^2) without overflow, in Keras's ``result_type(x1, x2, float)`` (a
    Python float counts as float32, as on Keras's TensorFlow and torch backends; its JAX
    backend keeps float16 with ``2.5``)."""
    a, b = (em.abs(t) for t in as_floats(x1, x2, weak=False))
    hi, lo = em.maximum(a, b), em.minimum(a, b)
    ratio = divide_no_nan(lo, hi)
    return em.multiply(hi, em.sqrt(em.add(em.square(ratio), 1)))


def fabs(x: Any) -> em.Tensor:
    return em.abs(as_float(x))


def trunc(x: Any) -> em.Tensor:
    """Round toward zero (integers as they are)."""
    t = tensor(x)
    if t.dtype.kind in "biu":
        return em.identity(t)
    return em.where(em.less(t, 0), em.ceil(t), em.floor(t))


def deg2rad(x: Any) -> em.Tensor:
    return em.multiply(as_float(x), math.pi / 180)


def rad2deg(x: Any) -> em.Tensor:
    return em.multiply(as_float(x), 180 / math.pi)


def isposinf(x: Any) -> em.Tensor:
    t = tensor(x)
    return em.logical_and(em.isinf(t), em.greater(t, 0))


def isneginf(x: Any) -> em.Tensor:
    t = tensor(x)
    return em.logical_and(em.isinf(t), em.less(t, 0))


def nan_to_num(x: Any, nan: float = 0.0, posinf: Any = None, neginf: Any = None) -> em.Tensor:
    """NaN -> ``nan``, inf -> ``posinf`` (the dtype's largest by default), -inf ->
    ``neginf`` (the dtype's lowest)."""
    t = tensor(x)
    if t.dtype.kind not in "fV":
        return em.identity(t)
    info = np.finfo(np.dtype(t.dtype))
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    t = em.where(em.isnan(t), em.cast(nan, t.dtype), t)
    return em.where(isposinf(t), em.cast(hi, t.dtype), em.where(isneginf(t), em.cast(lo, t.dtype),
                                                                t))


def bitwise_and(x: Any, y: Any) -> em.Tensor:
    return em.bitwise_and(x, y)


def bitwise_or(x: Any, y: Any) -> em.Tensor:
    return em.bitwise_or(x, y)


def bitwise_xor(x: Any, y: Any) -> em.Tensor:
    return em.bitwise_xor(x, y)


def bitwise_invert(x: Any) -> em.Tensor:
    return em.invert(tensor(x))


bitwise_not = bitwise_invert


def left_shift(x: Any, y: Any) -> em.Tensor:
    """x << y; two bools shift as int32 (as Keras)."""
    return em.left_shift(*ints_for_bools(x, y))


def right_shift(x: Any, y: Any) -> em.Tensor:
    """x >> y; two bools shift as int32 (as Keras)."""
    return em.right_shift(*ints_for_bools(x, y))


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def ptp(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    """max - min over ``axis``."""
    return em.subtract(max(x, axis, keepdims), min(x, axis, keepdims))


def inner(x1: Any, x2: Any) -> em.Tensor:
    """Sum of products over the last axes (numpy's inner)."""
    a, b = tensor(x1), tensor(x2)
    if a.ndim == 0 or b.ndim == 0:
        return em.multiply(a, b)
    return em.tensordot(a, b, [[a.ndim - 1], [b.ndim - 1]])


def vdot(x1: Any, x2: Any) -> em.Tensor:
    """The dot product of the flattened inputs (of two bool tensors: whether any pair of
    elements is true in both, a bool, as numpy's and JAX's)."""
    a, b = em.reshape(tensor(x1), (-1,)), em.reshape(tensor(x2), (-1,))
    if a.dtype == em.bool_ and b.dtype == em.bool_:
        return em.reduce_any(em.logical_and(a, b))
    return em.reduce_sum(em.multiply(a, b))


def empty_like(x: Any, dtype: Any = None) -> em.Tensor:
    """A tensor like ``x`` (ember fills it with zeros)."""
    return zeros_like(x, dtype)

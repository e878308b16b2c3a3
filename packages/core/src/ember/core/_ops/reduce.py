"""Reductions: sum, mean, max, min, prod, any, all, argmax/argmin, cumsum, logsumexp, moments."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._errors import DTypeError
from .._registry import execute, register
from . import _args, _fused
from . import math as m
from .array import reshape

F = "reduce"


def _mean(be: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    if x.dtype.kind in "iub":  # integer mean truncates and keeps the dtype (TensorFlow)
        s = x.sum(axis=axis, keepdims=keepdims)
        n = x.size // max(s.size, 1) if x.size else 1
        if x.dtype.kind == "b":
            return s.astype(x.dtype)
        return (be.xp.sign(s) * (be.xp.abs(s) // n)).astype(x.dtype)  # toward zero, as TF
    if x.size and x.dtype.itemsize >= 4 and x.dtype.kind == "f":
        if _fused.fusable(be.xp):  # a GPU: the sum and its division in one kernel
            axes = range(x.ndim) if axis is None else axis if isinstance(
                axis, (tuple, list)) else (axis,)
            n = math.prod(x.shape[d] for d in axes)
            return _fused.reduction(be.xp, f"mean_{x.dtype.name}", f"T x, {x.dtype.name} n",
                                    "T y", "x", "a + b", "y = a / n", "0")(
                x, n, axis=axis, keepdims=keepdims)
        # numpy's mean is this sum and division, behind a Python wrapper that costs more
        # than the sum on a loss-sized array; float16 keeps mean's float32 accumulation.
        s = x.sum(axis=axis, keepdims=keepdims)
        return s / (x.size // max(s.size, 1))
    return x.mean(axis=axis, keepdims=keepdims)


def _extreme(be: Any, x: Any, axis: Any, keepdims: bool, largest: bool) -> Any:
    """``x.max`` / ``x.min``; over an empty axis, TensorFlow's identity: -inf / +inf for
    floats, the dtype's lowest / highest value for integers (numpy raises there)."""
    if x.size:
        return x.max(axis=axis, keepdims=keepdims) if largest else \
            x.min(axis=axis, keepdims=keepdims)
    given = range(x.ndim) if axis is None else axis if isinstance(axis, (tuple, list)) \
        else (axis,)
    axes = {int(a) % x.ndim for a in given} if x.ndim else set()
    shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape) if keepdims or
                  d not in axes)
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        fill: Any = info.min if largest else info.max
    elif x.dtype.kind == "b":
        fill = not largest
    else:
        fill = -np.inf if largest else np.inf
    return be.xp.full(shape, fill, dtype=x.dtype)


def _keep_int(x: Any) -> Any:
    """Integer sums and products keep the operand's dtype (TensorFlow), not numpy's int64."""
    return x.dtype if x.dtype.kind in "iu" else None


# Array methods (x.sum, ...) skip numpy's Python-level wrappers; cupy has the same methods.
_ops = {
    "reduce_sum": register("reduce_sum", lambda be, x, axis, keepdims:
                           x.sum(axis=axis, keepdims=keepdims, dtype=_keep_int(x)),
                           family=F),
    "reduce_mean": register("reduce_mean", _mean, family=F),
    "reduce_max": register("reduce_max", lambda be, x, axis, keepdims:
                           _extreme(be, x, axis, keepdims, True), family=F),
    "reduce_min": register("reduce_min", lambda be, x, axis, keepdims:
                           _extreme(be, x, axis, keepdims, False), family=F),
    "reduce_prod": register("reduce_prod", lambda be, x, axis, keepdims:
                            x.prod(axis=axis, keepdims=keepdims, dtype=_keep_int(x)),
                            family=F),
    "reduce_any": register("reduce_any", lambda be, x, axis, keepdims:
                           x.any(axis=axis, keepdims=keepdims), family=F,
                           differentiable=False),
    "reduce_all": register("reduce_all", lambda be, x, axis, keepdims:
                           x.all(axis=axis, keepdims=keepdims), family=F,
                           differentiable=False),
}


def _reduce(name: str, x: Any, axis: Any, keepdims: bool) -> Any:
    x = _args.tensor(x)
    return execute(_ops[name], (x,), {"axis": _args.axes(name, axis, x.ndim),
                                      "keepdims": bool(keepdims)})


def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Any:
    """Sum over ``axis`` (all axes when None).

    Examples:
        >>> import ember.core as em
        >>> em.reduce_sum(em.constant([[1, 2], [3, 4]]), axis=0)
        ember.Tensor([4 6], shape=(2,), dtype=int32)
    """
    axis, keepdims = _args.tf1_spellings("reduce_sum", axis, reduction_indices, keepdims, keep_dims)
    return _reduce("reduce_sum", input_tensor, axis, keepdims)


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: Any = None,
                name: str | None = None, reduction_indices: Any = None,
                keep_dims: Any = None) -> Any:
    """Mean over ``axis``; integer tensors give a truncated integer mean, as TensorFlow."""
    axis, keepdims = _args.tf1_spellings("reduce_mean", axis, reduction_indices, keepdims, keep_dims)
    return _reduce("reduce_mean", input_tensor, axis, keepdims)


def reduce_max(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Any:
    """Maximum over ``axis``; the gradient is shared equally among ties. Over an empty
    axis: -inf, or an integer dtype's lowest value (TensorFlow's).

    Examples:
        >>> import ember.core as em
        >>> em.reduce_max(em.zeros([2, 0]), axis=1)
        ember.Tensor([-inf -inf], shape=(2,), dtype=float32)
    """
    axis, keepdims = _args.tf1_spellings("reduce_max", axis, reduction_indices, keepdims, keep_dims)
    return _reduce("reduce_max", input_tensor, axis, keepdims)


def reduce_min(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Any:
    """Minimum over ``axis``. Over an empty axis: inf, or an integer dtype's highest
    value (TensorFlow's)."""
    axis, keepdims = _args.tf1_spellings("reduce_min", axis, reduction_indices, keepdims, keep_dims)
    return _reduce("reduce_min", input_tensor, axis, keepdims)


def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: Any = None,
                name: str | None = None, reduction_indices: Any = None,
                keep_dims: Any = None) -> Any:
    """Product over ``axis``."""
    axis, keepdims = _args.tf1_spellings("reduce_prod", axis, reduction_indices, keepdims, keep_dims)
    return _reduce("reduce_prod", input_tensor, axis, keepdims)


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Any:
    """Logical or over ``axis``."""
    axis, keepdims = _args.tf1_spellings("reduce_any", axis, reduction_indices, keepdims, keep_dims)
    return _reduce("reduce_any", input_tensor, axis, keepdims)


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Any:
    """Logical and over ``axis``."""
    axis, keepdims = _args.tf1_spellings("reduce_all", axis, reduction_indices, keepdims, keep_dims)
    return _reduce("reduce_all", input_tensor, axis, keepdims)


def _arg(be: Any, x: Any, axis: int, fn: str, output_type: Any) -> Any:
    return getattr(be.xp, fn)(x, axis=axis).astype(output_type)


_argmax = register("argmax", lambda be, x, axis, output_type:
                   _arg(be, x, axis, "argmax", output_type), family=F, differentiable=False)
_argmin = register("argmin", lambda be, x, axis, output_type:
                   _arg(be, x, axis, "argmin", output_type), family=F, differentiable=False)


def argmax(input: Any, axis: Any = None, output_type: Any = np.int64, name: str | None = None,
           dimension: Any = None) -> Any:
    """Index of the largest value along ``axis`` (0 when None, as TensorFlow)."""
    axis = _args.one_spelling("argmax", "axis", axis, "dimension", dimension)
    x = _args.tensor(input)
    return execute(_argmax, (x,), {"axis": _args.axis1("argmax", 0 if axis is None else axis, x.ndim),
                                   "output_type": np.dtype(output_type)})


def argmin(input: Any, axis: Any = None, output_type: Any = np.int64, name: str | None = None,
           dimension: Any = None) -> Any:
    """Index of the smallest value along ``axis`` (0 when None, as TensorFlow)."""
    axis = _args.one_spelling("argmin", "axis", axis, "dimension", dimension)
    x = _args.tensor(input)
    return execute(_argmin, (x,), {"axis": _args.axis1("argmin", 0 if axis is None else axis, x.ndim),
                                   "output_type": np.dtype(output_type)})


def _cumsum(be: Any, x: Any, axis: int, exclusive: bool, reverse: bool) -> Any:
    xp = be.xp
    if reverse:
        x = xp.flip(x, axis)
    out = xp.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        out = out - x
    return xp.flip(out, axis) if reverse else out


_cumsum_op = register("cumsum", _cumsum, family=F)


def cumsum(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Any:
    """Cumulative sum along ``axis``; ``exclusive`` leaves out the current element. A
    bool tensor is refused, as TensorFlow refuses it (cast it to a number first)."""
    x = _args.tensor(x)
    if x.dtype.kind == "b":
        raise DTypeError("cumsum: x must be a number tensor, got dtype bool (TensorFlow "
                         "refuses bool too; cast it first, e.g. em.cast(x, em.int32))")
    return execute(_cumsum_op, (x,), {"axis": _args.axis1("cumsum", axis, x.ndim),
                                      "exclusive": bool(exclusive), "reverse": bool(reverse)})


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: Any = None,
                     name: str | None = None, reduction_indices: Any = None,
                     keep_dims: Any = None) -> Any:
    """log(sum(exp(x))) over ``axis``, computed without overflow (-inf over an empty
    axis, as TensorFlow)."""
    axis, keepdims = _args.tf1_spellings("reduce_logsumexp", axis, reduction_indices, keepdims, keep_dims)
    x = _args.tensor(input_tensor)
    mx = m.stop_gradient(reduce_max(x, axis, keepdims=True))
    mx = m.where(m.isfinite(mx), mx, m.cast(0, mx.dtype))
    s = reduce_sum(m.exp(m.subtract(x, mx)), axis, keepdims=keepdims)
    return m.add(m.log(s), mx if keepdims else reshape(mx, s.shape))


logsumexp = reduce_logsumexp


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: Any = None,
                    name: str | None = None, reduction_indices: Any = None,
                    keep_dims: Any = None) -> Any:
    """Population variance over ``axis``."""
    axis, keepdims = _args.tf1_spellings("reduce_variance", axis, reduction_indices, keepdims, keep_dims)
    x = _args.tensor(input_tensor)
    mean = reduce_mean(x, axis, keepdims=True)
    return reduce_mean(m.square(m.subtract(x, mean)), axis, keepdims=keepdims)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Any:
    """Population standard deviation over ``axis``."""
    axis, keepdims = _args.tf1_spellings("reduce_std", axis, reduction_indices, keepdims, keep_dims)
    return m.sqrt(reduce_variance(input_tensor, axis, keepdims))


variance = reduce_variance
std = reduce_std


def count_nonzero(input: Any, axis: Any = None, keepdims: Any = None, dtype: Any = np.int64,
                  name: str | None = None, reduction_indices: Any = None,
                  keep_dims: Any = None) -> Any:
    """Number of non-zero elements over ``axis``."""
    axis, keepdims = _args.tf1_spellings("count_nonzero", axis, reduction_indices, keepdims,
                                         keep_dims)
    x = _args.tensor(input)
    return reduce_sum(m.cast(m.not_equal(x, m.cast(0, x.dtype)), dtype), axis, keepdims)

"""``em.math`` is ``tf.math``: TensorFlow's math names, for code written against them.

Most are ember's own functions under TensorFlow's names (``em.math.is_nan`` is
``em.isnan``, ``em.math.reduce_sum`` is ``em.reduce_sum``); the others are written here
from ember ops, so they run on the inputs' device and tapes differentiate them:

- the ``*_no_nan`` and ``x*y`` functions (``divide_no_nan``, ``xlogy``, ...): 0 where the
  divisor (or ``x``) is 0, with a gradient that stays finite there, as TensorFlow's;
- ``log_sigmoid``, ``softsign``, ``reduce_euclidean_norm``, ``zero_fraction``,
  ``polyval``, ``scalar_mul``, ``in_top_k``, ``invert_permutation``,
  ``is_non_decreasing``, ``is_strictly_increasing``;
- segment reductions (``unsorted_segment_sum``, ``_mean``, ``_sqrt_n``, ``_max``,
  ``_min``, and the ``segment_*`` forms for sorted ids) and ``bincount``.

Segment ids, as TensorFlow takes them: an integer tensor whose shape is a prefix of the
data's; the result has ``num_segments`` rows of the rest of the data's shape. A negative
id drops its row (TensorFlow's rule); an id ``>= num_segments`` is an error, as on
TensorFlow's CPU (its GPU kernels drop it silently): checking it reads the largest id to
the host, one synchronization on a GPU. An empty segment gives 0 for sums and means, the
dtype's lowest value for a maximum and its highest for a minimum (TensorFlow's, not -inf).

Examples:
    >>> import ember.core as em
    >>> em.math.unsorted_segment_sum(em.constant([1., 2., 3., 4.]), [0, 2, 0, 1], 3)
    ember.Tensor([4. 4. 2.], shape=(3,), dtype=float32)
    >>> em.math.divide_no_nan(em.constant([1., 2.]), em.constant([0., 4.]))
    ember.Tensor([0.  0.5], shape=(2,), dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtypes, nn_ops
from ._device import device
from ._errors import DTypeError, InvalidArgumentError
from ._ops import array as _a
from ._ops import creation as _c
from ._ops import math as m
from ._ops import reduce as r
from ._ops.linalg import _abs_square
from ._ops.math_complex import conj, imag, real
from ._tensor import Tensor

# --- ember's functions under TensorFlow's names ------------------------------------------
abs = m.abs
acos, acosh, asin, asinh = m.acos, m.acosh, m.asin, m.asinh
atan, atan2, atanh = m.atan, m.atan2, m.atanh
add, add_n, subtract, multiply, divide, truediv = (m.add, m.add_n, m.subtract, m.multiply,
                                                   m.divide, m.truediv)
floordiv, floormod, mod, pow, negative = m.floordiv, m.floormod, m.mod, m.pow, m.negative
ceil, floor, round, rint, sign = m.ceil, m.floor, m.round, m.round, m.sign
cos, cosh, sin, sinh, tan, tanh = m.cos, m.cosh, m.sin, m.sinh, m.tan, m.tanh
exp, expm1, log, log1p, erf = m.exp, m.expm1, m.log, m.log1p, m.erf
sqrt, rsqrt, square, reciprocal = m.sqrt, m.rsqrt, m.square, m.reciprocal
squared_difference, maximum, minimum = m.squared_difference, m.maximum, m.minimum
sigmoid, softplus = m.sigmoid, m.softplus
equal, not_equal, greater, greater_equal, less, less_equal = (
    m.equal, m.not_equal, m.greater, m.greater_equal, m.less, m.less_equal)
logical_and, logical_not, logical_or, logical_xor = (m.logical_and, m.logical_not,
                                                     m.logical_or, m.logical_xor)
is_nan, is_inf, is_finite = m.isnan, m.isinf, m.isfinite
reduce_all, reduce_any, reduce_max, reduce_min = r.reduce_all, r.reduce_any, r.reduce_max, \
    r.reduce_min
reduce_mean, reduce_prod, reduce_sum = r.reduce_mean, r.reduce_prod, r.reduce_sum
reduce_std, reduce_variance, reduce_logsumexp = r.reduce_std, r.reduce_variance, \
    r.reduce_logsumexp
argmax, argmin, count_nonzero, cumsum = r.argmax, r.argmin, r.count_nonzero, r.cumsum
top_k = _a.top_k
softmax, log_softmax, l2_normalize = nn_ops.softmax, nn_ops.log_softmax, nn_ops.l2_normalize


def _t(x: Any, like: Any = None) -> Any:
    if isinstance(x, Tensor):
        return x
    if like is not None and isinstance(x, (int, float)) and not isinstance(x, bool):
        return m.cast(x, like.dtype)  # a Python number takes the other operand's dtype
    return _c.convert_to_tensor(x)


def _pair(x: Any, y: Any) -> tuple[Any, Any]:
    xt = x if isinstance(x, Tensor) else None
    yt = y if isinstance(y, Tensor) else None
    x = _t(x, yt)
    return x, _t(y, x if xt is None else xt)


# --- safe divisions and products ------------------------------------------------------
def divide_no_nan(x: Any, y: Any, name: str | None = None) -> Any:
    """``x / y``, and 0 where ``y`` is 0 (its gradient too)."""
    x, y = _pair(x, y)
    zero = m.equal(y, 0)
    q = m.divide(x, m.where(zero, _c.ones_like(y), y))
    return m.where(zero, _c.zeros_like(q), q)


def multiply_no_nan(x: Any, y: Any, name: str | None = None) -> Any:
    """``x * y``, and 0 where ``y`` is 0 even if ``x`` is inf or NaN; the gradient for
    ``y`` is ``x`` there too (where ``x`` is finite), as TensorFlow's."""
    x, y = _pair(x, y)
    zero = m.equal(y, 0)
    value = m.multiply(m.where(zero, _c.zeros_like(x), x), y)
    # 0 in value; its gradient for y is x where y is 0 (the term above gives none there).
    # y - y is taken where y is 0 only: elsewhere an infinite y would make it NaN
    slope = m.where(m.logical_and(zero, m.isfinite(x)), x, _c.zeros_like(x))
    at_zero = m.where(zero, m.subtract(y, m.stop_gradient(y)), _c.zeros_like(y))
    return m.add(value, m.multiply(at_zero, slope))


def reciprocal_no_nan(x: Any, name: str | None = None) -> Any:
    """``1 / x``, and 0 where ``x`` is 0."""
    x = _t(x)
    return divide_no_nan(_c.ones_like(x), x)


def xlogy(x: Any, y: Any, name: str | None = None) -> Any:
    """``x * log(y)``, and 0 where ``x`` is 0."""
    x, y = _pair(x, y)
    zero = m.equal(x, 0)
    return m.where(zero, _c.zeros_like(x),
                   m.multiply(x, m.log(m.where(zero, _c.ones_like(y), y))))


def xlog1py(x: Any, y: Any, name: str | None = None) -> Any:
    """``x * log1p(y)``, and 0 where ``x`` is 0."""
    x, y = _pair(x, y)
    zero = m.equal(x, 0)
    return m.where(zero, _c.zeros_like(x),
                   m.multiply(x, m.log1p(m.where(zero, _c.zeros_like(y), y))))


def xdivy(x: Any, y: Any, name: str | None = None) -> Any:
    """``x / y``, and 0 where ``x`` is 0."""
    x, y = _pair(x, y)
    zero = m.equal(x, 0)
    return m.where(zero, _c.zeros_like(x), m.divide(x, m.where(zero, _c.ones_like(y), y)))


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Any:
    """``scalar * x`` for a 0-d ``scalar``."""
    s = scalar if isinstance(scalar, (int, float)) else _t(scalar)
    if isinstance(s, Tensor) and s.ndim != 0:
        raise InvalidArgumentError(f"math.scalar_mul: scalar must be 0-d, got shape "
                                   f"{s.shape}")
    x = _t(x)
    return m.multiply(x, m.cast(s, x.dtype))


# --- activations and reductions ---------------------------------------------------------
def log_sigmoid(x: Any, name: str | None = None) -> Any:
    """``log(sigmoid(x)) = -softplus(-x)``, without overflow."""
    return m.negative(m.softplus(m.negative(_t(x))))


def softsign(features: Any, name: str | None = None) -> Any:
    """``x / (1 + |x|)``."""
    x = _t(features)
    return m.divide(x, m.add(m.abs(x), 1))


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: str | None = None) -> Any:
    """``sqrt(sum(|x| ** 2))`` over ``axis`` (all axes by default). Integers keep their
    dtype, as TensorFlow's: the sum of squares in the dtype, its square root truncated
    (``[[1, 2, 2], [4, 5, 6]]`` gives 9)."""
    x = _t(input_tensor)
    total = r.reduce_sum(_abs_square(x), axis, keepdims=keepdims)
    if total.dtype.kind in "iu":
        return m.cast(m.sqrt(m.cast(total, np.float64)), total.dtype)
    return m.sqrt(total)


def zero_fraction(value: Any, name: str | None = None) -> Any:
    """The fraction of ``value``'s elements that are 0 (float32)."""
    x = _t(value)
    return r.reduce_mean(m.cast(m.equal(x, 0), np.float32))


def polyval(coeffs: Any, x: Any, name: str | None = None) -> Any:
    """``coeffs[0] * x ** (n - 1) + ... + coeffs[n - 1]`` by Horner's rule (a list of
    coefficients, each a tensor or number); 0 for no coefficients."""
    if not isinstance(coeffs, (list, tuple)):
        raise InvalidArgumentError(f"math.polyval: coeffs must be a list of coefficients, "
                                   f"got {type(coeffs).__name__}")
    x = _t(x)
    out = _c.zeros_like(x)
    for c in coeffs:
        out = m.add(m.multiply(out, x), c)
    return out


def in_top_k(targets: Any, predictions: Any, k: int, name: str | None = None) -> Any:
    """Whether each row's ``predictions[target]`` is among its ``k`` largest (bool; a
    value tied with the k-th counts as in, as TensorFlow's; a non-finite prediction in
    the row never does)."""
    p = _t(predictions)
    t = _t(targets)
    if p.ndim != 2 or t.ndim != 1 or t.shape[0] != p.shape[0]:
        raise InvalidArgumentError(f"math.in_top_k: predictions must be (batch, classes) and "
                                   f"targets (batch,); got {p.shape} and {t.shape}")
    picked = _a.take_along_axis(p, _a.expand_dims(m.cast(t, np.int64), -1), -1)
    kth = _a.top_k(p, int(k)).values[:, int(k) - 1:int(k)]
    finite = r.reduce_all(m.isfinite(p), axis=-1, keepdims=True)
    return _a.squeeze(m.logical_and(m.greater_equal(picked, kth), finite), -1)


def invert_permutation(x: Any, name: str | None = None) -> Any:
    """The inverse of the permutation ``x`` (1-D integers): ``y[x[i]] = i``."""
    p = _t(x)
    if p.ndim != 1 or p.dtype.kind not in "iu":
        raise InvalidArgumentError(f"math.invert_permutation: x must be a 1-D integer "
                                   f"tensor, got shape {p.shape} dtype {p.dtype}")
    return m.cast(_a.argsort(p, stable=True), p.dtype)


def is_non_decreasing(x: Any, name: str | None = None) -> Any:
    """Whether ``x`` (flattened) never decreases (True for fewer than two elements)."""
    v = _a.reshape(_t(x), (-1,))
    return r.reduce_all(m.greater_equal(v[1:], v[:-1]))


def is_strictly_increasing(x: Any, name: str | None = None) -> Any:
    """Whether ``x`` (flattened) always increases (True for fewer than two elements)."""
    v = _a.reshape(_t(x), (-1,))
    return r.reduce_all(m.greater(v[1:], v[:-1]))


# --- segment reductions --------------------------------------------------------------
def _host_count(fn: str, value: Any, what: str) -> int:
    if isinstance(value, Tensor):
        if value.ndim != 0 or value.dtype.kind not in "iu":
            raise InvalidArgumentError(f"math.{fn}: {what} must be an integer scalar, got "
                                       f"shape {value.shape} dtype {value.dtype}")
        value = int(value.numpy())
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InvalidArgumentError(f"math.{fn}: {what} must be an integer >= 0, got "
                                   f"{value!r}")
    return int(value)


def _segments(fn: str, data: Any, segment_ids: Any, num_segments: Any
              ) -> tuple[Any, Any, int]:
    """(data as rows, ids with the dropped ones moved to the extra row n, n)."""
    x = _t(data)
    with device(x.device):
        ids = _t(segment_ids)
    if ids.dtype.kind not in "iu":
        raise InvalidArgumentError(f"math.{fn}: segment_ids must be integers, got dtype "
                                   f"{ids.dtype}")
    if ids.ndim > x.ndim or tuple(x.shape[:ids.ndim]) != tuple(ids.shape):
        raise InvalidArgumentError(f"math.{fn}: segment_ids' shape {tuple(ids.shape)} must "
                                   f"be a prefix of data's shape {tuple(x.shape)}")
    rows = _a.reshape(x, (int(np.prod(ids.shape)),) + tuple(x.shape[ids.ndim:]))
    flat = m.cast(_a.reshape(ids, (-1,)), np.int64)
    if num_segments is None:  # the sorted segment_* functions: as many as the ids need
        n = int(r.reduce_max(flat).numpy()) + 1 if flat.shape[0] else 0
    else:
        n = _host_count(fn, num_segments, "num_segments")
        # (a yes/no read: in a traced step it is a guard that holds from call to call)
        if flat.shape[0] and bool(m.greater_equal(r.reduce_max(flat), n).numpy()):
            big = int(r.reduce_max(flat).numpy())
            raise InvalidArgumentError(f"math.{fn}: segment id {big} is out of range "
                                       f"[0, {n}) (num_segments={n})")
    dropped = m.less(flat, 0)
    return rows, m.where(dropped, m.cast(n, np.int64), flat), n


def _counts(ids: Any, n: int, like: Any) -> Any:
    """Each segment's count of rows, shaped to broadcast over a result like ``like``."""
    with device(like.device):
        ones = _c.ones(ids.shape, like.dtype)
        counts = _a.index_add(_c.zeros((n + 1,), like.dtype), ids, ones)[:n]
    return _a.reshape(counts, (n,) + (1,) * (like.ndim - 1))


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Any:
    """The sum of ``data``'s rows in each segment (0 for an empty one)."""
    rows, ids, n = _segments("unsorted_segment_sum", data, segment_ids, num_segments)
    with device(rows.device):
        out = _c.zeros((n + 1,) + tuple(rows.shape[1:]), rows.dtype)
    return _a.index_add(out, ids, rows)[:n]


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any,
                          name: str | None = None) -> Any:
    """The mean of ``data``'s rows in each segment (0 for an empty one). Integer data
    divide as TensorFlow's ``/``: to float64 for 32- and 64-bit integers, float32 for
    narrower ones."""
    rows, ids, n = _segments("unsorted_segment_mean", data, segment_ids, num_segments)
    total = unsorted_segment_sum(rows, ids, n + 1)[:n]
    if total.dtype.kind in "iu":
        ft = np.float64 if total.dtype.itemsize >= 4 else np.float32
        total = m.cast(total, ft)
    return m.divide(total, m.maximum(_counts(ids, n, total), 1))


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any,
                            name: str | None = None) -> Any:
    """The sum of ``data``'s rows in each segment over the square root of their count
    (0 for an empty one)."""
    rows, ids, n = _segments("unsorted_segment_sqrt_n", data, segment_ids, num_segments)
    if rows.dtype.kind != "c" and not _dtypes.is_floating(rows.dtype):
        raise DTypeError(f"math.unsorted_segment_sqrt_n: data must be floating or complex, "
                         f"got dtype {rows.dtype} (as TensorFlow's; cast it first)")
    total = unsorted_segment_sum(rows, ids, n + 1)[:n]
    return m.divide(total, m.sqrt(m.maximum(_counts(ids, n, total), 1)))


def _extreme(fn: str, data: Any, segment_ids: Any, num_segments: Any, largest: bool) -> Any:
    rows, ids, n = _segments(fn, data, segment_ids, num_segments)
    flat = _a.reshape(rows, (rows.shape[0], int(np.prod(rows.shape[1:]))))  # (N, D)
    dt = np.dtype(flat.dtype)
    info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
    empty = info.min if largest else info.max  # TensorFlow's: lowest / highest, not inf
    with device(flat.device):
        if flat.shape[0] == 0:
            return _c.fill((n,) + tuple(rows.shape[1:]), m.cast(empty, dt))
        # each column sorted by (segment, value): a segment's extreme is its last (first)
        by_value = _a.argsort(m.stop_gradient(flat), axis=0, stable=True)
        seg = _a.gather(ids, by_value)  # (N, D): the segment of each sorted value
        order = _a.take_along_axis(by_value, _a.argsort(seg, axis=0, stable=True), 0)
        ranked = _a.take_along_axis(m.stop_gradient(flat), order, 0)
        sizes = _a.index_add(_c.zeros((n + 1,), np.int64), ids, _c.ones(ids.shape, np.int64))
        ends = r.cumsum(sizes)[:n]
        at = m.subtract(ends, 1) if largest else m.subtract(ends, sizes[:n])
        at = m.minimum(m.maximum(at, 0), flat.shape[0] - 1)
        picked = _a.gather(ranked, at)  # (n, D)
        filled = _a.reshape(m.greater(sizes[:n], 0), (n, 1))
        value = m.where(filled, picked, m.cast(empty, dt))
        if not _dtypes.is_floating(dt):  # integers: no gradient, and
            return _a.reshape(value, (n,) + tuple(rows.shape[1:]))  # the data's dtype
        # the gradient, as TensorFlow's: shared equally among the rows that attain it
        hit = m.cast(m.equal(flat, _a.gather(value, m.minimum(ids, n - 1) if n else ids)),
                     dt) if n else _c.zeros_like(flat)
        hit = m.where(_a.reshape(m.less(ids, n), (-1, 1)), hit, _c.zeros_like(hit))
        ties = _a.index_add(_c.zeros((n + 1, flat.shape[1]), dt), ids, hit)[:n]
        share = _a.index_add(_c.zeros((n + 1, flat.shape[1]), dt), ids,
                             m.multiply(flat, hit))[:n]
        smooth = m.divide(share, m.maximum(ties, 1))
        out = m.add(m.stop_gradient(m.subtract(value, smooth)), smooth)
    return _a.reshape(out, (n,) + tuple(rows.shape[1:]))


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Any:
    """The maximum of ``data``'s rows in each segment (the dtype's lowest value for an
    empty one); the gradient goes to the rows that attain it, shared equally."""
    return _extreme("unsorted_segment_max", data, segment_ids, num_segments, True)


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Any:
    """The minimum of ``data``'s rows in each segment (the dtype's highest value for an
    empty one); the gradient goes to the rows that attain it, shared equally."""
    return _extreme("unsorted_segment_min", data, segment_ids, num_segments, False)


def _sorted(fn: str, segment_ids: Any) -> Any:
    ids = _t(segment_ids)
    if ids.ndim != 1:
        raise InvalidArgumentError(f"math.{fn}: segment_ids must be 1-D, got shape "
                                   f"{ids.shape}")
    if ids.shape[0] and not bool(is_non_decreasing(ids).numpy()):
        raise InvalidArgumentError(f"math.{fn}: segment_ids must be sorted (use "
                                   f"unsorted_{fn} for ids in any order)")
    if ids.shape[0] and int(r.reduce_min(ids).numpy()) < 0:
        raise InvalidArgumentError(f"math.{fn}: segment_ids must be >= 0")
    return ids


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Any:
    """``unsorted_segment_sum`` for sorted ids, with as many segments as they need."""
    ids = _sorted("segment_sum", segment_ids)
    return unsorted_segment_sum(data, ids, None)


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Any:
    """``unsorted_segment_mean`` for sorted ids, with as many segments as they need.
    Integer data keep their dtype, as TensorFlow's: the sum divided by the count,
    truncated toward zero."""
    ids = _sorted("segment_mean", segment_ids)
    x = _t(data)
    if x.dtype.kind not in "iu":
        return unsorted_segment_mean(x, ids, None)
    rows, flat, n = _segments("segment_mean", x, ids, None)
    total = unsorted_segment_sum(rows, flat, n + 1)[:n]
    count = m.maximum(m.cast(_counts(flat, n, total), total.dtype), 1)
    quotient = m.floordiv(m.abs(total), count)
    return m.where(m.less(total, 0), m.negative(quotient), quotient)


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Any:
    """``unsorted_segment_max`` for sorted ids, with as many segments as they need (0,
    TensorFlow's, for an id no row has)."""
    ids = _sorted("segment_max", segment_ids)
    out = unsorted_segment_max(data, ids, None)
    return _empty_as_zero(out, ids)


def segment_min(data: Any, segment_ids: Any, name: str | None = None) -> Any:
    """``unsorted_segment_min`` for sorted ids, with as many segments as they need (0,
    TensorFlow's, for an id no row has)."""
    ids = _sorted("segment_min", segment_ids)
    out = unsorted_segment_min(data, ids, None)
    return _empty_as_zero(out, ids)


def _empty_as_zero(out: Any, ids: Any) -> Any:
    n = out.shape[0]
    with device(out.device):
        sizes = _a.index_add(_c.zeros((n,), np.int64), m.cast(ids, np.int64),
                             _c.ones(ids.shape, np.int64))
    filled = _a.reshape(m.greater(sizes, 0), (n,) + (1,) * (out.ndim - 1))
    return m.where(filled, out, _c.zeros_like(out))


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None, weights: Any = None,
                     dtype: Any = np.int32, name: str | None = None) -> Any:
    """TensorFlow's ``tf.math.confusion_matrix``: ``cm[i, j]`` counts (or sums ``weights``
    over) the examples whose label is ``i`` and prediction ``j``, for integer ``labels`` and
    ``predictions`` of one shape ``(n,)``; ``num_classes`` defaults to the largest of both
    plus one (read on the host, as TensorFlow reads it). The result has ``dtype``.

    Raises:
        InvalidArgumentError: shapes that differ or are not 1-D, non-integer inputs, or a
            label or prediction outside ``[0, num_classes)`` (TensorFlow's assertions).

    Examples:
        >>> import ember.core as em
        >>> em.math.confusion_matrix([1, 2, 4], [2, 2, 4]).numpy().tolist()[1:3]
        [[0, 0, 1, 0, 0], [0, 0, 1, 0, 0]]
    """
    fn = "math.confusion_matrix"
    y, p = _t(labels), _t(predictions)
    for arg, t in (("labels", y), ("predictions", p)):
        if t.dtype.kind not in "iu":
            raise InvalidArgumentError(f"{fn}: {arg} must be integers, got dtype {t.dtype}")
    if y.ndim != 1 or tuple(y.shape) != tuple(p.shape):
        raise InvalidArgumentError(f"{fn}: labels and predictions must be vectors of one "
                                   f"shape, got {tuple(y.shape)} and {tuple(p.shape)}")
    y, p = m.cast(y, np.int64), m.cast(p, np.int64)
    n_ex = int(y.shape[0])
    if n_ex and min(int(r.reduce_min(y).numpy()), int(r.reduce_min(p).numpy())) < 0:
        raise InvalidArgumentError(f"{fn}: labels and predictions must be non-negative")
    if num_classes is None:
        n = 1 + max(int(r.reduce_max(y).numpy()), int(r.reduce_max(p).numpy())) if n_ex else 0
    else:
        n = _host_count("confusion_matrix", num_classes, "num_classes")
        if n_ex and max(int(r.reduce_max(y).numpy()), int(r.reduce_max(p).numpy())) >= n:
            raise InvalidArgumentError(f"{fn}: labels and predictions must be below "
                                       f"num_classes {n}")
    dt = np.dtype(dtype)
    if weights is None:
        values = _c.ones((n_ex,), dtype=dt)
    else:
        values = m.cast(_t(weights), dt)
        if tuple(values.shape) != (n_ex,):
            raise InvalidArgumentError(f"{fn}: weights must have the labels' shape "
                                       f"{(n_ex,)}, got {tuple(values.shape)}")
    ids = m.add(m.multiply(y, np.int64(n)), p)
    return _a.reshape(unsorted_segment_sum(values, ids, n * n), (n, n))


def bincount(arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None,
             dtype: Any = np.int32, name: str | None = None, axis: Any = None,
             binary_output: bool = False) -> Any:
    """How many times each value ``0, 1, ...`` occurs in ``arr`` (non-negative integers),
    or the sum of ``weights`` at its positions (then in ``weights``' dtype). The length
    is ``max(arr) + 1``, at least ``minlength``, at most ``maxlength`` (values from there
    on are left out); ``binary_output`` gives 1 where a value occurs. ``axis`` other than
    None (TensorFlow's per-row counts) is refused."""
    if axis not in (None, 0):
        raise InvalidArgumentError(f"math.bincount: axis={axis!r} (counts per row) is not "
                                   f"supported; ember counts over all of arr (axis=None)")
    a = _t(arr)
    if a.dtype.kind not in "iu":
        raise InvalidArgumentError(f"math.bincount: arr must be integers, got dtype "
                                   f"{a.dtype}")
    flat = m.cast(_a.reshape(a, (-1,)), np.int64)
    if flat.shape[0] and int(r.reduce_min(flat).numpy()) < 0:
        raise InvalidArgumentError("math.bincount: arr must be non-negative")
    size = int(r.reduce_max(flat).numpy()) + 1 if flat.shape[0] else 0
    if minlength is not None:
        size = max(size, _host_count("bincount", minlength, "minlength"))
    if maxlength is not None:
        size = min(size, _host_count("bincount", maxlength, "maxlength"))
    kept = m.where(m.less(flat, size), flat, m.cast(size, np.int64))
    if weights is not None and not binary_output:
        w = _a.reshape(_t(weights), (-1,))
        if w.shape[0] != flat.shape[0]:
            raise InvalidArgumentError(f"math.bincount: weights must have arr's shape "
                                       f"{tuple(a.shape)}, got {tuple(_t(weights).shape)}")
        out_dt: Any = w.dtype
    else:
        with device(flat.device):
            w = _c.ones(flat.shape, dtype)
        out_dt = dtype
    with device(flat.device):
        counts = _a.index_add(_c.zeros((size + 1,), out_dt), kept, w)[:size]
    if binary_output:
        counts = m.cast(m.greater(counts, 0), out_dt)
    return counts


__all__ = [
    "abs", "acos", "acosh", "add", "add_n", "argmax", "argmin", "asin", "asinh", "atan",
    "atan2", "atanh", "bincount", "ceil", "confusion_matrix", "conj", "cos", "cosh",
    "count_nonzero", "cumsum",
    "divide", "divide_no_nan", "equal", "erf", "exp", "expm1", "floor", "floordiv",
    "floormod", "greater", "greater_equal", "imag", "in_top_k", "invert_permutation", "is_finite",
    "is_inf", "is_nan", "is_non_decreasing", "is_strictly_increasing", "l2_normalize",
    "less", "less_equal", "log", "log1p", "log_sigmoid", "log_softmax", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "mod", "multiply",
    "multiply_no_nan", "negative", "not_equal", "polyval", "pow", "reciprocal",
    "reciprocal_no_nan", "reduce_all", "reduce_any", "reduce_euclidean_norm",
    "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod",
    "real", "reduce_std", "reduce_sum", "reduce_variance", "rint", "round", "rsqrt", "scalar_mul",
    "segment_max", "segment_mean", "segment_min", "segment_sum", "sigmoid", "sign", "sin",
    "sinh", "softmax", "softplus", "softsign", "sqrt", "square", "squared_difference",
    "subtract", "tan", "tanh", "top_k", "truediv", "unsorted_segment_max",
    "unsorted_segment_mean", "unsorted_segment_min", "unsorted_segment_sqrt_n",
    "unsorted_segment_sum", "xdivy", "xlog1py", "xlogy", "zero_fraction",
]

"""``keras.ops``' math functions (``keras.ops.math``): top-k, log-sum-exp, rsqrt, erf and
segment reductions, over ember ops on the input's device.

Segment reductions drop ids outside ``[0, num_segments)``, as JAX does (TensorFlow drops
negative ids too, but its CPU kernels raise for ids ``>= num_segments``: checking would
cost a sync on a GPU). ``num_segments=None`` reads the largest id to the host (one sync
on a GPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from ._core import as_float, axes_of, host_int, on_device_of, tensor


def top_k(x: Any, k: int, sorted: bool = True) -> tuple[em.Tensor, em.Tensor]:
    """(values, indices) of the ``k`` largest entries along the last axis (indices int32;
    ties keep the first index first; the values come sorted either way)."""
    values, indices = em.top_k(tensor(x), int(k), sorted=bool(sorted))
    return values, indices


def in_top_k(targets: Any, predictions: Any, k: int) -> em.Tensor:
    """Whether each row's ``predictions[target]`` is among its ``k`` largest (a value tied
    with the k-th counts as in; NaN never does)."""
    p = tensor(predictions)
    t = tensor(targets)
    t = em.cast(t, em.int32) if t.dtype.kind not in "iu" else t
    picked = em.take_along_axis(p, em.expand_dims(t, -1), -1)
    kth = em.top_k(p, int(k)).values[..., int(k) - 1:int(k)]
    return em.squeeze(em.greater_equal(picked, kth), -1)


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    """log(sum(exp(x))) over ``axis``, without overflow."""
    t = as_float(x)
    ax = None if axis is None else axes_of("logsumexp", axis, t.ndim)
    return em.reduce_logsumexp(t, ax, keepdims=keepdims)


def rsqrt(x: Any) -> em.Tensor:
    return em.rsqrt(as_float(x))


def erf(x: Any) -> em.Tensor:
    return em.erf(as_float(x))


def _segments(fn: str, data: Any, segment_ids: Any, num_segments: Any
              ) -> tuple[em.Tensor, em.Tensor, int]:
    """The data, the ids (those outside [0, n) moved to the extra segment n) and n."""
    x = tensor(data)
    ids = segment_ids if isinstance(segment_ids, em.Tensor) else \
        em.convert_to_tensor(np.asarray(segment_ids), device=x.device)
    if ids.ndim != 1 or x.ndim < 1 or ids.shape[0] != x.shape[0]:
        raise em.InvalidArgumentError(f"ember.nn.ops.{fn}: segment_ids must be 1-D with one "
                                      f"id per row of data, got {ids.shape} for data "
                                      f"{x.shape}")
    ids = em.cast(ids, em.int32) if ids.dtype != em.int32 else ids
    if num_segments is None:
        n = host_int(em.reduce_max(ids)) + 1 if ids.shape[0] else 0
    else:
        n = host_int(num_segments)
    outside = em.logical_or(em.less(ids, 0), em.greater_equal(ids, n))
    return x, em.where(outside, n, ids), n


def segment_sum(data: Any, segment_ids: Any, num_segments: Any = None,
                sorted: bool = False) -> em.Tensor:
    """The sum of the rows of ``data`` in each segment (``sorted`` is a hint: the result is
    the same)."""
    x, ids, n = _segments("segment_sum", data, segment_ids, num_segments)
    with on_device_of(x):
        out = em.zeros((n + 1,) + x.shape[1:], x.dtype)
    return em.index_add(out, ids, x)[:n]


def _segment_extreme(fn: str, data: Any, segment_ids: Any, num_segments: Any,
                     largest: bool) -> em.Tensor:
    x, ids, n = _segments(fn, data, segment_ids, num_segments)
    with on_device_of(x):
        member = em.equal(em.reshape(ids, (1, -1)), em.reshape(em.range(n), (n, 1)))
        if x.dtype.kind in "iu":
            info = np.iinfo(x.dtype)
            empty = em.constant(info.min if largest else info.max, dtype=x.dtype)
        else:
            empty = em.constant(-np.inf if largest else np.inf, dtype=x.dtype)
    rows = em.reshape(x, (1, x.shape[0], -1))  # (1, N, D): every segment sees every row
    picked = em.where(em.expand_dims(member, -1), rows, empty)  # (n, N, D)
    out = em.reduce_max(picked, 1) if largest else em.reduce_min(picked, 1)
    return em.reshape(out, (n,) + x.shape[1:])


def segment_max(data: Any, segment_ids: Any, num_segments: Any = None,
                sorted: bool = False) -> em.Tensor:
    """The maximum of the rows of ``data`` in each segment (-inf, or the integer minimum,
    for an empty segment). Memory grows as segments x rows."""
    return _segment_extreme("segment_max", data, segment_ids, num_segments, True)


def segment_min(data: Any, segment_ids: Any, num_segments: Any = None,
                sorted: bool = False) -> em.Tensor:
    """The minimum of the rows of ``data`` in each segment (inf, or the integer maximum,
    for an empty segment). Memory grows as segments x rows."""
    return _segment_extreme("segment_min", data, segment_ids, num_segments, False)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> em.Tensor:
    """``keras.ops.norm`` (numpy's ``linalg.norm``): a vector norm along an int ``axis``, a
    matrix norm over a 2-tuple ``axis``; with ``axis=None``, the 2-norm of all entries
    (``ord=None``), else a vector or matrix norm of a 1-D or 2-D ``x``.

    Vector ``ord``: None or 2 (Euclidean), ``inf``/``-inf`` (largest/smallest magnitude),
    0 (count of nonzeros), any other number p: ``sum(|x|**p)**(1/p)``. Matrix ``ord``:
    None or ``"fro"``, ``"nuc"`` (sum of singular values), 1/-1 (largest/smallest column
    sum of magnitudes), ``inf``/``-inf`` (rows), 2/-2 (largest/smallest singular value).
    Integer inputs compute in float32.
    """
    t = as_float(x)
    ndim = t.ndim
    if axis is None:
        if ord is None:
            r = em.sqrt(em.reduce_sum(em.square(t)))
            return em.reshape(r, (1,) * ndim) if keepdims else r
        if ndim not in (1, 2):
            raise em.InvalidArgumentError(f"ember.nn.ops.norm: ord={ord!r} with axis=None "
                                          f"needs a 1-D or 2-D x, got shape {tuple(t.shape)}")
        axis = 0 if ndim == 1 else (0, 1)
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    if isinstance(axis, (list, tuple)):
        ax = axes_of("norm", axis, ndim)
        if len(ax) != 2:
            raise em.InvalidArgumentError(f"ember.nn.ops.norm: axis must be an int or a "
                                          f"2-tuple of distinct axes, got {axis!r}")
        r = _matrix_norm(t, ord, (int(axis[0]) % ndim, int(axis[1]) % ndim))
        out_axes = sorted(ax)
    else:
        a = axes_of("norm", axis, ndim)[0]
        r = _vector_norm(t, ord, a)
        out_axes = [a]
    if keepdims:
        for a in out_axes:
            r = em.expand_dims(r, a)
    return r


def _vector_norm(t: em.Tensor, ord: Any, a: int) -> em.Tensor:
    mag = em.abs(t)
    if ord is None or ord == 2:
        return em.sqrt(em.reduce_sum(em.square(t), a))
    if ord == np.inf:
        return em.reduce_max(mag, a)
    if ord == -np.inf:
        return em.reduce_min(mag, a)
    if ord == 0:
        return em.reduce_sum(em.cast(em.not_equal(t, 0), t.dtype), a)
    if ord == 1:
        return em.reduce_sum(mag, a)
    if isinstance(ord, str) or isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise em.InvalidArgumentError(f"ember.nn.ops.norm: ord={ord!r} is not a vector "
                                      "norm (use a number, inf or -inf)")
    p = float(ord)
    return em.pow(em.reduce_sum(em.pow(mag, p), a), 1.0 / p)


def _matrix_norm(t: em.Tensor, ord: Any, axes: tuple[int, int]) -> em.Tensor:
    rows, cols = axes
    if ord is None or ord == "fro":
        return em.sqrt(em.reduce_sum(em.square(t), list(axes)))
    if ord in ("nuc", 2, -2):
        rest = [i for i in range(t.ndim) if i not in axes]
        s = em.linalg.svd(em.transpose(t, rest + [rows, cols]), compute_uv=False)
        if ord == "nuc":
            return em.reduce_sum(s, -1)
        return em.reduce_max(s, -1) if ord == 2 else em.reduce_min(s, -1)
    if ord in (1, -1, np.inf, -np.inf) and not isinstance(ord, bool):
        # 1: the sums down each column (over the rows), inf: along each row
        over, then = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = em.reduce_sum(em.abs(t), over)
        then -= then > over  # the summed axis is gone
        return em.reduce_max(sums, then) if ord > 0 else em.reduce_min(sums, then)
    raise em.InvalidArgumentError(f"ember.nn.ops.norm: ord={ord!r} is not a matrix norm "
                                  "(use None, 'fro', 'nuc', 1, -1, 2, -2, inf or -inf)")

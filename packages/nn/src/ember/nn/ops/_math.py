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

"""Specs for the 3-D convolution and pooling of ember.core.nn_ops and their primitives.

The numpy references are an independent window-by-window loop over (depth, height,
width); the PyTorch ones are ``torch.nn.functional.conv3d`` / ``max_pool3d`` /
``avg_pool3d`` on the channels-first transpose, the padding made explicit first.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import nn_ops as nn
from .._ops import conv_3d
from ._spec import F32, FLOATS, I32, OpSpec, args, arr, case


def _triple(v: Any) -> tuple[int, int, int]:
    if isinstance(v, int):
        return (v, v, v)
    v = list(v)
    return (v[1], v[2], v[3]) if len(v) == 5 else (v[0], v[1], v[2])


def _pads(padding: Any, dhw: Any, k: Any, s: Any, d: Any) -> Any:
    if not isinstance(padding, str):
        return tuple(tuple(p) for p in padding)
    if padding.upper() == "VALID":
        return ((0, 0),) * 3
    out = []
    for n, kk, ss, dd in zip(dhw, k, s, d):
        total = max((-(-n // ss) - 1) * ss + (kk - 1) * dd + 1 - n, 0)
        out.append((total // 2, total - total // 2))
    return tuple(out)


def _windows_ref(x: np.ndarray, k: Any, s: Any, d: Any, pads: Any,
                 pad_value: float = 0.0) -> np.ndarray:
    """(N, OD, OH, OW, KD, KH, KW, C): every window, element by element."""
    xp = np.pad(x, ((0, 0), *pads, (0, 0)), constant_values=pad_value)
    o = [(xp.shape[1 + i] - (k[i] - 1) * d[i] - 1) // s[i] + 1 for i in range(3)]
    out = np.zeros((x.shape[0], *o, *k, x.shape[4]), x.dtype)
    for a in range(o[0]):
        for b in range(o[1]):
            for c in range(o[2]):
                for i in range(k[0]):
                    for j in range(k[1]):
                        for m in range(k[2]):
                            out[:, a, b, c, i, j, m] = xp[:, a * s[0] + i * d[0],
                                                          b * s[1] + j * d[1],
                                                          c * s[2] + m * d[2]]
    return out


def _to_volume_ref(p: np.ndarray, shape: Any, s: Any, d: Any, pads: Any) -> np.ndarray:
    """The adjoint of ``_windows_ref``: every window added back."""
    n, dd, h, w, c = shape
    (pf, pk), (pt, pb), (pl, pr) = pads
    out = np.zeros((n, dd + pf + pk, h + pt + pb, w + pl + pr, c), p.dtype)
    for a in range(p.shape[1]):
        for b in range(p.shape[2]):
            for e in range(p.shape[3]):
                for i in range(p.shape[4]):
                    for j in range(p.shape[5]):
                        for m in range(p.shape[6]):
                            out[:, a * s[0] + i * d[0], b * s[1] + j * d[1],
                                e * s[2] + m * d[2]] += p[:, a, b, e, i, j, m]
    return out[:, pf:pf + dd, pt:pt + h, pl:pl + w]


def _ncdhw(v: Any) -> Any:
    if isinstance(v, (list, tuple)) and len(v) == 5:
        return [v[0], v[2], v[3], v[4], v[1]]
    return v


def _conv3d_ref(x: np.ndarray, w: np.ndarray, strides: Any = 1, padding: Any = "VALID",
                data_format: str = "NDHWC", dilations: Any = 1) -> np.ndarray:
    if data_format == "NCDHW":
        return _conv3d_ref(x.transpose(0, 2, 3, 4, 1), w, _ncdhw(strides), padding, "NDHWC",
                           _ncdhw(dilations)).transpose(0, 4, 1, 2, 3)
    s, d = _triple(strides), _triple(dilations)
    pads = _pads(padding, x.shape[1:4], w.shape[:3], s, d)
    p = _windows_ref(x.astype(np.float64), w.shape[:3], s, d, pads)
    g = x.shape[4] // w.shape[3]  # grouped: filters (KD, KH, KW, C / G, C_out)
    ps, ws = np.split(p, g, axis=7), np.split(w.astype(np.float64), g, axis=4)
    return np.concatenate([np.tensordot(a, b, [[4, 5, 6, 7], [0, 1, 2, 3]])
                           for a, b in zip(ps, ws)], axis=4).astype(x.dtype)


def _torch_pad(T: Any, x: Any, pads: Any, value: float = 0.0) -> Any:
    (pf, pk), (pt, pb), (pl, pr) = pads
    return T.nn.functional.pad(x.permute(0, 4, 1, 2, 3), (pl, pr, pt, pb, pf, pk),
                               value=value)


def _conv3d_torch(T: Any, x: Any, w: Any, strides: Any = 1, padding: Any = "VALID",
                  data_format: str = "NDHWC", dilations: Any = 1) -> Any:
    if data_format == "NCDHW":
        y = _conv3d_torch(T, x.permute(0, 2, 3, 4, 1), w, _ncdhw(strides), padding, "NDHWC",
                          _ncdhw(dilations))
        return y.permute(0, 4, 1, 2, 3)
    s, d = _triple(strides), _triple(dilations)
    pads = _pads(padding, tuple(x.shape[1:4]), tuple(w.shape[:3]), s, d)
    y = T.nn.functional.conv3d(_torch_pad(T, x, pads), w.permute(4, 3, 0, 1, 2), stride=s,
                               dilation=d, groups=x.shape[4] // w.shape[3])
    return y.permute(0, 2, 3, 4, 1)


def _bp_input_ref(dy: np.ndarray, w: np.ndarray, input_shape: Any, strides: Any,
                  dilations: Any, pads: Any) -> np.ndarray:
    cols = np.tensordot(dy.astype(np.float64), w.astype(np.float64), [[4], [4]])
    return _to_volume_ref(cols, input_shape, strides, dilations, pads).astype(dy.dtype)


def _bp_filter_ref(x: np.ndarray, dy: np.ndarray, filter_shape: Any, strides: Any,
                   dilations: Any, pads: Any) -> np.ndarray:
    p = _windows_ref(x.astype(np.float64), filter_shape[:3], strides, dilations, pads)
    return np.tensordot(p, dy.astype(np.float64), [[0, 1, 2, 3], [0, 1, 2, 3]]).astype(x.dtype)


def _conv_t_ref(x: np.ndarray, w: np.ndarray, output_shape: Any, strides: Any = 1,
                padding: Any = "SAME", data_format: str = "NDHWC",
                dilations: Any = 1) -> np.ndarray:
    s, d = _triple(strides), _triple(dilations)
    pads = _pads(padding, output_shape[1:4], w.shape[:3], s, d)
    return _bp_input_ref(x, w, output_shape, s, d, pads)


# (input shape, filter shape, strides, dilations, pads, output gradient shape) of the
# gradient products: stride 1, strided and padded (depth padding too), dilated, one tap
# deep, and a depth stride that leaves the last frames in no window.
_GEOMETRIES = {
    "valid_3x3x3": ((2, 4, 5, 4, 2), (3, 3, 3, 2, 3), (1, 1, 1), (1, 1, 1),
                    ((0, 0), (0, 0), (0, 0)), (2, 2, 3, 2, 3)),
    "strided_padded": ((1, 5, 5, 6, 2), (3, 2, 3, 2, 2), (2, 2, 1), (1, 1, 1),
                       ((1, 1), (0, 1), (1, 1)), (1, 3, 3, 6, 2)),
    "dilated": ((1, 5, 4, 5, 1), (2, 2, 2, 1, 2), (1, 1, 2), (2, 1, 1),
                ((0, 0), (1, 0), (0, 0)), (1, 3, 4, 2, 2)),
    "one_deep": ((2, 3, 4, 4, 3), (1, 2, 2, 3, 2), (1, 1, 1), (1, 1, 1),
                 ((0, 0), (0, 0), (0, 0)), (2, 3, 3, 3, 2)),
    "depth_uncovered": ((1, 6, 3, 3, 2), (2, 2, 2, 2, 1), (3, 1, 1), (1, 1, 1),
                        ((0, 0), (0, 0), (0, 0)), (1, 2, 2, 2, 1)),
}


def _distinct(*shape: int) -> Any:
    """Distinct values (no ties, where a maximum's derivative is undefined), 0.05 apart;
    whole numbers for integer dtypes."""
    def make(rng: np.random.Generator, dt: np.dtype) -> np.ndarray:
        size = math.prod(shape)
        v = rng.permutation(size).reshape(shape) - size // 2
        return (v if np.dtype(dt).kind in "iu" else v * 0.05).astype(dt)

    return make


def _pool_ref(kind: str) -> Any:
    def ref(x: np.ndarray, ksize: Any, strides: Any = None, padding: str = "VALID",
            data_format: str = "NDHWC") -> Any:
        if data_format == "NCDHW":
            return ref(x.transpose(0, 2, 3, 4, 1), _ncdhw(ksize), _ncdhw(strides),
                       padding).transpose(0, 4, 1, 2, 3)
        k = _triple(ksize)
        s = k if strides is None else _triple(strides)
        pads = _pads(padding, x.shape[1:4], k, s, (1, 1, 1))
        if kind == "max":
            low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
            return _windows_ref(x, k, s, (1, 1, 1), pads, low).max(axis=(4, 5, 6))
        total = _windows_ref(x.astype(np.float64), k, s, (1, 1, 1), pads).sum(axis=(4, 5, 6))
        count = _windows_ref(np.ones(x.shape), k, s, (1, 1, 1), pads).sum(axis=(4, 5, 6))
        return (total / count).astype(x.dtype)

    return ref


def _pool_torch(kind: str) -> Any:
    def call(T: Any, x: Any, ksize: Any, strides: Any = None, padding: str = "VALID",
             data_format: str = "NDHWC") -> Any:
        if not x.dtype.is_floating_point:
            return None
        if data_format == "NCDHW":
            return call(T, x.permute(0, 2, 3, 4, 1), _ncdhw(ksize), _ncdhw(strides),
                        padding).permute(0, 4, 1, 2, 3)
        k = _triple(ksize)
        s = k if strides is None else _triple(strides)
        pads = _pads(padding, tuple(x.shape[1:4]), k, s, (1, 1, 1))
        F = T.nn.functional
        if kind == "max":
            y = F.max_pool3d(_torch_pad(T, x, pads, -math.inf), k, s)
        else:
            y = F.avg_pool3d(_torch_pad(T, x, pads), k, s, divisor_override=1) / F.avg_pool3d(
                _torch_pad(T, T.ones_like(x), pads), k, s, divisor_override=1)
        return y.permute(0, 2, 3, 4, 1)

    return call


def specs() -> list[OpSpec]:
    vol = arr(2, 4, 5, 5, 3)
    g = _GEOMETRIES
    tol = {F32: (1e-5, 1e-5)}
    return [
        OpSpec("nn_ops.conv3d", nn.conv3d, _conv3d_ref, (
            case("valid", args(vol, arr(2, 3, 3, 3, 4))),
            case("same_3x3x3", args(vol, arr(3, 3, 3, 3, 2)), padding="SAME"),
            case("same_strided", args(vol, arr(3, 2, 3, 3, 2)), strides=2, padding="SAME"),
            case("tf_strides", args(vol, arr(2, 2, 2, 3, 2)), strides=[1, 1, 2, 1, 1]),
            case("dilated", args(vol, arr(2, 2, 2, 3, 2)), dilations=(1, 2, 2),
                 padding="SAME"),
            case("one_by_one", args(vol, arr(1, 1, 1, 3, 5))),
            case("explicit_pads", args(arr(1, 3, 4, 4, 2), arr(2, 3, 2, 2, 2)),
                 padding=[[1, 0], [0, 2], [1, 1]]),
            case("ncdhw", args(arr(2, 3, 4, 5, 5), arr(2, 3, 3, 3, 2)),
                 strides=[1, 1, 1, 2, 2], padding="SAME", data_format="NCDHW"),
            case("groups_2", args(arr(1, 3, 4, 4, 4), arr(2, 2, 3, 2, 4)), padding="SAME"),
            case("groups_ncdhw", args(arr(1, 3, 3, 4, 4), arr(2, 2, 2, 1, 3)),
                 strides=(1, 2, 1), data_format="NCDHW"),
        ), FLOATS, True, (0, 1), _conv3d_torch, tol=tol),
        OpSpec("conv3d_backprop_input", conv_3d.conv3d_backprop_input, _bp_input_ref, tuple(
            case(n, args(arr(*dy), arr(*w), x, s, d, p)) for n, (x, w, s, d, p, dy) in g.items()
        ), FLOATS, True, (0, 1), tol=tol),
        OpSpec("conv3d_backprop_filter", conv_3d.conv3d_backprop_filter, _bp_filter_ref,
               tuple(case(n, args(arr(*x), arr(*dy), w, s, d, p))
                     for n, (x, w, s, d, p, dy) in g.items()),
               FLOATS, True, (0, 1), tol=tol),
        OpSpec("nn_ops.conv3d_transpose", nn.conv3d_transpose, _conv_t_ref, (
            case("same_strided", args(arr(2, 2, 3, 3, 4), arr(3, 3, 3, 2, 4),
                                      (2, 4, 6, 5, 2)), strides=2),
            case("valid", args(arr(1, 2, 3, 4, 2), arr(2, 2, 2, 3, 2), (1, 3, 4, 5, 3)),
                 padding="VALID"),
        ), FLOATS, True, (0, 1), tol=tol),
        OpSpec("nn_ops.max_pool3d", nn.max_pool3d, _pool_ref("max"), (
            case("valid", args(_distinct(2, 4, 4, 6, 3), 2)),
            case("same", args(_distinct(1, 5, 5, 3, 2), 2, 2, "SAME")),
            case("overlap", args(_distinct(1, 4, 5, 4, 2), (3, 2, 2), 1)),
            case("ncdhw", args(_distinct(1, 2, 4, 5, 4), [1, 1, 2, 2, 2], None, "SAME"),
                 data_format="NCDHW"),
        ), FLOATS + (I32,), True, (0,), _pool_torch("max")),
        OpSpec("nn_ops.avg_pool3d", nn.avg_pool3d, _pool_ref("avg"), (
            case("valid", args(arr(2, 4, 4, 6, 3), 2)),
            case("same", args(arr(1, 5, 5, 3, 2), 2, 2, "SAME")),
            case("overlap", args(arr(1, 4, 5, 4, 2), (3, 2, 2), (1, 2, 1))),
            case("ncdhw", args(arr(1, 2, 4, 5, 4), [1, 1, 2, 2, 2], None, "SAME"),
                 data_format="NCDHW"),
        ), FLOATS, True, (0,), _pool_torch("avg")),
    ]

"""Specs for ember.core.nn_ops, the sliding-window primitives and ember.core.random."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal

from .. import nn_ops as nn
from .. import random as rnd
from .._ops import conv, conv_depthwise, conv_select, define_nn
from ._spec import (
    F16,
    F32,
    FLOATS,
    I32,
    I64,
    OpSpec,
    args,
    arr,
    case,
    sample,
    unary,
    vectorize_float,
)

_erf = vectorize_float(math.erf)


# --- sliding windows: an independent loop implementation --------------------------------
def _depth_to_space_ref(x: np.ndarray, bs: int, data_format: str = "NHWC") -> np.ndarray:
    """TensorFlow's definition, element by element."""
    if data_format == "NCHW":
        return _depth_to_space_ref(x.transpose(0, 2, 3, 1), bs).transpose(0, 3, 1, 2)
    n, h, w, c = x.shape
    co = c // (bs * bs)
    out = np.zeros((n, h * bs, w * bs, co), x.dtype)
    for i in range(bs):
        for j in range(bs):
            for k in range(co):
                out[:, i::bs, j::bs, k] = x[:, :, :, (i * bs + j) * co + k]
    return out


def _space_to_depth_ref(x: np.ndarray, bs: int, data_format: str = "NHWC") -> np.ndarray:
    if data_format == "NCHW":
        return _space_to_depth_ref(x.transpose(0, 2, 3, 1), bs).transpose(0, 3, 1, 2)
    n, h, w, c = x.shape
    out = np.zeros((n, h // bs, w // bs, bs * bs * c), x.dtype)
    for i in range(bs):
        for j in range(bs):
            out[..., (i * bs + j) * c:(i * bs + j + 1) * c] = x[:, i::bs, j::bs, :]
    return out


def _pair(v: Any) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    v = list(v)
    return (v[1], v[2]) if len(v) == 4 else (v[0], v[-1])


def _pads(padding: Any, hw: Any, k: Any, s: Any, d: Any) -> Any:
    if not isinstance(padding, str):
        return tuple(tuple(p) for p in padding)
    if padding.upper() == "VALID":
        return ((0, 0), (0, 0))
    out = []
    for n, kk, ss, dd in zip(hw, k, s, d):
        total = max((-(-n // ss) - 1) * ss + (kk - 1) * dd + 1 - n, 0)
        out.append((total // 2, total - total // 2))
    return tuple(out)


def _patches_ref(x: np.ndarray, sizes: Any, strides: Any = 1, rates: Any = 1,
                 padding: Any = "VALID", pad_value: float = 0.0) -> np.ndarray:
    k, s, d = _pair(sizes), _pair(strides), _pair(rates)
    (pt, pb), (pl, pr) = _pads(padding, x.shape[1:3], k, s, d)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=pad_value)
    oh = (xp.shape[1] - (k[0] - 1) * d[0] - 1) // s[0] + 1
    ow = (xp.shape[2] - (k[1] - 1) * d[1] - 1) // s[1] + 1
    out = np.zeros((x.shape[0], oh, ow, k[0], k[1], x.shape[3]), x.dtype)
    for i in range(oh):
        for j in range(ow):
            for a in range(k[0]):
                for b in range(k[1]):
                    out[:, i, j, a, b] = xp[:, i * s[0] + a * d[0], j * s[1] + b * d[1]]
    return out


def _to_image_ref(p: np.ndarray, image_shape: Any, strides: Any, dilations: Any,
                  pads: Any) -> np.ndarray:
    n, h, w, c = image_shape
    (pt, pb), (pl, pr) = pads
    out = np.zeros((n, h + pt + pb, w + pl + pr, c), p.dtype)
    for i in range(p.shape[1]):
        for j in range(p.shape[2]):
            for a in range(p.shape[3]):
                for b in range(p.shape[4]):
                    out[:, i * strides[0] + a * dilations[0],
                        j * strides[1] + b * dilations[1]] += p[:, i, j, a, b]
    return out[:, pt:pt + h, pl:pl + w]


def _conv2d_ref(x: np.ndarray, w: np.ndarray, strides: Any = 1, padding: Any = "VALID",
                data_format: str = "NHWC", dilations: Any = 1) -> np.ndarray:
    p = _patches_ref(x, w.shape[:2], strides, dilations, padding)
    g = x.shape[3] // w.shape[2]  # grouped: filters (KH, KW, C / G, C_out)
    ps, ws = np.split(p, g, axis=5), np.split(w, g, axis=3)
    return np.concatenate([np.tensordot(a, b, [[3, 4, 5], [0, 1, 2]]) for a, b in zip(ps, ws)],
                          axis=3).astype(x.dtype)


def _conv1d_ref(x: np.ndarray, w: np.ndarray, stride: int = 1, padding: Any = "VALID",
                dilations: int = 1) -> np.ndarray:
    return _conv2d_ref(x[:, None], w[None], (1, stride), padding, dilations=(1, dilations))[:, 0]


def _conv_t_ref(x: np.ndarray, w: np.ndarray, output_shape: Any, strides: Any = 1,
                padding: Any = "SAME") -> np.ndarray:
    s = _pair(strides)
    kh, kw = w.shape[:2]
    (pt, pb), (pl, pr) = _pads(padding, output_shape[1:3], (kh, kw), s, (1, 1))
    n, h, wd, oc = output_shape
    out = np.zeros((n, h + pt + pb, wd + pl + pr, oc), x.dtype)
    for i in range(x.shape[1]):
        for j in range(x.shape[2]):
            for a in range(kh):
                for b in range(kw):
                    out[:, i * s[0] + a, j * s[1] + b] += x[:, i, j] @ w[a, b].T
    return out[:, pt:pt + h, pl:pl + wd]


def _bp_input_ref(dy: np.ndarray, w: np.ndarray, input_shape: Any, strides: Any,
                  dilations: Any, pads: Any) -> np.ndarray:
    cols = np.tensordot(dy, w, [[3], [3]])  # (N, OH, OW, KH, KW, C)
    return _to_image_ref(cols, input_shape, strides, dilations, pads).astype(dy.dtype)


def _bp_filter_ref(x: np.ndarray, dy: np.ndarray, filter_shape: Any, strides: Any,
                   dilations: Any, pads: Any) -> np.ndarray:
    p = _patches_ref(x, filter_shape[:2], strides, dilations, [list(q) for q in pads])
    return np.tensordot(p, dy, [[0, 1, 2], [0, 1, 2]]).astype(x.dtype)


# (input shape, filter shape, strides, dilations, pads) of the gradient products' cases:
# stride-1 ones (every algorithm applies), a strided padded one and a dilated one.
_CONV_GEOMETRIES = {
    "valid_3x3": ((2, 5, 6, 3), (3, 3, 3, 4), (1, 1), (1, 1), ((0, 0), (0, 0)), (2, 3, 4, 4)),
    "same_3x3": ((2, 5, 6, 3), (3, 3, 3, 2), (1, 1), (1, 1), ((1, 1), (1, 1)), (2, 5, 6, 2)),
    # LeNet's filters (Winograd F(4x4, 5x5)), and a padding wider than the filter
    "same_5x5": ((2, 7, 6, 3), (5, 5, 3, 2), (1, 1), (1, 1), ((2, 2), (2, 2)), (2, 7, 6, 2)),
    "wide_pads_2x3": ((1, 4, 5, 2), (2, 3, 2, 3), (1, 1), (1, 1), ((3, 2), (0, 4)),
                      (1, 8, 7, 3)),
    "strided_padded": ((1, 5, 6, 2), (3, 2, 2, 3), (2, 2), (1, 1), ((1, 1), (0, 1)),
                       (1, 3, 3, 3)),
    "dilated": ((1, 6, 6, 2), (2, 2, 2, 3), (1, 1), (2, 2), ((0, 0), (0, 0)), (1, 4, 4, 3)),
    # one input channel (a grayscale first layer: im2col gathers its windows tap by tap)
    "one_channel_strided": ((2, 7, 6, 1), (3, 2, 1, 3), (2, 1), (1, 1), ((1, 1), (0, 1)),
                            (2, 4, 6, 3)),
    # the last row and column are in no window: their input gradient is zero
    "strided_uncovered": ((1, 6, 7, 2), (3, 3, 2, 2), (2, 3), (1, 1), ((0, 0), (0, 0)),
                          (1, 2, 2, 2)),
}


def _conv_products() -> list[OpSpec]:
    g = _CONV_GEOMETRIES
    return [
        OpSpec("conv2d_backprop_input", conv_select.conv2d_backprop_input, _bp_input_ref, tuple(
            case(n, args(arr(*dy), arr(*w), x, s, d, p)) for n, (x, w, s, d, p, dy) in g.items()
        ), FLOATS, True, (0, 1), tol={F32: (1e-5, 1e-5)}),
        OpSpec("conv2d_backprop_filter", conv_select.conv2d_backprop_filter, _bp_filter_ref,
               tuple(case(n, args(arr(*x), arr(*dy), w, s, d, p))
                     for n, (x, w, s, d, p, dy) in g.items()),
               FLOATS, True, (0, 1), tol={F32: (1e-5, 1e-5)}),
    ]


def _depthwise_ref(x: np.ndarray, w: np.ndarray, strides: Any = 1, padding: Any = "VALID",
                   data_format: Any = None, dilations: Any = None) -> np.ndarray:
    if data_format == "NCHW":
        nhwc = [strides[0], strides[2], strides[3], strides[1]] \
            if not isinstance(strides, int) and len(strides) == 4 else strides
        return _depthwise_ref(x.transpose(0, 2, 3, 1), w, nhwc, padding, None,
                              dilations).transpose(0, 3, 1, 2)
    d = 1 if dilations is None else dilations
    p = _patches_ref(x, w.shape[:2], strides, d, padding)  # (N, OH, OW, KH, KW, C)
    y = np.einsum("nhwijc,ijcm->nhwcm", p.astype(np.float64), w.astype(np.float64))
    return y.reshape(y.shape[:3] + (-1,)).astype(x.dtype)


def _separable_ref(x: np.ndarray, dw: np.ndarray, pw: np.ndarray, strides: Any = 1,
                   padding: Any = "VALID", data_format: Any = None,
                   dilations: Any = None) -> np.ndarray:
    y = _depthwise_ref(x, dw, strides, padding, None, dilations)
    return np.tensordot(y, pw[0, 0], [[3], [0]]).astype(x.dtype)


def _depthwise_torch(T: Any, x: Any, w: Any, strides: Any = 1, padding: Any = "VALID",
                     data_format: Any = None, dilations: Any = None) -> Any:
    """PyTorch's grouped convolution, one group per input channel (its output channel
    ``c * M + m`` is TensorFlow's too); SAME padding made explicit first."""
    if data_format is not None:
        return None
    kh, kw, c, m = w.shape
    s, d = _pair(strides), _pair(1 if dilations is None else dilations)
    (pt, pb), (pl, pr) = _pads(padding, x.shape[1:3], (kh, kw), s, d)
    xt = T.nn.functional.pad(_nchw(T, x), (pl, pr, pt, pb))
    wt = w.permute(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
    y = T.nn.functional.conv2d(xt, wt, stride=s, dilation=d, groups=c)
    return y.permute(0, 2, 3, 1)


def _separable_torch(T: Any, x: Any, dw: Any, pw: Any, strides: Any = 1,
                     padding: Any = "VALID", data_format: Any = None,
                     dilations: Any = None) -> Any:
    y = _depthwise_torch(T, x, dw, strides, padding, data_format, dilations)
    return None if y is None else T.tensordot(y, pw[0, 0], dims=([3], [0]))


# (input shape, filter shape, strides, dilations, pads, output gradient shape) of the
# depthwise gradient products: one multiplier and several, strided, dilated, both at once.
_DEPTHWISE_GEOMETRIES = {
    "valid_3x3": ((2, 5, 6, 3), (3, 3, 3, 1), (1, 1), (1, 1), ((0, 0), (0, 0)), (2, 3, 4, 3)),
    "same_multiplier_2": ((2, 5, 6, 3), (3, 3, 3, 2), (1, 1), (1, 1), ((1, 1), (1, 1)),
                          (2, 5, 6, 6)),
    "strided_padded": ((1, 5, 6, 2), (3, 2, 2, 3), (2, 2), (1, 1), ((1, 1), (0, 1)),
                       (1, 3, 3, 6)),
    "strided_dilated": ((1, 7, 8, 2), (2, 3, 2, 1), (2, 1), (2, 2), ((0, 1), (1, 1)),
                        (1, 3, 6, 2)),
    # the last row and column are in no window: their input gradient is zero
    "strided_uncovered": ((1, 6, 7, 2), (3, 3, 2, 2), (2, 3), (1, 1), ((0, 0), (0, 0)),
                          (1, 2, 2, 4)),
}


def _dw_bp_input_ref(dy: np.ndarray, w: np.ndarray, input_shape: Any, strides: Any,
                     dilations: Any, pads: Any) -> np.ndarray:
    d = dy.reshape(dy.shape[:3] + w.shape[2:]).astype(np.float64)
    cols = np.einsum("nhwcm,ijcm->nhwijc", d, w.astype(np.float64))
    return _to_image_ref(cols, input_shape, strides, dilations, pads).astype(dy.dtype)


def _dw_bp_filter_ref(x: np.ndarray, dy: np.ndarray, filter_shape: Any, strides: Any,
                      dilations: Any, pads: Any) -> np.ndarray:
    p = _patches_ref(x, filter_shape[:2], strides, dilations, [list(q) for q in pads])
    d = dy.reshape(dy.shape[:3] + tuple(filter_shape[2:])).astype(np.float64)
    return np.einsum("nhwijc,nhwcm->ijcm", p.astype(np.float64), d).astype(x.dtype)


def _depthwise_products() -> list[OpSpec]:
    g = _DEPTHWISE_GEOMETRIES
    return [
        OpSpec("depthwise_conv2d_native_backprop_input",
               conv_depthwise.depthwise_conv2d_native_backprop_input, _dw_bp_input_ref,
               tuple(case(n, args(arr(*dy), arr(*w), x, s, d, p))
                     for n, (x, w, s, d, p, dy) in g.items()),
               FLOATS, True, (0, 1), tol={F32: (1e-5, 1e-5)}),
        OpSpec("depthwise_conv2d_native_backprop_filter",
               conv_depthwise.depthwise_conv2d_native_backprop_filter, _dw_bp_filter_ref,
               tuple(case(n, args(arr(*x), arr(*dy), w, s, d, p))
                     for n, (x, w, s, d, p, dy) in g.items()),
               FLOATS, True, (0, 1), tol={F32: (1e-5, 1e-5)}),
    ]


def _pool_ref(kind: str) -> Any:
    def ref(x: np.ndarray, ksize: Any, strides: Any = None, padding: str = "VALID") -> Any:
        s = ksize if strides is None else strides
        if kind == "max":
            low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
            return _patches_ref(x, ksize, s, 1, padding, low).max(axis=(3, 4))
        total = _patches_ref(x, ksize, s, 1, padding).sum(axis=(3, 4))
        count = _patches_ref(np.ones_like(x), ksize, s, 1, padding).sum(axis=(3, 4))
        return total / count

    return ref


def _nchw(T: Any, x: Any) -> Any:
    return x.permute(0, 3, 1, 2)


def _conv2d_torch(T: Any, x: Any, w: Any, strides: Any = 1, padding: str = "VALID",
                  dilations: Any = 1) -> Any:
    if padding != "VALID":
        return None
    y = T.nn.functional.conv2d(_nchw(T, x), w.permute(3, 2, 0, 1), stride=_pair(strides),
                               dilation=_pair(dilations), groups=x.shape[3] // w.shape[2])
    return y.permute(0, 2, 3, 1)


def _pool_torch(kind: str) -> Any:
    def call(T: Any, x: Any, ksize: Any, strides: Any = None, padding: str = "VALID") -> Any:
        if padding != "VALID":
            return None
        f = T.nn.functional.max_pool2d if kind == "max" else T.nn.functional.avg_pool2d
        return f(_nchw(T, x), ksize, strides or ksize).permute(0, 2, 3, 1)

    return call


def _windows() -> list[OpSpec]:
    img = arr(2, 5, 6, 3)
    return [
        OpSpec("extract_patches", conv.extract_patches, _patches_ref, (
            case("valid", args(img, 2)),
            case("strided_same", args(img, (3, 2), 2, 1, "SAME")),
            case("dilated", args(img, 2, 1, 2)),
            case("explicit_pads", args(img, 3, 1, 1, [[1, 0], [0, 2]])),
        ), FLOATS + (I32,)),
        OpSpec("patches_to_image", conv.patches_to_image, _to_image_ref, (
            case("valid", args(arr(2, 4, 5, 2, 2, 3), (2, 5, 6, 3), (1, 1), (1, 1),
                               ((0, 0), (0, 0)))),
            case("strided_padded", args(arr(1, 3, 3, 3, 2, 2), (1, 5, 6, 2), (2, 2), (1, 1),
                                        ((1, 1), (0, 1)))),
            case("dilated", args(arr(1, 3, 4, 2, 2, 1), (1, 5, 6, 1), (1, 1), (2, 2),
                                 ((0, 0), (0, 0)))),
        ), FLOATS + (I32,)),
        OpSpec("nn_ops.conv2d", nn.conv2d, _conv2d_ref, (
            case("valid", args(img, arr(3, 3, 3, 4))),
            case("same_3x3", args(img, arr(3, 3, 3, 2)), padding="SAME"),
            case("same_5x5", args(img, arr(5, 5, 3, 2)), padding="SAME"),
            case("same_strided", args(img, arr(3, 2, 3, 2)), strides=2, padding="SAME"),
            case("tf_strides", args(img, arr(2, 2, 3, 2)), strides=[1, 2, 1, 1]),
            case("dilated", args(img, arr(2, 2, 3, 2)), dilations=2),
            case("one_by_one", args(img, arr(1, 1, 3, 5))),
            case("one_channel", args(arr(2, 5, 6, 1), arr(3, 2, 1, 2)), strides=(1, 2),
                 padding="SAME"),
            # grouped (filters' C_in / G channels): G = 2, and one channel per group
            case("groups_2", args(arr(2, 5, 6, 4), arr(3, 2, 2, 6)), strides=(1, 2)),
            case("groups_2_same", args(arr(1, 5, 6, 4), arr(3, 3, 2, 4)), padding="SAME"),
            case("groups_depthwise", args(arr(2, 5, 6, 3), arr(2, 3, 1, 6)), dilations=2),
        ), FLOATS, True, (0, 1), _conv2d_torch, tol={F32: (1e-5, 1e-5)}),
        OpSpec("nn_ops.depthwise_conv2d", nn.depthwise_conv2d, _depthwise_ref, (
            case("valid", args(img, arr(3, 3, 3, 1), 1, "VALID")),
            case("same_multiplier_2", args(img, arr(3, 3, 3, 2), 1, "SAME")),
            case("same_strided", args(img, arr(3, 2, 3, 2), 2, "SAME")),
            case("tf_strides", args(img, arr(2, 2, 3, 1), [1, 2, 1, 1], "VALID")),
            case("dilated", args(img, arr(2, 2, 3, 3), 1, "VALID"), dilations=[2, 2]),
            case("strided_dilated", args(arr(1, 7, 8, 2), arr(2, 3, 2, 1), (2, 1), "SAME"),
                 dilations=2),
            case("explicit_pads", args(img, arr(3, 3, 3, 1), 1, [[1, 0], [0, 2]])),
            case("one_by_one", args(img, arr(1, 1, 3, 2), 1, "VALID")),
            case("nchw", args(arr(2, 3, 5, 6), arr(3, 3, 3, 2), [1, 1, 2, 2], "SAME"),
                 data_format="NCHW"),
        ), FLOATS, True, (0, 1), _depthwise_torch, tol={F32: (1e-5, 1e-5)}),
        OpSpec("nn_ops.separable_conv2d", nn.separable_conv2d, _separable_ref, (
            case("same", args(img, arr(3, 3, 3, 1), arr(1, 1, 3, 4), 1, "SAME")),
            case("strided_multiplier_2", args(img, arr(3, 3, 3, 2), arr(1, 1, 6, 2), 2,
                                              "VALID")),
            case("dilated", args(img, arr(2, 2, 3, 1), arr(1, 1, 3, 2), 1, "SAME"),
                 dilations=2),
        ), FLOATS, True, (0, 1, 2), _separable_torch, tol={F32: (1e-5, 1e-5)}),
        OpSpec("nn_ops.conv1d", nn.conv1d, _conv1d_ref, (
            case("valid", args(arr(2, 7, 3), arr(3, 3, 4))),
            case("same_strided", args(arr(2, 7, 3), arr(3, 3, 2)), stride=2, padding="SAME"),
            case("groups_3", args(arr(2, 7, 6), arr(3, 2, 3)), stride=2),
        ), FLOATS, True, (0, 1), tol={F32: (1e-5, 1e-5)}),
        OpSpec("nn_ops.conv2d_transpose", nn.conv2d_transpose, _conv_t_ref, (
            case("same", args(arr(2, 3, 3, 4), arr(3, 3, 2, 4), (2, 6, 6, 2)), strides=2),
            case("valid", args(arr(1, 3, 4, 2), arr(2, 2, 3, 2), (1, 4, 5, 3)),
                 padding="VALID"),
        ), FLOATS, True, (0, 1), tol={F32: (1e-5, 1e-5)}),
        OpSpec("nn_ops.max_pool2d", nn.max_pool2d, _pool_ref("max"), (
            case("valid", args(arr(2, 4, 6, 3, domain="lattice_a"), 2)),
            case("same", args(arr(1, 5, 5, 2, domain="lattice_a"), 2, 2, "SAME")),
            case("overlap", args(arr(1, 5, 5, 2, domain="lattice_a"), 3, 1)),
        ), FLOATS + (I32,), True, (0,), _pool_torch("max")),
        OpSpec("nn_ops.avg_pool2d", nn.avg_pool2d, _pool_ref("avg"), (
            case("valid", args(arr(2, 4, 6, 3), 2)),
            case("same", args(arr(1, 5, 5, 2), 2, 2, "SAME")),
            case("rect", args(arr(1, 5, 6, 2), (2, 3), (1, 2))),
        ), FLOATS, True, (0,), _pool_torch("avg")),
    ]


# --- activations, softmax, normalisation, losses ------------------------------------------
def _lsm(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x64 = x.astype(np.float64)
    z = x64 - x64.max(axis, keepdims=True)
    return (z - np.log(np.exp(z).sum(axis, keepdims=True))).astype(x.dtype)


def _tanh_gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _selu(x: np.ndarray) -> np.ndarray:
    return 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))


def _fixed(*v: float) -> Any:
    return lambda rng, dt: np.array(v, dt)


def _activations() -> list[OpSpec]:
    u = unary
    f = "nn.functional."
    lat = {"domain": "lattice_a"}
    return [
        OpSpec("nn_ops.relu6", nn.relu6, lambda x: np.clip(x, 0, 6), (
            case("matrix", args(arr(3, 4))), case("wide", args(_fixed(-1.5, 3.2, 6.7, 7.5)))),
            FLOATS + (I32,), True, (0,), lambda T, x: T.nn.functional.relu6(x)),
        OpSpec("nn_ops.leaky_relu", nn.leaky_relu, lambda x, alpha=0.2: np.where(
            x > 0, x, alpha * x), (case("default", args(arr(3, 4))),
                                   case("alpha", args(arr(5)), alpha=0.01)),
               FLOATS, True, (0,), lambda T, x, alpha=0.2: T.nn.functional.leaky_relu(x, alpha)),
        OpSpec("leaky_relu_grad", define_nn.leaky_relu_grad,
               lambda dy, x, alpha: np.where(x > 0, dy, alpha * dy), (
                   case("matrix", args(arr(3, 4), arr(3, 4)), alpha=0.2),
                   case("broadcast", args(arr(3, 4), arr(4)), alpha=0.01)),
               FLOATS, True, (0, 1)),
        u("nn_ops.elu", nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), torch=f + "elu"),
        u("nn_ops.selu", nn.selu, _selu, torch=f + "selu"),
        u("nn_ops.gelu", nn.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
          torch=f + "gelu"),
        OpSpec("nn_ops.gelu.approximate", lambda x: nn.gelu(x, approximate=True), _tanh_gelu,
               (case("matrix", args(arr(3, 4))),), FLOATS, True, (0,),
               lambda T, x: T.nn.functional.gelu(x, approximate="tanh")),
        u("nn_ops.swish", nn.swish, lambda x: x / (1 + np.exp(-x)), torch=f + "silu"),
        OpSpec("nn_ops.softmax", nn.softmax, lambda x, axis=-1: np.exp(_lsm(x, axis)), (
            case("last", args(arr(3, 5, **lat))), case("axis0", args(arr(3, 5)), axis=0),
            case("large", args(_fixed(1000.0, 1001.0, -1000.0)))),
            FLOATS, True, (0,), lambda T, x, axis=-1: T.softmax(x, axis)),
        OpSpec("nn_ops.log_softmax", nn.log_softmax, _lsm, (
            case("last", args(arr(3, 5))), case("axis0", args(arr(3, 5)), axis=0),
            case("large", args(_fixed(1000.0, 1001.0, -1000.0)))),
            FLOATS, True, (0,), lambda T, x, axis=-1: T.log_softmax(x, axis)),
        OpSpec("nn_ops.bias_add", nn.bias_add, np.add, (
            case("nhwc", args(arr(2, 3, 3, 4), arr(4))), case("matrix", args(arr(5, 3), arr(3)))),
            FLOATS + (I32,), True, (0, 1)),
    ]


def _moments_ref(x: np.ndarray, axes: Any, keepdims: bool = False) -> Any:
    ax = tuple(axes)
    return x.mean(ax, keepdims=keepdims), x.var(ax, keepdims=keepdims)


def _bn_ref(x: Any, mean: Any, var: Any, offset: Any, scale: Any, eps: float) -> Any:
    y = (x - mean) / np.sqrt(var + eps)
    y = y * scale if scale is not None else y
    return y + offset if offset is not None else y


def _xent_ref(labels: np.ndarray, logits: np.ndarray) -> np.ndarray:
    return -(labels * _lsm(logits)).sum(-1)


def _sparse_ref(labels: np.ndarray, logits: np.ndarray) -> np.ndarray:
    return -np.take_along_axis(_lsm(logits), labels[..., None].astype(np.int64), -1)[..., 0]


def _sparse_grad_ref(dloss: np.ndarray, p: np.ndarray, labels: np.ndarray) -> np.ndarray:
    n = p.shape[-1]
    onehot = np.zeros_like(p)
    ok = (labels >= 0) & (labels < n)
    onehot[ok, labels[ok]] = 1
    return np.where(ok[..., None], dloss[..., None] * (p - onehot), 0).astype(p.dtype)


def _sigmoid_xent_ref(labels: np.ndarray, logits: np.ndarray) -> np.ndarray:
    p = 1 / (1 + np.exp(-logits.astype(np.float64)))
    return (-(labels * np.log(p) + (1 - labels) * np.log1p(-p))).astype(logits.dtype)


def _probs(*shape: int) -> Any:
    def make(rng: np.random.Generator, dt: Any) -> np.ndarray:
        p = rng.random(shape) + 0.1
        return (p / p.sum(-1, keepdims=True)).astype(dt)

    return make


def _labels(n: int, *shape: int) -> Any:
    return lambda rng, dt: rng.integers(0, n, shape).astype(np.int32)


def _norm_losses() -> list[OpSpec]:
    return [
        OpSpec("nn_ops.moments", nn.moments, _moments_ref, (
            case("batch", args(arr(4, 3), [0])),
            case("spatial_keepdims", args(arr(2, 3, 3, 2), [0, 1, 2]), keepdims=True),
        ), FLOATS),
        OpSpec("nn_ops.batch_normalization", nn.batch_normalization, _bn_ref, (
            case("full", args(arr(4, 3), arr(3), arr(3, domain="positive"), arr(3), arr(3),
                              1e-3)),
            case("no_affine", args(arr(2, 2, 3), arr(3), arr(3, domain="positive"), None, None,
                                   1e-5)),
        ), FLOATS, True, (0, 1, 2, 3, 4)),
        OpSpec("nn_ops.softmax_cross_entropy_with_logits",
               nn.softmax_cross_entropy_with_logits, _xent_ref, (
                   case("batch", args(_probs(4, 5), arr(4, 5))),
                   case("single", args(_probs(3), arr(3))),
               ), FLOATS, True, (0, 1),
               lambda T, y, x: T.nn.functional.cross_entropy(x, y, reduction="none")),
        OpSpec("nn_ops.sparse_softmax_cross_entropy_with_logits",
               nn.sparse_softmax_cross_entropy_with_logits, _sparse_ref, (
                   case("batch", args(_labels(5, 4), arr(4, 5))),
                   case("extreme", args(_labels(3, 2), lambda rng, dt: np.array(
                       [[500.0, -500.0, 0.0], [0.0, 1.0, 2.0]], dt))),
                   case("empty", args(_labels(3, 0), arr(0, 3))),
               ), FLOATS, True, (1,),
               lambda T, y, x: T.nn.functional.cross_entropy(x, y.long(), reduction="none")),
        OpSpec("sparse_softmax_xent_grad", define_nn.sparse_softmax_xent_grad,
               _sparse_grad_ref, (
                   case("batch", args(arr(4), _probs(4, 5), _labels(5, 4))),
                   case("out_of_range", args(arr(3), _probs(3, 4), lambda rng, dt: np.array(
                       [-1, 2, 4], np.int32))),
                   case("empty", args(arr(0), _probs(0, 3), _labels(3, 0))),
               ), FLOATS, True, (0, 1)),
        OpSpec("nn_ops.sigmoid_cross_entropy_with_logits",
               nn.sigmoid_cross_entropy_with_logits, _sigmoid_xent_ref, (
                   case("probs", args(lambda rng, dt: rng.random((3, 4)).astype(dt), arr(3, 4))),
               ), FLOATS, True, (0, 1),
               lambda T, z, x: T.nn.functional.binary_cross_entropy_with_logits(
                   x, z, reduction="none")),
        OpSpec("nn_ops.l2_loss", nn.l2_loss, lambda t: np.asarray(np.sum(np.square(t)) / 2), (
            case("matrix", args(arr(3, 4))), case("scalar", args(arr()))), FLOATS),
        OpSpec("nn_ops.l2_normalize", nn.l2_normalize, _l2_normalize_ref, (
            case("rows", args(arr(3, 4)), axis=1),
            case("columns", args(arr(3, 4)), axis=0),
            case("all", args(arr(2, 3))),
        ), FLOATS, torch=lambda T, x, axis=None: None if axis is None else
            T.nn.functional.normalize(x, dim=axis, eps=1e-6)),
    ]


def _l2_normalize_ref(x: np.ndarray, axis: Any = None) -> np.ndarray:
    squares = np.sum(np.square(x), axis=axis, keepdims=True)
    return x / np.sqrt(np.maximum(squares, 1e-12))


def _embed_ref(params: np.ndarray, ids: np.ndarray, max_norm: Any = None) -> np.ndarray:
    out = params[ids]
    if max_norm is not None:
        axes = tuple(range(np.ndim(ids), out.ndim))
        norm = np.sqrt(np.sum(np.square(out), axis=axes, keepdims=True))
        out = (out * (max_norm / np.maximum(norm, max_norm))).astype(out.dtype)
    return out


def _flatten_ref(x: np.ndarray, data_format: str = "channels_last") -> np.ndarray:
    if data_format == "channels_first" and x.ndim > 2:
        x = np.moveaxis(x, 1, -1)
    return x.reshape(x.shape[0], -1)


def _lookups() -> list[OpSpec]:
    return [
        OpSpec("nn_ops.embedding_lookup", nn.embedding_lookup, _embed_ref, (
            case("vector_ids", args(arr(6, 3), _labels(6, 4))),
            case("matrix_ids", args(arr(5, 2), _labels(5, 2, 3))),
            case("repeated", args(arr(4, 2), lambda rng, dt: np.array([1, 1, 3], np.int32))),
            case("max_norm", args(arr(5, 3), _labels(5, 4)), max_norm=0.5),
        ), FLOATS, True, (0,),
            lambda T, p, i, **kw: None if kw else T.nn.functional.embedding(i.long(), p)),
        OpSpec("nn_ops.depth_to_space", nn.depth_to_space, _depth_to_space_ref, (
            case("two", args(arr(2, 3, 2, 8), 2)),
            case("three", args(arr(1, 2, 2, 9), 3)),
            case("nchw", args(arr(1, 8, 2, 3), 2), data_format="NCHW"),
        ), FLOATS + (I32,), True, (0,)),
        OpSpec("nn_ops.space_to_depth", nn.space_to_depth, _space_to_depth_ref, (
            case("two", args(arr(2, 4, 6, 2), 2)),
            case("three", args(arr(1, 3, 6, 1), 3)),
            case("nchw", args(arr(1, 2, 4, 4), 2), data_format="NCHW"),
        ), FLOATS + (I32,), True, (0,)),
        OpSpec("nn_ops.flatten", nn.flatten, _flatten_ref, (
            case("image", args(arr(2, 3, 4, 2))),
            case("channels_first", args(arr(2, 3, 4, 2)), data_format="channels_first"),
            case("vector", args(arr(3))),
        ), FLOATS, True, (0,),
            lambda T, x, **kw: None if kw else T.flatten(x, 1) if x.ndim > 1 else x[:, None]),
    ]


# --- random: statistical checks ---------------------------------------------------------
_N = 4000


def _moments_check(mean: float, std: float, lo: float = -np.inf, hi: float = np.inf) -> Any:
    def stat(out: np.ndarray, args: list[Any], kwargs: dict[str, Any], dtype: Any) -> None:
        assert out.dtype == dtype, (out.dtype, dtype)
        x = out.astype(np.float64)
        assert np.all((x >= lo) & (x <= hi)), (x.min(), x.max(), lo, hi)
        se = std / math.sqrt(x.size)
        assert abs(x.mean() - mean) < 6 * se + 0.01, (x.mean(), mean)
        assert abs(x.std() - std) < 0.1 * std, (x.std(), std)

    return stat


def _int_uniform_stat(out: np.ndarray, args: list[Any], kwargs: dict[str, Any],
                      dtype: Any) -> None:
    assert out.dtype == dtype
    assert_array_equal(np.unique(out), np.arange(2, 7, dtype=dtype))


def _categorical_stat(out: np.ndarray, args: list[Any], kwargs: dict[str, Any],
                      dtype: Any) -> None:
    p = np.exp(args[0] - args[0].max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    assert out.shape == (p.shape[0], args[1]) and out.dtype == np.int64
    freq = np.stack([(out == k).mean(1) for k in range(p.shape[1])], 1)
    assert_allclose(freq, p, atol=0.05)


def _shuffle_stat(out: np.ndarray, args: list[Any], kwargs: dict[str, Any], dtype: Any) -> None:
    x = args[0]
    assert out.dtype == x.dtype and out.shape == x.shape
    assert_array_equal(np.sort(out[:, 0]), np.sort(x[:, 0]))
    order = np.argsort(x[:, 0])
    assert_array_equal(out[np.argsort(out[:, 0])], x[order])  # rows move whole
    assert not np.array_equal(out, x)


def _dropout_stat(out: np.ndarray, args: list[Any], kwargs: dict[str, Any], dtype: Any) -> None:
    x, rate = args[0], args[1]
    assert out.dtype == x.dtype and out.shape == x.shape
    kept = out != 0
    assert_allclose(out[kept], (x[kept] / (1 - rate)).astype(x.dtype), rtol=1e-3)
    assert abs((~kept).mean() - rate) < 0.05, (~kept).mean()


def _fold_in_stat(out: np.ndarray, args: list[Any], kwargs: dict[str, Any],
                  dtype: Any) -> None:
    assert out.shape == (2,) and out.dtype == dtype and out[1] == args[1]  # TF's: [draw, data]


def _dt(rng: Any, dt: Any) -> Any:
    return dt


def _random() -> list[OpSpec]:
    return [
        OpSpec("random.normal", rnd.normal, None, (
            case("moments", args((_N,), 1.0, 2.0, _dt), seed=1),),
            FLOATS + (F16,), False, (), stat=_moments_check(1.0, 2.0)),
        OpSpec("random.uniform", rnd.uniform, None, (
            case("float", args((40, 100), -1.0, 3.0, _dt), seed=2),),
            FLOATS + (F16,), False, (), stat=_moments_check(1.0, 4 / math.sqrt(12), -1, 3)),
        OpSpec("random.uniform.int", rnd.uniform, None, (
            case("int", args((_N,), 2, 7, _dt), seed=3),),
            (I32, I64), False, (), stat=_int_uniform_stat),
        OpSpec("random.truncated_normal", rnd.truncated_normal, None, (
            case("moments", args((_N,), 0.5, 2.0, _dt), seed=4),),
            FLOATS, False, (), stat=_moments_check(0.5, 2.0 * 0.8796, 0.5 - 4, 0.5 + 4)),
        OpSpec("random.categorical", rnd.categorical, None, (
            case("two_rows", args(lambda rng, dt: np.log(np.array(
                [[0.2, 0.8, 1e-9], [0.5, 0.25, 0.25]], dt)), 2000), seed=5),),
            FLOATS, False, (), stat=_categorical_stat),
        OpSpec("random.shuffle", rnd.shuffle, None, (
            case("rows", args(lambda rng, dt: np.stack(
                [np.arange(40), np.arange(40) * 2], 1).astype(dt)), seed=6),),
            (F32, I32), False, (), stat=_shuffle_stat),
        OpSpec("random.stateless_uniform", rnd.stateless_uniform, None, (
            case("float", args((40, 100), [1, 2], -1.0, 3.0, _dt)),),
            FLOATS + (F16,), False, (), stat=_moments_check(1.0, 4 / math.sqrt(12), -1, 3)),
        OpSpec("random.stateless_normal", rnd.stateless_normal, None, (
            case("moments", args((_N,), [3, 4], 1.0, 2.0, _dt)),),
            FLOATS, False, (), stat=_moments_check(1.0, 2.0)),
        OpSpec("random.stateless_truncated_normal", rnd.stateless_truncated_normal, None, (
            case("moments", args((_N,), [5, 6], 0.5, 2.0, _dt)),),
            FLOATS, False, (), stat=_moments_check(0.5, 2.0 * 0.8796, 0.5 - 4, 0.5 + 4)),
        OpSpec("random.stateless_categorical", rnd.stateless_categorical, None, (
            case("two_rows", args(lambda rng, dt: np.log(np.array(
                [[0.2, 0.8, 1e-9], [0.5, 0.25, 0.25]], dt)), 2000, [7, 8])),),
            FLOATS, False, (), stat=_categorical_stat),
        OpSpec("random.fold_in", rnd.fold_in, None, (
            case("int", args([1, 2], lambda rng, dt: np.asarray(5, dt))),),
            (I32, I64), False, (), stat=_fold_in_stat),
        OpSpec("nn_ops.dropout", nn.dropout, None, (
            case("rate", args(lambda rng, dt: sample(rng, (_N,), dt, "positive"), 0.3), seed=7),),
            FLOATS, True, (0,), stat=_dropout_stat),
    ]


def specs() -> list[OpSpec]:
    return (_windows() + _conv_products() + _depthwise_products() + _activations()
            + _norm_losses() + _lookups() + _random())

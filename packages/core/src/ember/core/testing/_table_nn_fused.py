"""Specs for the fused layer ops: batch normalisation in training and bias + activation,
with their backward ops.

The numpy references are written independently of the fused forms: the batch-norm
backward follows the step-by-step derivation of Ioffe and Szegedy (through d(variance)
and d(mean)), not the closed form the op uses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn_ops as nn
from .._ops import nn_dense as dn
from .._ops import nn_fused as nf
from ._spec import FLOATS, LOW, OpSpec, args, arr, case, sample

# --- batch normalisation in training --------------------------------------------------------


def _stats_shape(x: np.ndarray, axes: Any) -> tuple[int, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(x.shape))


def _bn_ref(x: np.ndarray, scale: Any, offset: Any, axes: Any, eps: float = 1e-3) -> Any:
    ax = tuple(axes)
    mean = x.mean(ax, keepdims=True)
    var = ((x - mean) ** 2).mean(ax, keepdims=True)
    y = (x - mean) / np.sqrt(var + x.dtype.type(eps))
    if scale is not None:
        y = y * scale.reshape(mean.shape)
    if offset is not None:
        y = y + offset.reshape(mean.shape)
    return y.astype(x.dtype), mean.astype(x.dtype), var.astype(x.dtype)


def _bn_torch(T: Any, x: Any, scale: Any, offset: Any, axes: Any, eps: float = 1e-3) -> Any:
    kept = [i for i in range(x.ndim) if i not in axes]
    if len(kept) != 1:
        return None
    c = kept[0]

    def flat(p: Any) -> Any:
        return None if p is None else p.reshape(-1)

    y = T.nn.functional.batch_norm(x.movedim(c, 1), None, None, flat(scale), flat(offset),
                                   training=True, eps=eps).movedim(1, c)
    ax = tuple(axes)
    return (y, x.mean(ax, keepdim=True), x.var(ax, unbiased=False, keepdim=True))


def _bn_grad_ref(dy: np.ndarray, x: np.ndarray, mean: np.ndarray, var: np.ndarray,
                 scale: Any, axes: Any, eps: float, centered: bool = True) -> Any:
    ax = tuple(axes)
    n = x.size // mean.size
    g = np.ones_like(mean) if scale is None else scale
    dxhat = dy * g
    xc = x - mean
    dvar = (dxhat * xc).sum(ax, keepdims=True) * -0.5 * (var + eps) ** -1.5
    dmean = -(dxhat / np.sqrt(var + eps)).sum(ax, keepdims=True) + dvar * (-2 * xc).mean(
        ax, keepdims=True)
    dx = dxhat / np.sqrt(var + eps) + dvar * 2 * xc / n + dmean / n
    out = [dx.astype(x.dtype)]
    if scale is not None:
        out.append((dy * xc / np.sqrt(var + eps)).sum(ax, keepdims=True).astype(x.dtype))
    if centered:
        out.append(dy.sum(ax, keepdims=True).astype(x.dtype))
    return tuple(out)


def _bn_grad_args(shape: tuple[int, ...], axes: tuple[int, ...], scaled: bool = True,
                  eps: float = 1e-3) -> Any:
    """(dy, x, mean, variance, scale, axes, eps) with the batch's own statistics (the
    closed form assumes them)."""

    def make(rng: np.random.Generator, dt: Any) -> list[Any]:
        x = sample(rng, shape, dt)
        x32 = x.astype(np.float64)
        mean = x32.mean(axes, keepdims=True)
        var = ((x32 - mean) ** 2).mean(axes, keepdims=True)
        stats = _stats_shape(x, axes)
        scale = sample(rng, stats, dt, "positive") if scaled else None
        return [sample(rng, shape, dt), x, mean.astype(dt), var.astype(dt), scale, list(axes),
                eps]

    return make


def _bn_specs() -> list[OpSpec]:
    low = {np.dtype(d): (3e-2, 3e-2) for d in LOW}
    return [
        OpSpec("nn_ops.batch_norm_training", nn.batch_norm_training, _bn_ref, (
            case("channels_last", args(arr(4, 3, 3, 2), arr(2, domain="positive"), arr(2),
                                       [0, 1, 2], 1e-3)),
            case("channels_first", args(arr(3, 2, 2, 3), arr(2, domain="positive"), arr(2),
                                        [0, 2, 3], 1e-3)),
            case("no_affine", args(arr(5, 3), None, None, [0], 1e-5)),
            case("scale_only_stats_shaped", args(arr(6, 2), arr(1, 2, domain="positive"),
                                                 None, [0], 1e-2)),
            case("offset_only", args(arr(4, 2, 3), None, arr(3), [0, 1], 1e-3)),
        ), FLOATS + LOW, True, (0, 1, 2), _bn_torch, tol=low),
        OpSpec("batch_norm_training_grad", nf.batch_norm_training_grad, _bn_grad_ref, (
            case("channels_last", _bn_grad_args((4, 2, 2, 3), (0, 1, 2))),
            case("channels_first", _bn_grad_args((3, 2, 2, 2), (0, 2, 3))),
            case("no_scale_no_offset", _bn_grad_args((5, 3), (0,), scaled=False),
                 centered=False),
        ), FLOATS + LOW, True, (0, 1, 2, 3, 4), tol=low),
    ]


# --- bias + activation ----------------------------------------------------------------------
def _bias_act_ref(x: np.ndarray, b: np.ndarray, activation: str = "relu") -> np.ndarray:
    z = x + b
    return np.maximum(z, 0).astype(x.dtype) if activation == "relu" else z


def _bias_act_torch(T: Any, x: Any, b: Any, activation: str = "relu") -> Any:
    return T.relu(x + b) if activation == "relu" else x + b


def _bias_act_grad_ref(dy: np.ndarray, y: np.ndarray, activation: str = "relu") -> Any:
    dz = np.where(y > 0, dy, 0).astype(dy.dtype) if activation == "relu" else dy
    return dz, dz.sum(tuple(range(dz.ndim - 1))).astype(dy.dtype)


def _fifths(*shape: int) -> Any:
    """Multiples of 0.2: added to ``lattice_a`` data (0.2 k + 0.05), sums stay 0.05 or more
    from relu's kink."""
    return lambda rng, dt: (rng.integers(-3, 4, shape) * 0.2).astype(dt)


def _bias_act_specs() -> list[OpSpec]:
    lat = {"domain": "lattice_a"}
    return [
        OpSpec("nn_ops.bias_activation", nn.bias_activation, _bias_act_ref, (
            case("relu_matrix", args(arr(5, 3, **lat), _fifths(3))),
            case("relu_nhwc", args(arr(2, 3, 3, 4, **lat), _fifths(4))),
            case("linear", args(arr(4, 3), arr(3)), activation="linear"),
            case("relu_empty", args(arr(0, 3), arr(3))),
        ), FLOATS + LOW, True, (0, 1), _bias_act_torch),
        OpSpec("bias_activation_grad", nf.bias_activation_grad, _bias_act_grad_ref, (
            case("relu", args(arr(4, 3), arr(4, 3, **lat))),
            case("relu_nhwc", args(arr(2, 2, 3, 2), arr(2, 2, 3, 2, **lat))),
            case("linear", args(arr(4, 3), arr(4, 3)), activation="linear"),
        ), FLOATS + LOW, True, (0, 1)),
    ]


# --- a dense layer: product, bias and activation as one op ---------------------------------
def _dense_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, activation: str = "linear") -> Any:
    return _bias_act_ref((x @ w).astype(x.dtype), b, activation)


def _dense_torch(T: Any, x: Any, w: Any, b: Any, activation: str = "linear") -> Any:
    z = x @ w + b
    return T.relu(z) if activation == "relu" else z


def _activation_grad_ref(dy: np.ndarray, y: np.ndarray, activation: str = "relu") -> Any:
    return _bias_act_grad_ref(dy, y, activation)[0]


def _dense_weight_grad_ref(x: np.ndarray, dz: np.ndarray) -> Any:
    return (x.T @ dz).astype(x.dtype), dz.sum(0).astype(dz.dtype)


def _signed_columns(rows: int, cols: int) -> Any:
    """A kernel whose columns are all +1 or all -1: on ``lattice_a`` rows (0.2 k + 0.05)
    and a bias of fifths, three rows give pre-activations 0.15 or more from relu's kink."""
    return lambda rng, dt: np.where(np.arange(cols) % 2, -1, 1)[None, :].repeat(
        rows, 0).astype(dt)


def _dense_specs() -> list[OpSpec]:
    lat = {"domain": "lattice_a"}
    return [
        OpSpec("nn_ops.dense", nn.dense, _dense_ref, (
            case("relu", args(arr(4, 3, **lat), _signed_columns(3, 2), _fifths(2)),
                 activation="relu"),
            case("linear", args(arr(4, 3), arr(3, 2), arr(2))),
            case("linear_one_row", args(arr(1, 5), arr(5, 3), arr(3))),
        ), FLOATS + LOW, True, (0, 1, 2), _dense_torch),
        OpSpec("nn_ops.xw_plus_b", nn.xw_plus_b, _dense_ref, (
            case("matrix", args(arr(4, 3), arr(3, 2), arr(2))),
        ), FLOATS + LOW, True, (0, 1, 2), _dense_torch),
        OpSpec("nn_ops.relu_layer", nn.relu_layer,
               lambda x, w, b: _dense_ref(x, w, b, "relu"), (
                   case("matrix", args(arr(4, 3, **lat), _signed_columns(3, 2), _fifths(2))),
               ), FLOATS + LOW, True, (0, 1, 2),
               lambda T, x, w, b: _dense_torch(T, x, w, b, "relu")),
        OpSpec("activation_grad", dn.activation_grad, _activation_grad_ref, (
            case("relu", args(arr(4, 3), arr(4, 3, **lat))),
            case("linear", args(arr(4, 3), arr(4, 3)), activation="linear"),
        ), FLOATS + LOW, True, (0, 1)),
        OpSpec("dense_weight_grad", dn.dense_weight_grad, _dense_weight_grad_ref, (
            case("matrix", args(arr(4, 3), arr(4, 2))),
            case("one_row", args(arr(1, 3), arr(1, 5))),
        ), FLOATS + LOW, True, (0, 1)),
    ]


# --- max pooling over windows that tile the input ----------------------------------------
def _pool_ref(x: np.ndarray, ksize: Any) -> np.ndarray:
    n, h, w, c = x.shape
    kh, kw = ksize
    return x.reshape(n, h // kh, kh, w // kw, kw, c).max(axis=(2, 4))


def _pool_torch(T: Any, x: Any, ksize: Any) -> Any:
    return T.nn.functional.max_pool2d(x.permute(0, 3, 1, 2), tuple(ksize)).permute(0, 2, 3, 1)


def _pool_grad_ref(x: np.ndarray, y: np.ndarray, dy: np.ndarray, ksize: Any) -> np.ndarray:
    """Each window's gradient to its first element (row-major) equal to its maximum, as
    TensorFlow's MaxPoolGrad: a loop over windows."""
    n, h, w, c = x.shape
    kh, kw = ksize
    out = np.zeros(x.shape, dy.dtype)
    for b in range(n):
        for oi in range(h // kh):
            for oj in range(w // kw):
                for ch in range(c):
                    window = x[b, oi * kh:(oi + 1) * kh, oj * kw:(oj + 1) * kw, ch].reshape(-1)
                    hits = np.flatnonzero(window == y[b, oi, oj, ch])
                    if hits.size:
                        i, j = divmod(int(hits[0]), kw)
                        out[b, oi * kh + i, oj * kw + j, ch] = dy[b, oi, oj, ch]
    return out


def _pool_grad_args(shape: tuple[int, ...], ksize: tuple[int, int], ties: bool = False,
                    equal: bool = False) -> Any:
    """(x, y = the pool of x, dy, ksize); with ``ties``, x on a coarse lattice so windows
    hold equal maxima; with ``equal``, every element of a channel equal (a window's whole
    count of elements ties: more than an int8 holds in a 16x16 window)."""

    def make(rng: np.random.Generator, dt: Any) -> list[Any]:
        if equal:
            x = np.broadcast_to(sample(rng, shape[-1:], dt), shape).copy()
        elif ties:
            x = rng.integers(-1, 2, shape).astype(dt)
        else:
            x = sample(rng, shape, dt)
        return [x, _pool_ref(x, ksize), sample(rng, (shape[0], shape[1] // ksize[0],
                                                     shape[2] // ksize[1], shape[3]), dt),
                list(ksize)]

    return make


def _pool_specs() -> list[OpSpec]:
    return [
        OpSpec("max_pool_tiled", nf.max_pool_tiled, _pool_ref, (
            case("2x2", args(arr(2, 4, 6, 3), [2, 2])),
            case("3x1", args(arr(1, 6, 2, 2), [3, 1])),
            case("1x1", args(arr(2, 2, 2, 1), [1, 1])),
        ), FLOATS + LOW, True, (0,), _pool_torch),
        OpSpec("max_pool_tiled_grad", nf.max_pool_tiled_grad, _pool_grad_ref, (
            case("2x2", _pool_grad_args((2, 4, 4, 3), (2, 2))),
            case("2x3_ties", _pool_grad_args((1, 4, 6, 2), (2, 3), ties=True)),
            case("16x16_equal", _pool_grad_args((1, 16, 16, 2), (16, 16), equal=True)),
        ), FLOATS + LOW, True, (2,)),
    ]


def specs() -> list[OpSpec]:
    return _bn_specs() + _bias_act_specs() + _dense_specs() + _pool_specs()

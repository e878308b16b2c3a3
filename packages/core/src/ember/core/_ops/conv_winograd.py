"""Winograd F(m x m, r x r): filters of 1 to 5 taps a side, stride 1, dilation 1.

Along an axis with an r-tap filter, each block of m outputs comes from a tile of
``a = m + r - 1`` inputs: ``y = A^T [(G w) . (B^T d)]``. In 2-D, ``Y = A^T [U . V] A`` with
``U = G w G^T`` and ``V = B^T d B`` per tile, and the product over channels is ``a * a``
matrix products (one per point of the tile). With m = 4 that is 36 multiplies per 4x4
outputs and channel pair for a 3x3 filter (direct: 144) and 64 for a 5x5 one (direct:
400). The filter gradient is this linear map's adjoint (the same products with the
transforms transposed); the input gradient, at stride 1, is the forward itself run on the
output gradient with the filter turned. Lavin & Gray, "Fast Algorithms for
Convolutional Neural Networks" (2015).

The transforms come from the Toom-Cook construction at the points 0, 1, -1, 2, -2, 1/2,
-1/2 (and infinity), those with the smallest rounding error (Barabasz et al., "Error
analysis and improving the accuracy of Winograd convolution", 2020): ``A^T`` and ``G``
are Vandermonde matrices of the points (G scaled by the Lagrange denominators) and
``B^T`` is solved for from the identity ``sum_j A^T[i, j] G[j, k] B^T[j, l] =
[l == i + k]``, in float64, and rounded to its exact entries. Measured relative error on
float32 (N(0, 1) data): about 7e-6 of the largest output for F(4x4, 3x3) and F(4x4, 5x5),
against 3e-7 for im2col.

Each transform of a whole tile (``T_h d T_w^T``) is applied to every tile at once, one
axis after the other: two matrix products with the (a x a) 1-D matrices, a quarter of
the multiply-adds of one product with the whole-tile matrix ``kron(T_h, T_w)`` (a 64 x 64
matrix for 5x5 filters). On the CPU, on chunks of 8 LeNet images, measured 2.5x faster
for the input transform and 1.7x for the output's (LeNet's conv2 products 1.6x faster in
all); with the whole-tile matrix the transforms took more time than the products they
feed. A GPU applies the whole-tile matrix: one kernel instead of two, and a GPU's
matrix products are rarely what a step waits for.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from . import conv_gather
from .conv_geometry import Geometry, batch_chunks, pad_image

MAX_TAPS = 5  # filters up to 5x5: beyond, the transforms' rounding error grows fast
OUTPUT_TILE = 4  # m: outputs per tile along an axis (filters of one tap: 1)
_POINTS = (0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5)


@functools.cache
def matrices(m: int, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A^T (m, a), G (a, r), B^T (a, a)) of F(m, r), in float64.

    Examples:
        >>> at, g, bt = matrices(2, 3)
        >>> d, w = np.arange(4.0), np.array([1.0, -2.0, 3.0])
        >>> at @ ((g @ w) * (bt @ d))  # the correlation of d with w, two outputs
        array([4., 6.])
    """
    a = m + r - 1
    points = _POINTS[:a - 1]
    at = np.zeros((m, a))
    g = np.zeros((a, r))
    for j, p in enumerate(points):
        at[:, j] = [p ** i for i in range(m)]
        lagrange = np.prod([p - q for q in points if q != p])
        g[j] = [p ** k / lagrange for k in range(r)]
    at[m - 1, a - 1] = 1.0  # the point at infinity
    g[a - 1, r - 1] = 1.0
    # sum_j at[i, j] g[j, k] bt[j, l] = [l == i + k], for every i, k, l
    lhs = np.stack([at[i] * g[:, k] for i in range(m) for k in range(r)])
    rhs = np.zeros((m * r, a))
    for i in range(m):
        for k in range(r):
            rhs[i * r + k, i + k] = 1.0
    # B^T's entries are coefficients of products of (x - p): multiples of 1/4 at these
    # points. Rounding them removes the solver's residue (1e-16 where 0 belongs), whose
    # squares in the whole-tile transform made float32 products subnormal: 1.5x slower.
    bt = np.linalg.lstsq(lhs, rhs, rcond=None)[0]
    bt = np.round(bt * 4.0) / 4.0
    assert np.abs(lhs @ bt - rhs).max() < 1e-12, (m, r)
    return at, g, bt


@dataclasses.dataclass(frozen=True)
class _Plan:
    """The tiling of one geometry: outputs ``m`` and inputs ``a`` per tile along each
    axis, tiles ``t`` along each axis, and the whole-tile transforms."""

    m: tuple[int, int]
    a: tuple[int, int]
    t: tuple[int, int]
    axes: dict[str, tuple[np.ndarray, np.ndarray]]

    @property
    def points(self) -> int:
        return self.a[0] * self.a[1]


@functools.cache
def _axes(kh: int, kw: int) -> tuple[tuple[int, int], dict[str, tuple[np.ndarray, ...]]]:
    """(outputs per tile, {transform: (its matrix along h, along w)})."""
    mh, mw = (1 if k == 1 else OUTPUT_TILE for k in (kh, kw))
    (ath, gh, bth), (atw, gw, btw) = matrices(mh, kh), matrices(mw, kw)
    k = {"input": (bth, btw), "filter": (gh, gw), "output": (ath, atw),
         # the filter gradient's: transposed output (of dy) and filter transforms
         "output_adjoint": (ath.T, atw.T), "filter_adjoint": (gh.T, gw.T)}
    return (mh, mw), k


def _plan(g: Geometry) -> _Plan:
    kh, kw = g.w_shape[:2]
    (mh, mw), axes = _axes(kh, kw)
    oh, ow = g.out_hw
    return _Plan((mh, mw), (mh + kh - 1, mw + kw - 1), (-(-oh // mh), -(-ow // mw)), axes)


def supports(g: Geometry) -> bool:
    kh, kw = g.w_shape[:2]
    return (g.strides == (1, 1) and g.dilations == (1, 1) and max(kh, kw) <= MAX_TAPS
            and (kh, kw) != (1, 1))


_DEVICE_TRANSFORMS: dict[tuple[Any, ...], tuple[Any, dict[str, Any]]] = {}


def _transforms(xp: Any, p: _Plan, like: Any) -> dict[str, Any]:
    """The plan's transforms as ``xp`` arrays of ``dtype``: on the CPU each one's pair of
    1-D matrices, made once per primitive, not once per chunk; elsewhere its whole-tile
    matrix ``kron(T_h, T_w)``, uploaded once per device, filter size and dtype and kept
    (tensors never write them): a step uploads nothing, so a CUDA graph can capture it
    (a capture refuses uploads). ``like``: an array of the dtype, on the device."""
    dtype = like.dtype
    if xp is np:
        return {name: tuple(np.ascontiguousarray(m, dtype=dtype) for m in pair)
                for name, pair in p.axes.items()}
    device = getattr(like, "device", None)  # cupy's one namespace serves every GPU
    key = (id(xp), getattr(device, "id", None), p.m, p.a, str(dtype))
    hit = _DEVICE_TRANSFORMS.get(key)
    if hit is not None and hit[0] is xp:
        return hit[1]
    made = {name: xp.asarray(np.kron(*pair).astype(dtype)) for name, pair in p.axes.items()}
    _DEVICE_TRANSFORMS[key] = (xp, made)
    return made


def _transform(xp: Any, k: Any, a: Any) -> Any:
    """``T_h d T_w^T`` for every tile ``d`` in ``a`` of shape (tile points, ...), points
    row-major (h, w): (new points, ...). With a pair of 1-D matrices, one matrix product
    along h over all tiles, then along w one per new row (a batched product); with a
    whole-tile matrix, one product."""
    if not isinstance(k, tuple):
        return xp.matmul(k, a.reshape(a.shape[0], -1)).reshape((k.shape[0],) + a.shape[1:])
    th, tw = k
    (mh, ah), (mw, aw) = th.shape, tw.shape
    rest = a.shape[1:]
    rows = xp.matmul(th, a.reshape(ah, -1)) if ah > 1 or mh > 1 else a
    out = xp.matmul(tw, rows.reshape(mh, aw, -1)) if aw > 1 or mw > 1 else rows
    return out.reshape((mh * mw,) + rest)


def _tiles(xp: Any, x: Any, g: Geometry, p: _Plan, t: dict[str, Any]) -> Any:
    """V = B^T d B for every tile d of the padded input: (points, N * TH * TW, C)."""
    (mh, mw), (ah, aw), (th, tw) = p.m, p.a, p.t
    if conv_gather.runs_here(xp):  # one kernel: the tiles of the unpadded input
        (pt, _), (pl, _) = g.pads
        return _transform(xp, t["input"], conv_gather.gather(
            xp, x, (th, tw), (ah, aw), (mh, mw), (1, 1), (pt, pl), layout="taps"))
    hp, wp = g.padded_hw
    kh, kw = g.w_shape[:2]
    xp_ = xp.ascontiguousarray(pad_image(xp, x, g.pads, (mh * th + kh - 1 - hp,
                                                         mw * tw + kw - 1 - wp)))
    n, _, _, c = xp_.shape
    s0, s1, s2, s3 = xp_.strides
    d = xp.lib.stride_tricks.as_strided(xp_, (n, th, tw, ah, aw, c),
                                        (s0, mh * s1, mw * s2, s1, s2, s3))
    d = xp.ascontiguousarray(d.transpose(3, 4, 0, 1, 2, 5)).reshape(ah * aw, n * th * tw, c)
    return _transform(xp, t["input"], d)


def _filter(xp: Any, w: Any, t: dict[str, Any]) -> Any:
    """U = G w G^T: (points, C, CO)."""
    kh, kw = w.shape[:2]
    return _transform(xp, t["filter"], w.reshape((kh * kw,) + tuple(w.shape[2:])))


def _out_tiles(xp: Any, dy: Any, p: _Plan, t: dict[str, Any]) -> Any:
    """A dY A^T for every output block of dy (zero-padded to whole tiles): (points, P, CO)."""
    (mh, mw), (th, tw) = p.m, p.t
    n, oh, ow, co = dy.shape
    dyp = pad_image(xp, dy, ((0, 0), (0, 0)), (mh * th - oh, mw * tw - ow))
    y = xp.ascontiguousarray(dyp.reshape(n, th, mh, tw, mw, co).transpose(2, 4, 0, 1, 3, 5))
    return _transform(xp, t["output_adjoint"], y.reshape(mh * mw, n * th * tw, co))


# tile-sized buffers alive at once in a chunk (tiles, their transform, the products, the
# transform back): the chunk's workspace, not each buffer, stays under CHUNK_ELEMENTS
# (smaller chunks were also faster here: they stay in cache)
_BUFFERS = 4


def _chunks(xp: Any, g: Geometry) -> Any:
    """The batch's chunks: on a GPU as large as ``conv_gather``'s (each chunk costs its
    kernels' launches, and a GPU's cache is not what the host's chunks are sized for)."""
    p = _plan(g)
    budget = conv_gather.GPU_CHUNK_ELEMENTS if conv_gather.runs_here(xp) else None
    return batch_chunks(g, _BUFFERS * p.points * p.t[0] * p.t[1] * max(g.w_shape[2:]),
                        budget)


def forward(xp: Any, x: Any, w: Any, g: Geometry) -> Any:
    """``y``, computed on whole tiles (a view cropped to the output where the tiles
    overhang it): each chunk's tiles land in place with one copy."""
    p = _plan(g)
    (mh, mw), (th, tw) = p.m, p.t
    t = _transforms(xp, p, x)
    u = _filter(xp, w, t)
    n, oh, ow, co = g.y_shape
    y = xp.empty((n, th, mh, tw, mw, co), dtype=u.dtype)
    for a, b, gc in _chunks(xp, g):
        m = xp.matmul(_tiles(xp, x[a:b], gc, p, t), u)  # (points, P, CO)
        out = _transform(xp, t["output"], m).reshape(mh, mw, b - a, th, tw, co)
        y[a:b] = out.transpose(2, 3, 0, 4, 1, 5)
    return y.reshape(n, th * mh, tw * mw, co)[:, :oh, :ow, :]


def backprop_input(xp: Any, dy: Any, w: Any, g: Geometry) -> Any:
    """``dx``: at stride 1, the correlation of ``dy`` (padded by the filter's reach less
    the forward's padding, or cropped where that padding is wider) with the filter turned
    by 180 degrees and its channels swapped, run by :func:`forward`. Measured 1.2-1.4x
    faster than the adjoint transforms and their overlap-add (LeNet's 5x5 and ResNet's
    3x3 layers)."""
    kh, kw, c, co = g.w_shape
    n, h, wd, _ = g.x_shape
    _, oh, ow, _ = g.y_shape
    (pt, _), (pl, _) = g.pads
    lo = (kh - 1 - pt, kw - 1 - pl)
    hi = (h + kh - 1 - oh - lo[0], wd + kw - 1 - ow - lo[1])
    # rows/columns of dy whose windows cover only the forward's padding: no gradient
    crop = dy[:, max(0, -lo[0]):oh - max(0, -hi[0]), max(0, -lo[1]):ow - max(0, -hi[1]), :]
    pads = ((max(0, lo[0]), max(0, hi[0])), (max(0, lo[1]), max(0, hi[1])))
    turned = w[::-1, ::-1].transpose(0, 1, 3, 2)
    gt = Geometry(tuple(crop.shape), (kh, kw, co, c), (1, 1), (1, 1), pads)  # type: ignore[arg-type]
    return forward(xp, crop, turned, gt)


def backprop_filter(xp: Any, x: Any, dy: Any, g: Geometry) -> Any:
    p = _plan(g)
    t = _transforms(xp, p, x)
    du = None
    for a, b, gc in _chunks(xp, g):
        part = xp.matmul(_tiles(xp, x[a:b], gc, p, t).transpose(0, 2, 1),
                         _out_tiles(xp, dy[a:b], p, t))  # (points, C, CO)
        du = part if du is None else xp.add(du, part, out=du)
    return _transform(xp, t["filter_adjoint"], du).reshape(g.w_shape)

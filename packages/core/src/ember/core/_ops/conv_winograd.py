"""Winograd F(2x2, 3x3): 3x3 filters, stride 1, dilation 1.

Each 2x2 block of outputs comes from a 4x4 tile of the input: ``Y = A^T [U . V] A`` with
``U = G w G^T`` and ``V = B^T d B``, the product over channels being 16 matrix products
(one per point of the 4x4 tile). That takes 16 multiplies per 2x2 outputs and channel
pair where im2col takes 36. Both gradients are this linear map's adjoints (the same
16 products with the transforms transposed), so they are exact to rounding too.
Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (2015).

Each transform of a whole tile (``T d T^T``) is one small matrix, ``kron(T, T)``, applied
to every tile at once by one matrix product: one pass over the tiles instead of several
element-wise passes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .conv_geometry import Geometry, batch_chunks, crop_image, pad_image

_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float64)
_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)
# whole-tile transforms (row (i, j), column (k, l)) and their adjoints
_TILE = {"input": np.kron(_BT, _BT), "input_adjoint": np.kron(_BT, _BT).T,
         "filter": np.kron(_G, _G), "filter_adjoint": np.kron(_G, _G).T,
         "output": np.kron(_AT, _AT), "output_adjoint": np.kron(_AT, _AT).T}


def supports(g: Geometry) -> bool:
    return g.w_shape[:2] == (3, 3) and g.strides == (1, 1) and g.dilations == (1, 1)


def _transform(xp: Any, name: str, a: Any) -> Any:
    """``kron(T, T) @ a`` for ``a`` of shape (tile points, ...): (new tile points, ...)."""
    k = xp.asarray(_TILE[name].astype(a.dtype))
    return xp.matmul(k, a.reshape(a.shape[0], -1)).reshape((k.shape[0],) + a.shape[1:])


def _grid(g: Geometry) -> tuple[int, int]:
    oh, ow = g.out_hw
    return -(-oh // 2), -(-ow // 2)


def _tiles(xp: Any, x: Any, g: Geometry) -> Any:
    """V = B^T d B for every 4x4 tile d of the padded input: (16, N * TH * TW, C)."""
    th, tw = _grid(g)
    hp, wp = g.padded_hw
    xp_ = xp.ascontiguousarray(pad_image(xp, x, g.pads, (2 * th + 2 - hp, 2 * tw + 2 - wp)))
    n, _, _, c = xp_.shape
    s0, s1, s2, s3 = xp_.strides
    d = xp.lib.stride_tricks.as_strided(xp_, (n, th, tw, 4, 4, c),
                                        (s0, 2 * s1, 2 * s2, s1, s2, s3))
    d = xp.ascontiguousarray(d.transpose(3, 4, 0, 1, 2, 5)).reshape(16, n * th * tw, c)
    return _transform(xp, "input", d)


def _filter(xp: Any, w: Any) -> Any:
    """U = G w G^T: (16, C, CO)."""
    return _transform(xp, "filter", w.reshape((9,) + tuple(w.shape[2:])))


def _out_tiles(xp: Any, dy: Any, g: Geometry) -> Any:
    """A dY A^T for every 2x2 block of dy (zero-padded to even size): (16, P, CO)."""
    th, tw = _grid(g)
    n, oh, ow, co = dy.shape
    dyp = xp.pad(dy, ((0, 0), (0, 2 * th - oh), (0, 2 * tw - ow), (0, 0)))
    y = xp.ascontiguousarray(dyp.reshape(n, th, 2, tw, 2, co).transpose(2, 4, 0, 1, 3, 5))
    return _transform(xp, "output_adjoint", y.reshape(4, n * th * tw, co))


# tile-sized buffers alive at once in a chunk (tiles, their transform, the products, the
# transform back): the chunk's workspace, not each buffer, stays under CHUNK_ELEMENTS
# (smaller chunks were also faster here: they stay in cache)
_BUFFERS = 4


def _chunks(g: Geometry) -> Any:
    th, tw = _grid(g)
    return batch_chunks(g, _BUFFERS * 16 * th * tw * max(g.w_shape[2:]))


def forward(xp: Any, x: Any, w: Any, g: Geometry) -> Any:
    u = _filter(xp, w)
    y = xp.empty(g.y_shape, dtype=u.dtype)
    for a, b, gc in _chunks(g):
        y[a:b] = _forward(xp, x[a:b], u, gc)
    return y


def _forward(xp: Any, x: Any, u: Any, g: Geometry) -> Any:
    th, tw = _grid(g)
    n = g.x_shape[0]
    co = g.w_shape[3]
    m = xp.matmul(_tiles(xp, x, g), u)  # (16, P, CO)
    y = _transform(xp, "output", m).reshape(2, 2, n, th, tw, co)
    y = y.transpose(2, 3, 0, 4, 1, 5).reshape(n, 2 * th, 2 * tw, co)
    oh, ow = g.out_hw
    return y[:, :oh, :ow, :]


def backprop_input(xp: Any, dy: Any, w: Any, g: Geometry) -> Any:
    ut = _filter(xp, w).transpose(0, 2, 1)
    dx = xp.empty(g.x_shape, dtype=ut.dtype)
    for a, b, gc in _chunks(g):
        dx[a:b] = _backprop_input(xp, dy[a:b], ut, gc)
    return dx


def _backprop_input(xp: Any, dy: Any, ut: Any, g: Geometry) -> Any:
    n, _, _, c = g.x_shape
    th, tw = _grid(g)
    e = xp.matmul(_out_tiles(xp, dy, g), ut)  # (16, P, C)
    d = _transform(xp, "input_adjoint", e).reshape(4, 4, n, th, tw, c)
    out = xp.zeros((n, 2 * th + 2, 2 * tw + 2, c), dtype=dy.dtype)
    for qa in (0, 1):  # overlap-add the 4x4 tiles, which overlap by 2
        for qb in (0, 1):
            blk = d[2 * qa:2 * qa + 2, 2 * qb:2 * qb + 2].transpose(2, 3, 0, 4, 1, 5)
            out[:, 2 * qa:2 * qa + 2 * th, 2 * qb:2 * qb + 2 * tw, :] += blk.reshape(
                n, 2 * th, 2 * tw, c)
    hp, wp = g.padded_hw
    return crop_image(out[:, :hp, :wp, :], g)


def backprop_filter(xp: Any, x: Any, dy: Any, g: Geometry) -> Any:
    du = None
    for a, b, gc in _chunks(g):
        part = xp.matmul(_tiles(xp, x[a:b], gc).transpose(0, 2, 1),
                         _out_tiles(xp, dy[a:b], gc))  # (16, C, CO)
        du = part if du is None else xp.add(du, part, out=du)
    return _transform(xp, "filter_adjoint", du).reshape(g.w_shape)

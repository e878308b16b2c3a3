"""Winograd F(2x2, 3x3): 3x3 filters, stride 1, dilation 1.

Each 2x2 block of outputs comes from a 4x4 tile of the input: ``Y = A^T [U . V] A`` with
``U = G w G^T`` and ``V = B^T d B``, the product over channels being 16 matrix products
(one per point of the 4x4 tile). That takes 16 multiplies per 2x2 outputs and channel
pair where im2col takes 36. Both gradients are this linear map's adjoints (the same
16 products with the transforms transposed), so they are exact to rounding too.
Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (2015).
"""

from __future__ import annotations

from typing import Any

from .conv_geometry import Geometry, crop_image, pad_image

# The transforms, as rows of coefficients.
_BT = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))   # input: B^T
_B = ((1, 0, 0, 0), (0, 1, -1, 1), (-1, 1, 1, 0), (0, 0, 0, -1))    # its adjoint: B
_G = ((1, 0, 0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0, 0, 1))     # filter: G
_GT = ((1, 0.5, 0.5, 0), (0, 0.5, -0.5, 0), (0, 0.5, 0.5, 1))       # its adjoint: G^T
_AT = ((1, 1, 1, 0), (0, 1, -1, -1))                                  # output: A^T
_A = ((1, 0), (1, 1), (1, -1), (0, -1))                               # its adjoint: A


def supports(g: Geometry) -> bool:
    return g.w_shape[:2] == (3, 3) and g.strides == (1, 1) and g.dilations == (1, 1)


def _combine_into(xp: Any, out: Any, parts: list[Any], coefs: tuple[float, ...]) -> None:
    """``out = sum(c * p)``, written in place (one pass for the usual ``p0 +- p1``)."""
    terms = [(p, c) for p, c in zip(parts, coefs) if c]
    (p0, c0), rest = terms[0], terms[1:]
    if rest and c0 == 1 and rest[0][1] in (1, -1):
        (xp.add if rest[0][1] == 1 else xp.subtract)(p0, rest[0][0], out=out)
        rest = rest[1:]
    elif c0 == 1:
        out[...] = p0
    else:
        xp.multiply(p0, c0, out=out)
    for p, c in rest:
        if c == 1:
            xp.add(out, p, out=out)
        elif c == -1:
            xp.subtract(out, p, out=out)
        else:
            out += p * c


def _apply(xp: Any, a: Any, rows: tuple[tuple[float, ...], ...], axis: int) -> Any:
    """``rows @ a`` along ``axis``; the result's new axis comes first."""
    idx = (slice(None),) * axis
    parts = [a[idx + (i,)] for i in range(a.shape[axis])]
    out = xp.empty((len(rows),) + tuple(parts[0].shape), dtype=a.dtype)
    for k, r in enumerate(rows):
        _combine_into(xp, out[k], parts, r)
    return out


def _tiles(xp: Any, x: Any, g: Geometry) -> tuple[Any, tuple[int, int]]:
    """V = B^T d B for every 4x4 tile: (4, 4, N * TH * TW, C), and (TH, TW)."""
    oh, ow = g.out_hw
    th, tw = -(-oh // 2), -(-ow // 2)
    hp, wp = g.padded_hw
    xp_ = xp.ascontiguousarray(pad_image(xp, x, g.pads, (2 * th + 2 - hp, 2 * tw + 2 - wp)))
    n, _, _, c = xp_.shape
    s0, s1, s2, s3 = xp_.strides
    d = xp.lib.stride_tricks.as_strided(xp_, (n, th, tw, 4, 4, c),
                                        (s0, 2 * s1, 2 * s2, s1, s2, s3))
    v = _apply(xp, _apply(xp, d, _BT, 3), _BT, 4)  # (4b, 4a, N, TH, TW, C)
    return v.reshape(4, 4, n * th * tw, c), (th, tw)


def _filter(xp: Any, w: Any) -> Any:
    """U = G w G^T: (4b, 4a, C, CO)."""
    return _apply(xp, _apply(xp, w, _G, 0), _G, 1)


def _out_tiles(xp: Any, dy: Any, th: int, tw: int) -> Any:
    """A dY A^T for every 2x2 block of dy (zero-padded to even size): (4, 4, P, CO)."""
    n, oh, ow, co = dy.shape
    dyp = xp.pad(dy, ((0, 0), (0, 2 * th - oh), (0, 2 * tw - ow), (0, 0)))
    y = dyp.reshape(n, th, 2, tw, 2, co)
    z = _apply(xp, _apply(xp, y, _A, 2), _A, 4)  # (4b, 4a, N, TH, TW, CO)
    return z.reshape(4, 4, n * th * tw, co)


def forward(xp: Any, x: Any, w: Any, g: Geometry) -> Any:
    v, (th, tw) = _tiles(xp, x, g)
    c, co = g.w_shape[2:]
    m = xp.matmul(v.reshape(16, -1, c), _filter(xp, w).reshape(16, c, co))
    m = m.reshape(4, 4, g.x_shape[0], th, tw, co)
    y = _apply(xp, _apply(xp, m, _AT, 1), _AT, 1)  # (2b, 2a, N, TH, TW, CO)
    y = y.transpose(2, 3, 1, 4, 0, 5).reshape(g.x_shape[0], 2 * th, 2 * tw, co)
    oh, ow = g.out_hw
    return y[:, :oh, :ow, :]


def backprop_input(xp: Any, dy: Any, w: Any, g: Geometry) -> Any:
    n, h, wd, c = g.x_shape
    co = g.w_shape[3]
    oh, ow = g.out_hw
    th, tw = -(-oh // 2), -(-ow // 2)
    z = _out_tiles(xp, dy, th, tw)
    e = xp.matmul(z.reshape(16, -1, co), _filter(xp, w).reshape(16, c, co).transpose(0, 2, 1))
    e = e.reshape(4, 4, n, th, tw, c)
    d = _apply(xp, _apply(xp, e, _B, 1), _B, 1)  # (4b, 4a, N, TH, TW, C)
    dab = d.transpose(1, 0, 2, 3, 4, 5)
    out = xp.zeros((n, 2 * th + 2, 2 * tw + 2, c), dtype=dy.dtype)
    for qa in (0, 1):
        for qb in (0, 1):
            blk = dab[2 * qa:2 * qa + 2, 2 * qb:2 * qb + 2].transpose(2, 3, 0, 4, 1, 5)
            out[:, 2 * qa:2 * qa + 2 * th, 2 * qb:2 * qb + 2 * tw, :] += blk.reshape(
                n, 2 * th, 2 * tw, c)
    hp, wp = g.padded_hw
    return crop_image(out[:, :hp, :wp, :], g)


def backprop_filter(xp: Any, x: Any, dy: Any, g: Geometry) -> Any:
    v, (th, tw) = _tiles(xp, x, g)
    c, co = g.w_shape[2:]
    z = _out_tiles(xp, dy, th, tw)
    du = xp.matmul(v.reshape(16, -1, c).transpose(0, 2, 1), z.reshape(16, -1, co))
    du = du.reshape(4, 4, c, co)
    dw = _apply(xp, _apply(xp, du, _GT, 1), _GT, 1)  # (3b, 3a, C, CO)
    return dw.transpose(1, 0, 2, 3)

"""im2col: gather every window into a matrix, then one matrix product (any geometry)."""

from __future__ import annotations

from typing import Any

from .conv_geometry import Geometry


def _windows(xp: Any, x: Any, g: Geometry) -> Any:
    """The windows of ``x`` as a matrix (N * OH * OW, KH * KW * C)."""
    from .conv import _extract

    p = _extract(_Xp(xp), x, g.w_shape[:2], g.strides, g.dilations, g.pads, 0.0)
    n, oh, ow, kh, kw, c = p.shape
    return p.reshape(n * oh * ow, kh * kw * c)


class _Xp:
    """The little of a backend that ``conv._extract`` uses."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp


def forward(xp: Any, x: Any, w: Any, g: Geometry) -> Any:
    kh, kw, c, co = g.w_shape
    y = xp.matmul(_windows(xp, x, g), w.reshape(kh * kw * c, co))
    return y.reshape(g.y_shape)


def backprop_input(xp: Any, dy: Any, w: Any, g: Geometry) -> Any:
    from .conv import _to_image

    kh, kw, c, co = g.w_shape
    n, oh, ow, _ = g.y_shape
    cols = xp.matmul(dy.reshape(n * oh * ow, co), w.reshape(kh * kw * c, co).T)
    return _to_image(_Xp(xp), cols.reshape(n, oh, ow, kh, kw, c), g.x_shape, g.strides,
                     g.dilations, g.pads)


def backprop_filter(xp: Any, x: Any, dy: Any, g: Geometry) -> Any:
    co = g.w_shape[3]
    dw = xp.matmul(_windows(xp, x, g).T, dy.reshape(-1, co))
    return dw.reshape(g.w_shape)


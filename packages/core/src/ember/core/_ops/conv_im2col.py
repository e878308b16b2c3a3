"""im2col: gather every window into a matrix, then one matrix product (any geometry).

The window matrix has KH * KW times the input's elements, so the batch is cut into chunks
whose window matrix holds at most ``conv_geometry.CHUNK_ELEMENTS`` elements: the peak
memory stays near the activations' (the products stay large enough for BLAS to run at
speed).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .conv_geometry import Geometry, batch_chunks


class _Xp:
    """The little of a backend that ``conv._extract`` / ``conv._to_image`` use."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp


def _chunks(g: Geometry) -> Iterator[tuple[int, int, Geometry]]:
    kh, kw, c, _ = g.w_shape
    oh, ow = g.out_hw
    return batch_chunks(g, oh * ow * kh * kw * c)


def _windows(xp: Any, x: Any, g: Geometry) -> Any:
    """The windows of ``x`` as a matrix (N * OH * OW, KH * KW * C)."""
    from .conv import _extract

    p = _extract(_Xp(xp), x, g.w_shape[:2], g.strides, g.dilations, g.pads, 0.0)
    n, oh, ow, kh, kw, c = p.shape
    return p.reshape(n * oh * ow, kh * kw * c)


def forward(xp: Any, x: Any, w: Any, g: Geometry) -> Any:
    kh, kw, c, co = g.w_shape
    wm = w.reshape(kh * kw * c, co)
    y = xp.empty(g.y_shape, dtype=xp.result_type(x, w))
    for a, b, gc in _chunks(g):
        xp.matmul(_windows(xp, x[a:b], gc), wm, out=y[a:b].reshape(-1, co))
    return y


def backprop_input(xp: Any, dy: Any, w: Any, g: Geometry) -> Any:
    from .conv import _to_image

    kh, kw, c, co = g.w_shape
    _, oh, ow, _ = g.y_shape
    wt = w.reshape(kh * kw * c, co).T
    dx = xp.empty(g.x_shape, dtype=xp.result_type(dy, w))
    for a, b, gc in _chunks(g):
        cols = xp.matmul(dy[a:b].reshape(-1, co), wt).reshape(b - a, oh, ow, kh, kw, c)
        dx[a:b] = _to_image(_Xp(xp), cols, gc.x_shape, g.strides, g.dilations, g.pads)
    return dx


def backprop_filter(xp: Any, x: Any, dy: Any, g: Geometry) -> Any:
    co = g.w_shape[3]
    dw = None
    for a, b, gc in _chunks(g):
        part = xp.matmul(_windows(xp, x[a:b], gc).T, dy[a:b].reshape(-1, co))
        dw = part if dw is None else xp.add(dw, part, out=dw)
    assert dw is not None
    return dw.reshape(g.w_shape)

"""im2col: gather every window into a matrix, then one matrix product (any geometry).

The window matrix has KH * KW times the input's elements, so the batch is cut into chunks
whose window matrix holds at most ``conv_geometry.CHUNK_ELEMENTS`` elements: the peak
memory stays near the activations' (the products stay large enough for BLAS to run at
speed). On a GPU (cupy, the strict double) the three products take ``conv_gather``'s
path instead: one gather kernel a window matrix, no padded copies, few chunks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import conv_gather
from .conv_geometry import Geometry, batch_chunks, crop_image


class _Xp:
    """The little of a backend that ``conv._extract`` / ``conv._to_image`` use."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp


def _chunks(g: Geometry) -> Iterator[tuple[int, int, Geometry]]:
    kh, kw, c, _ = g.w_shape
    oh, ow = g.out_hw
    return batch_chunks(g, oh * ow * kh * kw * c)


def _windows(xp: Any, x: Any, g: Geometry) -> Any:
    """The windows of ``x`` as a matrix (N * OH * OW, KH * KW * C).

    With one input channel (a grayscale image's first layer) the matrix is gathered tap
    by tap, as the transpose of a (KH * KW, N * OH * OW) array: each tap is a shifted
    image, copied in runs of a row, where window by window the runs are KW elements long
    (measured 1.8x faster for LeNet's first layer, 5x5 over 28x28, batch 64). BLAS takes
    the transposed matrix as it is."""
    from .conv import _extract

    p = _extract(_Xp(xp), x, g.w_shape[:2], g.strides, g.dilations, g.pads, 0.0)
    n, oh, ow, kh, kw, c = p.shape
    if c == 1:
        taps = xp.ascontiguousarray(p[..., 0].transpose(3, 4, 0, 1, 2))
        return taps.reshape(kh * kw, n * oh * ow).T
    return p.reshape(n * oh * ow, kh * kw * c)


def forward(xp: Any, x: Any, w: Any, g: Geometry) -> Any:
    if conv_gather.runs_here(xp):
        return conv_gather.forward(xp, x, w, g)
    kh, kw, c, co = g.w_shape
    wm = w.reshape(kh * kw * c, co)
    y = xp.empty(g.y_shape, dtype=xp.result_type(x, w))
    for a, b, gc in _chunks(g):
        xp.matmul(_windows(xp, x[a:b], gc), wm, out=y[a:b].reshape(-1, co))
    return y


SHIFT_CHUNK_ELEMENTS = 1 << 18  # 1 MB of float32: a chunk's padded image stays in cache
SHIFT_MIN_CHANNELS = 4


def backprop_input(xp: Any, dy: Any, w: Any, g: Geometry) -> Any:
    """``dx`` by one product per filter tap: ``dy @ w[i, j].T`` added into the padded
    image at the tap's offset. The window matrix (KH * KW times the input) is never made,
    and a chunk's image stays in cache while its KH * KW products land in it (measured
    1.3-2x faster than the matrix of windows and its scatter-add, LeNet and ResNet
    shapes). Under ``SHIFT_MIN_CHANNELS`` input channels each product would have too few
    columns: the window matrix's one product and scatter-add win there (1.2-1.3x, 1 and 3
    channels, measured)."""
    if conv_gather.runs_here(xp):
        return conv_gather.backprop_input(xp, dy, w, g)
    kh, kw, c, co = g.w_shape
    if c < SHIFT_MIN_CHANNELS:
        return _backprop_input_windows(xp, dy, w, g)
    n, oh, ow, _ = g.y_shape
    hp, wp = g.padded_hw
    sh, sw = g.strides
    dh, dw = g.dilations
    taps = xp.ascontiguousarray(xp.moveaxis(w, 3, 2))  # (KH, KW, CO, C)
    dt = xp.result_type(dy, w)
    padded = xp.zeros((n, hp, wp, c), dtype=dt)
    for a, b, _ in batch_chunks(g, hp * wp * c + oh * ow * c, SHIFT_CHUNK_ELEMENTS):
        d = dy[a:b].reshape(-1, co)
        img = padded[a:b]
        for i in range(kh):
            for j in range(kw):
                at = img[:, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                         j * dw: j * dw + sw * (ow - 1) + 1: sw, :]
                xp.add(at, xp.matmul(d, taps[i, j]).reshape(b - a, oh, ow, c), out=at)
    return crop_image(padded, g)


def backprop_filter(xp: Any, x: Any, dy: Any, g: Geometry) -> Any:
    if conv_gather.runs_here(xp):
        return conv_gather.backprop_filter(xp, x, dy, g)
    co = g.w_shape[3]
    dw = None
    for a, b, gc in _chunks(g):
        part = xp.matmul(_windows(xp, x[a:b], gc).T, dy[a:b].reshape(-1, co))
        dw = part if dw is None else xp.add(dw, part, out=dw)
    assert dw is not None
    return dw.reshape(g.w_shape)


def _backprop_input_windows(xp: Any, dy: Any, w: Any, g: Geometry) -> Any:
    """``dx`` as the product ``dy @ w.T`` (the windows' gradient) added back into the
    image window by window (``patches_to_image``)."""
    from .conv import _to_image

    kh, kw, c, co = g.w_shape
    _, oh, ow, _ = g.y_shape
    wt = w.reshape(kh * kw * c, co).T
    dx = xp.empty(g.x_shape, dtype=xp.result_type(dy, w))
    for a, b, gc in _chunks(g):
        cols = xp.matmul(dy[a:b].reshape(-1, co), wt).reshape(b - a, oh, ow, kh, kw, c)
        dx[a:b] = _to_image(_Xp(xp), cols, gc.x_shape, g.strides, g.dilations, g.pads)
    return dx

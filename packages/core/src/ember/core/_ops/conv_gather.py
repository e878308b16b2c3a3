"""im2col on a GPU: each window matrix gathered by one kernel straight from the unpadded
array, then one matrix product.

On a GPU a small network's step costs what its kernel launches cost. The host path pads
the image (a fill and a copy), takes the windows as a strided view and copies them into a
matrix, chunk by chunk of the batch (its chunks keep the windows in cache); here one
``ElementwiseKernel`` writes the window matrix, the padding folded into its index
arithmetic (an element outside the image reads as zero), and the chunks are as large as
a GPU's convolution workspace (``GPU_CHUNK_ELEMENTS``): LeNet's step runs each product
of a convolution as one gather and one GEMM.

The same gather serves the three products of a convolution. The forward and the filter
gradient gather the input's windows; the input gradient gathers the output gradient's
windows on the input's grid, the stride made an input dilation (an output gradient
element sits every ``stride`` positions of that grid, zeros between, never stored) and
the taps walking backwards (dilation ``-d``): ``dx = windows(dy) @ w`` with ``w``'s two
channel axes swapped (one copy of the filter), no col2im and no scatter-add.
"""

from __future__ import annotations

from typing import Any

from . import _fused
from .conv_geometry import Geometry, batch_chunks

#: elements of a chunk's window matrix on a GPU (256 MB of float32): LeNet's and most
#: small networks' batches in one chunk, a large one's in a few
GPU_CHUNK_ELEMENTS = 1 << 26

# The window's element (n, oh, ow, kh, kw, c) from cupy's flat index i, in the order of
# the layout (window matrix: rows (n, oh, ow), columns (kh, kw, c); taps: (kh, kw) major).
# The position on the source's grid, where the source is dilated by U (its element h
# sits at h * U), is o * S + k * D - P; outside the source, or between its elements,
# the window reads zero. The subscript is in bounds in every element (the strict double
# evaluates both arms of ?: as numpy does).
_ORDER = {
    "windows": """
I j = (I)i;
I c = j % C; j = j / C;
I kw = j % KW; j = j / KW;
I kh = j % KH; j = j / KH;
I ow = j % OW; j = j / OW;
I oh = j % OH; I n = j / OH;""",
    "taps": """
I j = (I)i;
I c = j % C; j = j / C;
I ow = j % OW; j = j / OW;
I oh = j % OH; j = j / OH;
I n = j % N; j = j / N;
I kw = j % KW; I kh = j / KW;"""}
_OPERATION = """
I hu = oh * SH + kh * DH - PH;
I wu = ow * SW + kw * DW - PW;
I h = hu / UH;
I w = wu / UW;
bool inside = hu >= 0 && wu >= 0 && h * UH == hu && w * UW == wu && h < H && w < W;
cols = inside ? x[inside ? ((n * H + h) * W + w) * C + c : 0] : (T)0
"""
_PARAMS = ("raw T x, int32 N, int32 H, int32 W, int32 C, int32 OH, int32 OW, int32 KH, int32 KW, "
           "int32 SH, int32 SW, int32 DH, int32 DW, int32 PH, int32 PW, int32 UH, int32 UW")
_INT_MAX = 2 ** 31 - 1


def runs_here(xp: Any) -> bool:
    """Whether ``xp`` takes this path (cupy and the strict double; numpy keeps the
    host's im2col)."""
    return _fused.fusable(xp)


def _kernel(xp: Any, layout: str, wide: bool) -> Any:
    """The gather into ``layout``, its index arithmetic in ``int`` (64-bit only past 2**31
    elements: GPUs divide 32-bit integers several times faster)."""
    index = "long long" if wide else "int"
    code = _ORDER[layout] + _OPERATION
    return _fused.kernel(xp, f"conv_gather_{layout}_{'i64' if wide else 'i32'}", _PARAMS,
                         "T cols", code.replace("I ", index + " ").replace("(I)", f"({index})"))


def gather(xp: Any, src: Any, out_hw: tuple[int, int], k: tuple[int, int],
           strides: tuple[int, int], dilations: tuple[int, int], offsets: tuple[int, int],
           src_dilation: tuple[int, int] = (1, 1), layout: str = "windows") -> Any:
    """The window matrix ``(N * OH * OW, KH * KW * C)`` of the NHWC array ``src``: row
    ``(n, oh, ow)``, column ``(kh, kw, c)`` holds ``src[n, h, w, c]`` where
    ``h * src_dilation[0] == oh * strides[0] + kh * dilations[0] - offsets[0]`` (and so
    for ``w``), zero where no element of ``src`` sits there. With ``layout="taps"`` the
    same elements as ``(KH * KW, N * OH * OW, C)`` (Winograd's tiles, points first)."""
    n, h, w, c = src.shape
    (oh, ow), (kh, kw) = out_hw, k
    shape = (n * oh * ow, kh * kw * c) if layout == "windows" else (kh * kw, n * oh * ow, c)
    cols = xp.empty(shape, dtype=src.dtype)
    wide = max(cols.size, src.size) > _INT_MAX
    _kernel(xp, layout, wide)(src, n, h, w, c, oh, ow, kh, kw, *strides, *dilations,
                              *offsets, *src_dilation, cols)
    return cols


def _chunks(g: Geometry, per_image: int) -> Any:
    return batch_chunks(g, per_image, GPU_CHUNK_ELEMENTS)


def _pointwise(g: Geometry) -> bool:
    """A 1x1 filter at stride 1 without padding: the window matrix is the input itself."""
    return g.w_shape[:2] == (1, 1) and g.strides == (1, 1) and g.pads == ((0, 0), (0, 0))


def _input_windows(xp: Any, x: Any, g: Geometry) -> Any:
    if _pointwise(g):
        return x.reshape(-1, g.w_shape[2])
    (pt, _), (pl, _) = g.pads
    return gather(xp, x, g.out_hw, g.w_shape[:2], g.strides, g.dilations, (pt, pl))


def forward(xp: Any, x: Any, w: Any, g: Geometry) -> Any:
    kh, kw, c, co = g.w_shape
    oh, ow = g.out_hw
    wm = w.reshape(kh * kw * c, co)
    y = xp.empty(g.y_shape, dtype=xp.result_type(x, w))
    for a, b, gc in _chunks(g, oh * ow * kh * kw * c):
        xp.matmul(_input_windows(xp, x[a:b], gc), wm, out=y[a:b].reshape(-1, co))
    return y


def backprop_filter(xp: Any, x: Any, dy: Any, g: Geometry) -> Any:
    """``dw = windows(x).T @ dy``: the product reads the window matrix transposed, as
    it lies."""
    kh, kw, c, co = g.w_shape
    oh, ow = g.out_hw
    dw = None
    for a, b, gc in _chunks(g, oh * ow * kh * kw * c):
        part = xp.matmul(_input_windows(xp, x[a:b], gc).T, dy[a:b].reshape(-1, co))
        dw = part if dw is None else xp.add(dw, part, out=dw)
    assert dw is not None
    return dw.reshape(g.w_shape)


def backprop_input(xp: Any, dy: Any, w: Any, g: Geometry) -> Any:
    """``dx[n, h, w, c] = sum dy[n, oh, ow, o] * w[i, j, c, o]`` over
    ``oh * sh + i * dh == h + pt`` (and so along the width): the windows of ``dy`` on the
    input's grid (``dy`` dilated by the stride, taps at ``-d``, offset ``-pt``) times the
    filter as a ``(KH * KW * CO, C)`` matrix."""
    kh, kw, c, co = g.w_shape
    _, h, wd, _ = g.x_shape
    (pt, _), (pl, _) = g.pads
    dh, dw = g.dilations
    dx = xp.empty(g.x_shape, dtype=xp.result_type(dy, w))
    if _pointwise(g):  # dy @ w.T: the product reads the filter transposed, as it lies
        xp.matmul(dy.reshape(-1, co), w.reshape(c, co).T, out=dx.reshape(-1, c))
        return dx
    wt = xp.ascontiguousarray(w.transpose(0, 1, 3, 2)).reshape(kh * kw * co, c)
    for a, b, _ in _chunks(g, h * wd * kh * kw * co):
        cols = gather(xp, dy[a:b], (h, wd), (kh, kw), (1, 1), (-dh, -dw), (-pt, -pl),
                      g.strides)
        xp.matmul(cols, wt, out=dx[a:b].reshape(-1, c))
    return dx

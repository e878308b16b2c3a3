"""Depthwise 2-D convolution: each input channel convolved with its own filters.

Input ``(N, H, W, C)``, filters ``(KH, KW, C, M)`` (M the depth multiplier), output
``(N, OH, OW, C * M)`` where output channel ``c * M + m`` is channel ``c`` convolved with
``filters[..., c, m]`` (TensorFlow's and Keras's order). It is a convolution grouped by
channel, but the dense convolution's algorithms would multiply C times more zeros than
numbers, so the three primitives here loop over the KH * KW filter taps instead: each tap
is one element-wise product of a shifted (strided) view of the padded image with that
tap's weights, added in. No window matrix is made: the workspace is one activation (on the
host, one chunk of the batch's).

``depthwise_conv2d_native``, ``..._backprop_input`` and ``..._backprop_filter`` (TF's
names) are one trilinear form ``<dy, depthwise(x, w)>`` differentiated three ways, as
the dense convolution's primitives are: ember-tape builds each one's gradient from the
other two, so every order of derivative comes free.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._registry import execute, register
from .conv_geometry import Geometry, Pads, batch_chunks, crop_image, pad_image

F = "conv"


def _geometry(x_shape: Any, w_shape: Any, strides: Any, dilations: Any, pads: Pads
              ) -> Geometry:
    """The geometry of the dense convolution with the same windows (``w_shape``'s last
    axis is the multiplier, so only the spatial sizes of ``y_shape`` are meaningful)."""
    return Geometry(tuple(int(i) for i in x_shape), tuple(int(i) for i in w_shape),  # type: ignore[arg-type]
                    tuple(strides), tuple(dilations), pads)  # type: ignore[arg-type]


def _taps(g: Geometry) -> Iterator[tuple[int, int, Any]]:
    """``(i, j, index)``: each filter tap and the view of the padded image it multiplies
    (the input under that tap for every output position)."""
    kh, kw = g.w_shape[:2]
    oh, ow = g.out_hw
    sh, sw = g.strides
    dh, dw = g.dilations
    for i in range(kh):
        for j in range(kw):
            yield i, j, (slice(None), slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
                         slice(j * dw, j * dw + sw * (ow - 1) + 1, sw), slice(None))


# A host chunk of the batch holds about this many output elements (at least one image):
# its image, product and output stay in cache across the KH * KW taps. Measured against the
# whole batch at once (32 x 45 x 45 x 128, 3x3, one thread): forward 2.6x, input gradient
# 5.6x, filter gradient 2x faster. A GPU takes the batch in one chunk: each chunk costs its
# taps' kernel launches.
HOST_CHUNK_ELEMENTS = 1 << 16


def _chunks(xp: Any, g: Geometry) -> Iterator[tuple[int, int, Geometry]]:
    oh, ow = g.out_hw
    per_image = oh * ow * g.x_shape[3] * g.w_shape[3]
    budget = HOST_CHUNK_ELEMENTS if xp is np else per_image * max(1, g.x_shape[0])
    return batch_chunks(g, per_image, budget)


def _fwd(be: Any, x: Any, w: Any, strides: tuple[int, int], dilations: tuple[int, int],
         pads: Pads) -> Any:
    xp = be.xp
    g = _geometry(x.shape, w.shape, strides, dilations, pads)
    n, c, m = g.x_shape[0], g.x_shape[3], g.w_shape[3]
    oh, ow = g.out_hw
    y = xp.empty((n, oh, ow, c, m), dtype=xp.result_type(x, w))
    for a, b, gc in _chunks(xp, g):
        xa, ya = pad_image(xp, x[a:b], pads), y[a:b]
        tmp = None
        for i, j, at in _taps(gc):
            if tmp is None:  # the first tap writes the output, the others add to it
                xp.multiply(xa[at][..., None], w[i, j], out=ya)
                tmp = xp.empty_like(ya)
                continue
            xp.multiply(xa[at][..., None], w[i, j], out=tmp)
            xp.add(ya, tmp, out=ya)
    return y.reshape(n, oh, ow, c * m)


def _bp_input(be: Any, dy: Any, w: Any, input_shape: tuple[int, ...],
              strides: tuple[int, int], dilations: tuple[int, int], pads: Pads) -> Any:
    xp = be.xp
    g = _geometry(input_shape, w.shape, strides, dilations, pads)
    n, c, m = g.x_shape[0], g.x_shape[3], g.w_shape[3]
    oh, ow = g.out_hw
    hp, wp = g.padded_hw
    dt = xp.result_type(dy, w)
    d = dy.reshape(n, oh, ow, c, m)
    dx = xp.empty(g.x_shape, dtype=dt)
    for a, b, gc in _chunks(xp, g):
        padded = xp.zeros((b - a, hp, wp, c), dtype=dt)
        da = d[a:b]
        tmp = xp.empty((b - a, oh, ow, c), dtype=dt) if m == 1 else None
        for i, j, at in _taps(gc):
            if m == 1:
                xp.multiply(da[..., 0], w[i, j, :, 0], out=tmp)
                part = tmp
            else:
                part = (da * w[i, j]).sum(axis=-1)
            img = padded[at]
            xp.add(img, part, out=img)
        dx[a:b] = crop_image(padded, gc)
    return dx


def _bp_filter(be: Any, x: Any, dy: Any, filter_shape: tuple[int, ...],
               strides: tuple[int, int], dilations: tuple[int, int], pads: Pads) -> Any:
    """Each tap's weights' gradient: its view of the image times ``dy``, summed over the
    batch and the output positions, chunk by chunk (short sums, added up: they round less
    than one long one)."""
    xp = be.xp
    g = _geometry(x.shape, filter_shape, strides, dilations, pads)
    n, c, m = g.x_shape[0], g.x_shape[3], g.w_shape[3]
    oh, ow = g.out_hw
    dt = xp.result_type(x, dy)
    d = dy.reshape(n, oh, ow, c, m)
    dw = xp.zeros(g.w_shape, dtype=dt)
    for a, b, gc in _chunks(xp, g):
        xa, da = pad_image(xp, x[a:b], pads), d[a:b]
        tmp = xp.empty(da.shape, dtype=dt)
        for i, j, at in _taps(gc):
            xp.multiply(xa[at][..., None], da, out=tmp)
            tap = dw[i, j]
            xp.add(tap, tmp.reshape(-1, c, m).sum(axis=0), out=tap)
    return dw


_fwd_op = register("depthwise_conv2d_native", _fwd, family=F, promote="all")
_bp_input_op = register("depthwise_conv2d_native_backprop_input", _bp_input, family=F,
                        promote="all")
_bp_filter_op = register("depthwise_conv2d_native_backprop_filter", _bp_filter, family=F,
                         promote="all")


def _attrs(strides: Any, dilations: Any, pads: Any) -> dict[str, Any]:
    return {"strides": tuple(int(s) for s in strides),
            "dilations": tuple(int(d) for d in dilations),
            "pads": tuple((int(a), int(b)) for a, b in pads)}


def check(op: str, g: Geometry, dy_shape: Any = None) -> None:
    """Raise naming ``op`` unless ``g`` is a depthwise convolution (and ``dy_shape`` its
    output's shape)."""
    if len(g.x_shape) != 4 or len(g.w_shape) != 4 or g.x_shape[3] != g.w_shape[2]:
        raise InvalidArgumentError(f"{op}: input shape {g.x_shape} and filter shape "
                                   f"{g.w_shape} do not make a depthwise 2-D convolution "
                                   "(NHWC input, (KH, KW, C_in, multiplier) filters, C_in "
                                   "equal)")
    if min(min(g.pads[0]), min(g.pads[1])) < 0:
        raise InvalidArgumentError(f"{op}: padding must not be negative, got {g.pads}")
    if min(g.strides) < 1 or min(g.dilations) < 1:
        raise InvalidArgumentError(f"{op}: strides {g.strides} and dilations {g.dilations} "
                                   "must be positive")
    if min(g.out_hw) < 1:
        raise InvalidArgumentError(f"{op}: filter {g.w_shape} (dilation {g.dilations}) is "
                                   f"larger than the padded input {g.x_shape}")
    if dy_shape is not None:
        y = g.x_shape[:1] + g.out_hw + (g.x_shape[3] * g.w_shape[3],)
        if tuple(dy_shape) != y:
            raise InvalidArgumentError(f"{op}: the output gradient has shape "
                                       f"{tuple(dy_shape)}, but the convolution's output "
                                       f"has shape {y}")


def depthwise_conv2d_native(x: Any, w: Any, strides: Any, dilations: Any, pads: Pads) -> Any:
    """The forward primitive: NHWC ``x``, (KH, KW, C, M) ``w``, explicit pads."""
    a = _attrs(strides, dilations, pads)
    check("depthwise_conv2d_native", _geometry(x.shape, w.shape, **a))
    return execute(_fwd_op, (x, w), a)


def depthwise_conv2d_native_backprop_input(dy: Any, w: Any, input_shape: Any, strides: Any,
                                           dilations: Any, pads: Pads) -> Any:
    """The gradient of :func:`depthwise_conv2d_native` with respect to its input, of shape
    ``input_shape``."""
    a = _attrs(strides, dilations, pads)
    shape = tuple(int(i) for i in input_shape)
    check("depthwise_conv2d_native_backprop_input", _geometry(shape, w.shape, **a), dy.shape)
    return execute(_bp_input_op, (dy, w), {"input_shape": shape, **a})


def depthwise_conv2d_native_backprop_filter(x: Any, dy: Any, filter_shape: Any, strides: Any,
                                            dilations: Any, pads: Pads) -> Any:
    """The gradient of :func:`depthwise_conv2d_native` with respect to its filters, of
    ``filter_shape``."""
    a = _attrs(strides, dilations, pads)
    shape = tuple(int(i) for i in filter_shape)
    check("depthwise_conv2d_native_backprop_filter", _geometry(x.shape, shape, **a),
          dy.shape)
    return execute(_bp_filter_op, (x, dy), {"filter_shape": shape, **a})

"""3-D convolution as a sum of 2-D ones, one per depth tap of the filter.

Input ``(N, D, H, W, C)``, filters ``(KD, KH, KW, C, CO)``, output ``(N, OD, OH, OW, CO)``.
Output frame ``od`` is ``sum over kd`` of the 2-D convolution of input frame
``od * sd + kd * dd - pad_front`` with ``filters[kd]`` (frames outside the input are zero).
So each depth tap ``kd`` is one 2-D convolution of a batch of ``N * OD`` frames (the input
frames that tap reads, a strided slice of the depth-padded input) with ``filters[kd]``, run
by the 2-D engine (``conv_select``: im2col, FFT or Winograd on the host, the gather kernel
on a GPU, autotuned per 2-D geometry) and added up. The two gradient products are the same
sums, backwards: the input gradient adds each tap's 2-D input gradient back into the
frames it read, the filter gradient of tap ``kd`` is the 2-D filter gradient of those
frames. The workspace is one copy of the input's frames per tap in turn, never the
KD * KH * KW window matrix of a direct 3-D im2col.

``conv3d``, ``conv3d_backprop_input`` and ``conv3d_backprop_filter`` are one trilinear
form ``<dy, conv3d(x, w)>`` differentiated three ways, as the 2-D primitives are:
ember-tape builds each one's gradient from the other two, so every order of derivative
comes free.
"""

from __future__ import annotations

import math
from typing import Any

from .._errors import InvalidArgumentError
from .._registry import execute, register
from . import _args, conv_select
from .conv_geometry import Geometry

F = "conv"
Pads3 = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]
Triple = tuple[int, int, int]


def triple(op: str, v: Any, name: str) -> Triple:
    """An int, 1 or 3 ints, or TensorFlow's 5-list ``[1, sd, sh, sw, 1]`` as (d, h, w)."""
    if isinstance(v, int) and not isinstance(v, bool):
        vals = [v] * 3
    else:
        try:
            vals = [int(i) for i in v]
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"{op}: {name} must be an int, 3 ints or TensorFlow's "
                                       f"5-list [1, d, h, w, 1], got {v!r}") from None
        if len(vals) == 5:
            if vals[0] != 1 or vals[4] != 1:
                raise InvalidArgumentError(f"{op}: {name} {vals} is not 1 on the batch or "
                                           "channel axis; only the three spatial entries may "
                                           "differ from 1")
            vals = vals[1:4]
        if len(vals) == 1:
            vals = vals * 3
    if len(vals) != 3 or min(vals) < 1:
        raise InvalidArgumentError(f"{op}: {name} must be an int or three positive ints "
                                   f"(depth, height, width), got {v!r}")
    return (vals[0], vals[1], vals[2])


def padding_amounts_3d(op: str, padding: Any, in_dhw: tuple[int, ...], ksize: Triple,
                       strides: Triple, dilations: Triple) -> Pads3:
    """TensorFlow's SAME/VALID padding (or explicit ``[[front, back], [top, bottom],
    [left, right]]``, or TensorFlow's 5 pairs) as three (before, after) pairs."""
    if isinstance(padding, str):
        p = padding.upper()
        if p == "VALID":
            return ((0, 0), (0, 0), (0, 0))
        if p != "SAME":
            raise InvalidArgumentError(f"{op}: padding must be 'SAME' or 'VALID', got "
                                       f"{padding!r}")
        out = []
        for n, k, s, d in zip(in_dhw, ksize, strides, dilations):
            total = max((math.ceil(n / s) - 1) * s + (k - 1) * d + 1 - n, 0)
            out.append((total // 2, total - total // 2))
        return (out[0], out[1], out[2])
    try:
        pads = [(int(a), int(b)) for a, b in padding]
    except (TypeError, ValueError):
        pads = []
    if len(pads) == 5:
        if pads[0] != (0, 0) or pads[4] != (0, 0):
            raise InvalidArgumentError(f"{op}: explicit padding of the batch and channel axes "
                                       f"must be [0, 0], got {padding!r}")
        pads = pads[1:4]
    if len(pads) != 3:
        raise InvalidArgumentError(f"{op}: padding must be 'SAME', 'VALID' or explicit "
                                   f"[[front, back], [top, bottom], [left, right]], got "
                                   f"{padding!r}")
    if min(min(p) for p in pads) < 0:
        raise InvalidArgumentError(f"{op}: padding must not be negative, got {padding!r}")
    return (pads[0], pads[1], pads[2])


def out_size(n: int, k: int, s: int, d: int, p0: int, p1: int) -> int:
    return (n + p0 + p1 - (k - 1) * d - 1) // s + 1


class _Geometry3:
    """The shapes of one 3-D convolution (forward view) and its 2-D frame convolution."""

    def __init__(self, x_shape: Any, w_shape: Any, strides: Any, dilations: Any,
                 pads: Any) -> None:
        self.x_shape = tuple(int(i) for i in x_shape)
        self.w_shape = tuple(int(i) for i in w_shape)
        self.strides = tuple(int(i) for i in strides)
        self.dilations = tuple(int(i) for i in dilations)
        self.pads = tuple((int(a), int(b)) for a, b in pads)

    @property
    def out_dhw(self) -> tuple[int, int, int]:
        d, h, w = self.x_shape[1:4]
        kd, kh, kw = self.w_shape[:3]
        o = [out_size(n, k, s, dd, p0, p1) for n, k, s, dd, (p0, p1) in
             zip((d, h, w), (kd, kh, kw), self.strides, self.dilations, self.pads)]
        return (o[0], o[1], o[2])

    @property
    def y_shape(self) -> tuple[int, ...]:
        return (self.x_shape[0],) + self.out_dhw + (self.w_shape[4],)

    def frames(self) -> Geometry:
        """The 2-D convolution each depth tap runs: N * OD frames (H, W, C)."""
        n, _, h, w, c = self.x_shape
        return Geometry((n * self.out_dhw[0], h, w, c), self.w_shape[1:],  # type: ignore[arg-type]
                        self.strides[1:], self.dilations[1:], self.pads[1:])  # type: ignore[arg-type]

    def tap(self, kd: int) -> slice:
        """The frames of the depth-padded input that tap ``kd`` reads, one per output frame."""
        od, sd, dd = self.out_dhw[0], self.strides[0], self.dilations[0]
        return slice(kd * dd, kd * dd + sd * (od - 1) + 1, sd)

    def check(self, op: str, dy_shape: Any = None) -> None:
        if len(self.x_shape) != 5 or len(self.w_shape) != 5 or \
                self.x_shape[4] != self.w_shape[3]:
            raise InvalidArgumentError(
                f"{op}: input shape {self.x_shape} and filter shape {self.w_shape} do not "
                "make a 3-D convolution (NDHWC input, (KD, KH, KW, C_in, C_out) filters, "
                "C_in equal)")
        if min(min(p) for p in self.pads) < 0:
            raise InvalidArgumentError(f"{op}: padding must not be negative, got {self.pads}")
        if min(self.out_dhw) < 1:
            raise InvalidArgumentError(
                f"{op}: filters {self.w_shape} (dilation {self.dilations}) are larger than "
                f"the padded input {self.x_shape} (padding {self.pads})")
        if dy_shape is not None and tuple(dy_shape) != self.y_shape:
            raise InvalidArgumentError(
                f"{op}: the output gradient has shape {tuple(dy_shape)}, but the "
                f"convolution's output has shape {self.y_shape}")


def _pad_depth(xp: Any, x: Any, g: _Geometry3) -> Any:
    pf, pk = g.pads[0]
    if not (pf or pk):
        return x
    n, d, h, w, c = x.shape
    out = xp.zeros((n, d + pf + pk, h, w, c), dtype=x.dtype)
    out[:, pf:pf + d] = x
    return out


def _tap_frames(xp: Any, xpad: Any, g: _Geometry3, kd: int) -> Any:
    """The frames tap ``kd`` reads, as a contiguous (N * OD, H, W, C) batch."""
    n, _, h, w, c = g.x_shape
    return xp.ascontiguousarray(xpad[:, g.tap(kd)]).reshape(n * g.out_dhw[0], h, w, c)


def _fwd(be: Any, x: Any, w: Any, strides: Triple, dilations: Triple, pads: Pads3) -> Any:
    xp = be.xp
    g = _Geometry3(x.shape, w.shape, strides, dilations, pads)
    g2 = g.frames()
    xpad = _pad_depth(xp, x, g)
    y = None
    for kd in range(g.w_shape[0]):
        part = conv_select._run("conv2d", be, _tap_frames(xp, xpad, g, kd),
                                xp.ascontiguousarray(w[kd]), g2)
        y = part if y is None else xp.add(y, part, out=y)
    assert y is not None
    return y.reshape(g.y_shape)


def _bp_input(be: Any, dy: Any, w: Any, input_shape: tuple[int, ...], strides: Triple,
              dilations: Triple, pads: Pads3) -> Any:
    xp = be.xp
    g = _Geometry3(input_shape, w.shape, strides, dilations, pads)
    g2 = g.frames()
    n, d, h, wd, c = g.x_shape
    (pf, pk), od = g.pads[0], g.out_dhw[0]
    dy2 = xp.ascontiguousarray(dy).reshape(g2.y_shape)
    dxp = xp.zeros((n, d + pf + pk, h, wd, c), dtype=xp.result_type(dy, w))
    for kd in range(g.w_shape[0]):
        part = conv_select._run("conv2d_backprop_input", be, dy2,
                                xp.ascontiguousarray(w[kd]), g2)
        at = dxp[:, g.tap(kd)]
        xp.add(at, part.reshape(n, od, h, wd, c), out=at)
    return xp.ascontiguousarray(dxp[:, pf:pf + d])


def _bp_filter(be: Any, x: Any, dy: Any, filter_shape: tuple[int, ...], strides: Triple,
               dilations: Triple, pads: Pads3) -> Any:
    xp = be.xp
    g = _Geometry3(x.shape, filter_shape, strides, dilations, pads)
    g2 = g.frames()
    xpad = _pad_depth(xp, x, g)
    dy2 = xp.ascontiguousarray(dy).reshape(g2.y_shape)
    dw = xp.empty(g.w_shape, dtype=xp.result_type(x, dy))
    for kd in range(g.w_shape[0]):
        dw[kd] = conv_select._run("conv2d_backprop_filter", be, _tap_frames(xp, xpad, g, kd),
                                  dy2, g2)
    return dw


_fwd_op = register("conv3d", _fwd, family=F, promote="all")
_bp_input_op = register("conv3d_backprop_input", _bp_input, family=F, promote="all")
_bp_filter_op = register("conv3d_backprop_filter", _bp_filter, family=F, promote="all")


def _attrs(strides: Any, dilations: Any, pads: Any) -> dict[str, Any]:
    return {"strides": tuple(int(s) for s in strides),
            "dilations": tuple(int(d) for d in dilations),
            "pads": tuple((int(a), int(b)) for a, b in pads)}


def conv3d(x: Any, w: Any, strides: Any, dilations: Any, pads: Pads3) -> Any:
    """The forward primitive: NDHWC ``x`` and (KD, KH, KW, C, CO) ``w``, explicit pads."""
    x, w = _args.tensor(x), _args.tensor(w)
    a = _attrs(strides, dilations, pads)
    _Geometry3(x.shape, w.shape, a["strides"], a["dilations"], a["pads"]).check("conv3d")
    return execute(_fwd_op, (x, w), a)


def conv3d_backprop_input(dy: Any, w: Any, input_shape: Any, strides: Any, dilations: Any,
                          pads: Pads3) -> Any:
    """The gradient of :func:`conv3d` with respect to its input, of shape ``input_shape``."""
    dy, w = _args.tensor(dy), _args.tensor(w)
    a = _attrs(strides, dilations, pads)
    _Geometry3(input_shape, w.shape, a["strides"], a["dilations"], a["pads"]).check(
        "conv3d_backprop_input", dy.shape)
    return execute(_bp_input_op, (dy, w), {"input_shape": tuple(int(i) for i in input_shape),
                                           **a})


def conv3d_backprop_filter(x: Any, dy: Any, filter_shape: Any, strides: Any, dilations: Any,
                           pads: Pads3) -> Any:
    """The gradient of :func:`conv3d` with respect to its filters, of ``filter_shape``."""
    x, dy = _args.tensor(x), _args.tensor(dy)
    a = _attrs(strides, dilations, pads)
    _Geometry3(x.shape, filter_shape, a["strides"], a["dilations"], a["pads"]).check(
        "conv3d_backprop_filter", dy.shape)
    return execute(_bp_filter_op, (x, dy), {"filter_shape": tuple(int(i) for i in filter_shape),
                                            **a})

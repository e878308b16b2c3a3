"""Gradients of the sliding-window primitives under pooling, and of the three convolution
primitives, the three depthwise ones and the three 3-D ones, which are each other's
gradients (so every order comes free)."""

from __future__ import annotations

from collections.abc import Sequence

from ember.core import REGISTRY, Tensor
from ember.core.extend import run_op

from . import Gradients, OpContext, reads_only
from . import register_gradient as reg

_EXTRACT = REGISTRY["extract_patches"]
_TO_IMAGE = REGISTRY["patches_to_image"]
_CONV = REGISTRY["conv2d"]
_CONV_INPUT = REGISTRY["conv2d_backprop_input"]
_CONV_FILTER = REGISTRY["conv2d_backprop_filter"]


@reg("extract_patches")
def _extract(op: OpContext, dy: Tensor) -> Gradients:
    a = op.attrs
    return run_op(_TO_IMAGE, (dy,), {"image_shape": op.inputs[0].shape, "strides": a["strides"],
                                      "dilations": a["dilations"], "pads": a["pads"]})


@reg("patches_to_image")
def _to_image(op: OpContext, dy: Tensor) -> Gradients:
    a = op.attrs
    ksize = op.inputs[0].shape[3:5]
    return run_op(_EXTRACT, (dy,), {"ksize": tuple(ksize), "strides": a["strides"],
                                     "dilations": a["dilations"], "pads": a["pads"],
                                     "pad_value": 0.0})


def _geom(op: OpContext) -> dict[str, object]:
    a = op.attrs
    return {"strides": a["strides"], "dilations": a["dilations"], "pads": a["pads"]}


def _input(dy: Tensor, w: Tensor, x_shape: Sequence[int], op: OpContext) -> Tensor:
    return run_op(_CONV_INPUT, (dy, w), {"input_shape": tuple(x_shape), **_geom(op)})


def _filter(x: Tensor, dy: Tensor, w_shape: Sequence[int], op: OpContext) -> Tensor:
    return run_op(_CONV_FILTER, (x, dy), {"filter_shape": tuple(w_shape), **_geom(op)})


def _conv(x: Tensor, w: Tensor, op: OpContext) -> Tensor:
    return run_op(_CONV, (x, w), _geom(op))


@reg("conv2d")
def _conv2d(op: OpContext, dy: Tensor) -> Gradients:
    x, w = op.inputs
    return (_input(dy, w, x.shape, op) if op.needs[0] else None,
            _filter(x, dy, w.shape, op) if op.needs[1] else None)


@reg("conv2d_backprop_input")
def _conv2d_input(op: OpContext, g: Tensor) -> Gradients:
    dy, w = op.inputs  # the result is d<dy, conv2d(x, w)>/dx, linear in dy and in w
    return (_conv(g, w, op) if op.needs[0] else None,
            _filter(g, dy, w.shape, op) if op.needs[1] else None)


@reg("conv2d_backprop_filter")
def _conv2d_filter(op: OpContext, g: Tensor) -> Gradients:
    x, dy = op.inputs  # the result is d<dy, conv2d(x, w)>/dw, linear in x and in dy
    return (_input(dy, g, x.shape, op) if op.needs[0] else None,
            _conv(x, g, op) if op.needs[1] else None)


# --- depthwise convolution: the same trilinear form, channel by channel -------------------
_DW = REGISTRY["depthwise_conv2d_native"]
_DW_INPUT = REGISTRY["depthwise_conv2d_native_backprop_input"]
_DW_FILTER = REGISTRY["depthwise_conv2d_native_backprop_filter"]
for _name in (_DW.name, _DW_INPUT.name, _DW_FILTER.name):
    reads_only(_name, outputs=False)


def _dw_input(dy: Tensor, w: Tensor, x_shape: Sequence[int], op: OpContext) -> Tensor:
    return run_op(_DW_INPUT, (dy, w), {"input_shape": tuple(x_shape), **_geom(op)})


def _dw_filter(x: Tensor, dy: Tensor, w_shape: Sequence[int], op: OpContext) -> Tensor:
    return run_op(_DW_FILTER, (x, dy), {"filter_shape": tuple(w_shape), **_geom(op)})


@reg("depthwise_conv2d_native")
def _depthwise(op: OpContext, dy: Tensor) -> Gradients:
    x, w = op.inputs
    return (_dw_input(dy, w, x.shape, op) if op.needs[0] else None,
            _dw_filter(x, dy, w.shape, op) if op.needs[1] else None)


@reg("depthwise_conv2d_native_backprop_input")
def _depthwise_input(op: OpContext, g: Tensor) -> Gradients:
    dy, w = op.inputs  # d<dy, depthwise(x, w)>/dx, linear in dy and in w
    return (run_op(_DW, (g, w), _geom(op)) if op.needs[0] else None,
            _dw_filter(g, dy, w.shape, op) if op.needs[1] else None)


@reg("depthwise_conv2d_native_backprop_filter")
def _depthwise_filter(op: OpContext, g: Tensor) -> Gradients:
    x, dy = op.inputs  # d<dy, depthwise(x, w)>/dw, linear in x and in dy
    return (_dw_input(dy, g, x.shape, op) if op.needs[0] else None,
            run_op(_DW, (x, g), _geom(op)) if op.needs[1] else None)


# --- 3-D convolution: the same trilinear form, over (depth, height, width) ----------------
_C3 = REGISTRY["conv3d"]
_C3_INPUT = REGISTRY["conv3d_backprop_input"]
_C3_FILTER = REGISTRY["conv3d_backprop_filter"]
for _name in (_C3.name, _C3_INPUT.name, _C3_FILTER.name):
    reads_only(_name, outputs=False)


def _c3_input(dy: Tensor, w: Tensor, x_shape: Sequence[int], op: OpContext) -> Tensor:
    return run_op(_C3_INPUT, (dy, w), {"input_shape": tuple(x_shape), **_geom(op)})


def _c3_filter(x: Tensor, dy: Tensor, w_shape: Sequence[int], op: OpContext) -> Tensor:
    return run_op(_C3_FILTER, (x, dy), {"filter_shape": tuple(w_shape), **_geom(op)})


@reg("conv3d")
def _conv3d(op: OpContext, dy: Tensor) -> Gradients:
    x, w = op.inputs
    return (_c3_input(dy, w, x.shape, op) if op.needs[0] else None,
            _c3_filter(x, dy, w.shape, op) if op.needs[1] else None)


@reg("conv3d_backprop_input")
def _conv3d_input(op: OpContext, g: Tensor) -> Gradients:
    dy, w = op.inputs  # d<dy, conv3d(x, w)>/dx, linear in dy and in w
    return (run_op(_C3, (g, w), _geom(op)) if op.needs[0] else None,
            _c3_filter(g, dy, w.shape, op) if op.needs[1] else None)


@reg("conv3d_backprop_filter")
def _conv3d_filter(op: OpContext, g: Tensor) -> Gradients:
    x, dy = op.inputs  # d<dy, conv3d(x, w)>/dw, linear in x and in dy
    return (_c3_input(dy, g, x.shape, op) if op.needs[0] else None,
            run_op(_C3, (x, g), _geom(op)) if op.needs[1] else None)

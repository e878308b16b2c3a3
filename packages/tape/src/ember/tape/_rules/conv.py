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


# --- depthwise and 3-D convolutions: the same trilinear form ---------------------------------
def _trilinear(forward: str, backprop_input: str, backprop_filter: str) -> None:
    """The rules of a convolution ``y = conv(x, w)`` whose two gradients are ops of their
    own, ``dx = backprop_input(dy, w)`` and ``dw = backprop_filter(x, dy)``: the three are
    linear in each input, so each one's gradient is made of the other two (every order of
    derivative comes free)."""
    conv, conv_input, conv_filter = (REGISTRY[n] for n in (forward, backprop_input,
                                                            backprop_filter))
    for name in (forward, backprop_input, backprop_filter):
        reads_only(name, outputs=False)

    def d_input(dy: Tensor, w: Tensor, x_shape: Sequence[int], op: OpContext) -> Tensor:
        return run_op(conv_input, (dy, w), {"input_shape": tuple(x_shape), **_geom(op)})

    def d_filter(x: Tensor, dy: Tensor, w_shape: Sequence[int], op: OpContext) -> Tensor:
        return run_op(conv_filter, (x, dy), {"filter_shape": tuple(w_shape), **_geom(op)})

    @reg(forward)
    def _forward(op: OpContext, dy: Tensor) -> Gradients:
        x, w = op.inputs
        return (d_input(dy, w, x.shape, op) if op.needs[0] else None,
                d_filter(x, dy, w.shape, op) if op.needs[1] else None)

    @reg(backprop_input)
    def _input_rule(op: OpContext, g: Tensor) -> Gradients:
        dy, w = op.inputs  # d<dy, conv(x, w)>/dx, linear in dy and in w
        return (run_op(conv, (g, w), _geom(op)) if op.needs[0] else None,
                d_filter(g, dy, w.shape, op) if op.needs[1] else None)

    @reg(backprop_filter)
    def _filter_rule(op: OpContext, g: Tensor) -> Gradients:
        x, dy = op.inputs  # d<dy, conv(x, w)>/dw, linear in x and in dy
        return (d_input(dy, g, x.shape, op) if op.needs[0] else None,
                run_op(conv, (x, g), _geom(op)) if op.needs[1] else None)


_trilinear("depthwise_conv2d_native", "depthwise_conv2d_native_backprop_input",
           "depthwise_conv2d_native_backprop_filter")  # channel by channel
_trilinear("conv3d", "conv3d_backprop_input", "conv3d_backprop_filter")  # (d, h, w)

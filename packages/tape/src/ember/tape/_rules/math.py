"""Gradients of element-wise math ops."""

from __future__ import annotations

import math as _pymath
from typing import Any

import ember.core as em
from ember.core import Tensor
from ember.core.extend import is_differentiable

from . import Gradients, OpContext
from . import register_gradient as reg


def _mask(cond: Tensor, dtype: Any) -> Tensor:
    return em.cast(cond, dtype)


reg("add")(lambda op, dy: (dy, dy))
reg("subtract")(lambda op, dy: (dy, em.negative(dy)))
reg("negative")(lambda op, dy: em.negative(dy))
reg("identity")(lambda op, dy: dy)
reg("stop_gradient")(lambda op, dy: None)
# As TensorFlow: the gradient passes through and is itself checked for NaN and Inf.
reg("check_numerics")(lambda op, dy: em.check_numerics(
    dy, "Not a number (NaN) or infinity (Inf) values detected in gradient. "
    + op.attrs["message"]))
reg("check_range")(lambda op, dy: dy)  # a check on the values, not on their gradient


@reg("multiply")
def _multiply(op: OpContext, dy: Tensor) -> Gradients:
    x, y = op.inputs
    if dy.dtype.kind == "c":  # the adjoint: conj(y) (TensorFlow's and PyTorch's convention)
        gx, gy = em.multiply(dy, em.math.conj(y)), em.multiply(dy, em.math.conj(x))
        # a real operand of a complex product gets the real part
        return (gx if x.dtype.kind == "c" else em.math.real(gx),
                gy if y.dtype.kind == "c" else em.math.real(gy))
    return em.multiply(dy, y), em.multiply(dy, x)


@reg("divide")
def _divide(op: OpContext, dy: Tensor) -> Gradients:
    x, y = op.inputs
    gx = em.divide(dy, y)
    return gx, em.negative(em.multiply(gx, em.divide(x, y)))


@reg("floormod")
def _floormod(op: OpContext, dy: Tensor) -> Gradients:
    x, y = op.inputs
    return dy, em.negative(em.multiply(dy, em.floordiv(x, y)))  # x == floordiv * y + mod


@reg("pow")
def _pow(op: OpContext, dy: Tensor) -> Gradients:
    x, y = op.inputs
    out = op.output
    gx = em.multiply(dy, em.multiply(y, em.pow(x, em.subtract(y, 1))))
    if y.dtype.kind not in "fc":
        return gx, None
    safe = em.where(em.greater(x, 0), x, em.ones_like(x))
    logx = em.where(em.greater(x, 0), em.log(safe), em.zeros_like(x))
    return gx, em.multiply(dy, em.multiply(out, logx))


@reg("maximum")
def _maximum(op: OpContext, dy: Tensor) -> Gradients:
    x, y = op.inputs
    m = _mask(em.greater_equal(x, y), dy.dtype)
    return em.multiply(dy, m), em.multiply(dy, em.subtract(1, m))


@reg("minimum")
def _minimum(op: OpContext, dy: Tensor) -> Gradients:
    x, y = op.inputs
    m = _mask(em.less_equal(x, y), dy.dtype)
    return em.multiply(dy, m), em.multiply(dy, em.subtract(1, m))


@reg("atan2")
def _atan2(op: OpContext, dy: Tensor) -> Gradients:
    y, x = op.inputs
    d = em.add(em.square(x), em.square(y))
    return em.multiply(dy, em.divide(x, d)), em.negative(em.multiply(dy, em.divide(y, d)))


@reg("abs")
def _abs(op: OpContext, dy: Tensor) -> Gradients:
    x = op.inputs[0]
    if x.dtype.kind == "c":  # dy * z / |z| (0 at z = 0), as TensorFlow's ComplexAbs
        r = op.output
        safe = em.where(em.equal(r, 0), em.ones_like(r), r)
        return em.multiply(x, em.cast(em.divide(dy, safe), x.dtype))
    return em.multiply(dy, em.sign(x))


def _zero(op: OpContext, dy: Tensor) -> Gradients:
    return em.zeros_like(op.inputs[0])


for _name in ("sign", "floor", "ceil", "round"):
    reg(_name)(_zero)

reg("square")(lambda op, dy: em.multiply(dy, em.multiply(op.inputs[0], 2)))
reg("sqrt")(lambda op, dy: em.divide(em.multiply(dy, 0.5), op.output))
reg("rsqrt")(lambda op, dy: em.multiply(dy, em.multiply(em.pow(op.output, 3), -0.5)))
reg("reciprocal")(lambda op, dy: em.negative(em.multiply(dy, em.square(op.output))))
reg("exp")(lambda op, dy: em.multiply(dy, op.output))
reg("expm1")(lambda op, dy: em.multiply(dy, em.add(op.output, 1)))
reg("log")(lambda op, dy: em.divide(dy, op.inputs[0]))
reg("log1p")(lambda op, dy: em.divide(dy, em.add(op.inputs[0], 1)))
reg("sin")(lambda op, dy: em.multiply(dy, em.cos(op.inputs[0])))
reg("cos")(lambda op, dy: em.negative(em.multiply(dy, em.sin(op.inputs[0]))))
reg("tan")(lambda op, dy: em.multiply(dy, em.add(em.square(op.output), 1)))
reg("tanh")(lambda op, dy: em.multiply(dy, em.subtract(1, em.square(op.output))))
reg("asin")(lambda op, dy: em.multiply(dy, em.rsqrt(em.subtract(1, em.square(op.inputs[0])))))
reg("acos")(lambda op, dy: em.negative(
    em.multiply(dy, em.rsqrt(em.subtract(1, em.square(op.inputs[0]))))))
reg("atan")(lambda op, dy: em.divide(dy, em.add(em.square(op.inputs[0]), 1)))
reg("sinh")(lambda op, dy: em.multiply(dy, em.cosh(op.inputs[0])))
reg("cosh")(lambda op, dy: em.multiply(dy, em.sinh(op.inputs[0])))
reg("asinh")(lambda op, dy: em.multiply(dy, em.rsqrt(em.add(em.square(op.inputs[0]), 1))))
reg("acosh")(lambda op, dy: em.multiply(dy, em.rsqrt(em.subtract(em.square(op.inputs[0]), 1))))
reg("atanh")(lambda op, dy: em.divide(dy, em.subtract(1, em.square(op.inputs[0]))))
reg("sigmoid")(lambda op, dy: em.multiply(dy, em.multiply(op.output, em.subtract(1, op.output))))
reg("softplus")(lambda op, dy: em.multiply(dy, em.sigmoid(op.inputs[0])))

_TWO_OVER_SQRT_PI = 2 / _pymath.sqrt(_pymath.pi)
reg("erf")(lambda op, dy: em.multiply(
    dy, em.multiply(em.exp(em.negative(em.square(op.inputs[0]))), _TWO_OVER_SQRT_PI)))


@reg("cast")
def _cast(op: OpContext, dy: Tensor) -> Gradients:
    # As TensorFlow: a gradient only between floating dtypes; casting to or from an
    # integer or bool has none.
    x = op.inputs[0]
    if not (is_differentiable(x.dtype) and is_differentiable(op.output.dtype)):
        return None
    if dy.dtype.kind == "c" and x.dtype.kind != "c":  # real -> complex: the real part
        dy = em.math.real(dy)
    return em.cast(dy, x.dtype)


@reg("where")
def _where(op: OpContext, dy: Tensor) -> Gradients:
    c = op.inputs[0]
    z = em.zeros_like(dy)
    return None, em.where(c, dy, z), em.where(c, z, dy)


# --- complex numbers and their parts (core's _ops/math_complex) ----------------------------
# The gradient of a real loss with respect to z is dL/d re(z) + i dL/d im(z).
@reg("complex")
def _complex(op: OpContext, dy: Tensor) -> Gradients:
    re, im = op.inputs
    return em.cast(em.math.real(dy), re.dtype), em.cast(em.math.imag(dy), im.dtype)


@reg("real")
def _real(op: OpContext, dy: Tensor) -> Gradients:
    return em.complex(dy, em.zeros_like(dy))


@reg("imag")
def _imag(op: OpContext, dy: Tensor) -> Gradients:
    return em.complex(em.zeros_like(dy), dy)


reg("conj")(lambda op, dy: em.math.conj(dy))

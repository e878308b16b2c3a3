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


# Complex tensors (see _rules/__init__.py): a rule is holomorphic unless it says otherwise.
# OWN here: linear with real coefficients (the tape's conjugations would cancel), or the
# rule gives the complex gradient itself.
_OWN = "own"
reg("add", complex=_OWN)(lambda op, dy: (dy, dy))
reg("subtract", complex=_OWN)(lambda op, dy: (dy, em.negative(dy)))
reg("negative", complex=_OWN)(lambda op, dy: em.negative(dy))
reg("identity", complex=_OWN)(lambda op, dy: dy)
reg("stop_gradient", complex=_OWN)(lambda op, dy: None)
# As TensorFlow: the gradient passes through and is itself checked for NaN and Inf.
reg("check_numerics", complex=_OWN)(lambda op, dy: em.check_numerics(
    dy, "Not a number (NaN) or infinity (Inf) values detected in gradient. "
    + op.attrs["message"]))
# a check on the values, not on their gradient
reg("check_range", complex=_OWN)(lambda op, dy: dy)


@reg("multiply")
def _multiply(op: OpContext, dy: Tensor) -> Gradients:
    # complex: the tape makes these dy * conj(y) and dy * conj(x), and a real operand of a
    # complex product gets the real part
    x, y = op.inputs
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
    # d/dy x**y = x**y log(x): real x > 0 only (0 elsewhere, as TensorFlow); a complex x
    # has its principal log everywhere but at 0
    where_log = em.not_equal(x, 0) if x.dtype.kind == "c" else em.greater(x, 0)
    safe = em.where(where_log, x, em.ones_like(x))
    logx = em.where(where_log, em.log(safe), em.zeros_like(x))
    return gx, em.multiply(dy, em.multiply(out, logx))


@reg("maximum", complex=_OWN)  # a selection: real coefficients
def _maximum(op: OpContext, dy: Tensor) -> Gradients:
    x, y = op.inputs
    m = _mask(em.greater_equal(x, y), dy.dtype)
    return em.multiply(dy, m), em.multiply(dy, em.subtract(1, m))


@reg("minimum", complex=_OWN)
def _minimum(op: OpContext, dy: Tensor) -> Gradients:
    x, y = op.inputs
    m = _mask(em.less_equal(x, y), dy.dtype)
    return em.multiply(dy, m), em.multiply(dy, em.subtract(1, m))


@reg("atan2")
def _atan2(op: OpContext, dy: Tensor) -> Gradients:
    y, x = op.inputs
    d = em.add(em.square(x), em.square(y))
    return em.multiply(dy, em.divide(x, d)), em.negative(em.multiply(dy, em.divide(y, d)))


@reg("abs", complex=_OWN)
def _abs(op: OpContext, dy: Tensor) -> Gradients:
    x = op.inputs[0]
    if x.dtype.kind == "c":  # dy * z / |z| (0 at z = 0), as TensorFlow's ComplexAbs
        r = op.output
        safe = em.where(em.equal(r, 0), em.ones_like(r), r)
        return em.multiply(x, em.cast(em.divide(dy, safe), x.dtype))
    return em.multiply(dy, em.sign(x))


def _none(op: OpContext, dy: Tensor) -> Gradients:
    return None


# Piecewise constant (round of complex: both parts). No gradient at all, as TensorFlow's
# (math_grad.py's Floor, Ceil and Round give None): a source reached only through them gets
# None, or zeros with unconnected_gradients="zero". sign gives zeros, as TensorFlow's.
for _name in ("floor", "ceil", "round"):
    reg(_name, complex=_OWN)(_none)


@reg("sign", complex=_OWN)
def _sign(op: OpContext, dy: Tensor) -> Gradients:
    x = op.inputs[0]
    if x.dtype.kind != "c":
        return em.zeros_like(x)  # piecewise constant
    # sign(z) = z / |z| is not holomorphic: with s = sign(z), r = |z|, ds = (dz - s re(conj(s)
    # dz)) / r, whose adjoint gives (dy - s re(conj(dy) s)) / r (PyTorch's sgn; 0 at z = 0)
    s = op.output
    r = em.abs(x)
    zero = em.equal(r, 0)
    radial = em.cast(em.math.real(em.multiply(em.math.conj(dy), s)), x.dtype)
    g = em.divide(em.subtract(dy, em.multiply(s, radial)),
                  em.cast(em.where(zero, em.ones_like(r), r), x.dtype))
    return em.where(zero, em.zeros_like(g), g)

reg("square")(lambda op, dy: em.multiply(dy, em.multiply(op.inputs[0], 2)))


def _dy_times(dy: Tensor, y: Tensor, coef: Any) -> Tensor:
    """``dy * coef(y)``, and 0 where ``dy`` is 0 even if ``coef(y)`` is inf or NaN, as
    TensorFlow's SqrtGrad, RsqrtGrad and ReciprocalGrad kernels: so the unselected branch
    of ``where(x > 0, sqrt(x), 0)`` adds 0, not NaN, at ``x <= 0``. (log's, divide's and
    pow's gradients have no such guard, in TensorFlow either.) The gradient for ``dy``
    stays ``coef(y)`` wherever that is finite: a second derivative through a zero ``dy``
    (Newton's step at a minimum of ``f(sqrt(x))``) keeps its term. Where the guard acts,
    ``coef`` is taken at 1 instead of ``y``, so a second derivative gets 0 there, not NaN."""
    skip = em.logical_and(em.equal(dy, 0), em.logical_not(em.isfinite(coef(y))))
    c = coef(em.where(skip, em.ones_like(y), y))
    return em.multiply(dy, em.where(skip, 0, c))


reg("sqrt")(lambda op, dy: _dy_times(dy, op.output, lambda y: em.divide(0.5, y)))
reg("rsqrt")(lambda op, dy: _dy_times(dy, op.output,
                                      lambda y: em.multiply(em.pow(y, 3), -0.5)))
reg("reciprocal")(lambda op, dy: _dy_times(dy, op.output,
                                           lambda y: em.negative(em.square(y))))
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
# real only: the forward is a real approximation (for complex input it reads the real part)
reg("erf", complex="real")(lambda op, dy: em.multiply(
    dy, em.multiply(em.exp(em.negative(em.square(op.inputs[0]))), _TWO_OVER_SQRT_PI)))


@reg("cast", complex=_OWN)
def _cast(op: OpContext, dy: Tensor) -> Gradients:
    # As TensorFlow: a gradient only between floating dtypes; casting to or from an
    # integer or bool has none.
    x = op.inputs[0]
    if not (is_differentiable(x.dtype) and is_differentiable(op.output.dtype)):
        return None
    if dy.dtype.kind == "c" and x.dtype.kind != "c":  # real -> complex: the real part
        dy = em.math.real(dy)
    return em.cast(dy, x.dtype)


@reg("where", complex=_OWN)
def _where(op: OpContext, dy: Tensor) -> Gradients:
    c = op.inputs[0]
    z = em.zeros_like(dy)
    return None, em.where(c, dy, z), em.where(c, z, dy)


# --- complex numbers and their parts (core's _ops/math_complex) ----------------------------
# The gradient of a real loss with respect to z is dL/d re(z) + i dL/d im(z).
@reg("complex", complex=_OWN)
def _complex(op: OpContext, dy: Tensor) -> Gradients:
    re, im = op.inputs
    return em.cast(em.math.real(dy), re.dtype), em.cast(em.math.imag(dy), im.dtype)


@reg("real", complex=_OWN)
def _real(op: OpContext, dy: Tensor) -> Gradients:
    return em.complex(dy, em.zeros_like(dy))


@reg("imag", complex=_OWN)
def _imag(op: OpContext, dy: Tensor) -> Gradients:
    return em.complex(em.zeros_like(dy), dy)


reg("conj", complex=_OWN)(lambda op, dy: em.math.conj(dy))

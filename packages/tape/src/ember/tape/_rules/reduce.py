"""Gradients of reductions.

Complex tensors: sums, means and selections have real coefficients, so their rules are
right for complex tensors as they are (OWN); ``reduce_prod``'s is holomorphic."""

from __future__ import annotations

import ember.core as em
from ember.core import REGISTRY, Tensor
from ember.core.extend import array_of, run_op

from . import OWN, Gradients, OpContext
from . import register_gradient as reg


def _kept(op: OpContext, t: Tensor) -> Tensor:
    """``t`` (a reduced result) reshaped as if reduced with keepdims=True."""
    x = op.inputs[0]
    if op.attrs["keepdims"]:
        return t
    axis = op.attrs["axis"]
    shape = tuple(1 if axis is None or i in axis else d for i, d in enumerate(x.shape))
    return em.reshape(t, shape)


def _count(op: OpContext) -> int:
    x = op.inputs[0]
    axis = op.attrs["axis"]
    n = 1
    for i, d in enumerate(x.shape):
        if axis is None or i in axis:
            n *= d
    return n


_BROADCAST = REGISTRY["broadcast_to"]


def _spread(op: OpContext, dy: Tensor) -> Gradients:
    """``dy`` broadcast back over the reduced axes (a 0-d dy broadcasts as it is)."""
    g = dy if array_of(dy).ndim == 0 else _kept(op, dy)
    return run_op(_BROADCAST, (g,), {"shape": tuple(array_of(op.inputs[0]).shape)})


@reg("reduce_sum", complex=OWN)
def _sum(op: OpContext, dy: Tensor) -> Gradients:
    return _spread(op, dy)


@reg("reduce_mean", complex=OWN)
def _mean(op: OpContext, dy: Tensor) -> Gradients:
    return _spread(op, em.divide(dy, max(_count(op), 1)))


def _extremum(op: OpContext, dy: Tensor) -> Gradients:
    # ties share the gradient; one input-sized result and a bool mask (max-pooling's
    # gradient: no float mask, no input-sized quotient)
    x = op.inputs[0]
    mask = em.equal(x, _kept(op, op.output))
    ties = em.cast(em.reduce_sum(mask, op.attrs["axis"], keepdims=True), dy.dtype)
    return em.where(mask, em.divide(_kept(op, dy), ties), 0)


reg("reduce_max", complex=OWN)(_extremum)  # a selection: real coefficients
reg("reduce_min", complex=OWN)(_extremum)


@reg("reduce_prod")
def _prod(op: OpContext, dy: Tensor) -> Gradients:
    # prod / x, written so that a single zero still gets the product of the others.
    x = op.inputs[0]
    axis = op.attrs["axis"]
    nonzero = em.where(em.equal(x, 0), em.ones_like(x), x)
    zeros = em.reduce_sum(em.cast(em.equal(x, 0), x.dtype), axis, keepdims=True)
    p_nz = em.reduce_prod(nonzero, axis, keepdims=True)
    others = em.where(em.equal(x, 0),
                      em.where(em.equal(zeros, 1), p_nz, em.zeros_like(p_nz)),
                      em.where(em.equal(zeros, 0), em.divide(p_nz, nonzero), em.zeros_like(x)))
    return em.multiply(_kept(op, dy), others)


@reg("cumsum", complex=OWN)
def _cumsum(op: OpContext, dy: Tensor) -> Gradients:
    a = op.attrs
    return em.cumsum(dy, a["axis"], exclusive=a["exclusive"], reverse=not a["reverse"])

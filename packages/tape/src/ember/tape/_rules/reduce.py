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


def _shifted(x: Tensor, axis: int, k: int, reverse: bool) -> Tensor:
    """``x`` moved ``k`` places along ``axis`` (towards its end; its start if ``reverse``),
    the ``k`` places it leaves filled with ones."""
    n = x.shape[axis]
    begin = [0] * x.ndim
    size = list(x.shape)
    size[axis] = n - k
    if reverse:
        begin[axis] = k
    pads = [[0, 0] for _ in range(x.ndim)]
    pads[axis][1 if reverse else 0] = k
    return em.pad(em.slice(x, begin, size), pads, constant_values=1)


def _exclusive_products(x: Tensor, axis: int, reverse: bool) -> Tensor:
    """The product of the entries before each entry along ``axis`` (after it if
    ``reverse``): TensorFlow's exclusive cumprod, by doubling (log2(n) products of
    ordinary ops, so higher derivatives come free). Products, not a quotient: infinities
    and zeros give what multiplying the other entries gives."""
    n = x.shape[axis]
    p = _shifted(x, axis, 1, reverse)
    k = 1
    while k < n:
        p = em.multiply(p, _shifted(p, axis, k, reverse))
        k *= 2
    return p


@reg("reduce_prod")
def _prod(op: OpContext, dy: Tensor) -> Gradients:
    # The product of the other entries, as TensorFlow's ProdGrad: exclusive products from
    # the left times those from the right over the reduced axes (flattened into one), not
    # prod / x (which a zero, an infinity or a NaN would spoil).
    x = op.inputs[0]
    axis = op.attrs["axis"]
    nd = x.ndim
    red = tuple(range(nd)) if axis is None else tuple(sorted(a % max(nd, 1) for a in axis))
    if not red or x.size == 0:
        others = em.ones_like(x)
    elif len(red) == 1:
        others = em.multiply(_exclusive_products(x, red[0], False),
                             _exclusive_products(x, red[0], True))
    else:
        rest = tuple(i for i in range(nd) if i not in red)
        perm = red + rest
        xt = em.transpose(x, perm)
        flat = em.reshape(xt, (-1,) + tuple(xt.shape[len(red):]))
        o = em.multiply(_exclusive_products(flat, 0, False), _exclusive_products(flat, 0, True))
        inverse = [0] * nd
        for i, a in enumerate(perm):
            inverse[a] = i
        others = em.transpose(em.reshape(o, xt.shape), inverse)
    return em.multiply(_kept(op, dy), others)


@reg("cumsum", complex=OWN)
def _cumsum(op: OpContext, dy: Tensor) -> Gradients:
    a = op.attrs
    return em.cumsum(dy, a["axis"], exclusive=a["exclusive"], reverse=not a["reverse"])

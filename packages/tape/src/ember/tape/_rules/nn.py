"""Gradients of the primitive nn ops (forwards in ember-core's ``_ops/define_nn``)."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import MISSING_AS_NONE, Gradients, OpContext
from . import register_gradient as reg

# one pass over a bool mask: no float copy of the mask, no second product
# (read from the output, x > 0 where relu(x) > 0: the tape need not keep the input)
reg("relu")(lambda op, dy: em.where(em.greater(op.output, 0), dy, 0))


@reg("sparse_softmax_xent")
def _sparse_xent(op: OpContext, dy: Any) -> Gradients:
    """d(logits) = dloss * (softmax - onehot(labels)), from the saved softmax; a gradient
    reaching the softmax output (second order) adds its Jacobian product p * (dp - <dp, p>).
    Examples whose label is out of range (possible only off the host, where labels are not
    checked) get no gradient, as their NaN loss comes from no logit."""
    dloss, dp = dy
    labels = op.inputs[1]
    p = op.outputs[1]
    g = None
    if dloss is not None:
        onehot = em.one_hot(labels, p.shape[-1], dtype=p.dtype)
        g = em.multiply(em.expand_dims(dloss, -1), em.subtract(p, onehot))
    if dp is not None:
        dot = em.reduce_sum(em.multiply(dp, p), -1, keepdims=True)
        jp = em.multiply(p, em.subtract(dp, dot))
        g = jp if g is None else em.add(g, jp)
    if g is not None and labels.device != "/cpu:0":
        ok = em.logical_and(em.greater_equal(labels, 0), em.less(labels, p.shape[-1]))
        g = em.where(em.expand_dims(ok, -1), g, em.zeros_like(g))
    return g, None


MISSING_AS_NONE.add("sparse_softmax_xent")

"""Gradients of the primitive nn activations (forwards in ember-core's ``_ops/define_nn``)."""

from __future__ import annotations

import ember.core as em

from . import register_gradient as reg

# one pass over a bool mask: no float copy of the mask, no second product
# (read from the output, x > 0 where relu(x) > 0: the tape need not keep the input)
reg("relu")(lambda op, dy: em.where(em.greater(op.output, 0), dy, 0))

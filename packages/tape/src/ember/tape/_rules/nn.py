"""Gradients of the primitive nn activations (forwards in ember-core's ``_ops/define_nn``)."""

from __future__ import annotations

import ember.core as em

from . import register_gradient as reg

# one pass over a bool mask: no float copy of the mask, no second product
reg("relu")(lambda op, dy: em.where(em.greater(op.inputs[0], 0), dy, 0))

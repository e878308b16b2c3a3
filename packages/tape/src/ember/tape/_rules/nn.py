"""Gradients of the primitive nn activations (forwards in ember-core's ``_ops/define_nn``)."""

from __future__ import annotations

import ember.core as em

from . import register_gradient as reg

reg("relu")(lambda op, dy: em.multiply(dy, em.cast(em.greater(op.inputs[0], 0), dy.dtype)))

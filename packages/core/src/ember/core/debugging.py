"""Debugging helpers, as ``tf.debugging``.

Examples:
    >>> import ember.core as em
    >>> em.debugging.check_numerics(em.constant(1.0), "loss")
    ember.Tensor(1.0, shape=(), dtype=float32)
"""

from __future__ import annotations

from ._ops.math import check_indices, check_numerics, check_range

__all__ = ["check_indices", "check_numerics", "check_range"]

"""Primitive nn activations registered as ops (for speed: one op instead of a composite)."""

from __future__ import annotations

from ._define import unary

relu = unary("relu", lambda be, x: be.xp.maximum(x, 0), "nn", "max(x, 0), element-wise.",
             cuda="({0} > 0 || isnan({0})) ? {0} : 0")

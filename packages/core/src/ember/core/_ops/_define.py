"""Small factories that register an op and build its public function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._registry import execute, register

_F32 = np.dtype(np.float32)


def to_float(x: Any) -> Any:
    """Integer and bool operands of float-only functions compute in float32 (as PyTorch)."""
    return x.astype(_F32) if x.dtype.kind in "biu" else x


def unary(name: str, forward: Callable[..., Any], family: str, doc: str,
          differentiable: bool = True) -> Callable[..., Any]:
    op = register(name, forward, family=family, differentiable=differentiable)

    def fn(x: Any, name: str | None = None) -> Any:
        return execute(op, (x,))

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = doc
    return fn


def binary(name: str, forward: Callable[..., Any], family: str, doc: str,
           differentiable: bool = True) -> Callable[..., Any]:
    op = register(name, forward, family=family, differentiable=differentiable)

    def fn(x: Any, y: Any, name: str | None = None) -> Any:
        return execute(op, (x, y))

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = doc
    return fn

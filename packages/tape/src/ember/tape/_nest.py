"""Flattening and re-packing nested lists, tuples and dicts of tensors."""

from __future__ import annotations

from typing import Any


def flatten(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in flatten(e)]
    return [x]


def pack_as(structure: Any, flat: list[Any]) -> Any:
    return _build(structure, iter(flat))


def _build(s: Any, it: Any) -> Any:
    """``structure`` rebuilt from ``it``. A module-level function, not a closure that calls
    itself: such a closure is a reference cycle that held ``flat`` (a step's gradients)
    until the garbage collector ran, about every 40 steps of an MLP: 1 MB more heap a step,
    each page of it faulted in fresh."""
    if isinstance(s, dict):
        return {k: _build(s[k], it) for k in sorted(s)}
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return type(s)(*[_build(e, it) for e in s])
    if isinstance(s, (list, tuple)):
        return type(s)(_build(e, it) for e in s)
    return next(it)

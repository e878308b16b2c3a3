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
    it = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(e) for e in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(e) for e in s)
        return next(it)

    return build(structure)

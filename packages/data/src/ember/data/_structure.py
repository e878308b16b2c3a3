"""Nested element structures: tuples, namedtuples and dicts of leaves (arrays or scalars)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def is_nested(x: Any) -> bool:
    return isinstance(x, (tuple, dict))


def flatten(x: Any) -> list:
    """Leaves of ``x`` in a fixed order (tuple order; dict insertion order)."""
    if isinstance(x, tuple):
        return [leaf for item in x for leaf in flatten(item)]
    if isinstance(x, dict):
        return [leaf for item in x.values() for leaf in flatten(item)]
    return [x]


def pack_as(structure: Any, leaves: list) -> Any:
    """Inverse of ``flatten``: rebuild ``structure`` with ``leaves`` in place."""
    it = iter(leaves)
    out = _pack(structure, it)
    return out


def _pack(structure: Any, it) -> Any:
    if isinstance(structure, tuple):
        items = [_pack(s, it) for s in structure]
        if hasattr(structure, "_fields"):  # namedtuple
            return type(structure)(*items)
        return tuple(items)
    if isinstance(structure, dict):
        return {k: _pack(v, it) for k, v in structure.items()}
    return next(it)


def map_structure(fn, x: Any) -> Any:
    return pack_as(x, [fn(leaf) for leaf in flatten(x)])


def to_array(x: Any) -> np.ndarray:
    """A leaf as a numpy array; bytes and str become 0-d object arrays (no NUL stripping).
    Python numbers (and lists of them) take TensorFlow's dtypes, not numpy's: a float is
    float32 and an int int32 (int64 if it does not fit), where numpy makes float64 and
    int64 (a float64 pipeline nobody asked for, and a model computing in it)."""
    if isinstance(x, (bytes, str)):
        return np.array(x, dtype=object)
    a = np.asarray(x)
    if a.dtype.kind in "fi" and a.dtype.itemsize == 8 and _python_numbers(x):
        if a.dtype.kind == "f":
            return a.astype(np.float32)
        if a.size == 0 or (a.min() >= -2**31 and a.max() < 2**31):
            return a.astype(np.int32)
    return a


def _python_numbers(x: Any) -> bool:
    """Whether ``x`` is a Python int or float, or a (nested) list of them (not numpy's)."""
    t = type(x)
    if t is int or t is float:
        return True
    if t is list:
        return all(_python_numbers(v) for v in x)
    return False


@dataclass(frozen=True)
class TensorSpec:
    """Shape (``None`` where unknown) and dtype of one leaf of a dataset element."""

    shape: tuple | None  # None: not even the rank is known
    dtype: np.dtype

    def is_compatible_with(self, value: Any) -> bool:
        arr = to_array(value)
        if self.shape is None:
            return True
        if len(arr.shape) != len(self.shape):
            return False
        return all(s is None or s == d for s, d in zip(self.shape, arr.shape))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype={np.dtype(self.dtype).name})"


def spec_of(value: Any) -> Any:
    """The element spec of one concrete element."""

    def leaf(x):
        arr = to_array(x)
        return TensorSpec(tuple(arr.shape), arr.dtype)

    return map_structure(leaf, value)


def batched_spec(spec: Any, batch_size: int | None) -> Any:
    return map_structure(lambda s: TensorSpec((batch_size, *s.shape), s.dtype), spec)


def unbatched_spec(spec: Any) -> Any:
    return map_structure(lambda s: TensorSpec(tuple(s.shape[1:]), s.dtype), spec)

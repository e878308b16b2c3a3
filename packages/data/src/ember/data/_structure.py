"""Nested element structures: tuples, namedtuples and dicts of leaves (arrays or scalars)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def is_nested(x: Any) -> bool:
    return isinstance(x, (tuple, dict))


def dict_keys(d: dict) -> list:
    """``d``'s keys in the order its values are flattened: sorted, as TensorFlow's ``nest``
    sorts them, so that two dicts with the same keys flatten alike whatever order they
    were written in (a dict of padded shapes, an element a map builds in another order).
    Keys that do not sort together (mixed types) sort by type name and ``repr``."""
    try:
        return sorted(d)
    except TypeError:
        return sorted(d, key=lambda k: (type(k).__name__, repr(k)))


def flatten(x: Any) -> list:
    """Leaves of ``x`` in a fixed order (tuple order; dicts by sorted key)."""
    if isinstance(x, tuple):
        return [leaf for item in x for leaf in flatten(item)]
    if isinstance(x, dict):
        return [leaf for k in dict_keys(x) for leaf in flatten(x[k])]
    return [x]


def pack_as(structure: Any, leaves: list) -> Any:
    """Inverse of ``flatten``: rebuild ``structure`` with ``leaves`` in place (a dict keeps
    ``structure``'s order of keys)."""
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
        values = {k: _pack(structure[k], it) for k in dict_keys(structure)}
        return {k: values[k] for k in structure}
    return next(it)


def describe(x: Any) -> str:
    """``x``'s nesting for messages: ``(*, {'a': *})``."""
    if isinstance(x, tuple):
        return "(" + ", ".join(describe(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {describe(x[k])}" for k in dict_keys(x)) + "}"
    return "*"


def same_structure(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` nest alike (tuples of one length, dicts of one set of keys)."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(
            same_structure(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            same_structure(a[k], b[k]) for k in a)
    return not isinstance(b, (tuple, dict))


def flatten_up_to(shallow: Any, value: Any, what: str) -> list:
    """The parts of ``value`` at the leaves of ``shallow`` (TensorFlow's
    ``nest.flatten_up_to``): tuples (or lists) matched by position, dicts by key, never by
    the order their keys were written in. ``what`` names the caller in errors."""
    if isinstance(shallow, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(shallow):
            raise ValueError(f"{what}: the elements have the structure {describe(shallow)}, "
                             f"got {value!r}")
        return [leaf for s, v in zip(shallow, value) for leaf in flatten_up_to(s, v, what)]
    if isinstance(shallow, dict):
        if not isinstance(value, dict) or set(value) != set(shallow):
            got = sorted(map(repr, value)) if isinstance(value, dict) else repr(value)
            raise ValueError(f"{what}: the elements are dicts with keys "
                             f"{sorted(map(repr, shallow))}, got {got}")
        return [leaf for k in dict_keys(shallow)
                for leaf in flatten_up_to(shallow[k], value[k], what)]
    return [value]


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


@dataclass(frozen=True)
class DatasetSpec:
    """The spec of a leaf that is itself a dataset (``window``'s elements): the nested
    ``TensorSpec`` of its elements, as TensorFlow's ``tf.data.DatasetSpec``."""

    element_spec: Any
    dataset_shape: tuple = ()

    def is_compatible_with(self, value: Any) -> bool:
        from ._dataset import Dataset

        return isinstance(value, Dataset)

    def __repr__(self) -> str:
        return f"DatasetSpec({self.element_spec!r}, {self.dataset_shape})"


def is_string_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` holds strings: numpy's ``str_`` and ``bytes_`` arrays, and the
    object arrays a ``str`` or ``bytes`` leaf becomes (``to_array``). Their widths are
    not part of a string spec: one string dtype, as TensorFlow's ``tf.string``."""
    return np.dtype(dtype).kind in "USO"


def same_dtype(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are one dtype, or both strings of any width."""
    a, b = np.dtype(a), np.dtype(b)
    return a == b or (is_string_dtype(a) and is_string_dtype(b))


def merge_dtype(a: Any, b: Any) -> np.dtype:
    """The dtype holding both (``same_dtype``): the wider of two string dtypes of one
    kind, else object."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    if a.kind == b.kind and a.kind in "US":
        return a if a.itemsize >= b.itemsize else b
    return np.dtype(object)


def merge_shape(a: tuple | None, b: tuple | None) -> tuple | None:
    """The shape admitting both: ``None`` where the sizes differ, and for the whole shape
    where the ranks do."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def merge_specs(a: Any, b: Any) -> Any:
    """The spec admitting the elements of both ``a`` and ``b`` (specs of one structure and
    of the same dtypes, ``same_dtype``)."""

    def leaf(x, y):
        if isinstance(x, DatasetSpec) and isinstance(y, DatasetSpec):
            return DatasetSpec(merge_specs(x.element_spec, y.element_spec),
                               merge_shape(x.dataset_shape, y.dataset_shape) or ())
        if x == y:
            return x
        return TensorSpec(merge_shape(x.shape, y.shape), merge_dtype(x.dtype, y.dtype))

    return pack_as(a, [leaf(x, y) for x, y in zip(flatten(a), flatten(b), strict=True)])


def specs_compatible(a: Any, b: Any) -> bool:
    """Whether elements of specs ``a`` and ``b`` may be mixed in one dataset: the same
    structure and dtypes (TensorFlow refuses ``concatenate`` and the choosing datasets of
    others: "Incompatible dataset elements")."""
    if not same_structure(a, b):
        return False
    for x, y in zip(flatten(a), flatten(b)):
        if isinstance(x, DatasetSpec) or isinstance(y, DatasetSpec):
            if not (isinstance(x, DatasetSpec) and isinstance(y, DatasetSpec)
                    and specs_compatible(x.element_spec, y.element_spec)):
                return False
        elif not same_dtype(x.dtype, y.dtype):
            return False
    return True


def leaf_spec(x: Any) -> Any:
    """The spec of one leaf of an element: a ``DatasetSpec`` for a dataset."""
    from ._dataset import Dataset

    if isinstance(x, Dataset):
        return DatasetSpec(x.element_spec)
    arr = to_array(x)
    return TensorSpec(tuple(arr.shape), arr.dtype)


def prototype(spec: Any) -> Any:
    """An element made from ``spec``, to learn what a function makes of the elements of a
    dataset that has none (TensorFlow traces such a function on the spec): zeros (empty
    strings) with each unknown size 1, an empty dataset for a ``DatasetSpec``.
    ``ValueError`` where a rank is unknown."""

    def leaf(s):
        if isinstance(s, DatasetSpec):
            from ._sources import ListDataset

            return ListDataset([], spec=s.element_spec)
        if s.shape is None:
            raise ValueError(f"no element can be made for {s}: its rank is unknown")
        shape = tuple(1 if n is None else n for n in s.shape)
        dtype = np.dtype(s.dtype)
        arr = np.full(shape, "", dtype) if dtype.kind == "O" else np.zeros(shape, dtype)
        return arr[()] if arr.ndim == 0 else arr

    return map_structure(leaf, spec)


def spec_of(value: Any) -> Any:
    """The element spec of one concrete element."""
    return map_structure(leaf_spec, value)


def batched_spec(spec: Any, batch_size: int | None) -> Any:
    return map_structure(lambda s: TensorSpec(
        None if s.shape is None else (batch_size, *s.shape), s.dtype), spec)


def unbatched_spec(spec: Any) -> Any:
    return map_structure(lambda s: TensorSpec(
        None if s.shape is None else tuple(s.shape[1:]), s.dtype), spec)

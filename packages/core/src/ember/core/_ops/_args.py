"""Argument normalisation shared by the op families (axes, shapes, tensors)."""

from __future__ import annotations

from typing import Any

from .._errors import InvalidArgumentError
from .._tensor import Tensor, as_tensor


def tensor(x: Any) -> Tensor:
    return x if type(x) is Tensor else as_tensor(x)


def axes(op: str, axis: Any, ndim: int) -> tuple[int, ...] | None:
    """``axis`` (None, int, sequence, tensor) as a sorted tuple of non-negative ints."""
    if axis is None:
        return None
    if hasattr(axis, "numpy"):
        axis = axis.numpy().tolist()
    seq = [axis] if isinstance(axis, int) or not hasattr(axis, "__iter__") else list(axis)
    out = []
    for a in seq:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise InvalidArgumentError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise InvalidArgumentError(f"{op}: repeated axis in {axis!r}")
    return tuple(sorted(out))


def axis1(op: str, axis: Any, ndim: int) -> int:
    a = int(axis)
    if not -ndim <= a < ndim:
        raise InvalidArgumentError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
    return a % ndim


def shape(op: str, s: Any) -> tuple[int, ...]:
    """A shape argument (list, tuple, tensor, int) as a tuple of ints."""
    if hasattr(s, "numpy"):
        s = s.numpy().tolist()
    if isinstance(s, int) or (hasattr(s, "__index__") and not hasattr(s, "__len__")):
        return (int(s),)
    try:
        return tuple(int(d) for d in s)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"{op}: {s!r} is not a shape") from e


def one_spelling(op: str, new: str, new_value: Any, old: str, old_value: Any) -> Any:
    """The value of an argument that TensorFlow 1.x spelled ``old`` (e.g. ``keep_dims``)."""
    if old_value is None:
        return new_value
    if new_value is not None:
        raise InvalidArgumentError(f"{op}: give {new}= or its TF 1.x spelling {old}=, not both")
    return old_value


def tf1_spellings(op: str, axis: Any, reduction_indices: Any, keepdims: Any,
                  keep_dims: Any) -> tuple[Any, bool]:
    """``axis`` and ``keepdims`` of a reduction, from either TensorFlow spelling."""
    if reduction_indices is None and keep_dims is None:  # TF 2's spelling: every loss
        return axis, bool(keepdims)
    axis = one_spelling(op, "axis", axis, "reduction_indices", reduction_indices)
    keepdims = one_spelling(op, "keepdims", keepdims, "keep_dims", keep_dims)
    return axis, bool(keepdims)

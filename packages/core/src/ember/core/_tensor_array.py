"""``em.TensorArray``: TensorFlow's array of tensors, one per step of a loop.

In eager execution a TensorArray is a Python list of tensors, as TensorFlow's eager
implementation is: ``write`` stores, ``read`` returns what was stored, and ``stack`` /
``concat`` / ``gather`` are ordinary ops, so a tape differentiates through them and
``graph.function`` traces them like any other op. ``write`` returns the array itself
(TensorFlow's returns a new handle to the same storage), so ``ta = ta.write(i, x)`` works
as written for TensorFlow.

Examples:
    >>> import ember.core as em
    >>> ta = em.TensorArray(em.float32, size=2)
    >>> ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0])
    >>> ta.stack()
    ember.Tensor([[1. 2.]
     [3. 4.]], shape=(2, 2), dtype=float32)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from ._dtypes import as_dtype
from ._errors import DTypeError, InvalidArgumentError
from ._ops.array import concat, split, stack, unstack
from ._ops.creation import constant, convert_to_tensor, zeros
from ._registry import IndexOutOfRangeError
from ._tensor import Tensor

Shape = tuple[int | None, ...] | None  # None: rank unknown; a None entry: size unknown


def _as_shape(shape: Any) -> Shape:
    if shape is None:
        return None
    dims = getattr(shape, "dims", shape)  # a TensorShape-like object, or a sequence
    if dims is None:
        return None
    return tuple(None if d is None else operator.index(d) for d in dims)


def _merge(have: Shape, new: tuple[int, ...]) -> Shape | bool:
    """``have`` refined by ``new``, or False when they are incompatible."""
    if have is None:
        return new
    if len(have) != len(new) or any(h is not None and h != n for h, n in zip(have, new)):
        return False
    return new


def _index(i: Any, what: str) -> int:
    """A Python int from an int or a scalar integer tensor (read on the host, as TF's
    eager TensorArray does: under ``graph.function`` the read is a guard)."""
    if isinstance(i, Tensor):
        if i.shape != () or i.dtype.kind not in "iu":
            raise InvalidArgumentError(f"TensorArray.{what}: the index must be a scalar "
                                       f"integer, got a {i.dtype.name} tensor of shape "
                                       f"{i.shape}")
        return int(i)
    try:
        return operator.index(i)
    except TypeError:
        raise InvalidArgumentError(f"TensorArray.{what}: the index must be an integer, got "
                                   f"{type(i).__name__}") from None


class TensorArray:
    """A list of tensors of one dtype (and, with ``infer_shape``, one shape), written one
    index at a time and read back one by one or all at once.

    Args:
        dtype: The elements' dtype; a written value of another dtype is refused.
        size: How many elements (an int or a scalar integer tensor). Required unless
            ``dynamic_size``.
        dynamic_size: If True, writes past the end grow the array (default False: they
            raise ``IndexOutOfRangeError``).
        clear_after_read: If True (the default), reading an element clears it: a second
            read of it raises, as TensorFlow's (False allows reading many times).
        tensor_array_name: The array's name (``name`` where both are given).
        infer_shape: If True (the default), every element must have the shape of the
            first one written (merged with ``element_shape``).
        element_shape: The elements' shape, where known: elements never written read as
            zeros of it, and written values must fit it.
        name: Accepted for TensorFlow compatibility.

    ``colocate_with_first_write_call`` (graph-mode placement) is not taken: the elements
    stay on the devices they were made on.

    Raises:
        TypeError: ``handle``/``flow`` (graph-mode TensorFlow) were given.
    """

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: bool | None = None,
                 clear_after_read: bool | None = None, tensor_array_name: str | None = None,
                 handle: Any = None, flow: Any = None, infer_shape: bool = True,
                 element_shape: Any = None, name: str | None = None) -> None:
        if handle is not None or flow is not None:
            raise TypeError("TensorArray: handle and flow are graph-mode TensorFlow's; "
                            "ember's TensorArray holds its tensors itself")
        self._dtype = as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        if size is None:
            if not self._dynamic_size:
                raise InvalidArgumentError("TensorArray: give size, or dynamic_size=True")
            size = 0
        n = _index(size, "__init__")
        if n < 0:
            raise InvalidArgumentError(f"TensorArray: size must be >= 0, got {n}")
        self._items: list[Tensor | None] = [None] * n
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._read: set[int] = set()
        self._infer_shape = bool(infer_shape)
        self._element_shape = _as_shape(element_shape)
        self.name = name if name is not None else tensor_array_name

    # --- properties --------------------------------------------------------------------
    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def element_shape(self) -> Shape:
        """The elements' shape as far as it is known (None: not known at all)."""
        return self._element_shape

    def size(self, name: str | None = None) -> Tensor:
        """How many elements the array holds, as an int32 scalar tensor."""
        return constant(len(self._items), dtype="int32")

    def identity(self) -> TensorArray:
        return self

    def close(self, name: str | None = None) -> None:
        """Drop every element (the array has size 0 afterwards)."""
        self._items.clear()
        self._read.clear()

    # --- writing -----------------------------------------------------------------------
    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """Store ``value`` at ``index``; returns this array (``ta = ta.write(i, x)``)."""
        self._write(_index(index, "write"), value)
        return self

    def _write(self, i: int, value: Any) -> None:
        if i < 0:
            raise IndexOutOfRangeError(f"TensorArray.write: index {i} is negative")
        if i >= len(self._items):
            if not self._dynamic_size:
                raise IndexOutOfRangeError(
                    f"TensorArray.write: index {i} is past the end of an array of size "
                    f"{len(self._items)} (make it with dynamic_size=True to grow it)")
            self._items.extend([None] * (i + 1 - len(self._items)))
        if isinstance(value, Tensor):
            if value.dtype != self._dtype:
                raise DTypeError(f"TensorArray.write: the array holds {self._dtype.name}, "
                                 f"the value at index {i} is {value.dtype.name}")
        else:
            value = convert_to_tensor(value, dtype=self._dtype)
        if self._infer_shape or self._element_shape is not None:
            merged = _merge(self._element_shape, tuple(value.shape))
            if merged is False:
                raise InvalidArgumentError(
                    f"TensorArray.write: the value at index {i} has shape {tuple(value.shape)}"
                    f", the array's elements have shape {self._element_shape}")
            if self._infer_shape:
                self._element_shape = merged  # type: ignore[assignment]
        self._items[i] = value
        self._read.discard(i)

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """Store the slices of ``value`` along its first axis as the elements."""
        parts = unstack(convert_to_tensor(value, dtype=self._dtype))
        if len(parts) > len(self._items) and not self._dynamic_size:
            raise IndexOutOfRangeError(f"TensorArray.unstack: {len(parts)} slices do not fit "
                                       f"an array of size {len(self._items)}")
        for i, part in enumerate(parts):
            self._write(i, part)
        return self

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """Store the slices of ``value`` along its first axis at ``indices``."""
        idx = [_index(i, "scatter") for i in _as_list(indices)]
        parts = unstack(convert_to_tensor(value, dtype=self._dtype))
        if len(parts) != len(idx):
            raise InvalidArgumentError(f"TensorArray.scatter: {len(idx)} indices for "
                                       f"{len(parts)} slices of value")
        for i, part in zip(idx, parts):
            self._write(i, part)
        return self

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """Store consecutive pieces of ``value`` (along its first axis) of ``lengths``."""
        value = convert_to_tensor(value, dtype=self._dtype)
        sizes = [_index(n, "split") for n in _as_list(lengths)]
        if sum(sizes) != value.shape[0]:
            raise InvalidArgumentError(f"TensorArray.split: lengths {sizes} add up to "
                                       f"{sum(sizes)}, value has {value.shape[0]} rows")
        parts = split(value, sizes) if sizes else []
        if len(parts) > len(self._items) and not self._dynamic_size:
            raise IndexOutOfRangeError(f"TensorArray.split: {len(parts)} pieces do not fit "
                                       f"an array of size {len(self._items)}")
        for i, part in enumerate(parts):
            self._write(i, part)
        return self

    # --- reading -----------------------------------------------------------------------
    def read(self, index: Any, name: str | None = None) -> Tensor:
        """The element at ``index`` (zeros of ``element_shape`` if never written)."""
        i = _index(index, "read")
        if not 0 <= i < len(self._items):
            raise IndexOutOfRangeError(f"TensorArray.read: index {i} is outside an array of "
                                       f"size {len(self._items)}")
        value = self._element(i, "read")
        if self._clear_after_read:
            self._items[i] = None
            self._read.add(i)
        return value

    def _element(self, i: int, what: str) -> Tensor:
        value = self._items[i]
        if value is not None:
            return value
        if i in self._read:
            raise InvalidArgumentError(
                f"TensorArray.{what}: index {i} was cleared by an earlier read "
                "(make the array with clear_after_read=False to read it again)")
        shape = self._element_shape
        if shape is None or any(d is None for d in shape):
            raise InvalidArgumentError(
                f"TensorArray.{what}: index {i} was never written, and the element shape "
                f"({shape}) is not fully known, so it cannot read as zeros")
        return zeros(shape, dtype=self._dtype)

    def stack(self, name: str | None = None) -> Tensor:
        """The elements stacked along a new first axis."""
        if not self._items:
            return self._empty()
        return stack([self._element(i, "stack") for i in range(len(self._items))])

    def gather(self, indices: Any, element_shape: Any = None,
               name: str | None = None) -> Tensor:
        """The elements at ``indices`` stacked along a new first axis (each must fit
        ``element_shape``, where given)."""
        idx = [_index(i, "gather") for i in _as_list(indices)]
        want = _as_shape(element_shape)
        for i in idx:
            if not 0 <= i < len(self._items):
                raise IndexOutOfRangeError(f"TensorArray.gather: index {i} is outside an "
                                           f"array of size {len(self._items)}")
        if not idx:
            return self._empty()
        items = [self._element(i, "gather") for i in idx]
        for i, item in zip(idx, items):
            if want is not None and _merge(want, tuple(item.shape)) is False:
                raise InvalidArgumentError(f"TensorArray.gather: element {i} has shape "
                                           f"{tuple(item.shape)}, not element_shape {want}")
        return stack(items)

    def concat(self, name: str | None = None) -> Tensor:
        """The elements joined along their first axis."""
        if not self._items:
            return self._empty()
        return concat([self._element(i, "concat") for i in range(len(self._items))], axis=0)

    def _empty(self) -> Tensor:
        shape = self._element_shape
        if shape is None or any(d is None for d in shape):
            raise InvalidArgumentError("TensorArray: the array is empty and its element shape "
                                       f"({shape}) is not fully known")
        return zeros((0, *shape), dtype=self._dtype)

    def __repr__(self) -> str:
        return (f"TensorArray(dtype={self._dtype.name}, size={len(self._items)}, "
                f"element_shape={self._element_shape})")


def _as_list(x: Any) -> Sequence[Any]:
    if isinstance(x, Tensor):
        return [int(v) for v in x.numpy().reshape(-1)]
    return list(x)

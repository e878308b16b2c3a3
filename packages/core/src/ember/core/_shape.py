"""TensorShape: what ``Tensor.shape`` returns, a tuple of ints with TensorFlow's
``TensorShape`` methods.

It is a ``tuple`` (equal to one, hashed as one, printed as one, accepted wherever numpy
takes a shape), so code written for ember's tuples keeps working, and TensorFlow's
``x.shape.as_list()``, ``x.shape.rank`` and ``x.shape.num_elements()`` work too. Built by
the tuple constructor alone (no ``__new__`` or ``__init__`` in Python): a shape costs what
a tuple of it costs, plus the subclass's allocation. Slicing gives a plain tuple. A shape
made by hand may hold ``None`` for a size not known, as in a ``TensorSpec``.

Examples:
    >>> import ember.core as em
    >>> s = em.zeros((3, 1)).shape
    >>> s, s.as_list(), s.rank, s.num_elements(), s == (3, 1)
    ((3, 1), [3, 1], 2, 3, True)
"""

from __future__ import annotations

import math
from typing import Any


class TensorShape(tuple):  # type: ignore[type-arg]
    """A shape: a tuple of sizes (``None`` for an unknown one, in shapes made by hand)."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        """The number of axes (TensorFlow's ``rank``)."""
        return len(self)

    @property
    def ndims(self) -> int:
        """The number of axes (TensorFlow's older name)."""
        return len(self)

    @property
    def dims(self) -> list[Any]:
        """The sizes, as a list (TensorFlow 2's ``dims``: ints, or None where unknown)."""
        return list(self)

    def as_list(self) -> list[Any]:
        """The sizes as a list of ints (None where unknown)."""
        return list(self)

    def num_elements(self) -> int | None:
        """The number of elements, or None if a size is unknown."""
        return None if None in self else math.prod(self)

    def is_fully_defined(self) -> bool:
        """Whether every size is known (always, for a tensor's own shape)."""
        return None not in self

    def is_compatible_with(self, other: Any) -> bool:
        """Whether ``other`` (a shape, or a list with None for any size) has this rank and
        equal sizes wherever both are known."""
        other = tuple(other)
        return len(other) == len(self) and all(
            a is None or b is None or a == b for a, b in zip(self, other))

    def __repr__(self) -> str:
        return tuple.__repr__(self)

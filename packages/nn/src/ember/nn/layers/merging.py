"""Keras's merging layers: several tensors in, one out (``Add``, ``Concatenate``, ...), and
their functional forms (``add([a, b])``, ``concatenate([a, b])``, ...).

The element-wise ones take inputs of one rank whose dimensions agree or are 1 (then
broadcast, as Keras); any other pair of shapes is an error naming the layer and the
shapes, never a broadcast that invents an axis (``(N,)`` against ``(N, 1)``).
"""

from __future__ import annotations

import functools
from typing import Any

import ember.core as em

from .base import Layer


class _Merge(Layer):
    """A layer of two or more inputs given as a list, combined element-wise by ``_merge``."""

    _arity: int | None = None  # exactly this many inputs (Subtract: 2); None: two or more

    def _check_list(self, inputs: Any) -> None:
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"{name} ({self.name!r}): expects a list of inputs, got one "
                             f"tensor of shape {tuple(getattr(inputs, 'shape', ()))}")
        want = self._arity
        if (want is None and len(inputs) < 2) or (want is not None and len(inputs) != want):
            raise ValueError(f"{name} ({self.name!r}): expects "
                             f"{'at least 2' if want is None else want} inputs, got "
                             f"{len(inputs)}")

    def _check(self, shapes: list[tuple[Any, ...]]) -> None:
        if len({len(s) for s in shapes}) > 1:
            raise ValueError(f"{type(self).__name__} ({self.name!r}): inputs of different "
                             f"ranks {shapes}; reshape them to one rank first")
        for axis, dims in enumerate(zip(*shapes)):
            known = {d for d in dims if d is not None and d != 1}
            if len(known) > 1:
                raise ValueError(f"{type(self).__name__} ({self.name!r}): input shapes "
                                 f"{shapes} differ on axis {axis}")

    def call(self, inputs: Any) -> Any:
        self._check_list(inputs)  # before iterating over it
        tensors = [t if isinstance(t, em.Tensor) else em.convert_to_tensor(t) for t in inputs]
        self._check([tuple(t.shape) for t in tensors])
        return self._merge(tensors)

    def _merge(self, tensors: list[Any]) -> Any:
        raise NotImplementedError


class Add(_Merge):
    """The sum of its inputs (Keras's ``Add``): ``Add()([a, b])``, as ``add([a, b])``.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.Add()([np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)]).numpy()
        array([[2., 2., 2.],
               [2., 2., 2.]], dtype=float32)
    """

    def _merge(self, tensors: list[Any]) -> Any:
        return functools.reduce(em.add, tensors)


class Subtract(_Merge):
    """The first of its two inputs minus the second (Keras's ``Subtract``)."""

    _arity = 2

    def _merge(self, tensors: list[Any]) -> Any:
        return em.subtract(tensors[0], tensors[1])


class Multiply(_Merge):
    """The element-wise product of its inputs (Keras's ``Multiply``)."""

    def _merge(self, tensors: list[Any]) -> Any:
        return functools.reduce(em.multiply, tensors)


class Average(_Merge):
    """The element-wise mean of its inputs (Keras's ``Average``)."""

    def _merge(self, tensors: list[Any]) -> Any:
        return em.divide(functools.reduce(em.add, tensors), float(len(tensors)))


class Maximum(_Merge):
    """The element-wise maximum of its inputs (Keras's ``Maximum``)."""

    def _merge(self, tensors: list[Any]) -> Any:
        return functools.reduce(em.maximum, tensors)


class Minimum(_Merge):
    """The element-wise minimum of its inputs (Keras's ``Minimum``)."""

    def _merge(self, tensors: list[Any]) -> Any:
        return functools.reduce(em.minimum, tensors)


class Concatenate(_Merge):
    """Its inputs joined along ``axis`` (Keras's ``Concatenate``, default the last axis);
    every other dimension must agree.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.Concatenate()([np.ones((2, 3), np.float32), np.zeros((2, 1), np.float32)]).shape
        (2, 4)
    """

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"Concatenate: axis must be an int, got {axis!r}")
        self.axis = axis

    def _check(self, shapes: list[tuple[Any, ...]]) -> None:
        ranks = {len(s) for s in shapes}
        rank = ranks.pop() if len(ranks) == 1 else None
        if rank is None or not -rank <= self.axis < rank:
            raise ValueError(f"Concatenate ({self.name!r}): axis {self.axis} does not fit "
                             f"inputs of shapes {shapes}")
        axis = self.axis % rank
        for i, dims in enumerate(zip(*shapes)):
            known = {d for d in dims if d is not None}
            if i != axis and len(known) > 1:
                raise ValueError(f"Concatenate ({self.name!r}): input shapes {shapes} differ "
                                 f"on axis {i}, not only on the concatenation axis {axis}")

    def _merge(self, tensors: list[Any]) -> Any:
        return em.concat(tensors, axis=self.axis)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axis": self.axis}


class Dot(_Merge):
    """The dot product of two inputs along ``axes``, example by example (Keras's ``Dot``):
    rank-2 inputs ``(N, D)`` give ``(N, 1)``; rank-3 inputs contract one axis each, as
    Keras's ``batch_dot``. ``normalize=True`` divides each input by its L2 norm along
    its axis first (the cosine similarity).

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> a = np.array([[3.0, 4.0]], np.float32)
        >>> nn.layers.Dot(axes=1, normalize=True)([a, a]).numpy()
        array([[1.]], dtype=float32)
    """

    _arity = 2

    def __init__(self, axes: Any, normalize: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        pair = (axes, axes) if isinstance(axes, int) and not isinstance(axes, bool) else axes
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2
                and all(isinstance(a, int) and not isinstance(a, bool) for a in pair)):
            raise TypeError(f"Dot: axes must be an int or a pair of ints, got {axes!r}")
        self.axes = tuple(pair)
        self.normalize = bool(normalize)

    def _check(self, shapes: list[tuple[Any, ...]]) -> None:
        a, b = shapes
        ok = len(a) == len(b) and len(a) in (2, 3)
        if ok:
            i, j = (ax % len(s) for ax, s in zip(self.axes, shapes))
            ok = i != 0 and j != 0 and (a[i] is None or b[j] is None or a[i] == b[j])
        if not ok:
            raise ValueError(f"Dot ({self.name!r}): axes {self.axes} do not fit inputs of "
                             f"shapes {shapes} (rank 2 or 3 each, not the batch axis, equal "
                             f"sizes along the axes)")

    def _merge(self, tensors: list[Any]) -> Any:
        x, y = tensors
        i, j = (ax % t.ndim for ax, t in zip(self.axes, tensors))
        if self.normalize:
            x, y = _l2_normalize(x, i), _l2_normalize(y, j)
        if x.ndim == 2:
            return em.reduce_sum(em.multiply(x, y), axis=1, keepdims=True)
        # (N, ., .) each: the contracted axis last in x and in the middle in y
        return em.matmul(x, y, transpose_a=(i == 1), transpose_b=(j == 2))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axes": list(self.axes), "normalize": self.normalize}


def _l2_normalize(x: Any, axis: int, epsilon: float = 1e-12) -> Any:
    """``x / sqrt(max(sum(x**2, axis), epsilon))``, as TensorFlow's ``l2_normalize``."""
    sq = em.reduce_sum(em.square(x), axis=axis, keepdims=True)
    return em.multiply(x, em.rsqrt(em.maximum(sq, epsilon)))


def _functional(cls: type, doc: str) -> Any:
    def merge(inputs: Any, **kwargs: Any) -> Any:
        return cls(**kwargs)(inputs)

    merge.__name__ = merge.__qualname__ = cls.__name__.lower()
    merge.__doc__ = doc
    return merge


add = _functional(Add, "``Add(**kwargs)(inputs)``: the sum of the inputs (Keras's ``add``).")
subtract = _functional(Subtract, "``Subtract(**kwargs)(inputs)`` (Keras's ``subtract``).")
multiply = _functional(Multiply, "``Multiply(**kwargs)(inputs)`` (Keras's ``multiply``).")
average = _functional(Average, "``Average(**kwargs)(inputs)`` (Keras's ``average``).")
maximum = _functional(Maximum, "``Maximum(**kwargs)(inputs)`` (Keras's ``maximum``).")
minimum = _functional(Minimum, "``Minimum(**kwargs)(inputs)`` (Keras's ``minimum``).")


def concatenate(inputs: Any, axis: int = -1, **kwargs: Any) -> Any:
    """``Concatenate(axis, **kwargs)(inputs)`` (Keras's ``concatenate``)."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs: Any, axes: Any, normalize: bool = False, **kwargs: Any) -> Any:
    """``Dot(axes, normalize, **kwargs)(inputs)`` (Keras's ``dot``)."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)

"""Python operators shared by Tensor and Variable; each calls the op layer.

Tensor sits below the ops in core's layering (the ops make tensors), so its operators call
up into the op modules through the ``_ops`` package, whose ``__init__`` imports nothing:
``_ops.math.add`` is looked up when ``+`` runs, by which time ``ember.core`` (always
imported before any of its submodules) has loaded every op module. No circular import,
nothing bound after import.
"""

from __future__ import annotations

from typing import Any

from . import _ops


class TensorOperators:
    """Element-wise arithmetic, comparison, bitwise, matmul and indexing operators.

    ``==``/``!=`` are element-wise and return bool tensors (``x == None`` is ``False``).
    ``+=`` and friends rebind the name to a new tensor (tensors are immutable).
    """

    __slots__ = ()
    # ndarray <op> tensor defers to the tensor's reflected operator: numpy never wins.
    __array_priority__ = 100

    def __add__(self, o: Any) -> Any: return _ops.math.add(self, o)
    def __radd__(self, o: Any) -> Any: return _ops.math.add(o, self)
    def __sub__(self, o: Any) -> Any: return _ops.math.subtract(self, o)
    def __rsub__(self, o: Any) -> Any: return _ops.math.subtract(o, self)
    def __mul__(self, o: Any) -> Any: return _ops.math.multiply(self, o)
    def __rmul__(self, o: Any) -> Any: return _ops.math.multiply(o, self)
    def __truediv__(self, o: Any) -> Any: return _ops.math.divide(self, o)
    def __rtruediv__(self, o: Any) -> Any: return _ops.math.divide(o, self)
    def __floordiv__(self, o: Any) -> Any: return _ops.math.floordiv(self, o)
    def __rfloordiv__(self, o: Any) -> Any: return _ops.math.floordiv(o, self)
    def __mod__(self, o: Any) -> Any: return _ops.math.floormod(self, o)
    def __rmod__(self, o: Any) -> Any: return _ops.math.floormod(o, self)
    def __pow__(self, o: Any) -> Any: return _ops.math.pow(self, o)
    def __rpow__(self, o: Any) -> Any: return _ops.math.pow(o, self)
    def __matmul__(self, o: Any) -> Any: return _ops.linalg.matmul(self, o)
    def __rmatmul__(self, o: Any) -> Any: return _ops.linalg.matmul(o, self)
    def __neg__(self) -> Any: return _ops.math.negative(self)
    def __pos__(self) -> Any: return self
    def __abs__(self) -> Any: return _ops.math.abs(self)
    def __invert__(self) -> Any: return _ops.math.invert(self)
    def __and__(self, o: Any) -> Any: return _ops.math.bitwise_and(self, o)
    def __rand__(self, o: Any) -> Any: return _ops.math.bitwise_and(o, self)
    def __or__(self, o: Any) -> Any: return _ops.math.bitwise_or(self, o)
    def __ror__(self, o: Any) -> Any: return _ops.math.bitwise_or(o, self)
    def __xor__(self, o: Any) -> Any: return _ops.math.bitwise_xor(self, o)
    def __rxor__(self, o: Any) -> Any: return _ops.math.bitwise_xor(o, self)
    def __lshift__(self, o: Any) -> Any: return _ops.math.left_shift(self, o)
    def __rshift__(self, o: Any) -> Any: return _ops.math.right_shift(self, o)
    def __rlshift__(self, o: Any) -> Any: return _ops.math.left_shift(o, self)
    def __rrshift__(self, o: Any) -> Any: return _ops.math.right_shift(o, self)
    def __lt__(self, o: Any) -> Any: return _ops.math.less(self, o)
    def __le__(self, o: Any) -> Any: return _ops.math.less_equal(self, o)
    def __gt__(self, o: Any) -> Any: return _ops.math.greater(self, o)
    def __ge__(self, o: Any) -> Any: return _ops.math.greater_equal(self, o)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return False if o is None else _ops.math.equal(self, o)

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return True if o is None else _ops.math.not_equal(self, o)

    # Identity hash (as PyTorch): tensors and variables can key dicts and sets.
    def __hash__(self) -> int:
        return id(self)

    def __getitem__(self, key: Any) -> Any:
        return _ops.array.getitem(self, key)

    # TensorFlow's shape methods: an eager tensor's shape is always known
    def get_shape(self) -> tuple[int, ...]:
        """The shape (TensorFlow's ``get_shape``): ``shape``, a ``TensorShape``."""
        return self.shape  # type: ignore[attr-defined,no-any-return]

    def set_shape(self, shape: Any) -> None:
        """TensorFlow's ``set_shape``: an eager tensor's shape is known, so this checks that
        it fits ``shape`` (``None`` for an unknown size or rank) and raises ``ValueError``
        naming both when it does not."""
        have = tuple(self.shape)  # type: ignore[attr-defined]
        want = getattr(shape, "dims", shape)
        if want is None:
            return
        want = tuple(want)
        if len(want) != len(have) or any(w is not None and int(w) != h
                                         for w, h in zip(want, have)):
            raise ValueError(f"set_shape: the tensor's shape {have} is not compatible with "
                             f"the supplied shape {want}")

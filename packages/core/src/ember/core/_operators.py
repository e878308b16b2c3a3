"""Python operators shared by Tensor and Variable; each calls the op layer."""

from __future__ import annotations

from typing import Any


class TensorOperators:
    """Element-wise arithmetic, comparison, bitwise, matmul and indexing operators.

    ``==``/``!=`` are element-wise and return bool tensors (``x == None`` is ``False``).
    ``+=`` and friends rebind the name to a new tensor (tensors are immutable).
    """

    __slots__ = ()
    # ndarray <op> tensor defers to the tensor's reflected operator: numpy never wins.
    __array_priority__ = 100

    def __add__(self, o: Any) -> Any: return _m.add(self, o)
    def __radd__(self, o: Any) -> Any: return _m.add(o, self)
    def __sub__(self, o: Any) -> Any: return _m.subtract(self, o)
    def __rsub__(self, o: Any) -> Any: return _m.subtract(o, self)
    def __mul__(self, o: Any) -> Any: return _m.multiply(self, o)
    def __rmul__(self, o: Any) -> Any: return _m.multiply(o, self)
    def __truediv__(self, o: Any) -> Any: return _m.divide(self, o)
    def __rtruediv__(self, o: Any) -> Any: return _m.divide(o, self)
    def __floordiv__(self, o: Any) -> Any: return _m.floordiv(self, o)
    def __rfloordiv__(self, o: Any) -> Any: return _m.floordiv(o, self)
    def __mod__(self, o: Any) -> Any: return _m.floormod(self, o)
    def __rmod__(self, o: Any) -> Any: return _m.floormod(o, self)
    def __pow__(self, o: Any) -> Any: return _m.pow(self, o)
    def __rpow__(self, o: Any) -> Any: return _m.pow(o, self)
    def __matmul__(self, o: Any) -> Any: return _la.matmul(self, o)
    def __rmatmul__(self, o: Any) -> Any: return _la.matmul(o, self)
    def __neg__(self) -> Any: return _m.negative(self)
    def __pos__(self) -> Any: return self
    def __abs__(self) -> Any: return _m.abs(self)
    def __invert__(self) -> Any: return _m.invert(self)
    def __and__(self, o: Any) -> Any: return _m.bitwise_and(self, o)
    def __rand__(self, o: Any) -> Any: return _m.bitwise_and(o, self)
    def __or__(self, o: Any) -> Any: return _m.bitwise_or(self, o)
    def __ror__(self, o: Any) -> Any: return _m.bitwise_or(o, self)
    def __xor__(self, o: Any) -> Any: return _m.bitwise_xor(self, o)
    def __rxor__(self, o: Any) -> Any: return _m.bitwise_xor(o, self)
    def __lshift__(self, o: Any) -> Any: return _m.left_shift(self, o)
    def __rshift__(self, o: Any) -> Any: return _m.right_shift(self, o)
    def __rlshift__(self, o: Any) -> Any: return _m.left_shift(o, self)
    def __rrshift__(self, o: Any) -> Any: return _m.right_shift(o, self)
    def __lt__(self, o: Any) -> Any: return _m.less(self, o)
    def __le__(self, o: Any) -> Any: return _m.less_equal(self, o)
    def __gt__(self, o: Any) -> Any: return _m.greater(self, o)
    def __ge__(self, o: Any) -> Any: return _m.greater_equal(self, o)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return False if o is None else _m.equal(self, o)

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return True if o is None else _m.not_equal(self, o)

    # Identity hash (as PyTorch): tensors and variables can key dicts and sets.
    def __hash__(self) -> int:
        return id(self)

    def __getitem__(self, key: Any) -> Any:
        return _ar.getitem(self, key)


# The op modules import Tensor, so they are bound after the package has loaded them.
_m: Any = None
_la: Any = None
_ar: Any = None


def bind_ops() -> None:
    global _m, _la, _ar
    from ._ops import array, linalg, math

    _m, _la, _ar = math, linalg, array

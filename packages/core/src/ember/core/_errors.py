"""Exception types. Every message names the op and its offending operands."""

from __future__ import annotations


class InvalidArgumentError(ValueError):
    """An op got arguments it cannot work with (shapes, values, axes)."""


class DTypeError(InvalidArgumentError, TypeError):
    """An op got an operand of a dtype it does not accept."""


class DeviceError(InvalidArgumentError):
    """Operands live on different devices, or a device does not exist."""


class TakenOver(TypeError):
    """An operand's type computes the call it was given to (``extend``'s
    ``__ember_op__`` / ``__ember_function__`` seam: ember-nn's symbolic tensors make
    graph nodes of such calls). Raised where core would convert the operand; ``execute``
    and the public functions catch it and hand the call over. Where nothing does (a call
    that is no public function), it is the error the caller sees."""

    def __init__(self, value: object) -> None:
        self.kind = type(value)
        hint = getattr(self.kind, "__ember_hint__", None)
        super().__init__(f"{value!r} cannot be used as a tensor here (a call that is not "
                         f"one of ember.core's public functions or ops)"
                         + (f": {hint}" if hint else ""))


class LeakedTensorError(InvalidArgumentError, TypeError, AttributeError):
    """A tensor was used after it leaked out of a traced function: it was computed while
    ``graph.function`` traced the function and kept outside it without being returned, so
    no later call updates it (TensorFlow's leaked graph tensors raise ``TypeError`` when an
    op takes one and ``AttributeError`` on ``.numpy()``: this is both)."""


class LeakedValue:
    """What a leaked tensor holds in place of its array (``extend.expire``): its shape and
    dtype, as a traced tensor's, and nothing else; any other use raises
    ``LeakedTensorError`` with ``why``."""

    __slots__ = ("dtype", "ndim", "shape", "size", "why")

    def __init__(self, array: object, why: str) -> None:
        self.shape = tuple(array.shape)  # type: ignore[attr-defined]
        self.dtype = array.dtype  # type: ignore[attr-defined]
        self.ndim = len(self.shape)
        self.size = int(array.size)  # type: ignore[attr-defined]
        self.why = why

    def __getattr__(self, name: str) -> object:
        raise LeakedTensorError(self.why)

    def __array__(self, *args: object, **kwargs: object) -> object:
        raise LeakedTensorError(self.why)

    def __len__(self) -> int:
        raise LeakedTensorError(self.why)

    def __iter__(self) -> object:
        raise LeakedTensorError(self.why)

    def __getitem__(self, key: object) -> object:
        raise LeakedTensorError(self.why)

    def __bool__(self) -> bool:
        raise LeakedTensorError(self.why)

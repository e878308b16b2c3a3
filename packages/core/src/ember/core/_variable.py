"""Variable: named, mutable state that takes part in every op like a tensor."""

from __future__ import annotations

import itertools
import sys
from contextvars import ContextVar
from typing import Any

import numpy as np

from . import _dtypes, _registry
from ._device import Device, device, get_device
from ._errors import InvalidArgumentError
from ._operators import TensorOperators
from ._ops.array import copy_to_device
from ._ops.creation import convert_to_tensor
from ._tensor import Tensor
from .recording import _recorders, notify_variable_created, notify_variable_write, tracers

_uid = itertools.count()

# extend.map_variable_reads: a function (variable, value) -> the value an op reads, or None
read_hook: ContextVar[Any] = ContextVar("ember_variable_read_hook", default=None)


class Variable(TensorOperators):
    """Mutable state: ``em.Variable(initial_value, name=None, trainable=True, dtype=None)``.

    Reading a variable gives its current value as an immutable Tensor; ``assign`` and
    friends replace that value (earlier reads keep the value they saw, so a tape's
    recorded inputs never change underneath it).

    Examples:
        >>> import ember.core as em
        >>> v = em.Variable(1.0, name="weight")
        >>> v.assign_add(2.0)
        <ember.Variable 'weight:0' shape=() dtype=float32, numpy=3.0>
        >>> float(v * 2)
        6.0
    """

    __slots__ = ("__weakref__", "_value", "name", "trainable", "uid")

    def __init__(self, initial_value: Any, name: str | None = None, trainable: bool = True,
                 dtype: Any = None) -> None:
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, Variable):
            initial_value = initial_value._value
        dt = None if dtype is None else _dtypes.as_dtype(dtype)
        if type(initial_value) is Tensor and dt is not None and initial_value.dtype != dt:
            from ._ops.math import cast

            initial_value = cast(initial_value, dt)
        value = convert_to_tensor(initial_value, dtype=dt)
        self._value: Tensor = _registry.wrap(value._data, value._device)
        self.uid = next(_uid)
        self.name = f"{name or 'Variable'}:0"
        self.trainable = bool(trainable)
        if _recorders():
            notify_variable_created(self)

    # --- reading ---------------------------------------------------------------------
    def _read(self) -> Tensor:
        v = self._value
        recs = _recorders()
        if recs:
            for r in recs:
                r.variable_read(self, v)
        hook = read_hook.get()
        return v if hook is None else hook(self, v)

    def value(self) -> Tensor:
        """The current value as a Tensor (a read that tapes see)."""
        return self._read()

    read_value = value

    def numpy(self) -> Any:
        return self._value.numpy()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self._value.__array__(dtype, copy)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def dtype(self) -> np.dtype:
        return self._value.dtype

    @property
    def device(self) -> str:
        return self._value.device

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def size(self) -> int:
        return self._value.size

    # --- writing ---------------------------------------------------------------------
    # Writes compute the new value with core's ops (so graph mode's tracer sees how it was
    # made) and then tell the active tracers which tensor the variable now holds.
    def _coerce(self, value: Any, what: str) -> Tensor:
        cur = self._value
        if isinstance(value, Variable):
            value = value._current()
        if type(value) is Tensor:
            if value._device is not cur._device:
                value = copy_to_device(value, cur._device)
            dt = value._data.dtype
            if dt != cur.dtype:
                if not np.can_cast(dt, cur.dtype, casting="same_kind"):
                    raise InvalidArgumentError(
                        f"{what}: variable {self.name!r} has dtype {cur.dtype}, "
                        f"value has dtype {dt}")
                value = _registry.execute(_registry.REGISTRY["cast"], (value,),
                                          {"dtype": cur.dtype})
        else:
            value = _registry.wrap(_registry.convert_array(value, cur.dtype, cur._device,
                                                           what), cur._device)
        if tuple(value._data.shape) != cur.shape:
            raise InvalidArgumentError(
                f"{what}: variable {self.name!r} has shape {cur.shape}, "
                f"value has shape {tuple(value._data.shape)}")
        return value

    def _write(self, value: Tensor) -> None:
        recs = _recorders()
        if recs:
            if len(recs) != len(tracers()):  # a tape records: the value written starts anew
                # on it, as a TensorFlow variable's next read (an assign has no gradient:
                # `v.assign_add(1)` between two reads of v counted the first read twice)
                value = _registry.execute(_registry.REGISTRY["stop_gradient"], (value,))
            self._value = value
            notify_variable_write(self, value)
        else:
            self._value = value

    def assign(self, value: Any, read_value: bool = True) -> Variable | None:
        """Replace the value (same shape; cast within the same dtype kind).

        Returns the variable, or None with ``read_value=False`` (as TensorFlow).
        """
        self._write(self._coerce(value, "assign"))
        return self if read_value else None

    def assign_add(self, delta: Any, read_value: bool = True) -> Variable | None:
        """Add ``delta``; returns the variable, or None with ``read_value=False``."""
        d = self._coerce(delta, "assign_add")
        if not self._updated_in_place(np.add, d):
            self._write(_registry.execute(_registry.REGISTRY["add"], (self._current(), d)))
        return self if read_value else None

    def assign_sub(self, delta: Any, read_value: bool = True) -> Variable | None:
        """Subtract ``delta``; returns the variable, or None with ``read_value=False``."""
        d = self._coerce(delta, "assign_sub")
        if not self._updated_in_place(np.subtract, d):
            self._write(_registry.execute(_registry.REGISTRY["subtract"], (self._current(), d)))
        return self if read_value else None

    def _updated_in_place(self, ufunc: Any, delta: Tensor) -> bool:
        """Whether ``ufunc(value, delta)`` was written into the value's own array: only
        where nobody could see the write (``__checkpoint_buffer__``'s condition: nothing
        but this variable holds its tensor or its array, on the host) and nobody records
        (a tape or a tracer would see the op). The same bits as a new array, without one:
        an optimizer's update of LeNet's 12.8 MB dense kernel allocated and page-faulted
        a new array every step (3.5 to 12 ms of a 70 ms step, measured)."""
        # device arrays first (no refcount calibration, no work); then whether anyone
        # else holds it, before a local name here holds the array too
        if type(self._value._data) is not np.ndarray or _recorders() or not _alone(self):
            return False
        a, d = self._value._data, delta._data
        if (type(d) is not np.ndarray
                or a.dtype not in _IN_PLACE_DTYPES or a.base is not None
                or not a.flags.c_contiguous or not a.flags.writeable):
            return False
        ufunc(a, d, out=a)
        return True

    def _sub_scaled_in_place(self, delta: Tensor, scale: Any) -> bool:
        """Whether ``value -= delta * scale`` (``scale`` a Python float or a scalar tensor
        of the value's dtype and device) was done in the value's own array, on
        ``_updated_in_place``'s condition; otherwise nothing was done.

        The same bits as ``assign_sub(multiply(delta, scale))`` (the product is rounded to
        the value's dtype first, a Python scalar cast to it, as the op does) without the
        product's array: it is made a block at a time in a scratch buffer kept between
        calls. SGD's update of the MLP 784-256-256-10's first kernel made a new 0.8 MB
        array each step, which came back page-faulted (196 faults a step, measured).
        """
        if type(self._value._data) is not np.ndarray or _recorders() or not _alone(self):
            return False
        a, d = self._value._data, delta._data
        if (type(d) is not np.ndarray or delta._device is not self._value._device
                or a.dtype not in _IN_PLACE_DTYPES or d.dtype != a.dtype
                or d.shape != a.shape or a.base is not None or not a.flags.c_contiguous
                or not a.flags.writeable or not d.flags.c_contiguous):
            return False
        if type(scale) is Tensor:
            s = scale._data
            if (type(s) is not np.ndarray or scale._device is not delta._device
                    or s.ndim or s.dtype != a.dtype):
                return False
        elif type(scale) in (float, int):
            s = np.asarray(scale, a.dtype)
        else:
            return False
        fa, fd = a.reshape(-1), d.reshape(-1)
        n = fa.size
        if n <= 4096:  # a temporary this small comes from numpy's cache
            np.subtract(fa, np.multiply(fd, s), out=fa)
            return True
        pool = _SCRATCH.setdefault(a.dtype, [])
        buf = pool.pop() if pool else np.empty(_BLOCK, a.dtype)  # (pop: a thread's own)
        try:
            for i in range(0, n, _BLOCK):
                j = min(i + _BLOCK, n)
                b = buf[:j - i]
                np.multiply(fd[i:j], s, out=b)
                np.subtract(fa[i:j], b, out=fa[i:j])
        finally:
            pool.append(buf)
        return True

    def _current(self) -> Tensor:
        """The value an update starts from: a read only tracers see (tapes do not watch a
        variable because it was updated)."""
        v = self._value
        if _recorders():
            for r in tracers():
                r.variable_read(self, v)
        return v

    # --- conversions and devices -----------------------------------------------------
    def __int__(self) -> int: return int(self._value)
    def __float__(self) -> float: return float(self._value)
    def __bool__(self) -> bool: return bool(self._value)
    def __index__(self) -> int: return self._value.__index__()
    def __len__(self) -> int: return len(self._value)
    def __iter__(self) -> Any: return iter(self._read())

    def __format__(self, spec: str) -> str:
        return format(self._value, spec)

    def cpu(self) -> Tensor:
        return self._read().cpu()

    def gpu(self, index: int = 0) -> Tensor:
        return self._read().gpu(index)

    def to_device(self, device: str | Device) -> None:
        """Move this variable's storage to ``device`` (in place)."""
        self._value = copy_to_device(self._value, get_device(device))

    def __repr__(self) -> str:
        v = self.numpy()
        val = np.array2string(v, separator=" ") if v.ndim else repr(v.item())
        return (f"<ember.Variable '{self.name}' shape={self.shape} dtype={self.dtype}, "
                f"numpy={val}>")

    def __reduce__(self) -> Any:
        raise TypeError("ember variables are not pickled; save them with ember.checkpoint")

    # --- checkpoint protocol (duck-typed; ember-checkpoint is not imported) -----------
    # A variable is a leaf: numpy() to read, assign() to write, shape and dtype.
    def __checkpoint_assign__(self, array: np.ndarray) -> Any:
        """Take a restored value, ``array``, that nothing else holds: kept without a copy
        on the CPU, uploaded once on a GPU. Returns what puts the previous value back.

        Through ``assign`` a restore cost two more copies per variable: ``assign`` never
        aliases a caller's array, and the rollback kept a host copy of the old value. The
        rollback here holds the previous tensor itself, which nothing writes (writes
        replace a variable's tensor; a traced step, assign_add and assign_sub update an
        array in place only while nothing else holds it). A traced plan or captured CUDA
        graph reads the variable's new tensor at its next call.
        """
        cur = self._value
        if array.dtype != cur.dtype or tuple(array.shape) != cur.shape:
            raise InvalidArgumentError(
                f"__checkpoint_assign__: variable {self.name!r} is {cur.dtype}"
                f"{list(cur.shape)}, the restored value {array.dtype}{list(array.shape)}")
        dev = cur._device
        self._write(_registry.wrap(dev.backend.from_host(array, dev.index), dev))
        return lambda: self._write(cur)

    def __checkpoint_buffer__(self) -> np.ndarray | None:
        """The host array that holds this variable's value, for a restore to write into in
        place, or None where a write there could be seen: on a GPU, and wherever anything
        but this variable holds its tensor or its array (a tensor read and kept, a numpy
        view, a tape, a traced plan's constant). A traced step updates a variable in place
        on the same condition (ember.graph). The restore checks every checksum first and
        writes last, when nothing can fail, so it keeps no copy of the old value, needs no
        new memory, and a plan traced before reads the new values at its next call.
        """
        if not _alone(self):  # (counted before this frame holds the array too)
            return None
        a = self._value._data
        if (type(a) is not np.ndarray or a.base is not None or not a.flags.c_contiguous
               ):
            return None
        return a


def _counts(v: Variable) -> tuple[int, int]:
    """References to ``v``'s value tensor and to its array, counted from here."""
    t = v._value
    return sys.getrefcount(t), sys.getrefcount(t._data)


_ALONE: list[tuple[int, int]] = []  # the counts of a variable nothing else holds
_IN_PLACE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# elements of _sub_scaled_in_place's scratch buffer (1 MiB of float32): kept between
# calls, so it is neither allocated nor page-faulted again. A new 64 KiB buffer per call,
# 13 blocks for the MLP's first kernel, made SGD's update 1.5x numpy's `w -= lr * g`.
_BLOCK = 262144
_SCRATCH: dict[np.dtype, list[np.ndarray]] = {}  # dtype -> free buffers (one per thread)


def _alone(v: Variable) -> bool:
    if not _ALONE:  # calibrated on the host, whatever the default device (no upload)
        with device("/cpu:0"):
            _ALONE.append(_counts(Variable(np.zeros(2, np.float32))))
    t, a = _counts(v)
    return t <= _ALONE[0][0] and a <= _ALONE[0][1]

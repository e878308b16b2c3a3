"""Tensor: an immutable array with a shape, a dtype and a device.

Core's layers, bottom up: dtypes, devices, backends and array conversion; this module
(Tensor and its constructors ``wrap`` and ``as_tensor``); the registry and ``execute``;
the op modules (``_ops``); Variable and the public modules; ``__init__``. Each imports
only from the layers below it (``tests/test_layering.py`` checks).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _device_errors, _dtypes, _ops
from ._convert import convert_array
from ._device import Device, get_device, placement
from ._errors import DTypeError, InvalidArgumentError, LeakedValue, TakenOver
from ._operators import TensorOperators
from ._shape import TensorShape
from .recording import _active, notify_host_read, tracers


class Tensor(TensorOperators):
    """An immutable, eagerly computed value. Create one with ``ember.core.constant``.

    Examples:
        >>> import ember.core as em
        >>> em.constant([[4.]])
        ember.Tensor([[4.]], shape=(1, 1), dtype=float32)
    """

    __slots__ = ("__weakref__", "_data", "_device")
    _data: Any
    _device: Device

    def __init__(self, value: Any, dtype: Any = None) -> None:
        t = as_tensor(value, None if dtype is None else _dtypes.as_dtype(dtype))
        self._data = t._data
        self._device = t._device

    # --- properties -----------------------------------------------------------------
    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._data.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def device(self) -> str:
        """The device name, e.g. ``"/cpu:0"``."""
        return self._device.name

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def T(self) -> Tensor:
        return _ops.array.transpose(self)  # type: ignore[no-any-return]

    def numpy(self) -> Any:
        """The value on the host, as TensorFlow's ``numpy()``: a ``numpy.ndarray`` of its
        own (a copy: tensors are immutable, and writing into the array must not change
        the tensor, a variable behind ``assign``'s back, or a value a tape saved), or a
        numpy scalar (``numpy.float32``, ...) for a 0-d tensor.

        On a GPU this is where a check that an op made there without a sync (e.g. the
        label range of sparse cross-entropy) raises, if it failed since the last read."""
        a = self._host()
        if a.ndim == 0:
            return a[()]
        return a.copy() if a is self._data else a

    def _host(self) -> np.ndarray:
        """The value as a host array, without a copy on the CPU (the tensor's own buffer:
        read it, never write it)."""
        if _active.get():  # a tracer turns host reads into guards
            notify_host_read(self)
        return np.asarray(_device_errors.to_host(self._device, self._data))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """numpy's conversion (``np.asarray(t)``): on the CPU without a copy, as a
        read-only view of the tensor's buffer (``copy=True`` gives a writable copy)."""
        a = self._host()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        if copy:
            return a.copy()
        if a is self._data:
            a = a.view()
            a.flags.writeable = False
        return a

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """The CUDA array interface of a GPU tensor (absent on CPU tensors), so libraries
        that take cupy-style arrays read GPU tensors without a host copy."""
        cai = getattr(self._data, "__cuda_array_interface__", None)
        if cai is None:
            raise AttributeError(f"a tensor on {self._device.name} has no __cuda_array_interface__")
        return cai

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        """Zero-copy exchange with other frameworks (DLPack), on the tensor's device."""
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._data.__dlpack_device__()

    def ref(self) -> Tensor:
        """The tensor itself; kept for TensorFlow users who key dicts by ``t.ref()``."""
        return self

    # --- devices --------------------------------------------------------------------
    def cpu(self) -> Tensor:
        """A copy on ``/cpu:0`` (the tensor itself if it is already there)."""
        return _ops.array.copy_to_device(self, get_device("/cpu:0"))  # type: ignore[no-any-return]

    def gpu(self, index: int = 0) -> Tensor:
        """A copy on ``/gpu:index``; raises if that GPU is not available."""
        return _ops.array.copy_to_device(self, get_device(f"/gpu:{index}"))  # type: ignore[no-any-return]

    def to(self, device: str | Device) -> Tensor:
        return _ops.array.copy_to_device(self, get_device(device))  # type: ignore[no-any-return]

    # --- Python conversions ---------------------------------------------------------
    def _scalar(self, what: str) -> Any:
        if self._data.size != 1:
            raise InvalidArgumentError(
                f"{what}() needs a tensor with one element, got shape {self.shape}")
        return self._host().reshape(()).item()

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iub":
            raise DTypeError(f"__index__: only integer tensors can be used as an index, "
                             f"got dtype {self.dtype}")
        return int(self._scalar("index"))

    def __format__(self, spec: str) -> str:
        """The values formatted as numpy formats them, as TensorFlow's ``__format__``
        (``f"{em.size(x)}"`` is ``1200``, where ``str()`` is ``ember.Tensor(1200, ...)``);
        a spec formats a one-element tensor's number (``f"{loss:.3f}"``)."""
        if self._data.size == 1 and (spec or self._data.ndim == 0):
            return format(self._host().reshape(())[()], spec)
        return format(self._host(), spec)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor (a scalar)")
        return int(self._data.shape[0])

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor (a scalar)")
        for i in range(self._data.shape[0]):
            yield self[i]

    def __repr__(self) -> str:
        if _active.get() and tracers():
            # while graph.function traces, as TensorFlow's symbolic tensors print: what a
            # replay computes is not this value, and reading it would be a guard that
            # fails on every new value (print is how users watch tracing)
            return f"ember.Tensor(<traced>, shape={self.shape}, dtype={self.dtype})"
        if type(self._data) is LeakedValue:
            return f"ember.Tensor(<leaked from a trace>, shape={self.shape}, dtype={self.dtype})"
        return f"ember.Tensor({_format_value(self._host())}, shape={self.shape}, dtype={self.dtype})"

    def __str__(self) -> str:
        return repr(self)

    def __reduce__(self) -> Any:
        raise TypeError("ember tensors are not pickled; save them with ember.checkpoint "
                        "or convert with .numpy()")


def _format_value(a: np.ndarray) -> str:
    # a scalar as its own dtype prints it (float32 0.1 is "0.1", as TensorFlow prints it;
    # a Python float would show float64's digits, 0.10000000149011612)
    return np.array2string(a, separator=" ", threshold=1000) if a.ndim else str(a[()])


_new = object.__new__


def wrap(data: Any, device: Device) -> Tensor:
    """A Tensor holding the backend array ``data`` (not a copy) on ``device``.

    The constructor every op uses for its results: no conversion, no checks.
    """
    t = _new(Tensor)
    t._data = data
    t._device = device
    return t


def is_variable(value: Any) -> bool:
    """True for a Variable: a value with Tensor's operators that is not a Tensor, read into
    one with ``value._read()`` (which tells the active recorders)."""
    return type(value) is not Tensor and isinstance(value, TensorOperators)


def as_tensor(value: Any, dtype: np.dtype | None = None, op: str = "convert_to_tensor"
              ) -> Tensor:
    """``value`` as a Tensor: tensors pass through, variables are read, anything else is
    converted onto the current device (``convert_to_tensor`` without its ``device``).

    Raises:
        DTypeError: ``value`` is a tensor (or variable) whose dtype is not ``dtype``.
    """
    if is_variable(value):
        value = value._read()
    if type(value) is Tensor:
        if dtype is not None and value._data.dtype != dtype:
            raise DTypeError(f"{op}: tensor has dtype {value.dtype}, "
                             f"requested {dtype}; use em.cast to convert")
        return value
    if getattr(type(value), "__ember_function__", None) is not None:
        raise TakenOver(value)  # a symbolic tensor: the public function makes a node
    if _PACK and type(value) in (list, tuple) and op != "constant" and holds_tensor(value):
        return _PACK[0](value, dtype, op)  # type: ignore[no-any-return]
    if dtype is None:
        dtype = _dtypes.infer_dtype(value)
    dev = placement(dtype if dtype is not None else getattr(value, "dtype", None))
    return wrap(convert_array(value, dtype, dev, op), dev)


# A list holding tensors converts by stacking them, an op (the ops layer registers it:
# ``_ops.array``), as TensorFlow packs such a list: a tape differentiates through it and a
# trace replays it, where reading the values on the host gave a constant (no gradient) and,
# in a trace, a guard on every value. ``em.constant`` still reads the values (it makes a
# constant, as TensorFlow's does).
_PACK: list[Any] = []


def holds_tensor(value: Any) -> bool:
    """Whether a (nested) list or tuple holds a tensor or a variable."""
    for v in value:
        t = type(v)
        if t is Tensor or is_variable(v) or getattr(t, "__ember_function__", None) is not None \
                or ((t is list or t is tuple) and holds_tensor(v)):
            return True
    return False

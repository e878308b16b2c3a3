"""Turning Python values, numpy arrays and array-likes into tensors."""

from __future__ import annotations

from typing import Any

from . import _dtypes, _registry
from ._device import Device, current_device, get_device
from ._errors import DTypeError
from ._tensor import Tensor, copy_to_device


def convert_to_tensor(value: Any, dtype: Any = None, name: str | None = None,
                      device: str | Device | None = None) -> Tensor:
    """Return ``value`` as a Tensor.

    Tensors pass through (on their own device unless ``device`` is given); variables are
    read; everything else goes to the current device. Python ints become int32, floats
    float32; numpy arrays keep their dtype.

    Examples:
        >>> import ember.core as em
        >>> em.convert_to_tensor(3.0)
        ember.Tensor(3.0, shape=(), dtype=float32)
    """
    del name  # accepted for TensorFlow compatibility
    dt = None if dtype is None else _dtypes.as_dtype(dtype)
    if isinstance(value, _registry.Variable):
        value = value._read()
    if type(value) is Tensor:
        if dt is not None and value.dtype != dt:
            raise DTypeError(f"convert_to_tensor: tensor has dtype {value.dtype}, "
                             f"requested {dt}; use em.cast to convert")
        return value if device is None else copy_to_device(value, get_device(device))
    dev = current_device() if device is None else get_device(device)
    if dt is None:
        dt = _dtypes.infer_dtype(value)
    return _registry.wrap(_registry.convert_array(value, dt, dev), dev)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Tensor:
    """A tensor holding ``value`` (optionally cast to ``dtype`` and broadcast to ``shape``).

    Examples:
        >>> import ember.core as em
        >>> em.constant(5)
        ember.Tensor(5, shape=(), dtype=int32)
    """
    del name
    if isinstance(value, (Tensor, _registry.Variable)):
        value = value.numpy() if dtype is None else value.numpy().astype(_dtypes.as_dtype(dtype))
    t = convert_to_tensor(value, dtype=dtype)
    if shape is not None:
        from ._ops.array import broadcast_to, reshape

        shape = tuple(int(s) for s in shape)
        n = 1
        for s in shape:
            n *= s
        t = reshape(t, shape) if t.size == n and t.ndim else broadcast_to(t, shape)
    return t

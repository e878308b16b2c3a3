"""Python values, numpy arrays and array-likes as backend arrays on a device.

The bottom of core's conversion: no Tensor here, only arrays. ``_tensor`` builds tensors
from these arrays, ``_registry`` converts op operands with them, and the public
``convert_to_tensor`` and ``constant`` live with the creation ops (``_ops/creation``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._device import Device


def convert_array(value: Any, dtype: np.dtype | None, dev: Device) -> Any:
    """A backend array on ``dev`` for any array-like (lists, numpy, cupy, scalars)."""
    if hasattr(value, "__cuda_array_interface__") and dev.kind == "gpu":
        arr = dev.backend.asarray(value)
        return arr if dtype is None or arr.dtype == dtype else arr.astype(dtype)
    host_given = isinstance(value, (np.ndarray, np.generic))
    arr = np.asarray(value, dtype=dtype)
    if type(value) in _PY_NUMBERS and (dtype is not None or type(value) is bool):
        return scalar_array(arr, dev)
    if host_given and np.may_share_memory(arr, value):
        arr = arr.copy()  # tensors are immutable: never alias the caller's array
    if dtype is None and not host_given:
        arr = _python_defaults(value, arr)
    return dev.backend.from_host(arr, dev.index)


_PY_NUMBERS = (bool, int, float, complex)

# Python numbers on a GPU are uploaded once each: an upload from pageable host memory makes
# the host wait for the device (cupy copies with cudaMemcpy), so an eager step would sync
# at every learning rate or constant it multiplies by. Ops never write into their inputs,
# so one array can serve every use. Keyed by the exact bits (0.0 and -0.0 differ).
_DEVICE_SCALARS: dict[tuple[Device, str, bytes], Any] = {}
_DEVICE_SCALARS_MAX = 1024


def scalar_array(host: np.ndarray, dev: Device) -> Any:
    """The 0-d host array ``host`` on ``dev``; on a GPU, one shared upload per value."""
    if dev.kind == "cpu":
        return dev.backend.from_host(host, dev.index)
    key = (dev, host.dtype.str, host.tobytes())
    a = _DEVICE_SCALARS.get(key)
    if a is None:
        if len(_DEVICE_SCALARS) >= _DEVICE_SCALARS_MAX:  # a schedule's ever-new values
            _DEVICE_SCALARS.clear()
        a = _DEVICE_SCALARS[key] = dev.backend.from_host(host, dev.index)
    return a


def _python_defaults(value: Any, arr: np.ndarray) -> np.ndarray:
    """Python floats become float32 and ints int32 (int64 if they do not fit)."""
    if hasattr(value, "__array__") or hasattr(value, "__array_interface__"):
        return arr  # an array-like with its own dtype keeps it
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype == np.int64:
        if arr.size == 0 or (arr.min() >= -(2**31) and arr.max() < 2**31):
            return arr.astype(np.int32)
    if arr.dtype == np.complex128:
        return arr.astype(np.complex64)
    return arr

"""Python values, numpy arrays and array-likes as backend arrays on a device.

The bottom of core's conversion: no Tensor here, only arrays. ``_tensor`` builds tensors
from these arrays, ``_registry`` converts op operands with them, and the public
``convert_to_tensor`` and ``constant`` live with the creation ops (``_ops/creation``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtypes
from ._device import Device
from ._errors import DTypeError


def convert_array(value: Any, dtype: np.dtype | None, dev: Device,
                  op: str = "convert_to_tensor") -> Any:
    """A backend array on ``dev`` for any array-like (lists, numpy, cupy, scalars).

    Raises:
        DTypeError: ``dtype`` is an integer type that would change the values (floats
            that are not whole numbers, NaN, values out of its range): ``em.cast``
            converts those, saying how.
    """
    if hasattr(value, "__cuda_array_interface__") and dev.kind == "gpu":
        arr = dev.backend.asarray(value)
        if dtype is None or arr.dtype == dtype:
            return arr
        out = arr.astype(dtype)
        if dtype.kind in "iu" and arr.dtype.kind in "fiu" and not bool((out == arr).all()):
            raise _lossy(op, arr.get(), dtype)
        return out
    host_given = isinstance(value, (np.ndarray, np.generic))
    if dtype is not None and dtype.kind in "iu" and type(value) not in (int, bool):
        arr = _exact_integers(value, dtype, op)
    else:
        arr = np.asarray(value, dtype=dtype)
    if type(value) in _PY_NUMBERS and (dtype is not None or type(value) is bool):
        return scalar_array(arr, dev)
    if host_given and np.may_share_memory(arr, value):
        arr = arr.copy()  # tensors are immutable: never alias the caller's array
    if dtype is None and not host_given:
        arr = _python_defaults(value, arr)
    return dev.backend.from_host(_tensor_dtype(arr, value, op), dev.index)


def _tensor_dtype(arr: np.ndarray, value: Any, op: str) -> np.ndarray:
    """``arr`` checked here, before any backend sees it, so that the error is ember's and the
    same on every device (cupy refuses strings with its own ``Unsupported dtype <U3``, numpy
    would make a tensor no op computes with): tensors hold booleans and numbers. A
    big-endian array (read from a file) is made native: cupy refuses that byte order, and
    the numbers are the same."""
    dt = arr.dtype
    if dt.kind not in "biufc" and dt != _dtypes.bfloat16:
        raise DTypeError(f"{op}: cannot make a tensor from {type(value).__name__} data of "
                         f"dtype {dt}: tensors hold booleans and numbers (bool, integer, "
                         "float and complex dtypes)")
    if not dt.isnative:
        arr = arr.astype(dt.newbyteorder("="))
    return arr


_PY_NUMBERS = (bool, int, float, complex)


def _exact_integers(value: Any, dtype: np.dtype, op: str) -> np.ndarray:
    """``value`` as ``dtype`` (an integer type) if that keeps every value, else an error:
    numpy would truncate 1.5, turn NaN into the minimum and wrap 3e9 without a word
    (TensorFlow refuses float values for an integer dtype)."""
    src = np.asarray(value)
    if src.dtype == dtype or src.dtype.kind not in "fiu" and src.dtype != _dtypes.bfloat16:
        return np.asarray(src, dtype=dtype)
    arr, changed = _converted(src, dtype)
    if changed.any():
        raise _lossy(op, src, dtype)
    return arr


def _converted(src: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``src`` as integer ``dtype``, and where that changed a value (floats compared in
    float64, where every one of them is exact)."""
    with np.errstate(invalid="ignore", over="ignore"):
        arr = src.astype(dtype)
        return arr, arr != (src if src.dtype.kind in "iu" else src.astype(np.float64))


def _lossy(op: str, src: Any, dtype: np.dtype) -> DTypeError:
    src = np.asarray(src)
    flat = src.ravel()
    wrong = flat[_converted(flat, dtype)[1]]
    values = f"{wrong[:5].tolist()}{' ...' if wrong.size > 5 else ''}"
    if src.dtype.kind in "iu":
        return DTypeError(f"{op}: {src.dtype} values {values} are outside {dtype}'s range; "
                          f"em.cast(x, em.{dtype}) wraps them, if that is what you want")
    return DTypeError(f"{op}: {src.dtype} values {values} are not whole numbers in "
                      f"{dtype}'s range; em.cast(x, em.{dtype}) truncates them (NaN to 0, "
                      "values out of range saturated), if that is what you want")


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
        if len(_DEVICE_SCALARS) >= _DEVICE_SCALARS_MAX:  # a schedule's ever-new values:
            # the oldest goes (not all: a step's own constants, just uploaded, stay)
            try:
                _DEVICE_SCALARS.pop(next(iter(_DEVICE_SCALARS)), None)
            except (RuntimeError, StopIteration):  # another thread changed it meanwhile
                pass
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

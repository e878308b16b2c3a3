"""ember dtypes are numpy dtype objects, so they interoperate with numpy, cupy and ml_dtypes.

Python int -> int32, Python float -> float32, Python complex -> complex64, bool -> bool;
numpy arrays and numpy scalars keep their own dtype.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

DType = np.dtype

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

_BY_NAME = {d.name: d for d in (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64, complex64, complex128,
)}
_BY_NAME["bool_"] = bool_
_BY_NAME["half"] = float16
_BY_NAME["float"] = float32
_BY_NAME["double"] = float64
_BY_NAME["int"] = int32

# Python scalars -> ember defaults (TensorFlow's convention).
_PY_DEFAULT = {bool: bool_, int: int32, float: float32, complex: complex64}


def as_dtype(dtype: Any) -> np.dtype:
    """Return the ember dtype for a dtype-like (``em.float32``, ``"float32"``, ``np.int8``)."""
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    if dtype in _PY_DEFAULT:
        return _PY_DEFAULT[dtype]
    try:
        return np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"not a dtype: {dtype!r}") from e


def is_floating(dtype: np.dtype) -> bool:
    """True for float16, bfloat16, float32, float64."""
    return dtype.kind == "f" or dtype == bfloat16


def is_complex(dtype: np.dtype) -> bool:
    return dtype.kind == "c"


def is_differentiable(dtype: np.dtype) -> bool:
    """Gradients flow only through floating and complex dtypes (as in TensorFlow)."""
    return dtype.kind in "fc" or dtype == bfloat16


def is_integer(dtype: np.dtype) -> bool:
    return dtype.kind in "iu"


def infer_dtype(value: Any) -> np.dtype | None:
    """The ember dtype a Python value converts to, or None to let numpy decide."""
    t = type(value)
    if t is int and not -(2**31) <= value < 2**31:
        return int64  # as for lists: ints that do not fit int32 widen instead of overflowing
    if t in _PY_DEFAULT:
        return _PY_DEFAULT[t]
    return None

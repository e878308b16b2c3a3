"""Turning anyone's values into numpy arrays, Python floats and ``TensorProto``s.

Values come in as Python numbers, numpy arrays, or any object with ``__array__`` (an
ember tensor, a cupy array through its own conversion); nothing here imports another
ember package.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._proto import DataType, TensorProto

_DTYPES = {
    np.dtype(np.float16): DataType.DT_HALF,
    np.dtype(np.float32): DataType.DT_FLOAT,
    np.dtype(np.float64): DataType.DT_DOUBLE,
    np.dtype(np.int8): DataType.DT_INT8,
    np.dtype(np.int16): DataType.DT_INT16,
    np.dtype(np.int32): DataType.DT_INT32,
    np.dtype(np.int64): DataType.DT_INT64,
    np.dtype(np.uint8): DataType.DT_UINT8,
    np.dtype(np.uint16): DataType.DT_UINT16,
    np.dtype(np.uint32): DataType.DT_UINT32,
    np.dtype(np.uint64): DataType.DT_UINT64,
    np.dtype(np.bool_): DataType.DT_BOOL,
}


def as_array(data: Any) -> np.ndarray:
    """``data`` as a host numpy array (through ``__array__`` for tensors)."""
    return np.asarray(data)


def as_scalar_float(data: Any, what: str = "scalar") -> float:
    """One real number as a Python float; anything with more (or fewer) elements is an error.

    Non-finite values pass through: TensorBoard shows NaN and infinities.
    """
    if type(data) is float or type(data) is int:
        return float(data)
    array = np.asarray(data)
    if array.ndim != 0:
        raise ValueError(f"{what} data must be a single number (rank 0), got shape "
                         f"{array.shape}; reduce it first, e.g. with .mean() or x[0]")
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{what} data must be a real number, got dtype {array.dtype}")
    return float(array)


def tensor_proto(array: np.ndarray) -> TensorProto:
    """A ``TensorProto`` holding ``array`` (numbers as raw bytes, strings as bytes)."""
    proto = TensorProto()
    for size in array.shape:
        proto.tensor_shape.dim.add().size = size
    if array.dtype.kind in "USO":
        proto.dtype = DataType.DT_STRING
        proto.string_val.extend(_as_bytes(s) for s in array.reshape(-1).tolist())
        return proto
    dtype = _DTYPES.get(array.dtype)
    if dtype is None:
        raise TypeError(f"cannot write a tensor of dtype {array.dtype}")
    proto.dtype = dtype
    proto.tensor_content = np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tobytes()
    return proto


def string_tensor_proto(items: list[bytes], shape: tuple[int, ...]) -> TensorProto:
    """A ``DT_STRING`` tensor of the given shape from already-encoded byte strings."""
    proto = TensorProto(dtype=DataType.DT_STRING)
    for size in shape:
        proto.tensor_shape.dim.add().size = size
    proto.string_val.extend(items)
    return proto


def _as_bytes(s: Any) -> bytes:
    if isinstance(s, bytes):
        return s
    return str(s).encode("utf-8")

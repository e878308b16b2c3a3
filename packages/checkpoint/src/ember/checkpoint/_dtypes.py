"""numpy dtypes <-> safetensors storage.

Every dtype numpy can hold without Python objects round-trips. Types safetensors knows
(``float32``, ``bfloat16``, ...) are stored as themselves, little-endian, so other
frameworks read them natively. Anything else (``complex128``, ``longdouble``,
``datetime64``, strings, structured records, exotic ml_dtypes) is stored as its raw bytes
in a ``uint8`` tensor with one extra trailing axis of length ``itemsize``; the exact numpy
dtype is recorded in ember's header as a *token*: the ml_dtypes name for ml_dtypes types,
otherwise numpy's ``.npy`` descriptor (``'<f4'``, ``'>c16'``, or a list for records).
"""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Any

import numpy as np

# numpy dtype name -> safetensors dtype code, for types stored natively.
_NATIVE = {
    "bool": "BOOL", "int8": "I8", "uint8": "U8", "int16": "I16", "uint16": "U16",
    "int32": "I32", "uint32": "U32", "int64": "I64", "uint64": "U64",
    "float16": "F16", "float32": "F32", "float64": "F64", "complex64": "C64",
    "bfloat16": "BF16", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2",
}
_ITEMSIZE = {code: 1 for code in ("BOOL", "I8", "U8", "F8_E4M3", "F8_E5M2")} | {
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8, "C64": 8,
}
# ml_dtypes types that may be named in a file (never a free-form attribute lookup).
_ML_DTYPES = frozenset({
    "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float4_e2m1fn",
    "float6_e2m3fn", "float6_e3m2fn", "int2", "int4", "uint2", "uint4",
})


def _is_ml_dtype(dtype: np.dtype) -> bool:
    return type(dtype.type).__module__.startswith("ml_dtypes") or (
        dtype.type.__module__.startswith("ml_dtypes")
    )


def token(dtype: np.dtype) -> Any:
    """The JSON token that names ``dtype`` exactly; raises TypeError for object dtypes."""
    if dtype.hasobject:
        raise TypeError(f"dtype {dtype} holds Python objects; checkpoints never pickle")
    if _is_ml_dtype(dtype):
        return dtype.name
    return np.lib.format.dtype_to_descr(dtype)


def _tuples(descr: Any) -> Any:
    """JSON turned the descriptor's tuples into lists; turn them back."""
    if isinstance(descr, str):
        return descr
    out = []
    for field in descr:
        if not isinstance(field, list) or len(field) not in (2, 3):
            raise ValueError(f"bad record field {field!r}")
        name, fmt, *shape = field
        item = (name if isinstance(name, str) else tuple(name), _tuples(fmt))
        out.append(item + tuple(tuple(s) for s in shape))
    return out


def from_token(tok: Any) -> np.dtype:
    """The numpy dtype a token names; raises ValueError for anything unknown or unsafe."""
    return _from_text(tok) if isinstance(tok, str) else _from_token(tok)


@functools.lru_cache(maxsize=1024)
def _from_text(tok: str) -> np.dtype:
    """``from_token`` of a text token, remembered: a file names a few dtypes many times."""
    return _from_token(tok)


def _from_token(tok: Any) -> np.dtype:
    if isinstance(tok, str) and tok in _ML_DTYPES:
        try:
            ml_dtypes = importlib.import_module("ml_dtypes")
        except ImportError as err:
            raise ValueError(f"dtype {tok!r} needs the ml_dtypes package") from err
        return np.dtype(getattr(ml_dtypes, tok))
    if not isinstance(tok, (str, list)):
        raise ValueError(f"bad dtype token {tok!r}")
    try:
        dtype = np.lib.format.descr_to_dtype(_tuples(tok))
    except (TypeError, ValueError, KeyError, IndexError) as err:
        raise ValueError(f"bad dtype token {tok!r}") from err
    if dtype.hasobject:
        raise ValueError(f"dtype {tok!r} holds Python objects")
    return dtype


def _little(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("<") if dtype.byteorder == ">" or (
        dtype.byteorder == "=" and sys.byteorder == "big") else dtype


def storage(dtype: np.dtype, shape: tuple[int, ...]) -> tuple[str, tuple[int, ...]]:
    """The safetensors dtype code and shape that hold an array of ``dtype`` and ``shape``."""
    code = _code(dtype)
    if code is not None:
        return code, shape
    return "U8", (*shape, dtype.itemsize)


@functools.lru_cache(maxsize=1024)
def _code(dtype: np.dtype) -> str | None:
    """The safetensors code of a natively stored dtype (``dtype.name`` is slow: a restore
    asks for every tensor, twice)."""
    return _NATIVE.get(_little(dtype).name) if dtype.fields is None else None


def itemsize(code: str) -> int:
    """Bytes per element of a safetensors dtype code this module writes."""
    return _ITEMSIZE[code]


def encode(array: np.ndarray) -> tuple[str, np.ndarray]:
    """The safetensors dtype name for TensorSpec and a C-contiguous array of the bytes to write."""
    code, _ = storage(array.dtype, array.shape)
    if code == "U8" and array.dtype != np.uint8:
        raw = np.asarray(array, order="C").reshape(-1).view(np.uint8)
        return "uint8", raw.reshape((*array.shape, array.dtype.itemsize))
    little = _little(array.dtype)
    return little.name, np.asarray(array, dtype=little, order="C")


def decode(raw: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The array of ``dtype``/``shape`` held in ``raw`` (1-D uint8, C-contiguous, writable)."""
    if storage(dtype, shape)[0] == "U8" and dtype != np.uint8:
        return raw.view(dtype).reshape(shape)
    little = _little(dtype)
    array = raw.view(little).reshape(shape)
    return array.astype(dtype) if little != dtype else array


def empty(dtype: np.dtype, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """A new array to read a stored tensor of ``dtype``/``shape`` into, whose bytes are the
    file's, and a flat uint8 view of them; ``finish`` makes it the value. The array owns
    its memory (it is no view of a buffer): what holds it can count who else does."""
    raw = storage(dtype, shape)[0] == "U8" and dtype != np.uint8
    holder = np.empty(shape, dtype if raw else _little(dtype))
    return holder, holder.reshape(-1).view(np.uint8)


def finish(holder: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The value of ``dtype`` from a holder that ``empty`` made and the file filled: the
    holder itself, or a native copy of a big-endian one."""
    return holder if holder.dtype == dtype else holder.astype(dtype)


def bytes_of(array: np.ndarray) -> np.ndarray:
    """A flat uint8 view of a C-contiguous array (for checksums)."""
    return array.reshape(-1).view(np.uint8)


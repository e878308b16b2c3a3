"""Opaque state (``__checkpoint_state__``) to JSON and back, exactly.

Plain JSON loses Python ints beyond 2**53 in most readers, has no tuples, bytes, NaN or
numpy arrays. Values JSON cannot carry exactly are written as tagged objects
``{"__ember__": <tag>, "v": ...}``; a user dict that itself has an ``"__ember__"`` key is
wrapped the same way, so decoding is unambiguous. Huge ints are written in hexadecimal,
which is exempt from CPython's limit on decimal digits. Nothing is ever evaluated.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np

from . import _dtypes

TAG = "__ember__"
_SAFE_INT = 2**53


def _tagged(tag: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {TAG: tag, "v": value, **extra}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _encode_array(value: np.ndarray | np.generic, tag: str, where: str) -> dict[str, Any]:
    array = np.asarray(value, order="C")
    try:
        tok = _dtypes.token(array.dtype)
    except TypeError as err:
        raise TypeError(f"{where}: {err}") from None
    return _tagged(tag, _b64(array.tobytes()), dtype=tok, shape=list(array.shape))


def _encode_float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return _tagged("float", repr(value))


def encode(value: Any, where: str = "state") -> Any:
    """A JSON-serialisable form of ``value``; raises TypeError naming ``where`` otherwise."""
    if isinstance(value, np.ndarray):
        return _encode_array(value, "ndarray", where)
    if isinstance(value, np.generic):
        return _encode_array(value, "scalar", where)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value) if -_SAFE_INT < value < _SAFE_INT else _tagged("int", hex(value))
    if isinstance(value, float):
        return _encode_float(float(value))
    if isinstance(value, (bytes, bytearray)):
        return _tagged("bytes", _b64(bytes(value)))
    if isinstance(value, list):
        return [encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return _tagged("tuple", [encode(v, f"{where}[{i}]") for i, v in enumerate(value)])
    if isinstance(value, dict):
        return _encode_dict(value, where)
    raise TypeError(f"{where}: cannot checkpoint a {type(value).__name__} as opaque state")


def _encode_dict(value: dict, where: str) -> Any:
    out = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"{where}: state dict keys must be str, got {key!r}")
        out[key] = encode(item, f"{where}[{key!r}]")
    return _tagged("dict", out) if TAG in out else out


def _decode_array(node: dict[str, Any]) -> np.ndarray:
    dtype = _dtypes.from_token(node["dtype"])
    shape = tuple(node["shape"])
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"bad shape {shape!r}")
    raw = base64.b64decode(node["v"], validate=True)
    if len(raw) != dtype.itemsize * math.prod(shape):
        raise ValueError("array bytes do not match dtype and shape")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def _decode_tagged(node: dict[str, Any]) -> Any:
    tag, v = node[TAG], node["v"]
    if tag == "int":
        return int(v, 16)
    if tag == "float":
        if v not in ("nan", "inf", "-inf"):
            raise ValueError(f"bad float {v!r}")
        return float(v)
    if tag == "bytes":
        return base64.b64decode(v, validate=True)
    if tag == "tuple":
        return tuple(decode(x) for x in v)
    if tag == "dict":
        return {k: decode(x) for k, x in v.items()}
    if tag == "ndarray":
        return _decode_array(node)
    if tag == "scalar":
        return _decode_array(node)[()]
    raise ValueError(f"unknown tag {tag!r}")


def decode(node: Any) -> Any:
    """Inverse of ``encode``. Raises ValueError, TypeError or KeyError on malformed input."""
    if isinstance(node, list):
        return [decode(x) for x in node]
    if isinstance(node, dict):
        if TAG in node:
            return _decode_tagged(node)
        return {k: decode(x) for k, x in node.items()}
    if node is None or isinstance(node, (bool, str, int, float)):
        return node
    raise TypeError(f"bad state node {node!r}")

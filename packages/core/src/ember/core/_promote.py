"""Type promotion: the one table every multi-input op uses (see docs/guide/dtypes.md).

The rules follow PyTorch and JAX, not numpy and not TensorFlow's strictness:

* float64 appears only when an operand is float64 (numpy's ``int32 + float32 -> float64``
  is what this module exists to prevent);
* integers meet floats at the float's dtype (``int64 + float16 -> float16``);
* ``bfloat16`` and ``float16`` meet at ``float32``;
* unsigned meets signed at the next wider signed integer; ``uint64`` with a signed
  integer has no common integer dtype and raises ``DTypeError``;
* Python scalars are *weakly typed*: they take the other operand's
  dtype unless they belong to a higher kind (bool < int < float < complex), in which
  case that kind's default dtype (int32, float32, complex64) enters the promotion;
* tensors, numpy arrays, numpy scalars and lists are *strongly typed* (lists as
  ``em.constant`` converts them).

Which inputs of which op take part is declared here too, in ``PROMOTED_INPUTS``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtypes
from ._convert import convert_array
from ._device import get_device
from ._errors import DTypeError

# Which inputs of a registered op are promoted to one dtype: "all", "values" (every input
# but the first: where's condition), or "into_first" (updates take the first input's
# dtype: index_update and friends write into an existing tensor).
PROMOTED_INPUTS: dict[str, str] = {
    "where": "values", "concat": "all", "matmul": "all", "einsum": "all",
    "index_add": "into_first", "index_update": "into_first",
}
# Every op made by ``_define.binary`` promotes all its inputs.
BINARY_DEFAULT = "all"

_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "V": 2, "c": 3}  # bfloat16's kind is "V"
_FLOAT_ORDER = {"float16": 1, "bfloat16": 1, "float32": 2, "float64": 3}
PY_SCALARS = (bool, int, float, complex)
_WEAK_KIND = {bool: 0, int: 1, float: 2, complex: 3}


def kind_rank(dt: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    r = _KIND_RANK.get(dt.kind)
    if r is None or (r == 2 and dt.kind == "V" and dt != _dtypes.bfloat16):
        raise DTypeError(f"type promotion: unsupported dtype {dt}")
    return r


def _ints(a: np.dtype, b: np.dtype) -> np.dtype:
    if a.kind == b.kind:
        return a if a.itemsize >= b.itemsize else b
    u, s = (a, b) if a.kind == "u" else (b, a)
    if s.itemsize > u.itemsize:
        return s
    if u.itemsize >= 8:
        raise DTypeError(f"type promotion: {a} and {b} have no common integer dtype "
                         "(uint64 values do not fit int64); cast one operand first")
    return np.dtype(f"int{u.itemsize * 16}")


def _floats(a: np.dtype, b: np.dtype) -> np.dtype:
    ra, rb = _FLOAT_ORDER[a.name], _FLOAT_ORDER[b.name]
    if ra == rb:
        return _dtypes.float32 if ra == 1 else a  # float16 with bfloat16: float32
    return a if ra > rb else b


def _complex_of(float_dt: np.dtype) -> np.dtype:
    return _dtypes.complex128 if float_dt == _dtypes.float64 else _dtypes.complex64


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype two strongly typed operands of dtypes ``a`` and ``b`` meet at.

    Examples:
        >>> import ember.core as em
        >>> em.promote_types(em.int32, em.float32)
        dtype('float32')
        >>> em.promote_types(em.bfloat16, em.float16)
        dtype('float32')
    """
    a, b = _dtypes.as_dtype(a), _dtypes.as_dtype(b)
    if a == b:
        return a
    ra, rb = kind_rank(a), kind_rank(b)
    if ra != rb:
        lo, hi = (a, b) if ra < rb else (b, a)
        if kind_rank(lo) == 2 and hi.kind == "c":  # float meets complex: the wider of the two
            return _complex_of(_floats(lo, np.dtype(np.float32 if hi.itemsize == 8
                                                    else np.float64)))
        return hi
    if ra == 1:
        return _ints(a, b)
    if ra == 2:
        return _floats(a, b)
    return a if a.itemsize >= b.itemsize else b  # complex64 / complex128


def is_weak(value: Any) -> bool:
    """Python scalars are weakly typed; tensors, arrays, numpy scalars and lists are not."""
    return type(value) in PY_SCALARS


def _weak_kind(value: Any) -> int:
    return _WEAK_KIND[type(value)]


def _weak_default(value: Any) -> np.dtype:
    d = _dtypes.infer_dtype(value)
    assert d is not None
    return d


def with_weak(dtype: np.dtype, value: Any) -> np.dtype:
    """The dtype a strong ``dtype`` and a weakly typed scalar ``value`` meet at."""
    if _weak_kind(value) <= kind_rank(dtype):
        return dtype
    return promote_types(dtype, _weak_default(value))


def result_type(*operands: Any) -> np.dtype:
    """The dtype ``operands`` (tensors, arrays, dtypes or scalars) are promoted to.

    Examples:
        >>> import numpy as np
        >>> import ember.core as em
        >>> em.result_type(em.constant([1, 2]), 1.5)
        dtype('float32')
        >>> em.result_type(em.constant([1.], dtype=em.float16), 2.0)
        dtype('float16')
        >>> em.result_type(em.constant([1.]), np.ones(2))
        dtype('float64')
    """
    strong = [_strong_dtype(o) for o in operands if not is_weak(o)]
    weak = [o for o in operands if is_weak(o)]
    if not strong and weak:  # only Python scalars: the first one's default dtype
        strong = [_weak_default(weak.pop(0))]
    if not strong:
        raise DTypeError("type promotion: no operands")
    out = strong[0]
    for d in strong[1:]:
        out = promote_types(out, d)
    for w in weak:
        out = with_weak(out, w)
    return out


def _strong_dtype(value: Any) -> np.dtype:
    if isinstance(value, (np.dtype, str, type)):
        return _dtypes.as_dtype(value)
    dt = getattr(value, "dtype", None)
    if isinstance(dt, np.dtype):
        return dt
    # lists and other array-likes: the dtype em.constant gives them
    return np.dtype(convert_array(value, None, get_device("/cpu:0")).dtype)

"""``em.dtypes`` is ``tf.dtypes``: the dtype objects, ``as_dtype``, ``cast`` and ``DType``
under TensorFlow's module name (each is also ``em.X``). There is no string dtype: ember
has no string tensors (text stays on the host; see the preprocessing guide).

Examples:
    >>> import ember.core as em
    >>> em.dtypes.float32 is em.float32, em.dtypes.as_dtype("int64")
    (True, dtype('int64'))
"""

from __future__ import annotations

from ._dtypes import (
    DType,
    as_dtype,
    bfloat16,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._dtypes import bool_ as bool  # (TensorFlow's name, tf.dtypes.bool)
from ._ops.math import cast

half = float16  # TensorFlow's aliases
double = float64

__all__ = [
    "DType", "as_dtype", "bfloat16", "bool", "cast", "complex64", "complex128", "double",
    "float16", "float32", "float64", "half", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64",
]

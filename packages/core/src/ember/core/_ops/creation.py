"""Tensors made from nothing: zeros, ones, fill, range, linspace, eye, *_like."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtypes
from .._registry import execute, register
from . import _args

F = "creation"
_F32 = _dtypes.float32


def _make(name: str, fn: Any) -> Any:
    return register(name, fn, family=F, differentiable=False)


_zeros = _make("zeros", lambda be, shape, dtype: be.xp.zeros(shape, dtype=dtype))
_ones = _make("ones", lambda be, shape, dtype: be.xp.ones(shape, dtype=dtype))
_fill = _make("fill", lambda be, shape, value, dtype: be.xp.full(shape, value, dtype=dtype))
_range = _make("range", lambda be, start, limit, delta, dtype:
               be.xp.arange(start, limit, delta, dtype=dtype))
_linspace = _make("linspace", lambda be, start, stop, num, dtype:
                  be.xp.linspace(start, stop, num, dtype=dtype))
_eye = _make("eye", lambda be, n, mcols, batch, dtype:
             be.xp.broadcast_to(be.xp.eye(n, mcols, dtype=dtype), batch + (n, mcols)).copy())


def zeros(shape: Any, dtype: Any = _F32, name: str | None = None) -> Any:
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    return execute(_zeros, (), {"shape": _args.shape("zeros", shape),
                                "dtype": _dtypes.as_dtype(dtype)})


def ones(shape: Any, dtype: Any = _F32, name: str | None = None) -> Any:
    """A tensor of ones."""
    return execute(_ones, (), {"shape": _args.shape("ones", shape),
                               "dtype": _dtypes.as_dtype(dtype)})


def zeros_like(input: Any, dtype: Any = None, name: str | None = None) -> Any:
    """Zeros with the shape (and dtype, device) of ``input``."""
    x = _args.tensor(input)
    d = x.dtype if dtype is None else _dtypes.as_dtype(dtype)
    return execute(_zeros_like, (x,), {"dtype": d})


def ones_like(input: Any, dtype: Any = None, name: str | None = None) -> Any:
    """Ones with the shape (and dtype, device) of ``input``."""
    x = _args.tensor(input)
    d = x.dtype if dtype is None else _dtypes.as_dtype(dtype)
    return execute(_ones_like, (x,), {"dtype": d})


_zeros_like = _make("zeros_like", lambda be, x, dtype: be.xp.zeros(x.shape, dtype=dtype))
_ones_like = _make("ones_like", lambda be, x, dtype: be.xp.ones(x.shape, dtype=dtype))


def fill(dims: Any, value: Any, name: str | None = None) -> Any:
    """A tensor of shape ``dims`` filled with ``value`` (dtype inferred from the value)."""
    dt = _dtypes.infer_dtype(value) or np.asarray(value).dtype
    return execute(_fill, (), {"shape": _args.shape("fill", dims), "value": value, "dtype": dt})


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,
          name: str | None = None) -> Any:
    """``start, start + delta, ...`` below ``limit`` (``range(n)`` counts from 0)."""
    if limit is None:
        start, limit = 0, start
    vals = [v.numpy().item() if hasattr(v, "numpy") else v for v in (start, limit, delta)]
    if dtype is None:
        dt = _F32 if any(isinstance(v, float) for v in vals) else _dtypes.int32
    else:
        dt = _dtypes.as_dtype(dtype)
    return execute(_range, (), {"start": vals[0], "limit": vals[1], "delta": vals[2], "dtype": dt})


def linspace(start: Any, stop: Any, num: int, dtype: Any = _F32, name: str | None = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive."""
    return execute(_linspace, (), {"start": float(start), "stop": float(stop), "num": int(num),
                                   "dtype": _dtypes.as_dtype(dtype)})


def eye(num_rows: int, num_columns: int | None = None, batch_shape: Any = None,
        dtype: Any = _F32, name: str | None = None) -> Any:
    """The identity matrix (optionally a batch of them)."""
    batch = () if batch_shape is None else _args.shape("eye", batch_shape)
    return execute(_eye, (), {"n": int(num_rows),
                              "mcols": int(num_rows if num_columns is None else num_columns),
                              "batch": batch, "dtype": _dtypes.as_dtype(dtype)})

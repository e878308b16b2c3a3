"""Tensors made from values or from nothing: constant, convert_to_tensor, zeros, ones,
fill, range, linspace, eye, *_like, scatter_nd."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtypes
from .._convert import convert_array
from .._device import Device, get_device
from .._errors import InvalidArgumentError
from .._registry import execute, register
from .._tensor import Tensor, as_tensor, is_variable, wrap
from . import _args
from .array import (
    _check_nd_updates,
    _index_add_op,
    _index_tensor,
    _nd_key,
    broadcast_to,
    copy_to_device,
    reshape,
)

F = "creation"
_F32 = _dtypes.float32


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
    if device is None:
        return as_tensor(value, dt)
    dev = get_device(device)
    if is_variable(value) or type(value) is Tensor:
        return copy_to_device(as_tensor(value, dt), dev)
    return wrap(convert_array(value, _dtypes.infer_dtype(value) if dt is None else dt, dev), dev)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Tensor:
    """A tensor holding ``value`` (optionally cast to ``dtype`` and broadcast to ``shape``).

    Examples:
        >>> import ember.core as em
        >>> em.constant(5)
        ember.Tensor(5, shape=(), dtype=int32)
    """
    del name
    if type(value) is Tensor or is_variable(value):
        value = value.numpy()
    t = as_tensor(value, None if dtype is None else _dtypes.as_dtype(dtype), "constant")
    if shape is not None:
        shape = tuple(int(s) for s in shape)
        n = 1
        for s in shape:
            n *= s
        t = reshape(t, shape) if t.size == n and t.ndim else broadcast_to(t, shape)
    return t


def _make(name: str, fn: Any) -> Any:
    return register(name, fn, family=F, differentiable=False)


def _ones_forward(be: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    out = be.xp.empty(shape, dtype=dtype)  # xp.ones is Python around this: twice the cost
    out.fill(1)  # on small arrays (a tape's seed gradient), the same fill kernel on a GPU
    return out


_zeros = _make("zeros", lambda be, shape, dtype: be.xp.zeros(shape, dtype=dtype))
_ones = _make("ones", _ones_forward)
_fill = _make("fill", lambda be, shape, value, dtype: be.xp.full(shape, value, dtype=dtype))
_range = _make("range", lambda be, start, limit, delta, dtype:
               be.xp.arange(start, limit, delta, dtype=dtype))
def _linspace_values(be: Any, start: float, stop: float, num: int, dtype: Any) -> Any:
    """TensorFlow's ``linspace`` values: ``start + delta * i`` in the dtype itself, ``delta
    = (stop - start) / (num - 1)``, the ends exactly ``start`` and ``stop`` (numpy's
    float64 values rounded to float32 differ from TensorFlow's in the last place for about
    a third of them)."""
    xp = be.xp
    if num <= 1 or dtype.kind != "f":
        return xp.linspace(start, stop, num, dtype=dtype)
    first, last = dtype.type(start), dtype.type(stop)
    out = xp.arange(num, dtype=dtype)
    out *= (last - first) / dtype.type(num - 1)
    out += first
    out[0] = first
    out[-1] = last
    return out


_linspace = _make("linspace", _linspace_values)
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
_ones_like = _make("ones_like", lambda be, x, dtype: _ones_forward(be, x.shape, dtype))


def fill(dims: Any, value: Any, name: str | None = None) -> Any:
    """A tensor of shape ``dims`` filled with ``value`` (dtype inferred from the value).

    A tensor ``value`` (0-d) is an input of the result, not a constant: a traced function
    replays it with the call's value, and gradients flow back to it (TensorFlow's)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise InvalidArgumentError(f"fill: value must be 0-d, got shape {value.shape}")
        return broadcast_to(value, _args.shape("fill", dims))
    dt = _dtypes.infer_dtype(value) or np.asarray(value).dtype
    return execute(_fill, (), {"shape": _args.shape("fill", dims), "value": value, "dtype": dt})


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,
          name: str | None = None) -> Any:
    """``start, start + delta, ...`` below ``limit`` (``range(n)`` counts from 0)."""
    if limit is None:
        start, limit = 0, start
    vals = [v.numpy().item() if hasattr(v, "numpy") else v for v in (start, limit, delta)]
    if dtype is None:
        # TensorFlow's: each argument's dtype as a tensor (a Python int int32, a float
        # float32, a tensor's or numpy value's its own), the widest of int32 < int64 <
        # float16 < bfloat16 < float32 < float64
        kinds = [_value_dtype(v) for v in (start, limit, delta)]
        dt = max(kinds, key=lambda d: _RANGE_ORDER.index(d) if d in _RANGE_ORDER else -1)
        if dt not in _RANGE_ORDER:
            raise InvalidArgumentError(f"range: arguments of dtype {dt} are not supported "
                                       f"(use {[str(d) for d in _RANGE_ORDER]}, or dtype=)")
    else:
        dt = _dtypes.as_dtype(dtype)
    return execute(_range, (), {"start": vals[0], "limit": vals[1], "delta": vals[2], "dtype": dt})


_RANGE_ORDER = [_dtypes.int32, _dtypes.int64, _dtypes.float16, _dtypes.bfloat16, _F32,
                _dtypes.float64]


def _value_dtype(v: Any) -> Any:
    """The dtype ``v`` converts to: a tensor's, variable's or numpy value's own; a Python
    int int32 (int64 when it does not fit), a float float32."""
    dt = getattr(v, "dtype", None)
    if dt is not None:
        return _dtypes.as_dtype(dt)
    return _dtypes.infer_dtype(v) or np.asarray(v).dtype


def linspace(start: Any, stop: Any, num: int, dtype: Any = None, name: str | None = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive.

    The dtype is ``dtype`` if given, else ``start``'s when it is a floating tensor or numpy
    value (as TensorFlow's), else float32 (TensorFlow computes integer ends in float64)."""
    if dtype is None:
        dt = _value_dtype(start)
        dt = dt if _dtypes.is_floating(dt) else _F32
    else:
        dt = _dtypes.as_dtype(dtype)
    return execute(_linspace, (), {"start": float(start), "stop": float(stop), "num": int(num),
                                   "dtype": dt})


def eye(num_rows: int, num_columns: int | None = None, batch_shape: Any = None,
        dtype: Any = _F32, name: str | None = None) -> Any:
    """The identity matrix (optionally a batch of them)."""
    batch = () if batch_shape is None else _args.shape("eye", batch_shape)
    return execute(_eye, (), {"n": int(num_rows),
                              "mcols": int(num_rows if num_columns is None else num_columns),
                              "batch": batch, "dtype": _dtypes.as_dtype(dtype)})


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Any:
    """A zero tensor of ``shape`` with ``updates`` added at ``indices`` (duplicates add)."""
    u = _args.tensor(updates)
    z = zeros(_args.shape("scatter_nd", shape), dtype=u.dtype)
    idx = _index_tensor(z, indices, "scatter_nd")
    _check_nd_updates("scatter_nd", z.shape, idx, u)
    return execute(_index_add_op, (z, u, idx), _nd_key("scatter_nd", indices))

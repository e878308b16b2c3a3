"""``keras.ops``' core functions (``keras.ops.core``): conversion, shape and dtype, control
flow, scatter and slice updates, ``custom_gradient``; and the argument helpers the other
modules of ``nn.ops`` share (``tensor``, ``reject``, ``on_device_of``).

Control flow runs eagerly, as Keras's NumPy backend runs it: ``cond``, ``while_loop`` and
``fori_loop`` read their predicates to the host (one sync on a GPU each time).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import ember.core as em
from ember import tape

__all__ = [
    "cast", "cond", "convert_to_numpy", "convert_to_tensor", "custom_gradient", "dtype",
    "fori_loop", "is_tensor", "map", "scan", "scatter", "scatter_update", "shape", "slice",
    "slice_update", "stop_gradient", "unstack", "vectorized_map", "while_loop",
]

_slice = slice


# --- helpers shared by the modules of nn.ops ---------------------------------------------
def reject(fn: str, arg: str, value: Any, why: str = "") -> em.InvalidArgumentError:
    """The error for an argument value ``nn.ops.<fn>`` cannot honour (raise it)."""
    return em.InvalidArgumentError(
        f"ember.nn.ops.{fn}: {arg}={value!r} is not supported" + (f" ({why})" if why else ""))


def tensor(x: Any, dtype: Any = None) -> em.Tensor:
    """``x`` as an ember tensor (tensors pass, variables are read; Python and numpy values
    go to the current device), cast to ``dtype`` when one is given."""
    t = x if type(x) is em.Tensor else em.convert_to_tensor(x)
    if dtype is not None and t.dtype != em.as_dtype(dtype):
        t = em.cast(t, dtype)
    return t


def as_float(x: Any) -> em.Tensor:
    """``x`` as a tensor; integer and bool tensors become float32 (as Keras's float ops)."""
    t = tensor(x)
    return em.cast(t, em.float32) if t.dtype.kind in "biu" else t


def _py_number(x: Any) -> bool:
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def as_floats(*xs: Any, weak: bool = True) -> list[em.Tensor]:
    """The operands of a float-valued function of several inputs as tensors of one dtype:
    Keras's ``result_type(x1, x2, ..., float)``. Integer and bool tensors meet a float
    tensor at its dtype (float16 with int8 is float16); integers and bools alone give
    float32 (float64 only from a float64 tensor). Python numbers are weak when ``weak``
    (float16 with ``2.5`` stays float16); otherwise they are first converted as Keras's
    ``convert_to_tensor`` converts them (``2.5`` to a float32 tensor, which makes float16
    float32; ``2`` to int32, which does not). Converting each operand alone
    (``as_float``) would make float16 with an int tensor float32."""
    ts = [x if weak and _py_number(x) else tensor(x) for x in xs]
    dt = em.result_type(*ts, 1.0)
    like = next((t for t in ts if isinstance(t, em.Tensor)), None)
    with on_device_of(like) if like is not None else contextlib.nullcontext():
        return [em.convert_to_tensor(t, dtype=dt) if _py_number(t) else tensor(t, dt)
                for t in ts]


def ints_for_bools(*xs: Any) -> list[Any]:
    """The operands of an arithmetic function, with bools as int32 when they all are bools
    (Keras's ``mod``, ``floor_divide``, ``power`` and shifts give int32 there, where
    numpy's loops give int8); otherwise as they are."""
    ts = [x if _py_number(x) else tensor(x) for x in xs]
    if em.result_type(*ts) != em.bool_:
        return ts
    like = next((t for t in ts if isinstance(t, em.Tensor)), None)
    with on_device_of(like) if like is not None else contextlib.nullcontext():
        return [em.cast(tensor(t), em.int32) for t in ts]


def on_device_of(t: em.Tensor) -> contextlib.AbstractContextManager[Any]:
    """A scope that puts new tensors (masks, ranges) on ``t``'s device."""
    return em.device(t.device)


def axes_of(fn: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (an int or a sequence) as a tuple of non-negative ints below ``ndim``."""
    seq = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    out = []
    for a in seq:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise em.InvalidArgumentError(f"ember.nn.ops.{fn}: axis {a} is out of range for "
                                          f"a tensor of rank {ndim}")
        out.append(a % max(ndim, 1))
    if len(set(out)) != len(out):
        raise em.InvalidArgumentError(f"ember.nn.ops.{fn}: repeated axis in {axis!r}")
    return tuple(out)


def host_int(v: Any) -> int:
    """A Python int from an int, a numpy scalar or a one-element tensor (read to the host)."""
    if isinstance(v, (em.Tensor, em.Variable)):
        return int(tensor(v).numpy().reshape(()))
    return int(v)


def host_ints(v: Any) -> list[int]:
    """Python ints from a sequence, an array or a tensor (read to the host)."""
    if isinstance(v, (em.Tensor, em.Variable)):
        return [int(i) for i in tensor(v).numpy().reshape(-1)]
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    return [host_int(i) for i in np.asarray(v, dtype=object).reshape(-1)]


# --- nests (lists, tuples, dicts) --------------------------------------------------------
def _leaves(s: Any) -> list[Any]:
    if isinstance(s, (list, tuple)):
        return [leaf for item in s for leaf in _leaves(item)]
    if isinstance(s, dict):
        return [leaf for k in sorted(s) for leaf in _leaves(s[k])]
    return [s]


def _pack(s: Any, leaves: Iterator[Any]) -> Any:
    if isinstance(s, (list, tuple)):
        items = [_pack(item, leaves) for item in s]
        return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
    if isinstance(s, dict):
        packed = {k: _pack(s[k], leaves) for k in sorted(s)}
        return {k: packed[k] for k in s}
    return next(leaves)


def _nested(s: Any) -> bool:
    return isinstance(s, (list, tuple, dict))


# --- conversion, shape and dtype ---------------------------------------------------------
def convert_to_tensor(x: Any, dtype: Any = None, sparse: Any = None, ragged: Any = None
                      ) -> em.Tensor:
    """``x`` as a tensor, cast to ``dtype`` if given (``keras.ops.convert_to_tensor``)."""
    if sparse:
        raise reject("convert_to_tensor", "sparse", sparse, "ember has no sparse tensors")
    if ragged:
        raise reject("convert_to_tensor", "ragged", ragged, "ember has no ragged tensors")
    if dtype is not None and not isinstance(x, (em.Tensor, em.Variable)):
        return em.convert_to_tensor(x, dtype=dtype)
    return tensor(x, dtype)


def convert_to_numpy(x: Any) -> np.ndarray:
    """``x`` as a numpy array on the host (a copy: changing it never changes ``x``)."""
    if isinstance(x, (em.Tensor, em.Variable)):
        t = tensor(x)
        a = t.numpy()
        return a.copy() if t.device.startswith("/cpu") else np.asarray(a)
    return np.array(x)


def is_tensor(x: Any) -> bool:
    """Whether ``x`` is an ember tensor."""
    return isinstance(x, em.Tensor)


def shape(x: Any) -> tuple[int, ...]:
    """The shape as a tuple of Python ints (``keras.ops.shape`` of a concrete tensor)."""
    s = getattr(x, "shape", None)
    return tuple(int(d) for d in (np.shape(x) if s is None else s))


def dtype(x: Any) -> str:
    """The dtype's name, as Keras writes it (``"float32"``, ``"int32"``, ``"bool"``)."""
    if not isinstance(x, (em.Tensor, em.Variable)):
        with em.device("/cpu:0"):
            x = tensor(x)
    return str(em.as_dtype(x.dtype).name)


def cast(x: Any, dtype: Any) -> em.Tensor:
    """``x`` converted to ``dtype`` (floats to ints truncate toward zero)."""
    return em.cast(tensor(x), dtype)


def stop_gradient(variable: Any) -> em.Tensor:
    """The same value, with no gradient flowing back through it."""
    return em.stop_gradient(tensor(variable))


# --- control flow (eager) ----------------------------------------------------------------
def cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]) -> Any:
    """``true_fn()`` if ``pred`` holds, else ``false_fn()``."""
    return true_fn() if bool(pred) else false_fn()


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any,
               maximum_iterations: Any = None) -> Any:
    """Run ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (at most
    ``maximum_iterations`` times); a tuple or list of loop variables comes back as a tuple."""
    is_seq = isinstance(loop_vars, (tuple, list))
    vs = tuple(loop_vars) if is_seq else (loop_vars,)
    vs = tuple(_pack(v, iter([tensor(leaf) for leaf in _leaves(v)])) for v in vs)
    n = 0
    while (maximum_iterations is None or n < host_int(maximum_iterations)) and bool(cond(*vs)):
        out = body(*vs)
        vs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        n += 1
    return vs if is_seq else vs[0]


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``, from ``init_val``."""
    val = init_val
    for i in range(host_int(lower), host_int(upper)):
        val = body_fun(i, val)
    return val


def _stack_nests(outs: list[Any], like: Any) -> Any:
    if not outs:
        return _pack(like, iter([em.zeros((0,) + tuple(tensor(leaf).shape), tensor(leaf).dtype)
                                 for leaf in _leaves(like)]))
    columns = zip(*[_leaves(o) for o in outs])
    return _pack(outs[0], iter([em.stack([tensor(c) for c in col]) for col in columns]))


def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: Any = None,
         reverse: bool = False, unroll: Any = 1) -> tuple[Any, Any]:
    """``carry, y = f(carry, x)`` over the leading axis of ``xs`` (nests allowed); returns
    the last carry and the ``y``s stacked. ``unroll`` does not change the result."""
    if not callable(f):
        raise TypeError(f"ember.nn.ops.scan: f must be callable, got {f!r}")
    if not isinstance(unroll, bool) and (not isinstance(unroll, int) or unroll < 1):
        raise em.InvalidArgumentError(f"ember.nn.ops.scan: unroll must be a positive int or "
                                      f"a bool, got unroll={unroll!r}")
    if xs is None and length is None:
        raise em.InvalidArgumentError("ember.nn.ops.scan: give xs or length")
    xs_flat = [] if xs is None else [tensor(x) for x in _leaves(xs)]
    n = host_int(length) if length is not None else xs_flat[0].shape[0]
    carry = _pack(init, iter([tensor(leaf) for leaf in _leaves(init)])) if _nested(init) \
        else tensor(init)
    ys: list[Any] = []
    steps = range(n - 1, -1, -1) if reverse else range(n)
    for i in steps:
        x = None if xs is None else _pack(xs, iter([t[i] for t in xs_flat])) if _nested(xs) \
            else xs_flat[0][i]
        carry, y = f(carry, x)
        ys.append(y if y is not None else _pack(carry, iter([em.zeros_like(tensor(c))
                                                             for c in _leaves(carry)])))
    if reverse:
        ys.reverse()
    return carry, _stack_nests(ys, carry)


def map(f: Callable[[Any], Any], xs: Any) -> Any:
    """``f`` applied to each slice of ``xs`` along its leading axis, the results stacked."""
    return scan(lambda _, x: ((), f(x)), (), xs)[1]


def vectorized_map(function: Callable[[Any], Any], elements: Any) -> Any:
    """``function`` applied to each slice of ``elements`` (a tensor, or a tuple or list of
    tensors sliced together) along the leading axis, the results stacked."""
    if isinstance(elements, (list, tuple)):
        ts = [tensor(e) for e in elements]
        outs = [function(type(elements)(t[i] for t in ts)) for i in range(ts[0].shape[0])]
    else:
        t = tensor(elements)
        outs = [function(t[i]) for i in range(t.shape[0])]
    return _stack_nests(outs, None)


def custom_gradient(f: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``f(*args) -> (y, grad_fn)`` so that tapes use ``grad_fn(upstream)``
    (``ember.tape.custom_gradient``)."""
    return tape.custom_gradient(f)


# --- scatter, slices ---------------------------------------------------------------------
def scatter(indices: Any, values: Any, shape: Any) -> em.Tensor:
    """Zeros of ``shape`` with ``values`` added at ``indices`` (repeated indices add up)."""
    return em.scatter_nd(indices, tensor(values), shape)


def scatter_update(inputs: Any, indices: Any, updates: Any, reduction: Any = None) -> em.Tensor:
    """A copy of ``inputs`` with ``updates`` written at ``indices`` (``reduction="add"``:
    added there). Without a reduction, an element picked twice is refused (which update
    lands would be undefined on a GPU)."""
    x = tensor(inputs)
    u = tensor(updates, x.dtype)
    if reduction is None:
        return em.tensor_scatter_nd_update(x, indices, u)
    if reduction == "add":
        return em.tensor_scatter_nd_add(x, indices, u)
    raise reject("scatter_update", "reduction", reduction, "ember has None and 'add'")


def slice(inputs: Any, start_indices: Any, shape: Any) -> em.Tensor:
    """The block of ``inputs`` of ``shape`` starting at ``start_indices``."""
    starts, sizes = host_ints(start_indices), host_ints(shape)
    if len(starts) != len(sizes):
        raise em.InvalidArgumentError(f"ember.nn.ops.slice: start_indices {starts} and shape "
                                      f"{sizes} must have the same length")
    return em.slice(tensor(inputs), starts, sizes)


def slice_update(inputs: Any, start_indices: Any, updates: Any) -> em.Tensor:
    """A copy of ``inputs`` with the block at ``start_indices`` replaced by ``updates``.

    Start indices given as tensors (or a list holding one) are not read on the host: the
    block's positions are computed by ops and written with ``tensor_scatter_nd_update``,
    so a traced function replays it for every start (as XLA's dynamic_update_slice, which
    Keras's TensorFlow and JAX backends use). A block reaching outside ``inputs`` is an
    error either way (those backends would clamp the start; numpy's raises)."""
    x = tensor(inputs)
    u = tensor(updates, x.dtype)
    if _holds_tensor(start_indices):
        st = em.reshape(em.convert_to_tensor(start_indices), [-1])
        if st.shape[0] != x.ndim or u.ndim != x.ndim:
            raise em.InvalidArgumentError(f"ember.nn.ops.slice_update: start_indices of "
                                          f"shape {st.shape} and updates {u.shape} must have "
                                          f"one entry per axis of inputs {x.shape}")
        with on_device_of(x):
            st = em.cast(st, em.int64)
            grids = em.meshgrid(*[em.range(n, dtype=em.int64) for n in u.shape],
                                indexing="ij") if u.ndim else []
            idx = em.stack([em.add(g, st[i]) for i, g in enumerate(grids)], axis=-1)
        return em.tensor_scatter_nd_update(x, idx, u)
    starts = host_ints(start_indices)
    if len(starts) != x.ndim or u.ndim != x.ndim:
        raise em.InvalidArgumentError(f"ember.nn.ops.slice_update: start_indices {starts} and "
                                      f"updates {u.shape} must have one entry per axis of "
                                      f"inputs {x.shape}")
    return em.index_update(x, tuple(_slice(s, s + n) for s, n in zip(starts, u.shape)), u)


def _holds_tensor(v: Any) -> bool:
    if isinstance(v, (em.Tensor, em.Variable)):
        return True
    return isinstance(v, (list, tuple)) and any(_holds_tensor(e) for e in v)


def unstack(x: Any, num: Any = None, axis: int = 0) -> list[em.Tensor]:
    """The slices of ``x`` along ``axis``, that axis removed."""
    return list(em.unstack(tensor(x), num, axis))

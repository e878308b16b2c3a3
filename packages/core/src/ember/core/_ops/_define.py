"""The element-wise op factory: it registers an op and builds its public function.

The public function has a fast path: with tensor operands on one device (and, for two
operands, of one dtype), it calls the backend function directly instead of going through
``execute`` (the difference is most of the overhead on small tensors), wraps the result
and tells active recorders through ``notify``, as ``execute`` does. It is the one path for
eager calls, tapes and graph mode's tracing alike: what differs is only whether ``notify``
finds recorders.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .._device import CPU0
from .._registry import execute, notify, register
from .._tensor import Tensor
from ..recording import _recorders

_new = object.__new__
_F32 = np.dtype(np.float32)
# The CUDA C expressions of the xp functions the factory can name ({0}, {1}: the operands,
# floating point: graph mode fuses chains of them into one kernel on a GPU, for float32
# and float64 only). maximum/minimum propagate NaN, as numpy's do.
CUDA_EXPRESSIONS = {
    "add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
    "maximum": "({0} > {1} || isnan({0})) ? {0} : {1}",
    "minimum": "({0} < {1} || isnan({0})) ? {0} : {1}",
    "negative": "-{0}", "abs": "fabs({0})", "square": "{0} * {0}",
}
_ERRORS = (ValueError, TypeError, IndexError, OverflowError)


def to_float(x: Any) -> Any:
    """Integer and bool operands of float-only functions compute in float32 (as PyTorch)."""
    return x.astype(_F32) if x.dtype.kind in "biu" else x


def _resolve(forward: Callable[..., Any] | str
             ) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any] | None]:
    """(forward(be, *arrays), direct(be) -> the callable taking arrays only, and the
    ``out=`` form when ``forward`` names an ``xp`` function, else None)."""
    if isinstance(forward, str):
        xp_name = forward
        return ((lambda be, *a: getattr(be.xp, xp_name)(*a)),
                (lambda be: getattr(be.xp, xp_name)),
                (lambda be, *a, out: getattr(be.xp, xp_name)(*a, out=out)))
    fwd = forward
    # a partial, not a lambda: the fast path's call into the forward stays in C
    return fwd, (lambda be: functools.partial(fwd, be)), None


class _PerDevice(dict):  # type: ignore[type-arg]
    """device -> the backend function of one op, resolved on first use on that device."""

    def __init__(self, resolve: Callable[[Any], Callable[..., Any]]) -> None:
        super().__init__()
        self.resolve = resolve

    def __missing__(self, device: Any) -> Callable[..., Any]:
        f = self[device] = self.resolve(device.backend)
        return f


def elementwise(name: str, forward: Callable[..., Any] | str, family: str, doc: str,
                arity: int, differentiable: bool = True,
                cuda: str | None = None) -> Callable[..., Any]:
    """Register an element-wise op of ``arity`` 1 or 2 and return its public function.

    The fast path is written inline for each arity (only the guard and the call differ):
    moving it into a shared helper costs a Python call per op, about a third of
    ``em.add``'s overhead on small tensors. Each step of it was counted (instructions per
    ``em.add`` of 2x2 float32 under callgrind; numpy's ``np.add`` call is about 4,650): the
    CPU's function held in the closure rather than looked up by device (-300), dtypes
    compared by identity (-160; equal dtypes that are distinct objects, rare, take
    ``execute``'s path), the recorders read through a bound ``get`` (-460).

    Args:
        name: The op's name.
        forward: ``f(be, *arrays)`` or the name of an ``xp`` function.
        family: The op family: the module of ``_ops`` that defines it.
        doc: The public function's docstring.
        arity: 1 (``fn(x, name=None)``) or 2 (``fn(x, y, name=None)``; both inputs are
            promoted to one dtype first, see ``ember.core._promote``, and the fast path
            runs only when they already share one).
        differentiable: False for ops no tape records.
        cuda: The op's CUDA C expression on float operands (``{0}``, ``{1}``), if the
            forward is not an ``xp`` function of ``CUDA_EXPRESSIONS``.

    Returns:
        The public function.
    """
    if arity not in (1, 2):
        raise ValueError(f"elementwise({name!r}): arity must be 1 or 2, got {arity}")
    fwd, direct, out = _resolve(forward)
    if cuda is None and isinstance(forward, str):
        cuda = CUDA_EXPRESSIONS.get(forward)
    op = register(name, fwd, family=family, differentiable=differentiable, out=out,
                  promote="all" if arity == 2 else None, cuda=cuda)
    fns = _PerDevice(direct)
    cpu = CPU0
    on_cpu = fns[CPU0]  # numpy has every function the ops name

    def fn1(x: Any, name: str | None = None) -> Any:
        if type(x) is Tensor:
            d = x._device
            try:
                data = on_cpu(x._data) if d is cpu else fns[d](x._data)
            except _ERRORS:
                return execute(op, (x,))  # raises the error that names the op
            t = _new(Tensor)
            t._data = data
            t._device = d
            recs = _recorders()
            if recs:
                notify(recs, op, (x,), None, (t,))
            return t
        return execute(op, (x,))

    def fn2(x: Any, y: Any, name: str | None = None) -> Any:
        if type(x) is Tensor and type(y) is Tensor:
            d = x._device
            a = x._data
            b = y._data
            if d is y._device and a.dtype is b.dtype:
                try:
                    data = on_cpu(a, b) if d is cpu else fns[d](a, b)
                except _ERRORS:
                    return execute(op, (x, y))  # raises the error that names the op
                t = _new(Tensor)
                t._data = data
                t._device = d
                recs = _recorders()
                if recs:
                    notify(recs, op, (x, y), None, (t,))
                return t
        return execute(op, (x, y))

    fn = fn1 if arity == 1 else fn2
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = doc
    return fn


def unary(name: str, forward: Callable[..., Any] | str, family: str, doc: str,
          differentiable: bool = True, cuda: str | None = None) -> Callable[..., Any]:
    """``elementwise`` with one operand."""
    return elementwise(name, forward, family, doc, 1, differentiable, cuda)


def binary(name: str, forward: Callable[..., Any] | str, family: str, doc: str,
           differentiable: bool = True, cuda: str | None = None) -> Callable[..., Any]:
    """``elementwise`` with two operands, promoted to one dtype."""
    return elementwise(name, forward, family, doc, 2, differentiable, cuda)

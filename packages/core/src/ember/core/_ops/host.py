"""The host family: ``em.py_function`` and ``em.numpy_function``, a Python function called as
an op, on every call of a traced function.

Eagerly it is a plain call: the function's own ops run, and a tape differentiates through
them. Inside ``graph.function`` it is one op of the trace, ``py_function``, whose forward
calls the Python function again on every replay with the call's values (as TensorFlow's
does), with nothing recording it; graph mode keeps it even when its result is unused, and
checks each result's shape on every replay. Under a tape as well as a trace, a replay
could not be differentiated through it, so such a call tells the tracer it cannot be
replayed (the function then runs eagerly, where the tape sees the inner ops).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

from .._device import current_device
from .._device import device as device_scope
from .._dtypes import as_dtype
from .._errors import DTypeError, InvalidArgumentError
from .._registry import notify, register
from .._tensor import Tensor, wrap
from ..recording import _active
from .creation import convert_to_tensor


class _Log:
    """The py_function calls made so far in one call of a traced function, in order, and
    the position of the next one in the attempt running now (a replay, then, after a
    failed guard, the trace or eager run that redoes the call)."""

    __slots__ = ("at", "calls")

    def __init__(self) -> None:
        self.calls: list[tuple[Any, list[Any], tuple[Tensor, ...]]] = []
        self.at = 0


_log: ContextVar[_Log | None] = ContextVar("ember_py_function_log", default=None)


@contextlib.contextmanager
def py_function_log() -> Iterator[None]:
    """Around one call of a traced function (graph mode's): a py_function a failed replay
    already called, with the same function and equal inputs at the same place in the
    call's sequence, gives its results again to the attempt that redoes the call, instead
    of calling the Python function twice (TensorFlow calls it once per call)."""
    log = _Log()
    token = _log.set(log)
    try:
        yield
    finally:
        _log.reset(token)


def restart_log() -> None:
    """A new attempt at the call begins (graph mode calls this before each)."""
    log = _log.get()
    if log is not None:
        log.at = 0


def _same_function(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are one function: the same object, or made by the same ``def`` or
    ``lambda`` over the same captured objects (an inline lambda is a new object each time
    the traced function's Python runs), or the same method of the same object."""
    if a is b:
        return True
    if getattr(a, "__func__", None) is not None:
        return (getattr(b, "__self__", None) is getattr(a, "__self__", None)
                and _same_function(a.__func__, getattr(b, "__func__", None)))
    code = getattr(a, "__code__", None)
    if code is None or code is not getattr(b, "__code__", None):
        return False
    cells_a, cells_b = a.__closure__ or (), b.__closure__ or ()
    try:
        return (a.__defaults__ == b.__defaults__ and len(cells_a) == len(cells_b)
                and all(x.cell_contents is y.cell_contents for x, y in zip(cells_a, cells_b)))
    except ValueError:  # a cell not yet filled
        return False


def _called(func: Callable[..., Any], inputs: Sequence[Tensor], tout: tuple[Any, ...],
            device: Any) -> tuple[Tensor, ...]:
    """``func``'s results on ``inputs``: called now, or taken from the call log."""
    log = _log.get()
    if log is None:
        return _results(func(*inputs), tout, device)
    host = [np.asarray(t._device.backend.to_host(t._data)) for t in inputs]
    i = log.at
    log.at += 1
    if i < len(log.calls):
        f, ins, outs = log.calls[i]
        if _same_function(f, func) and len(ins) == len(host) and all(
                a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
                for a, b in zip(ins, host)):
            return outs
        del log.calls[i:]  # this attempt went another way: call from here on
    outs = _results(func(*inputs), tout, device)
    log.calls.append((func, host, outs))
    return outs


def _results(result: Any, tout: Sequence[Any], device: Any) -> tuple[Tensor, ...]:
    """The function's results as tensors of ``tout`` on ``device``."""
    if not tout:
        if result is not None:
            raise InvalidArgumentError(f"py_function: Tout is empty but the function returned "
                                       f"{type(result).__name__}")
        return ()
    values = list(result) if len(tout) > 1 or isinstance(result, (list, tuple)) else [result]
    if len(values) != len(tout):
        raise InvalidArgumentError(f"py_function: the function returned {len(values)} values "
                                   f"for Tout's {len(tout)}")
    out = []
    for i, (v, dt) in enumerate(zip(values, tout)):
        if isinstance(v, Tensor) and v.dtype != dt:
            raise DTypeError(f"py_function: result {i} is {v.dtype.name}, Tout says "
                             f"{dt.name}")
        if not isinstance(v, Tensor):
            with device_scope(device):
                v = convert_to_tensor(v, dtype=dt)
        elif v._device is not device:
            v = v.to(device)
        out.append(v)
    return tuple(out)


def _forward(be: Any, *arrays: Any, func: Callable[..., Any], tout: tuple[Any, ...],
             device: Any) -> Any:
    """The op's forward (a replay's step): ``func`` on tensors over copies of the call's
    arrays (the replay may reuse their buffers), recorded by nothing; copies of its
    results' arrays."""
    token = _active.set(())
    try:
        outs = _called(func, [wrap(be.xp.array(a, copy=True), device) for a in arrays],
                       tout, device)
    finally:
        _active.reset(token)
    arrays_out = tuple(be.xp.array(t._data, copy=True) for t in outs)
    return arrays_out if len(arrays_out) != 1 else arrays_out[0]


OP = register("py_function", _forward, family="host", differentiable=False)


def py_function(func: Callable[..., Any] | None = None, inp: Sequence[Any] | None = None,
                Tout: Any = None, name: str | None = None) -> Any:
    """Call the Python function ``func`` on the tensors ``inp``, as an op.

    As TensorFlow's ``tf.py_function``: inside ``graph.function`` the function runs on
    every call (not only while tracing), with that call's values. Its results are
    converted to ``Tout``. Used as a decorator (``@em.py_function(Tout=em.float32)``) it
    wraps ``func``. Eagerly, and under a tape, it is a plain call: gradients flow through
    the function's own ops.

    Args:
        func: The function; it takes tensors and returns what ``Tout`` describes.
        inp: Its arguments (tensors, or values converted to tensors).
        Tout: One dtype (one result), a list or tuple of dtypes (a list of results), or an
            empty list (the function returns None).
        name: Accepted for TensorFlow compatibility.

    Returns:
        A tensor, or a list of tensors when ``Tout`` is a list or tuple.

    Raises:
        InvalidArgumentError: ``Tout`` is missing, or the function returned a different
            number of values.
        DTypeError: a result is a tensor of another dtype than ``Tout`` says.

    Examples:
        >>> import ember.core as em
        >>> em.py_function(lambda x: x * 2, [em.constant(3.0)], Tout=em.float32)
        ember.Tensor(6.0, shape=(), dtype=float32)
    """
    if Tout is None:
        raise InvalidArgumentError("py_function: give Tout, the dtype (or list of dtypes) "
                                   "of what the function returns")
    if func is None:
        def decorator(f: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                return py_function(f, list(args), Tout, name)
            call.__name__ = getattr(f, "__name__", "py_function")
            call.__doc__ = getattr(f, "__doc__", None)
            return call
        return decorator
    return _host_call("py_function", func, inp, Tout, differentiable=True)


def numpy_function(func: Callable[..., Any] | None = None, inp: Sequence[Any] | None = None,
                   Tout: Any = None, stateful: bool = True, name: str | None = None) -> Any:
    """Call the Python function ``func`` on the numpy values of ``inp``, as an op
    (TensorFlow's ``tf.numpy_function``).

    As ``py_function``, but ``func`` receives numpy arrays (copies on the host) and the
    op has no gradient: under a tape its results are constants, so a traced function
    that calls it under a tape still replays (a ``py_function`` there makes it run
    eagerly). ``func`` returns numpy arrays or values, converted to ``Tout``.

    Args:
        func: The function; it takes numpy arrays and returns what ``Tout`` describes.
        inp: Its arguments (tensors, arrays or values).
        Tout: One dtype, a list or tuple of dtypes, or an empty list.
        stateful: Accepted for TensorFlow; ember calls ``func`` on every call either way
            (as TensorFlow does for a stateful function, its default).
        name: Accepted for TensorFlow compatibility.

    Examples:
        >>> import numpy as np
        >>> import ember.core as em
        >>> em.numpy_function(lambda a: np.sort(a)[::-1], [em.constant([1, 3, 2])], em.int32)
        ember.Tensor([3 2 1], shape=(3,), dtype=int32)
    """
    if not isinstance(stateful, bool):
        raise TypeError(f"numpy_function: stateful must be a bool, got {stateful!r}")
    if Tout is None:
        raise InvalidArgumentError("numpy_function: give Tout, the dtype (or list of dtypes) "
                                   "of what the function returns")
    if func is None:
        def decorator(f: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                return numpy_function(f, list(args), Tout, stateful, name)
            call.__name__ = getattr(f, "__name__", "numpy_function")
            call.__doc__ = getattr(f, "__doc__", None)
            return call
        return decorator
    if not callable(func):
        raise TypeError(f"numpy_function: func must be callable, got {type(func).__name__}")

    def on_arrays(*tensors: Tensor) -> Any:
        return func(*[np.asarray(t._device.backend.to_host(t._data)) for t in tensors])

    return _host_call("numpy_function", on_arrays, inp, Tout, differentiable=False)


def _host_call(op: str, func: Any, inp: Any, Tout: Any, differentiable: bool) -> Any:
    if not callable(func):
        raise TypeError(f"{op}: func must be callable, got {type(func).__name__}")
    single = not isinstance(Tout, (list, tuple))
    tout = (as_dtype(Tout),) if single else tuple(as_dtype(d) for d in Tout)
    inputs = tuple(x if isinstance(x, Tensor) else convert_to_tensor(x) for x in (inp or ()))
    device = inputs[0]._device if inputs else current_device()
    recs = _active.get()
    tracers = tuple(r for r in recs if getattr(r, "traces_all", False))
    if tracers and (len(tracers) == len(recs) or not differentiable):
        # (no gradient: a tape sees nothing, and the trace replays the call)
        be = device.backend
        data = _forward(be, *[t._data for t in inputs], func=func, tout=tout, device=device)
        outs = tuple(wrap(a, device) for a in (data if len(tout) != 1 else (data,)))
        notify(tracers, OP, inputs, {"func": func, "tout": tout, "device": device}, outs)
    else:
        if tracers:
            for r in tracers:
                f = getattr(r, "cannot_replay", None)
                if f is not None:
                    f("it calls a py_function under a gradient tape, and a replay could "
                      "not be differentiated through the Python function (its eager run "
                      "is; em.numpy_function has no gradient and replays)")
        if differentiable:
            outs = _called(func, inputs, tout, device)
        else:  # no gradient: nothing the function does is recorded
            token = _active.set(())
            try:
                outs = _called(func, inputs, tout, device)
            finally:
                _active.reset(token)
    if single:
        return outs[0]
    return list(outs)

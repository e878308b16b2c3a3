"""``graph.function``: trace on the first call with a new signature, replay afterwards."""

from __future__ import annotations

import functools
import inspect
import os
import sys
import types
import warnings
from collections import OrderedDict
from typing import Any

import ember.core as em
from ember.core import recording
from ember.core.extend import (
    is_differentiable,
    py_function_log,
    restart_py_function_log,
)

from ._host_calls import host_structure, run_host_calls
from ._leaks import hand_out
from ._outputs import rebuild, snapshot_variables, structure
from ._plan import Plan
from ._signature import Signature, changed_argument, signature
from ._spec import InputSignature
from ._taped import TapedEntry, trace_taped
from ._trace import GuardFailed, Tracer

_Tensor = em.Tensor
_EAGERLY = [False]
_COUNT = [0]  # Functions made: names each one's attribute on the instances of its class
RETRACE_WARNING_AFTER = 5  # traces of one function before a retrace warning
_UNTRACEABLE_LIMIT = 2  # consecutive untraceable traces of a key before it runs eagerly
_GUARD_FAILURE_LIMIT = 4  # guard failures of a key before it runs eagerly


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Make every ``graph.function`` run its Python function eagerly (for debugging), or
    go back to tracing and replaying.

    Args:
        run_eagerly: True to run eagerly.

    Raises:
        TypeError: ``run_eagerly`` is not a bool.
    """
    if not isinstance(run_eagerly, bool):
        raise TypeError(f"run_functions_eagerly: run_eagerly must be a bool, "
                        f"got {type(run_eagerly).__name__}")
    _EAGERLY[0] = run_eagerly


def functions_run_eagerly() -> bool:
    """Whether ``run_functions_eagerly(True)`` is in effect."""
    return _EAGERLY[0]


class _Entry:
    __slots__ = ("host", "plan", "structure")

    def __init__(self, plan: Plan, structure: Any, host: list[tuple[Any, Any]]) -> None:
        self.plan = plan
        self.structure = structure
        self.host = host  # (fn, its arguments' structure) of each host call

    def plans(self) -> list[tuple[str, Plan]]:
        return [("call", self.plan)]

    def replayable(self) -> bool:
        return True

    def call(self, sig: Signature, d: Any) -> Any:
        outs = self.plan.run(sig.leaves)
        if self.host:
            run_host_calls(self.host, outs)
        return rebuild(self.structure, outs)


class _Key:
    """What the cache holds for one signature."""

    __slots__ = ("eager_reason", "entries", "guard_failures", "untraceable")

    def __init__(self) -> None:
        self.entries: list[_Entry | TapedEntry] = []
        self.untraceable = 0
        self.guard_failures = 0
        self.eager_reason: str | None = None



def _user_stacklevel() -> int:
    """The ``stacklevel`` of a warning raised by this module's caller that points at the
    first frame outside ember (the user's call), however deep ember's own calls went."""
    frame: types.FrameType | None = sys._getframe(2)  # the warning function's caller
    level = 2
    while frame is not None and _EMBER_DIR in frame.f_code.co_filename:
        frame = frame.f_back
        level += 1
    return level


_EMBER_DIR = os.sep + "ember" + os.sep

class Function:
    """A Python function that ember traces once per input signature and then replays.

    Made by ``graph.function``; calling it calls the function. See ``graph.function``.
    """

    def __init__(self, fn: Any, reduce_retracing: bool, max_traces: int,
                 cuda_graphs: bool = True, input_signature: Any = None) -> None:
        self._fn = fn
        self.cuda_graphs = cuda_graphs
        self._name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
        self.reduce_retracing = reduce_retracing
        self.max_traces = max_traces
        self._cache: OrderedDict[tuple[Any, ...], _Key] = OrderedDict()
        self._traces = 0
        self._calls_python = False  # a trace calls a py_function: see _call
        self._last_parts: dict[str, Any] | None = None
        self._retrace_warned = False
        self._shapes_seen: dict[tuple[Any, ...], int] = {}
        self._py_signature: Any = None  # inspect.Signature of fn, False if it has none
        self._signature = None if input_signature is None else \
            InputSignature(self._name, fn, input_signature)
        functools.update_wrapper(self, fn)
        _COUNT[0] += 1
        self._instance_attr = f"_ember_graph_function_{_COUNT[0]}"

    @property
    def python_function(self) -> Any:
        """The function as written (calling it runs eagerly)."""
        return self._fn

    @property
    def input_signature(self) -> tuple[Any, ...] | None:
        """The specs every call's arguments must fit (``graph.TensorSpec``), or None."""
        return None if self._signature is None else self._signature.specs

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        f = self._for_instance(obj)
        if f._signature is not None:  # the instance is not one of the described tensors
            return types.MethodType(f._call_method, obj)
        return types.MethodType(f, obj)

    def _for_instance(self, obj: Any) -> Function:
        """The Function of this method for ``obj``: each instance has its own, as
        ``tf.function``'s methods do (its own traces, count and ``max_traces``), kept in
        the instance's ``__dict__`` so that it goes with the instance. An object without
        a ``__dict__`` (``__slots__``) shares this one."""
        d = getattr(obj, "__dict__", None)
        if type(d) is not dict:
            return self
        f = d.get(self._instance_attr)
        if f is None:
            f = d[self._instance_attr] = self._fresh()
        return f  # type: ignore[no-any-return]

    def _fresh(self) -> Function:
        """A Function of the same function and settings, with no traces."""
        return Function(self._fn, self.reduce_retracing, self.max_traces, self.cuda_graphs,
                        None if self._signature is None else self._signature.specs)

    def __deepcopy__(self, memo: dict[int, Any]) -> Function:
        return self._fresh()  # traces belong to the objects they were made with

    def __copy__(self) -> Function:
        return self._fresh()

    def _call_method(self, obj: Any, *args: Any, **kwargs: Any) -> Any:
        return self._call((obj, *args), kwargs, bound=True)

    def experimental_get_tracing_count(self) -> int:
        """How many times the function has been traced (as ``tf.function``'s): once per
        signature, where a size a ``None`` dimension of the input signature takes counts
        as part of the signature (a trace is made at one size; see ``TensorSpec``)."""
        return self._traces

    def cuda_graph_status(self) -> list[str]:
        """One line per kept trace (two under a tape: its forward and its backward), most
        recent first: whether its replay runs as a CUDA Graph, and if not, why."""
        lines = []
        for key in reversed(self._cache.values()):
            for entry in key.entries:
                for what, plan in entry.plans():
                    lines.append(f"{what}: {plan.cuda_graph_status()}")
        return lines

    def cache_size(self) -> int:
        """How many traces are kept (at most ``max_traces``)."""
        return sum(len(k.entries) for k in self._cache.values())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(args, kwargs, bound=False)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any], bound: bool) -> Any:
        if self._signature is not None:  # checked and converted, eagerly or not
            args, kwargs = self._signature.bind(args, kwargs, bound), {}
        elif kwargs:  # k(x) and k(a=x) are one call, as tf.function's: one trace
            args, kwargs = self._positional(args, kwargs)
        if _EAGERLY[0]:
            return self._fn(*args, **kwargs)
        d = None
        if recording.active_recorders():
            # Under a tape the call is one op whose gradient is the traced backward (see
            # _taped); inside another traced function (a tracer is active), or with no
            # tape package to differentiate, it runs eagerly: every op is recorded.
            d = recording.differentiator()
            if d is None or recording.tracers():
                return self._fn(*args, **kwargs)
        sig = signature(self._name, args, kwargs)
        sources: tuple[int, ...] = ()
        if d is None:
            ckey: Any = sig.key
        else:  # the arguments the tapes differentiate with respect to are part of the key
            leaves = sig.leaves
            sources = tuple(i for i, w in enumerate(d.watched(leaves))
                            if w and is_differentiable(leaves[i].dtype))
            ckey = (sig.key, "taped", sources)
        if self._calls_python:  # a replay that fails a guard after a py_function ran:
            with py_function_log():  # what redoes the call reuses its results
                return self._dispatch(sig, ckey, d, sources)
        return self._dispatch(sig, ckey, d, sources)

    def _dispatch(self, sig: Signature, ckey: Any, d: Any, sources: tuple[int, ...]) -> Any:
        """The call, by a replay of a trace made for its signature, eagerly, or traced."""
        key = self._cache.get(ckey)
        failed: str | None = None
        if key is not None:
            self._cache.move_to_end(ckey)
            if key.eager_reason is not None:
                return self._eager(sig, d)
            for entry in key.entries:
                if not entry.replayable():  # see TapedEntry.replayable
                    return self._eager(sig, d)
                if self._calls_python:
                    restart_py_function_log()
                try:
                    return entry.call(sig, d)
                except GuardFailed as e:
                    failed = str(e)
                    continue
            if failed is not None:
                key.guard_failures += 1
                if key.guard_failures >= _GUARD_FAILURE_LIMIT:
                    key.eager_reason = (f"the value it reads on the host at {failed} changes "
                                        "from call to call")
                    warnings.warn(f"graph.function {self._name}: {key.eager_reason}, so "
                                  "replays keep failing their guard; this signature now runs "
                                  "eagerly. Compute with ops instead of reading values on "
                                  "the host (float(), bool(), .numpy(), if on a tensor)",
                                  stacklevel=_user_stacklevel())
                    return self._eager(sig, d)
        elif self.reduce_retracing and self._signature is None and \
                self._shape_only_change(sig):
            return self._eager(sig, d)
        return self._trace(sig, ckey, key, failed, d, sources)

    def _positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call with each keyword argument that names a positional parameter passed by
        position (defaults are not filled in); a call that does not bind is left as it is
        (calling the function raises its own error)."""
        sig = self._py_signature
        if sig is None:
            try:
                sig = self._py_signature = inspect.signature(self._fn)
            except (TypeError, ValueError):  # a callable without a signature
                self._py_signature = False
                return args, kwargs
        if sig is False:
            return args, kwargs
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return args, kwargs
        return bound.args, bound.kwargs

    def _eager(self, sig: Signature, d: Any) -> Any:
        """A call run eagerly in place of a replay: what it returns as a replay returns it
        (under a tape, as the function returned it: the tape records its ops)."""
        restart_py_function_log()
        result = self._fn(*sig.args, **sig.kwargs)
        return result if d is not None else snapshot_variables(result, None)

    # --- tracing ---------------------------------------------------------------------
    def _trace(self, sig: Signature, ckey: Any, key: _Key | None, guard: str | None,
               d: recording.Differentiator | None, sources: tuple[int, ...]) -> Any:
        if key is None:
            key = self._cache[ckey] = _Key()
        tracer = Tracer(sig.leaves)
        restart_py_function_log()
        if d is not None:
            result, entry, untraceable, why = trace_taped(self._fn, sig, d, list(sources),
                                                          tracer)
        else:
            token = recording.push(tracer)
            try:
                result = self._fn(*sig.args, **sig.kwargs)
            finally:
                recording.pop(token)
            untraceable = tracer.trace.untraceable
        self._traces += 1
        # this call ran eagerly: its host calls get the values it computed
        run_host_calls(tracer.trace.host_calls)
        if d is not None and why is not None:
            # the gradient cannot be replayed: tapes record calls eagerly
            key.eager_reason = f"under a tape, {why}"
            return result
        if untraceable is not None:
            key.untraceable += 1
            if key.untraceable >= _UNTRACEABLE_LIMIT:
                key.eager_reason = untraceable
                warnings.warn(f"graph.function {self._name} cannot be replayed because "
                              f"{untraceable}; it runs eagerly for these arguments",
                              stacklevel=_user_stacklevel())
            return result if d is not None else snapshot_variables(result, None)
        key.untraceable = 0
        if d is None:
            slots: list[int] = []
            result = snapshot_variables(result, tracer)
            nest = structure(result, tracer, slots)
            n_results = len(slots)
            host = host_structure(tracer, slots)  # host calls' values: outputs after these
            entry = _Entry(Plan(tracer.trace, slots), nest, host)
            result = hand_out(tracer, nest, slots, n_results, self._name)
            if any(st.name == "py_function" for st in tracer.trace.steps):
                self._calls_python = True
        if not self.cuda_graphs:
            for _, plan in entry.plans():
                plan.disable_cuda_graph("graph.function(cuda_graphs=False)")
        key.entries.insert(0, entry)
        self._evict()
        self._warn_retrace(sig, guard)
        return result

    def _evict(self) -> None:
        """Drop the oldest traces until at most ``max_traces`` are kept. A signature left
        with none is dropped too, unless it is marked to run eagerly (that mark stays:
        it holds no trace)."""
        excess = self.cache_size() - self.max_traces
        for key in list(self._cache):
            if excess <= 0:
                return
            kept = self._cache[key]
            while kept.entries and excess > 0:
                kept.entries.pop()
                excess -= 1
            if not kept.entries and kept.eager_reason is None:
                del self._cache[key]

    def _warn_retrace(self, sig: Signature, guard: str | None) -> None:
        last, self._last_parts = self._last_parts, sig.parts
        if self._retrace_warned or last is None or self._traces < RETRACE_WARNING_AFTER:
            return
        if guard is None and self._signature is not None and all(
                _without_shapes(last.get(k)) == _without_shapes(p)
                for k, p in sig.parts.items()):
            return  # a new size of a dimension the signature leaves open: expected
        self._retrace_warned = True
        if guard is not None:
            why = (f"the value read on the host at {guard} differed from every traced "
                   "call's. Each new value read with float(), bool(), int() or .numpy() "
                   "(or an if on a tensor) traces again: compute with ops instead")
        else:
            why = (f"a new value of {changed_argument(last, sig.parts)}. Each new tensor "
                   "shape or Python value traces again: pass tensors rather than Python "
                   "numbers, or use reduce_retracing=True")
        warnings.warn(f"graph.function {self._name} has been traced {self._traces} times; "
                      f"the last retrace was for {why}", stacklevel=_user_stacklevel())

    def _shape_only_change(self, sig: Signature) -> bool:
        """With ``reduce_retracing``: True when calls have already been traced for two
        shapes of otherwise equal arguments, so this new shape runs eagerly."""
        relaxed = tuple(_without_shapes(p) for p in sig.key)
        n = self._shapes_seen.get(relaxed, 0)
        self._shapes_seen[relaxed] = n + 1
        return n >= 2


def _without_shapes(part: Any) -> Any:
    if type(part) is tuple:
        if part and part[0] == "T":
            return ("T", len(part[1]), *part[2:])
        return tuple(_without_shapes(p) for p in part)
    return part

"""The recording interface: how a gradient tape (ember-tape) learns what ran.

ember-core never imports ember-tape. A tape implements ``Recorder`` and makes itself
active with ``push``/``pop`` (or the ``active`` context manager). Core then
calls, for every op it executes while at least one recorder is active::

    recorder.record_op(op, inputs, attrs, outputs)   # op: an OpDef; inputs/outputs: Tensors
    recorder.variable_read(variable, value)           # a Variable was read into ``value``

With no recorder active the cost is one ``ContextVar.get()`` per op. Recorders are held in
a context variable, so a tape in one thread or task never sees another's ops.

A recorder with a true ``traces_all`` attribute is a *tracer* (graph mode's, in
ember-graph): it sees every op, including those run inside ``paused()``, ``exclude`` or
``extend.recording_to`` (a tape's backward pass, an optimizer's update), and core also
tells it of the things a replay must reproduce::

    tracer.variable_write(variable, value)   # ``variable`` now holds the Tensor ``value``
    tracer.variable_created(variable)        # a Variable was made while tracing
    tracer.host_read(tensor)                 # ``tensor``'s value was read on the host
    tracer.untraced_tensor(tensor)           # made from an array outside the op table
    tracer.host_input(what)                  # a Python data source gave the function a
                                             # value (``notify_host_input``)
    tracer.cannot_replay(why)                # a replay could not do what this call does
    tracer.lifted()                          # the recorder that stands in for it inside
                                             # ``init_scope`` (``lifted``)

A package that runs functions its own way (graph mode's replay) gets gradients for them
from whichever tape package is installed through the *differentiator* that package sets
with ``set_differentiator`` (ember-tape does, on import): see ``Differentiator``.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol


class Recorder(Protocol):
    """What a tape implements to be told about executed ops and variable reads."""

    def record_op(
        self, op: Any, inputs: tuple[Any, ...], attrs: dict[str, Any] | None,
        outputs: tuple[Any, ...],
    ) -> None: ...

    def variable_read(self, variable: Any, value: Any) -> None: ...


_active: contextvars.ContextVar[tuple[Recorder, ...]] = contextvars.ContextVar(
    "ember_recorders", default=()
)


# ``_active.get`` bound once: the hot paths (every op's dispatch) call this. CPython 3.11
# does not specialize a method lookup on a ContextVar, which cost about 500 instructions
# a call, an eighth of ``em.add``'s overhead on small tensors.
_recorders = _active.get


# The recorders that will see the next op, innermost last (a tuple, empty when nothing
# records): the context variable's own ``get``, so a check per element (ember.data's
# iterators) costs one C call.
active_recorders: Callable[[], tuple[Recorder, ...]] = _active.get


def push(recorder: Recorder) -> contextvars.Token[tuple[Recorder, ...]]:
    """Make ``recorder`` active; returns a token for ``pop``."""
    return _active.set(_active.get() + (recorder,))


def pop(token: contextvars.Token[tuple[Recorder, ...]]) -> None:
    """Undo the matching ``push`` (or ``exclude``)."""
    _active.reset(token)


def exclude(recorder: Recorder) -> contextvars.Token[tuple[Recorder, ...]]:
    """Stop ``recorder`` seeing ops until ``pop`` (``stop_recording``, and a tape's
    backward pass: once per gradient, so the common case of one tape is kept short)."""
    recs = _active.get()
    if recorder not in recs:  # e.g. a tape's gradient after its ``with`` block
        return _active.set(recs)
    if len(recs) == 1:
        return _active.set(())
    return _active.set(tuple([r for r in recs if r is not recorder]))


def only(recorders: tuple[Recorder, ...]) -> contextvars.Token[tuple[Recorder, ...]]:
    """Make exactly ``recorders`` active, plus the active tracers (which see everything),
    until ``pop``."""
    return _active.set(tracers() + tuple(recorders))


def tracers() -> tuple[Recorder, ...]:
    """The active tracers (recorders with a true ``traces_all``), outermost first."""
    recs = _active.get()
    if not recs:
        return ()
    return tuple(r for r in recs if getattr(r, "traces_all", False))


def notify_variable_write(variable: Any, value: Any) -> None:
    """Tell the active tracers that ``variable`` now holds the Tensor ``value``."""
    for r in tracers():
        r.variable_write(variable, value)  # type: ignore[attr-defined]


def notify_variable_created(variable: Any) -> None:
    """Tell the active tracers that ``variable`` was just created."""
    for r in tracers():
        r.variable_created(variable)  # type: ignore[attr-defined]


def notify_host_read(tensor: Any) -> None:
    """Tell the active tracers that ``tensor``'s value is being read on the host."""
    for r in tracers():
        r.host_read(tensor)  # type: ignore[attr-defined]


def notify_host_input(what: str) -> None:
    """Tell the active tracers that a Python data source (``what``: an ember.data
    iterator's next element) is handing the traced function a value that a replay would
    freeze; they stop replaying the call. ember.data calls this without importing
    ember-core (only where it is loaded)."""
    for r in tracers():
        f = getattr(r, "host_input", None)
        if f is not None:
            f(what)


@contextlib.contextmanager
def active(recorder: Recorder) -> Iterator[Recorder]:
    token = push(recorder)
    try:
        yield recorder
    finally:
        pop(token)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No recorder sees the ops run inside the block (tracers still do)."""
    token = only(())
    try:
        yield
    finally:
        _active.reset(token)


@contextlib.contextmanager
def lifted() -> Iterator[None]:
    """``em.init_scope``: code in the block runs as if outside every trace and tape.

    Tapes see nothing of it, and each tracer is replaced by what its ``lifted()`` returns:
    graph mode's records nothing (the block runs once, while tracing, and what it makes is
    a constant of the trace) and refuses an op on a value the trace computed, which a
    replay could not give it. A tracer without ``lifted()`` stays as it is.
    """
    recs = _active.get()
    lift = tuple(getattr(r, "lifted", lambda r=r: r)() for r in recs
                 if getattr(r, "traces_all", False))
    token = _active.set(lift)
    try:
        yield
    finally:
        _active.reset(token)


class Differentiator(Protocol):
    """What a tape package offers packages that run functions their own way (ember-graph
    replays a traced function as one call; it differentiates the trace once, and the
    tapes around a replay record it as one op)."""

    def differentiate(self, fn: Callable[[], Any], sources: Sequence[Any]
                      ) -> tuple[Any, list[Any], Callable[[list[Any], list[Any]], list[Any]]]:
        """Run ``fn()`` on a fresh recording that watches the Tensors ``sources`` and the
        trainable variables ``fn`` reads. Returns ``fn``'s result, those variables, and
        ``grad(targets, output_gradients)``: the gradients of the Tensors ``targets``
        (weighted by ``output_gradients``) for each source, then each variable (None where
        unconnected), computed with ops."""
        ...

    def watched(self, tensors: Sequence[Any]) -> list[bool]:
        """For each Tensor, whether an active recorder could differentiate with respect to
        it (a tape tracks it; True for recorders it does not know)."""
        ...

    def record_call(self, inputs: Sequence[Any], outputs: Sequence[Any],
                    grad_fn: Callable[[list[Any]], Sequence[Any]]) -> None:
        """Tell the active recorders that one call computed the Tensors ``outputs`` from
        the Tensors ``inputs``; ``grad_fn(dys)`` (one gradient per output) returns one
        gradient per input, or None."""
        ...


_differentiator: list[Differentiator | None] = [None]


def set_differentiator(differentiator: Differentiator | None) -> None:
    """Install the tape package's ``Differentiator`` (None removes it).

    Raises:
        TypeError: it lacks ``differentiate`` or ``record_call``.
    """
    if differentiator is not None and not (
            callable(getattr(differentiator, "differentiate", None))
            and callable(getattr(differentiator, "watched", None))
            and callable(getattr(differentiator, "record_call", None))):
        raise TypeError(f"set_differentiator: {type(differentiator).__name__} is not a "
                        "Differentiator (it needs differentiate, watched and record_call "
                        "methods)")
    _differentiator[0] = differentiator


def differentiator() -> Differentiator | None:
    """The installed ``Differentiator``, or None when no tape package set one."""
    return _differentiator[0]

"""Summaries written inside a traced function (``ember.graph.function``).

A traced training step that writes ``summary.scalar("loss", loss)`` must not read the
loss on the host while it runs: under graph mode's tracer such a read is a guard, which
fails on every call whose loss differs, and the step ends up running eagerly. So a
summary op called while a tracer is active hands itself to the tracer instead
(``defer_to_host``, the tracer's side of this seam; ember-summary imports no other ember
package and finds the tracers through ``ember.core.recording`` only if it is loaded).
After the call, and after each replay, the tracer calls the op back with the tensors it
was given as they are in that call, and the summary is written as if the op had run just
after the function returned, with the values it saw where it ran:

- the data, and the step when it is a tensor or variable (the global step that the step
  itself increments), are the values at the op's place in the call;
- the writer, the step and the recording condition set *outside* the function are looked
  up after each call (a writer or ``set_step`` may change between calls); those set
  inside the function were set when it was traced (its Python does not run again, as in
  TensorFlow) and are kept from then;
- ``record_summaries_every_n_global_steps`` tests the step's value at the op's place; a
  tensor condition (``record_if(t)``) its value there; a callable condition is called
  after the call.

A summary that is not recorded in a call (no writer, or the condition is off) reads
nothing on the host. The op returns True: the summary is handed on, to be written if a
writer and the condition allow it after the call.
"""

from __future__ import annotations

import sys
from typing import Any

from . import _context, _validate
from ._policy import EveryN, always_record_summaries
from ._step import as_int, global_step

_OUTSIDE = object()  # a context value the function did not set itself


def active_tracer() -> Any:
    """The innermost active tracer that takes host calls, or None."""
    recording = sys.modules.get("ember.core.recording")
    if recording is None:
        return None
    for tracer in reversed(recording.tracers()):
        if callable(getattr(tracer, "defer_to_host", None)):
            return tracer
    return None


def write_later(tracer: Any, op: Any, name: Any, data: Any, step: Any, description: Any,
                **kwargs: Any) -> bool | None:
    """Hand ``op(name, data, step=..., description=..., **kwargs)`` to ``tracer``.

    Returns:
        True, or None when the tracer takes no host calls (the op then writes now).
    """
    _validate.tag(name)
    _validate.description(description)
    entry = getattr(tracer, "entry_context", None)
    writer = _own(entry, _context.default_writer)
    condition = _own(entry, _context.record_condition)
    default = _own(entry, _context.default_step)
    cond_now = _context.record_condition.get()
    step_obj = step if step is not None else _default_step_object(_context.default_step.get())
    every_obj = None
    if isinstance(cond_now, EveryN):
        every_obj = cond_now.global_step if cond_now.global_step is not None else \
            _default_step_object(_context.default_step.get())
    cond_obj = None if callable(cond_now) else cond_now

    def write(data_v: Any, step_v: Any, every_v: Any, cond_v: Any) -> None:
        w = writer if writer is not _OUTSIDE else _context.default_writer.get()
        if w is None or w.path is None:
            return
        c = condition if condition is not _OUTSIDE else _context.record_condition.get()
        if c is not None:
            if isinstance(c, EveryN):
                obj = c.global_step if c.global_step is not None else _default_now(default)
                if not c.holds(every_v if obj is every_obj else obj):
                    return
            elif callable(c):
                if not c():
                    return
            elif not (cond_v if c is cond_obj else c):
                return
        s: int | None
        if step is not None:
            s = as_int(step_v)
        else:
            obj = _default_now(default)
            s = obj if obj is None else as_int(step_v if obj is step_obj else obj)
        with _context.writing_to(w), always_record_summaries():
            op(name, data_v, step=s, description=description, **kwargs)

    if not tracer.defer_to_host(write, (data, step_obj, every_obj, cond_obj)):
        return None
    return True


def _own(entry: Any, var: Any) -> Any:
    """``var``'s value if the traced function set it itself, else ``_OUTSIDE``."""
    if entry is None:
        return _OUTSIDE
    value = var.get()
    return _OUTSIDE if value is entry.get(var) else value


def _default_step_object(step: Any) -> Any:
    """The step object a summary without ``step=`` uses: ``step`` (the context's default
    step), else the step source's global step (not read: a variable stays a variable)."""
    return step if step is not None else global_step()


def _default_now(default: Any) -> Any:
    """The default step object after the call: the one the function set, if it set one,
    else the context's now, else the global step."""
    return _default_step_object(default if default is not _OUTSIDE else
                                _context.default_step.get())

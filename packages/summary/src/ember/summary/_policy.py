"""When summaries are recorded: ``record_if`` and its shorthands, as context managers."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import Token
from typing import Any

from . import _context
from ._step import as_int, default_step
from ._validate import count


class _RecordingScope:
    """Sets the recording condition on ``__enter__`` and restores the outer one on exit."""

    __slots__ = ("_condition", "_token")

    def __init__(self, condition: Any) -> None:
        self._condition = condition
        self._token: Token[Any] | None = None

    def __enter__(self) -> None:
        self._token = _context.record_condition.set(self._condition)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _context.record_condition.reset(self._token)
            self._token = None


def record_if(condition: bool | Callable[[], Any] | Any) -> _RecordingScope:
    """Record summaries inside the ``with`` block only while ``condition`` holds.

    Args:
        condition: a bool, anything with ``__bool__`` (a scalar tensor), or a
            zero-argument callable evaluated at every summary call.

    Examples:
        >>> with record_if(lambda: False):
        ...     should_record_summaries()
        False
    """
    return _RecordingScope(condition)


def always_record_summaries() -> _RecordingScope:
    """Record every summary inside the ``with`` block (the default outside any scope)."""
    return _RecordingScope(True)


def never_record_summaries() -> _RecordingScope:
    """Record no summary inside the ``with`` block."""
    return _RecordingScope(False)


def record_summaries_every_n_global_steps(n: int, global_step: Any = None) -> _RecordingScope:
    """Record only when the global step is a multiple of ``n``.

    Args:
        n: the period, a positive int.
        global_step: a step-like object read with ``int()`` at each summary call;
            defaults, at that time, to the default step (``set_step``), else the
            global step (``ember.nn.get_or_create_global_step()``, or whatever
            ``set_default_step_source`` supplies).

    Examples:
        >>> from ember.summary import (record_summaries_every_n_global_steps, set_step,
        ...                            should_record_summaries)
        >>> set_step(200)
        >>> with record_summaries_every_n_global_steps(100):
        ...     should_record_summaries()
        True
        >>> set_step(None)
    """
    return _RecordingScope(EveryN(count("n", n, low=1), global_step))


class EveryN:
    """``record_summaries_every_n_global_steps``'s condition: the step is a multiple of
    ``n``. A class rather than a closure so that a summary written inside a traced
    function can test it with the step's value at that point of the call (``_deferred``).
    """

    __slots__ = ("global_step", "n")

    def __init__(self, n: int, global_step: Any) -> None:
        self.n = n
        self.global_step = global_step

    def __call__(self) -> bool:
        step = self.global_step if self.global_step is not None else default_step()
        return self.holds(step)

    def holds(self, step: Any) -> bool:
        """Whether ``step`` (step-like, or None when there is none) is a multiple of n."""
        if step is None:
            raise ValueError(
                "record_summaries_every_n_global_steps needs a step: pass global_step=..., "
                "call ember.summary.set_step(...) or create a global step "
                "(ember.nn.get_or_create_global_step())")
        return as_int(step, "global_step" if self.global_step is not None else "step") \
            % self.n == 0


def should_record_summaries() -> bool:
    """Whether a summary written now, in this context, would be recorded."""
    condition = _context.record_condition.get()
    if condition is None:
        return True
    if callable(condition):
        condition = condition()
    return bool(condition)

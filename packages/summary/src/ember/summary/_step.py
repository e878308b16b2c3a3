"""The default step and turning step-like objects into ints."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import _context


def set_step(step: Any) -> None:
    """Set the default step for summaries written in this context.

    ``step`` may be an int or any step-like object (an ember int64 variable, a numpy
    scalar, anything with ``__int__``/``__index__``/``__array__``); it is read with
    ``int()`` each time a summary is written, so a variable that training increments is
    followed automatically. ``None`` clears it.

    Examples:
        >>> set_step(3); get_step()
        3
        >>> set_step(None)
    """
    _context.default_step.set(step)


def get_step() -> Any:
    """The default step object as set by :func:`set_step` (not converted), or None."""
    return _context.default_step.get()


def as_int(step: Any) -> int:
    """``step`` as a Python int; a non-integral float is an error, not a rounding."""
    if type(step) is int:
        return step
    try:
        return operator.index(step)
    except TypeError:
        pass
    if isinstance(step, float) or hasattr(step, "__array__"):
        value = np.asarray(step)
        if value.size != 1 or value.dtype.kind not in "biuf":
            raise TypeError(f"a step must be one integer, got {value.dtype} of shape "
                            f"{value.shape}")
        f = value.reshape(()).item()
        if f != int(f):
            raise ValueError(f"a step must be an integer, got {f}")
        return int(f)
    try:
        return int(step)
    except (TypeError, ValueError) as e:
        raise TypeError(f"a step must be int-like, got {type(step).__name__}") from e


def resolve_step(step: Any) -> int:
    """The step to write: ``step`` itself, else the default step, else a clear error."""
    if step is None:
        step = _context.default_step.get()
        if step is None:
            raise ValueError(
                "no step for this summary: pass step=..., call ember.summary.set_step(...) "
                "or use writer.as_default(step=...)")
    return as_int(step)

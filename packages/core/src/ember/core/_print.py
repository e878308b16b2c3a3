"""``em.print``: TensorFlow's ``tf.print``, which prints on every call of a traced
function, replays included (Python's ``print`` runs only while the function is traced)."""

from __future__ import annotations

import builtins
import sys
from typing import Any

import numpy as np

from . import recording
from ._tensor import Tensor
from ._variable import Variable


def print(*inputs: Any, output_stream: Any = None, sep: str = " ", end: str = "\n",
          summarize: int = 3, name: str | None = None) -> None:
    """Print ``inputs`` (tensors, variables, Python values), as ``tf.print``: tensors as
    their values (floats with 6 significant digits: ``1``, ``2.5``), each axis longer
    than ``2 * summarize`` shown by its first and last ``summarize`` entries
    (``summarize=-1``: all of them).

    Inside a ``graph.function`` the print is handed to the host after every call, the
    replays included, with the values of that call (not a guard: the function stays
    replayed).

    Args:
        *inputs: What to print, separated by ``sep``.
        output_stream: ``sys.stderr`` (the default, TensorFlow's; None is the
            ``sys.stderr`` of the moment), ``sys.stdout``, or an object with a ``write``
            method.
        sep: Written between inputs.
        end: Written after the last input.
        summarize: Entries kept at each end of a long axis; -1 for all.
        name: Accepted for TensorFlow compatibility (names do not matter in eager mode).

    Raises:
        TypeError: ``output_stream`` has no ``write`` (TensorFlow's "file://" strings
            and logging levels are not supported), or ``summarize`` is not an int.
    """
    if output_stream is None:
        output_stream = sys.stderr
    if not callable(getattr(output_stream, "write", None)):
        raise TypeError(f"print: output_stream must have a write method (sys.stderr, "
                        f"sys.stdout, a file), got {output_stream!r:.60}")
    if type(summarize) is not int or (summarize < 0 and summarize != -1):
        raise TypeError(f"print: summarize must be an int >= 0, or -1 for all, "
                        f"got {summarize!r:.60}")
    for tracer in reversed(recording.tracers()):
        defer = getattr(tracer, "defer_to_host", None)
        if callable(defer) and defer(_write, (inputs, output_stream, sep, end, summarize)):
            return None
    _write(inputs, output_stream, sep, end, summarize)
    return None


# floats as TensorFlow prints them (C++ streams: 6 significant digits, 1 not 1.)
_FORMAT = {"float_kind": lambda v: format(v, "g")}


def _write(inputs: Any, stream: Any, sep: str, end: str, summarize: int) -> None:
    stream.write(sep.join(_text(x, summarize) for x in inputs) + end)


def _text(x: Any, summarize: int) -> str:
    if isinstance(x, (Tensor, Variable)):
        a = np.asarray(x)
        if a.ndim == 0:
            v = a[()]
            return format(v, "g") if a.dtype.kind == "f" else builtins.str(v)
        big = summarize >= 0 and builtins.any(n > 2 * summarize for n in a.shape)
        return np.array2string(a, separator=" ", edgeitems=builtins.max(summarize, 1),
                               threshold=0 if big else sys.maxsize, formatter=_FORMAT)
    if isinstance(x, (list, tuple)):
        inner = " ".join(_text(v, summarize) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_text(v, summarize)}" for k, v in x.items()) + "}"
    return builtins.str(x)

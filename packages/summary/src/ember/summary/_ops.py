"""The summary ops: check the recording policy, capture the value, queue it.

Each op returns True when the summary was queued and False when nothing was written
(no default writer, or the recording condition is off). Values are captured at call
time (so later changes to an array do not leak into the summary); turning them into
protos happens on the writer thread. Input errors are raised here, in the caller.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from . import _audio, _context, _histogram, _image
from ._metadata import Kind
from ._policy import should_record_summaries
from ._step import resolve_step
from ._values import as_scalar_float, tensor_proto


def _set_simple_value(value: Any, x: float) -> None:
    value.simple_value = x


def _set_tensor(value: Any, array: np.ndarray) -> None:
    value.tensor.CopyFrom(tensor_proto(array))


SCALAR = Kind("scalars", _set_simple_value)
TEXT = Kind("text", _set_tensor)


def _writer() -> Any:
    """The default writer if a summary written now should be recorded, else None."""
    writer = _context.default_writer.get()
    if writer is None or not should_record_summaries():
        return None
    return writer


def scalar(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
    """Write one number for TensorBoard's scalars dashboard.

    Args:
        name: the tag, e.g. ``"loss"`` or ``"train/accuracy"``.
        data: a Python number, a rank-0 numpy array or tensor (through ``__array__``).
            NaN and infinities are written as they are.
        step: the step (an int or step-like object); defaults to the default step.
        description: optional Markdown shown with the chart.

    Returns:
        True if the summary was queued, False if nothing was recorded.

    Examples:
        >>> scalar("loss", 0.25, step=1)   # no default writer here: nothing recorded
        False
    """
    writer = _writer()
    if writer is None:
        return False
    step = resolve_step(step)
    writer._put((SCALAR, name, as_scalar_float(data), step, time.time(), description))
    return True


def histogram(name: str, data: Any, step: Any = None, buckets: int | None = None,
              description: str | None = None) -> bool:
    """Write the distribution of ``data``'s elements for the histograms dashboard.

    Bucketed like TensorBoard's own histogram summary (``buckets`` equal-width buckets,
    30 by default). Data on a GPU is bucketed there when cupy is available.
    """
    writer = _writer()
    if writer is None:
        return False
    step = resolve_step(step)
    count = _histogram.DEFAULT_BUCKET_COUNT if buckets is None else buckets
    payload = _histogram.buckets(data, count)
    writer._put((_histogram.HISTOGRAM, name, payload, step, time.time(), description))
    return True


def image(name: str, data: Any, step: Any = None, max_outputs: int = 3,
          description: str | None = None) -> bool:
    """Write up to ``max_outputs`` images of an NHWC batch for the images dashboard.

    Args:
        data: ``[k, height, width, channels]`` with 1, 3 or 4 channels; uint8 in
            ``[0, 255]`` or floating point in ``[0, 1]``.
    """
    writer = _writer()
    if writer is None:
        return False
    step = resolve_step(step)
    payload = _image.prepare(data, max_outputs)
    writer._put((_image.IMAGE, name, payload, step, time.time(), description))
    return True


def text(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
    """Write a string (or an array of strings, shown as a table) for the text dashboard.

    Markdown in the text is rendered by TensorBoard.
    """
    writer = _writer()
    if writer is None:
        return False
    step = resolve_step(step)
    payload = _as_strings(data)
    writer._put((TEXT, name, payload, step, time.time(), description))
    return True


def audio(name: str, data: Any, sample_rate: Any, step: Any = None, max_outputs: int = 3,
          encoding: str | None = None, description: str | None = None) -> bool:
    """Write up to ``max_outputs`` clips of a ``[k, frames, channels]`` batch as WAV.

    Args:
        data: floating-point samples in ``[-1, 1]``.
        sample_rate: samples per second, a positive integer.
        encoding: only ``"wav"`` (the default) is supported.
    """
    if encoding not in (None, "wav"):
        raise ValueError(f"unsupported audio encoding {encoding!r}; only 'wav' is")
    writer = _writer()
    if writer is None:
        return False
    step = resolve_step(step)
    payload = _audio.prepare(data, sample_rate, max_outputs)
    writer._put((_audio.AUDIO, name, payload, step, time.time(), description))
    return True


def _as_strings(data: Any) -> np.ndarray:
    if isinstance(data, (str, bytes)):
        return np.array(data, dtype=object)
    array = np.asarray(data, dtype=object) if isinstance(data, (list, tuple)) else np.asarray(data)
    if array.dtype.kind not in "USO":
        raise TypeError(f"text data must be a string or strings, got dtype {array.dtype}")
    if array.dtype.kind == "O" and not all(isinstance(s, (str, bytes)) for s in array.flat):
        raise TypeError("text data must hold only str or bytes")
    return array

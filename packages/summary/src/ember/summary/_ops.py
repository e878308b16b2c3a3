"""The summary ops: check the recording policy, capture the value, queue it.

Each op returns True when the summary was queued and False when nothing was written
(no default writer, or the recording condition is off). Values are captured at call
time (so later changes to an array do not leak into the summary); turning them into
protos happens on the writer thread. Input errors are raised here, in the caller.
Inside a traced function (``ember.graph``) an op hands itself to the tracer, which writes
it after each call with that call's values (``_deferred``), and returns True.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from . import _audio, _context, _deferred, _histogram, _image, _validate
from ._metadata import Kind
from ._policy import should_record_summaries
from ._step import resolve_step
from ._values import as_scalar_float, string_tensor_proto


def _set_simple_value(value: Any, x: float) -> None:
    value.simple_value = x


def _set_strings(value: Any, payload: tuple[list[bytes], tuple[int, ...]]) -> None:
    value.tensor.CopyFrom(string_tensor_proto(*payload))


SCALAR = Kind("scalars", _set_simple_value)
TEXT = Kind("text", _set_strings)


def _writer(name: Any, description: Any) -> Any:
    """The default writer's core if a summary written now should be recorded, else None.

    The tag and description are checked first, recorded or not, so a bad one fails on
    the first call rather than on the first recorded step.
    """
    _validate.tag(name)
    _validate.description(description)
    writer = _context.default_writer.get()
    if writer is None or writer.path is None or not should_record_summaries():
        return None
    return writer._core


def _common(name: Any, step: Any, description: Any) -> tuple[str, int, str | None]:
    """The tag and description (checked by ``_writer``) and the step, resolved."""
    return name, resolve_step(step), description


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
    tracer = _deferred.active_tracer()
    if tracer is not None and _deferred.write_later(tracer, scalar, name, data, step,
                                                    description):
        return True
    writer = _writer(name, description)
    if writer is None:
        return False
    name, step, description = _common(name, step, description)
    writer.put((SCALAR, name, as_scalar_float(data), step, time.time(), description))
    return True


def histogram(name: str, data: Any, step: Any = None, buckets: int | None = None,
              description: str | None = None) -> bool:
    """Write the distribution of ``data``'s elements for the histograms dashboard.

    Bucketed like TensorBoard's own histogram summary (``buckets`` equal-width buckets,
    30 by default). The caller's thread only checks the dtype and copies the data (so a
    later in-place update cannot leak in); the buckets are counted on the writer thread.
    Data on a GPU is copied and bucketed there when cupy is available.

    Args:
        name: the tag.
        data: real numbers of any shape (NaN is not counted; -inf/+inf count in the
            first/last bucket).
        step: the step; defaults to the default step, then the global step.
        buckets: the bucket count, a whole number in ``[0, 65536]`` (default 30).
        description: optional Markdown shown with the chart.

    Returns:
        True if the summary was queued, False if nothing was recorded.
    """
    tracer = _deferred.active_tracer()
    if tracer is not None and _deferred.write_later(tracer, histogram, name, data, step,
                                                    description, buckets=buckets):
        return True
    writer = _writer(name, description)
    if writer is None:
        return False
    name, step, description = _common(name, step, description)
    count = (_histogram.DEFAULT_BUCKET_COUNT if buckets is None else
             _validate.count("buckets", buckets, high=_validate.MAX_BUCKETS))
    payload = _histogram.capture(data, count)
    writer.put((_histogram.HISTOGRAM, name, payload, step, time.time(), description))
    return True


def image(name: str, data: Any, step: Any = None, max_outputs: int | None = None,
          description: str | None = None, *, max_images: int | None = None) -> bool:
    """Write up to ``max_outputs`` images of an NHWC batch for the images dashboard.

    Args:
        name: the tag.
        data: ``[k, height, width, channels]`` with 1, 3 or 4 channels; uint8 in
            ``[0, 255]`` or floating point in ``[0, 1]`` (outside saturates, NaN is 0).
        step: the step; defaults to the default step, then the global step.
        max_outputs: write at most this many images of the batch (default 3).
        description: optional Markdown shown with the images.
        max_images: ``tf.contrib.summary.image``'s name for ``max_outputs``; give one
            or the other.

    Returns:
        True if the summary was queued, False if nothing was recorded.
    """
    if max_images is not None:
        if max_outputs is not None and max_outputs != max_images:
            raise TypeError(f"image: max_outputs={max_outputs} and max_images={max_images} "
                            "disagree; pass only one")
        limit = _validate.count("max_images", max_images)
    else:
        limit = _validate.count("max_outputs", 3 if max_outputs is None else max_outputs)
    tracer = _deferred.active_tracer()
    if tracer is not None and _deferred.write_later(tracer, image, name, data, step,
                                                    description, max_outputs=limit):
        return True
    writer = _writer(name, description)
    if writer is None:
        return False
    name, step, description = _common(name, step, description)
    payload = _image.prepare(data, limit)
    writer.put((_image.IMAGE, name, payload, step, time.time(), description))
    return True


def text(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
    """Write a string (or an array of strings, shown as a table) for the text dashboard.

    Markdown in the text is rendered by TensorBoard. Strings are encoded as UTF-8 in
    the caller (a lone surrogate is an error there).
    """
    tracer = _deferred.active_tracer()
    if tracer is not None and _deferred.write_later(tracer, text, name, data, step,
                                                    description):
        return True
    writer = _writer(name, description)
    if writer is None:
        return False
    name, step, description = _common(name, step, description)
    payload = _as_strings(data)
    writer.put((TEXT, name, payload, step, time.time(), description))
    return True


def audio(name: str, data: Any, sample_rate: Any, step: Any = None, max_outputs: int = 3,
          encoding: str | None = None, description: str | None = None) -> bool:
    """Write up to ``max_outputs`` clips of a ``[k, frames, channels]`` batch as WAV.

    Args:
        name: the tag.
        data: floating-point samples in ``[-1, 1]`` (outside saturates, NaN is 0).
        sample_rate: samples per second, a positive whole number.
        step: the step; defaults to the default step, then the global step.
        max_outputs: write at most this many clips of the batch.
        encoding: only ``"wav"`` (the default) is supported.
        description: optional Markdown shown with the clips.

    Returns:
        True if the summary was queued, False if nothing was recorded.
    """
    if encoding not in (None, "wav"):
        raise ValueError(f"unsupported audio encoding {encoding!r}; only 'wav' is")
    tracer = _deferred.active_tracer()
    if tracer is not None and _deferred.write_later(
            tracer, audio, name, data, step, description, sample_rate=sample_rate,
            max_outputs=max_outputs, encoding=encoding):
        return True
    writer = _writer(name, description)
    if writer is None:
        return False
    name, step, description = _common(name, step, description)
    payload = _audio.prepare(data, sample_rate, max_outputs)
    writer.put((_audio.AUDIO, name, payload, step, time.time(), description))
    return True


def _as_strings(data: Any) -> tuple[list[bytes], tuple[int, ...]]:
    """The strings of ``data`` as UTF-8 bytes (encoded here, in the caller) and its shape."""
    if isinstance(data, (str, bytes)):
        array = np.array(data, dtype=object)
    elif isinstance(data, (list, tuple)):
        array = np.asarray(data, dtype=object)
    else:
        array = np.asarray(data)
    if array.dtype.kind not in "USO":
        raise TypeError(f"text data must be a string or strings, got dtype {array.dtype}")
    items: list[bytes] = []
    for s in array.reshape(-1).tolist():
        if isinstance(s, bytes):
            items.append(s)
        elif isinstance(s, str):
            items.append(_validate.utf8("text data", s))
        else:
            raise TypeError(f"text data must hold only str or bytes, got {type(s).__name__}")
    return items, tuple(array.shape)

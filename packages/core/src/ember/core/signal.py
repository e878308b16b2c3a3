"""Signal processing, as ``tf.signal``: Fourier transforms, framing, windows and the
short-time Fourier transform.

- ``fft``, ``ifft``, ``fft2d``, ``ifft2d``, ``fft3d``, ``ifft3d``: complex transforms over
  the 1, 2 or 3 innermost axes (a real input is taken as complex);
- ``rfft``, ``irfft``, ``rfft2d``, ``irfft2d``, ``rfft3d``, ``irfft3d``: transforms of real
  signals, ``fft_length`` cropping or zero-padding the innermost axes;
- ``frame`` and ``overlap_and_add``: a signal cut into (overlapping) frames and frames
  summed back into a signal;
- ``hann_window``, ``hamming_window``: raised-cosine windows, computed as TensorFlow does
  (``periodic=True`` divides by ``window_length`` for an even length; an odd length gives
  the symmetric window either way);
- ``stft`` (``rfft(frame(x) * window, fft_length)``), ``inverse_stft`` and
  ``inverse_stft_window_fn``.

float32 signals give complex64 spectra, float64 ones complex128. Every function is
differentiable (the transforms' gradient rules live in ember-tape) and runs on the
inputs' device.

Examples:
    >>> import ember.core as em
    >>> x = em.constant([0., 1., 0., -1.] * 4)
    >>> s = em.signal.stft(x, frame_length=8, frame_step=4)
    >>> s.shape, s.dtype
    ((3, 5), dtype('complex64'))
    >>> em.abs(s)[0].numpy().round(3).tolist()
    [0.0, 1.0, 2.0, 1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _dtypes
from ._device import device
from ._errors import InvalidArgumentError
from ._ops import _args
from ._ops.array import concat, gather, pad, reshape
from ._ops.creation import constant, zeros
from ._ops.fft import (
    fft,
    fft2d,
    fft3d,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
from ._ops.math import add, cast, divide, multiply
from ._ops.math_complex import real_of

__all__ = [
    "fft", "fft2d", "fft3d", "frame", "hamming_window", "hann_window", "ifft", "ifft2d",
    "ifft3d", "inverse_stft", "inverse_stft_window_fn", "irfft", "irfft2d", "irfft3d",
    "overlap_and_add", "rfft", "rfft2d", "rfft3d", "stft",
]


def _positive(fn: str, arg: str, value: Any) -> int:
    try:
        v = int(value.numpy()) if hasattr(value, "numpy") else int(value)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"signal.{fn}: {arg} must be a positive integer, got "
                                   f"{value!r}") from e
    if v <= 0:
        raise InvalidArgumentError(f"signal.{fn}: {arg} must be a positive integer, got {v}")
    return v


# --- framing ------------------------------------------------------------------------------
def frame(signal: Any, frame_length: Any, frame_step: Any, pad_end: bool = False,
          pad_value: Any = 0, axis: int = -1, name: str | None = None) -> Any:
    """Cut ``signal`` along ``axis`` into frames of ``frame_length`` samples,
    ``frame_step`` apart: that axis becomes two, ``(frames, frame_length)``.

    Without ``pad_end`` only whole frames are kept (``1 + (n - frame_length) //
    frame_step`` of them, 0 for a short signal); with it the end is padded with
    ``pad_value`` so that ``ceil(n / frame_step)`` frames cover every sample.

    Examples:
        >>> import ember.core as em
        >>> em.signal.frame(em.range(5), 3, 2).numpy().tolist()
        [[0, 1, 2], [2, 3, 4]]
        >>> em.signal.frame(em.range(5), 3, 2, pad_end=True).shape
        (3, 3)
    """
    x = _args.tensor(signal)
    length = _positive("frame", "frame_length", frame_length)
    step = _positive("frame", "frame_step", frame_step)
    if x.ndim == 0:
        raise InvalidArgumentError("signal.frame: signal must have rank >= 1, got a scalar")
    ax = _args.axis1("signal.frame", axis, x.ndim)
    n = x.shape[ax]
    if pad_end:
        frames = -(-n // step)
        extra = max(0, length + step * (frames - 1) - n)
        if extra:
            pads = [(0, 0)] * x.ndim
            pads[ax] = (0, extra)
            x = pad(x, pads, constant_values=pad_value)
    else:
        frames = max(0, 1 + (n - length) // step)
    index = (np.arange(frames)[:, None] * step + np.arange(length)[None, :]).astype(np.int32)
    return gather(x, index, axis=ax)


def overlap_and_add(signal: Any, frame_step: Any, name: str | None = None) -> Any:
    """Sum frames ``(..., frames, frame_length)`` placed ``frame_step`` apart into one
    signal of ``(frames - 1) * frame_step + frame_length`` samples: the inverse of
    ``frame`` up to the overlaps' sums.

    Examples:
        >>> import ember.core as em
        >>> em.signal.overlap_and_add(em.ones([3, 4]), 2).numpy().tolist()
        [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0]
    """
    x = _args.tensor(signal)
    step = _positive("overlap_and_add", "frame_step", frame_step)
    if x.ndim < 2:
        raise InvalidArgumentError(f"signal.overlap_and_add: signal must have rank >= 2 "
                                   f"(frames, frame_length), got shape {tuple(x.shape)}")
    lead = tuple(x.shape[:-2])
    frames, length = x.shape[-2], x.shape[-1]
    out_len = max(0, (frames - 1) * step + length)
    if frames == 0 or length == 0:
        with device(x.device):
            return zeros(lead + (out_len,), x.dtype)
    k = -(-length // step)  # each frame as k sub-frames of frame_step samples
    pads = [(0, 0)] * x.ndim
    pads[-1] = (0, k * step - length)
    x = reshape(pad(x, pads), lead + (frames, k, step))
    total = None
    for j in range(k):  # sub-frame j of frame f lands at sub-frame f + j of the output
        part = x[..., j, :]
        shift = [(0, 0)] * (len(lead) + 2)
        shift[-2] = (j, k - 1 - j)
        part = pad(part, shift)
        total = part if total is None else add(total, part)
    out = reshape(total, lead + ((frames + k - 1) * step,))
    return out[..., :out_len]


# --- windows --------------------------------------------------------------------------------
def _raised_cosine(fn: str, window_length: Any, periodic: Any, dtype: Any, a: float,
                   b: float) -> Any:
    dt = _dtypes.as_dtype(dtype)
    if not _dtypes.is_floating(dt):
        raise InvalidArgumentError(f"signal.{fn}: dtype must be floating, got {dt}")
    try:
        n = int(window_length.numpy()) if hasattr(window_length, "numpy") else int(window_length)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"signal.{fn}: window_length must be an integer, got "
                                   f"{window_length!r}") from e
    if n < 0:
        raise InvalidArgumentError(f"signal.{fn}: window_length must be >= 0, got {n}")
    if n == 1:
        return constant(np.ones(1), dt)
    per = bool(periodic.numpy()) if hasattr(periodic, "numpy") else bool(periodic)
    # TensorFlow's denominator: n - 1, or n for a periodic window of even length
    denom = n + (1 if per and n % 2 == 0 else 0) - 1
    w = a - b * np.cos(2.0 * np.pi * np.arange(n) / max(denom, 1))
    return constant(w, dt)


def hann_window(window_length: Any, periodic: Any = True, dtype: Any = _dtypes.float32,
                name: str | None = None) -> Any:
    """The Hann window ``0.5 - 0.5 cos(2 pi k / N)``, ``k < window_length`` (``N``:
    ``window_length`` for an even periodic window, else ``window_length - 1``).

    Examples:
        >>> import ember.core as em
        >>> em.signal.hann_window(4).numpy().tolist()
        [0.0, 0.5, 1.0, 0.5]
    """
    return _raised_cosine("hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length: Any, periodic: Any = True, dtype: Any = _dtypes.float32,
                   name: str | None = None) -> Any:
    """The Hamming window ``0.54 - 0.46 cos(2 pi k / N)`` (``N`` as ``hann_window``'s).

    Examples:
        >>> import ember.core as em
        >>> em.signal.hamming_window(4, dtype=em.float64).numpy().round(2).tolist()
        [0.08, 0.54, 1.0, 0.54]
    """
    return _raised_cosine("hamming_window", window_length, periodic, dtype, 0.54, 0.46)


# --- the short-time Fourier transform --------------------------------------------------------
def _enclosing_power_of_two(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def stft(signals: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
         window_fn: Callable[..., Any] | None = hann_window, pad_end: bool = False,
         name: str | None = None) -> Any:
    """The short-time Fourier transform of real ``signals`` (``(..., samples)``):
    ``rfft(frame(signals) * window_fn(frame_length), fft_length)``, shape
    ``(..., frames, fft_length // 2 + 1)``.

    ``fft_length`` defaults to the smallest power of 2 >= ``frame_length``;
    ``window_fn(frame_length, dtype=...)`` gives the window (None: no window).

    Examples:
        >>> import ember.core as em
        >>> em.signal.stft(em.zeros([2, 16000]), 255, 128).shape
        (2, 124, 129)
    """
    x = _args.tensor(signals)
    if x.dtype.kind == "c":
        raise InvalidArgumentError(f"signal.stft: signals must be real, got dtype {x.dtype} "
                                   f"and shape {tuple(x.shape)}")
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:
        x = cast(x, np.float32)
    length = _positive("stft", "frame_length", frame_length)
    step = _positive("stft", "frame_step", frame_step)
    n = _enclosing_power_of_two(length) if fft_length is None else \
        _positive("stft", "fft_length", fft_length)
    framed = frame(x, length, step, pad_end=pad_end)
    if window_fn is not None:
        with device(x.device):
            window = _args.tensor(window_fn(length, dtype=x.dtype))
        framed = multiply(framed, cast(window, x.dtype))
    return rfft(framed, [n])


def inverse_stft(stfts: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
                 window_fn: Callable[..., Any] | None = hann_window,
                 name: str | None = None) -> Any:
    """The signal whose ``stft`` is ``stfts`` (``(..., frames, fft_length // 2 + 1)``):
    each frame's ``irfft``, cropped or zero-padded to ``frame_length``, times
    ``window_fn(frame_length)``, overlapped and added ``frame_step`` apart. With
    ``window_fn=inverse_stft_window_fn(frame_step)`` it inverts ``stft``'s Hann window.

    Examples:
        >>> import ember.core as em
        >>> x = em.random.normal([64], seed=1)
        >>> s = em.signal.stft(x, 16, 4)
        >>> y = em.signal.inverse_stft(s, 16, 4,
        ...                            window_fn=em.signal.inverse_stft_window_fn(4))
        >>> bool(abs(y[12:52] - x[12:52]).numpy().max() < 1e-5)
        True
    """
    s = _args.tensor(stfts)
    length = _positive("inverse_stft", "frame_length", frame_length)
    step = _positive("inverse_stft", "frame_step", frame_step)
    if s.ndim < 2:
        raise InvalidArgumentError(f"signal.inverse_stft: stfts must have rank >= 2 "
                                   f"(frames, bins), got shape {tuple(s.shape)}")
    n = _enclosing_power_of_two(length) if fft_length is None else \
        _positive("inverse_stft", "fft_length", fft_length)
    frames = irfft(s, [n])
    if n > length:
        frames = frames[..., :length]
    elif n < length:
        pads = [(0, 0)] * (frames.ndim - 1) + [(0, length - n)]
        frames = pad(frames, pads)
    if window_fn is not None:
        dt = real_of(frames.dtype)
        with device(s.device):
            window = _args.tensor(window_fn(length, dtype=dt))
        frames = multiply(frames, cast(window, dt))
    return overlap_and_add(frames, step)


def inverse_stft_window_fn(frame_step: Any,
                           forward_window_fn: Callable[..., Any] = hann_window,
                           name: str | None = None) -> Callable[..., Any]:
    """A ``window_fn`` for ``inverse_stft`` that undoes ``forward_window_fn``'s windowing
    with ``frame_step`` overlap: the forward window divided by the overlapped sum of its
    squares.

    Examples:
        >>> import ember.core as em
        >>> em.signal.inverse_stft_window_fn(2)(4).numpy().tolist()
        [0.0, 1.0, 1.0, 1.0]
    """
    step = _positive("inverse_stft_window_fn", "frame_step", frame_step)

    def inverse_stft_window_fn_inner(frame_length: Any, dtype: Any = _dtypes.float32) -> Any:
        length = _positive("inverse_stft_window_fn", "frame_length", frame_length)
        forward = _args.tensor(forward_window_fn(length, dtype=dtype))
        denom = multiply(forward, forward)
        overlaps = -(-length // step)
        denom = pad(denom, [(0, overlaps * step - length)])
        denom = reshape(denom, (overlaps, step))
        total = denom[0]
        for i in range(1, overlaps):
            total = add(total, denom[i])
        denom = reshape(concat([total] * overlaps, 0), (overlaps * step,))
        return divide(forward, denom[:length])

    return inverse_stft_window_fn_inner


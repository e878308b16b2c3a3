"""``keras.ops``' Fourier transforms (``keras.ops.math``): ``fft``, ``fft2``, ``ifft2``,
``rfft``, ``irfft``, ``stft`` and ``istft``, over ``em.signal``.

Complex values travel as Keras passes them: a ``(real, imag)`` tuple of float tensors of
one shape (float32 parts compute in complex64, float64 parts in complex128), and results
come back the same way. ``stft`` and ``istft`` are Keras's (its torch backend's numbers):
the signal reflect-padded by ``fft_length // 2`` on each side when ``center``, the window
(``"hann"``, ``"hamming"``, a tensor of ``sequence_length`` values, or None: ones for
``stft``, none for ``istft``) zero-padded to ``fft_length`` in the middle, and ``istft``
dividing by the windows' overlapped squares (their actual sums, smaller near the ends,
when ``sequence_length == fft_length`` and ``center``, as ``torch.istft``). The named windows are
periodic, as Keras's torch, JAX and numpy backends make them (``torch.hann_window``,
``scipy.signal.get_window``: an odd ``sequence_length`` divides by ``sequence_length``;
Keras's TensorFlow backend, through ``tf.signal.hann_window``, differs there).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from ._core import on_device_of, tensor


def _fail(fn: str, why: str) -> em.InvalidArgumentError:
    return em.InvalidArgumentError(f"ember.nn.ops.{fn}: {why}")


def _complex(fn: str, x: Any) -> em.Tensor:
    """The complex tensor of Keras's ``(real, imag)`` tuple."""
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise _fail(fn, "x must be a tuple of two tensors, real and imaginary parts; got "
                        f"{type(x).__name__}")
    re, im = tensor(x[0]), tensor(x[1])
    if re.shape != im.shape:
        raise _fail(fn, f"the real and imaginary parts must have one shape; got x[0].shape = "
                        f"{tuple(re.shape)}, x[1].shape = {tuple(im.shape)}")
    if re.dtype.kind != "f" or im.dtype.kind != "f":
        raise _fail(fn, f"the real and imaginary parts must be float tensors; got {re.dtype} "
                        f"and {im.dtype}")
    return em.complex(re, im)


def _parts(z: em.Tensor) -> tuple[em.Tensor, em.Tensor]:
    return em.math.real(z), em.math.imag(z)


def _length(fft_length: Any) -> Any:
    return None if fft_length is None else [int(fft_length)]


def fft(x: Any) -> tuple[em.Tensor, em.Tensor]:
    """The Fourier transform over the last axis of the complex ``(real, imag)`` tuple."""
    return _parts(em.signal.fft(_complex("fft", x)))


def fft2(x: Any) -> tuple[em.Tensor, em.Tensor]:
    """The 2-D Fourier transform over the last two axes of ``(real, imag)``."""
    return _parts(em.signal.fft2d(_complex("fft2", x)))


def ifft2(x: Any) -> tuple[em.Tensor, em.Tensor]:
    """The inverse 2-D Fourier transform over the last two axes of ``(real, imag)``."""
    return _parts(em.signal.ifft2d(_complex("ifft2", x)))


def rfft(x: Any, fft_length: Any = None) -> tuple[em.Tensor, em.Tensor]:
    """``(real, imag)`` of the real signal's transform over its last axis,
    ``fft_length // 2 + 1`` bins (``fft_length`` crops or zero-pads first)."""
    t = tensor(x)
    if t.dtype.kind != "f":
        t = em.cast(t, em.float32)
    return _parts(em.signal.rfft(t, _length(fft_length)))


def irfft(x: Any, fft_length: Any = None) -> em.Tensor:
    """The real signal of length ``fft_length`` (default ``2 * (bins - 1)``) whose
    ``rfft`` is the ``(real, imag)`` tuple."""
    return em.signal.irfft(_complex("irfft", x), _length(fft_length))


def _window(fn: str, window: Any, sequence_length: int, fft_length: int, dtype: Any,
            like: em.Tensor) -> em.Tensor | None:
    """The window of ``sequence_length`` values zero-padded to ``fft_length``, centred."""
    if window is None:
        if fn == "istft":
            return None
        with on_device_of(like):  # stft: a rectangular window of sequence_length
            win = em.ones([sequence_length], dtype)
    elif isinstance(window, str):
        if window not in ("hann", "hamming"):
            raise _fail(fn, f'a window given by name must be "hann" or "hamming"; got '
                            f"window={window!r}")
        a, b = (0.5, 0.5) if window == "hann" else (0.54, 0.46)
        k = np.arange(sequence_length)
        w = a - b * np.cos(2 * np.pi * k / sequence_length)  # periodic (torch, scipy)
        with on_device_of(like):
            win = em.constant(w, dtype)
    else:
        win = tensor(window, dtype)
        if win.ndim != 1 or win.shape[0] != sequence_length:
            raise _fail(fn, f"the window must have shape [sequence_length] = "
                            f"[{sequence_length}]; got shape {tuple(win.shape)}")
    left = (fft_length - sequence_length) // 2
    return em.pad(win, [(left, fft_length - sequence_length - left)])


def _check(fn: str, sequence_length: Any, sequence_stride: Any, fft_length: Any
           ) -> tuple[int, int, int]:
    n, step, f = int(sequence_length), int(sequence_stride), int(fft_length)
    if n <= 0 or step <= 0:
        raise _fail(fn, f"sequence_length and sequence_stride must be positive; got "
                        f"{n} and {step}")
    if f < n:
        raise _fail(fn, f"fft_length must be >= sequence_length; got sequence_length={n}, "
                        f"fft_length={f}")
    return n, step, f


def stft(x: Any, sequence_length: Any, sequence_stride: Any, fft_length: Any,
         window: Any = "hann", center: bool = True) -> tuple[em.Tensor, em.Tensor]:
    """``(real, imag)`` of the short-time Fourier transform along the last axis:
    ``(..., frames, fft_length // 2 + 1)``."""
    t = tensor(x)
    if t.dtype not in (em.float32, em.float64):
        raise em.DTypeError(f"ember.nn.ops.stft: x must be float32 or float64; got {t.dtype}")
    n, step, f = _check("stft", sequence_length, sequence_stride, fft_length)
    if center:
        pads = [(0, 0)] * (t.ndim - 1) + [(f // 2, f // 2)]
        t = em.pad(t, pads, mode="REFLECT")
    win = _window("stft", window, n, f, t.dtype, t)
    s = em.signal.stft(t, frame_length=f, frame_step=step, fft_length=f,
                       window_fn=None if win is None else (lambda length, dtype=None: win))
    return _parts(s)


def istft(x: Any, sequence_length: Any, sequence_stride: Any, fft_length: Any,
          length: Any = None, window: Any = "hann", center: bool = True) -> em.Tensor:
    """The signal whose ``stft`` (same arguments) is the ``(real, imag)`` tuple; ``length``
    crops it (after the ``center`` padding is removed)."""
    z = _complex("istft", x)
    n, step, f = _check("istft", sequence_length, sequence_stride, fft_length)
    dtype = em.math.real(z).dtype if z.ndim else em.float32
    win = _window("istft", window, n, f, dtype, z)
    if n == f and center and win is not None:
        # Keras's torch backend hands this case to torch.istft, which divides by the
        # windows' actual overlapped squares (smaller near the ends), not their steady sum
        frames = em.multiply(em.signal.irfft(z, [f]), win)
        y = em.signal.overlap_and_add(frames, step)
        squares = em.multiply(em.ones(z.shape[-2:-1] + (1,), dtype), em.square(win))
        envelope = em.signal.overlap_and_add(squares, step)
        tiny = em.less(envelope, 1e-11)
        y = em.divide(y, em.where(tiny, em.ones_like(envelope), envelope))
        start = f // 2
        end = start + int(length) if length is not None else y.shape[-1] - f // 2
        if end > y.shape[-1]:
            y = em.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, end - y.shape[-1])])
        return y[..., start:end]
    window_fn = None if win is None else em.signal.inverse_stft_window_fn(
        step, lambda length, dtype=None: win)
    y = em.signal.inverse_stft(z, frame_length=f, frame_step=step, fft_length=f,
                               window_fn=window_fn)
    expected = f + step * (z.shape[-2] - 1)
    start = f // 2 if center else 0
    if length is not None:
        end = start + int(length)
    elif center:
        end = y.shape[-1] - f // 2
    else:
        end = expected
    return y[..., start:end]

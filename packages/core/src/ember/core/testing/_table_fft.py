"""Specs for ``em.signal`` (Fourier transforms, framing, windows, stft) and the complex
parts (``em.complex``, ``em.math.real``/``imag``/``conj``), against numpy.

A complex input is made from two real arrays (its parts) through ``em.complex``, so the
gradient table differentiates the parts; a complex output is checked there as its real
and imaginary parts. The case dtype float32 stands for complex64, float64 for complex128.
Lengths cover odd and even sizes and ``fft_length`` cropping and padding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtypes
from .. import math as em_math
from .. import signal as sg
from .._ops.math_complex import complex as em_complex
from ._spec import F32, F64, FLOATS, OpSpec, args, arr, case

# the transforms' rounding is bounded relative to the whole output, not each element
_TOL = {F32: (2e-4, 2e-5), F64: (1e-9, 1e-11), np.dtype(np.complex64): (2e-4, 2e-5),
        np.dtype(np.complex128): (1e-9, 1e-11)}


def _cdt(x: np.ndarray) -> Any:
    return np.complex128 if x.dtype == np.float64 else np.complex64


def _z(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    return (re.astype(np.float64) + 1j * im.astype(np.float64)).astype(_cdt(re))


def _on_complex(fn: Any) -> Any:
    """``fn`` of the complex tensor with parts ``re`` and ``im``."""
    def call(re: Any, im: Any, *a: Any, **k: Any) -> Any:
        return fn(em_complex(re, im), *a, **k)
    call.__name__ = getattr(fn, "__name__", "fn")
    return call


def _c2c_ref(f: Any) -> Any:
    def ref(re: np.ndarray, im: np.ndarray) -> np.ndarray:
        return f(_z(re, im).astype(np.complex128)).astype(_cdt(re))
    return ref


def _cases_c(*shapes: tuple[int, ...]) -> tuple[Any, ...]:
    return tuple(case("x".join(map(str, s)) or "scalar", args(arr(*s, domain="any"),
                                                                 arr(*s, domain="any")))
                 for s in shapes)


def _rfft_ref(f: Any, rank: int) -> Any:
    def ref(x: np.ndarray, fft_length: Any = None) -> np.ndarray:
        s = None if fft_length is None else list(np.atleast_1d(fft_length))
        axes = tuple(range(-rank, 0))
        return f(x.astype(np.float64), s=s, axes=axes).astype(_cdt(x))
    return ref


def _irfft_ref(f: Any, rank: int) -> Any:
    def ref(re: np.ndarray, im: np.ndarray, fft_length: Any = None) -> np.ndarray:
        z = _z(re, im).astype(np.complex128)
        if fft_length is None:
            s = list(z.shape[-rank:-1]) + [2 * (z.shape[-1] - 1)]
        else:
            s = list(np.atleast_1d(fft_length))
        return f(z, s=s, axes=tuple(range(-rank, 0))).astype(re.dtype)
    return ref


def _frame_ref(x: np.ndarray, frame_length: int, frame_step: int, pad_end: bool = False,
               pad_value: Any = 0, axis: int = -1) -> np.ndarray:
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    if pad_end:
        frames = -(-n // frame_step)
        extra = max(0, frame_length + frame_step * (frames - 1) - n)
        x = np.concatenate([x, np.full(x.shape[:-1] + (extra,), pad_value, x.dtype)], -1)
    else:
        frames = max(0, 1 + (n - frame_length) // frame_step)
    out = np.stack([x[..., f * frame_step:f * frame_step + frame_length]
                    for f in range(frames)], -2) if frames else \
        np.zeros(x.shape[:-1] + (0, frame_length), x.dtype)
    ax = axis % (x.ndim)
    return np.moveaxis(out, (-2, -1), (ax, ax + 1))


def _ola_ref(x: np.ndarray, frame_step: int) -> np.ndarray:
    frames, length = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + (max(0, (frames - 1) * frame_step + length),), x.dtype)
    for f in range(frames):
        out[..., f * frame_step:f * frame_step + length] += x[..., f, :]
    return out


def _window_ref(a: float, b: float) -> Any:
    def ref(window_length: int, periodic: bool = True, dtype: Any = np.float32) -> np.ndarray:
        if window_length == 1:
            return np.ones(1, dtype)
        denom = window_length - 1 + (1 if periodic and window_length % 2 == 0 else 0)
        k = np.arange(window_length)
        return (a - b * np.cos(2 * np.pi * k / max(denom, 1))).astype(dtype)
    return ref


def _hann(n: int, dtype: Any) -> np.ndarray:
    return _window_ref(0.5, 0.5)(n, True, dtype)


def _stft_ref(x: np.ndarray, frame_length: int, frame_step: int, fft_length: Any = None,
              pad_end: bool = False) -> np.ndarray:
    n = fft_length or 1 << max(0, (frame_length - 1).bit_length())
    framed = _frame_ref(x, frame_length, frame_step, pad_end).astype(np.float64)
    framed = framed * _hann(frame_length, np.float64)
    return np.fft.rfft(framed, n).astype(_cdt(x))


def _istft_ref(re: np.ndarray, im: np.ndarray, frame_length: int, frame_step: int,
               fft_length: Any = None) -> np.ndarray:
    n = fft_length or 1 << max(0, (frame_length - 1).bit_length())
    frames = np.fft.irfft(_z(re, im).astype(np.complex128), n)
    frames = frames[..., :frame_length] if n >= frame_length else np.concatenate(
        [frames, np.zeros(frames.shape[:-1] + (frame_length - n,))], -1)
    return _ola_ref(frames * _hann(frame_length, np.float64), frame_step).astype(re.dtype)


def _fft_cases() -> list[OpSpec]:
    c2c = [
        ("fft", sg.fft, np.fft.fft, 1, ((5,), (3, 6), (0, 3))),
        ("ifft", sg.ifft, np.fft.ifft, 1, ((7,), (2, 4))),
        ("fft2d", sg.fft2d, np.fft.fft2, 2, ((3, 5), (2, 4, 3))),
        ("ifft2d", sg.ifft2d, np.fft.ifft2, 2, ((3, 4), (2, 3, 5))),
        ("fft3d", sg.fft3d, lambda z: np.fft.fftn(z, axes=(-3, -2, -1)), 3, ((2, 3, 4),)),
        ("ifft3d", sg.ifft3d, lambda z: np.fft.ifftn(z, axes=(-3, -2, -1)), 3, ((2, 3, 3),)),
    ]
    out = [OpSpec(f"signal.{name}", _on_complex(fn), _c2c_ref(ref), _cases_c(*shapes), FLOATS,
                  True, (0, 1), tol=_TOL) for name, fn, ref, _, shapes in c2c]
    r1 = (case("even", args(arr(3, 6, domain="any"))), case("odd", args(arr(7, domain="any"))),
          case("pad", args(arr(2, 5, domain="any")), fft_length=[8]),
          case("crop", args(arr(2, 9, domain="any")), fft_length=[6]),
          case("crop_odd", args(arr(9, domain="any")), fft_length=5),
          case("length_one", args(arr(2, 1, domain="any"))))
    r2 = (case("even", args(arr(3, 4, domain="any"))),
          case("odd", args(arr(2, 3, 5, domain="any"))),
          case("pad_crop", args(arr(3, 7, domain="any")), fft_length=[4, 8]))
    r3 = (case("cube", args(arr(2, 3, 4, domain="any"))),
          case("pad_crop", args(arr(2, 3, 5, domain="any")), fft_length=[3, 2, 4]))
    for name, fn, ref, rank, cases in (("rfft", sg.rfft, np.fft.rfftn, 1, r1),
                                       ("rfft2d", sg.rfft2d, np.fft.rfftn, 2, r2),
                                       ("rfft3d", sg.rfft3d, np.fft.rfftn, 3, r3)):
        out.append(OpSpec(f"signal.{name}", fn, _rfft_ref(ref, rank), cases, FLOATS, tol=_TOL))

    def c(name: str, *shape: int, **kw: Any) -> Any:
        return case(name, args(arr(*shape, domain="any"), arr(*shape, domain="any")), **kw)

    i1 = (c("even", 3, 4), c("odd_length", 4, fft_length=[7]), c("pad", 2, 3, fft_length=[10]),
          c("crop", 6, fft_length=4), c("length_one", 2, 1, fft_length=[1]))
    i2 = (c("even", 3, 3), c("odd", 2, 3, 4, fft_length=[3, 5]),
          c("pad_crop", 4, 2, fft_length=[3, 6]))
    i3 = (c("cube", 2, 3, 3), c("odd", 2, 2, 3, fft_length=[2, 2, 5]))
    for name, fn, ref, rank, cases in (("irfft", sg.irfft, np.fft.irfftn, 1, i1),
                                       ("irfft2d", sg.irfft2d, np.fft.irfftn, 2, i2),
                                       ("irfft3d", sg.irfft3d, np.fft.irfftn, 3, i3)):
        out.append(OpSpec(f"signal.{name}", _on_complex(fn), _irfft_ref(ref, rank), cases,
                          FLOATS, True, (0, 1), tol=_TOL))
    return out


def _parts_specs() -> list[OpSpec]:
    cases = _cases_c((5,), (2, 3), ())

    def zref(f: Any) -> Any:
        return lambda re, im: np.asarray(f(_z(re, im)))

    return [
        OpSpec("complex", em_complex, _z,
               cases + (case("broadcast", args(arr(2, 3, domain="any"), arr(3, domain="any"))),),
               FLOATS, True, (0, 1)),
        OpSpec("math.real", _on_complex(em_math.real), zref(np.real), cases, FLOATS, True, (0, 1)),
        OpSpec("math.imag", _on_complex(em_math.imag), zref(np.imag), cases, FLOATS, True, (0, 1)),
        OpSpec("math.conj", _on_complex(em_math.conj), zref(np.conj), cases, FLOATS, True, (0, 1)),
    ]


def _signal_specs() -> list[OpSpec]:
    frame_cases = (
        case("plain", args(arr(2, 10, domain="any"), 4, 3)),
        case("pad_end", args(arr(9, domain="any"), 4, 2), pad_end=True, pad_value=0.5),
        case("axis0", args(arr(7, 3, domain="any"), 3, 2), axis=0),
        case("short", args(arr(2, 3, domain="any"), 5, 1)),
    )
    ola_cases = (
        case("overlap", args(arr(3, 4, domain="any"), 2)),
        case("uneven", args(arr(2, 3, 5, domain="any"), 3)),
        case("gaps", args(arr(3, 2, domain="any"), 3)),
    )
    win = (case("periodic", args(8)), case("odd", args(7)), case("symmetric", args(6),
           periodic=False), case("one", args(1)))

    def window(name: str, fn: Any, a: float, b: float) -> OpSpec:
        """The window in the case's dtype (given as the argument ``dtype``)."""
        ref = _window_ref(a, b)
        cases = tuple(case(c.name, (lambda m: lambda rng, dt: [m(rng, dt)[0],
                                                                _dtypes.as_dtype(dt)])(c.make),
                           **c.kwargs) for c in win)
        return OpSpec(f"signal.{name}",
                      lambda n, dt, periodic=True: fn(n, periodic, dtype=dt),
                      lambda n, dt, periodic=True: ref(n, periodic, dt),
                      cases, FLOATS, False, (), tol={F32: (1e-6, 1e-7)})

    hann = window("hann_window", sg.hann_window, 0.5, 0.5)
    hamming = window("hamming_window", sg.hamming_window, 0.54, 0.46)

    stft_cases = (
        case("default_fft_length", args(arr(2, 40, domain="any"), 12, 5)),
        case("odd_frames_fft", args(arr(33, domain="any"), 9, 4), fft_length=11),
        case("pad_end", args(arr(30, domain="any"), 8, 6), pad_end=True),
    )
    istft_cases = (
        case("default", args(arr(2, 5, 9, domain="any"), arr(2, 5, 9, domain="any"), 16, 4)),
        case("short_fft", args(arr(4, 5, domain="any"), arr(4, 5, domain="any"), 10, 3),
             fft_length=8),
    )

    def inv_window_ref(frame_step: int, frame_length: int, dtype: Any) -> np.ndarray:
        w = _hann(frame_length, np.float64)
        overlaps = -(-frame_length // frame_step)
        d = np.pad(w * w, (0, overlaps * frame_step - frame_length))
        d = np.tile(d.reshape(overlaps, frame_step).sum(0), overlaps)[:frame_length]
        return (w / d).astype(dtype)

    return [
        OpSpec("signal.frame", sg.frame, _frame_ref, frame_cases, FLOATS),
        OpSpec("signal.overlap_and_add", sg.overlap_and_add, _ola_ref, ola_cases, FLOATS),
        hann, hamming,
        OpSpec("signal.stft", sg.stft, _stft_ref, stft_cases, FLOATS, tol=_TOL),
        OpSpec("signal.inverse_stft", _on_complex(sg.inverse_stft), _istft_ref, istft_cases,
               FLOATS, True, (0, 1), tol=_TOL),
        OpSpec("signal.inverse_stft_window_fn",
               lambda step, n, dt: sg.inverse_stft_window_fn(step)(n, dtype=dt),
               inv_window_ref,
               (case("step4", lambda rng, dt: [4, 16, _dtypes.as_dtype(dt)]),
                case("step3", lambda rng, dt: [3, 10, _dtypes.as_dtype(dt)])),
               FLOATS, False, (), tol={F32: (1e-6, 1e-7)}),
    ]


def specs() -> list[OpSpec]:
    return _fft_cases() + _parts_specs() + _signal_specs()

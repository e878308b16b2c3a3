"""Discrete Fourier transforms over a tensor's innermost axes, as ``tf.signal``'s.

Three primitives carry every transform: ``fft`` (complex to complex, forward or inverse,
over the last ``rank`` axes), ``rfft`` (real to the non-negative half of the spectrum)
and ``irfft`` (that half back to a real signal of a given length). The public functions
(``fft``, ``ifft``, ``fft2d``, ..., ``irfft3d``) check their arguments, convert dtypes and
crop or zero-pad the innermost axes to ``fft_length`` before calling them, so the
primitives (and their gradient rules in ember-tape) see exact shapes only.

Conventions are numpy's and TensorFlow's: the forward transform is unnormalized
(``y[k] = sum_j x[j] exp(-2 pi i j k / n)``), the inverse divides by ``n``. ``rfft`` of
float32 gives complex64 and of float64 complex128; ``irfft`` gives the matching real
dtype. ``irfft`` reads the spectrum as the half of a Hermitian one: the imaginary parts of
its zero-frequency bin (and, for an even length, its Nyquist bin) are ignored.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._registry import execute, register
from .._tensor import Tensor
from . import _args
from .array import pad
from .math import cast
from .math_complex import complex_of, real_of

F = "fft"
_FLOAT_PARTS = (np.dtype(np.float32), np.dtype(np.float64))


def _axes(rank: int) -> tuple[int, ...]:
    return tuple(range(-rank, 0))


def _empty(shape: tuple[int, ...]) -> bool:
    return builtins.any(d == 0 for d in shape)


def _fft(be: Any, x: Any, *, rank: int, inverse: bool) -> Any:
    xp = be.xp
    if _empty(x.shape):
        return xp.zeros(x.shape, x.dtype)
    f = xp.fft.ifftn if inverse else xp.fft.fftn
    return f(x, axes=_axes(rank)).astype(x.dtype, copy=False)


def _rfft(be: Any, x: Any, *, rank: int) -> Any:
    xp = be.xp
    shape = x.shape[:-1] + (x.shape[-1] // 2 + 1,)
    if _empty(x.shape):
        return xp.zeros(shape, complex_of(x.dtype))
    return xp.fft.rfftn(x, axes=_axes(rank)).astype(complex_of(x.dtype), copy=False)


def _irfft(be: Any, y: Any, *, rank: int, fft_length: tuple[int, ...]) -> Any:
    xp = be.xp
    shape = y.shape[:-rank] + tuple(fft_length)
    if _empty(shape):
        return xp.zeros(shape, real_of(y.dtype))
    return xp.fft.irfftn(y, s=fft_length, axes=_axes(rank)).astype(real_of(y.dtype),
                                                                     copy=False)


_fft_op = register("fft", _fft, family=F)
_rfft_op = register("rfft", _rfft, family=F)
_irfft_op = register("irfft", _irfft, family=F)


# --- arguments ----------------------------------------------------------------------------
def _input(fn: str, x: Any, rank: int) -> Tensor:
    t = _args.tensor(x)
    if t.ndim < rank:
        raise InvalidArgumentError(f"signal.{fn}: input must have rank >= {rank} (the "
                                   f"transform runs over its {rank} innermost axes), got "
                                   f"shape {tuple(t.shape)}")
    return t


def _as_complex(fn: str, t: Tensor) -> Tensor:
    """A complex64/complex128 tensor (a real one is cast: float64 to complex128, every
    other real dtype to complex64)."""
    if t.dtype.kind == "c":
        return t
    if t.dtype.kind not in "fiub":
        raise InvalidArgumentError(f"signal.{fn}: input must be complex or real, got dtype "
                                   f"{t.dtype}")
    return cast(t, complex_of(t.dtype if t.dtype in _FLOAT_PARTS else np.float32))


def _lengths(fn: str, fft_length: Any, rank: int) -> tuple[int, ...] | None:
    if fft_length is None:
        return None
    n = _args.shape(f"signal.{fn}", fft_length)
    if len(n) != rank or builtins.min(n) < 0:
        raise InvalidArgumentError(f"signal.{fn}: fft_length must give {rank} non-negative "
                                   f"length{'s' if rank > 1 else ''} (one per transformed "
                                   f"axis), got {fft_length!r}")
    return n


def _fit(t: Tensor, sizes: tuple[int, ...]) -> Tensor:
    """``t`` with its innermost ``len(sizes)`` axes cropped or zero-padded to ``sizes``."""
    rank = len(sizes)
    have = tuple(t.shape[-rank:])
    if have == sizes:
        return t
    keep = tuple(builtins.slice(0, builtins.min(h, s)) for h, s in zip(have, sizes))
    if builtins.any(s < h for h, s in zip(have, sizes)):
        t = t[(Ellipsis,) + keep]
    if builtins.any(s > h for h, s in zip(have, sizes)):
        lead = [(0, 0)] * (t.ndim - rank)
        t = pad(t, lead + [(0, builtins.max(s - h, 0)) for h, s in zip(have, sizes)])
    return t


def c2c(fn: str, input: Any, rank: int, inverse: bool) -> Any:
    """The complex transform of public function ``fn`` over the ``rank`` innermost axes."""
    t = _as_complex(fn, _input(fn, input, rank))
    return execute(_fft_op, (t,), {"rank": rank, "inverse": inverse})


def r2c(fn: str, input_tensor: Any, fft_length: Any, rank: int) -> Any:
    """The real-input transform of public function ``fn``."""
    t = _input(fn, input_tensor, rank)
    if t.dtype.kind == "c":
        raise InvalidArgumentError(f"signal.{fn}: input_tensor must be real (float32 or "
                                   f"float64), got dtype {t.dtype} and shape {tuple(t.shape)}")
    if t.dtype.kind not in "fiub":
        raise InvalidArgumentError(f"signal.{fn}: input_tensor must be real, got dtype "
                                   f"{t.dtype}")
    if t.dtype not in _FLOAT_PARTS:
        t = cast(t, np.float32)
    n = _lengths(fn, fft_length, rank)
    if n is not None:
        t = _fit(t, n)
    return execute(_rfft_op, (t,), {"rank": rank})


def c2r(fn: str, input_tensor: Any, fft_length: Any, rank: int) -> Any:
    """The inverse real transform of public function ``fn``."""
    t = _as_complex(fn, _input(fn, input_tensor, rank))
    n = _lengths(fn, fft_length, rank)
    if n is None:
        inner = tuple(t.shape[-rank:])
        if inner[-1] == 0:
            raise InvalidArgumentError(f"signal.{fn}: cannot infer fft_length from an "
                                       f"innermost axis of size 0 (shape {tuple(t.shape)}); "
                                       "give fft_length")
        n = inner[:-1] + (2 * (inner[-1] - 1),)
    t = _fit(t, n[:-1] + (n[-1] // 2 + 1,))
    return execute(_irfft_op, (t,), {"rank": rank, "fft_length": n})


# --- the public transforms (tf.signal's names) ---------------------------------------------
def fft(input: Any, name: str | None = None) -> Any:
    """The discrete Fourier transform over the innermost axis (``tf.signal.fft``).

    A real input is taken as complex (float64 as complex128, other real dtypes as
    complex64).

    Examples:
        >>> import ember.core as em
        >>> em.signal.fft(em.constant([1., 2., 3., 4.])).numpy().tolist()
        [(10+0j), (-2+2j), (-2+0j), (-2-2j)]
    """
    return c2c("fft", input, 1, False)


def ifft(input: Any, name: str | None = None) -> Any:
    """The inverse discrete Fourier transform over the innermost axis (divided by its
    length, as ``tf.signal.ifft``).

    Examples:
        >>> import ember.core as em
        >>> em.signal.ifft(em.signal.fft(em.constant([1., 2.]))).numpy().tolist()
        [(1+0j), (2+0j)]
    """
    return c2c("ifft", input, 1, True)


def fft2d(input: Any, name: str | None = None) -> Any:
    """The 2-D discrete Fourier transform over the 2 innermost axes (``tf.signal.fft2d``).

    Examples:
        >>> import ember.core as em
        >>> em.signal.fft2d(em.constant([[1., 2.], [3., 4.]])).numpy().real.tolist()
        [[10.0, -2.0], [-4.0, 0.0]]
    """
    return c2c("fft2d", input, 2, False)


def ifft2d(input: Any, name: str | None = None) -> Any:
    """The inverse 2-D discrete Fourier transform over the 2 innermost axes.

    Examples:
        >>> import ember.core as em
        >>> em.signal.ifft2d(em.constant([[4., 0.], [0., 0.]])).numpy().real.tolist()
        [[1.0, 1.0], [1.0, 1.0]]
    """
    return c2c("ifft2d", input, 2, True)


def fft3d(input: Any, name: str | None = None) -> Any:
    """The 3-D discrete Fourier transform over the 3 innermost axes.

    Examples:
        >>> import ember.core as em
        >>> float(em.signal.fft3d(em.ones([2, 2, 2])).numpy().real.sum())
        8.0
    """
    return c2c("fft3d", input, 3, False)


def ifft3d(input: Any, name: str | None = None) -> Any:
    """The inverse 3-D discrete Fourier transform over the 3 innermost axes.

    Examples:
        >>> import ember.core as em
        >>> float(em.signal.ifft3d(em.ones([2, 2, 2])).numpy().real.sum())
        1.0
    """
    return c2c("ifft3d", input, 3, True)


def rfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
    """The Fourier transform of a real signal over its innermost axis, non-negative
    frequencies only: ``fft_length // 2 + 1`` bins (``tf.signal.rfft``).

    ``fft_length`` (an int or a one-element list; default the axis's size) crops the
    signal or pads it with zeros first. float32 gives complex64, float64 complex128.

    Examples:
        >>> import ember.core as em
        >>> em.signal.rfft(em.constant([1., 2., 3.]), fft_length=[4]).numpy().tolist()
        [(6+0j), (-2-2j), (2+0j)]
    """
    return r2c("rfft", input_tensor, fft_length, 1)


def irfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
    """The real signal of length ``fft_length`` whose ``rfft`` is ``input_tensor``
    (``tf.signal.irfft``): the inner axis is cropped or zero-padded to
    ``fft_length // 2 + 1`` bins first. ``fft_length`` defaults to
    ``2 * (bins - 1)``; give it for an odd length.

    Examples:
        >>> import ember.core as em
        >>> x = em.constant([1., 2., 3.])
        >>> em.signal.irfft(em.signal.rfft(x), fft_length=[3]).numpy().round(6).tolist()
        [1.0, 2.0, 3.0]
    """
    return c2r("irfft", input_tensor, fft_length, 1)


def rfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
    """``rfft`` over the 2 innermost axes (the last one halved); ``fft_length`` gives
    both lengths.

    Examples:
        >>> import ember.core as em
        >>> em.signal.rfft2d(em.ones([2, 4])).shape
        (2, 3)
    """
    return r2c("rfft2d", input_tensor, fft_length, 2)


def irfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
    """The inverse of ``rfft2d``: a real signal of shape ``fft_length`` in the 2
    innermost axes.

    Examples:
        >>> import ember.core as em
        >>> em.signal.irfft2d(em.signal.rfft2d(em.ones([2, 3])), [2, 3]).shape
        (2, 3)
    """
    return c2r("irfft2d", input_tensor, fft_length, 2)


def rfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
    """``rfft`` over the 3 innermost axes (the last one halved).

    Examples:
        >>> import ember.core as em
        >>> em.signal.rfft3d(em.ones([2, 2, 4])).shape
        (2, 2, 3)
    """
    return r2c("rfft3d", input_tensor, fft_length, 3)


def irfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
    """The inverse of ``rfft3d``.

    Examples:
        >>> import ember.core as em
        >>> em.signal.irfft3d(em.signal.rfft3d(em.ones([2, 2, 4]))).shape
        (2, 2, 4)
    """
    return c2r("irfft3d", input_tensor, fft_length, 3)

"""Gradients of core's Fourier transforms (``_ops/fft``).

The convention for complex tensors is TensorFlow's and PyTorch's: the gradient of a real
loss ``L`` with respect to ``z`` is ``dL/d re(z) + i dL/d im(z)``, so a rule returns the
adjoint (conjugate transpose) of the op's Jacobian applied to ``dy``.

- ``fft`` over ``N`` points is ``F``; its adjoint ``F^H`` is ``N * ifft``, and the adjoint of
  ``ifft = F^H / N`` is ``fft / N``.
- ``rfft`` is the first ``n // 2 + 1`` bins of ``F`` on a real signal; its adjoint is
  ``re(F^H pad(dy))``, which is ``N * irfft(w * dy)`` with ``w`` 1 at the zero-frequency
  (and even-length Nyquist) bin and 1/2 at the others (``irfft`` counts those twice).
- ``irfft`` reads each interior bin twice and the end bins once (imaginary parts
  ignored); its adjoint is ``rfft(dx) * c / N`` with ``c`` 2 at interior bins, 1 at the
  ends (``rfft`` of a real ``dx`` is real at the ends, so the ignored parts get 0).

Each rule is written with ember's transforms, so second derivatives come free.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

from . import Gradients, OpContext
from . import register_gradient as reg

_C2C = {1: (em.signal.fft, em.signal.ifft), 2: (em.signal.fft2d, em.signal.ifft2d),
        3: (em.signal.fft3d, em.signal.ifft3d)}
_R2C = {1: em.signal.rfft, 2: em.signal.rfft2d, 3: em.signal.rfft3d}
_C2R = {1: em.signal.irfft, 2: em.signal.irfft2d, 3: em.signal.irfft3d}


def _bin_weights(n: int, interior: float, dtype: Any, like: Any) -> Any:
    """The ``n // 2 + 1`` bins' weights: 1 at bin 0 (and bin n / 2 for an even n),
    ``interior`` at the others, on ``like``'s device."""
    w = np.full(n // 2 + 1, interior)
    w[0] = 1.0
    if n % 2 == 0 and n > 0:
        w[-1] = 1.0
    with em.device(like.device):
        return em.constant(w, dtype)


@reg("fft", complex="own")  # the adjoint, complex as it is
def _fft(op: OpContext, dy: Any) -> Gradients:
    rank = op.attrs["rank"]
    n = math.prod(op.inputs[0].shape[-rank:])
    forward, inverse = _C2C[rank]
    if op.attrs["inverse"]:  # ifft = F^H / N: adjoint F / N
        return em.multiply(forward(dy), 1.0 / max(n, 1))
    return em.multiply(inverse(dy), float(n))  # F^H = N * ifft


@reg("rfft", complex="own")  # the adjoint, complex as it is
def _rfft(op: OpContext, dy: Any) -> Gradients:
    rank = op.attrs["rank"]
    x = op.inputs[0]
    lengths = tuple(x.shape[-rank:])
    w = _bin_weights(lengths[-1], 0.5, x.dtype, dy)
    return em.multiply(_C2R[rank](em.multiply(dy, w), lengths), float(math.prod(lengths)))


@reg("irfft", complex="own")  # the adjoint, complex as it is
def _irfft(op: OpContext, dy: Any) -> Gradients:
    rank = op.attrs["rank"]
    lengths = tuple(op.attrs["fft_length"])
    c = _bin_weights(lengths[-1], 2.0, dy.dtype, dy)
    spec = _R2C[rank](dy, lengths)
    return em.multiply(spec, em.multiply(c, 1.0 / max(math.prod(lengths), 1)))

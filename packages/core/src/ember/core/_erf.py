"""erf on numpy arrays, vectorised (numpy has none, and scipy is optional).

The rational approximations of Cephes' ``ndtr.c`` (S. L. Moshier, public domain), in
double precision: ``x * T(x^2) / U(x^2)`` for ``|x| <= 1``, and ``1 - erfc(|x|)`` beyond,
with ``erfc(a) = exp(-a^2) P(a) / Q(a)`` for ``a < 8`` and ``R(a) / S(a)`` after. Every
dtype computes in float64 and is rounded once to its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
      7.00332514112805075473e3, 5.55923013010394962768e4)
_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
      2.26290000613890934246e4, 4.92673942608635921086e4)
_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
      4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
      9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
      9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
      1.65666309194161350182e3, 5.57535340817727675546e2)
_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
      6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_S = (1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
      1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)


def _poly(x: np.ndarray, coefs: tuple[float, ...]) -> np.ndarray:
    """``coefs[0] x^n + ... + coefs[n]`` by Horner's rule."""
    out = np.full_like(x, coefs[0])
    for c in coefs[1:]:
        out *= x
        out += c
    return out


def erf(x: Any) -> np.ndarray:
    """The error function of ``x`` elementwise, in ``x``'s dtype (float64 within a few
    units in the last place; NaN stays NaN, +-inf give +-1)."""
    a = np.asarray(x)
    dtype = a.dtype if a.dtype.kind in "fc" else np.dtype(np.float64)
    v = a.astype(np.float64)
    out = np.empty_like(v)
    ax = np.abs(v)
    small = ax <= 1.0
    z = v[small]
    z2 = z * z
    out[small] = z * _poly(z2, _T) / _poly(z2, _U)
    big = ~small
    b = np.minimum(ax[big], 30.0)  # erfc(30) is 0 in double: keeps inf out of P/Q
    near = b < 8.0
    ratio = np.where(near, _poly(b, _P) / _poly(b, _Q), _poly(b, _R) / _poly(b, _S))
    out[big] = np.copysign(1.0 - np.exp(-b * b) * ratio, v[big])
    return out.astype(dtype, copy=False)

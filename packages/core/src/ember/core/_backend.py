"""Backends: the array module (``xp``) and the few operations that differ between them.

Forward implementations receive a backend and use ``be.xp``; everything that is not the
same between numpy and cupy (host transfer, scatter-add, special functions) is a method
here. ``_cupy_backend`` is the only module that imports cupy, and only on first GPU use.
"""

from __future__ import annotations

import contextlib
from typing import Any

import ml_dtypes
import numpy as np

from . import _erf
from ._errors import DTypeError

# dtypes a cupy GPU cannot hold: ember raises a clear error naming the op and the dtype
# instead of emulating them (cupy has no bfloat16 before 14, and its 14 support is marked
# experimental, with none in cupyx).
GPU_UNSUPPORTED_DTYPES = frozenset({np.dtype(ml_dtypes.bfloat16), np.dtype(object)})


def check_gpu_dtype(dtype: Any, what: str, index: int | None = None) -> None:
    """Raise ``DTypeError`` naming ``what`` (the op) and the dtype if a GPU cannot hold it."""
    dt = np.dtype(dtype)
    if dt in GPU_UNSUPPORTED_DTYPES:
        where = "a GPU" if index is None else f"/gpu:{index}"
        raise DTypeError(f"{what}: dtype {dt} is not supported on {where} (cupy has no {dt}); "
                         "use float32 or float16 on the GPU, or keep the tensor on /cpu:0")


class NumpyBackend:
    """CPU arrays in numpy."""

    name = "numpy"
    xp = np

    def to_host(self, a: Any) -> np.ndarray:
        return a

    def from_host(self, a: np.ndarray, index: int) -> Any:
        return a

    def asarray(self, a: Any, dtype: Any = None) -> Any:
        return np.asarray(a, dtype=dtype)

    def scatter_add(self, out: Any, key: Any, updates: Any) -> None:
        """``out[key] += updates`` with repeated indices accumulating."""
        np.add.at(out, key, updates)

    def erf(self, x: Any) -> Any:
        return _np_erf(x)

    def activate(self, index: int) -> Any:
        """A context manager that makes device ``index`` current (nothing to do on CPU)."""
        return None

    def synchronize(self) -> None:
        return None

    def owns(self, a: Any) -> bool:
        """Whether ``a`` is this backend's array with a buffer of its own (no view), whole
        (C-contiguous) and writable: an op may write a result of its shape and dtype into
        it (``out=a``) once nothing reads it any more (graph mode's in-place replays)."""
        return (type(a) is np.ndarray and a.base is None and a.flags.c_contiguous
                and a.flags.writeable)

    def buffer_of(self, a: Any) -> int:
        """A key of the buffer ``a``'s memory lies in, the same for an array and every view
        of it (while they are alive): the id of the array that owns it."""
        while getattr(a, "base", None) is not None:
            a = a.base
        return id(a)

    def linalg_errors(self) -> Any:
        """A context in which a failed factorization (a singular matrix, one not positive
        definite) raises ``LinAlgError``: numpy always raises."""
        return contextlib.nullcontext()


_ERF: list[Any] = []  # the erf found on the first call: looked for once, not per call


def _np_erf(x: np.ndarray) -> np.ndarray:
    if not _ERF:
        try:
            from scipy.special import erf  # scipy is optional: faster when present
        except ImportError:
            erf = _erf.erf  # numpy has none: Cephes' rational approximations, vectorised
        _ERF.append(erf)
    return np.asarray(_ERF[0](x), dtype=x.dtype)

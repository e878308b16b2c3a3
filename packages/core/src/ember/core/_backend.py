"""Backends: the array module (``xp``) and the few operations that differ between them.

Forward implementations receive a backend and use ``be.xp``; everything that is not the
same between numpy and cupy (host transfer, scatter-add, special functions) is a method
here. ``_cupy_backend`` is the only module that imports cupy, and only on first GPU use.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


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


def _np_erf(x: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf  # scipy is optional: faster when present
    except ImportError:
        erf = np.frompyfunc(math.erf, 1, 1)
        return np.asarray(erf(x), dtype=x.dtype)
    return np.asarray(erf(x), dtype=x.dtype)

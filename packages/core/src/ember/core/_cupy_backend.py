"""The GPU backend: cupy. The only module in ember that imports cupy, lazily."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._backend import check_gpu_dtype

_probe: tuple[Any, int] | None = None


def probe() -> tuple[Any, int]:
    """(cupy module or None, number of usable GPUs). Cached after the first call."""
    global _probe
    if _probe is None:
        try:
            import cupy
        except ImportError:
            _probe = (None, 0)
        else:
            try:
                n = int(cupy.cuda.runtime.getDeviceCount())
            except (RuntimeError, OSError):  # no driver / no device
                n = 0
            _probe = (cupy if n else None, n)
    return _probe


class CupyBackend:
    """NVIDIA GPU arrays in cupy."""

    name = "cupy"

    def __init__(self, cupy: Any) -> None:
        self.xp = cupy
        import cupyx

        self._cupyx = cupyx

    def to_host(self, a: Any) -> np.ndarray:
        return self.xp.asnumpy(a)

    def from_host(self, a: Any, index: int) -> Any:
        check_gpu_dtype(a.dtype, "copy to GPU", index)
        with self.xp.cuda.Device(index):
            return self.xp.asarray(a)

    def asarray(self, a: Any, dtype: Any = None) -> Any:
        if dtype is not None:
            check_gpu_dtype(dtype, "copy to GPU")
        return self.xp.asarray(a, dtype=dtype)

    def scatter_add(self, out: Any, key: Any, updates: Any) -> None:
        self._cupyx.scatter_add(out, key, updates)

    def erf(self, x: Any) -> Any:
        from cupyx.scipy.special import erf

        return erf(x)

    def activate(self, index: int) -> Any:
        return self.xp.cuda.Device(index)

    def synchronize(self) -> None:
        self.xp.cuda.get_current_stream().synchronize()

    def linalg_errors(self) -> Any:
        """cupy's cuSOLVER calls return garbage for a singular matrix unless told to check
        (one synchronization): ``cupyx.errstate(linalg="raise")``."""
        return self._cupyx.errstate(linalg="raise")

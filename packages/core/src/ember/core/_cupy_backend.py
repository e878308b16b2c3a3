"""The GPU backend: cupy. The only module in ember that imports cupy, lazily."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._backend import check_gpu_dtype
from ._nvmath_products import Products, RoutedNamespace, load_nvmath

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
    """NVIDIA GPU arrays in cupy. With nvmath-python installed, ``xp.matmul`` is
    ``products.matmul`` (``_nvmath_products``): float products through cuBLASLt, which a
    CUDA graph can capture (cupy's own cuBLAS calls refuse to run while a stream captures)."""

    name = "cupy"

    def __init__(self, cupy: Any) -> None:
        self.products = Products(cupy, load_nvmath())
        self.xp = cupy if self.products.nvmath is None else RoutedNamespace(cupy, self.products)
        import cupyx

        self._cupyx = cupyx

    def to_host(self, a: Any) -> np.ndarray:
        return self.xp.asnumpy(a)

    def from_host(self, a: Any, index: int) -> Any:
        """``a`` copied to GPU ``index``, every bit kept. A 0-d array goes up as one
        element: ``cupy.asarray`` fills a 0-d array with ``ndarray.fill``, which clears
        the memory for a value equal to 0, so -0.0 arrived as +0.0 (``where(c, x, -0.0)``
        lost the sign on a GPU). The strict double runs this code too."""
        check_gpu_dtype(a.dtype, "copy to GPU", index)
        with self.xp.cuda.Device(index):
            if a.ndim == 0:
                return self.xp.asarray(a.reshape(1)).reshape(())
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

    def owns(self, a: Any) -> bool:
        """As ``NumpyBackend.owns``: a cupy array with a buffer of its own, C-contiguous."""
        return owns_buffer(self.xp, a)

    def buffer_of(self, a: Any) -> int:
        """As ``NumpyBackend.buffer_of``: the device address of ``a``'s allocation."""
        return buffer_address(a)

    def linalg_errors(self) -> Any:
        """cupy's cuSOLVER calls return garbage for a singular matrix unless told to check
        (one synchronization): ``cupyx.errstate(linalg="raise")``."""
        return self._cupyx.errstate(linalg="raise")


# cupy's buffer ownership, in cupy's API alone, so that the strict double runs this code
def owns_buffer(xp: Any, a: Any) -> bool:
    """``a`` owns its allocation (``base`` is None: cupy gives every view the array it
    views) and is C-contiguous; cupy arrays are always writable."""
    return type(a) is xp.ndarray and a.base is None and bool(a.flags.c_contiguous)


def buffer_address(a: Any) -> int:
    """The address of the allocation ``a`` lives in (``data.mem``: an array and its views
    share it; ``data.ptr`` is ``a``'s own first element, offset into it)."""
    return int(a.data.mem.ptr)

"""BLAS thread policy.

ember does not change numpy's BLAS threads on import (importing touches nothing). On
shared machines, pinning BLAS to one thread keeps small-op speed steady when other
processes compete for cores; ``set_num_threads`` does that through threadpoolctl when it
is installed. Measured on a 2-core machine: 2 BLAS threads are ~1.4x faster than 1 when
quiet and ~2x slower when another process takes a core; 1 thread is steady (see
docs/performance.md).
"""

from __future__ import annotations

from typing import Any

_limiter: Any = None


def set_num_threads(n: int) -> None:
    """Limit BLAS/OpenMP threads used by numpy to ``n`` (needs ``threadpoolctl``)."""
    global _limiter
    try:
        from threadpoolctl import threadpool_limits
    except ImportError as e:
        raise ImportError("set_num_threads needs threadpoolctl: pip install threadpoolctl") from e
    _limiter = threadpool_limits(limits=int(n))

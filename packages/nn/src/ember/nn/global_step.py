"""The global step: one int64 variable counting training steps."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

import ember.core as em

_lock = threading.Lock()
_holder: list[Any] = []


def get_or_create_global_step() -> Any:
    """The process's global step (an int64 ``Variable`` starting at 0), made on first use.

    Examples:
        >>> from ember import nn
        >>> gs = nn.get_or_create_global_step()
        >>> gs is nn.get_or_create_global_step()
        True
    """
    with _lock:
        if not _holder:
            _holder.append(em.Variable(np.int64(0), name="global_step", trainable=False))
        return _holder[0]


def get_global_step() -> Any:
    """The global step if it was created, else None."""
    return _holder[0] if _holder else None


def reset_global_step() -> None:
    """Forget the global step (the next ``get_or_create_global_step`` makes a new one)."""
    with _lock:
        _holder.clear()

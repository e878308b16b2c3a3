"""``clear_session``: Keras's reset of its global state."""

from __future__ import annotations

import gc

from ..dtype_policies import set_dtype_policy
from ..layers import base as _base


def clear_session(free_memory: bool = True) -> None:
    """Reset what Keras 3's ``clear_session`` resets: automatic layer names start again
    (the next ``Dense`` is ``dense``), and the global dtype policy is float32 again. With
    ``free_memory``, a garbage collection runs (tensors no longer referenced free their
    memory). Models and layers already made keep their names and weights.

    Examples:
        >>> from ember import nn
        >>> _ = nn.layers.Dense(1)
        >>> nn.utils.clear_session()
        >>> nn.layers.Dense(1).name
        'dense'
    """
    if not isinstance(free_memory, bool):
        raise TypeError(f"clear_session: free_memory must be a bool, got "
                        f"{type(free_memory).__name__}")
    _base._name_counters.clear()
    set_dtype_policy("float32")
    if free_memory:
        gc.collect()

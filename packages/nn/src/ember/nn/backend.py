"""``nn.backend`` is ``keras.backend``: the settings of ``nn.config`` and ``clear_session``.

Examples:
    >>> from ember import nn
    >>> nn.backend.backend(), nn.backend.floatx()
    ('ember', 'float32')
"""

from __future__ import annotations

from .config import (
    backend,
    epsilon,
    floatx,
    image_data_format,
    set_epsilon,
    set_floatx,
    set_image_data_format,
)
from .utils._session import clear_session

__all__ = ["backend", "clear_session", "epsilon", "floatx", "image_data_format", "set_epsilon",
           "set_floatx", "set_image_data_format"]

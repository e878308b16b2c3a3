"""``nn.config`` is ``keras.config`` (and ``nn.backend`` holds the same getters, as
``keras.backend`` does): the fuzz factor, the default float type, the image layout and
the backend's name, and the global dtype policy.

ember's layers and losses are written for Keras's defaults (``epsilon() == 1e-7``,
float32 weights, channels-last images): the setters take those values and refuse any
other by name rather than accept a setting nothing would honour. Mixed precision is the
dtype policy (``set_dtype_policy("mixed_float16")``), as in Keras 3.

Examples:
    >>> from ember import nn
    >>> nn.config.epsilon(), nn.config.floatx(), nn.config.image_data_format()
    (1e-07, 'float32', 'channels_last')
    >>> nn.backend.epsilon() == nn.config.epsilon()
    True
"""

from __future__ import annotations

from typing import Any

from .dtype_policies import dtype_policy, set_dtype_policy

__all__ = ["backend", "dtype_policy", "epsilon", "floatx", "image_data_format",
           "set_dtype_policy", "set_epsilon", "set_floatx", "set_image_data_format"]

_DEFAULTS: dict[str, Any] = {"epsilon": 1e-7, "floatx": "float32", "image_data_format": "channels_last"}


def epsilon() -> float:
    """The fuzz factor numeric expressions use (Keras's ``1e-7``)."""
    return _DEFAULTS["epsilon"]


def floatx() -> str:
    """The default float type, as a string: ``"float32"``."""
    return _DEFAULTS["floatx"]


def image_data_format() -> str:
    """The default image layout: ``"channels_last"``."""
    return _DEFAULTS["image_data_format"]


def backend() -> str:
    """The backend's name: ``"ember"`` (Keras's are "tensorflow", "jax", "torch", ...)."""
    return "ember"


def _refuse(setting: str, value: Any) -> None:
    if value != _DEFAULTS[setting]:
        raise NotImplementedError(
            f"nn.config.set_{setting}({value!r}): ember's layers, losses and metrics are "
            f"written for {_DEFAULTS[setting]!r} and would not honour another value; pass "
            f"the value to the layer or loss that takes it (e.g. dtype=, data_format=, "
            f"epsilon=), or use set_dtype_policy for mixed precision")


def set_epsilon(value: float) -> None:
    """Keras's setter: ``1e-7`` only (any other value raises NotImplementedError)."""
    _refuse("epsilon", value)


def set_floatx(value: str) -> None:
    """Keras's setter: ``"float32"`` only (any other value raises NotImplementedError)."""
    _refuse("floatx", value)


def set_image_data_format(data_format: str) -> None:
    """Keras's setter: ``"channels_last"`` only (any other raises NotImplementedError)."""
    _refuse("image_data_format", data_format)

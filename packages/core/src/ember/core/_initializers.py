"""TensorFlow 2's top-level initializers: ``em.random_uniform_initializer``,
``random_normal_initializer``, ``zeros_initializer``, ``ones_initializer`` and
``constant_initializer`` (``tf.*_initializer``).

Each is a callable ``init(shape, dtype=float32)`` returning a tensor, with TensorFlow's
arguments and defaults. A Keras layer given one (``Dense(kernel_initializer=...)``) uses
Keras's initializer of the same kind (``keras_config()``), so a saved model names a
class Keras knows.

Examples:
    >>> import ember.core as em
    >>> init = em.random_uniform_initializer(minval=-0.003, maxval=0.003, seed=1)
    >>> bool(em.reduce_all(em.abs(init([3, 2])) <= 0.003))
    True
    >>> em.constant_initializer(2.0)([2])
    ember.Tensor([2. 2.], shape=(2,), dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["constant_initializer", "ones_initializer", "random_normal_initializer",
           "random_uniform_initializer", "zeros_initializer"]


class _Initializer:
    _KERAS = ""

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)

    def keras_config(self) -> dict[str, Any]:
        """Keras's serialized form of the same initializer (``{"class_name", "config"}``)."""
        return {"class_name": self._KERAS, "config": self.get_config()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


def _dtype(dtype: Any) -> Any:
    from ._dtypes import as_dtype

    return as_dtype(np.float32 if dtype is None else dtype)


class random_uniform_initializer(_Initializer):  # (TensorFlow's lower-case name)
    """Values drawn uniformly from ``[minval, maxval)`` (``tf.random_uniform_initializer``)."""

    _KERAS = "RandomUniform"

    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Any = None) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        from . import random

        return random.uniform(shape, self.minval, self.maxval, _dtype(dtype), seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class random_normal_initializer(_Initializer):  # (TensorFlow's lower-case name)
    """Values drawn from a normal distribution (``tf.random_normal_initializer``)."""

    _KERAS = "RandomNormal"

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Any = None) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        from . import random

        return random.normal(shape, self.mean, self.stddev, _dtype(dtype), seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class zeros_initializer(_Initializer):  # (TensorFlow's lower-case name)
    """Zeros (``tf.zeros_initializer``)."""

    _KERAS = "Zeros"

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        from ._ops.creation import zeros

        return zeros(shape, _dtype(dtype))


class ones_initializer(_Initializer):  # (TensorFlow's lower-case name)
    """Ones (``tf.ones_initializer``)."""

    _KERAS = "Ones"

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        from ._ops.creation import ones

        return ones(shape, _dtype(dtype))


class constant_initializer(_Initializer):  # (TensorFlow's lower-case name)
    """``value`` everywhere (a number; ``tf.constant_initializer``)."""

    _KERAS = "Constant"

    def __init__(self, value: Any = 0) -> None:
        if not isinstance(value, (int, float, np.number)) or isinstance(value, bool):
            raise TypeError(f"constant_initializer: value must be a number, got {value!r} "
                            f"(ember takes scalars, as Keras's Constant does)")
        self.value = value

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        from ._ops.creation import ones
        from ._ops.math import multiply

        dt = _dtype(dtype)
        return multiply(ones(shape, dt), np.asarray(self.value, dt))

    def get_config(self) -> dict[str, Any]:
        return {"value": self.value}

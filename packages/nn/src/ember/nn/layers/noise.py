"""Keras 3's noise and structured-dropout layers: GaussianNoise, GaussianDropout,
AlphaDropout, SpatialDropout1D and SpatialDropout2D.

Each is the identity unless called in training (``training=True``, or inside ``fit``);
there it draws through ``em.random`` as :class:`Dropout` does: ``em.random.set_seed`` makes
the draws repeatable, and ``seed=`` gives the layer a stream of its own (each call draws
anew from it, as Keras's seed generator does). A mask passes through.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

from .base import InputSpec, Layer
from .conv import check_data_format
from .core import Dropout


def _seed(who: str, seed: Any) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{who}: seed must be an int or None, got seed={seed!r}")
    return int(seed)


def _fraction(who: str, name: str, value: Any) -> float:
    """A number in [0, 1] (Keras's check of ``rate`` and ``stddev``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or \
            not 0 <= value <= 1:
        raise ValueError(f"{who}: {name} must be a number in [0, 1], got {name}={value!r}")
    return float(value)


def _normal(shape: Any, mean: float, stddev: float, dtype: Any, seed: int | None) -> Any:
    return em.random.normal(tuple(shape), mean, stddev, dtype=dtype, seed=seed)


class GaussianNoise(Layer):
    """Add zero-mean Gaussian noise of standard deviation ``stddev`` in training.

    Args:
        stddev: the noise's standard deviation, in [0, 1] (as Keras requires).
        seed: an int: a random stream of the layer's own (None: the global one).
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> layer = nn.layers.GaussianNoise(0.1, seed=3)
        >>> x = np.zeros((2, 3), np.float32)
        >>> bool((layer(x) == 0).numpy().all()), bool((layer(x, training=True) != 0).numpy().any())
        (True, True)
    """

    supports_masking = True

    def __init__(self, stddev: float, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.stddev = _fraction("GaussianNoise", "stddev", stddev)
        self.seed = _seed("GaussianNoise", seed)

    def call(self, inputs: Any, training: Any = False) -> Any:
        if not training or self.stddev == 0:
            return inputs
        return em.add(inputs, _normal(inputs.shape, 0.0, self.stddev, inputs.dtype,
                                      self.seed))


class GaussianDropout(Layer):
    """Multiply by Gaussian noise of mean 1 and standard deviation
    ``sqrt(rate / (1 - rate))`` in training.

    Args:
        rate: the drop probability (as :class:`Dropout`'s), in [0, 1]; training with
            ``rate=1`` (infinite noise) is refused.
        seed: an int: a random stream of the layer's own (None: the global one).
        **kwargs: the base ``Layer`` arguments.
    """

    supports_masking = True

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rate = _fraction("GaussianDropout", "rate", rate)
        self.seed = _seed("GaussianDropout", seed)

    def call(self, inputs: Any, training: Any = False) -> Any:
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            raise ValueError(f"layer {self.name!r} (GaussianDropout): rate=1 makes the "
                             f"noise's standard deviation infinite; give rate < 1")
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        return em.multiply(inputs, _normal(inputs.shape, 1.0, stddev, inputs.dtype,
                                           self.seed))


# SELU's constants (Keras's, to its digits)
_ALPHA = 1.6732632423543772848170429916717
_SCALE = 1.0507009873554804934193349852946


class AlphaDropout(Layer):
    """Dropout that keeps SELU activations' mean and variance (Keras's ``AlphaDropout``):
    in training, each value is dropped with probability ``rate`` to SELU's negative
    saturation ``-alpha * scale``, then all are mapped by the affine ``a * x + b`` that
    restores the mean and variance.

    Args:
        rate: the drop probability, in [0, 1]; training with ``rate=1`` is refused (the
            affine map has no finite scale).
        noise_shape: the shape of the drop mask, broadcast against the inputs (None
            entries take the input's size: ``(None, 1, None)`` drops whole time steps'
            features alike across steps).
        seed: an int: a random stream of the layer's own (None: the global one).
        **kwargs: the base ``Layer`` arguments.
    """

    supports_masking = True

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rate = _fraction("AlphaDropout", "rate", rate)
        if noise_shape is not None and not (
                isinstance(noise_shape, (list, tuple)) and all(
                    s is None or (isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                                  and s >= 1) for s in noise_shape)):
            raise ValueError(f"AlphaDropout: noise_shape must be None or a list of positive "
                             f"ints and Nones, got noise_shape={noise_shape!r}")
        self.noise_shape = None if noise_shape is None else tuple(
            None if s is None else int(s) for s in noise_shape)
        self.seed = _seed("AlphaDropout", seed)

    def call(self, inputs: Any, training: Any = False) -> Any:
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            raise ValueError(f"layer {self.name!r} (AlphaDropout): rate=1 drops everything "
                             f"and leaves the affine correction undefined; give rate < 1")
        shape = tuple(inputs.shape)
        if self.noise_shape is not None:
            if len(self.noise_shape) != len(shape):
                raise ValueError(f"layer {self.name!r} (AlphaDropout): noise_shape "
                                 f"{self.noise_shape} does not fit inputs of shape {shape}")
            shape = tuple(d if s is None else s for s, d in zip(self.noise_shape, shape))
        alpha_p = -_ALPHA * _SCALE
        kept = em.cast(em.greater_equal(em.random.uniform(shape, seed=self.seed), self.rate),
                       inputs.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        x = em.add(em.multiply(inputs, kept),
                   em.multiply(em.subtract(1.0, kept), alpha_p))
        return em.add(em.multiply(x, a), b)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "noise_shape": self.noise_shape}


class _SpatialDropout(Dropout):
    """Dropout of whole feature maps: one draw per example and channel (Keras's
    ``BaseSpatialDropout``). Keras's signature has no ``**kwargs``: only ``name`` and
    ``dtype`` of the base arguments."""

    ndim = 3

    def __init__(self, rate: float, seed: int | None = None, name: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(rate, seed=_seed(type(self).__name__, seed), name=name,
                         dtype=dtype)
        self.input_spec = InputSpec(ndim=self.ndim)

    def build(self, input_shape: Any) -> None:
        if self.input_spec is not None and not isinstance(input_shape, list):
            self.input_spec.check(self, tuple(input_shape))
        super().build(input_shape)

    def _noise_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return (shape[0], 1, shape[2])

    def call(self, inputs: Any, training: Any = None) -> Any:
        if not training or self.rate == 0:
            return inputs
        return em.nn_ops.dropout(inputs, self.rate, seed=self.seed,
                                 noise_shape=self._noise_shape(tuple(inputs.shape)))

    def get_config(self) -> dict[str, Any]:
        return {"rate": self.rate, "seed": self.seed, "name": self.name,
                "dtype": self.dtype_policy.name}


class SpatialDropout1D(_SpatialDropout):
    """Drop whole channels of (batch, steps, channels) inputs in training: each
    example's channel is zeroed at every step with probability ``rate`` (the others
    scaled by ``1 / (1 - rate)``).

    Args:
        rate: the drop probability, in [0, 1).
        seed: an int: a random stream of the layer's own (None: the global one).
        name, dtype: as the base ``Layer``'s (Keras's signature takes no others).
    """


class SpatialDropout2D(_SpatialDropout):
    """Drop whole feature maps of images in training: each example's channel is zeroed
    everywhere with probability ``rate`` (the others scaled by ``1 / (1 - rate)``).

    Args:
        rate: the drop probability, in [0, 1).
        data_format: ``"channels_last"`` (default: (batch, rows, cols, channels)) or
            ``"channels_first"`` ((batch, channels, rows, cols)).
        seed: an int: a random stream of the layer's own (None: the global one).
        name, dtype: as the base ``Layer``'s (Keras's signature takes no others).
    """

    ndim = 4

    def __init__(self, rate: float, data_format: str | None = None, seed: int | None = None,
                 name: str | None = None, dtype: Any = None) -> None:
        super().__init__(rate, seed=seed, name=name, dtype=dtype)
        self.data_format = check_data_format(data_format, "SpatialDropout2D")

    def _noise_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if self.data_format == "channels_first":
            return (shape[0], shape[1], 1, 1)
        return (shape[0], 1, 1, shape[3])

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "data_format": self.data_format}

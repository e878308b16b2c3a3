"""Random colour layers for image augmentation, as Keras 3's: RandomBrightness,
RandomGrayscale, RandomInvert and RandomErasing.

As the other random image layers (``preprocessing_image``): a batch ``(N, H, W, C)`` or
one image ``(H, W, C)`` (``(..., C, H, W)`` with ``data_format="channels_first"``), drawn
and computed with ember ops on the images' device, changed in training (Keras 3's default
for them is True: a direct call augments) and returned as floats. Each draws from its own
stream, ``seed_generator`` (seeded by ``seed``, or by ``em.random.new_seed()``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from .preprocessing_image import RandomLayer


def _factor(layer: str, arg: str, factor: Any, lo: float, hi: float) -> tuple[float, float]:
    """Keras's ``_set_factor``: a number ``f`` gives ``(max(-f, lo), f)``, a pair gives
    itself sorted; a number outside ``[lo, hi]`` or a pair wholly outside it is refused."""
    msg = (f"{layer}: {arg} must be a number or a pair of numbers in [{lo}, {hi}], got "
           f"{arg}={factor!r}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or not all(isinstance(f, (int, float, np.number)) and
                                       not isinstance(f, bool) for f in factor):
            raise ValueError(msg)
        if factor[0] > hi or factor[1] < lo:
            raise ValueError(msg)
        a, b = sorted(float(f) for f in factor)
        return a, b
    if isinstance(factor, bool) or not isinstance(factor, (int, float, np.number)):
        raise ValueError(msg)
    if factor < lo or factor > hi:
        raise ValueError(msg)
    f = abs(float(factor))
    return max(-f, lo), f


def _value_range(layer: str, value_range: Any) -> tuple[float, float]:
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2 or not all(
            isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
            for v in value_range):
        raise ValueError(f"{layer}: value_range must be a list of two numbers, got "
                         f"value_range={value_range!r}")
    return float(value_range[0]), float(value_range[1])


class RandomBrightness(RandomLayer):
    """Add a random brightness offset to each image in training, then clip to
    ``value_range``: the offset is ``delta * (high - low)`` with ``delta`` drawn per image
    from ``factor`` (a number ``f`` draws from ``[-f, f]``; a pair from ``[lower,
    upper]``; each in [-1, 1]).

    Args:
        factor: a number or a pair in [-1, 1].
        value_range: the images' ``(low, high)`` (sorted, as Keras).
        seed: an int seeding the layer's random stream (None: ``em.random.new_seed()``).
        **kwargs: the base ``Layer`` arguments, and ``data_format`` (Keras takes it here
            too; brightness does not depend on it).

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> layer = nn.layers.RandomBrightness((0.5, 0.5), value_range=(0, 1))
        >>> layer(np.full((2, 2, 1), 0.25, np.float32))[..., 0].numpy()
        array([[0.75, 0.75],
               [0.75, 0.75]], dtype=float32)
    """

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None,
                 **kwargs: Any) -> None:
        if kwargs.get("bounding_box_format") is not None:
            raise ValueError("RandomBrightness: bounding_box_format= is not supported (ember's "
                             "image layers transform images only)")
        kwargs.pop("bounding_box_format", None)
        super().__init__(seed=seed, **kwargs)
        self.factor = _factor("RandomBrightness", "factor", factor, -1.0, 1.0)
        low, high = _value_range("RandomBrightness", value_range)
        self.value_range = (min(low, high), max(low, high))

    def _augment(self, x: Any) -> Any:
        low, high = self.value_range
        delta = self._uniform((x.shape[0], 1, 1, 1), *self.factor)
        delta = em.cast(em.multiply(delta, high - low), x.dtype)
        return em.clip_by_value(em.add(x, delta), low, high)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor,
                "value_range": list(self.value_range)}


class RandomGrayscale(RandomLayer):
    """Turn each image to grayscale with probability ``factor`` in training:
    ``0.2989 R + 0.587 G + 0.114 B`` in every channel (Keras's torch weights; images of one
    channel stay as they are).

    Args:
        factor: the probability, in [0, 1].
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        seed: an int seeding the layer's random stream (None: ``em.random.new_seed()``).
        **kwargs: the base ``Layer`` arguments.
    """

    def __init__(self, factor: float = 0.5, data_format: Any = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if isinstance(factor, bool) or not isinstance(factor, (int, float, np.number)) or \
                not 0 <= factor <= 1:
            raise ValueError(f"RandomGrayscale: factor must be a number in [0, 1], got "
                             f"factor={factor!r}")
        self.factor = float(factor)

    def _augment(self, x: Any) -> Any:
        channels = x.shape[-1]
        if channels not in (1, 3):
            raise ValueError(f"layer {self.name!r} (RandomGrayscale): images must have 3 "
                             f"(RGB) or 1 (grayscale) channels, got {channels}")
        apply = em.less(self._uniform((x.shape[0], 1, 1, 1), 0.0, 1.0), self.factor)
        if channels == 1:
            return x
        r, g, b = x[..., 0:1], x[..., 1:2], x[..., 2:3]
        gray = em.add(em.add(em.multiply(r, 0.2989), em.multiply(g, 0.587)),
                      em.multiply(b, 0.114))
        return em.where(apply, em.broadcast_to(gray, x.shape), x)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor}


class RandomInvert(RandomLayer):
    """Invert each image (``high - x``, ``high`` being ``value_range[1]``, as Keras) with
    a random probability in training: per image, a probability drawn from ``factor``
    (a number ``f`` draws from ``[0, f]``; a pair from ``[lower, upper]``; each in [0, 1])
    and a threshold drawn from [0, 1); the image is inverted where the threshold is below.

    Args:
        factor: a number or a pair in [0, 1].
        value_range: the images' ``(low, high)``.
        seed: an int seeding the layer's random stream (None: ``em.random.new_seed()``).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        **kwargs: the base ``Layer`` arguments.
    """

    def __init__(self, factor: Any = 1.0, value_range: Any = (0, 255),
                 seed: int | None = None, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor("RandomInvert", "factor", factor, 0.0, 1.0)
        self.value_range = _value_range("RandomInvert", value_range)

    def _augment(self, x: Any) -> Any:
        shape = (x.shape[0], 1, 1, 1)
        probability = self._uniform(shape, *self.factor)
        threshold = self._uniform(shape, 0.0, 1.0)
        return em.where(em.less(threshold, probability),
                        em.subtract(self.value_range[1], x), x)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor,
                "value_range": list(self.value_range)}


class RandomErasing(RandomLayer):
    """Erase a random rectangle of each image with probability drawn from ``factor`` in
    training (Keras's ``RandomErasing``, "cutout").

    Per image: the rectangle's sides are ``sqrt(s) * width`` and ``sqrt(s') * height``
    with ``s, s'`` drawn from ``scale``, placed uniformly inside the image; the image is
    erased where a threshold drawn from [0, 1) is below a probability drawn from
    ``factor``. Erased pixels take ``fill_value`` (a number, or three: one per channel),
    or by default Gaussian noise times ``value_range[1]``; either is clipped to
    ``value_range``.

    Args:
        factor: a number or a pair in [0, 1] (a number ``f``: probabilities from
            ``[0, f]``).
        scale: a number or a pair in [0, 1]: the fraction of each side's square drawn.
        fill_value: None (noise), a number, or a list of 3 numbers.
        value_range: the images' ``(low, high)``.
        seed: an int seeding the layer's random stream (None: ``em.random.new_seed()``).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        **kwargs: the base ``Layer`` arguments.
    """

    def __init__(self, factor: Any = 1.0, scale: Any = (0.02, 0.33), fill_value: Any = None,
                 value_range: Any = (0, 255), seed: int | None = None,
                 data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor("RandomErasing", "factor", factor, 0.0, 1.0)
        self.scale = _factor("RandomErasing", "scale", scale, 0.0, 1.0)
        if fill_value is not None and not (
                (isinstance(fill_value, (int, float, np.number)) and
                 not isinstance(fill_value, bool)) or
                (isinstance(fill_value, (list, tuple)) and len(fill_value) == 3 and all(
                    isinstance(v, (int, float, np.number)) for v in fill_value))):
            raise ValueError(f"RandomErasing: fill_value must be None, a number or a list "
                             f"of three numbers, got fill_value={fill_value!r}")
        self.fill_value = fill_value
        self.value_range = _value_range("RandomErasing", value_range)

    def _bounds(self, n: int, length: int, ratio: Any) -> tuple[Any, Any]:
        crop = em.multiply(ratio, float(length))
        start = em.multiply(self._uniform((n,), 0.0, 1.0), em.subtract(float(length), crop))
        return start, em.add(start, crop)

    def _augment(self, x: Any) -> Any:
        n, h, w, c = x.shape
        low, high = self.value_range
        ratios = em.sqrt(self._uniform((n, 2), *self.scale))
        x0, x1 = self._bounds(n, w, ratios[:, 0])
        y0, y1 = self._bounds(n, h, ratios[:, 1])
        probability = self._uniform((n,), *self.factor)
        apply = em.less(self._uniform((n,), 0.0, 1.0), probability)
        if self.fill_value is None:
            fill = em.multiply(self._normal(tuple(x.shape)), high)
        else:
            values = np.broadcast_to(np.asarray(self.fill_value, np.float32), (c,))
            fill = em.broadcast_to(em.constant(np.array(values)), tuple(x.shape))
        fill = em.cast(em.clip_by_value(fill, low, high), x.dtype)
        rows = em.reshape(em.cast(em.range(h), em.float32), (1, h, 1, 1))
        cols = em.reshape(em.cast(em.range(w), em.float32), (1, 1, w, 1))

        def per_image(v: Any) -> Any:
            return em.reshape(v, (n, 1, 1, 1))

        inside = em.logical_and(
            em.logical_and(em.greater_equal(cols, per_image(x0)), em.less(cols, per_image(x1))),
            em.logical_and(em.greater_equal(rows, per_image(y0)), em.less(rows, per_image(y1))))
        erase = em.logical_and(inside, per_image(apply))
        return em.where(em.broadcast_to(erase, tuple(x.shape)), fill, x)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "fill_value": self.fill_value, "value_range": list(self.value_range)}


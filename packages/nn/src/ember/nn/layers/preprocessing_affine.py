"""Random affine image layers: RandomRotation, RandomZoom and RandomTranslation (Keras 3's
names, arguments, defaults and transforms).

Each draws one transform per image from its own stream, ``seed_generator`` (seeded by
``seed=``, or by ``em.random.new_seed()``), and resamples with ember ops on the images'
device (``_image_ops``), only when called in training (``training=True``, or not given:
see ``preprocessing_image``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

from . import _image_ops
from .preprocessing_image import RandomLayer, check_choice, symmetric_factor


class AffineLayer(RandomLayer):
    """Shared by the affine layers: fill mode, interpolation and the resampling."""

    def __init__(self, fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: int | None = None, fill_value: float = 0.0, data_format: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        k = type(self).__name__
        self.fill_mode = check_choice(k, "fill_mode", fill_mode, _image_ops.FILL_MODES)
        self.interpolation = check_choice(k, "interpolation", interpolation,
                                          _image_ops.AFFINE_INTERPOLATIONS)
        self.fill_value = float(fill_value)

    def _transforms(self, n: int, h: int, w: int) -> Any:
        """(n, 8) transforms, one per image."""
        raise NotImplementedError

    def _augment(self, x: Any) -> Any:
        n, h, w, _ = x.shape
        return _image_ops.affine_transform(x, self._transforms(n, h, w), self.interpolation,
                                           self.fill_mode, self.fill_value)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "fill_mode": self.fill_mode,
                "interpolation": self.interpolation, "fill_value": self.fill_value}


def _zeros(n: int) -> Any:
    return em.zeros((n, 1), em.float32)


class RandomRotation(AffineLayer):
    """Rotate each image by a random angle about its centre in training.

    Args:
        factor: a fraction of a full turn: f draws angles in ``[-f, f] * 360`` degrees,
            ``(lower, upper)`` in ``[lower, upper] * 360``; positive turns
            counter-clockwise. Each value in [-1, 1].
        fill_mode: how points outside the image read: ``"reflect"`` (default),
            ``"wrap"``, ``"constant"`` (``fill_value``) or ``"nearest"``.
        interpolation: ``"bilinear"`` (default) or ``"nearest"``.
        seed: an int seeding the layer's random stream (None: ``em.random.new_seed()``).
        fill_value: the value outside the image with ``fill_mode="constant"``.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        **kwargs: the base ``Layer`` arguments.
    """

    def __init__(self, factor: Any, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: int | None = None,
                 fill_value: float = 0.0, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(fill_mode=fill_mode, interpolation=interpolation, seed=seed,
                         fill_value=fill_value, data_format=data_format, **kwargs)
        self.factor = symmetric_factor("RandomRotation", "factor", factor, -1.0, 1.0)

    def _transforms(self, n: int, h: int, w: int) -> Any:
        lo, hi = self.factor
        angle = self._uniform((n,), lo * 360.0, hi * 360.0) * (math.pi / 180.0)
        cos, sin = em.reshape(em.cos(angle), (n, 1)), em.reshape(em.sin(angle), (n, 1))
        cx, cy = 0.5 * (w - 1), 0.5 * (h - 1)
        a0, a1, b0, b1 = cos, -sin, sin, cos
        a2 = cx - cx * a0 - cy * a1
        b2 = cy - cx * b0 - cy * b1
        return em.concat([a0, a1, a2, b0, b1, b2, _zeros(n), _zeros(n)], axis=1)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor}


def _zoom_or_shift_factor(layer: str, arg: str, factor: Any) -> tuple[float, float]:
    """Keras's height/width factors: each value in (-1, 1]."""
    values = factor if isinstance(factor, (tuple, list)) else [factor]
    if any(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and v <= -1
           for v in values):
        raise ValueError(f"{layer}: {arg} values must be in (-1, 1], got {arg}={factor!r}")
    return symmetric_factor(layer, arg, factor, -1.0, 1.0)


class RandomZoom(AffineLayer):
    """Zoom each image in or out about its centre by a random factor when
    in training.

    Args:
        height_factor: a fraction f draws the vertical zoom from ``[1 - f, 1 + f]``
            (``(lower, upper)``: from ``[1 + lower, 1 + upper]``); positive values zoom
            out, negative ones in. Each value in (-1, 1].
        width_factor: the same horizontally; None (default) keeps the aspect ratio (the
            vertical draw is used for both).
        fill_mode, interpolation, seed, fill_value, data_format: as ``RandomRotation``.
        **kwargs: the base ``Layer`` arguments.
    """

    def __init__(self, height_factor: Any, width_factor: Any = None,
                 fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: int | None = None, fill_value: float = 0.0, data_format: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(fill_mode=fill_mode, interpolation=interpolation, seed=seed,
                         fill_value=fill_value, data_format=data_format, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = _zoom_or_shift_factor(
            "RandomZoom", "height_factor", height_factor)
        self.width_factor = width_factor
        if width_factor is not None:
            self.width_lower, self.width_upper = _zoom_or_shift_factor(
                "RandomZoom", "width_factor", width_factor)

    def _transforms(self, n: int, h: int, w: int) -> Any:
        zy = self._uniform((n, 1), 1.0 + self.height_lower, 1.0 + self.height_upper)
        zx = zy if self.width_factor is None else self._uniform(
            (n, 1), 1.0 + self.width_lower, 1.0 + self.width_upper)
        return em.concat([zx, _zeros(n), (w - 1) / 2.0 * (1.0 - zx), _zeros(n), zy,
                          (h - 1) / 2.0 * (1.0 - zy), _zeros(n), _zeros(n)], axis=1)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


class RandomTranslation(AffineLayer):
    """Shift each image by a random fraction of its size in training.

    Args:
        height_factor: a fraction f shifts vertically by up to ``f * height`` either way
            (``(lower, upper)``: between ``lower`` and ``upper`` times the height;
            positive moves the image down). Each value in (-1, 1].
        width_factor: the same horizontally (positive moves right).
        fill_mode, interpolation, seed, fill_value, data_format: as ``RandomRotation``.
        **kwargs: the base ``Layer`` arguments.
    """

    def __init__(self, height_factor: Any, width_factor: Any, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: int | None = None,
                 fill_value: float = 0.0, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(fill_mode=fill_mode, interpolation=interpolation, seed=seed,
                         fill_value=fill_value, data_format=data_format, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = _zoom_or_shift_factor(
            "RandomTranslation", "height_factor", height_factor)
        self.width_factor = width_factor
        self.width_lower, self.width_upper = _zoom_or_shift_factor(
            "RandomTranslation", "width_factor", width_factor)

    def _transforms(self, n: int, h: int, w: int) -> Any:
        dy = self._uniform((n, 1), self.height_lower, self.height_upper) * float(h)
        dx = self._uniform((n, 1), self.width_lower, self.width_upper) * float(w)
        ones = em.ones((n, 1), em.float32)
        return em.concat([ones, _zeros(n), -dx, _zeros(n), ones, -dy, _zeros(n), _zeros(n)],
                         axis=1)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}

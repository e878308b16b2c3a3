"""Image preprocessing layers: Resizing, CenterCrop, RandomCrop, RandomFlip and
RandomContrast (Keras 3's names, arguments and defaults). RandomRotation, RandomZoom and
RandomTranslation are in ``preprocessing_affine``.

Every layer takes a batch ``(N, H, W, C)`` or one image ``(H, W, C)`` (``(..., C, H, W)``
with ``data_format="channels_first"``) and computes with ember ops on the images' device.
The random layers change their inputs in training: with ``training=True`` (``fit`` passes
it), or called directly without ``training`` (Keras 3's default for them is True, so
``dataset.map(lambda x, y: (augment(x), y))`` augments, as in Keras); with
``training=False`` (``evaluate``, ``predict``, a model called with ``training=False``) they
return the images (as floats). Each random layer draws from a stream of its own, its
``seed_generator`` (as Keras 3's layers do): ``seed=`` seeds it, and without one it is
seeded by ``em.random.new_seed()``, which ``em.random.set_seed`` makes repeatable. So a
layer's draws do not depend on the thread that calls it (a dataset's ``map`` behind
``prefetch``) or on what else draws from the global generator meanwhile.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from ..random import SeedGenerator
from . import _image_ops
from .base import Layer

DATA_FORMATS = ("channels_last", "channels_first")


def check_data_format(layer: str, data_format: Any) -> str:
    data_format = "channels_last" if data_format is None else data_format
    if data_format not in DATA_FORMATS:
        raise ValueError(f"{layer}: data_format must be 'channels_last' or 'channels_first', "
                         f"got data_format={data_format!r}")
    return str(data_format)


def check_choice(layer: str, arg: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{layer}: {arg} must be one of {list(allowed)}, got "
                         f"{arg}={value!r}")
    return str(value)


def check_size(layer: str, arg: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{layer}: {arg} must be a positive int, got {arg}={value!r}")
    return int(value)


class ImageLayer(Layer):
    """Shared by the image layers: the layout and rank of the images. ``_images`` applies
    ``fn`` to a channels-last batch and puts the result back in the input's layout."""

    def __init__(self, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = check_data_format(type(self).__name__, data_format)

    def _images(self, inputs: Any, fn: Any) -> Any:
        if inputs.ndim not in (3, 4):
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects a batch of "
                             f"images (rank 4) or one image (rank 3), got shape "
                             f"{tuple(inputs.shape)}")
        x = inputs if inputs.ndim == 4 else em.expand_dims(inputs, 0)
        first = self.data_format == "channels_first"
        if first:
            x = em.transpose(x, (0, 2, 3, 1))
        y = fn(x)
        if first:
            y = em.transpose(y, (0, 3, 1, 2))
        return y if inputs.ndim == 4 else em.squeeze(y, 0)

    def _as_float(self, inputs: Any) -> Any:
        return inputs if inputs.dtype == self.dtype else em.cast(inputs, self.dtype)


class Resizing(ImageLayer):
    """Resize images to ``(height, width)`` (integer images stay integers, rounded).

    Args:
        height, width: the output size.
        interpolation: ``"bilinear"`` (default), ``"nearest"``, ``"bicubic"``,
            ``"lanczos3"`` or ``"lanczos5"`` (as Keras's JAX backend computes them), or
            ``"area"`` (TensorFlow's: each output pixel the mean of the input area it
            covers; Keras on TensorFlow takes it).
        crop_to_aspect_ratio: first crop the centred window with the target's aspect
            ratio, so nothing is distorted.
        pad_to_aspect_ratio: first pad the short side evenly (with ``fill_value``) to
            the target's aspect ratio.
        fill_mode: only ``"constant"`` (as Keras).
        fill_value: the padding value for ``pad_to_aspect_ratio``.
        antialias: widen the kernel when shrinking, so every input pixel counts.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.Resizing(2, 2)(np.arange(16, dtype=np.float32).reshape(4, 4, 1))[..., 0].numpy()
        array([[ 2.5,  4.5],
               [10.5, 12.5]], dtype=float32)
    """

    def __init__(self, height: int, width: int, interpolation: str = "bilinear",
                 crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
                 fill_mode: str = "constant", fill_value: float = 0.0,
                 antialias: bool = False, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(data_format=data_format, **kwargs)
        self.height = check_size("Resizing", "height", height)
        self.width = check_size("Resizing", "width", width)
        self.interpolation = check_choice("Resizing", "interpolation", interpolation,
                                          _image_ops.RESIZE_METHODS)
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Resizing: give crop_to_aspect_ratio or pad_to_aspect_ratio, "
                             "not both")
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_mode = check_choice("Resizing", "fill_mode", fill_mode, ("constant",))
        self.fill_value = float(fill_value)
        self.antialias = bool(antialias)

    def _resize(self, x: Any) -> Any:
        if self.crop_to_aspect_ratio:
            x = _image_ops.crop_to_aspect(x, self.height, self.width)
        elif self.pad_to_aspect_ratio:
            x = _image_ops.pad_to_aspect(x, self.height, self.width, self.fill_value)
        return _image_ops.resize(x, self.height, self.width, self.interpolation,
                                 self.antialias)

    def call(self, inputs: Any) -> Any:
        return self._images(inputs, self._resize)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation,
                "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias,
                "data_format": self.data_format}


class CenterCrop(ImageLayer):
    """Crop the centre ``(height, width)`` of images (as floats); an image smaller than
    that is cropped to the target's aspect ratio and resized up (bilinear), as Keras does.

    Args:
        height, width: the output size.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.CenterCrop(2, 2)(np.arange(16).reshape(4, 4, 1))[..., 0].numpy()
        array([[ 5.,  6.],
               [ 9., 10.]], dtype=float32)
    """

    def __init__(self, height: int, width: int, data_format: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(data_format=data_format, **kwargs)
        self.height = check_size("CenterCrop", "height", height)
        self.width = check_size("CenterCrop", "width", width)

    def _crop(self, x: Any) -> Any:
        _, h, w, _ = x.shape
        if h >= self.height and w >= self.width:
            top, left = (h - self.height) // 2, (w - self.width) // 2
            return x[:, top:top + self.height, left:left + self.width, :]
        x = _image_ops.crop_to_aspect(x, self.height, self.width)
        return _image_ops.resize(x, self.height, self.width, "bilinear")

    def call(self, inputs: Any) -> Any:
        return self._images(self._as_float(inputs), self._crop)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "data_format": self.data_format}


class RandomLayer(ImageLayer):
    """Shared by the random image layers: ``seed`` and the training switch. ``_augment``
    transforms a channels-last float batch unless ``training`` is False (its default is
    True, as Keras 3's: a direct call augments, an enclosing call's flag wins)."""

    def __init__(self, seed: int | None = None, data_format: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(data_format=data_format, **kwargs)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"{type(self).__name__}: seed must be an int or None, got "
                             f"seed={seed!r}")
        self.seed = None if seed is None else int(seed)
        self.seed_generator = SeedGenerator(self.seed)

    def _uniform(self, shape: Any, lo: float, hi: float) -> Any:
        return self.seed_generator.generator.uniform(shape, lo, hi, em.float32)

    def _normal(self, shape: Any) -> Any:
        return self.seed_generator.generator.normal(shape, 0.0, 1.0, em.float32)

    def _augment(self, x: Any) -> Any:
        raise NotImplementedError

    def call(self, inputs: Any, training: Any = True) -> Any:
        x = self._as_float(inputs)
        if not training:
            return x
        return self._images(x, self._augment)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "seed": self.seed, "data_format": self.data_format}


def symmetric_factor(layer: str, arg: str, factor: Any, lo: float, hi: float,
                     lower_floor: float | None = None) -> tuple[float, float]:
    """Keras's ``factor``: a number f gives (-f, f) (the lower end floored at
    ``lower_floor`` when given), a pair gives itself sorted; every value in [lo, hi]."""
    msg = (f"{layer}: {arg} must be a number or a pair of numbers in [{lo}, {hi}], got "
           f"{arg}={factor!r}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or not all(isinstance(f, (int, float, np.number)) for f in factor):
            raise ValueError(msg)
        if any(f < lo or f > hi for f in factor):
            raise ValueError(msg)
        a, b = sorted(float(f) for f in factor)
        return a, b
    if isinstance(factor, bool) or not isinstance(factor, (int, float, np.number)):
        raise ValueError(msg)
    if factor < lo or factor > hi:
        raise ValueError(msg)
    f = abs(float(factor))
    return (-f if lower_floor is None else max(-f, lower_floor)), f


class RandomFlip(RandomLayer):
    """Flip each image of a batch, with probability 1/2, in training.

    ``mode="horizontal_and_vertical"`` (the default) flips an image both ways or not at
    all (one draw per image, as Keras does).

    Args:
        mode: ``"horizontal"`` (left-right), ``"vertical"`` (top-bottom) or
            ``"horizontal_and_vertical"``.
        seed: an int seeding the layer's random stream (None: ``em.random.new_seed()``).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        **kwargs: the base ``Layer`` arguments.
    """

    MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode: str = "horizontal_and_vertical", seed: int | None = None,
                 data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.mode = check_choice("RandomFlip", "mode", mode, self.MODES)

    def _augment(self, x: Any) -> Any:
        flips = em.less_equal(self._uniform((x.shape[0], 1, 1, 1), 0.0, 1.0), 0.5)
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            x = em.where(flips, em.reverse(x, [2]), x)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            x = em.where(flips, em.reverse(x, [1]), x)
        return x

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "mode": self.mode}


class RandomContrast(RandomLayer):
    """Scale each image's deviation from its per-channel mean by a random factor, then
    clip to ``value_range``, in training.

    As Keras 3 computes it, a number ``factor=f`` draws from ``[1, 1 + f]`` (the lower
    bound of ``(-f, f)`` is floored at 0); ``factor=(lower, upper)`` draws from
    ``[1 - lower, 1 + upper]``.

    Args:
        factor: a number or a pair, each in [0, 1].
        value_range: the images' ``(low, high)``, which outputs are clipped to.
        seed: an int seeding the layer's random stream (None: ``em.random.new_seed()``).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        **kwargs: the base ``Layer`` arguments.
    """

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None,
                 data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = symmetric_factor("RandomContrast", "factor", factor, 0.0, 1.0,
                                       lower_floor=0.0)
        if (not isinstance(value_range, (tuple, list)) or len(value_range) != 2
                or value_range[0] > value_range[1]):
            raise ValueError(f"RandomContrast: value_range must be (low, high), got "
                             f"value_range={value_range!r}")
        self.value_range = (float(value_range[0]), float(value_range[1]))

    def _augment(self, x: Any) -> Any:
        f = em.cast(self._uniform((x.shape[0], 1, 1, 1), 1.0 - self.factor[0],
                                  1.0 + self.factor[1]), x.dtype)
        mean = em.reduce_mean(x, axis=(1, 2), keepdims=True)
        return em.clip_by_value((x - mean) * f + mean, *self.value_range)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomCrop(RandomLayer):
    """Crop a random ``(height, width)`` window, one offset for the whole batch, in
    training; with ``training=False`` return the images unchanged, as Keras 3 does. An
    image not larger than the window in both sides is cropped from its centre (to the
    target's aspect ratio) and resized.

    The offsets are drawn and applied on the images' device (gathers), with no read to
    the host.

    Args:
        height, width: the window's size.
        seed: an int seeding the layer's random stream (None: ``em.random.new_seed()``).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        name: the layer's name.
        **kwargs: the base ``Layer`` arguments.
    """

    def __init__(self, height: int, width: int, seed: int | None = None,
                 data_format: Any = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, name=name, **kwargs)
        self.height = check_size("RandomCrop", "height", height)
        self.width = check_size("RandomCrop", "width", width)

    def call(self, inputs: Any, training: Any = True) -> Any:
        if not training:
            return inputs
        return self._images(self._as_float(inputs), self._augment)

    def _augment(self, x: Any) -> Any:
        _, h, w, _ = x.shape
        if h > self.height and w > self.width:
            top = em.cast(self._uniform((), 0.0, float(h - self.height + 1)), em.int32)
            left = em.cast(self._uniform((), 0.0, float(w - self.width + 1)), em.int32)
            rows = em.constant(np.arange(self.height, dtype=np.int32)) + top
            cols = em.constant(np.arange(self.width, dtype=np.int32)) + left
            return em.gather(em.gather(x, rows, axis=1), cols, axis=2)
        ch = max(min(h, int(float(w * self.height) / self.width)), 1)
        cw = max(min(w, int(float(h * self.width) / self.height)), 1)
        top, left = int(float(h - ch) / 2), int(float(w - cw) / 2)
        x = x[:, top:top + self.height, left:left + self.width, :]
        if tuple(x.shape[1:3]) != (self.height, self.width):
            x = _image_ops.resize(x, self.height, self.width, "bilinear")
        return x

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height": self.height, "width": self.width}

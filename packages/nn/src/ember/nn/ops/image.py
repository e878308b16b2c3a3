"""``keras.ops.image``: ``resize`` and ``extract_patches`` over ember ops, on the images'
device and differentiable.

``resize`` computes as ``nn.layers.Resizing`` does (the same functions, Keras's JAX and
NumPy backends' scheme: half-pixel centres, separable kernels, ``antialias`` widening them
when shrinking); integer images come back rounded and clipped to their dtype, as Keras.

Examples:
    >>> import numpy as np
    >>> from ember.nn.ops import image
    >>> image.resize(np.ones((4, 4, 3), np.float32), (2, 2)).shape
    (2, 2, 3)
    >>> image.extract_patches(np.ones((1, 8, 8, 3), np.float32), 4).shape
    (1, 2, 2, 48)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from ..layers import _image_ops
from ._core import host_ints, reject, tensor

__all__ = ["crop_images", "extract_patches", "hsv_to_rgb", "pad_images", "resize",
           "rgb_to_grayscale", "rgb_to_hsv"]

# every public name of keras 3.15's keras.ops.image that ember does not have
_KERAS_ONLY = (
    "affine_transform", "elastic_transform", "extract_patches_3d", "gaussian_blur",
    "map_coordinates", "perspective_transform", "scale_and_translate", "sobel_edges", "ssim",
)
_NEAREST = {
    "affine_transform": "nn.layers.RandomRotation / RandomZoom / RandomTranslation",
}


def __getattr__(name: str) -> Any:
    if name in _KERAS_ONLY:
        hint = _NEAREST.get(name)
        raise AttributeError(f"ember.nn.ops.image has no {name} (keras.ops.image.{name})"
                             + (f"; nearest in ember: {hint}" if hint else ""))
    raise AttributeError(f"module 'ember.nn.ops.image' has no attribute {name!r}")


def _channels_first(fn: str, data_format: Any) -> bool:
    if data_format in (None, "channels_last"):
        return False
    if data_format == "channels_first":
        return True
    raise em.InvalidArgumentError(f"ember.nn.ops.image.{fn}: data_format must be "
                                  f"'channels_last' or 'channels_first', got {data_format!r}")


def _batch_nhwc(fn: str, images: Any, first: bool) -> tuple[em.Tensor, bool]:
    """``images`` as an NHWC batch, and whether it was one image."""
    x = tensor(images)
    if x.ndim not in (3, 4):
        raise em.InvalidArgumentError(f"ember.nn.ops.image.{fn}: images must have rank 3 (one "
                                      f"image) or 4 (a batch), got shape {x.shape}")
    single = x.ndim == 3
    if single:
        x = em.expand_dims(x, 0)
    return (em.transpose(x, (0, 2, 3, 1)) if first else x), single


def _restore(y: em.Tensor, first: bool, single: bool) -> em.Tensor:
    if first:
        y = em.transpose(y, (0, 3, 1, 2))
    return em.squeeze(y, 0) if single else y


def resize(images: Any, size: Any, interpolation: str = "bilinear", antialias: bool = False,
           crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
           fill_mode: str = "constant", fill_value: float = 0.0, data_format: Any = None
           ) -> em.Tensor:
    """``images`` (one image or a batch) resized to ``size = (height, width)``.

    ``interpolation``: "bilinear", "nearest", "bicubic", "lanczos3" or "lanczos5".
    ``crop_to_aspect_ratio`` first crops the centred window of the target's aspect ratio;
    ``pad_to_aspect_ratio`` first pads the short side evenly with ``fill_value``.
    """
    if len(size) != 2:
        raise em.InvalidArgumentError(f"ember.nn.ops.image.resize: size must be (height, "
                                      f"width), got {size!r}")
    if interpolation not in _image_ops.RESIZE_METHODS:
        raise reject("image.resize", "interpolation", interpolation,
                     f"ember resizes with {list(_image_ops.RESIZE_METHODS)}")
    if fill_mode != "constant":
        raise em.InvalidArgumentError(f"ember.nn.ops.image.resize: fill_mode must be "
                                      f"'constant' (as Keras), got {fill_mode!r}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise em.InvalidArgumentError("ember.nn.ops.image.resize: give crop_to_aspect_ratio "
                                      "or pad_to_aspect_ratio, not both")
    h, w = host_ints(size)
    first = _channels_first("resize", data_format)
    x, single = _batch_nhwc("resize", images, first)
    if crop_to_aspect_ratio:
        x = _image_ops.crop_to_aspect(x, h, w)
    elif pad_to_aspect_ratio:
        x = _image_ops.pad_to_aspect(x, h, w, float(fill_value))
    y = _image_ops.resize(x, h, w, interpolation, bool(antialias))
    return _restore(y, first, single)


def extract_patches(images: Any, size: Any, strides: Any = None, dilation_rate: Any = 1,
                    padding: str = "valid", data_format: Any = None) -> em.Tensor:
    """The ``size`` patches of ``images`` (one image or a batch), each flattened in
    (row, column, channel) order: shape (batch, out_h, out_w, size_h * size_w * channels)
    (channels first: (batch, that, out_h, out_w)). ``strides`` default to ``size``."""
    k = host_ints(size)
    if len(k) == 3:
        raise reject("image.extract_patches", "size", size,
                     "ember extracts 2-D patches; 3-D patches (volumes) are not supported")
    if len(k) not in (1, 2):
        raise em.InvalidArgumentError(f"ember.nn.ops.image.extract_patches: size must be an "
                                      f"int or (height, width), got {size!r}")
    kh, kw = (k[0], k[0]) if len(k) == 1 else (k[0], k[1])
    s = (kh, kw) if not strides else tuple(host_ints(strides))
    d = tuple(host_ints(dilation_rate))
    p = str(padding).lower()
    if p not in ("valid", "same"):
        raise reject("image.extract_patches", "padding", padding, "use 'valid' or 'same'")
    first = _channels_first("extract_patches", data_format)
    x, single = _batch_nhwc("extract_patches", images, first)
    patches = em.extract_patches(x, sizes=(kh, kw), strides=s if len(s) == 2 else s * 2,
                                 rates=d if len(d) == 2 else d * 2, padding=p.upper())
    n, oh, ow = patches.shape[:3]
    y = em.reshape(patches, (n, oh, ow, -1))
    return _restore(y, first, single)


def _two_of_three(fn: str, names: tuple[str, str, str], before: Any, after: Any, target: Any,
                  size: int, sign: int) -> tuple[int, int]:
    """Keras's rule for a padding or cropping along one axis: exactly two of (before,
    after, target) given; the third follows (``sign`` +1 to pad, -1 to crop)."""
    given = [before, after, target]
    if given.count(None) != 1:
        raise em.InvalidArgumentError(
            f"ember.nn.ops.image.{fn}: give exactly two of {names[0]}, {names[1]} and "
            f"{names[2]}, got {names[0]}={before}, {names[1]}={after}, {names[2]}={target}")
    if before is None:
        before = sign * (int(target) - size) - int(after)
    if after is None:
        after = sign * (int(target) - size) - int(before)
    before, after = int(before), int(after)
    for name, v in ((names[0], before), (names[1], after)):
        if v < 0:
            raise em.InvalidArgumentError(f"ember.nn.ops.image.{fn}: {name} must be >= 0, "
                                          f"got {v} (images of size {size} along that axis)")
    if sign < 0 and before + after >= size:
        raise em.InvalidArgumentError(f"ember.nn.ops.image.{fn}: {names[0]} + {names[1]} = "
                                      f"{before + after} leaves nothing of size {size}")
    return before, after


def pad_images(images: Any, top_padding: Any = None, left_padding: Any = None,
               bottom_padding: Any = None, right_padding: Any = None,
               target_height: Any = None, target_width: Any = None,
               data_format: Any = None) -> em.Tensor:
    """``images`` with zeros around them (Keras's ``pad_images``): along each axis give
    exactly two of the paddings before and after and the target size."""
    first = _channels_first("pad_images", data_format)
    x, single = _batch_nhwc("pad_images", images, first)
    h, w = int(x.shape[1]), int(x.shape[2])
    top, bottom = _two_of_three("pad_images", ("top_padding", "bottom_padding",
                                                "target_height"),
                                top_padding, bottom_padding, target_height, h, 1)
    left, right = _two_of_three("pad_images", ("left_padding", "right_padding",
                                                "target_width"),
                                left_padding, right_padding, target_width, w, 1)
    y = em.pad(x, [[0, 0], [top, bottom], [left, right], [0, 0]])
    return _restore(y, first, single)


def crop_images(images: Any, top_cropping: Any = None, left_cropping: Any = None,
                bottom_cropping: Any = None, right_cropping: Any = None,
                target_height: Any = None, target_width: Any = None,
                data_format: Any = None) -> em.Tensor:
    """``images`` cut down (Keras's ``crop_images``): along each axis give exactly two of
    the croppings before and after and the target size."""
    first = _channels_first("crop_images", data_format)
    x, single = _batch_nhwc("crop_images", images, first)
    h, w = int(x.shape[1]), int(x.shape[2])
    top, bottom = _two_of_three("crop_images", ("top_cropping", "bottom_cropping",
                                                 "target_height"),
                                top_cropping, bottom_cropping, target_height, h, -1)
    left, right = _two_of_three("crop_images", ("left_cropping", "right_cropping",
                                                 "target_width"),
                                left_cropping, right_cropping, target_width, w, -1)
    return _restore(x[:, top:h - bottom, left:w - right, :], first, single)


def rgb_to_grayscale(images: Any, data_format: Any = None) -> em.Tensor:
    """Keras's: ``0.2989 R + 0.5870 G + 0.1140 B``, one channel kept, computed in float and
    cast back to the images' dtype."""
    first = _channels_first("rgb_to_grayscale", data_format)
    x, single = _batch_nhwc("rgb_to_grayscale", images, first)
    if x.shape[-1] != 3:
        raise em.InvalidArgumentError(f"ember.nn.ops.image.rgb_to_grayscale: images must have "
                                      f"3 channels, got shape {x.shape}")
    dt = x.dtype
    f = x if dt in (em.float32, em.float64, em.float16) else em.cast(x, em.float32)
    weights = em.constant(np.array([0.2989, 0.5870, 0.1140]), dtype=f.dtype)
    gray = em.reduce_sum(em.multiply(f, weights), -1, keepdims=True)
    return _restore(gray if gray.dtype == dt else em.cast(gray, dt), first, single)


def _hsv(fn: str, images: Any, data_format: Any, convert: Any) -> em.Tensor:
    first = _channels_first(fn, data_format)
    x, single = _batch_nhwc(fn, images, first)
    if x.dtype not in (em.float16, em.float32, em.float64) and x.dtype != em.bfloat16:
        raise em.InvalidArgumentError(f"ember.nn.ops.image.{fn}: images must be floating, "
                                      f"got {x.dtype}")
    return _restore(convert(x), first, single)


def rgb_to_hsv(images: Any, data_format: Any = None) -> em.Tensor:
    """RGB in [0, 1] to HSV (TensorFlow's conversion, which Keras's backends share)."""
    return _hsv("rgb_to_hsv", images, data_format, em.image.rgb_to_hsv)


def hsv_to_rgb(images: Any, data_format: Any = None) -> em.Tensor:
    """HSV to RGB in [0, 1] (TensorFlow's conversion, which Keras's backends share)."""
    return _hsv("hsv_to_rgb", images, data_format, em.image.hsv_to_rgb)

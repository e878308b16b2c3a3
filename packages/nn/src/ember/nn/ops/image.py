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

import ember.core as em

from ..layers import _image_ops
from ._core import host_ints, reject, tensor

__all__ = ["extract_patches", "resize"]

# every public name of keras 3.15's keras.ops.image that ember does not have
_KERAS_ONLY = (
    "affine_transform", "crop_images", "elastic_transform", "extract_patches_3d",
    "gaussian_blur", "hsv_to_rgb", "map_coordinates", "pad_images", "perspective_transform",
    "rgb_to_grayscale", "rgb_to_hsv", "scale_and_translate", "sobel_edges", "ssim",
)
_NEAREST = {
    "affine_transform": "nn.layers.RandomRotation / RandomZoom / RandomTranslation",
    "crop_images": "nn.layers.CenterCrop, or slicing",
    "pad_images": "nn.ops.pad",
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

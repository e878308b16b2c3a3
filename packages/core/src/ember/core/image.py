"""``em.image`` is ``tf.image``: TensorFlow's image functions, written from ember ops after
TensorFlow's definitions, on an image ``(height, width, channels)`` or a batch of them
``(batch, height, width, channels)``, on the image's device; tapes differentiate the
float ones.

Colour functions (``adjust_*``, ``rgb_to_grayscale``) compute in float32 and give the
image's dtype back (``convert_image_dtype``'s scaling: an integer image is taken as
``[0, max]``, a float one as ``[0, 1]``). The ``stateless_random_*`` functions depend on
their ``seed`` (shape [2] integers, read on the host) alone: the same seed, the same
result; their numbers are ember's Philox's, not TensorFlow's. The ``random_*`` ones draw
from ember's global stream (``em.random.set_seed``), or from ``seed=``'s own.

``resize`` is TensorFlow's (``tf.image.resize``, every method); Keras's resizing is
``ember.nn.ops.image.resize`` and the ``nn.layers.Resizing`` layer.

Examples:
    >>> import ember.core as em
    >>> img = em.reshape(em.range(12, dtype=em.float32), (2, 2, 3))
    >>> em.image.flip_left_right(img)[0, 0]
    ember.Tensor([3. 4. 5.], shape=(3,), dtype=float32)
    >>> em.image.rgb_to_grayscale(em.ones((2, 2, 3))).shape
    (2, 2, 1)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _image_hsv as _hsv
from . import nn_ops
from . import random as _random
from ._errors import InvalidArgumentError
from ._image_resize import resize
from ._ops import array as _a
from ._ops import creation as _c
from ._ops import linalg as _l
from ._ops import math as m
from ._ops import reduce as r
from ._ops.conv import extract_patches as _patches
from ._tensor import Tensor

__all__ = [
    "adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_saturation",
    "central_crop", "convert_image_dtype", "crop_to_bounding_box", "extract_patches", "psnr",
    "rgb_to_yuv", "ssim", "yuv_to_rgb", "adjust_hue", "hsv_to_rgb", "random_hue",
    "random_saturation", "rgb_to_hsv", "stateless_random_hue", "stateless_random_saturation",
    "flip_left_right", "flip_up_down", "grayscale_to_rgb", "pad_to_bounding_box",
    "per_image_standardization", "random_brightness", "random_contrast", "random_crop",
    "random_flip_left_right", "random_flip_up_down", "resize", "resize_with_crop_or_pad",
    "rgb_to_grayscale", "rot90", "stateless_random_brightness", "stateless_random_contrast",
    "stateless_random_crop", "stateless_random_flip_left_right",
    "stateless_random_flip_up_down", "transpose",
]

_GRAY = (0.2989, 0.5870, 0.1140)  # TensorFlow's weights of R, G and B


def _image(fn: str, image: Any) -> Any:
    x = image if isinstance(image, Tensor) else _c.convert_to_tensor(image)
    if x.ndim not in (3, 4):
        raise InvalidArgumentError(f"image.{fn}: expected an image (height, width, "
                                   f"channels) or a batch of them, got shape {x.shape}")
    return x


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False,
                        name: str | None = None) -> Any:
    """``image`` in ``dtype``, its values scaled as TensorFlow scales them: an integer
    image spans ``[0, max]``, a float one ``[0, 1]`` (float to integer multiplies by
    ``max + 0.5`` and truncates).

    ``saturate=True`` clips to the target's range first (for a float image, to the
    largest float below its maximum, as TensorFlow's ``saturate_cast``). Without it, a
    value out of range converts as TensorFlow's CPU kernels convert it (C's conversion on
    x86): truncated through int32 (int64 for 64-bit and uint32 targets), NaN and values
    beyond that becoming its minimum, then wrapped to the target's bits; so float32 1.5
    becomes uint8 127, and an integer image narrowed by a cast wraps too. (TensorFlow's
    GPU kernels saturate instead: its result there is undefined; a uint64 target
    saturates here.)

    Examples:
        >>> import ember.core as em
        >>> em.image.convert_image_dtype(em.constant([0.5, 1.5]), em.uint8).numpy().tolist()
        [127, 127]
        >>> em.image.convert_image_dtype(em.constant([0.5, 1.5]), em.uint8, saturate=True)
        ember.Tensor([127 255], shape=(2,), dtype=uint8)
    """
    x = image if isinstance(image, Tensor) else _c.convert_to_tensor(image)
    src, dst = np.dtype(x.dtype), np.dtype(dtype)
    if dst.kind not in "iuf" or src.kind not in "iuf":
        raise InvalidArgumentError(f"image.convert_image_dtype: from {src} to {dst}: both "
                                   f"must be integer or float dtypes")
    if not isinstance(saturate, (bool, np.bool_)):
        raise InvalidArgumentError(f"image.convert_image_dtype: saturate must be a bool, "
                                   f"got {saturate!r}")
    if src == dst:
        return x
    if src.kind in "iu" and dst.kind in "iu":  # TensorFlow's integer scaling, exactly
        top_in, top_out = int(np.iinfo(src).max), int(np.iinfo(dst).max)
        if top_in > top_out:
            x = m.floordiv(x, (top_in + 1) // (top_out + 1))
        if saturate:  # into the target's range, in the source's dtype
            lo = max(int(np.iinfo(src).min), int(np.iinfo(dst).min))
            x = m.clip_by_value(x, m.cast(lo, src), m.cast(min(top_in, top_out), src))
        if top_in > top_out:
            return m.cast(x, dst)
        return m.multiply(m.cast(x, dst), m.cast((top_out + 1) // (top_in + 1), dst))
    if src.kind in "iu":  # integer -> float: x / max
        return m.multiply(m.cast(x, dst), 1.0 / float(np.iinfo(src).max))
    if dst.kind == "f":
        return m.cast(x, dst)
    info = np.iinfo(dst)
    scaled = m.multiply(x, float(info.max) + 0.5)
    if saturate:
        # the float bounds the integer range holds (float32 2**31 - 1 is 2**31: one below)
        top = np.asarray(info.max, src)
        if float(top) > info.max:
            top = np.nextafter(top, src.type(0))
        scaled = m.clip_by_value(scaled, m.cast(float(info.min), src), m.cast(float(top), src))
        return m.cast(scaled, dst)
    return _c_conversion(scaled, dst)


def _c_conversion(scaled: Any, dst: np.dtype) -> Any:
    """Floats to the integer ``dst`` as C converts them on x86, TensorFlow's CPU kernels'
    (see ``convert_image_dtype``); uint64 saturates (ember's cast)."""
    if dst == np.uint64:
        return m.cast(scaled, dst)
    wide = np.dtype(np.int32) if dst.itemsize < 4 or dst == np.int32 else np.dtype(np.int64)
    bound = 2.0 ** (np.iinfo(wide).bits - 1)
    inside = m.logical_and(m.greater_equal(scaled, m.cast(-bound, scaled.dtype)),
                           m.less(scaled, m.cast(bound, scaled.dtype)))  # NaN is not
    as_wide = m.where(inside, m.cast(scaled, wide), m.cast(int(np.iinfo(wide).min), wide))
    return as_wide if dst == wide else m.cast(as_wide, dst)


def _as_float(image: Any) -> tuple[Any, Any]:
    return convert_image_dtype(image, np.float32), image.dtype


def flip_left_right(image: Any) -> Any:
    """``image`` mirrored left to right (along its width)."""
    return _a.reverse(_image("flip_left_right", image), [-2])


def flip_up_down(image: Any) -> Any:
    """``image`` mirrored top to bottom (along its height)."""
    return _a.reverse(_image("flip_up_down", image), [-3])


def transpose(image: Any, name: str | None = None) -> Any:
    """``image`` with height and width swapped."""
    x = _image("transpose", image)
    perm = [1, 0, 2] if x.ndim == 3 else [0, 2, 1, 3]
    return _a.transpose(x, perm)


def rot90(image: Any, k: int = 1, name: str | None = None) -> Any:
    """``image`` rotated counter-clockwise by ``k`` quarter turns (as ``np.rot90``)."""
    x = _image("rot90", image)
    k = int(k) % 4
    if k == 0:
        return x
    if k == 2:
        return _a.reverse(x, [-3, -2])
    if k == 1:
        return transpose(_a.reverse(x, [-2]))
    return _a.reverse(transpose(x), [-2])


def rgb_to_grayscale(images: Any, name: str | None = None) -> Any:
    """One channel of ``0.2989 R + 0.5870 G + 0.1140 B``, in the images' dtype."""
    x = _image("rgb_to_grayscale", images)
    if x.shape[-1] != 3:
        raise InvalidArgumentError(f"image.rgb_to_grayscale: expected 3 channels (RGB), got "
                                   f"shape {x.shape}")
    f, dt = _as_float(x)
    weights = _c.convert_to_tensor(np.array(_GRAY, np.float32), device=f.device)
    gray = r.reduce_sum(m.multiply(f, weights), axis=-1, keepdims=True)
    return convert_image_dtype(gray, dt)


# TensorFlow's kernels (tf.image.rgb_to_yuv / yuv_to_rgb): one matrix product per pixel
_RGB_TO_YUV = ((0.299, -0.14714119, 0.61497538), (0.587, -0.28886916, -0.51496512),
               (0.114, 0.43601035, -0.10001026))
_YUV_TO_RGB = ((1.0, 1.0, 1.0), (0.0, -0.394642334, 2.03206185),
               (1.13988303, -0.58062185, 0.0))


def _colour_product(fn: str, images: Any, kernel: Any) -> Any:
    x = images if isinstance(images, Tensor) else _c.convert_to_tensor(images)
    if x.ndim < 1 or x.shape[-1] != 3 or x.dtype.kind != "f":
        raise InvalidArgumentError(f"image.{fn}: expected float images with 3 channels last, "
                                   f"got shape {x.shape} and dtype {x.dtype}")
    k = _c.convert_to_tensor(np.array(kernel, x.dtype), device=x.device)
    flat = _a.reshape(x, (-1, 3))
    return _a.reshape(_l.matmul(flat, k), x.shape)


def rgb_to_yuv(images: Any) -> Any:
    """RGB images (float, in [0, 1]) as YUV, by TensorFlow's kernel."""
    return _colour_product("rgb_to_yuv", images, _RGB_TO_YUV)


def yuv_to_rgb(images: Any) -> Any:
    """YUV images (Y in [0, 1], U and V in [-0.5, 0.5]) as RGB, by TensorFlow's kernel."""
    return _colour_product("yuv_to_rgb", images, _YUV_TO_RGB)


def _quality_inputs(fn: str, a: Any, b: Any, max_val: Any) -> tuple[Any, Any, Any]:
    """``a``, ``b`` and ``max_val`` in float32 as TensorFlow scales them
    (``convert_image_dtype``: an integer image and its max_val both by the dtype's max)."""
    x = a if isinstance(a, Tensor) else _c.convert_to_tensor(a)
    y = b if isinstance(b, Tensor) else _c.convert_to_tensor(b)
    if x.ndim < 3 or y.ndim < 3 or x.shape[-3:] != y.shape[-3:]:
        raise InvalidArgumentError(f"image.{fn}: expected images (..., height, width, "
                                   f"channels) of one size, got shapes {x.shape} and {y.shape}")
    if x.dtype != y.dtype:
        raise InvalidArgumentError(f"image.{fn}: the images' dtypes differ: {x.dtype} and "
                                   f"{y.dtype}")
    top = m.cast(_c.convert_to_tensor(max_val, device=x.device), x.dtype)
    return (convert_image_dtype(x, np.float32), convert_image_dtype(y, np.float32),
            convert_image_dtype(top, np.float32))


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Any:
    """The peak signal-to-noise ratio of each image pair, in float32: ``20 log10(max_val) -
    10 log10(mse)`` over the last three axes (TensorFlow's ``tf.image.psnr``)."""
    x, y, top = _quality_inputs("psnr", a, b, max_val)
    mse = r.reduce_mean(m.squared_difference(x, y), [-3, -2, -1])
    ln10 = float(np.log(10.0))
    return m.subtract(m.multiply(m.log(top), 20.0 / ln10),
                      m.multiply(m.log(mse), np.float32(10.0 / ln10)))


def _gauss(size: int, sigma: float) -> np.ndarray:
    """MATLAB's ``fspecial('gaussian')``, TensorFlow's way (a softmax of -r^2 / 2 sigma^2)."""
    coords = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    g = -0.5 * coords ** 2 / sigma ** 2
    g = (g[None, :] + g[:, None]).reshape(-1)
    g = np.exp(g - g.max())
    return (g / g.sum()).reshape(size, size)


def ssim(img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5,
         k1: float = 0.01, k2: float = 0.03, return_index_map: bool = False) -> Any:
    """The structural similarity of each image pair (TensorFlow's ``tf.image.ssim``): a
    ``filter_size`` Gaussian window of ``filter_sigma`` over each channel (no padding), the
    luminance and contrast-structure terms with ``k1``, ``k2``, averaged over the image
    (or the map of them, ``return_index_map``), then over the channels."""
    x, y, top = _quality_inputs("ssim", img1, img2, max_val)
    h, w, c = x.shape[-3:]
    size = int(filter_size)
    if h < size or w < size:
        raise InvalidArgumentError(f"image.ssim: images of {h}x{w} are smaller than the "
                                   f"filter ({size}x{size})")
    window = np.tile(_gauss(size, float(filter_sigma))[:, :, None, None], (1, 1, c, 1))
    kernel = _c.convert_to_tensor(window.astype(np.float32), device=x.device)
    lead = x.shape[:-3]

    def local(t: Any) -> Any:  # the windowed mean of each channel
        out = nn_ops.depthwise_conv2d(_a.reshape(t, (-1, h, w, c)), kernel, [1, 1, 1, 1],
                                      "VALID")
        return _a.reshape(out, (*lead, *out.shape[1:]))

    c1 = m.square(m.multiply(top, float(k1)))
    c2 = m.square(m.multiply(top, float(k2)))
    mean0, mean1 = local(x), local(y)
    num0 = m.multiply(m.multiply(mean0, mean1), 2.0)
    den0 = m.add(m.square(mean0), m.square(mean1))
    luminance = m.divide(m.add(num0, c1), m.add(den0, c1))
    num1 = m.multiply(local(m.multiply(x, y)), 2.0)
    den1 = local(m.add(m.square(x), m.square(y)))
    cs = m.divide(m.add(m.subtract(num1, num0), c2), m.add(m.subtract(den1, den0), c2))
    value = m.multiply(luminance, cs)
    if not return_index_map:
        value = r.reduce_mean(value, [-3, -2])
    return r.reduce_mean(value, [-1])


def grayscale_to_rgb(images: Any, name: str | None = None) -> Any:
    """The one channel repeated as R, G and B."""
    x = _image("grayscale_to_rgb", images)
    if x.shape[-1] != 1:
        raise InvalidArgumentError(f"image.grayscale_to_rgb: expected 1 channel, got shape "
                                   f"{x.shape}")
    return _a.tile(x, [1] * (x.ndim - 1) + [3])


def adjust_brightness(image: Any, delta: Any) -> Any:
    """``delta`` added to every value of the float image (an integer one saturates)."""
    x = _image("adjust_brightness", image)
    f, dt = _as_float(x)
    return convert_image_dtype(m.add(f, m.cast(delta, np.float32)), dt, saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> Any:
    """Each channel of each image moved away from its mean by ``contrast_factor``:
    ``(x - mean) * factor + mean``."""
    x = _image("adjust_contrast", images)
    f, dt = _as_float(x)
    mean = r.reduce_mean(f, axis=[-3, -2], keepdims=True)
    out = m.add(m.multiply(m.subtract(f, mean), m.cast(contrast_factor, np.float32)), mean)
    return convert_image_dtype(out, dt, saturate=True)


def adjust_gamma(image: Any, gamma: float = 1, gain: float = 1) -> Any:
    """``gain * x ** gamma`` on the float image (``gamma`` >= 0)."""
    x = _image("adjust_gamma", image)
    if float(gamma) < 0:
        raise InvalidArgumentError(f"image.adjust_gamma: gamma must be >= 0, got {gamma}")
    f, dt = _as_float(x)
    return convert_image_dtype(m.multiply(m.pow(f, float(gamma)), float(gain)), dt,
                               saturate=True)


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Any:
    """The HSV saturation scaled by ``saturation_factor`` (clipped to [0, 1]), hue and
    value kept: with them fixed, each channel is ``v - (v - c) * s' / s``."""
    x = _image("adjust_saturation", image)
    if x.shape[-1] != 3:
        raise InvalidArgumentError(f"image.adjust_saturation: expected 3 channels (RGB), "
                                   f"got shape {x.shape}")
    f, dt = _as_float(x)
    v = r.reduce_max(f, axis=-1, keepdims=True)
    spread = m.subtract(v, r.reduce_min(f, axis=-1, keepdims=True))
    s = m.where(m.greater(v, 0), m.divide(spread, m.maximum(v, 1e-12)), 0.0)
    s_new = m.clip_by_value(m.multiply(s, m.cast(saturation_factor, np.float32)), 0.0, 1.0)
    ratio = m.where(m.greater(s, 0), m.divide(s_new, m.maximum(s, 1e-12)), 0.0)
    return convert_image_dtype(m.subtract(v, m.multiply(m.subtract(v, f), ratio)), dt)


def _rgb(fn: str, image: Any) -> Any:
    x = image if isinstance(image, Tensor) else _c.convert_to_tensor(image)
    if x.ndim < 1 or x.shape[-1] != 3:
        raise InvalidArgumentError(f"image.{fn}: expected 3 channels last, got shape "
                                   f"{x.shape}")
    return x


def rgb_to_hsv(images: Any, name: str | None = None) -> Any:
    """RGB (float, in [0, 1]) to HSV, each in [0, 1] (TensorFlow's ``tf.image.rgb_to_hsv``)."""
    x = _rgb("rgb_to_hsv", images)
    if x.dtype.kind != "f":
        raise InvalidArgumentError(f"image.rgb_to_hsv: expected float images, got {x.dtype}")
    return _hsv.rgb_to_hsv(x)


def hsv_to_rgb(images: Any, name: str | None = None) -> Any:
    """HSV (each in [0, 1]) to RGB (TensorFlow's ``tf.image.hsv_to_rgb``)."""
    x = _rgb("hsv_to_rgb", images)
    if x.dtype.kind != "f":
        raise InvalidArgumentError(f"image.hsv_to_rgb: expected float images, got {x.dtype}")
    return _hsv.hsv_to_rgb(x)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Any:
    """The hue turned by ``delta`` (in [-1, 1], a whole turn being 1), saturation and value
    kept, in the image's dtype (TensorFlow's; an integer image is converted to float32 and
    back)."""
    x = _rgb("adjust_hue", image)
    if not isinstance(delta, Tensor) and not -1.0 <= float(delta) <= 1.0:
        raise InvalidArgumentError(f"image.adjust_hue: delta must be in [-1, 1], got {delta}")
    f, dt = (x, x.dtype) if x.dtype in (np.float16, np.float32) else _as_float(x)
    hsv = _hsv.rgb_to_hsv(f)
    h, rest = hsv[..., :1], hsv[..., 1:]
    turned = m.floormod(m.add(h, m.cast(delta, f.dtype)), 1.0)
    return convert_image_dtype(_hsv.hsv_to_rgb(_a.concat([turned, rest], axis=-1)), dt)


def per_image_standardization(image: Any) -> Any:
    """Each image scaled to mean 0 and variance 1: ``(x - mean) / max(std, 1/sqrt(n))``,
    in float32 (TensorFlow's, whatever the image's dtype)."""
    x = _image("per_image_standardization", image)
    f = m.cast(x, np.float32) if x.dtype != np.float32 else x
    n = int(np.prod(f.shape[-3:]))
    mean = r.reduce_mean(f, axis=[-3, -2, -1], keepdims=True)
    std = r.reduce_std(f, axis=[-3, -2, -1], keepdims=True)
    return m.divide(m.subtract(f, mean), m.maximum(std, 1.0 / float(np.sqrt(n))))


def _hw(x: Any) -> tuple[int, int]:
    return int(x.shape[-3]), int(x.shape[-2])


def crop_to_bounding_box(image: Any, offset_height: int, offset_width: int,
                         target_height: int, target_width: int) -> Any:
    """The ``target_height`` x ``target_width`` window at the offsets."""
    x = _image("crop_to_bounding_box", image)
    h, w = _hw(x)
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height,
                                        target_width))
    if min(oh, ow) < 0 or min(th, tw) <= 0 or oh + th > h or ow + tw > w:
        raise InvalidArgumentError(f"image.crop_to_bounding_box: the box at ({oh}, {ow}) of "
                                   f"{th} x {tw} does not fit an image of {h} x {w}")
    return x[..., oh:oh + th, ow:ow + tw, :]


def pad_to_bounding_box(image: Any, offset_height: int, offset_width: int,
                        target_height: int, target_width: int) -> Any:
    """``image`` placed at the offsets in a zero image of ``target_height`` x
    ``target_width``."""
    x = _image("pad_to_bounding_box", image)
    h, w = _hw(x)
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height,
                                        target_width))
    if min(oh, ow) < 0 or oh + h > th or ow + w > tw:
        raise InvalidArgumentError(f"image.pad_to_bounding_box: an image of {h} x {w} at "
                                   f"({oh}, {ow}) does not fit {th} x {tw}")
    pads = [[oh, th - h - oh], [ow, tw - w - ow], [0, 0]]
    return _a.pad(x, pads if x.ndim == 3 else [[0, 0]] + pads)


def resize_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> Any:
    """``image`` cropped or zero-padded evenly about its centre to the target size."""
    x = _image("resize_with_crop_or_pad", image)
    h, w = _hw(x)
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise InvalidArgumentError(f"image.resize_with_crop_or_pad: the target size must be "
                                   f"positive, got {th} x {tw}")
    crop = crop_to_bounding_box(x, max((h - th) // 2, 0), max((w - tw) // 2, 0),
                                min(th, h), min(tw, w))
    return pad_to_bounding_box(crop, max((th - h) // 2, 0), max((tw - w) // 2, 0), th, tw)


def central_crop(image: Any, central_fraction: float) -> Any:
    """The central ``central_fraction`` of the image along height and width (in (0, 1])."""
    x = _image("central_crop", image)
    frac = float(central_fraction)
    if not 0.0 < frac <= 1.0:
        raise InvalidArgumentError(f"image.central_crop: central_fraction must be in "
                                   f"(0, 1], got {central_fraction}")
    if frac == 1.0:
        return x
    h, w = _hw(x)
    top, left = int((h - h * frac) / 2), int((w - w * frac) / 2)
    return x[..., top:h - top, left:w - left, :]


def extract_patches(images: Any, sizes: Any, strides: Any, rates: Any, padding: str,
                    name: str | None = None) -> Any:
    """TensorFlow's patches: ``(batch, out_rows, out_cols, ksize_rows * ksize_cols *
    depth)``, each patch's values in (row, column, channel) order (``em.extract_patches``
    keeps them apart: ``(..., ksize_rows, ksize_cols, depth)``)."""
    x = _image("extract_patches", images)
    if x.ndim != 4:
        raise InvalidArgumentError(f"image.extract_patches: expected a batch (batch, height, "
                                   f"width, depth), got shape {x.shape}")
    p = _patches(x, sizes, strides, rates, padding)
    return _a.reshape(p, tuple(p.shape[:3]) + (int(np.prod(p.shape[3:])),))


# --- random ------------------------------------------------------------------------------
def _flip(fn: str, image: Any, draws: Any, axis: int) -> Any:
    x = _image(fn, image)
    flipped = _a.reverse(x, [axis])
    if x.ndim == 3:
        return m.where(m.less(draws[0], 0.5), flipped, x)
    mask = _a.reshape(m.less(draws, 0.5), (-1, 1, 1, 1))
    return m.where(mask, flipped, x)


def _count(image: Any) -> int:
    x = image if isinstance(image, Tensor) else _c.convert_to_tensor(image)
    return 1 if x.ndim == 3 else int(x.shape[0])


def stateless_random_flip_left_right(image: Any, seed: Any) -> Any:
    """Each image mirrored left to right with probability 1/2, as ``seed`` decides."""
    g = _random._stateless("image.stateless_random_flip_left_right", seed)
    return _flip("stateless_random_flip_left_right", image,
                 g.uniform([_count(image)], 0.0, 1.0, np.float32), -2)


def stateless_random_flip_up_down(image: Any, seed: Any) -> Any:
    """Each image mirrored top to bottom with probability 1/2, as ``seed`` decides."""
    g = _random._stateless("image.stateless_random_flip_up_down", seed)
    return _flip("stateless_random_flip_up_down", image,
                 g.uniform([_count(image)], 0.0, 1.0, np.float32), -3)


def stateless_random_brightness(image: Any, max_delta: float, seed: Any) -> Any:
    """``adjust_brightness`` by a delta drawn from ``[-max_delta, max_delta)``."""
    if float(max_delta) < 0:
        raise InvalidArgumentError(f"image.stateless_random_brightness: max_delta must be "
                                   f">= 0, got {max_delta}")
    g = _random._stateless("image.stateless_random_brightness", seed)
    return adjust_brightness(image, g.uniform([], -float(max_delta), float(max_delta)))


def stateless_random_contrast(image: Any, lower: float, upper: float, seed: Any) -> Any:
    """``adjust_contrast`` by a factor drawn from ``[lower, upper)`` (0 <= lower < upper)."""
    if not 0 <= float(lower) < float(upper):
        raise InvalidArgumentError(f"image.stateless_random_contrast: need 0 <= lower < "
                                   f"upper, got lower={lower}, upper={upper}")
    g = _random._stateless("image.stateless_random_contrast", seed)
    return adjust_contrast(image, g.uniform([], float(lower), float(upper)))


def _crop(fn: str, value: Any, size: Any, offsets: Any) -> Any:
    x = value if isinstance(value, Tensor) else _c.convert_to_tensor(value)
    size = [int(s) for s in size]
    if len(size) != x.ndim or any(s > d or s < 0 for s, d in zip(size, x.shape)):
        raise InvalidArgumentError(f"image.{fn}: size {size} does not fit a value of shape "
                                   f"{x.shape}")
    limit = [d - s + 1 for s, d in zip(size, x.shape)]
    at = [int(o) % lim for o, lim in zip(offsets, limit)]
    return x[tuple(slice(o, o + s) for o, s in zip(at, size))]


def stateless_random_crop(value: Any, size: Any, seed: Any, name: str | None = None) -> Any:
    """A window of ``size`` (one entry per axis of ``value``) at an offset ``seed``
    decides."""
    g = _random._stateless("image.stateless_random_crop", seed)
    rank = value.ndim if isinstance(value, Tensor) else np.ndim(value)
    offsets = g.uniform([rank], 0, int(np.iinfo(np.int32).max), np.int32).numpy()
    return _crop("stateless_random_crop", value, size, offsets)


def random_flip_left_right(image: Any, seed: Any = None) -> Any:
    """Each image mirrored left to right with probability 1/2."""
    draws = _random.uniform([_count(image)], 0.0, 1.0, np.float32, seed=seed)
    return _flip("random_flip_left_right", image, draws, -2)


def random_flip_up_down(image: Any, seed: Any = None) -> Any:
    """Each image mirrored top to bottom with probability 1/2."""
    draws = _random.uniform([_count(image)], 0.0, 1.0, np.float32, seed=seed)
    return _flip("random_flip_up_down", image, draws, -3)


def random_brightness(image: Any, max_delta: float, seed: Any = None) -> Any:
    """``adjust_brightness`` by a delta drawn from ``[-max_delta, max_delta)``."""
    if float(max_delta) < 0:
        raise InvalidArgumentError(f"image.random_brightness: max_delta must be >= 0, got "
                                   f"{max_delta}")
    delta = _random.uniform([], -float(max_delta), float(max_delta), seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: Any = None) -> Any:
    """``adjust_contrast`` by a factor drawn from ``[lower, upper)``."""
    if not 0 <= float(lower) < float(upper):
        raise InvalidArgumentError(f"image.random_contrast: need 0 <= lower < upper, got "
                                   f"lower={lower}, upper={upper}")
    return adjust_contrast(image, _random.uniform([], float(lower), float(upper), seed=seed))


def random_hue(image: Any, max_delta: float, seed: Any = None) -> Any:
    """``adjust_hue`` by a delta drawn from ``[-max_delta, max_delta)`` (0 <= max_delta <=
    0.5)."""
    if not 0 <= float(max_delta) <= 0.5:
        raise InvalidArgumentError(f"image.random_hue: max_delta must be in [0, 0.5], got "
                                   f"{max_delta}")
    delta = _random.uniform([], -float(max_delta), float(max_delta), seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image: Any, lower: float, upper: float, seed: Any = None) -> Any:
    """``adjust_saturation`` by a factor drawn from ``[lower, upper)`` (0 <= lower <
    upper)."""
    if not 0 <= float(lower) < float(upper):
        raise InvalidArgumentError(f"image.random_saturation: need 0 <= lower < upper, got "
                                   f"lower={lower}, upper={upper}")
    factor = _random.uniform([], float(lower), float(upper), seed=seed)
    return adjust_saturation(image, factor)


def stateless_random_hue(image: Any, max_delta: float, seed: Any) -> Any:
    """``random_hue`` whose delta depends on ``seed`` alone."""
    if not 0 <= float(max_delta) <= 0.5:
        raise InvalidArgumentError(f"image.stateless_random_hue: max_delta must be in "
                                   f"[0, 0.5], got {max_delta}")
    g = _random._stateless("image.stateless_random_hue", seed)
    return adjust_hue(image, g.uniform([], -float(max_delta), float(max_delta)))


def stateless_random_saturation(image: Any, lower: float, upper: float, seed: Any) -> Any:
    """``random_saturation`` whose factor depends on ``seed`` alone."""
    if not 0 <= float(lower) < float(upper):
        raise InvalidArgumentError(f"image.stateless_random_saturation: need 0 <= lower < "
                                   f"upper, got lower={lower}, upper={upper}")
    g = _random._stateless("image.stateless_random_saturation", seed)
    return adjust_saturation(image, g.uniform([], float(lower), float(upper)))


def random_crop(value: Any, size: Any, seed: Any = None, name: str | None = None) -> Any:
    """A window of ``size`` (one entry per axis of ``value``) at a random offset."""
    rank = value.ndim if isinstance(value, Tensor) else np.ndim(value)
    offsets = _random.uniform([rank], 0, int(np.iinfo(np.int32).max), np.int32,
                              seed=seed).numpy()
    return _crop("random_crop", value, size, offsets)

"""Image resampling for the image preprocessing layers, in ember ops (any device, no host
read of the images): resizing as two matrix products, and affine resampling as gathers.

Both follow Keras 3's JAX and NumPy backends. ``resize`` is ``em.image.resize``: TensorFlow's
``ScaleAndTranslate`` scheme, which ``jax.image.resize`` is too (half-pixel centres; weights
from a kernel over the input pixels, renormalised at the borders; the kernel widened when
shrinking with ``antialias``).
``affine_transform`` maps each output pixel ``(x, y)`` to the input point
``(a0 x + a1 y + a2, b0 x + b1 y + b2)`` and reads it as ``scipy.ndimage.map_coordinates``
does after Keras pads the image: each integer neighbour's index is mapped by the fill mode
(``reflect``: d c b a | a b c d | d c b a, ``wrap``, ``nearest``), or it reads
``fill_value`` (``constant``); ``bilinear`` blends the four neighbours, ``nearest`` takes
``floor(x + 0.5)``. (TensorFlow's kernel maps the point before blending, which differs
only along the seam of ``wrap``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

RESIZE_METHODS = ("bilinear", "nearest", "bicubic", "lanczos3", "lanczos5", "area")
FILL_MODES = ("reflect", "wrap", "constant", "nearest")
AFFINE_INTERPOLATIONS = ("nearest", "bilinear")


def resize(images: Any, height: int, width: int, method: str, antialias: bool = False) -> Any:
    """NHWC ``images`` resized to ``(height, width)`` by ``em.image.resize`` (whose scheme
    is Keras's JAX backend's), in the images' dtype: float images come back in theirs,
    integer images are rounded and clipped back to their dtype (as Keras does)."""
    out = em.image.resize(images, (height, width), method=method, antialias=antialias)
    if out.dtype == images.dtype:
        return out
    if images.dtype.kind == "f":
        return em.cast(out, images.dtype)
    info = np.iinfo(images.dtype) if images.dtype.kind in "iu" else None
    out = em.round(out)
    if info is not None:
        out = em.clip_by_value(out, float(info.min), float(info.max))
    return em.cast(out, images.dtype)


def crop_to_aspect(images: Any, height: int, width: int) -> Any:
    """The centred window of NHWC ``images`` with the aspect ratio of (height, width)."""
    _, h, w, _ = images.shape
    ch = max(min(h, int(float(w * height) / width)), 1)
    cw = max(min(w, int(float(h * width) / height)), 1)
    top, left = int(float(h - ch) / 2), int(float(w - cw) / 2)
    return images[:, top:top + ch, left:left + cw, :]


def pad_to_aspect(images: Any, height: int, width: int, fill_value: float) -> Any:
    """NHWC ``images`` padded evenly on the short side to the aspect ratio of
    (height, width), with ``fill_value``."""
    _, h, w, _ = images.shape
    ph = max(h, int(float(w * height) / width))
    pw = max(w, int(float(h * width) / height))
    top, left = int(float(ph - h) / 2), int(float(pw - w) / 2)
    if top > 0:
        return em.pad(images, [[0, 0], [top, top], [0, 0], [0, 0]],
                      constant_values=fill_value)
    if left > 0:
        return em.pad(images, [[0, 0], [0, 0], [left, left], [0, 0]],
                      constant_values=fill_value)
    return images


def _fill_index(i: Any, size: int, mode: str) -> tuple[Any, Any]:
    """Integer indices ``i`` mapped into [0, size) by ``mode``; with the mask of indices
    that were inside (only ``constant`` needs it)."""
    if mode == "constant":
        inside = em.logical_and(em.greater_equal(i, 0), em.less(i, size))
        return em.clip_by_value(i, 0, size - 1), inside
    if mode == "wrap":
        return em.floormod(i, size), None
    if mode == "nearest":
        return em.clip_by_value(i, 0, size - 1), None
    m = em.floormod(i, 2 * size)  # reflect: the half-sample symmetric extension
    return em.where(em.less(m, size), m, 2 * size - 1 - m), None


def affine_transform(images: Any, transform: Any, interpolation: str, fill_mode: str,
                     fill_value: float) -> Any:
    """NHWC float ``images`` resampled by one (8,)-row ``transform`` per image (Keras's
    ``[a0, a1, a2, b0, b1, b2, c0, c1]``; the projective ``c`` terms must be 0)."""
    n, h, w, c = images.shape
    ys, xs = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32),
                         indexing="ij")
    t = em.cast(transform, em.float32)
    a0, a1, a2, b0, b1, b2 = (em.reshape(t[:, k], (n, 1, 1)) for k in range(6))
    gx, gy = em.constant(xs), em.constant(ys)
    sx = a0 * gx + a1 * gy + a2  # (n, h, w): where each output pixel reads
    sy = b0 * gx + b1 * gy + b2
    flat = em.reshape(images, (n * h * w, c))
    base = em.constant((np.arange(n, dtype=np.int32) * (h * w)).reshape(n, 1, 1))
    fill = em.cast(em.constant(fill_value), images.dtype)

    def read(iy: Any, ix: Any) -> Any:
        ry, in_y = _fill_index(iy, h, fill_mode)
        rx, in_x = _fill_index(ix, w, fill_mode)
        v = em.gather(flat, base + ry * w + rx)
        if in_y is None:
            return v
        return em.where(em.expand_dims(em.logical_and(in_y, in_x), -1), v, fill)

    if interpolation == "nearest":
        return read(em.cast(em.floor(sy + 0.5), em.int32), em.cast(em.floor(sx + 0.5),
                                                                    em.int32))
    x0f, y0f = em.floor(sx), em.floor(sy)
    fx = em.expand_dims(em.cast(sx - x0f, images.dtype), -1)
    fy = em.expand_dims(em.cast(sy - y0f, images.dtype), -1)
    x0, y0 = em.cast(x0f, em.int32), em.cast(y0f, em.int32)
    x1, y1 = x0 + 1, y0 + 1
    top = read(y0, x0) * (1 - fx) + read(y0, x1) * fx
    bottom = read(y1, x0) * (1 - fx) + read(y1, x1) * fx
    return top * (1 - fy) + bottom * fy

"""``em.image.resize``: TensorFlow's ``tf.image.resize`` (its v2), in ember ops on the
image's device, differentiable by tapes.

Every method but ``nearest`` and ``area`` is TensorFlow's ``ScaleAndTranslate`` scheme
(which its bilinear and bicubic kernels equal when ``antialias`` is off): output pixel
``i`` samples the input at ``(i + 0.5) * in / out - 0.5``, weighs every input pixel by a
kernel of its distance (widened by ``in / out`` when shrinking with ``antialias``), and
renormalises the weights of the pixels inside the image to sum to 1; a sample outside
the image is 0. ``area`` averages the input pixels a box of ``in / out`` covers, by how
much of each it covers. ``nearest`` takes pixel ``floor((i + 0.5) * in / out)``. All are
separable: one matrix product per axis that changes size.

dtypes are TensorFlow's: ``nearest`` keeps the image's; every other method gives
float32, except that a float64 image stays float64 (TensorFlow's kernels compute it in
float32).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._errors import InvalidArgumentError
from ._ops import array as _a
from ._ops import creation as _c
from ._ops import linalg as _l
from ._ops import math as m
from ._tensor import Tensor


def _triangle(x: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, 1.0 - x)


def _keys_cubic(x: np.ndarray) -> np.ndarray:  # Keys' cubic, a = -0.5 (Catmull-Rom)
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return np.where(x >= 2.0, 0.0, np.where(x >= 1.0, far, near))


def _mitchell_cubic(x: np.ndarray) -> np.ndarray:  # Mitchell and Netravali, B = C = 1/3
    near = (((7.0 / 6.0) * x - 2.0) * x) * x + 8.0 / 9.0
    far = (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0
    return np.where(x >= 2.0, 0.0, np.where(x >= 1.0, far, near))


def _gaussian(x: np.ndarray) -> np.ndarray:  # radius 1.5, sigma 0.5
    return np.where(x >= 1.5, 0.0, np.exp(-x * x / (2.0 * 0.5 ** 2)))


def _lanczos(radius: float) -> Callable[[np.ndarray], np.ndarray]:
    def kernel(x: np.ndarray) -> np.ndarray:
        safe = np.where(x > 1e-3, x, 1.0)
        y = radius * np.sin(np.pi * safe) * np.sin(np.pi * safe / radius) / (np.pi * safe) ** 2
        return np.where(x > radius, 0.0, np.where(x > 1e-3, y, 1.0))
    return kernel


KERNELS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "bilinear": _triangle, "bicubic": _keys_cubic, "lanczos3": _lanczos(3.0),
    "lanczos5": _lanczos(5.0), "gaussian": _gaussian, "mitchellcubic": _mitchell_cubic,
}
METHODS = (*KERNELS, "nearest", "area")


def kernel_weights(in_size: int, out_size: int, method: str, antialias: bool) -> np.ndarray:
    """The (in_size, out_size) float64 matrix whose column ``i`` weighs the input pixels
    for output pixel ``i`` (``ScaleAndTranslate``'s spans, as a dense matrix)."""
    inv = in_size / out_size
    kernel_scale = max(inv, 1.0) if antialias else 1.0
    sample = (np.arange(out_size, dtype=np.float64) + 0.5) * inv
    dist = np.abs(np.arange(in_size, dtype=np.float64)[:, None] + 0.5 - sample[None, :])
    w = KERNELS[method](dist / kernel_scale)
    total = w.sum(axis=0, keepdims=True)
    w = np.where(np.abs(total) > 1000.0 * np.finfo(np.float32).tiny,
                 w / np.where(total != 0, total, 1.0), 0.0)
    inside = (sample >= 0.0) & (sample <= in_size)
    return np.where(inside[None, :], w, 0.0)


def area_weights(in_size: int, out_size: int) -> np.ndarray:
    """The (in_size, out_size) matrix of ``ResizeArea``: how much of input pixel ``j`` the
    box ``[i, i + 1) * in / out`` of output pixel ``i`` covers, over the box's length."""
    scale = in_size / out_size
    lo = np.arange(out_size, dtype=np.float64) * scale
    hi = lo + scale
    j = np.arange(in_size, dtype=np.float64)[:, None]
    cover = np.clip(np.minimum(j + 1.0, hi[None, :]) - np.maximum(j, lo[None, :]), 0.0, None)
    return cover / scale


def nearest_index(in_size: int, out_size: int) -> np.ndarray:
    """The input pixel each output pixel takes (half-pixel centres, as TensorFlow's v2)."""
    idx = np.floor((np.arange(out_size, dtype=np.float64) + 0.5) * (in_size / out_size))
    return np.minimum(idx, in_size - 1).astype(np.int32)


def _size(size: Any) -> tuple[int, int]:
    if isinstance(size, Tensor):
        size = size.numpy()
    arr = np.asarray(size)
    if arr.shape != (2,) or arr.dtype.kind not in "iu":
        raise InvalidArgumentError(f"image.resize: 'size' must be 2 integers "
                                   f"(new_height, new_width), got {size!r}")
    h, w = int(arr[0]), int(arr[1])
    if h <= 0 or w <= 0:
        raise InvalidArgumentError(f"image.resize: 'size' must be positive, got {[h, w]}")
    return h, w


def _fit(h: int, w: int, height: int, width: int) -> tuple[int, int]:
    """``preserve_aspect_ratio``'s size, computed in float32 as TensorFlow does."""
    f32 = np.float32
    scale = min(f32(height) / f32(h), f32(width) / f32(w))
    return int(np.rint(scale * f32(h))), int(np.rint(scale * f32(w)))


def resize(images: Any, size: Any, method: str = "bilinear", preserve_aspect_ratio: bool = False,
           antialias: bool = False, name: str | None = None) -> Any:
    """``images`` (``(height, width, channels)`` or a batch of them) resized to ``size``
    (``[new_height, new_width]``) by ``method``: ``"bilinear"``, ``"nearest"``,
    ``"bicubic"``, ``"area"``, ``"lanczos3"``, ``"lanczos5"``, ``"gaussian"`` or
    ``"mitchellcubic"`` (``tf.image.ResizeMethod``'s values). ``antialias`` widens the
    kernel when shrinking (``nearest`` and ``area`` ignore it, as TensorFlow's do);
    ``preserve_aspect_ratio`` fits the image inside ``size`` instead.

    Examples:
        >>> import ember.core as em
        >>> em.image.resize(em.ones((4, 4, 1)), [2, 3]).shape
        (2, 3, 1)
    """
    x = images if isinstance(images, Tensor) else _c.convert_to_tensor(images)
    if x.ndim not in (3, 4):
        raise InvalidArgumentError(f"image.resize: 'images' must have 3 or 4 dimensions "
                                   f"(height, width, channels), got shape {x.shape}")
    method = getattr(method, "value", method)  # an enum member, as tf.image.ResizeMethod
    if method not in METHODS:
        raise InvalidArgumentError(f"image.resize: unknown method {method!r}; expected one "
                                   f"of {', '.join(METHODS)}")
    height, width = _size(size)
    h, w = x.shape[-3], x.shape[-2]
    if preserve_aspect_ratio:
        height, width = _fit(h, w, height, width)
    if method == "nearest":
        for axis, m_, n in ((-3, h, height), (-2, w, width)):
            if m_ != n:
                index = _c.convert_to_tensor(nearest_index(m_, n), device=x.device)
                x = _a.gather(x, index, axis=axis + x.ndim)
        return x
    if x.dtype not in (np.float32, np.float64):
        x = m.cast(x, np.float32)
    for axis, m_, n in ((-3, h, height), (-2, w, width)):
        wts = area_weights(m_, n) if method == "area" else kernel_weights(m_, n, method,
                                                                          antialias)
        if m_ == n and np.array_equal(wts, np.eye(m_)):
            continue  # (gaussian and mitchellcubic blur even at the same size)
        x = _apply(x, _c.convert_to_tensor(wts.astype(x.dtype), device=x.device), axis)
    return x


def _apply(x: Any, weights: Any, axis: int) -> Any:
    """``x`` with ``axis`` (-3, height, or -2, width) mapped through ``weights``
    (in, out) by one matrix product (BLAS: numpy's einsum of these layouts runs its own
    loop, 30-40x slower)."""
    shape = x.shape
    if axis == -2:  # (..., h, c, w) @ (w, out)
        moved = _a.transpose(x, (*range(x.ndim - 3), x.ndim - 3, x.ndim - 1, x.ndim - 2))
        out = _l.matmul(moved, weights)
        return _a.transpose(out, (*range(x.ndim - 3), x.ndim - 3, x.ndim - 1, x.ndim - 2))
    # height: (out, h) @ (..., h, w * c)
    lead = shape[:-3]
    flat = _a.reshape(x, (*lead, shape[-3], math.prod(shape[-2:])))
    out = _l.matmul(_a.transpose(weights, (1, 0)), flat)
    return _a.reshape(out, (*lead, weights.shape[1], *shape[-2:]))

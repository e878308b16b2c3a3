"""Sliding windows: the two primitives under convolution and pooling.

``extract_patches`` turns an NHWC image into its windows, shape
``(N, OH, OW, KH, KW, C)``; ``patches_to_image`` is its adjoint (adds each window back).
Convolutions are patches times a reshaped filter; pooling reduces over the window axes.
Each is the other's gradient, so every order of derivative comes free.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._registry import execute, register
from . import _args
from .conv_geometry import pad_image

F = "conv"
Pads = tuple[tuple[int, int], tuple[int, int]]


def _out_size(n: int, k: int, s: int, d: int, p0: int, p1: int) -> int:
    return (n + p0 + p1 - (k - 1) * d - 1) // s + 1


def _extract(be: Any, x: Any, ksize: tuple[int, int], strides: tuple[int, int],
             dilations: tuple[int, int], pads: Pads, pad_value: float) -> Any:
    xp = be.xp
    x = pad_image(xp, x, pads, value=pad_value)
    n, h, w, c = x.shape
    kh, kw = ksize
    sh, sw = strides
    dh, dw = dilations
    oh = (h - (kh - 1) * dh - 1) // sh + 1
    ow = (w - (kw - 1) * dw - 1) // sw + 1
    s0, s1, s2, s3 = x.strides
    return xp.lib.stride_tricks.as_strided(
        x, shape=(n, oh, ow, kh, kw, c),
        strides=(s0, s1 * sh, s2 * sw, s1 * dh, s2 * dw, s3))


def _to_image(be: Any, p: Any, image_shape: tuple[int, int, int, int], strides: tuple[int, int],
              dilations: tuple[int, int], pads: Pads) -> Any:
    xp = be.xp
    n, h, w, c = image_shape
    (pt, pb), (pl, pr) = pads
    _, oh, ow, kh, kw, _ = p.shape
    sh, sw = strides
    dh, dw = dilations
    out = xp.zeros((n, h + pt + pb, w + pl + pr, c), dtype=p.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                j * dw: j * dw + sw * (ow - 1) + 1: sw, :] += p[:, :, :, i, j, :]
    return out[:, pt: pt + h, pl: pl + w, :]


_extract_op = register("extract_patches", _extract, family=F)
_to_image_op = register("patches_to_image", _to_image, family=F)


def _pair(op: str, v: Any, name: str) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    v = [int(i) for i in v]
    if len(v) == 4:  # TensorFlow's [1, s, s, 1]
        if v[0] != 1 or v[3] != 1:
            raise InvalidArgumentError(f"{op}: {name} {v} is not 1 on the batch or channel "
                                       "axis; only the two spatial entries may differ from 1")
        v = v[1:3]
    if len(v) == 1:
        v = v * 2
    if len(v) != 2 or min(v) < 1:
        raise InvalidArgumentError(f"{op}: {name} must be an int or two positive ints, got {v}")
    return (v[0], v[1])


def padding_amounts(op: str, padding: Any, in_hw: tuple[int, ...], ksize: tuple[int, int],
                    strides: tuple[int, int], dilations: tuple[int, int]) -> Pads:
    """TensorFlow's SAME/VALID padding as ((top, bottom), (left, right))."""
    if isinstance(padding, str):
        p = padding.upper()
        if p == "VALID":
            return ((0, 0), (0, 0))
        if p != "SAME":
            raise InvalidArgumentError(f"{op}: padding must be 'SAME' or 'VALID', got {padding!r}")
        out = []
        for n, k, s, d in zip(in_hw, ksize, strides, dilations):
            o = math.ceil(n / s)
            total = max((o - 1) * s + (k - 1) * d + 1 - n, 0)
            out.append((total // 2, total - total // 2))
        return (out[0], out[1])
    try:
        pads = [(int(a), int(b)) for a, b in padding]
    except (TypeError, ValueError):
        pads = []
    if len(pads) == 4:  # TensorFlow's [[0, 0], [top, bottom], [left, right], [0, 0]]
        if pads[0] != (0, 0) or pads[3] != (0, 0):
            raise InvalidArgumentError(f"{op}: explicit padding of the batch and channel axes "
                                       f"must be [0, 0], got {padding!r}")
        pads = pads[1:3]
    if len(pads) != 2:
        raise InvalidArgumentError(f"{op}: padding must be 'SAME', 'VALID' or explicit "
                                   f"[[top, bottom], [left, right]] (or TensorFlow's 4 pairs), "
                                   f"got {padding!r}")
    if min(min(pads[0]), min(pads[1])) < 0:
        raise InvalidArgumentError(f"{op}: padding must not be negative, got {padding!r}")
    return (pads[0], pads[1])


def extract_patches(images: Any, sizes: Any, strides: Any = 1, rates: Any = 1,
                    padding: Any = "VALID", pad_value: float = 0.0) -> Any:
    """Sliding windows of an NHWC batch: shape ``(N, OH, OW, KH, KW, C)``."""
    x = _args.tensor(images)
    if x.ndim != 4:
        raise InvalidArgumentError(f"extract_patches: expected NHWC input of rank 4, got shape "
                                   f"{x.shape}")
    k = _pair("extract_patches", sizes, "sizes")
    s = _pair("extract_patches", strides, "strides")
    d = _pair("extract_patches", rates, "dilations")
    pads = padding_amounts("extract_patches", padding, x.shape[1:3], k, s, d)
    _check_pad_value(x.dtype, pad_value)
    for ax, (n, kk, dd, (p0, p1)) in enumerate(zip(x.shape[1:3], k, d, pads)):
        if n + p0 + p1 < (kk - 1) * dd + 1:
            raise InvalidArgumentError(
                f"extract_patches: window {k} (dilation {d}) is larger than the padded input "
                f"{x.shape} along axis {ax + 1}")
    return execute(_extract_op, (x,), {"ksize": k, "strides": s, "dilations": d, "pads": pads,
                                       "pad_value": pad_value})


def _check_pad_value(dtype: Any, value: Any) -> None:
    """An integer image is padded only with a value its dtype holds exactly (numpy would
    wrap -1 to 255 in uint8, or turn -inf into the minimum with a warning)."""
    dt = np.dtype(dtype)
    if dt.kind not in "iu":
        return
    ok = isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value) \
        and float(value).is_integer() and np.iinfo(dt).min <= value <= np.iinfo(dt).max
    if not ok:
        raise InvalidArgumentError(f"extract_patches: pad_value {value!r} is not a value of "
                                   f"the images' dtype {dt} (range {np.iinfo(dt).min} to "
                                   f"{np.iinfo(dt).max}, whole numbers)")


def patches_to_image(patches: Any, image_shape: Any, strides: Any, dilations: Any,
                     pads: Pads) -> Any:
    """Adjoint of :func:`extract_patches`: add every window back into an image."""
    p = _args.tensor(patches)
    return execute(_to_image_op, (p,), {"image_shape": tuple(int(i) for i in image_shape),
                                        "strides": tuple(strides), "dilations": tuple(dilations),
                                        "pads": pads})

"""Images between numpy arrays and PIL, as Keras 3's ``keras.utils`` image helpers.

``img_to_array`` needs numpy alone (anything ``numpy.asarray`` reads: a PIL image, an
array). ``array_to_img``, ``save_img`` and ``load_img`` make or read PIL images, so they
need Pillow, which ember does not depend on: without it they raise an ImportError that
names it. Their arguments are checked, and the array worked out, before Pillow is needed.
"""

from __future__ import annotations

import io
import pathlib
import warnings
from typing import Any

import numpy as np

_FORMATS = ("channels_last", "channels_first")
_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def _pil_image(what: str) -> Any:
    """``PIL.Image``, or an ImportError naming Pillow and the function that needs it."""
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(f"{what} makes or reads PIL images and needs Pillow, which ember "
                          f"does not install: pip install Pillow") from e
    return Image


def _data_format(what: str, data_format: Any) -> str:
    if data_format is None:
        return "channels_last"
    if data_format not in _FORMATS:
        raise ValueError(f"{what}: data_format must be 'channels_last', 'channels_first' or "
                         f"None, got {data_format!r}")
    return data_format


def img_to_array(img: Any, data_format: str | None = None, dtype: Any = None) -> np.ndarray:
    """An image (PIL, or anything ``numpy.asarray`` reads) as a 3-D array
    (``keras.utils.img_to_array``).

    Args:
        img: the image: ``(height, width)`` or ``(height, width, channels)``.
        data_format: ``"channels_last"`` (None: the default) gives ``(h, w, c)``,
            ``"channels_first"`` gives ``(c, h, w)``; a grey image gets a channel axis.
        dtype: the array's dtype; None gives float32 (Keras's ``floatx``).

    Returns:
        A 3-D numpy array.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.utils.img_to_array(np.zeros((4, 5), np.uint8)).shape
        (4, 5, 1)
        >>> nn.utils.img_to_array(np.zeros((4, 5, 3)), data_format="channels_first").shape
        (3, 4, 5)
    """
    data_format = _data_format("img_to_array", data_format)
    x = np.asarray(img, dtype=np.float32 if dtype is None else dtype)
    if x.ndim == 2:
        x = x[None] if data_format == "channels_first" else x[..., None]
    elif x.ndim == 3:
        if data_format == "channels_first":
            x = x.transpose(2, 0, 1)
    else:
        raise ValueError(f"img_to_array: an image has 2 or 3 axes, got shape {x.shape}")
    return x


def _image_bytes(x: Any, data_format: Any, scale: bool, dtype: Any,
                 what: str) -> tuple[np.ndarray, str]:
    """The pixels and PIL mode ``array_to_img`` hands to ``PIL.Image.fromarray``: scaled
    to [0, 255] when ``scale``, as uint8 (or int32 for grey values above 255: mode I)."""
    data_format = _data_format(what, data_format)
    x = np.array(x, dtype=np.float32 if dtype is None else dtype)
    if x.ndim != 3:
        raise ValueError(f"{what}: expected one image of 3 axes, got shape {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x = x / top
        x = x * 255
    channels = x.shape[2]
    if channels in (3, 4):
        return x.astype(np.uint8), "RGB" if channels == 3 else "RGBA"
    if channels == 1:
        if np.max(x) > 255:  # 32-bit grey values (PIL's mode I), as Keras
            return x[:, :, 0].astype(np.int32), "I"
        return x[:, :, 0].astype(np.uint8), "L"
    raise ValueError(f"{what}: an image has 1, 3 or 4 channels, got {channels}")


def array_to_img(x: Any, data_format: str | None = None, scale: bool = True,
                 dtype: Any = None) -> Any:
    """A 3-D array as a PIL image (``keras.utils.array_to_img``); needs Pillow.

    Args:
        x: one image, ``(h, w, c)`` (or ``(c, h, w)`` with ``channels_first``) with 1, 3
            or 4 channels (grey, RGB, RGBA).
        data_format: ``"channels_last"`` (None: the default) or ``"channels_first"``.
        scale: rescale the values so that the smallest is 0 and the largest 255.
        dtype: the dtype ``x`` is read as before scaling; None gives float32.

    Returns:
        A ``PIL.Image.Image``.

    Raises:
        ImportError: Pillow is not installed.
    """
    pixels, mode = _image_bytes(x, data_format, scale, dtype, "array_to_img")
    return _pil_image("array_to_img").fromarray(pixels, mode)


def save_img(path: Any, x: Any, data_format: str | None = None, file_format: str | None = None,
             scale: bool = True, **kwargs: Any) -> None:
    """Save a 3-D array as an image file (``keras.utils.save_img``); needs Pillow.

    Args:
        path: a path, or a file object (then give ``file_format``).
        x: the image, as ``array_to_img`` takes it.
        data_format: ``"channels_last"`` (None: the default) or ``"channels_first"``.
        file_format: ``"png"``, ``"jpeg"`` ...; None takes the path's extension (``jpg``
            is ``jpeg``). An RGBA image saved as JPEG loses its alpha (with a warning).
        scale: rescale the values to [0, 255] first.
        **kwargs: passed to ``PIL.Image.Image.save``.

    Raises:
        ImportError: Pillow is not installed.
    """
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower() or None
    if file_format is None:
        raise ValueError("save_img: give file_format when path is a file object or has no "
                         "extension")
    file_format = "jpeg" if file_format.lower() == "jpg" else file_format.lower()
    pixels, mode = _image_bytes(x, data_format, scale, None, "save_img")
    img = _pil_image("save_img").fromarray(pixels, mode)
    if mode == "RGBA" and file_format == "jpeg":
        warnings.warn("save_img: JPEG holds no alpha channel; saving the RGBA image as RGB",
                      stacklevel=2)
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def load_img(path: Any, color_mode: str = "rgb", target_size: Any = None,
             interpolation: str = "nearest", keep_aspect_ratio: bool = False) -> Any:
    """Read an image file as a PIL image (``keras.utils.load_img``); needs Pillow.

    Args:
        path: a path, or an ``io.BytesIO`` holding the file.
        color_mode: ``"rgb"``, ``"rgba"`` or ``"grayscale"``.
        target_size: None (the file's size) or ``(height, width)``.
        interpolation: how to resize: ``"nearest"``, ``"bilinear"``, ``"bicubic"``,
            ``"hamming"``, ``"box"`` or ``"lanczos"``.
        keep_aspect_ratio: resize the largest centred crop of the target's aspect ratio,
            rather than stretching the whole image.

    Returns:
        A ``PIL.Image.Image``; ``img_to_array`` makes it an array.

    Raises:
        ImportError: Pillow is not installed.
    """
    if color_mode not in ("grayscale", "rgb", "rgba"):
        raise ValueError(f"load_img: color_mode must be 'grayscale', 'rgb' or 'rgba', got "
                         f"{color_mode!r}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"load_img: interpolation must be one of {_INTERPOLATIONS}, got "
                         f"{interpolation!r}")
    if target_size is not None and (len(target_size) != 2 or
                                    any(int(s) != s or s < 1 for s in target_size)):
        raise ValueError(f"load_img: target_size must be None or (height, width), got "
                         f"{target_size!r}")
    if not isinstance(path, (io.BytesIO, pathlib.Path, bytes, str)):
        raise TypeError(f"load_img: path must be a path or an io.BytesIO, got "
                        f"{type(path).__name__}")
    image = _pil_image("load_img")
    if isinstance(path, io.BytesIO):
        img = image.open(path)
    else:
        with open(path, "rb") as f:
            img = image.open(io.BytesIO(f.read()))
    img = _convert(img, color_mode)
    if target_size is None:
        return img
    size = (int(target_size[1]), int(target_size[0]))  # PIL's (width, height)
    if img.size == size:
        return img
    resample = getattr(getattr(image, "Resampling", image), interpolation.upper())
    box = _centre_box(img.size, size) if keep_aspect_ratio else None
    return img.resize(size, resample, box=box)


def _convert(img: Any, color_mode: str) -> Any:
    if color_mode == "grayscale":  # 8, 16 or 32-bit grey stays as it is, as Keras
        return img if img.mode in ("L", "I;16", "I") else img.convert("L")
    want = color_mode.upper()
    return img if img.mode == want else img.convert(want)


def _centre_box(size: tuple[int, int], target: tuple[int, int]) -> tuple[int, int, int, int]:
    """The largest centred box of ``target``'s aspect ratio in an image of ``size``."""
    width, height = size
    tw, th = target
    crop_h = min(height, (width * th) // tw)
    crop_w = min(width, (height * tw) // th)
    left, top = (width - crop_w) // 2, (height - crop_h) // 2
    return left, top, left + crop_w, top + crop_h

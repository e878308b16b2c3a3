"""Keras's spatial reshaping layers: ``ZeroPadding2D``, ``Cropping2D`` and ``UpSampling2D``
for images (channels last by default; ``data_format="channels_first"`` also works),
``ZeroPadding3D``, ``Cropping3D`` and ``UpSampling3D`` for volumes, and
``ZeroPadding1D``, ``Cropping1D`` and ``UpSampling1D`` for sequences (batch, steps,
features)."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _image_ops
from .base import InputSpec, Layer


def _pairs(layer: str, name: str, value: Any) -> tuple[tuple[int, int], tuple[int, int]]:
    """Keras's forms: ``n`` (every side), ``(h, w)`` (both sides of each axis) or
    ``((top, bottom), (left, right))``; non-negative ints."""
    def ints(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if ints(value):
        return ((value, value), (value, value))
    if isinstance(value, (list, tuple)) and len(value) == 2:
        if all(ints(v) for v in value):
            return ((value[0], value[0]), (value[1], value[1]))
        if all(isinstance(v, (list, tuple)) and len(v) == 2 and all(ints(i) for i in v)
               for v in value):
            return ((value[0][0], value[0][1]), (value[1][0], value[1][1]))
    raise ValueError(f"{layer}: {name} must be a non-negative int, a pair (height, width) or "
                     f"((top, bottom), (left, right)), got {value!r}")


def _spatial_axes(layer: str, data_format: Any) -> tuple[int, int]:
    if data_format in (None, "channels_last"):
        return (1, 2)
    if data_format == "channels_first":
        return (2, 3)
    raise ValueError(f"{layer}: data_format must be 'channels_last' or 'channels_first', "
                     f"got {data_format!r}")


class _Padding(Layer):
    """Zeros around the spatial axes ``self._axes`` (ZeroPadding2D's and 3D's ``call``)."""

    padding: Any
    data_format: str
    _axes: Any

    def call(self, inputs: Any) -> Any:
        pads = [[0, 0] for _ in range(inputs.ndim)]
        for axis, pair in zip(self._axes, self.padding):
            pads[axis] = list(pair)
        return em.pad(inputs, pads)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "padding": [list(p) for p in self.padding],
                "data_format": self.data_format}


class _Cropping(Layer):
    """Edges cut from the spatial axes ``self._axes`` (Cropping2D's and 3D's ``call``)."""

    cropping: Any
    data_format: str
    _axes: Any

    def call(self, inputs: Any) -> Any:
        index: list[Any] = [slice(None)] * inputs.ndim
        for axis, (a, b) in zip(self._axes, self.cropping):
            size = inputs.shape[axis]
            if a + b >= size:
                raise ValueError(f"{type(self).__name__} ({self.name!r}): cropping "
                                 f"{self.cropping} leaves nothing of axis {axis} (size "
                                 f"{size}) of inputs {tuple(inputs.shape)}")
            index[axis] = slice(a, size - b)
        return inputs[tuple(index)]

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "cropping": [list(c) for c in self.cropping],
                "data_format": self.data_format}


class ZeroPadding2D(_Padding):
    """Zeros added around images (Keras's ``ZeroPadding2D``).

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.ZeroPadding2D(((1, 0), (2, 1)))(np.ones((1, 2, 2, 3), np.float32)).shape
        (1, 3, 5, 3)
    """

    def __init__(self, padding: Any = (1, 1), data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.padding = _pairs("ZeroPadding2D", "padding", padding)
        self.data_format = data_format or "channels_last"
        self._axes = _spatial_axes("ZeroPadding2D", data_format)
        self.input_spec = InputSpec(ndim=4)



class Cropping2D(_Cropping):
    """Rows and columns cut from the edges of images (Keras's ``Cropping2D``)."""

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cropping = _pairs("Cropping2D", "cropping", cropping)
        self.data_format = data_format or "channels_last"
        self._axes = _spatial_axes("Cropping2D", data_format)
        self.input_spec = InputSpec(ndim=4)



class UpSampling2D(Layer):
    """The rows ``size[0]`` times and the columns ``size[1]`` times as many (Keras's
    ``UpSampling2D``).

    Args:
        size: an int or a pair (rows, columns) of positive ints.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        interpolation: ``"nearest"`` (default: each value repeated), ``"bilinear"``,
            ``"bicubic"``, ``"lanczos3"`` or ``"lanczos5"`` (any case): the image resized
            to the new size as :class:`Resizing` and ``em.image.resize`` do (half-pixel
            centres, no antialiasing; Keras's TensorFlow and JAX backends' kernels).
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> x = np.array([1.0, 2.0, 3.0, 4.0], np.float32).reshape(1, 2, 2, 1)
        >>> nn.layers.UpSampling2D(2)(x).numpy()[0, :, :, 0]
        array([[1., 1., 2., 2.],
               [1., 1., 2., 2.],
               [3., 3., 4., 4.],
               [3., 3., 4., 4.]], dtype=float32)
        >>> nn.layers.UpSampling2D(2, interpolation="bilinear")(x).numpy()[0, :, :, 0]
        array([[1.  , 1.25, 1.75, 2.  ],
               [1.5 , 1.75, 2.25, 2.5 ],
               [2.5 , 2.75, 3.25, 3.5 ],
               [3.  , 3.25, 3.75, 4.  ]], dtype=float32)
    """

    INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "lanczos3", "lanczos5")

    def __init__(self, size: Any = (2, 2), data_format: str | None = None,
                 interpolation: str = "nearest", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        pair = (size, size) if isinstance(size, int) and not isinstance(size, bool) else size
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in pair)):
            raise ValueError(f"UpSampling2D: size must be a positive int or a pair of them, "
                             f"got {size!r}")
        method = interpolation.lower() if isinstance(interpolation, str) else interpolation
        if method not in self.INTERPOLATIONS:
            raise ValueError(f"UpSampling2D: interpolation must be one of "
                             f"{', '.join(map(repr, self.INTERPOLATIONS))}, got "
                             f"interpolation={interpolation!r}")
        self.size = (int(pair[0]), int(pair[1]))
        self.interpolation = method
        self.data_format = data_format or "channels_last"
        self._axes = _spatial_axes("UpSampling2D", data_format)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs: Any) -> Any:
        shape = list(inputs.shape)
        (h, w), (sh, sw) = self._axes, self.size
        if self.interpolation != "nearest":
            first = self.data_format == "channels_first"
            x = em.transpose(inputs, (0, 2, 3, 1)) if first else inputs
            y = _image_ops.resize(x, shape[h] * sh, shape[w] * sw, self.interpolation)
            return em.transpose(y, (0, 3, 1, 2)) if first else y
        # (.., H, 1, W, 1, ..) broadcast to (.., H, sh, W, sw, ..): each value repeated
        spread = shape[:h + 1] + [1] + shape[h + 1:w + 1] + [1] + shape[w + 1:]
        tiled = list(spread)
        tiled[h + 1], tiled[w + 2] = sh, sw
        out = em.broadcast_to(em.reshape(inputs, spread), tiled)
        shape[h], shape[w] = shape[h] * sh, shape[w] * sw
        return em.reshape(out, shape)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "size": list(self.size),
                "data_format": self.data_format, "interpolation": self.interpolation}


def _pair(layer: str, name: str, value: Any) -> tuple[int, int]:
    """Keras's ``standardize_tuple(value, 2, allow_zero=True)``: ``n`` (both ends) or
    ``(start, end)``, non-negative ints."""
    def ok(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if ok(value):
        return (value, value)
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(ok(v) for v in value):
        return (int(value[0]), int(value[1]))
    raise ValueError(f"{layer}: {name} must be a non-negative int or a pair (start, end) "
                     f"of them, got {value!r}")


class ZeroPadding1D(Layer):
    """Zeros added at the start and end of the steps axis (Keras's ``ZeroPadding1D``).

    Args:
        padding: an int (both ends) or a pair ``(start, end)``.
        data_format: ``"channels_last"`` (default: (batch, steps, features)) or
            ``"channels_first"`` ((batch, features, steps)).
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.ZeroPadding1D((1, 2))(np.ones((1, 3, 2), np.float32)).shape
        (1, 6, 2)
    """

    def __init__(self, padding: Any = 1, data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.padding = _pair("ZeroPadding1D", "padding", padding)
        self.data_format = data_format or "channels_last"
        self._axis = _spatial_axes("ZeroPadding1D", data_format)[0]
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs: Any) -> Any:
        pads = [[0, 0], [0, 0], [0, 0]]
        pads[self._axis] = list(self.padding)
        return em.pad(inputs, pads)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "padding": list(self.padding),
                "data_format": self.data_format}


class Cropping1D(Layer):
    """Steps cut from the start and end of sequences (Keras's ``Cropping1D``).

    Args:
        cropping: an int (both ends) or a pair ``(start, end)``.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.Cropping1D((1, 2))(np.ones((1, 6, 2), np.float32)).shape
        (1, 3, 2)
    """

    def __init__(self, cropping: Any = (1, 1), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cropping = _pair("Cropping1D", "cropping", cropping)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs: Any) -> Any:
        (a, b), size = self.cropping, inputs.shape[1]
        if a + b >= size:
            raise ValueError(f"Cropping1D ({self.name!r}): cropping {self.cropping} must be "
                             f"smaller than the input length: inputs {tuple(inputs.shape)}")
        return inputs[:, a:size - b, :]

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "cropping": list(self.cropping)}


class UpSampling1D(Layer):
    """Each step repeated ``size`` times (Keras's ``UpSampling1D``): (batch, steps,
    features) -> (batch, steps * size, features).

    Args:
        size: a positive int.
        **kwargs: the base ``Layer`` arguments.

    Raises:
        TypeError: ``size`` is not an int.
        ValueError: ``size`` is not positive.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> x = np.array([1.0, 2.0], np.float32).reshape(1, 2, 1)
        >>> nn.layers.UpSampling1D(3)(x).numpy()[0, :, 0]
        array([1., 1., 1., 2., 2., 2.], dtype=float32)
    """

    def __init__(self, size: int = 2, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"UpSampling1D: size must be an int, got {size!r}")
        if size <= 0:
            raise ValueError(f"UpSampling1D: size must be a positive int, got size={size}")
        self.size = size
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs: Any) -> Any:
        n, t, c = inputs.shape
        out = em.broadcast_to(em.reshape(inputs, (n, t, 1, c)), (n, t, self.size, c))
        return em.reshape(out, (n, t * self.size, c))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "size": self.size}


_Triples = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]


def _triples(layer: str, name: str, value: Any) -> _Triples:
    """Keras's forms: ``n`` (every side), three entries each ``n`` (both sides of that
    axis) or ``(before, after)``; non-negative ints."""
    def ok(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if ok(value):
        return ((value, value),) * 3  # type: ignore[return-value]
    if isinstance(value, (list, tuple)) and len(value) == 3:
        out = []
        for v in value:
            if ok(v):
                out.append((v, v))
            elif isinstance(v, (list, tuple)) and len(v) == 2 and all(ok(i) for i in v):
                out.append((int(v[0]), int(v[1])))
            else:
                break
        else:
            return (out[0], out[1], out[2])
    raise ValueError(f"{layer}: {name} must be a non-negative int, three of them (depth, "
                     f"height, width) or three (before, after) pairs, got {value!r}")


def _volume_axes(layer: str, data_format: Any) -> tuple[int, int, int]:
    if data_format in (None, "channels_last"):
        return (1, 2, 3)
    if data_format == "channels_first":
        return (2, 3, 4)
    raise ValueError(f"{layer}: data_format must be 'channels_last' or 'channels_first', "
                     f"got {data_format!r}")


class ZeroPadding3D(_Padding):
    """Zeros added around volumes (Keras's ``ZeroPadding3D``): (N, D, H, W, C) (or
    channels first).

    Args:
        padding: an int (every side), three ints (both sides of depth, height, width) or
            three ``(before, after)`` pairs.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.ZeroPadding3D((1, (0, 2), 0))(np.ones((1, 2, 2, 2, 3), np.float32)).shape
        (1, 4, 4, 2, 3)
    """

    def __init__(self, padding: Any = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.padding = _triples("ZeroPadding3D", "padding", padding)
        self._axes = _volume_axes("ZeroPadding3D", data_format)
        self.data_format = data_format or "channels_last"
        self.input_spec = InputSpec(ndim=5)



class Cropping3D(_Cropping):
    """Slices cut from the edges of volumes (Keras's ``Cropping3D``): the forms of
    :class:`ZeroPadding3D`'s ``padding``.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.Cropping3D()(np.ones((1, 4, 5, 6, 2), np.float32)).shape
        (1, 2, 3, 4, 2)
    """

    def __init__(self, cropping: Any = ((1, 1), (1, 1), (1, 1)),
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cropping = _triples("Cropping3D", "cropping", cropping)
        self._axes = _volume_axes("Cropping3D", data_format)
        self.data_format = data_format or "channels_last"
        self.input_spec = InputSpec(ndim=5)



class UpSampling3D(Layer):
    """Each slice repeated ``size[0]`` times along depth, ``size[1]`` along height and
    ``size[2]`` along width (Keras's ``UpSampling3D``, nearest neighbour).

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.UpSampling3D((1, 2, 3))(np.ones((1, 2, 2, 2, 3), np.float32)).shape
        (1, 2, 4, 6, 3)
    """

    def __init__(self, size: Any = (2, 2, 2), data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        t = (size,) * 3 if isinstance(size, int) and not isinstance(size, bool) else size
        if not (isinstance(t, (list, tuple)) and len(t) == 3 and all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in t)):
            raise ValueError(f"UpSampling3D: size must be a positive int or three of them, "
                             f"got {size!r}")
        self.size = (int(t[0]), int(t[1]), int(t[2]))
        self._axes = _volume_axes("UpSampling3D", data_format)
        self.data_format = data_format or "channels_last"
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs: Any) -> Any:
        shape = list(inputs.shape)
        # (.., D, 1, H, 1, W, 1, ..) broadcast to (.., D, sd, H, sh, W, sw, ..)
        spread: list[int] = []
        tiled: list[int] = []
        for axis, n in enumerate(shape):
            spread.append(n)
            tiled.append(n)
            if axis in self._axes:
                spread.append(1)
                tiled.append(self.size[self._axes.index(axis)])
                shape[axis] = n * tiled[-1]
        out = em.broadcast_to(em.reshape(inputs, spread), tiled)
        return em.reshape(out, shape)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "size": list(self.size),
                "data_format": self.data_format}

"""Pooling: MaxPool1D/2D/3D, AvgPool1D/2D/3D and global pooling, channels last or first.

``data_format="channels_first"`` (NCW / NCHW inputs) pools the same windows as channels
last on the transposed input. ``GlobalAveragePooling1D`` and ``GlobalMaxPooling1D`` skip
masked steps (``mask=``, or the mask an upstream ``Embedding(mask_zero=True)`` made).
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from .base import InputSpec, Layer
from .conv import _padding, _tuple, check_data_format, to_channels_first, to_channels_last
from .masking import step_mask


class _Pool2D(Layer):
    rank = 2

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        r = self.rank
        self.pool_size = _tuple(pool_size, r, "pool_size")
        self.strides = self.pool_size if strides is None else _tuple(strides, r, "strides")
        self.padding = _padding(padding)
        self.data_format = check_data_format(data_format, type(self).__name__)
        self.input_spec = InputSpec(ndim=r + 2)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding.lower(), "data_format": self.data_format}

    def call(self, inputs: Any) -> Any:
        first = self.data_format == "channels_first"
        x = to_channels_last(inputs) if first else inputs
        y = self._pool(em.expand_dims(x, 1)) if self.rank == 1 else self._pool(x)
        if self.rank == 1:
            y = em.squeeze(y, 1)
        return to_channels_first(y) if first else y

    def _window(self) -> tuple[tuple[int, int], tuple[int, int]]:
        if self.rank == 1:
            return (1, self.pool_size[0]), (1, self.strides[0])
        return (self.pool_size[0], self.pool_size[1]), (self.strides[0], self.strides[1])

    def _tiled(self, x: Any) -> bool:
        """Non-overlapping windows that tile the input exactly: a reshape suffices."""
        (kh, kw), (sh, sw) = self._window()
        _, h, w, _ = x.shape
        return (kh, kw) == (sh, sw) and h % kh == 0 and w % kw == 0

    def _blocks(self, x: Any) -> Any:
        n, h, w, c = x.shape
        (kh, kw), _ = self._window()
        return em.reshape(x, (n, h // kh, kh, w // kw, kw, c))

    def _pool(self, x: Any) -> Any:
        raise NotImplementedError


class MaxPooling2D(_Pool2D):
    """Maximum over each window (default 2x2, stride = pool size, VALID).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.MaxPool2D(padding="same")(em.ones((1, 5, 5, 2))).shape
        (1, 3, 3, 2)
        >>> nn.layers.MaxPool2D(data_format="channels_first")(em.ones((1, 2, 6, 4))).shape
        (1, 2, 3, 2)
    """

    def _pool(self, x: Any) -> Any:  # (windows that tile x: nn_ops' fast path)
        k, s = self._window()
        return em.nn_ops.max_pool2d(x, k, s, self.padding)


class AveragePooling2D(_Pool2D):
    """Mean over each window (SAME padding averages the real elements only)."""

    def _pool(self, x: Any) -> Any:
        if self._tiled(x):
            return em.reduce_mean(self._blocks(x), axis=(2, 4))
        k, s = self._window()
        return em.nn_ops.avg_pool2d(x, k, s, self.padding)


class MaxPooling1D(MaxPooling2D):
    """Maximum over windows of the steps axis: (N, W, C) (or (N, C, W) channels first)."""

    rank = 1


class AveragePooling1D(AveragePooling2D):
    """Mean over windows of the steps axis: (N, W, C) (or (N, C, W) channels first)."""

    rank = 1


class _GlobalPool(Layer):
    rank = 2

    def __init__(self, data_format: str | None = None, keepdims: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = check_data_format(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    @property
    def _axes(self) -> tuple[int, ...]:
        start = 2 if self.data_format == "channels_first" else 1
        return tuple(range(start, start + self.rank))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


class GlobalAveragePooling2D(_GlobalPool):
    """Mean over the spatial axes: (N, H, W, C) -> (N, C) (or keepdims; NCHW too)."""

    def call(self, inputs: Any) -> Any:
        return em.reduce_mean(inputs, axis=self._axes, keepdims=self.keepdims)


class GlobalMaxPooling2D(_GlobalPool):
    """Maximum over the spatial axes: (N, H, W, C) -> (N, C) (or keepdims; NCHW too)."""

    def call(self, inputs: Any) -> Any:
        return em.reduce_max(inputs, axis=self._axes, keepdims=self.keepdims)


class _GlobalPool1D(_GlobalPool):
    rank = 1
    supports_masking = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None  # the steps axis is gone

    def _keep(self, inputs: Any, mask: Any) -> Any:
        """The mask as 0/1 of the inputs' dtype, broadcastable against them."""
        n, steps = inputs.shape[0], inputs.shape[self._axes[0]]
        m = step_mask(mask, n, steps, f"layer {self.name!r} ({type(self).__name__})")
        m = em.cast(m, inputs.dtype)
        return em.expand_dims(m, 1 if self.data_format == "channels_first" else -1)


class GlobalAveragePooling1D(_GlobalPool1D):
    """Mean over the steps axis: (N, W, C) -> (N, C); masked steps are left out.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> x = em.constant([[[1.0], [3.0], [100.0]]])
        >>> nn.layers.GlobalAveragePooling1D()(x, mask=[[True, True, False]]).numpy()
        array([[2.]], dtype=float32)
    """

    def call(self, inputs: Any, mask: Any = None) -> Any:
        ax = self._axes
        if mask is None:
            return em.reduce_mean(inputs, axis=ax, keepdims=self.keepdims)
        keep = self._keep(inputs, mask)
        total = em.reduce_sum(em.multiply(inputs, keep), axis=ax, keepdims=self.keepdims)
        count = em.reduce_sum(keep, axis=ax, keepdims=self.keepdims)
        return em.divide(total, em.maximum(count, 1.0))


class GlobalMaxPooling1D(_GlobalPool1D):
    """Maximum over the steps axis: (N, W, C) -> (N, C); masked steps are left out."""

    def call(self, inputs: Any, mask: Any = None) -> Any:
        ax = self._axes
        if mask is not None:
            keep = em.cast(self._keep(inputs, mask), em.bool)
            low = em.fill(inputs.shape, float("-inf")) if inputs.dtype.kind == "f" else (
                em.zeros_like(inputs))
            inputs = em.where(keep, inputs, em.cast(low, inputs.dtype))
        return em.reduce_max(inputs, axis=ax, keepdims=self.keepdims)


class MaxPooling3D(_Pool2D):
    """Maximum over each window of volumes: (N, D, H, W, C) (or (N, C, D, H, W) channels
    first); Keras 3's ``MaxPooling3D`` (default 2x2x2, stride = pool size, VALID).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.MaxPooling3D()(em.ones((1, 4, 5, 6, 2))).shape
        (1, 2, 2, 3, 2)
        >>> nn.layers.MaxPool3D((1, 2, 2), padding="same",
        ...                     data_format="channels_first")(em.ones((1, 2, 3, 5, 5))).shape
        (1, 2, 3, 3, 3)
    """

    rank = 3

    def _pool(self, x: Any) -> Any:
        return em.nn_ops.max_pool3d(x, self.pool_size, self.strides, self.padding)


class AveragePooling3D(_Pool2D):
    """Mean over each window of volumes: (N, D, H, W, C) (or channels first); Keras 3's
    ``AveragePooling3D`` (SAME padding averages the real elements only).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.AveragePooling3D(2, strides=1)(em.ones((1, 3, 3, 3, 1))).shape
        (1, 2, 2, 2, 1)
    """

    rank = 3

    def _pool(self, x: Any) -> Any:
        return em.nn_ops.avg_pool3d(x, self.pool_size, self.strides, self.padding)


class GlobalAveragePooling3D(GlobalAveragePooling2D):
    """Mean over the spatial axes: (N, D, H, W, C) -> (N, C) (or keepdims; NCDHW too).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.GlobalAveragePooling3D(keepdims=True)(em.ones((2, 3, 4, 5, 6))).shape
        (2, 1, 1, 1, 6)
    """

    rank = 3


class GlobalMaxPooling3D(GlobalMaxPooling2D):
    """Maximum over the spatial axes: (N, D, H, W, C) -> (N, C) (or keepdims; NCDHW too)."""

    rank = 3


# Keras's class names are the long ones (and name the layers: max_pooling2d, ...)
MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
AvgPooling2D = AveragePooling2D
MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalMaxPool1D = GlobalMaxPooling1D
MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool3D = GlobalMaxPooling3D

"""Pooling over NHWC windows: MaxPool2D, AvgPool2D, GlobalAveragePooling2D (and 1-D)."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .base import InputSpec, Layer
from .conv import _padding, _tuple


class _Pool2D(Layer):
    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pool_size = _tuple(pool_size, 2, "pool_size")
        self.strides = self.pool_size if strides is None else _tuple(strides, 2, "strides")
        self.padding = _padding(padding)
        self.input_spec = InputSpec(ndim=4)

    def _tiled(self, x: Any) -> bool:
        """Non-overlapping windows that tile the input exactly: a reshape suffices."""
        (kh, kw), (sh, sw) = self.pool_size, self.strides
        _, h, w, _ = x.shape
        return (kh, kw) == (sh, sw) and h % kh == 0 and w % kw == 0

    def _blocks(self, x: Any) -> Any:
        n, h, w, c = x.shape
        kh, kw = self.pool_size
        return em.reshape(x, (n, h // kh, kh, w // kw, kw, c))


class MaxPool2D(_Pool2D):
    """Maximum over each window (default 2x2, stride = pool size, VALID).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.MaxPool2D(padding="same")(em.ones((1, 5, 5, 2))).shape
        (1, 3, 3, 2)
    """

    def call(self, inputs: Any) -> Any:
        if self._tiled(inputs):
            return em.reduce_max(self._blocks(inputs), axis=(2, 4))
        return em.nn_ops.max_pool2d(inputs, self.pool_size, self.strides, self.padding)


class AvgPool2D(_Pool2D):
    """Mean over each window (SAME padding averages the real elements only)."""

    def call(self, inputs: Any) -> Any:
        if self._tiled(inputs):
            return em.reduce_mean(self._blocks(inputs), axis=(2, 4))
        return em.nn_ops.avg_pool2d(inputs, self.pool_size, self.strides, self.padding)


class GlobalAveragePooling2D(Layer):
    """Mean over the spatial axes: (N, H, W, C) -> (N, C) (or keepdims)."""

    def __init__(self, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs: Any) -> Any:
        return em.reduce_mean(inputs, axis=(1, 2), keepdims=self.keepdims)


class GlobalMaxPooling2D(GlobalAveragePooling2D):
    """Maximum over the spatial axes."""

    def call(self, inputs: Any) -> Any:
        return em.reduce_max(inputs, axis=(1, 2), keepdims=self.keepdims)


class GlobalAveragePooling1D(Layer):
    """Mean over the steps axis: (N, W, C) -> (N, C)."""

    def call(self, inputs: Any) -> Any:
        return em.reduce_mean(inputs, axis=1)


MaxPooling2D = MaxPool2D
AveragePooling2D = AvgPool2D
AvgPooling2D = AvgPool2D

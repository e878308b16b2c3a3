"""Convolutions, channels last: Conv1D (NWC), Conv2D and Conv2DTranspose (NHWC)."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .. import activations
from .base import InputSpec, Layer


def _tuple(v: Any, n: int, what: str) -> tuple[int, ...]:
    t = (int(v),) * n if isinstance(v, int) else tuple(int(i) for i in v)
    if len(t) != n or min(t) < 1:
        raise ValueError(f"{what} must be an int or {n} positive ints, got {v!r}")
    return t


def _padding(p: str) -> str:
    up = str(p).upper()
    if up not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'same' or 'valid', got {p!r}")
    return up


class _Conv(Layer):
    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 dilation_rate: Any = 1, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__}: only data_format='channels_last' is "
                             f"supported, got {data_format!r}")
        r = self.rank
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, r, "kernel_size")
        self.strides = _tuple(strides, r, "strides")
        self.padding = _padding(padding)
        self.dilation_rate = _tuple(dilation_rate, r, "dilation_rate")
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def _kernel_shape(self, channels: int) -> tuple[int, ...]:
        return self.kernel_size + (channels, self.filters)

    def build(self, input_shape: Any) -> None:
        if len(input_shape) != self.rank + 2:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects inputs of "
                             f"rank {self.rank + 2} (channels last), got shape "
                             f"{tuple(input_shape)}")
        c = input_shape[-1]
        self.kernel = self.add_weight("kernel", self._kernel_shape(c),
                                      initializer=self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), initializer=self.bias_initializer)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={-1: c})

    def _finish(self, y: Any) -> Any:
        if self.use_bias:
            y = em.add(y, self.bias.value())
        return self.activation(y)


class Conv2D(_Conv):
    """2-D convolution of NHWC inputs; kernel (KH, KW, C_in, filters).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.Conv2D(4, 3, padding="same")(em.ones((2, 8, 8, 3))).shape
        (2, 8, 8, 4)
    """

    def call(self, inputs: Any) -> Any:
        y = em.nn_ops.conv2d(inputs, self.kernel.value(), strides=self.strides,
                             padding=self.padding, dilations=self.dilation_rate)
        return self._finish(y)


class Conv1D(_Conv):
    """1-D convolution of NWC inputs; kernel (K, C_in, filters)."""

    rank = 1

    def call(self, inputs: Any) -> Any:
        y = em.nn_ops.conv1d(inputs, self.kernel.value(), stride=self.strides[0],
                             padding=self.padding, dilations=self.dilation_rate[0])
        return self._finish(y)


class Conv2DTranspose(_Conv):
    """Transposed 2-D convolution; kernel (KH, KW, filters, C_in) as TensorFlow."""

    def _kernel_shape(self, channels: int) -> tuple[int, ...]:
        return self.kernel_size + (self.filters, channels)

    def _out_size(self, n: int, k: int, s: int, d: int) -> int:
        if self.padding == "SAME":
            return n * s
        return (n - 1) * s + (k - 1) * d + 1

    def call(self, inputs: Any) -> Any:
        n, h, w, _ = inputs.shape
        oh, ow = (self._out_size(a, k, s, d) for a, k, s, d in
                  zip((h, w), self.kernel_size, self.strides, self.dilation_rate))
        y = em.nn_ops.conv2d_transpose(inputs, self.kernel.value(), (n, oh, ow, self.filters),
                                       strides=self.strides, padding=self.padding,
                                       dilations=self.dilation_rate)
        return self._finish(y)

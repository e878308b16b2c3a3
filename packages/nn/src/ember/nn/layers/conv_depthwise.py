"""Depthwise and depthwise-separable convolutions, 2-D and 1-D, as Keras 3's.

``DepthwiseConv2D`` convolves each input channel with its own ``depth_multiplier`` filters
and never mixes channels; ``SeparableConv2D`` follows that with a 1x1 convolution that
mixes them (Xception's and MobileNet's block): about ``k * k`` times fewer weights and
multiplies than a Conv2D of the same output. Weights, their names, shapes and order are
Keras 3's (``kernel`` (KH, KW, C_in, multiplier) and ``bias`` (C_in * multiplier) for the
depthwise layer; ``depthwise_kernel``, ``pointwise_kernel`` (1, 1, C_in * multiplier,
filters) and ``bias`` (filters) for the separable one; the 1-D layers' kernels drop the
height axis), so weights files exchange with Keras's by position as every layer's do.
The 1-D layers compute the 2-D convolution on a height of 1.
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from .. import activations, constraints, regularizers
from .base import InputSpec, Layer
from .conv import _padding, _tuple, check_data_format, convolve_then_activate


def _positive(who: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{who}: {name} must be a positive int, got {value!r}")
    return value


class _DepthwiseBase(Layer):
    """What the layers share: the window arguments, the depthwise kernel, the bias, the
    activation and channels first (``rank`` 2, or 1 for the 1-D layers)."""

    rank = 2

    def __init__(self, kernel_size: Any, strides: Any, padding: str, depth_multiplier: int,
                 data_format: str | None, dilation_rate: Any, activation: Any,
                 use_bias: bool, depthwise_initializer: Any, bias_initializer: Any,
                 depthwise_regularizer: Any, bias_regularizer: Any,
                 depthwise_constraint: Any, bias_constraint: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        who = type(self).__name__
        r = self.rank
        self.kernel_size = _tuple(kernel_size, r, f"{who}: kernel_size")
        self.strides = _tuple(strides, r, f"{who}: strides")
        self.padding = _padding(padding)
        self.depth_multiplier = _positive(who, "depth_multiplier", depth_multiplier)
        self.data_format = check_data_format(data_format, who)
        self.dilation_rate = _tuple(dilation_rate, r, f"{who}: dilation_rate")
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.depthwise_initializer = depthwise_initializer
        self.bias_initializer = bias_initializer
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def _channels(self, input_shape: Any) -> int:
        ndim = self.rank + 2
        if len(input_shape) != ndim:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects inputs of "
                             f"rank {ndim} ({self.data_format.replace('_', ' ')}), got shape "
                             f"{tuple(input_shape)}")
        axis = 1 if self.data_format == "channels_first" else -1
        c = int(input_shape[axis])
        self.input_spec = InputSpec(ndim=ndim, axes={axis: c})
        return c

    def _depthwise_weight(self, name: str, channels: int) -> Any:
        return self.add_weight(name, self.kernel_size + (channels, self.depth_multiplier),
                               initializer=self.depthwise_initializer,
                               regularizer=self.depthwise_regularizer,
                               constraint=self.depthwise_constraint)

    def _bias_weight(self, size: int) -> None:
        if self.use_bias:
            self.bias = self.add_weight("bias", (size,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        else:
            self.bias = None  # (Keras's: no bias, but the attribute)

    def call(self, inputs: Any) -> Any:
        return convolve_then_activate(self, inputs)

    def _depthwise(self, x: Any, kernel: Any) -> Any:
        if self.rank == 1:  # (N, W, C) as (N, 1, W, C); kernel (K, C, M) as (1, K, C, M)
            y = em.nn_ops.depthwise_conv2d(em.expand_dims(x, 1),
                                           em.expand_dims(kernel.value(), 0),
                                           (1, self.strides[0]), self.padding,
                                           dilations=(1, self.dilation_rate[0]))
            return em.squeeze(y, 1)
        return em.nn_ops.depthwise_conv2d(x, kernel.value(), self.strides, self.padding,
                                          dilations=self.dilation_rate)

    def _convolve(self, x: Any) -> Any:
        """The convolution of channels-last ``x`` (no bias, no activation)."""
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding.lower(),
                "depth_multiplier": self.depth_multiplier, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "use_bias": self.use_bias,
                "depthwise_initializer": self.depthwise_initializer,
                "bias_initializer": self.bias_initializer}


class _Depthwise(_DepthwiseBase):
    """The depthwise layers' weights and computation: ``kernel``, then ``bias``."""

    def build(self, input_shape: Any) -> None:
        c = self._channels(input_shape)
        self.kernel = self._depthwise_weight("kernel", c)
        self._bias_weight(c * self.depth_multiplier)

    def _convolve(self, x: Any) -> Any:
        return self._depthwise(x, self.kernel)


class _Separable(_DepthwiseBase):
    """The separable layers' weights and computation: ``depthwise_kernel``,
    ``pointwise_kernel``, then ``bias``."""

    def _pointwise_args(self, filters: Any, initializer: Any, regularizer: Any,
                        constraint: Any) -> None:
        self.filters = _positive(type(self).__name__, "filters", filters)
        self.pointwise_initializer = initializer
        self.pointwise_regularizer = regularizers.get(regularizer)
        self.pointwise_constraint = constraints.get(constraint)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "filters": self.filters,
                "pointwise_initializer": self.pointwise_initializer}

    def build(self, input_shape: Any) -> None:
        c = self._channels(input_shape)
        self.depthwise_kernel = self._depthwise_weight("depthwise_kernel", c)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", (1,) * self.rank + (c * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self._bias_weight(self.filters)

    def _convolve(self, x: Any) -> Any:
        y = self._depthwise(x, self.depthwise_kernel)
        if self.rank == 1:
            return em.nn_ops.conv1d(y, self.pointwise_kernel.value(), 1, "VALID")
        return em.nn_ops.conv2d(y, self.pointwise_kernel.value(), 1, "VALID")


class DepthwiseConv2D(_Depthwise):
    """Depthwise 2-D convolution of NHWC (or NCHW) inputs: each input channel convolved
    with its own ``depth_multiplier`` filters, into C_in * depth_multiplier channels (the
    first step of a separable convolution; channels are never mixed).

    Args:
        kernel_size, strides, dilation_rate: an int or one per spatial axis (strides and
            dilations above 1 may be combined).
        padding: ``"valid"`` or ``"same"`` (TensorFlow's SAME: extra padding at the end).
        depth_multiplier: filters per input channel.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        activation: a name or callable applied to the output (None: linear).
        use_bias: add a bias per output channel.
        depthwise_initializer, bias_initializer: initializers of ``kernel`` (KH, KW, C_in,
            depth_multiplier) and ``bias`` (C_in * depth_multiplier).
        depthwise_regularizer, bias_regularizer: penalties that join ``losses``.
        depthwise_constraint, bias_constraint: projections optimizers apply after each
            update.
        **kwargs: as :class:`Layer` (``activity_regularizer`` included).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> layer = nn.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same")
        >>> layer(em.ones((2, 8, 8, 3))).shape, layer.kernel.shape
        ((2, 8, 8, 6), (3, 3, 3, 2))
    """

    def __init__(self, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 depth_multiplier: int = 1, data_format: str | None = None,
                 dilation_rate: Any = (1, 1), activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", depthwise_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 depthwise_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, activation, use_bias, depthwise_initializer,
                         bias_initializer, depthwise_regularizer, bias_regularizer,
                         depthwise_constraint, bias_constraint,
                         activity_regularizer=activity_regularizer, **kwargs)


class SeparableConv2D(_Separable):
    """Depthwise-separable 2-D convolution of NHWC (or NCHW) inputs: a
    :class:`DepthwiseConv2D` (without its bias) then a 1x1 convolution to ``filters``
    channels, then the bias and the activation.

    Args:
        filters: the number of output channels.
        kernel_size, strides, padding, data_format, dilation_rate: as
            :class:`DepthwiseConv2D`'s.
        depth_multiplier, activation, use_bias: as :class:`DepthwiseConv2D`'s.
        depthwise_initializer, pointwise_initializer, bias_initializer: initializers of
            ``depthwise_kernel`` (KH, KW, C_in, depth_multiplier), ``pointwise_kernel``
            (1, 1, C_in * depth_multiplier, filters) and ``bias`` (filters).
        depthwise_regularizer, pointwise_regularizer, bias_regularizer: penalties.
        depthwise_constraint, pointwise_constraint, bias_constraint: projections.
        **kwargs: as :class:`Layer` (``activity_regularizer`` included).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> layer = nn.layers.SeparableConv2D(4, 3, padding="same")
        >>> layer(em.ones((2, 8, 8, 3))).shape, layer.pointwise_kernel.shape
        ((2, 8, 8, 4), (1, 1, 3, 4))
    """

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1),
                 padding: str = "valid", data_format: str | None = None,
                 dilation_rate: Any = (1, 1), depth_multiplier: int = 1,
                 activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform",
                 pointwise_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", depthwise_regularizer: Any = None,
                 pointwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None,
                 pointwise_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, activation, use_bias, depthwise_initializer,
                         bias_initializer, depthwise_regularizer, bias_regularizer,
                         depthwise_constraint, bias_constraint,
                         activity_regularizer=activity_regularizer, **kwargs)
        self._pointwise_args(filters, pointwise_initializer, pointwise_regularizer,
                             pointwise_constraint)


class DepthwiseConv1D(_Depthwise):
    """Depthwise 1-D convolution of NWC (or NCW) inputs: each input channel convolved with
    its own ``depth_multiplier`` filters, into C_in * depth_multiplier channels; kernel
    (K, C_in, depth_multiplier), bias (C_in * depth_multiplier).

    Keras 3's ``DepthwiseConv1D``: the arguments of :class:`DepthwiseConv2D`, one int each
    (``"valid"`` or ``"same"`` padding).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> layer = nn.layers.DepthwiseConv1D(3, depth_multiplier=2)
        >>> layer(em.ones((2, 8, 3))).shape, layer.kernel.shape
        ((2, 6, 6), (3, 3, 2))
    """

    rank = 1

    def __init__(self, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 depth_multiplier: int = 1, data_format: str | None = None,
                 dilation_rate: Any = 1, activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", depthwise_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 depthwise_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, activation, use_bias, depthwise_initializer,
                         bias_initializer, depthwise_regularizer, bias_regularizer,
                         depthwise_constraint, bias_constraint,
                         activity_regularizer=activity_regularizer, **kwargs)


class SeparableConv1D(_Separable):
    """Depthwise-separable 1-D convolution of NWC (or NCW) inputs: a
    :class:`DepthwiseConv1D` (without its bias), then a pointwise convolution to
    ``filters`` channels, then the bias and the activation. Weights: ``depthwise_kernel``
    (K, C_in, depth_multiplier), ``pointwise_kernel`` (1, C_in * depth_multiplier,
    filters), ``bias`` (filters), as Keras 3's.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> layer = nn.layers.SeparableConv1D(4, 3, padding="same")
        >>> layer(em.ones((2, 8, 3))).shape, layer.pointwise_kernel.shape
        ((2, 8, 4), (1, 3, 4))
    """

    rank = 1

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: str | None = None,
                 dilation_rate: Any = 1, depth_multiplier: int = 1,
                 activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform",
                 pointwise_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", depthwise_regularizer: Any = None,
                 pointwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None,
                 pointwise_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, activation, use_bias, depthwise_initializer,
                         bias_initializer, depthwise_regularizer, bias_regularizer,
                         depthwise_constraint, bias_constraint,
                         activity_regularizer=activity_regularizer, **kwargs)
        self._pointwise_args(filters, pointwise_initializer, pointwise_regularizer,
                             pointwise_constraint)

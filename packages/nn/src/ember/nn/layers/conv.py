"""Convolutions: Conv1D and Conv1DTranspose (NWC), Conv2D and Conv2DTranspose (NHWC),
Conv3D and Conv3DTranspose (NDHWC);
channels first too.

``data_format="channels_first"`` (NCW / NCHW inputs, as PyTorch) transposes to channels
last, convolves, and transposes back; the kernel layout is the same for both formats.
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from .. import activations, constraints, regularizers
from .base import InputSpec, Layer


def _tuple(v: Any, n: int, what: str) -> tuple[int, ...]:
    t = (int(v),) * n if isinstance(v, int) else tuple(int(i) for i in v)
    if len(t) != n or min(t) < 1:
        raise ValueError(f"{what} must be an int or {n} positive ints, got {v!r}")
    return t


def check_data_format(value: Any, who: str) -> str:
    """``"channels_last"`` (for None too) or ``"channels_first"``; anything else is an error."""
    if value is None:
        return "channels_last"
    v = str(value).lower()
    if v not in ("channels_last", "channels_first"):
        raise ValueError(f"{who}: data_format must be 'channels_last' or 'channels_first', "
                         f"got {value!r}")
    return v


def to_channels_last(x: Any) -> Any:
    """(N, C, *spatial) -> (N, *spatial, C)."""
    r = len(x.shape)
    return em.transpose(x, (0,) + tuple(range(2, r)) + (1,))


def to_channels_first(x: Any) -> Any:
    """(N, *spatial, C) -> (N, C, *spatial)."""
    r = len(x.shape)
    return em.transpose(x, (0, r - 1) + tuple(range(1, r - 1)))


def convolve_then_activate(layer: Any, inputs: Any) -> Any:
    """A convolution layer's call: ``layer._convolve`` in channels-last, then the bias and
    the activation (relu and linear: one op with the bias, one back)."""
    first = layer.data_format == "channels_first"
    y = layer._convolve(to_channels_last(inputs) if first else inputs)
    if layer.use_bias:
        y = activations.bias_then(layer.activation, y, layer.bias.value())
    else:
        y = layer.activation(y)
    return to_channels_first(y) if first else y


def _padding(p: str) -> str:
    """Keras's spelling, lower case (``layer.padding == "same"``, as Keras stores it); the
    ops take either."""
    low = str(p).lower()
    if low not in ("same", "valid"):
        raise ValueError(f"padding must be 'same' or 'valid', got {p!r}")
    return low


class _Conv(Layer):
    rank = 2

    # Keras 3's positional order: Conv2D(32, 3, 1, "same", "channels_last") means what it
    # says there (ember's had dilation_rate fifth)
    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = 1, groups: int = 1,
                 activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        who = type(self).__name__
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"{who}: groups must be a positive int, got groups={groups!r}")
        if int(filters) % groups:
            raise ValueError(f"{who}: filters must be divisible by groups, got "
                             f"filters={filters}, groups={groups}")
        self.groups = int(groups)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.data_format = check_data_format(data_format, type(self).__name__)
        r = self.rank
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, r, "kernel_size")
        self.strides = _tuple(strides, r, "strides")
        causal = self.rank == 1 and str(padding).lower() == "causal"
        self.padding = "causal" if causal else _padding(padding)
        self.dilation_rate = _tuple(dilation_rate, r, "dilation_rate")
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def _kernel_shape(self, channels: int) -> tuple[int, ...]:
        return self.kernel_size + (channels // self.groups, self.filters)

    def build(self, input_shape: Any) -> None:
        if len(input_shape) != self.rank + 2:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects inputs of "
                             f"rank {self.rank + 2} ({self.data_format.replace('_', ' ')}), "
                             f"got shape {tuple(input_shape)}")
        axis = 1 if self.data_format == "channels_first" else -1
        c = input_shape[axis]
        if c % self.groups:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}): the input's "
                             f"{c} channels (shape {tuple(input_shape)}) must be divisible "
                             f"by groups={self.groups}")
        self.kernel = self.add_weight("kernel", self._kernel_shape(c),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        else:
            self.bias = None  # (Keras's: no bias, but the attribute)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={axis: c})

    def call(self, inputs: Any) -> Any:
        op = type(self).convolution_op
        if op is _Conv.convolution_op or op is _NO_CONVOLUTION_OP:
            return convolve_then_activate(self, inputs)
        # a subclass's convolution_op replaces the convolution (Keras's Conv.call)
        y = self.convolution_op(inputs, self.kernel)
        if self.use_bias:
            shape = ((1,) * (self.rank + 1) + (self.filters,)
                     if self.data_format == "channels_last"
                     else (1, self.filters) + (1,) * self.rank)
            y = em.add(y, em.reshape(self.bias.value(), shape))
        return self.activation(y)

    def convolution_op(self, inputs: Any, kernel: Any) -> Any:
        """Keras's seam: the convolution of ``inputs`` (in the layer's ``data_format``)
        with ``kernel`` (a variable or tensor of the kernel's shape), without the bias and
        the activation. A subclass that overrides it changes the layer's convolution (the
        layer adds the bias and applies the activation to what it returns), as keras-io's
        weight-standardized convolution does; ``super().convolution_op(inputs, k)``
        convolves with another kernel."""
        first = self.data_format == "channels_first"
        y = self._convolve(to_channels_last(inputs) if first else inputs, kernel)
        return to_channels_first(y) if first else y

    def _convolve(self, x: Any, kernel: Any = None) -> Any:
        """The convolution of channels-last ``x`` with ``kernel`` (None: the layer's), no
        bias, no activation."""
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding.lower(), "dilation_rate": self.dilation_rate,
                "groups": self.groups,
                "data_format": self.data_format, "use_bias": self.use_bias,
                "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer}


class Conv2D(_Conv):
    """2-D convolution of NHWC (or NCHW) inputs; kernel (KH, KW, C_in / groups, filters).

    Args:
        filters: the number of output channels.
        kernel_size, strides, dilation_rate: an int or one per spatial axis.
        padding: ``"valid"`` or ``"same"`` (TensorFlow's SAME: extra padding at the end).
        groups: split the input channels into this many groups, each convolved with its
            own ``filters // groups`` filters (outputs joined along the channels); the
            input channels and ``filters`` must both be divisible by it (Keras's).
        activation: a name or callable applied to the output (None: linear).
        use_bias: add a bias per filter.
        kernel_initializer, bias_initializer: initializers.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        kernel_regularizer, bias_regularizer: penalties that join ``losses``.
        kernel_constraint, bias_constraint: projections optimizers apply after each update.
        **kwargs: as :class:`Layer`.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.Conv2D(4, 3, padding="same")(em.ones((2, 8, 8, 3))).shape
        (2, 8, 8, 4)
        >>> nn.layers.Conv2D(4, 3, data_format="channels_first")(em.ones((2, 3, 8, 8))).shape
        (2, 4, 6, 6)
        >>> grouped = nn.layers.Conv2D(6, 3, groups=2)
        >>> grouped(em.ones((2, 8, 8, 4))).shape, grouped.kernel.shape
        ((2, 6, 6, 6), (3, 3, 2, 6))
    """

    def _convolve(self, x: Any, kernel: Any = None) -> Any:
        return em.nn_ops.conv2d(x, self.kernel.value() if kernel is None else kernel,
                                strides=self.strides, padding=self.padding,
                                dilations=self.dilation_rate)


class Conv1D(_Conv):
    """1-D convolution of NWC (or NCW) inputs; kernel (K, C_in / groups, filters).

    Takes the arguments of :class:`Conv2D` (one int each), and also
    ``padding="causal"``: zeros before the sequence only, so step ``t`` of the output
    sees inputs up to ``t`` (as Keras; WaveNet-style models).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.Conv1D(2, 3, padding="causal", dilation_rate=2)(em.ones((1, 7, 4))).shape
        (1, 7, 2)
    """

    rank = 1

    def _convolve(self, x: Any, kernel: Any = None) -> Any:
        padding, d = self.padding, self.dilation_rate[0]
        if padding == "causal":
            x = em.pad(x, [[0, 0], [(self.kernel_size[0] - 1) * d, 0], [0, 0]])
            padding = "valid"
        return em.nn_ops.conv1d(x, self.kernel.value() if kernel is None else kernel,
                                stride=self.strides[0], padding=padding, dilations=d)


def _no_convolution_op(self: Any) -> Any:
    raise AttributeError(f"{type(self).__name__} has no convolution_op (Keras's transposed "
                         f"convolutions have none)")


_NO_CONVOLUTION_OP = property(_no_convolution_op)


class _ConvTranspose(_Conv):
    """What Conv1DTranspose and Conv2DTranspose share: Keras 3's arguments, in its order,
    and its output sizes (see :class:`Conv2DTranspose`). The 1-D layer is the 2-D
    computation on a height of 1."""

    convolution_op = _NO_CONVOLUTION_OP  # type: ignore[assignment]

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", output_padding: Any = None,
                 data_format: str | None = None, dilation_rate: Any = 1,
                 activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any) -> None:
        who = type(self).__name__
        if "groups" in kwargs:  # Keras's transposed convolutions have no such argument
            raise TypeError(f"{who}: unexpected keyword argument 'groups' (Keras's "
                            f"transposed convolutions are not grouped)")
        if str(padding).lower() == "causal":
            raise ValueError(f"{who}: padding must be 'same' or 'valid', got {padding!r}")
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         dilation_rate=dilation_rate, activation=activation,
                         use_bias=use_bias, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, data_format=data_format,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         activity_regularizer=activity_regularizer, **kwargs)
        r = self.rank
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:  # as Keras refuses it
            raise ValueError(f"{who}: strides > 1 together with dilation_rate > 1 is not "
                             f"supported (Keras's transposed convolutions refuse it); got "
                             f"strides={self.strides}, dilation_rate={self.dilation_rate}")
        self.output_padding: tuple[int, ...] | None = None
        if output_padding is not None:
            pads = (output_padding,) * r if isinstance(output_padding, int) else \
                tuple(output_padding) if isinstance(output_padding, (list, tuple)) else ()
            if len(pads) != r or not all(isinstance(p, int) and not isinstance(p, bool)
                                         and 0 <= p < s for p, s in zip(pads, self.strides)):
                raise ValueError(f"{who}: output_padding={output_padding!r} must "
                                 f"be an int or {r} ints, each >= 0 and below its stride "
                                 f"(strides={self.strides})")
            self.output_padding = pads

    def get_config(self) -> dict[str, Any]:
        config = {**super().get_config(), "output_padding": self.output_padding}
        del config["groups"]  # (Keras's transposed convolutions have none)
        return config

    def _kernel_shape(self, channels: int) -> tuple[int, ...]:
        return self.kernel_size + (self.filters, channels)

    def _out_size(self, n: int, k: int, s: int, d: int, p: int | None) -> int:
        k = (k - 1) * d + 1
        if self.padding == "same":
            return n * s if p is None else (n - 1) * s + k % 2 + p
        return (n - 1) * s + k + (max(k, s) - k if p is None else p)

    def _transpose2d(self, x: Any, kernel: Any, strides: Any, dilations: Any,
                     pads: Any) -> Any:
        n, h, w, _ = x.shape
        oh, ow = (self._out_size(a, k, s, d, p) for a, k, s, d, p in
                  zip((h, w), kernel.shape[:2], strides, dilations, pads))
        return em.nn_ops.conv2d_transpose(x, kernel, (n, oh, ow, self.filters),
                                          strides=strides, padding=self.padding,
                                          dilations=dilations)


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-D convolution of NHWC (or NCHW) inputs; kernel (KH, KW, filters, C_in).

    The output's spatial size is Keras 3's: with ``output_padding=None``, ``n * stride``
    for ``"same"`` and ``(n - 1) * stride + max(k, stride)`` for ``"valid"`` (``k`` the
    dilated kernel size); with ``output_padding=p`` (an int or one per axis, each below
    its stride), ``(n - 1) * stride + k + p`` for ``"valid"`` and
    ``(n - 1) * stride + k % 2 + p`` for ``"same"``: the extra rows and columns at the end
    of the output that a strided convolution of it would not see.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> up = nn.layers.Conv2DTranspose(2, 3, strides=2, padding="same", output_padding=1)
        >>> up(em.ones((1, 4, 4, 3))).shape
        (1, 8, 8, 2)
    """

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1),
                 padding: str = "valid", output_padding: Any = None,
                 data_format: str | None = None, dilation_rate: Any = (1, 1),
                 activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any) -> None:
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format,
                         dilation_rate, activation, use_bias, kernel_initializer,
                         bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, **kwargs)

    def _convolve(self, x: Any, kernel: Any = None) -> Any:
        return self._transpose2d(x, self.kernel.value() if kernel is None else kernel,
                                 self.strides, self.dilation_rate,
                                 self.output_padding or (None, None))


class Conv1DTranspose(_ConvTranspose):
    """Transposed 1-D convolution of NWC (or NCW) inputs; kernel (K, filters, C_in).

    Keras 3's ``Conv1DTranspose``: the arguments and output sizes of
    :class:`Conv2DTranspose`, one int each (``"valid"`` or ``"same"`` padding).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.Conv1DTranspose(2, 3, strides=2, padding="same")(em.ones((1, 5, 4))).shape
        (1, 10, 2)
    """

    rank = 1

    def _convolve(self, x: Any, kernel: Any = None) -> Any:
        kernel = em.expand_dims(self.kernel.value() if kernel is None else kernel, 0)
        pad = (self.output_padding or (None,))[0]
        y = self._transpose2d(em.expand_dims(x, 1), kernel, (1, self.strides[0]),
                              (1, self.dilation_rate[0]), (None if pad is None else 0, pad))
        return em.squeeze(y, 1)


class Conv3D(_Conv):
    """3-D convolution of NDHWC (or NCDHW) inputs; kernel (KD, KH, KW, C_in / groups,
    filters).

    Keras 3's ``Conv3D``, its arguments in its order: ``kernel_size``, ``strides`` and
    ``dilation_rate`` an int or one per spatial axis (depth, height, width), ``padding``
    ``"valid"`` or ``"same"``; the others (``groups`` too) as :class:`Conv2D`.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.Conv3D(4, 3, padding="same")(em.ones((2, 5, 8, 8, 3))).shape
        (2, 5, 8, 8, 4)
        >>> nn.layers.Conv3D(2, (1, 3, 3), strides=(1, 2, 2),
        ...                  data_format="channels_first")(em.ones((1, 3, 4, 7, 7))).shape
        (1, 2, 4, 3, 3)
    """

    rank = 3

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
                 padding: str = "valid", data_format: str | None = None,
                 dilation_rate: Any = (1, 1, 1), groups: int = 1, activation: Any = None,
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         dilation_rate=dilation_rate, activation=activation,
                         use_bias=use_bias, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, data_format=data_format,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         groups=groups, activity_regularizer=activity_regularizer, **kwargs)

    def _convolve(self, x: Any, kernel: Any = None) -> Any:
        return em.nn_ops.conv3d(x, self.kernel.value() if kernel is None else kernel,
                                strides=self.strides, padding=self.padding,
                                dilations=self.dilation_rate)


class Conv3DTranspose(_ConvTranspose):
    """Transposed 3-D convolution of NDHWC (or NCDHW) inputs; kernel (KD, KH, KW,
    filters, C_in).

    Keras 3's ``Conv3DTranspose``, its arguments in its order (``data_format`` before
    ``output_padding``, unlike the 2-D layer); the output sizes are
    :class:`Conv2DTranspose`'s, along each of depth, height and width.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> up = nn.layers.Conv3DTranspose(2, 3, strides=2, padding="same")
        >>> up(em.ones((1, 2, 4, 4, 3))).shape
        (1, 4, 8, 8, 2)
    """

    rank = 3

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
                 padding: str = "valid", data_format: str | None = None,
                 output_padding: Any = None, dilation_rate: Any = (1, 1, 1),
                 activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any) -> None:
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format,
                         dilation_rate, activation, use_bias, kernel_initializer,
                         bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, **kwargs)

    def _convolve(self, x: Any, kernel: Any = None) -> Any:
        kernel = self.kernel.value() if kernel is None else kernel
        pads = self.output_padding or (None, None, None)
        n = x.shape[0]
        out = tuple(self._out_size(a, k, s, d, p) for a, k, s, d, p in
                    zip(x.shape[1:4], kernel.shape[:3], self.strides, self.dilation_rate, pads))
        return em.nn_ops.conv3d_transpose(x, kernel, (n, *out, self.filters),
                                          strides=self.strides, padding=self.padding,
                                          dilations=self.dilation_rate)

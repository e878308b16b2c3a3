"""Dense: ``activation(inputs @ kernel + bias)`` over the last axis."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .. import activations, constraints, regularizers
from .. import initializers as _init
from ._keras_args import only_default
from .base import InputSpec, Layer


class Dense(Layer):
    """A fully connected layer.

    Args:
        units: output size.
        activation: a name (``"relu"``) or callable; None is linear.
        use_bias: add a bias vector.
        kernel_initializer, bias_initializer: names or initializers
            (``"glorot_uniform"`` and ``"zeros"`` by default, as Keras).
        kernel_regularizer, bias_regularizer: penalties that join ``losses``
            (``activity_regularizer``, a Layer argument, penalises the output).
        kernel_constraint, bias_constraint: projections optimizers apply after each update.
        **kwargs: the ``Layer`` arguments (``name``, ``input_shape``, ...).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.Dense(3)(em.ones((2, 5))).shape
        (2, 3)
    """

    supports_masking = True  # a mask passes through (as Keras)

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None,
                 quantization_config: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        only_default("Dense", quantization_config=(
            quantization_config, None, "ember has no quantized layers"))
        self.units = int(units)
        if self.units <= 0:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _init.get(kernel_initializer)
        self.bias_initializer = _init.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def build(self, input_shape: Any) -> None:
        d = input_shape[-1]
        self.kernel = self.add_weight("kernel", (d, self.units),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        else:
            self.bias = None  # (Keras's: no bias, but the attribute)
        self.input_spec = InputSpec(min_ndim=2, axes={-1: d})

    def call(self, inputs: Any) -> Any:
        # the variables' values; a tensor assigned in their place is used as it is, as
        # Keras's Dense multiplies by whatever ``self.kernel`` holds (a hypernetwork's)
        kernel, bias = self.kernel, self.bias
        kernel = kernel.value() if isinstance(kernel, em.Variable) else kernel
        if bias is not None:
            bias = bias.value() if isinstance(bias, em.Variable) else bias
        fused = activations.fused_with_bias(self.activation) if self.use_bias else None
        if inputs.ndim == 2 and fused is not None:  # product, bias and activation: one op
            return em.nn_ops.dense(inputs, kernel, bias, fused)
        if fused is not None:  # (N, T, ..., d): the same op on the rows, as a matrix
            lead = tuple(inputs.shape[:-1])
            rows = em.reshape(inputs, (-1, inputs.shape[-1]))
            y = em.nn_ops.dense(rows, kernel, bias, fused)
            return em.reshape(y, (*lead, self.units))
        if inputs.ndim == 2:
            y = em.matmul(inputs, kernel)
        else:
            y = em.tensordot(inputs, kernel, [[inputs.ndim - 1], [0]])
        if self.use_bias:  # relu and linear: one op with the bias, one back
            return activations.bias_then(self.activation, y, bias)
        return self.activation(y)

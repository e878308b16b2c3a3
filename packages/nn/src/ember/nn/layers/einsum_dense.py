"""EinsumDense: a dense layer written as an Einstein summation (Keras 3's).

``equation`` names the axes of the input, the kernel and the output
(``"ab,bc->ac"`` is ``Dense``; ``"abc,cde->abde"`` projects the features of a sequence
into heads); ``"..."`` stands for leading (``"...b,bc->...c"``) or trailing axes that pass
through. ``output_shape`` gives the output's sizes without the batch axis (None where the
input's size is kept), and ``bias_axes`` the output axes the bias varies along. The
kernel's and bias's shapes, names and initial scaling (glorot's fans from the input and
output axes of the kernel) are Keras's.
"""

from __future__ import annotations

import re
from typing import Any

import ember.core as em

from .. import activations, constraints, regularizers
from .. import initializers as _init
from ._keras_args import only_default
from .base import InputSpec, Layer


def _split(equation: str) -> tuple[str, str, str, bool]:
    """(input, kernel, output) labels, and whether the ellipsis is on the left."""
    dots = re.sub(r"\.\.\.", "0", equation)
    for pattern, left in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False),
                          ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False)):
        m = re.fullmatch(pattern, dots)
        if m:
            return m.group(1), m.group(2), m.group(3), left
    raise ValueError(f"EinsumDense: invalid equation {equation!r}; equations must be of "
                     f"the form [X],[Y]->[Z], ...[X],[Y]->...[Z] or [X]...,[Y]->[Z]...")


def analyze(equation: str, bias_axes: str | None, input_shape: Any,
            output_shape: Any) -> tuple[list[Any], list[Any] | None, list[Any], list[int],
                                        list[int]]:
    """Keras's ``_analyze_einsum_string``: the kernel's shape, the bias's (or None), the
    full output shape, and the kernel's input and output axes (for the fans)."""
    in_spec, w_spec, out_spec, left = _split(equation)
    input_shape = list(input_shape)
    elided = len(input_shape) - len(in_spec)
    full = [input_shape[0], *output_shape]
    if elided > 0 and left:
        for i in range(1, elided):
            full.insert(1, input_shape[i])
    elif elided > 0:
        full.extend(input_shape[len(input_shape) - elided:])
    if left:
        in_map = {d: i + elided - len(input_shape) for i, d in enumerate(in_spec)}
        out_map = {d: i + elided for i, d in enumerate(out_spec)}
    else:
        in_map = {d: i for i, d in enumerate(in_spec)}
        out_map = {d: i for i, d in enumerate(out_spec)}
    for d in in_spec:
        if d in out_map and full[out_map[d]] is not None and \
                full[out_map[d]] != input_shape[in_map[d]]:
            raise ValueError(f"EinsumDense: input shape and output shape do not match at "
                             f"shared dimension {d!r}: input {input_shape[in_map[d]]}, "
                             f"output {full[out_map[d]]}")
    for d in out_spec:
        if d not in in_spec and d not in w_spec:
            raise ValueError(f"EinsumDense: dimension {d!r} of the output {out_spec!r} is in "
                             f"neither the input {in_spec!r} nor the weight {w_spec!r}")
    kernel: list[Any] = []
    in_axes: list[int] = []
    out_axes: list[int] = []
    for i, d in enumerate(w_spec):
        if d in out_map:
            kernel.append(full[out_map[d]])
            out_axes.append(i)
        elif d in in_map:
            kernel.append(input_shape[in_map[d]])
            in_axes.append(i)
        else:
            raise ValueError(f"EinsumDense: weight dimension {d!r} is in neither the input "
                             f"{in_spec!r} nor the output {out_spec!r}")
    bias: list[Any] | None = None
    if bias_axes is not None:
        offset = elided if left else 0
        sizes = {d: full[i + offset] for i, d in enumerate(out_spec)}
        for d in bias_axes:
            if d not in out_spec:
                raise ValueError(f"EinsumDense: bias dimension {d!r} is not in the output "
                                 f"{out_spec!r}")
        first = min(out_spec.find(d) for d in bias_axes)
        bias = [sizes[d] if d in bias_axes else 1 for d in out_spec[first:]]
        if not left:
            bias += [1] * max(elided, 0)
    return kernel, bias, full, in_axes, out_axes


def _with_axes(init: Any, in_axes: list[int], out_axes: list[int]) -> Any:
    """A variance-scaling initializer given the kernel's input and output axes (as
    Keras's EinsumDense does when they are not set), else ``init`` itself."""
    if isinstance(init, _init.VarianceScaling) and (init.input_axes is None or
                                                    init.output_axes is None):
        config = {**init.get_config(), "input_axes": in_axes, "output_axes": out_axes}
        return type(init).from_config(config)
    return init


class EinsumDense(Layer):
    """A dense layer of any rank, as an Einstein summation (Keras 3's ``EinsumDense``):
    ``activation(einsum(equation, inputs, kernel) + bias)``.

    Args:
        equation: ``"<input>,<kernel>-><output>"`` axis labels (``"..."`` allowed at the
            start of the input and output, or at their end).
        output_shape: the output's sizes without the batch axis (an int for one axis;
            None where the input's size carries over).
        activation: a name or callable (None: linear).
        bias_axes: the output labels the bias varies along (None: no bias).
        kernel_initializer, bias_initializer: initializers.
        kernel_regularizer, bias_regularizer: penalties that join ``losses``.
        kernel_constraint, bias_constraint: projections optimizers apply after each update.
        lora_rank, lora_alpha, gptq_unpacked_column_size, quantization_config: Keras 3's
            LoRA and quantization; ember has neither, so only None is taken.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> layer = nn.layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 4),
        ...                               bias_axes="de")
        >>> layer(em.ones((3, 5, 6))).shape, layer.kernel.shape, layer.bias.shape
        ((3, 5, 2, 4), (6, 2, 4), (2, 4))
    """

    def __init__(self, equation: str, output_shape: Any, activation: Any = None,
                 bias_axes: str | None = None, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, lora_rank: Any = None, lora_alpha: Any = None,
                 gptq_unpacked_column_size: Any = None, quantization_config: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        only_default("EinsumDense",
                     lora_rank=(lora_rank, None, "ember has no LoRA"),
                     lora_alpha=(lora_alpha, None, "it belongs to lora_rank"),
                     gptq_unpacked_column_size=(gptq_unpacked_column_size, None,
                                                "ember has no GPTQ quantization"),
                     quantization_config=(quantization_config, None,
                                          "ember has no quantized layers"))
        if not isinstance(equation, str):
            raise ValueError(f"EinsumDense: equation must be a string, got {equation!r}")
        _split(equation)
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else \
            tuple(output_shape)
        if bias_axes is not None and not isinstance(bias_axes, str):
            raise ValueError(f"EinsumDense: bias_axes must be a string of output labels or "
                             f"None, got {bias_axes!r}")
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = _init.get(kernel_initializer)
        self.bias_initializer = _init.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def build(self, input_shape: Any) -> None:
        kernel, bias, _, in_axes, out_axes = analyze(
            self.equation, self.bias_axes, input_shape, self.partial_output_shape)
        if any(s is None for s in kernel) or (bias is not None and None in bias):
            raise ValueError(f"layer {self.name!r} (EinsumDense): the kernel's shape "
                             f"{kernel} or the bias's {bias} has an unknown size for inputs "
                             f"{tuple(input_shape)}")
        self.kernel = self.add_weight(
            "kernel", tuple(kernel), initializer=_with_axes(self.kernel_initializer,
                                                            in_axes, out_axes),
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if bias is not None:
            self.bias = self.add_weight("bias", tuple(bias), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        else:
            self.bias = None  # (Keras's: no bias, but the attribute)
        self.input_spec = InputSpec(ndim=len(input_shape))

    def call(self, inputs: Any) -> Any:
        y = em.einsum(self.equation, inputs, self.kernel.value())
        if self.bias_axes is not None:
            y = em.add(y, self.bias.value())
        return self.activation(y)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "output_shape": list(self.partial_output_shape)}

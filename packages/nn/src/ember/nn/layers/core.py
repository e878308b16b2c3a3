"""Shape and element-wise layers: Flatten, Reshape, Permute, RepeatVector, Activation,
LeakyReLU, ReLU, ELU, PReLU, Softmax, Dropout, Lambda, Identity, ActivityRegularization."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from .. import activations, constraints, initializers, regularizers
from .base import InputSpec, Layer
from .conv import check_data_format


class Flatten(Layer):
    """Collapse every axis but the batch axis: (N, ...) -> (N, prod(...)).

    Args:
        data_format: ``"channels_last"`` (default) or ``"channels_first"``: a channels-first
            input is flattened in channels-last order (channels moved last first), as
            Keras, so a Dense after it sees the same features in either layout.
        **kwargs: as :class:`Layer`.
    """

    def __init__(self, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = check_data_format(data_format, "Flatten")

    def call(self, inputs: Any) -> Any:
        if self.data_format == "channels_first" and inputs.ndim > 2:
            inputs = em.transpose(inputs, (0, *range(2, inputs.ndim), 1))
        return em.reshape(inputs, (inputs.shape[0], int(np.prod(inputs.shape[1:]))))


class Reshape(Layer):
    """Reshape each example to ``target_shape`` (without the batch axis; one -1 allowed)."""

    def __init__(self, target_shape: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(s) for s in target_shape)

    def call(self, inputs: Any) -> Any:
        n = int(np.prod(inputs.shape[1:]))
        known = int(np.prod([s for s in self.target_shape if s != -1]))
        ok = n == known if -1 not in self.target_shape else known and n % known == 0
        if not ok:
            raise ValueError(f"layer {self.name!r} (Reshape): cannot reshape examples of shape "
                             f"{tuple(inputs.shape[1:])} ({n} values) to {self.target_shape}")
        return em.reshape(inputs, (inputs.shape[0],) + self.target_shape)


class Permute(Layer):
    """Permute the non-batch axes; ``dims`` counts from 1 (as Keras)."""

    def __init__(self, dims: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)

    def call(self, inputs: Any) -> Any:
        return em.transpose(inputs, (0,) + self.dims)


class RepeatVector(Layer):
    """Repeat each example ``n`` times along a new time axis: (N, F) -> (N, n, F).

    Args:
        n: how many times (steps), a positive int.
        **kwargs: the base ``Layer`` arguments.

    Raises:
        TypeError: ``n`` is not an int.
        ValueError: ``n`` is less than 1, or (at the call) the input is not of rank 2.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.RepeatVector(3)(np.ones((2, 4), np.float32)).shape
        (2, 3, 4)
    """

    def __init__(self, n: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"RepeatVector: n must be an int, got {n!r}")
        if n < 1:
            raise ValueError(f"RepeatVector: n must be at least 1, got {n}")
        self.n = int(n)
        self.input_spec = InputSpec(ndim=2)

    def build(self, input_shape: Any) -> None:
        if self.input_spec is not None and not isinstance(input_shape, list):
            self.input_spec.check(self, tuple(input_shape))
        super().build(input_shape)

    def call(self, inputs: Any) -> Any:
        return em.tile(em.expand_dims(inputs, 1), (1, self.n, 1))


class Activation(Layer):
    """Apply an activation function by name or callable."""

    supports_masking = True  # a mask passes through (as Keras)

    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs: Any) -> Any:
        return self.activation(inputs)


class LeakyReLU(Layer):
    """``x`` where ``x >= 0``, else ``negative_slope * x`` (Keras's default 0.3).

    ``alpha`` is the Keras 2 spelling of ``negative_slope``; give at most one.
    """

    def __init__(self, negative_slope: float | None = None, alpha: float | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if negative_slope is not None and alpha is not None:
            raise ValueError("LeakyReLU: give negative_slope or alpha (its old name), not both")
        slope = negative_slope if negative_slope is not None else alpha
        self.negative_slope = 0.3 if slope is None else float(slope)
        if self.negative_slope < 0:
            raise ValueError(f"LeakyReLU: negative_slope must be >= 0, got {slope}")

    def call(self, inputs: Any) -> Any:
        return em.nn_ops.leaky_relu(inputs, self.negative_slope)


class ReLU(Layer):
    """Keras's ``ReLU`` layer: ``x`` above ``threshold`` (capped at ``max_value`` when
    given), else ``negative_slope * (x - threshold)``. With the defaults, ``relu(x)``.

    Each argument must be a number >= 0 (``max_value`` may also be None), as Keras
    requires; anything else is refused by name.
    """

    def __init__(self, max_value: float | None = None, negative_slope: float = 0.0,
                 threshold: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for arg, value in (("max_value", max_value), ("negative_slope", negative_slope),
                           ("threshold", threshold)):
            if (value is None and arg != "max_value") or (value is not None and (
                    isinstance(value, bool) or not isinstance(value, (int, float))
                    or not value >= 0)):
                raise ValueError(f"ReLU: {arg} must be a number >= 0"
                                 f"{' or None' if arg == 'max_value' else ''}, got {value!r}")
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope = float(negative_slope)
        self.threshold = float(threshold)

    def call(self, inputs: Any) -> Any:
        return activations.relu(inputs, self.negative_slope, self.max_value, self.threshold)


class ELU(Layer):
    """Keras's ``ELU`` layer: ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        alpha: the scale of the negative part (Keras's default 1.0).
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.ELU(alpha=2.0)(np.array([-1.0, 3.0], np.float32)).numpy().round(4)
        array([-1.2642,  3.    ], dtype=float32)
    """

    supports_masking = True

    def __init__(self, alpha: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number)):
            raise ValueError(f"ELU: alpha must be a number, got {alpha!r}")
        self.alpha = float(alpha)

    def call(self, inputs: Any) -> Any:
        return activations.elu(inputs, alpha=self.alpha)


class PReLU(Layer):
    """Parametric ReLU (Keras's ``PReLU``): ``x`` where ``x >= 0``, else ``alpha * x``,
    with ``alpha`` a learned weight of the shape of one example (size 1 along
    ``shared_axes``).

    Args:
        alpha_initializer: the initializer of ``alpha`` (Keras's default ``"Zeros"``).
        alpha_regularizer: a penalty of ``alpha`` that joins ``losses``.
        alpha_constraint: a projection optimizers apply to ``alpha`` after each update.
        shared_axes: the axes (counted from 1, the batch axis being 0) along which one
            ``alpha`` serves every position: an int or a list of them (``[1, 2]`` for
            one slope per channel of images).
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> layer = nn.layers.PReLU(shared_axes=[1, 2])
        >>> layer(em.ones((2, 4, 4, 3))).shape, layer.alpha.shape
        ((2, 4, 4, 3), (1, 1, 3))
    """

    supports_masking = True

    def __init__(self, alpha_initializer: Any = "Zeros", alpha_regularizer: Any = None,
                 alpha_constraint: Any = None, shared_axes: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        axes = None if shared_axes is None else (
            list(shared_axes) if isinstance(shared_axes, (list, tuple)) else [shared_axes])
        if axes is not None and not all(isinstance(a, (int, np.integer)) and
                                        not isinstance(a, bool) and a >= 1 for a in axes):
            raise ValueError(f"PReLU: shared_axes must be an int or a list of ints >= 1 (the "
                             f"batch axis is 0), got {shared_axes!r}")
        self.shared_axes = None if axes is None else [int(a) for a in axes]

    def build(self, input_shape: Any) -> None:
        ndim = len(input_shape)
        shape = list(input_shape[1:])
        for a in self.shared_axes or []:
            if a >= ndim:
                raise ValueError(f"layer {self.name!r} (PReLU): shared_axes "
                                 f"{self.shared_axes} names axis {a} of inputs of rank {ndim}")
            shape[a - 1] = 1
        self.alpha = self.add_weight("alpha", tuple(shape), initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        axes = {i: input_shape[i] for i in range(1, ndim)
                if self.shared_axes and i not in self.shared_axes}
        self.input_spec = InputSpec(ndim=ndim, axes=axes)

    def call(self, inputs: Any) -> Any:
        neg = em.multiply(self.alpha.value(), em.relu(em.negative(inputs)))
        return em.subtract(em.relu(inputs), neg)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "shared_axes": self.shared_axes}


class Identity(Layer):
    """Keras's ``Identity``: returns its inputs (a placeholder where no operation is
    wanted); a mask passes through.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.Identity()(np.ones((2, 3), np.float32)).shape
        (2, 3)
    """

    supports_masking = True

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)

    def call(self, inputs: Any) -> Any:
        return inputs


class ActivityRegularization(Layer):
    """Keras's ``ActivityRegularization``: the identity that adds
    ``l1 * sum(|y|) + l2 * sum(y^2)`` of its output, divided by the batch size, to
    ``losses`` (Keras's activity regularizer ``L1L2(l1, l2)``).

    Args:
        l1, l2: the factors (numbers >= 0).
        **kwargs: the base ``Layer`` arguments but ``activity_regularizer`` (this layer's
            is ``L1L2(l1, l2)``).

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> layer = nn.layers.ActivityRegularization(l1=0.5)
        >>> _ = layer(np.array([[1.0, -3.0]], np.float32))
        >>> [float(v) for v in layer.losses]
        [2.0]
    """

    supports_masking = True

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs: Any) -> None:
        if "activity_regularizer" in kwargs:
            raise TypeError("ActivityRegularization: activity_regularizer= is not an "
                            "argument (the layer's regularizer is L1L2(l1, l2)); give l1= "
                            "and l2=")
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = float(l1), float(l2)

    def call(self, inputs: Any) -> Any:
        return inputs


class Softmax(Layer):
    """``softmax`` over ``axis`` (the last by default; a list or tuple of axes normalizes
    over them together), as Keras 3's layer. ``mask`` (True where kept, the inputs' shape
    or broadcasting to it; the inputs' Keras mask by default) puts -1e9 (-3e4 in float16)
    in the masked entries first, and the masked outputs are 0, as Keras 3.15's: a row
    masked entirely is all zeros, not uniform (padded queries of self-attention)."""

    supports_masking = True

    def __init__(self, axis: Any = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = type(axis)(int(a) for a in axis) if isinstance(axis, (list, tuple)) \
            else int(axis)

    def call(self, inputs: Any, mask: Any = None) -> Any:
        x = inputs
        if mask is not None:
            m = em.convert_to_tensor(mask)
            if m.ndim < x.ndim and tuple(m.shape) == tuple(x.shape[:m.ndim]):
                # a timestep mask (an Embedding's, (N, T) for (N, T, K)) covers each masked
                # step's entries (Keras would broadcast it against the last axes instead)
                m = em.reshape(m, tuple(m.shape) + (1,) * (x.ndim - m.ndim))
            try:
                np.broadcast_shapes(tuple(m.shape), tuple(x.shape))
            except ValueError:
                raise ValueError(f"Softmax: mask of shape {tuple(m.shape)} does not fit the "
                                 f"inputs' shape {tuple(x.shape)}") from None
            m = em.cast(m, em.bool)
            x = em.where(m, x, em.constant(-3e4 if x.dtype == np.float16 else -1e9, x.dtype))
        if isinstance(self.axis, (list, tuple)):
            if len(self.axis) > 1:
                out = em.exp(em.subtract(x, em.reduce_logsumexp(x, list(self.axis),
                                                                 keepdims=True)))
            else:
                out = activations.softmax(x, axis=self.axis[0])
        else:
            out = activations.softmax(x, axis=self.axis)  # (remembers its logits)
        if mask is not None:
            out = em.where(m, out, em.zeros_like(out))
        return out


class Dropout(Layer):
    """Zero a fraction ``rate`` of inputs in training (scaling the rest); identity otherwise.

    Draws through ``em.random``: ``em.random.set_seed`` or ``seed=`` make it repeatable.
    """

    supports_masking = True  # a mask passes through (as Keras)

    def __init__(self, rate: float, noise_shape: Any = None, seed: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs: Any, training: Any = None) -> Any:
        if not training or self.rate == 0:
            return inputs
        shape = None
        if self.noise_shape is not None:
            shape = tuple(inputs.shape[i] if s is None else s
                          for i, s in enumerate(self.noise_shape))
        return em.nn_ops.dropout(inputs, self.rate, noise_shape=shape, seed=self.seed)


class Lambda(Layer):
    """Wrap a function of tensors as a layer (no variables)."""

    _ember_probes_batch = True  # its output's batch axis is found (a reduction over it)

    def __init__(self, function: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.function = function

    def call(self, inputs: Any) -> Any:
        return self.function(inputs)

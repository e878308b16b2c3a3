"""BatchNormalization, LayerNormalization, GroupNormalization, RMSNormalization and
UnitNormalization (Keras 3's)."""

from __future__ import annotations

import warnings
from typing import Any

import ember.core as em

from .. import constraints, regularizers
from ._keras_args import only_default
from .base import InputSpec, Layer


def _axes(axis: Any, ndim: int, who: str) -> tuple[int, ...]:
    ax = (axis,) if isinstance(axis, int) else tuple(axis)
    bad = [a for a in ax if not -ndim <= int(a) < ndim]
    if bad:
        raise ValueError(f"{who}: axis {axis!r} is out of range for inputs of rank {ndim}")
    out = tuple(sorted({int(a) % ndim for a in ax}))
    if len(out) != len(ax):
        raise ValueError(f"{who}: axis {axis!r} names an axis twice")
    return out


def _extras(beta_reg: Any, gamma_reg: Any, beta_con: Any, gamma_con: Any) -> dict[str, Any]:
    """add_weight's regularizer/constraint arguments for beta and gamma (never autocast:
    the statistics and the affine map are computed in float32 under mixed precision)."""
    return {"beta": {"regularizer": regularizers.get(beta_reg),
                     "constraint": constraints.get(beta_con), "autocast": False},
            "gamma": {"regularizer": regularizers.get(gamma_reg),
                      "constraint": constraints.get(gamma_con), "autocast": False}}


def _at_least_float32(x: Any) -> Any:
    """float16 and bfloat16 inputs upcast: a variance overflows float16 (as Keras 3)."""
    return em.cast(x, em.float32) if x.dtype.itemsize < 4 else x


def _in_compute_dtype(layer: Layer, y: Any) -> Any:
    dt = layer.dtype_policy._compute
    return y if y.dtype == dt else em.cast(y, dt)


class BatchNormalization(Layer):
    """Normalise with batch statistics in training, moving statistics otherwise.

    With a mask (``mask=``, or one made upstream by ``Embedding(mask_zero=True)``) the
    batch statistics leave masked positions out, and the mask passes on (as Keras 3).

    ``moving_mean`` and ``moving_variance`` are non-trainable variables updated in training
    calls as ``moving = moving * momentum + batch * (1 - momentum)`` (batch variance is
    the biased one, as Keras).

    Under a mixed dtype policy it computes in float32 (float16 inputs are upcast, its
    variables never autocast) and returns the compute dtype, as Keras 3.

    Args:
        axis: the feature axis (or axes) kept; the others are averaged over. ``-1`` for
            channels-last inputs, ``1`` for channels-first (NCHW) ones.
        momentum: of the moving statistics.
        epsilon: added to the variance.
        center: learn a shift ``beta``.
        scale: learn a scale ``gamma``.
        beta_initializer, gamma_initializer, moving_mean_initializer, moving_variance_initializer:
            initializers.
        beta_regularizer, gamma_regularizer: penalties that join ``losses``.
        beta_constraint, gamma_constraint: projections optimizers apply after each update.
        **kwargs: as :class:`Layer`.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> bn = nn.layers.BatchNormalization(axis=1)
        >>> bn(em.ones((2, 3, 4, 4)), training=True).shape, bn.gamma.shape
        ((2, 3, 4, 4), (3,))
    """

    supports_masking = True

    def __init__(self, axis: Any = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", moving_mean_initializer: Any = "zeros",
                 moving_variance_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, synchronized: bool = False,
                 renorm: bool = False, renorm_clipping: Any = None,
                 renorm_momentum: float = 0.99, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        only_default("BatchNormalization",
                     synchronized=(synchronized, False, "ember computes batch statistics "
                                   "per replica; no cross-replica synchronization"),
                     renorm=(renorm, False, "ember has no batch renormalization"),
                     renorm_clipping=(renorm_clipping, None, "it belongs to renorm"),
                     renorm_momentum=(renorm_momentum, 0.99, "it belongs to renorm"))
        self._extras = _extras(beta_regularizer, gamma_regularizer, beta_constraint,
                               gamma_constraint)
        self.axis = axis
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self._inits = (beta_initializer, gamma_initializer, moving_mean_initializer,
                       moving_variance_initializer)

    def build(self, input_shape: Any) -> None:
        ndim = len(input_shape)
        who = f"layer {self.name!r} ({type(self).__name__})"
        self._axes = _axes(self.axis, ndim, who)
        self._reduce = tuple(i for i in range(ndim) if i not in self._axes)
        pshape = tuple(input_shape[a] for a in self._axes)
        self._bshape = tuple(input_shape[i] if i in self._axes else 1 for i in range(ndim))
        beta_i, gamma_i, mm_i, mv_i = self._inits
        if self.scale:
            self.gamma = self.add_weight("gamma", pshape, initializer=gamma_i,
                                         **self._extras["gamma"])
        else:
            self.gamma = None  # (Keras's: no weight, but the attribute)
        if self.center:
            self.beta = self.add_weight("beta", pshape, initializer=beta_i,
                                        **self._extras["beta"])
        else:
            self.beta = None
        self.moving_mean = self.add_weight("moving_mean", pshape, initializer=mm_i,
                                           trainable=False, autocast=False)
        self.moving_variance = self.add_weight("moving_variance", pshape, initializer=mv_i,
                                               trainable=False, autocast=False)
        self.input_spec = InputSpec(ndim=ndim, axes={a: input_shape[a] for a in self._axes})

    def _b(self, v: Any) -> Any:
        return em.reshape(v, self._bshape) if len(self._axes) != 1 or self._axes[0] != len(
            self._bshape) - 1 else v

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        inputs = _at_least_float32(inputs)
        gamma = self._b(self.gamma.value()) if self.scale else None
        beta = self._b(self.beta.value()) if self.center else None
        if training and self.trainable:
            if mask is None:  # one fused op forward, one back (normalisation and statistics)
                y, mean, var = em.nn_ops.batch_norm_training(inputs, gamma, beta, self._reduce,
                                                             self.epsilon)
                self._update_moving(mean, var)
                return _in_compute_dtype(self, y)
            mean, var = self._masked_moments(inputs, mask)
            self._update_moving(mean, var)
        else:
            mean, var = self._b(self.moving_mean.value()), self._b(self.moving_variance.value())
        return _in_compute_dtype(self, em.nn_ops.batch_normalization(inputs, mean, var, beta,
                                                                     gamma, self.epsilon))

    def _masked_moments(self, inputs: Any, mask: Any) -> tuple[Any, Any]:
        """Batch statistics over the unmasked positions only (as Keras 3)."""
        m = em.convert_to_tensor(mask)
        if tuple(m.shape) != tuple(inputs.shape[:m.ndim]) or m.ndim >= inputs.ndim:
            raise ValueError(f"layer {self.name!r} (BatchNormalization): mask of shape "
                             f"{tuple(m.shape)} does not fit inputs {tuple(inputs.shape)}")
        w = em.cast(em.reshape(m, tuple(m.shape) + (1,) * (inputs.ndim - m.ndim)),
                    inputs.dtype)
        w = em.multiply(w, em.ones_like(inputs))
        count = em.maximum(em.reduce_sum(w, axis=self._reduce, keepdims=True), 1.0)
        mean = em.divide(em.reduce_sum(em.multiply(inputs, w), axis=self._reduce,
                                       keepdims=True), count)
        dev = em.square(em.subtract(inputs, mean))
        var = em.divide(em.reduce_sum(em.multiply(dev, w), axis=self._reduce,
                                      keepdims=True), count)
        return mean, var

    def _update_moving(self, mean: Any, var: Any) -> None:
        m = self.momentum
        with em.recording.paused():
            for mv, batch in ((self.moving_mean, mean), (self.moving_variance, var)):
                b = em.reshape(em.stop_gradient(batch), mv.shape)
                mv.assign(mv.value() * m + b * (1.0 - m))


class LayerNormalization(Layer):
    """Normalise each example over ``axis`` (the last by default), then scale and shift.

    Under a mixed dtype policy it computes in float32 (its inputs are not autocast, float16
    ones are upcast) and returns the compute dtype, as Keras 3.

    Args:
        axis: the axis (or axes) normalised over.
        epsilon: added to the variance.
        center, scale: learn ``beta`` / ``gamma``.
        beta_initializer, gamma_initializer: initializers.
        beta_regularizer, gamma_regularizer: penalties that join ``losses``.
        beta_constraint, gamma_constraint: projections optimizers apply after each update.
        rms_scaling: Keras 3's deprecated form (it warns, as Keras does):
            ``x * rsqrt(variance(x) + epsilon) * gamma`` over ``axis``, the mean not
            subtracted (the variance, not the mean square, divides: use
            :class:`RMSNormalization` for RMS normalization). ``gamma`` is made even with
            ``scale=False``, ``beta`` never (``center`` is ignored), as in Keras.
        **kwargs: as :class:`Layer`.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> x = em.constant([[1.0, 3.0]])  # mean 2, variance 1
        >>> nn.layers.LayerNormalization(epsilon=0.0)(x).numpy()
        array([[-1.,  1.]], dtype=float32)
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # (deprecated, as in Keras)
        ...     rms = nn.layers.LayerNormalization(epsilon=0.0, rms_scaling=True)
        >>> rms(x).numpy()  # x / sqrt(variance): not centred
        array([[1., 3.]], dtype=float32)
    """

    supports_masking = True  # per example: a mask passes through unchanged
    _autocast = False  # Keras 3's: inputs and variables keep their dtypes (see call)

    def __init__(self, axis: Any = -1, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, rms_scaling: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if rms_scaling:
            warnings.warn("LayerNormalization: you passed `rms_scaling=True`, which Keras 3 "
                          "deprecates: it scales the input by the variance, not the root "
                          "mean square. For RMS normalization use "
                          "nn.layers.RMSNormalization.", stacklevel=2)
        self._extras = _extras(beta_regularizer, gamma_regularizer, beta_constraint,
                               gamma_constraint)
        self.axis, self.epsilon = axis, float(epsilon)
        self.center, self.scale = center, scale
        self.rms_scaling = bool(rms_scaling)
        self._inits = (beta_initializer, gamma_initializer)

    def build(self, input_shape: Any) -> None:
        ndim = len(input_shape)
        who = f"layer {self.name!r} ({type(self).__name__})"
        self._axes = _axes(self.axis, ndim, who)
        pshape = tuple(input_shape[a] for a in self._axes)
        self._bshape = tuple(input_shape[i] if i in self._axes else 1 for i in range(ndim))
        if self.scale or self.rms_scaling:
            self.gamma = self.add_weight("gamma", pshape, initializer=self._inits[1],
                                         **self._extras["gamma"])
        else:
            self.gamma = None  # (Keras's: no weight, but the attribute)
        if self.center and not self.rms_scaling:
            self.beta = self.add_weight("beta", pshape, initializer=self._inits[0],
                                        **self._extras["beta"])
        else:
            self.beta = None
        self.input_spec = InputSpec(ndim=ndim, axes={a: input_shape[a] for a in self._axes})

    def call(self, inputs: Any) -> Any:
        inputs = _at_least_float32(inputs)
        mean, var = em.nn_ops.moments(inputs, self._axes, keepdims=True)
        gamma = None if self.gamma is None else em.reshape(self.gamma.value(), self._bshape)
        if self.rms_scaling:  # Keras 3's: x * rsqrt(var + epsilon) * gamma, x not centred
            out = em.multiply(inputs, em.math.rsqrt(em.add(var, self.epsilon)))
            return _in_compute_dtype(self, out if gamma is None else em.multiply(
                out, em.cast(gamma, out.dtype)))
        beta = None if self.beta is None else em.reshape(self.beta.value(), self._bshape)
        return _in_compute_dtype(self, em.nn_ops.batch_normalization(
            inputs, mean, var, beta, gamma, self.epsilon))


def _axis_arg(who: str, axis: Any) -> Any:
    """Keras's ``axis``: an int, or a list of them (a tuple is kept as a list)."""
    if isinstance(axis, (list, tuple)) and all(
            isinstance(a, int) and not isinstance(a, bool) for a in axis) and axis:
        return list(axis)
    if isinstance(axis, int) and not isinstance(axis, bool):
        return axis
    raise TypeError(f"{who}: axis must be an int or a list of ints, got axis={axis!r}")


class GroupNormalization(Layer):
    """Normalise each example over groups of channels (Keras's ``GroupNormalization``):
    the channels of ``axis`` are split into ``groups`` groups, and each group is
    normalised by its mean and variance over every other axis but the batch's, then
    scaled by ``gamma`` and shifted by ``beta`` (per channel).

    ``groups=1`` is layer normalisation over all non-batch axes; ``groups=-1`` (one group
    per channel) is instance normalisation. Under a mixed dtype policy it computes in
    float32 and returns the compute dtype, as Keras 3.

    Args:
        groups: the number of groups, dividing the channel count (or -1).
        axis: the channel axis (-1 for channels last, 1 for channels first).
        epsilon: added to the variance.
        center, scale: learn ``beta`` / ``gamma``.
        beta_initializer, gamma_initializer: initializers.
        beta_regularizer, gamma_regularizer: penalties that join ``losses``.
        beta_constraint, gamma_constraint: projections optimizers apply after each update.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> layer = nn.layers.GroupNormalization(groups=2)
        >>> layer(em.ones((2, 5, 4))).shape, layer.gamma.shape
        ((2, 5, 4), (4,))
    """

    supports_masking = True
    _autocast = False  # Keras 3's: inputs and variables keep their dtypes (see call)

    def __init__(self, groups: int = 32, axis: int = -1, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, **kwargs: Any) -> None:
        if isinstance(groups, bool) or not isinstance(groups, int) or (
                groups <= 0 and groups != -1):
            raise ValueError(f"GroupNormalization: groups must be a positive int (or -1 for "
                             f"instance normalization), got groups={groups!r}")
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"GroupNormalization: axis must be an int, got axis={axis!r}")
        super().__init__(**kwargs)
        self._extras = _extras(beta_regularizer, gamma_regularizer, beta_constraint,
                               gamma_constraint)
        self.groups, self.axis, self.epsilon = groups, axis, float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self._inits = (beta_initializer, gamma_initializer)

    def build(self, input_shape: Any) -> None:
        ndim = len(input_shape)
        who = f"layer {self.name!r} (GroupNormalization)"
        (axis,) = _axes(self.axis, ndim, who)
        if axis == 0:
            raise ValueError(f"{who}: axis {self.axis} is the batch axis")
        dim = input_shape[axis]
        groups = dim if self.groups == -1 else self.groups
        if dim < groups or dim % groups:
            raise ValueError(f"{who}: groups={self.groups} must divide the {dim} channels "
                             f"of axis {self.axis}")
        self._axis, self._groups = axis, groups
        if self.scale:
            self.gamma = self.add_weight("gamma", (dim,), initializer=self._inits[1],
                                         **self._extras["gamma"])
        else:
            self.gamma = None  # (Keras's: no weight, but the attribute)
        if self.center:
            self.beta = self.add_weight("beta", (dim,), initializer=self._inits[0],
                                        **self._extras["beta"])
        else:
            self.beta = None
        self.input_spec = InputSpec(ndim=ndim, axes={axis: dim})

    def call(self, inputs: Any) -> Any:
        x = _at_least_float32(inputs)
        shape = tuple(x.shape)
        axis, g = self._axis, self._groups
        # (..., C, ...) -> (..., G, C/G, ...); statistics over all but the batch and G
        grouped = shape[:axis] + (g, shape[axis] // g) + shape[axis + 1:]
        xg = em.reshape(x, grouped)
        reduce = tuple(i for i in range(1, len(grouped)) if i != axis)
        mean, var = em.nn_ops.moments(xg, reduce, keepdims=True)
        inv = em.rsqrt(em.add(var, self.epsilon))
        bshape = [1] * len(grouped)
        bshape[axis], bshape[axis + 1] = g, shape[axis] // g
        if self.scale:
            inv = em.multiply(inv, em.reshape(em.cast(self.gamma.value(), x.dtype), bshape))
        shift = em.negative(em.multiply(mean, inv))
        if self.center:
            shift = em.add(shift, em.reshape(em.cast(self.beta.value(), x.dtype), bshape))
        y = em.reshape(em.add(em.multiply(xg, inv), shift), shape)
        return _in_compute_dtype(self, y)


class RMSNormalization(Layer):
    """Root-mean-square normalisation (Keras's ``RMSNormalization``):
    ``x * rsqrt(mean(x ** 2 over axis) + epsilon) * scale``, with ``scale`` a learned
    weight (ones at first) of the sizes of ``axis``. Computed in at least float32 and
    returned in the input's dtype, as Keras 3.

    Args:
        axis: the axis, or list of axes, normalised over (the last by default).
        epsilon: added to the mean square (Keras's default 1e-6).
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.RMSNormalization()(np.array([[3.0, 4.0]], np.float32)).numpy().round(4)
        array([[0.8485, 1.1314]], dtype=float32)
    """

    def __init__(self, axis: Any = -1, epsilon: float = 1e-6, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = _axis_arg("RMSNormalization", axis)
        self.epsilon = float(epsilon)

    def build(self, input_shape: Any) -> None:
        ndim = len(input_shape)
        who = f"layer {self.name!r} (RMSNormalization)"
        self._axes = _axes(self.axis, ndim, who)
        self._bshape = tuple(input_shape[i] if i in self._axes else 1 for i in range(ndim))
        self.scale = self.add_weight("scale", tuple(input_shape[a] for a in self._axes),
                                     initializer="ones")
        self.input_spec = InputSpec(ndim=ndim, axes={a: input_shape[a] for a in self._axes})

    def call(self, inputs: Any) -> Any:
        x = _at_least_float32(inputs)
        ms = em.reduce_mean(em.square(x), axis=self._axes, keepdims=True)
        y = em.multiply(x, em.rsqrt(em.add(ms, self.epsilon)))
        y = em.multiply(y, em.reshape(em.cast(self.scale.value(), x.dtype), self._bshape))
        return y if y.dtype == inputs.dtype else em.cast(y, inputs.dtype)


class UnitNormalization(Layer):
    """Scale each example to unit L2 norm over ``axis`` (Keras's ``UnitNormalization``):
    ``x * min(rsqrt(sum(x ** 2)), 1e12)``, so an all-zero slice stays zero (computed as
    ``rsqrt(max(sum, 1e-24))``: the same values, and no infinity on the way).

    Args:
        axis: the axis, or list of axes, whose norm is made 1 (the last by default).
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.UnitNormalization()(np.array([[3.0, 4.0]], np.float32)).numpy()
        array([[0.6, 0.8]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, axis: Any = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = _axis_arg("UnitNormalization", axis)

    def call(self, inputs: Any) -> Any:
        axes = _axes(self.axis, inputs.ndim, f"layer {self.name!r} (UnitNormalization)")
        total = em.reduce_sum(em.square(inputs), axis=axes, keepdims=True)
        return em.multiply(inputs, em.rsqrt(em.maximum(total, 1e-24)))

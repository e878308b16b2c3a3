"""Numeric preprocessing layers: Normalization and Rescaling (Keras 3's names, arguments
and defaults).

Both are ember ops on the device that holds the data, with gradients (a model that starts
with them trains through them), so they belong inside a model as well as in a pipeline.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

from . import _host_data
from .base import Layer

EPSILON = 1e-7  # Keras's backend.epsilon(): the floor of the standard deviation


def _as_config_value(v: Any) -> Any:
    if isinstance(v, em.Tensor):
        v = v.numpy()
    return np.asarray(v).tolist() if isinstance(v, (np.ndarray, np.generic)) else v


class Normalization(Layer):
    """Shift and scale inputs to mean 0 and standard deviation 1 per feature:
    ``(x - mean) / sqrt(variance)`` (the square root floored at 1e-7).

    The statistics are given (``mean=``, ``variance=``) or learned by ``adapt(data)``
    before training, then kept as non-trainable variables (``mean``, ``variance`` and
    Keras's ``count``, which Keras too leaves at 0), so checkpoints carry them.

    Args:
        axis: the axis or axes that keep a separate mean and variance per index (-1: one
            per feature of the last axis); ``None`` normalizes everything by one scalar
            pair. Every other axis is reduced over by ``adapt``.
        mean, variance: given statistics (both or neither), broadcast to the kept axes
            (a scalar, or an array aligned with the kept axes from the right).
        invert: apply the inverse, ``mean + x * sqrt(variance)``: turns normalized values
            back into the original scale.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> layer = nn.layers.Normalization(axis=None)
        >>> layer.adapt(np.array([1., 2., 3., 4., 5.], np.float32))
        >>> layer(np.array([1., 2., 3.], np.float32)).numpy()
        array([-1.4142135 , -0.70710677,  0.        ], dtype=float32)
    """

    supports_masking = True

    def __init__(self, axis: Any = -1, mean: Any = None, variance: Any = None,
                 invert: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
            axis = (int(axis),)
        elif isinstance(axis, (tuple, list)) and all(
                isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axis):
            axis = tuple(int(a) for a in axis)
        else:
            raise TypeError(f"Normalization: axis must be an int, a tuple of ints or None, "
                            f"got axis={axis!r}")
        self.axis = axis
        if (mean is None) != (variance is None):
            raise ValueError(f"Normalization: give mean and variance together (or neither), "
                             f"got mean={mean!r} and variance={variance!r}")
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError(f"Normalization: mean and variance must have the same "
                                 f"shape, got {np.shape(mean)} and {np.shape(variance)}")
            if len(np.shape(mean)) > len(self.axis):
                raise ValueError(f"Normalization: the rank of mean ({len(np.shape(mean))}) "
                                 f"is larger than the number of kept axes, axis={self.axis}")
        self.input_mean = _as_config_value(mean)
        self.input_variance = _as_config_value(variance)
        self.invert = bool(invert)
        self._build_shape: tuple[int, ...] | None = None
        self._given: tuple[Any, Any] | None = None

    # --- building -------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        shape = tuple(input_shape)
        ndim = len(shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(f"layer {self.name!r} (Normalization): axis={self.axis} is out "
                             f"of range for inputs of shape {shape} (rank {ndim})")
        self._build_shape = shape
        self._keep = tuple(sorted(a % ndim for a in self.axis))
        self._reduce = tuple(d for d in range(ndim) if d not in self._keep)
        self._bshape = tuple(shape[d] if d in self._keep else 1 for d in range(ndim))
        stat_shape = tuple(shape[d] for d in self._keep)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight("mean", stat_shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight("variance", stat_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight("count", (), dtype=em.int64, initializer="zeros",
                                         trainable=False)
        else:
            self._given = (self._broadcast_given(self.input_mean, "mean"),
                           self._broadcast_given(self.input_variance, "variance"))
        self.built = True

    def _broadcast_given(self, value: Any, what: str) -> Any:
        v = np.asarray(value, dtype=np.float64)
        expanded = [1] * len(self._bshape)
        for i in range(1, v.ndim + 1):
            expanded[self._keep[-i]] = v.shape[-i]
        try:
            v = np.broadcast_to(v.reshape(expanded), self._bshape)
        except ValueError:
            built = self._build_shape
            assert built is not None, "build sets the input shape before broadcasting"
            raise ValueError(f"layer {self.name!r} (Normalization): {what} of shape "
                             f"{np.shape(value)} does not broadcast to the kept axes (axis="
                             f"{self.axis}) "
                             f"{tuple(built[d] for d in self._keep)} of inputs "
                             f"shaped {built}") from None
        return np.ascontiguousarray(v, dtype=self.dtype)

    # --- adapt ----------------------------------------------------------------------
    def adapt(self, data: Any, steps: int | None = None) -> None:
        """Learn the mean and variance of ``data`` over the reduced axes.

        Args:
            data: a numpy array or ember Tensor (one batch), or an iterable of batches: an
                ``ember.data.Dataset`` (a dataset of unbatched vectors is read in batches
                of 128, as Keras does with a ``tf.data.Dataset``), a list of arrays, a
                generator. A batch ``(x, y)`` adapts on ``x``.
            steps: read at most this many batches of an iterable (needed for a dataset
                that repeats forever).
        """
        if self.input_mean is not None:
            raise ValueError(f"layer {self.name!r} (Normalization) was given mean and "
                             f"variance, so there is nothing to adapt")
        if (_host_data.rank_of_elements(data) == 1 and hasattr(data, "batch")
                and not _host_data.is_batch_like(data)):
            data = data.batch(128)
        total_mean = total_var = None
        total_count = 0
        for batch in _host_data.batches("Normalization", data, steps,
                                        lists_are_batches=False):
            x = em.cast(em.convert_to_tensor(batch), em.float64)
            if not self.built:
                self.build(tuple(x.shape))
            self._check_shape(tuple(x.shape), "adapt")
            mean = em.reduce_mean(x, axis=self._reduce) if self._reduce else x
            var = (em.reduce_mean(em.square(x - em.reshape(mean, self._bshape)),
                                  axis=self._reduce) if self._reduce else em.zeros_like(x))
            count = math.prod(x.shape[d] for d in self._reduce)
            if total_mean is None:
                total_mean, total_var, total_count = mean, var, count
                continue
            # Chan et al.'s pairwise update: exact for any split into batches
            total_count += count
            w = count / total_count
            new_mean = total_mean * (1 - w) + mean * w
            total_var = ((total_var + em.square(total_mean - new_mean)) * (1 - w)
                         + (var + em.square(mean - new_mean)) * w)
            total_mean = new_mean
        if total_mean is None:
            raise ValueError(f"layer {self.name!r} (Normalization): adapt() got no batches")
        self.adapt_mean.assign(em.cast(total_mean, self.adapt_mean.dtype))
        self.adapt_variance.assign(em.cast(total_var, self.adapt_variance.dtype))

    def _check_shape(self, shape: tuple[int, ...], where: str) -> None:
        built = self._build_shape
        assert built is not None, "the shape is checked only once the layer is built"
        if not self._keep:  # axis=None: one scalar pair fits inputs of any shape (Keras)
            return
        if len(shape) != len(built) or any(shape[d] != built[d] for d in self._keep):
            raise ValueError(f"layer {self.name!r} (Normalization) was built for inputs "
                             f"shaped {built} (axis={self.axis}), but {where} got shape "
                             f"{shape}")

    # --- calling --------------------------------------------------------------------
    def _stats(self, any_rank: bool = False) -> tuple[Any, Any]:
        if self._given is not None:
            return em.constant(self._given[0]), em.constant(self._given[1])
        # axis=None in a call: scalars, which fit inputs of any rank
        shape = () if any_rank and not self._keep else self._bshape
        return (em.reshape(self.adapt_mean.value(), shape),
                em.reshape(self.adapt_variance.value(), shape))

    def call(self, inputs: Any) -> Any:
        x = inputs if inputs.dtype == self.dtype else em.cast(inputs, self.dtype)
        self._check_shape(tuple(x.shape), "the call")
        mean, var = self._stats(any_rank=True)
        std = em.maximum(em.sqrt(var), EPSILON)
        return mean + x * std if self.invert else (x - mean) / std

    @property
    def mean(self) -> Any:
        """The mean in use, broadcast to the input's rank (None before building)."""
        return None if self._build_shape is None else self._stats()[0]

    @property
    def variance(self) -> Any:
        """The variance in use, broadcast to the input's rank (None before building)."""
        return None if self._build_shape is None else self._stats()[1]

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": self.input_mean, "variance": self.input_variance}


class Rescaling(Layer):
    """``inputs * scale + offset``, in the layer's dtype (float32): e.g. ``scale=1/255``
    brings pixels of [0, 255] into [0, 1], ``scale=1/127.5, offset=-1`` into [-1, 1].

    Integer inputs are cast first. Applied in training and inference alike; gradients flow
    through it to the inputs.

    Args:
        scale: a number or an array broadcast against the inputs (per channel).
        offset: a number or an array, added after scaling.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.layers.Rescaling(1 / 127.5, offset=-1)(np.array([0, 255], np.uint8)).numpy()
        array([-1.,  1.], dtype=float32)
    """

    supports_masking = True

    def __init__(self, scale: Any, offset: Any = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale = _as_config_value(scale)
        self.offset = _as_config_value(offset)
        for what, v in (("scale", self.scale), ("offset", self.offset)):
            arr = np.asarray(v)
            if arr.dtype.kind not in "biuf":
                raise TypeError(f"Rescaling: {what} must be a number or an array of numbers, "
                                f"got {v!r}")

    def call(self, inputs: Any) -> Any:
        x = inputs if inputs.dtype == self.dtype else em.cast(inputs, self.dtype)
        scale = np.asarray(self.scale, dtype=self.dtype)
        offset = np.asarray(self.offset, dtype=self.dtype)
        y = x * (float(scale) if scale.ndim == 0 else em.constant(scale))
        if offset.ndim or float(offset) != 0.0:
            y = y + (float(offset) if offset.ndim == 0 else em.constant(offset))
        return y

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}

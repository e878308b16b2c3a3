"""Keras 3's ``keras.Variable``: an ember variable made from a value or an initializer,
with Keras's arguments (``nn.Variable``; ``em.Variable`` is TensorFlow's)."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from . import config
from . import initializers as _initializers
from .layers import _autocast

_AGGREGATIONS = ("none", "mean", "sum", "only_first_replica")
_SYNCHRONIZATIONS = ("none", "on_write", "on_read", "auto")


class Variable(em.Variable):
    """``keras.Variable(initializer, shape=None, dtype=None, trainable=True, autocast=True,
    aggregation="none", synchronization="auto", name=None)``: an ``em.Variable``.

    Args:
        initializer: the initial value (a number, array or tensor), or an initializer (a
            name such as ``"glorot_uniform"``, an ``nn.initializers`` object or a
            ``callable(shape, dtype)``), which then needs ``shape``.
        shape: the variable's shape (checked against a value's).
        dtype: its dtype; ``nn.config.floatx()`` (float32) by default, as Keras, so that
            ``nn.Variable(0)`` is a float32 variable.
        trainable: whether optimizers and ``trainable_variables`` see it.
        autocast: False keeps it in its dtype when a layer computing in float16 or
            bfloat16 reads it (Keras's mixed precision); True casts it there.
        aggregation, synchronization: how a distribution strategy would combine replicas'
            values, kept as attributes as Keras keeps them (ember.distribute averages
            gradients and never reads them); a value Keras does not know is an error.
        name: its name.

    Examples:
        >>> from ember import nn
        >>> v = nn.Variable(0.0, trainable=False)
        >>> v.dtype, v.trainable
        (dtype('float32'), False)
        >>> nn.Variable("ones", shape=(2,)).numpy()
        array([1., 1.], dtype=float32)
    """

    def __init__(self, initializer: Any, shape: Any = None, dtype: Any = None,
                 trainable: bool = True, autocast: bool = True, aggregation: str = "none",
                 synchronization: str = "auto", name: str | None = None) -> None:
        if aggregation not in _AGGREGATIONS:
            raise ValueError(f"nn.Variable: aggregation must be one of {_AGGREGATIONS}, got "
                             f"{aggregation!r}")
        if synchronization not in _SYNCHRONIZATIONS:
            raise ValueError(f"nn.Variable: synchronization must be one of "
                             f"{_SYNCHRONIZATIONS}, got {synchronization!r}")
        dt = em.as_dtype(dtype if dtype is not None else config.floatx())
        want = None if shape is None else tuple(int(s) for s in shape)
        is_value = isinstance(initializer, (em.Tensor, em.Variable, np.ndarray, np.generic,
                                            int, float, bool, list, tuple))
        if is_value:
            value = em.convert_to_tensor(initializer)
            if value.dtype != dt:
                value = em.cast(value, dt)
            if want is not None and tuple(value.shape) != want:
                raise ValueError(f"nn.Variable: the initial value has shape "
                                 f"{tuple(value.shape)}, but shape={want} was given")
        else:
            if want is None:
                raise ValueError(f"nn.Variable: an initializer ({initializer!r}) needs "
                                 "shape=")
            value = _initializers.get(initializer)(want, dtype=dt)
        super().__init__(value, name=name, trainable=trainable, dtype=dt)
        self.aggregation = aggregation
        self.synchronization = synchronization
        self.autocast = bool(autocast)
        if not autocast:
            _autocast.exclude(self)

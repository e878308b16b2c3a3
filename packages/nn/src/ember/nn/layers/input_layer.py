"""Keras's ``InputLayer``: where a functional model's input enters its graph.

``nn.Input`` returns a symbolic tensor, and a functional model lists an ``InputLayer``
for each of its inputs in ``model.layers``, where Keras 3 lists its own, so that
``model.layers[i]`` is the same layer in both (keras-io's ``lstm_seq2seq`` takes the
encoder as ``model.layers[2]``, after its two inputs). An input layer holds no variables
and takes no place among a model's checkpoint paths; calling it returns its input in the
input's dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from . import _symbolic
from .base import Layer


class InputLayer(Layer):
    """The layer of a functional model's input (Keras 3's ``keras.layers.InputLayer``).

    Args:
        shape, batch_size, dtype, batch_shape, sparse, ragged: as ``nn.Input`` takes
            them; the input tensor this layer stands for is made from them.
        input_tensor: the ``nn.Input`` symbolic tensor it stands for, instead.
        optional: Keras's flag for optional inputs: only False.
        name: its name (a model names it after its input).

    Raises:
        ValueError: ``optional=True``, or ``input_tensor`` is not an ``nn.Input`` tensor.

    Examples:
        >>> from ember import nn
        >>> x = nn.Input(shape=(4,), name="features")
        >>> model = nn.Model(x, nn.layers.Dense(2)(x))
        >>> [type(layer).__name__ for layer in model.layers]
        ['InputLayer', 'Dense']
        >>> model.layers[0].name, model.layers[0].output is x
        ('features', True)
    """

    _autocast = False

    def __init__(self, shape: Any = None, batch_size: int | None = None, dtype: Any = None,
                 sparse: Any = None, batch_shape: Any = None, input_tensor: Any = None,
                 optional: bool = False, name: str | None = None, ragged: Any = None,
                 **kwargs: Any) -> None:
        if optional:
            raise ValueError("InputLayer: optional=True is not supported by ember")
        if "input_shape" in kwargs:  # Keras 2's name of shape
            if shape is not None:
                raise ValueError("InputLayer: give shape= or input_shape=, not both")
            shape = kwargs.pop("input_shape")
        if input_tensor is not None:
            given = [k for k, v in (("shape", shape), ("batch_size", batch_size),
                                    ("dtype", dtype), ("batch_shape", batch_shape)) if v is not None]
            if given:
                raise ValueError(f"InputLayer: input_tensor= is the input; {given} would "
                                 f"describe another one: give one or the other")
        if input_tensor is not None and not (
                isinstance(input_tensor, _symbolic.SymbolicTensor) and input_tensor.node is None):
            raise ValueError(f"InputLayer: input_tensor must be an nn.Input tensor, got "
                             f"{input_tensor!r}")
        super().__init__(name=name or getattr(input_tensor, "name", None), **kwargs)
        if input_tensor is None:
            input_tensor = _symbolic.Input(shape=shape, batch_size=batch_size, name=self.name,
                                           dtype=dtype, sparse=sparse, ragged=ragged,
                                           batch_shape=batch_shape)
        self._ember.extra["input_tensor"] = input_tensor
        self._ember.batch_input_shape = tuple(input_tensor.shape)
        self.built = True

    @property
    def input(self) -> Any:
        return self._ember.extra["input_tensor"]

    @property
    def output(self) -> Any:
        return self._ember.extra["input_tensor"]

    @property
    def batch_shape(self) -> tuple[Any, ...]:
        return tuple(self._ember.extra["input_tensor"].shape)

    def call(self, inputs: Any) -> Any:
        """``inputs`` in the input's dtype (as a functional model takes its inputs)."""
        dtype = self._ember.extra["input_tensor"].dtype
        return inputs if inputs.dtype == dtype else em.cast(inputs, dtype)

    def get_config(self) -> dict[str, Any]:
        return {"batch_shape": list(self.batch_shape),
                "dtype": str(np.dtype(self._ember.extra["input_tensor"].dtype)),
                "sparse": False, "ragged": False, "name": self.name, "optional": False}

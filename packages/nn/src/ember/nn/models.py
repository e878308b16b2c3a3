"""``clone_model``: the same architecture with fresh weights (Keras's ``keras.models``).

Examples:
    >>> from ember import nn
    >>> model = nn.Sequential([nn.layers.Dense(4, activation="relu", input_shape=(3,)),
    ...                        nn.layers.Dense(1)])
    >>> clone = nn.models.clone_model(model)
    >>> [type(layer).__name__ for layer in clone.layers], clone.count_params()
    (['Dense', 'Dense'], 21)
    >>> clone.layers[0].kernel is model.layers[0].kernel
    False
"""

from __future__ import annotations

from typing import Any

from .layers.base import Layer
from .model import Model, Sequential

__all__ = ["Model", "Sequential", "clone_model"]


def _fresh(layer: Layer) -> Layer:
    return type(layer).from_config(layer.get_config())


def clone_model(model: Any, input_tensors: Any = None, clone_function: Any = None) -> Any:
    """A new ``Sequential`` of new layers made from the model's layers' configs: the same
    architecture, freshly initialised weights (as Keras; copy weights with
    ``clone.set_weights(model.get_weights())``).

    Args:
        model: an ``nn.Sequential``.
        input_tensors: not supported; must be None.
        clone_function: ``layer -> new layer`` for each layer (default: the layer's class
            ``from_config(layer.get_config())``).

    Returns:
        The new ``Sequential`` (not compiled).

    Raises:
        ValueError: ``model`` is not a ``Sequential`` (build a functional or subclassed
            model again), or ``input_tensors`` was given.
    """
    if input_tensors is not None:
        raise ValueError("clone_model: input_tensors= is not supported by ember")
    if not isinstance(model, Sequential):
        raise ValueError(f"clone_model: expected an nn.Sequential, got "
                         f"{type(model).__name__} (ember clones Sequential models only: "
                         f"build a functional or subclassed model again)")
    clone = clone_function or _fresh
    layers = []
    for layer in model.layers:
        new = clone(layer)
        if not isinstance(new, Layer):
            raise ValueError(f"clone_model: clone_function returned {type(new).__name__} "
                             f"for layer {layer.name!r}, not a Layer")
        layers.append(new)
    return Sequential(layers, name=model.name)  # a plain Sequential, as Keras makes

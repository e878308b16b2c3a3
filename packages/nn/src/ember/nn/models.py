"""Keras's ``keras.models``: ``load_model``, ``save_model``, ``clone_model``,
``model_from_json`` (and the model classes).

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

import json
from typing import Any

from . import saving
from .layers import _symbolic
from .layers.base import Layer
from .model import Functional, Model, Sequential

__all__ = ["Functional", "Model", "Sequential", "clone_model", "load_model",
           "model_from_json", "save_model"]


def load_model(filepath: Any, custom_objects: dict[str, Any] | None = None,
               compile: bool = True, safe_mode: bool = True) -> Any:
    return saving.load_model(filepath, custom_objects, compile, safe_mode)


def save_model(model: Any, filepath: Any, overwrite: bool = True, zipped: Any = None,
               **kwargs: Any) -> None:
    saving.save_model(model, filepath, overwrite, zipped, **kwargs)


load_model.__doc__ = saving.load_model.__doc__
save_model.__doc__ = saving.save_model.__doc__


def model_from_json(json_string: str, custom_objects: dict[str, Any] | None = None) -> Any:
    """A model (fresh weights) from ``model.to_json()``'s string (Keras's).

    Raises:
        ValueError: not JSON of a model config, or a name that resolves to nothing.
    """
    try:
        config = json.loads(json_string)
    except (ValueError, RecursionError) as e:
        raise ValueError(f"model_from_json: not a JSON model config ({e})") from None
    return saving.deserialize_keras_object(config, custom_objects)


def _fresh(layer: Layer) -> Layer:
    return type(layer).from_config(layer.get_config())


def clone_model(model: Any, input_tensors: Any = None, clone_function: Any = None,
                call_function: Any = None, recursive: bool = False, **kwargs: Any) -> Any:
    """A new model of new layers made from the model's layers' configs: the same
    architecture, freshly initialised weights (as Keras; copy weights with
    ``clone.set_weights(model.get_weights())``).

    Args:
        model: a Sequential, functional or subclassed model (a subclass is made again
            from its config, as Keras does; it takes no other argument here).
        input_tensors: ``nn.Input`` placeholders to build the clone on (one per input),
            instead of new ones like the model's.
        clone_function: ``layer -> new layer`` for each layer (default: the layer's class
            ``from_config(layer.get_config())``).
        call_function: ``(layer, *args, **kwargs) -> outputs``, how a functional clone
            calls each layer (default: ``layer(*args, **kwargs)``).
        recursive: clone models nested in the model layer by layer too (with
            ``clone_function``), rather than handing them to ``clone_function`` whole.

    Returns:
        The new model (not compiled).

    Raises:
        ValueError: ``clone_function`` returned something other than a layer, or an
            argument a subclassed model cannot take, or an unknown keyword argument.
    """
    if kwargs:
        raise ValueError(f"clone_model: unexpected keyword arguments {sorted(kwargs)}")
    if isinstance(model, Sequential):
        return _clone_sequential(model, input_tensors, clone_function, call_function,
                                 recursive)
    if isinstance(model, Functional):
        return _clone_functional(model, input_tensors, clone_function, call_function,
                                 recursive)
    if not isinstance(model, Model):
        raise ValueError(f"clone_model: expected a model, got {type(model).__name__}")
    if input_tensors is not None or clone_function is not None or call_function is not None:
        raise ValueError(f"clone_model: input_tensors, clone_function and call_function "
                         f"apply to Sequential and functional models only; "
                         f"{type(model).__name__} is subclassed (it is made again from its "
                         f"config)")
    config = saving.serialize_keras_object(model)
    return saving.deserialize_keras_object(config,
                                           custom_objects={type(model).__name__: type(model)})


def _clone_layer(layer: Any, clone_function: Any, call_function: Any, recursive: bool) -> Any:
    if recursive and isinstance(layer, (Sequential, Functional)):
        return clone_model(layer, clone_function=clone_function, call_function=call_function,
                           recursive=True)
    new = (clone_function or _fresh)(layer)
    if not isinstance(new, Layer):
        raise ValueError(f"clone_model: clone_function returned {type(new).__name__} for "
                         f"layer {layer.name!r}, not a Layer")
    return new


def _clone_sequential(model: Any, input_tensors: Any, clone_function: Any,
                      call_function: Any, recursive: bool) -> Any:
    if call_function is not None:
        raise ValueError("clone_model: call_function applies to functional models only")
    layers = [_clone_layer(layer, clone_function, None, recursive) for layer in model.layers]
    first: list[Any] = []
    if input_tensors is not None:
        given = _symbolic.leaves(input_tensors)
        if len(given) != 1 or not isinstance(given[0], _symbolic.SymbolicTensor):
            raise ValueError(f"clone_model: a Sequential model takes one nn.Input as "
                             f"input_tensors, got {input_tensors!r}")
        first = [given[0]]
    elif model._input is not None:
        shape, dtype = model._input
        first = [_symbolic.Input(batch_shape=shape, dtype=dtype,
                                 name=getattr(model._input_tensor, "name", None))]
    return Sequential(first + layers, name=model.name)  # a plain Sequential, as Keras makes


def _clone_functional(model: Any, input_tensors: Any, clone_function: Any,
                      call_function: Any, recursive: bool) -> Any:
    spec, outputs, nodes = model._ember.extra["functional"]
    old_inputs = _symbolic.leaves(spec)
    if input_tensors is None:
        new_inputs = [_symbolic.Input(batch_shape=t.shape, dtype=t.dtype, name=t.name)
                      for t in old_inputs]
    else:
        new_inputs = _symbolic.leaves(input_tensors)
        if len(new_inputs) != len(old_inputs) or not all(
                isinstance(t, _symbolic.SymbolicTensor) and t.node is None
                for t in new_inputs):
            raise ValueError(f"clone_model: input_tensors must be {len(old_inputs)} nn.Input "
                             f"placeholder(s), got {input_tensors!r}")
    values = {id(old): new for old, new in zip(old_inputs, new_inputs)}
    clones: dict[int, Any] = {}
    for node in nodes:
        layer = node.layer
        if id(layer) not in clones:
            clones[id(layer)] = _clone_layer(layer, clone_function, call_function, recursive)

        def value(t: Any) -> Any:
            return values[id(t)]

        args = _symbolic.substitute(value, node.inputs)  # an operation's numbers kept
        rest = _symbolic.substitute(value, list(node.args))
        kwargs = _symbolic.substitute(value, dict(node.kwargs))
        new = clones[id(layer)]
        out = call_function(new, args, *rest, **kwargs) if call_function else \
            new(args, *rest, **kwargs)
        for old, made in zip(_symbolic.leaves(node.outputs), _symbolic.leaves(out)):
            values[id(old)] = made
    structure = _symbolic.map_structure(lambda t: values[id(t)], outputs)
    inputs = (_symbolic.map_structure(lambda t: values[id(t)], spec))
    return Functional(inputs, structure, name=model.name)

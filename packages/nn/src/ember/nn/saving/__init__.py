"""Saving and loading models in Keras 3's files (Keras's ``keras.saving``).

``model.save("m.keras")`` writes a zip of ``config.json`` (the architecture, in Keras 3's
config form), ``model.weights.h5`` (weights and optimizer state, in Keras 3's HDF5
layout) and ``metadata.json``; ``nn.models.load_model`` reads it back, compiled, ready to
continue training exactly. ``model.save_weights`` writes ``.weights.h5`` (or
``.safetensors``); ``model.load_weights`` reads either, and a ``.keras`` file's weights.

A file never runs code. A config names classes (``module``, ``class_name``,
``registered_name``), and a name is found only in ``custom_objects``, among classes and
functions registered with ``register_keras_serializable``, or in ember's own table of
built-in layers, optimizers and so on. No module a file names is imported and no pickle,
marshal or bytecode is read: a ``Lambda`` layer's function is saved by its registered
name. Register each class of your own that a saved model holds, or pass it in
``custom_objects``.

Examples:
    >>> from ember import nn
    >>> @nn.saving.register_keras_serializable(package="DocSaving")
    ... class Thrice(nn.layers.Layer):
    ...     def call(self, x):
    ...         return x * 3
    >>> config = nn.saving.serialize_keras_object(Thrice(name="thrice"))
    >>> config["registered_name"], config["config"]["name"]
    ('DocSaving>Thrice', 'thrice')
    >>> type(nn.saving.deserialize_keras_object(config)).__name__
    'Thrice'
"""

from __future__ import annotations

from typing import Any

from . import _api
from ._registry import (
    CustomObjectScope,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
)
from ._serialization import deserialize_keras_object, serialize_keras_object

__all__ = ["CustomObjectScope", "custom_object_scope", "deserialize_keras_object",
           "get_custom_objects", "get_registered_name", "get_registered_object",
           "load_model", "load_weights", "register_keras_serializable", "save_model",
           "save_weights", "serialize_keras_object"]


def save_model(model: Any, filepath: Any, overwrite: bool = True, zipped: Any = None,
               **kwargs: Any) -> None:
    """``model.save(filepath)``: see ``ember.nn.models.save_model``."""
    _api.save_model(model, filepath, overwrite, zipped, **kwargs)


def load_model(filepath: Any, custom_objects: dict[str, Any] | None = None,
               compile: bool = True, safe_mode: bool = True) -> Any:
    """See ``ember.nn.models.load_model``."""
    return _api.load_model(filepath, custom_objects, compile, safe_mode)


def save_weights(model: Any, filepath: Any, overwrite: bool = True,
                 max_shard_size: Any = None) -> None:
    """``model.save_weights(filepath)`` (Keras's ``keras.saving.save_weights``)."""
    _api.save_weights(model, filepath, overwrite, max_shard_size)


def load_weights(model: Any, filepath: Any, skip_mismatch: bool = False,
                 **kwargs: Any) -> None:
    """``model.load_weights(filepath)`` (Keras's ``keras.saving.load_weights``)."""
    _api.load_weights(model, filepath, skip_mismatch, **kwargs)


save_model.__doc__ = _api.save_model.__doc__
load_model.__doc__ = _api.load_model.__doc__
save_weights.__doc__ = _api.save_weights.__doc__
load_weights.__doc__ = _api.load_weights.__doc__

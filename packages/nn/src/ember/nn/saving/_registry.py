"""Where a saved name finds its class: ember's own table, registered names, custom objects.

A file names classes and functions (``{"module": "keras.layers", "class_name": "Dense"}``)
but never decides what runs: nothing here imports a module a file names or looks a name
up in one. A name resolves, in this order, through ``custom_objects`` (the caller's own
mapping, and any ``custom_object_scope`` around the call), the names given by
``register_keras_serializable``, and a fixed table of ember's built-in classes and
functions (layers, models, optimizers, schedules, initializers, regularizers, constraints,
losses, metrics, activations), each checked to be of the kind its module says.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

_REGISTRY: dict[str, Any] = {}
_SCOPES: contextvars.ContextVar[tuple[dict[str, Any], ...]] = contextvars.ContextVar(
    "ember_custom_object_scopes", default=())


def register_keras_serializable(package: str = "Custom", name: str | None = None
                                ) -> Callable[[Any], Any]:
    """A decorator that registers a class or function under ``"package>name"``.

    A saved model names a registered class by that name (its ``registered_name``), and
    ``load_model`` finds it there: register every class of your own that a saved model
    holds (or pass it in ``custom_objects``).

    Args:
        package: the name's prefix (``"Custom"`` by default, as in Keras).
        name: the name after the prefix (the class's or function's name by default).

    Returns:
        The decorator; it returns what it decorates unchanged.

    Raises:
        ValueError: another object is already registered under that name, or ``package``
            contains ``">"``.

    Examples:
        >>> from ember import nn
        >>> @nn.saving.register_keras_serializable(package="Doc")
        ... class Twice(nn.layers.Layer):
        ...     def call(self, x):
        ...         return x * 2
        >>> nn.saving.get_registered_name(Twice)
        'Doc>Twice'
        >>> nn.saving.get_registered_object("Doc>Twice") is Twice
        True
    """
    if ">" in package:
        raise ValueError(f"register_keras_serializable: package={package!r} must not "
                         f"contain '>'")

    def decorate(obj: Any) -> Any:
        key = f"{package}>{name or obj.__name__}"
        held = _REGISTRY.get(key)
        if held is not None and held is not obj and not _same_definition(held, obj):
            raise ValueError(f"register_keras_serializable: {key!r} is already registered "
                             f"to {held!r}")
        _REGISTRY[key] = obj
        obj._ember_registered_name = key
        return obj

    return decorate


def _same_definition(a: Any, b: Any) -> bool:
    """The same class defined again (a module or script run twice in one process)."""
    return getattr(a, "__qualname__", None) == getattr(b, "__qualname__", None) and \
        getattr(a, "__module__", None) == getattr(b, "__module__", None)


def get_registered_name(obj: Any) -> str:
    """The name ``obj`` was registered under, else its plain name (as Keras)."""
    if isinstance(obj, type):
        obj = obj.__dict__.get("_ember_functional_of", obj)  # (see model._functional_class)
        own = obj.__dict__.get("_ember_registered_name")
    else:
        own = getattr(obj, "_ember_registered_name", None)
    return str(own or obj.__name__)


def get_registered_object(name: str, custom_objects: dict[str, Any] | None = None,
                          module_objects: dict[str, Any] | None = None) -> Any:
    """The object registered under ``name``: ``custom_objects`` first, then any
    ``custom_object_scope`` around the call, then ``register_keras_serializable``'s names,
    then ``module_objects``; None when none has it."""
    for table in (custom_objects or {}, *reversed(_SCOPES.get()), _REGISTRY,
                  module_objects or {}):
        if name in table:
            return table[name]
    return None


def get_custom_objects() -> dict[str, Any]:
    """The registered objects by name (the registry itself, as Keras's: changes to it
    register or unregister)."""
    return _REGISTRY


class CustomObjectScope:
    """``with CustomObjectScope({"Name": cls}):`` makes ``load_model`` and
    ``deserialize_keras_object`` find those names inside the block (as Keras)."""

    def __init__(self, *custom_objects: dict[str, Any] | None) -> None:
        merged: dict[str, Any] = {}
        for table in custom_objects:
            if table is not None and not isinstance(table, dict):
                raise TypeError(f"CustomObjectScope: expected dicts of name -> object, got "
                                f"{type(table).__name__}")
            merged.update(table or {})
        self.custom_objects = merged
        self._token: Any = None

    def __enter__(self) -> CustomObjectScope:
        self._token = _SCOPES.set((*_SCOPES.get(), self.custom_objects))
        return self

    def __exit__(self, *exc: Any) -> None:
        _SCOPES.reset(self._token)


custom_object_scope = CustomObjectScope


# --- ember's built-in table ---------------------------------------------------------

# A saved config's module -> the kind of object it holds. Keras's public module names,
# ember's own, and (for configs ember wrote before) the modules ember's classes live in.
_KINDS = {
    "keras": "model", "keras.models": "model", "keras.src.models.functional": "model",
    "keras.src.models.sequential": "model", "keras.src.models.model": "model",
    "ember.nn": "model", "ember.nn.models": "model",
    "keras.layers": "layer", "ember.nn.layers": "layer",
    "keras.optimizers": "optimizer", "ember.nn.optimizers": "optimizer",
    "keras.optimizers.schedules": "schedule", "ember.nn.optimizers.schedules": "schedule",
    "keras.initializers": "initializer", "ember.nn.initializers": "initializer",
    "keras.regularizers": "regularizer", "ember.nn.regularizers": "regularizer",
    "keras.constraints": "constraint", "ember.nn.constraints": "constraint",
    "keras.losses": "loss", "ember.nn.losses": "loss",
    "keras.metrics": "metric", "ember.nn.metrics": "metric",
    "keras.activations": "activation", "ember.nn.activations": "activation",
    # keras.ops called on a functional model's symbolic tensors (nn.layers.operations)
    "keras.src.ops.numpy": "operation", "ember.nn.layers.operations": "operation",
}

# the module a saved config gives each kind (Keras's names, so Keras 3 reads them)
SAVED_MODULE = {"model": "keras", "layer": "keras.layers", "optimizer": "keras.optimizers",
                "schedule": "keras.optimizers.schedules",
                "initializer": "keras.initializers", "regularizer": "keras.regularizers",
                "constraint": "keras.constraints", "loss": "keras.losses",
                "metric": "keras.metrics", "activation": "keras.activations",
                "operation": "keras.src.ops.numpy"}

# ember classes whose own name is spelt otherwise in Keras 3 (ember's RMSprop is its
# RMSProp class): a saved config gives Keras's spelling, which ember reads as well
_KERAS_SPELLING = {("optimizer", "RMSProp"): "RMSprop"}


def saved_class_name(kind: str, cls: type) -> str:
    """The ``class_name`` a config of an ember built-in class gives (Keras 3's)."""
    return _KERAS_SPELLING.get((kind, cls.__name__), cls.__name__)


def _nn() -> Any:
    return sys.modules["ember.nn"]


def _bases() -> dict[str, tuple[type, ...]]:
    nn = _nn()
    from .. import keras_losses, metrics
    from ..layers import operations
    from ..optimizers import schedules

    return {"model": (nn.Model,), "layer": (nn.layers.Layer,),
            "operation": (operations._Operation,),
            "optimizer": (nn.optimizers.Optimizer,),
            "schedule": (schedules.LearningRateSchedule,),
            "initializer": (nn.initializers.Initializer,),
            "regularizer": (nn.regularizers.Regularizer,),
            "constraint": (nn.constraints.Constraint,),
            "loss": (keras_losses.Loss,), "metric": (metrics.Metric,)}


def _namespaces(kind: str) -> list[Any]:
    nn = _nn()
    from .. import keras_losses, metrics
    from ..layers import operations

    return {"model": [nn.models, nn], "layer": [nn.layers], "operation": [operations],
            "optimizer": [nn.optimizers], "schedule": [nn.optimizers.schedules],
            "initializer": [nn.initializers], "regularizer": [nn.regularizers],
            "constraint": [nn.constraints], "loss": [nn.losses, keras_losses],
            "metric": [metrics]}.get(kind, [])


def builtin_class(module: Any, class_name: str) -> Any:
    """ember's built-in class for a saved ``module`` and ``class_name``, or None.

    Only public names of ember's own namespaces, and only classes of the module's kind
    (a layer for ``keras.layers``): ``("os", "system")`` or ``("keras.layers", "np")``
    find nothing.
    """
    kind = _kind_of(module, class_name)
    if kind is None or kind == "activation" or class_name.startswith("_"):
        return None
    bases = _bases()[kind]
    for ns in _namespaces(kind):
        obj = ns.__dict__.get(class_name)
        if isinstance(obj, type) and issubclass(obj, bases):
            return obj
    return None


# Keras 3 on torch saves an optimizer under its backend's module
# ("keras.src.backend.torch.optimizers.torch_adam"): still the optimizer of that name
_BACKEND_OPTIMIZERS = re.compile(r"keras\.src\.backend\.(torch|tensorflow|jax|numpy)"
                                 r"\.optimizers(\.[a-z_]+)?")


def _kind_of(module: Any, class_name: str) -> str | None:
    if not isinstance(module, str):
        return None
    if module in _KINDS:
        return _KINDS[module]
    if _BACKEND_OPTIMIZERS.fullmatch(module):
        return "optimizer"
    for kind, bases in _bases().items():  # ember's own module paths (configs of old)
        for cls in _all_builtin_classes(kind, bases):
            if cls.__module__ == module and cls.__name__ == class_name:
                return kind
    return None


def _all_builtin_classes(kind: str, bases: tuple[type, ...]) -> Iterator[type]:
    for ns in _namespaces(kind):
        for name, obj in list(ns.__dict__.items()):
            if not name.startswith("_") and isinstance(obj, type) and issubclass(obj, bases):
                yield obj


def builtin_kind_of(obj: Any) -> str | None:
    """The kind of an ember built-in class (``"layer"`` ...) if ``obj`` is an instance of
    one that ember's table finds by its own name, else None (a user's class)."""
    cls = type(obj)
    if cls.__dict__.get("_ember_registered_name"):
        return None
    bases = _bases()
    for kind in ("model", "operation", "layer", "optimizer", "schedule", "initializer", "regularizer",
                 "constraint", "loss", "metric"):
        if isinstance(obj, bases[kind]) and any(
                ns.__dict__.get(cls.__name__) is cls for ns in _namespaces(kind)):
            return kind
    return None


def builtin_function(module: Any, name: str) -> Any:
    """ember's built-in function ``name`` (an activation or a loss), or None."""
    kind = _KINDS.get(module) if isinstance(module, str) else None
    if module == "builtins" or module is None:
        kind = None
    tables = {"activation": _activation_table(), "loss": _loss_table()}
    for k in ([kind] if kind in tables else list(tables)):
        if name in tables[k]:
            return tables[k][name]
    return None


def builtin_function_name(fn: Any) -> tuple[str, str] | None:
    """``(kind, name)`` of an ember built-in activation or loss function, else None."""
    from .. import activations

    name = activations.name_of(fn)
    if name is not None:
        return "activation", name
    for name, f in _loss_table().items():
        if f is fn:
            return "loss", name
    return None


def _activation_table() -> dict[str, Any]:
    from .. import activations

    return dict(activations._NAMES)


def _loss_table() -> dict[str, Any]:
    from .. import losses

    return {k: v for k, v in losses._NAMES.items() if inspect.isfunction(v)}


@contextlib.contextmanager
def scope(custom_objects: dict[str, Any] | None) -> Iterator[None]:
    """``custom_objects`` in force for nested ``from_config`` calls (as Keras)."""
    if not custom_objects:
        yield
        return
    with CustomObjectScope(custom_objects):
        yield

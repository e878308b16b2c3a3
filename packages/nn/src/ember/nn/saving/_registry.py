"""Names for custom classes (Keras's ``keras.saving`` registry).

ember rebuilds layers from their configs by import path (module and class name), so a
class defined in an importable module needs no registration. Registering gives it a
stable name as well: ``get_registered_object`` finds it by that name (for configs written
where the class lived in a script, ``__main__``), and ``get_registered_name`` gives it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_REGISTRY: dict[str, Any] = {}


def register_keras_serializable(package: str = "Custom", name: str | None = None
                                ) -> Callable[[Any], Any]:
    """A decorator that registers a class or function under ``"package>name"``.

    Args:
        package: the name's prefix (``"Custom"`` by default, as in Keras).
        name: the name after the prefix (the class's or function's name by default).

    Returns:
        The decorator; it returns what it decorates unchanged.

    Raises:
        ValueError: another object is already registered under that name.

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
    return str(getattr(obj, "_ember_registered_name", None) or obj.__name__)


def get_registered_object(name: str, custom_objects: dict[str, Any] | None = None) -> Any:
    """The object registered under ``name`` (``custom_objects`` first), else None."""
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    return _REGISTRY.get(name)

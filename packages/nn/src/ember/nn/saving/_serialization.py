"""Objects to Keras 3's config form and back: ``{"module", "class_name", "config",
"registered_name"}`` (plus ``build_config``/``compile_config`` where an object has them).

Serializing writes only data: a function is written by its registered name, never as
code (a lambda is refused: it has no name to find it by). Deserializing resolves each
name through ``_registry`` alone (``custom_objects``, registered names, ember's table),
so a config names what to build but cannot make anything else run.
"""

from __future__ import annotations

import contextlib
import inspect
import types
from collections.abc import Iterator
from typing import Any

import numpy as np

import ember.core as em

from . import _registry

PLAIN_TYPES = (str, int, float, bool)
MAX_DEPTH = 200  # nesting of a config: Keras's deepest real ones are a few dozen


class ConfigError(ValueError):
    """A config that cannot be turned back into objects (the message says where)."""


def serialize_keras_object(obj: Any) -> Any:
    """``obj`` as JSON-able data in Keras 3's config form.

    Plain values stay as they are; lists, tuples and dicts are serialized element by
    element; a numpy array or tensor becomes ``{"class_name": "__numpy__", ...}``; a
    function becomes ``{"class_name": "function", "config": <registered name>}``; an
    object with ``get_config`` becomes ``{"module", "class_name", "config",
    "registered_name"}`` (ember's built-in classes under Keras's module names, such as
    ``"keras.layers"``).

    Raises:
        ValueError: ``obj`` is a lambda (it has no name a file could find it by; define a
            named function and register it with ``register_keras_serializable``), or has
            no ``get_config``.

    Examples:
        >>> from ember import nn
        >>> config = nn.saving.serialize_keras_object(nn.initializers.HeNormal(seed=3))
        >>> config["module"], config["class_name"], config["config"]
        ('keras.initializers', 'HeNormal', {'seed': 3})
    """
    return _serialize(obj, 0)


def _serialize(obj: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"serialize_keras_object: the object is nested more than "
                         f"{MAX_DEPTH} levels deep (a cycle?)")
    if obj is None or isinstance(obj, PLAIN_TYPES):
        return obj
    if isinstance(obj, (list, tuple)):
        return [_serialize(x, depth + 1) for x in obj]
    if isinstance(obj, dict):
        return {str(k): _serialize(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, bytes):
        return {"class_name": "__bytes__", "config": {"value": obj.decode("utf-8")}}
    if isinstance(obj, slice):
        return {"class_name": "__slice__", "config": {
            "start": _serialize(obj.start, depth + 1), "stop": _serialize(obj.stop, depth + 1),
            "step": _serialize(obj.step, depth + 1)}}
    if obj is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(obj, np.dtype):
        return str(obj)
    if isinstance(obj, (np.generic, np.ndarray, em.Tensor, em.Variable)):
        a = np.asarray(obj.numpy() if isinstance(obj, (em.Tensor, em.Variable)) else obj)
        if a.ndim == 0 and not isinstance(obj, (em.Tensor, em.Variable)):
            return a.item()
        return {"class_name": "__numpy__", "config": {"value": a.tolist(),
                                                      "dtype": str(a.dtype)}}
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return _serialize_function(obj)
    if isinstance(obj, type):
        raise ValueError(f"serialize_keras_object: cannot save the class {obj.__name__} "
                         f"itself, only instances with get_config()")
    keras_config = getattr(obj, "keras_config", None)
    if callable(keras_config):  # em.random_uniform_initializer(...): saved as Keras's class
        from .. import initializers

        obj = initializers.deserialize(keras_config())
    get_config = getattr(obj, "get_config", None)
    if get_config is None:
        raise ValueError(f"serialize_keras_object: {type(obj).__name__} has no get_config(), "
                         f"so it cannot be saved; give it get_config() (and from_config())")
    inner = get_config()
    if not isinstance(inner, dict):
        raise TypeError(f"{type(obj).__name__}.get_config() must return a dict, got "
                        f"{type(inner).__name__}")
    inner = {str(k): _serialize(v, depth + 1) for k, v in inner.items()}
    kind = _registry.builtin_kind_of(obj)
    cls = obj.__class__  # (a wrapper that stands for its class, e.g. a DistributedOptimizer)
    if kind is not None:
        config = {"module": _saved_module(kind, cls),
                  "class_name": _registry.saved_class_name(kind, cls),
                  "config": inner,  # Keras names its operations' classes here too
                  "registered_name": cls.__name__ if kind == "operation" else None}
    else:
        module = None if cls.__module__ == "__main__" else cls.__module__
        config = {"module": module, "class_name": cls.__name__, "config": inner,
                  "registered_name": _registry.get_registered_name(cls)}
    build = getattr(obj, "get_build_config", None)
    if callable(build):
        build_config = build()
        if build_config is not None:
            config["build_config"] = _serialize(build_config, depth + 1)
    compile_config = getattr(obj, "get_compile_config", None)
    if callable(compile_config):
        cc = compile_config()
        if cc is not None:
            config["compile_config"] = _serialize(cc, depth + 1)
    return config


def _saved_module(kind: str, cls: type) -> str:
    if kind == "model" and cls.__name__ == "Functional":
        return "keras.src.models.functional"
    if kind == "operation" and cls.__name__ == "OpLambda":  # ember's own: no Keras twin
        return "ember.nn.layers.operations"
    return _registry.SAVED_MODULE[kind]


def _serialize_function(fn: Any) -> dict[str, Any]:
    name = getattr(fn, "__name__", "")
    if name == "<lambda>":
        raise ValueError(
            "serialize_keras_object: a lambda cannot be saved: ember saves functions by "
            "name, never as code. Define it with def, register it with "
            "@nn.saving.register_keras_serializable(), and use that function instead")
    builtin = _registry.builtin_function_name(fn)
    if builtin is not None:
        kind, key = builtin
        return {"module": _registry.SAVED_MODULE[kind], "class_name": "function",
                "config": key, "registered_name": key}
    registered = _registry.get_registered_name(fn)
    module = getattr(fn, "__module__", None)
    return {"module": None if module == "__main__" else module, "class_name": "function",
            "config": registered, "registered_name": registered}


def deserialize_keras_object(config: Any, custom_objects: dict[str, Any] | None = None,
                             safe_mode: bool = True, **kwargs: Any) -> Any:
    """The object ``config`` describes (``serialize_keras_object``'s inverse).

    Classes and functions are found through ``custom_objects``, names registered with
    ``register_keras_serializable``, and ember's built-in table, never by importing the
    module a config names. Python code in a config (Keras's ``__lambda__``) is refused
    whatever ``safe_mode`` says: ember never loads bytecode (``safe_mode=False`` is taken
    for Keras's sake and changes nothing).

    Raises:
        ValueError: a name that resolves to nothing (the message says how to register
            it), a lambda, or a malformed config (nested too deep, wrong types).

    Examples:
        >>> from ember import nn
        >>> dense = nn.saving.deserialize_keras_object(
        ...     {"module": "keras.layers", "class_name": "Dense", "config": {"units": 2}})
        >>> type(dense).__name__, dense.units
        ('Dense', 2)
    """
    if kwargs.keys() - {"module_objects", "printable_module_name"}:
        raise TypeError(f"deserialize_keras_object: unexpected keyword arguments "
                        f"{sorted(kwargs.keys() - {'module_objects', 'printable_module_name'})}")
    if not isinstance(safe_mode, bool):
        raise TypeError(f"deserialize_keras_object: safe_mode must be a bool, got "
                        f"{safe_mode!r}")
    module_objects = kwargs.get("module_objects")
    if isinstance(config, str) and module_objects and config in module_objects:
        return module_objects[config]
    with _registry.scope(custom_objects):
        return _deserialize(config, 0, "config", module_objects)


def _deserialize(config: Any, depth: int, where: str, module_objects: Any = None) -> Any:
    if depth > MAX_DEPTH:
        raise ConfigError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    if config is None or isinstance(config, PLAIN_TYPES):
        return config
    if isinstance(config, (list, tuple)):
        return [_deserialize(x, depth + 1, f"{where}[{i}]", module_objects)
                for i, x in enumerate(config)]
    if not isinstance(config, dict):
        return config  # already an object (a from_config that deserializes its own)
    if "class_name" not in config or "config" not in config:
        return {k: _deserialize(v, depth + 1, f"{where}.{k}", module_objects)
                for k, v in config.items()}
    class_name, inner = config["class_name"], config["config"]
    if not isinstance(class_name, str):
        raise ConfigError(f"{where}: class_name must be a string, got {class_name!r:.80}")
    special = _special(class_name, inner, depth, where, module_objects)
    if special is not _NOT_SPECIAL:
        return special
    module = config.get("module")
    registered = config.get("registered_name")
    for key, value in (("module", module), ("registered_name", registered)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{where}: {key} must be a string or null, got {value!r:.80}")
    if class_name == "function":
        return _function(inner, module, registered, where, module_objects)
    if inner is None:
        inner = {}
    if not isinstance(inner, dict):
        raise ConfigError(f"{where}: the config of {class_name!r} must be a dict, got "
                          f"{type(inner).__name__}")
    if _is_policy(module, class_name):
        name = inner.get("name")
        if not isinstance(name, str):
            raise ConfigError(f"{where}: a {class_name} config needs a string name")
        return name
    if "module" not in config and registered is None:  # Keras 2's form (and ember's
        # initializers.serialize): a built-in class by its name alone, when unambiguous
        cls = _by_name_alone(class_name, where, module_objects)
    else:
        cls = resolve_class(class_name, module, registered, where, module_objects)
    if inspect.isfunction(cls):
        return cls
    functional = {"layers", "input_layers", "output_layers"} <= inner.keys()
    if not (getattr(cls, "_ember_raw_config", False) or functional):
        inner = {k: _deserialize(v, depth + 1, f"{where}.{class_name}.{k}", module_objects)
                 for k, v in inner.items()}
    from_config = getattr(cls, "from_config", None)
    with _reported(where, f"could not build {class_name} from its config"):
        obj = from_config(dict(inner)) if from_config is not None else cls(**inner)
    build_config = config.get("build_config")
    if build_config and hasattr(obj, "build") and not getattr(obj, "built", True):
        with _reported(where, f"could not build {class_name} as its build_config says"):
            build_from_config(obj, build_config, where)
    compile_config = config.get("compile_config")
    if compile_config and callable(getattr(obj, "compile_from_config", None)):
        compile_args = _deserialize(compile_config, depth + 1, f"{where}.compile_config",
                                    module_objects)
        with _reported(where, f"could not compile {class_name} as its compile_config says"):
            obj.compile_from_config(compile_args)
    return obj


@contextlib.contextmanager
def _reported(where: str, what: str) -> Iterator[None]:
    """Whatever a class raises while a config is turned into objects, as a ConfigError
    that says where in the config (a hostile value may make any exception)."""
    try:
        yield
    except ConfigError:
        raise
    except (Exception, RecursionError) as e:  # reported, with its type
        raise ConfigError(f"{where}: {what}: {type(e).__name__}: {e}") from e


_NOT_SPECIAL = object()


def _special(class_name: str, inner: Any, depth: int, where: str, module_objects: Any) -> Any:
    if class_name == "__numpy__" or class_name == "__tensor__":
        if not isinstance(inner, dict) or not isinstance(inner.get("dtype"), str):
            raise ConfigError(f"{where}: {class_name} needs a value and a dtype")
        dtype = np.dtype(inner["dtype"]) if inner["dtype"] != "bfloat16" else None
        if dtype is None or dtype.kind not in "biufc":
            raise ConfigError(f"{where}: {class_name} of dtype {inner['dtype']!r}: only "
                              f"numbers are read")
        return np.array(inner.get("value"), dtype=dtype)
    if class_name == "__bytes__":
        value = inner.get("value") if isinstance(inner, dict) else None
        if not isinstance(value, str):
            raise ConfigError(f"{where}: __bytes__ needs a string value")
        return value.encode("utf-8")
    if class_name == "__ellipsis__":
        return Ellipsis
    if class_name == "__slice__":
        if not isinstance(inner, dict):
            raise ConfigError(f"{where}: __slice__ needs start, stop and step")
        parts = [_deserialize(inner.get(k), depth + 1, where, module_objects)
                 for k in ("start", "stop", "step")]
        if not all(p is None or isinstance(p, int) for p in parts):
            raise ConfigError(f"{where}: a slice's start, stop and step must be ints")
        return slice(*parts)
    if class_name in ("__lambda__", "__typespec__"):
        raise ConfigError(
            f"{where}: the config holds Python code ({class_name}); ember never loads "
            f"code from a file, whatever safe_mode says. Save the function by name: "
            f"define it with def, register it with @nn.saving.register_keras_serializable() "
            f"(or pass it in custom_objects)")
    if class_name == "__keras_tensor__":
        raise ConfigError(f"{where}: a symbolic tensor outside a functional model's node")
    return _NOT_SPECIAL


def _is_policy(module: Any, class_name: str) -> bool:
    return class_name in ("DTypePolicy", "FloatDTypePolicy", "Policy") and module in (
        "keras", "keras.dtype_policies", "keras.mixed_precision", "ember.nn.mixed_precision")


def _unknown(kind: str, name: str, module: Any, registered: Any, where: str) -> ConfigError:
    full = f"{module}.{name}" if module else name
    label = f"{registered!r} ({full})" if registered and registered != name else repr(full)
    return ConfigError(
        f"{where}: unknown {kind} {label}: ember resolves saved names only through "
        f"custom_objects, classes and functions registered with "
        f"@nn.saving.register_keras_serializable(), and its own built-in ones; it never "
        f"imports a module a file names. Register it, or pass custom_objects="
        f"{{{name!r}: ...}}")


def resolve_class(class_name: str, module: Any, registered: Any, where: str,
                  module_objects: Any = None) -> Any:
    """The class a config names (see ``_registry``), or a ConfigError."""
    for key in (registered, class_name):
        if isinstance(key, str):
            found = _registry.get_registered_object(key, None, module_objects)
            if found is not None:
                return found
    if isinstance(registered, str) and registered != class_name:
        # a registered name that names nothing registered: never fall back to a
        # built-in class of the same class_name (Keras refuses this too)
        raise _unknown("class", class_name, module, registered, where)
    found = _registry.builtin_class(module, class_name)
    if found is None:
        raise _unknown("class", class_name, module, registered, where)
    return found


def _by_name_alone(class_name: str, where: str, module_objects: Any) -> Any:
    found = _registry.get_registered_object(class_name, None, module_objects)
    if found is not None:
        return found
    kinds = {}
    for module in _registry.SAVED_MODULE.values():
        cls = _registry.builtin_class(module, class_name)
        if cls is not None:
            kinds[module] = cls
    if len(set(kinds.values())) == 1:
        return next(iter(kinds.values()))
    if kinds:
        raise ConfigError(f"{where}: {class_name!r} without a module names ember's "
                          f"{sorted(kinds)} alike; give its module (\"keras.losses\", ...)")
    raise _unknown("class", class_name, None, None, where)


def _function(inner: Any, module: Any, registered: Any, where: str,
              module_objects: Any) -> Any:
    if not isinstance(inner, str):
        raise ConfigError(f"{where}: a function's config must be its name (a string), got "
                          f"{type(inner).__name__}")
    for key in (registered, inner):
        if isinstance(key, str):
            found = _registry.get_registered_object(key, None, module_objects)
            if found is not None:
                return found
    found = _registry.builtin_function(module, inner)
    if found is None:
        raise _unknown("function", inner, module, registered, where)
    return found


def build_from_config(obj: Any, build_config: Any, where: str = "config") -> None:
    """Build ``obj`` as its ``build_config`` says: with its ``build_from_config`` when it
    has one, else as ``build_by_calling`` does."""
    own = getattr(obj, "build_from_config", None)
    if callable(own):
        own(build_config)
    else:
        build_by_calling(obj, build_config, where)


def build_by_calling(obj: Any, build_config: Any, where: str = "config") -> None:
    """Make a layer's or model's variables: one call on zeros of ``build_config``'s
    ``input_shape`` (batch 1 where it is None; ``input_dtype`` where given), in
    inference mode, recording nothing."""
    if not isinstance(build_config, dict) or "input_shape" not in build_config:
        return
    zeros = _zeros_of(build_config["input_shape"], build_config.get("input_dtype"), where)
    with em.recording.paused():
        obj(zeros, training=False)


MAX_INPUT_ELEMENTS = 1 << 26  # per example (256 MiB of float32): a hostile shape is refused


def check_shape(shape: Any, where: str) -> list[int]:
    """``shape`` (a list of ints and nulls) with each null as 1, or a ConfigError: not a
    shape, or more than ``MAX_INPUT_ELEMENTS`` values per example."""
    if not isinstance(shape, list) or not shape or not all(
            s is None or (isinstance(s, int) and s >= 0 and not isinstance(s, bool))
            for s in shape):
        raise ConfigError(f"{where}: a shape must be a list of ints and nulls, got "
                          f"{shape!r:.120}")
    dims = [1 if s is None else s for s in shape]
    if float(np.prod(dims[1:], dtype=np.float64)) > MAX_INPUT_ELEMENTS:
        raise ConfigError(f"{where}: the shape {shape} holds more than {MAX_INPUT_ELEMENTS} "
                          f"values per example")
    return dims


def _zeros_of(shape: Any, dtype: Any, where: str) -> Any:
    if isinstance(shape, list) and shape and all(isinstance(s, list) for s in shape):
        dtypes = dtype if isinstance(dtype, list) else [dtype] * len(shape)
        return [_zeros_of(s, d, where) for s, d in zip(shape, dtypes)]
    dims = check_shape(shape, f"{where} (build_config input_shape)")
    dims[0] = 1
    dt = em.float32 if dtype is None else _dtype(dtype, where)
    return em.zeros(tuple(dims), dtype=dt)


def _dtype(name: Any, where: str) -> Any:
    try:
        dt = np.dtype(em.as_dtype(name))
    except Exception as e:  # any unknown name
        raise ConfigError(f"{where}: unknown dtype {name!r:.40}") from e
    if dt.kind not in "biuf":
        raise ConfigError(f"{where}: dtype {name!r:.40} is not a number type")
    return dt

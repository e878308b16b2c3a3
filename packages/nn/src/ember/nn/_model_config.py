"""Configs of Sequential and functional models in Keras 3's form.

A functional model's config lists its layers (``nn.Input`` placeholders as Keras's
``InputLayer`` entries), each with the calls that the model makes of it
(``inbound_nodes``: the arguments, a symbolic tensor written as ``__keras_tensor__`` with
its ``keras_history`` ``[layer name, call index, output index]``), and the model's
``input_layers`` and ``output_layers``. ``from_config`` makes each layer again and replays
the calls, each as soon as what it reads exists (layers shared at different depths).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from .layers import _symbolic
from .saving import _serialization

_INPUT_LAYER = ("keras.layers", "InputLayer")


def input_layer_config(tensor: Any, name: str) -> dict[str, Any]:
    """A Keras ``InputLayer`` entry for an ``nn.Input`` placeholder."""
    return {"module": _INPUT_LAYER[0], "class_name": _INPUT_LAYER[1],
            "config": {"batch_shape": list(tensor.shape), "dtype": str(np.dtype(tensor.dtype)),
                       "sparse": False, "ragged": False, "name": name, "optional": False},
            "registered_name": None, "name": name, "inbound_nodes": []}


def is_input_layer(data: Any) -> bool:
    return isinstance(data, dict) and data.get("class_name") == "InputLayer" and \
        data.get("module") in ("keras.layers", "keras.src.engine.input_layer", None)


def input_from_config(data: dict[str, Any], where: str) -> Any:
    """The ``nn.Input`` an ``InputLayer`` entry describes."""
    config = data.get("config")
    if not isinstance(config, dict):
        raise _serialization.ConfigError(f"{where}: an InputLayer entry needs a config dict")
    shape = config.get("batch_shape", config.get("batch_input_shape"))
    _serialization.check_shape(shape, f"{where} (InputLayer batch_shape)")
    for flag in ("sparse", "ragged", "optional"):
        if config.get(flag):
            raise _serialization.ConfigError(f"{where}: InputLayer {flag}=True is not "
                                             f"supported by ember")
    dtype = _serialization._dtype(config.get("dtype") or "float32", where)
    name = config.get("name", data.get("name"))
    if name is not None and not isinstance(name, str):
        raise _serialization.ConfigError(f"{where}: an InputLayer's name must be a string")
    return _symbolic.Input(batch_shape=tuple(shape or ()), dtype=dtype, name=name)


# --- functional models -----------------------------------------------------------------

def functional_config(model: Any) -> dict[str, Any]:
    """``model.get_config()`` of a functional model, in Keras 3's form."""
    spec, outputs, nodes = model._ember.extra["functional"]
    flat_in = _symbolic.leaves(spec)
    input_names = model._input_layer_names()
    from .model import keras_layer_order

    own = {id(n) for n in nodes}
    index: dict[int, int] = {}  # id(node) -> its index among the layer's calls in this model
    for layer in keras_layer_order(model):  # (its operation nodes too; no InputLayer)
        k = 1 if _is_functional(layer) else 0  # as Keras: a model's first call is its own
        for node in layer._ember.extra.get("inbound_nodes", []):
            if id(node) in own:
                index[id(node)] = k
                k += 1
    names: dict[int, str] = {id(t): n for t, n in zip(flat_in, input_names)}
    taken = set(input_names)
    for layer in keras_layer_order(model):
        if layer.name in taken:
            raise ValueError(f"{model.name}: two layers (or a layer and an input) are named "
                             f"{layer.name!r}; a functional model's config names each once, "
                             f"so give them distinct names")
        taken.add(layer.name)

    def history(t: Any) -> list[Any]:
        if t.node is None:
            return [names[id(t)], 0, 0]
        return [t.node.layer.name, index[id(t.node)], t.index]

    def tensor(t: Any) -> Any:
        if not isinstance(t, _symbolic.SymbolicTensor):
            return _serialization.serialize_keras_object(t)
        return {"class_name": "__keras_tensor__",
                "config": {"shape": list(t.shape), "dtype": str(np.dtype(t.dtype)),
                           "keras_history": history(t)}}

    layers = [input_layer_config(t, names[id(t)]) for t in flat_in]
    for layer in keras_layer_order(model):  # Keras's order of its entries
        entry = _serialization.serialize_keras_object(layer)
        entry["name"] = layer.name
        entry["inbound_nodes"] = [
            {"args": [_symbolic.map_structure(tensor, node.inputs),
                      *[_symbolic.map_structure(tensor, a) for a in node.args]],
             "kwargs": {k: _symbolic.map_structure(tensor, v) for k, v in node.kwargs.items()}}
            for node in layer._ember.extra.get("inbound_nodes", []) if id(node) in own]
        layers.append(entry)
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": _symbolic.map_structure(history, _listed(spec)),
            "output_layers": _symbolic.map_structure(history, _listed(outputs))}


def _listed(structure: Any) -> Any:
    return list(structure) if isinstance(structure, tuple) else structure


def _is_functional(layer: Any) -> bool:
    from .model import Functional

    return isinstance(layer, Functional)


def functional_from_config(cls: Any, config: Any, where: str = "config") -> Any:
    """A new functional model (fresh weights) from ``functional_config``'s dict."""
    from .layers.base import Layer

    if not isinstance(config, dict):
        raise _serialization.ConfigError(f"{where}: a functional model's config must be a "
                                         f"dict")
    config = dict(config)
    missing = [k for k in ("layers", "input_layers", "output_layers") if k not in config]
    if missing or not isinstance(config["layers"], list):
        raise _serialization.ConfigError(f"{where}: a functional model's config needs a list "
                                         f"of layers, input_layers and output_layers "
                                         f"(missing {missing})")
    created: dict[str, Any] = {}   # name -> Layer, or an nn.Input placeholder
    made: dict[str, list[Any]] = {}  # name -> outputs of its calls so far, in order
    queues: dict[str, deque[Any]] = {}
    order: list[str] = []
    for i, data in enumerate(config.pop("layers")):
        at = f"{where}.layers[{i}]"
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise _serialization.ConfigError(f"{at}: each layer entry needs a string name")
        name = data["name"]
        if name in created:
            raise _serialization.ConfigError(f"{at}: two layers are named {name!r}")
        if is_input_layer(data):
            created[name] = input_from_config(data, at)
            made[name] = [created[name]]
            continue
        layer = _serialization._deserialize(
            {k: v for k, v in data.items() if k not in ("name", "inbound_nodes")}, 1, at)
        if not isinstance(layer, Layer):
            raise _serialization.ConfigError(f"{at}: expected a layer, got "
                                             f"{type(layer).__name__}")
        created[name] = layer
        made[name] = [None] if _is_functional(layer) else []
        nodes = data.get("inbound_nodes") or []
        if not isinstance(nodes, list):
            raise _serialization.ConfigError(f"{at}: inbound_nodes must be a list")
        queues[name] = deque(nodes)
        order.append(name)

    def ready(ref: Any) -> bool:
        return ref[0] in made and ref[1] < len(made[ref[0]])

    def wanted(data: Any, at: str) -> list[Any]:
        refs: list[Any] = []
        _collect_refs(data, refs, at, 0)
        for ref in refs:
            if ref[0] not in created:
                raise _serialization.ConfigError(f"{at}: reads the output of an unknown "
                                                 f"layer {ref[0]!r}")
        return refs

    waiting: dict[tuple[str, int], list[str]] = {}
    todo = deque(order)
    while todo:
        name = todo.popleft()
        queue = queues[name]
        while queue:
            at = f"{where}.layers[{name!r}].inbound_nodes[{len(made[name])}]"
            refs = wanted(queue[0], at)
            blocked = next((tuple(r[:2]) for r in refs if not ready(r)), None)
            if blocked is not None:
                waiting.setdefault(blocked, []).append(name)
                break
            data = queue.popleft()
            args, kwargs = _node_arguments(data, made, at)
            with _serialization._reported(at, f"could not call layer {name!r}"):
                out = created[name](*args, **kwargs)
            made[name].append(out)
            todo.extend(waiting.pop((name, len(made[name]) - 1), []))
    stuck = [n for n in order if queues[n]]
    if stuck:
        raise _serialization.ConfigError(f"{where}: the layer calls of {stuck[:5]} read "
                                         f"outputs that are never made (a loop, or a "
                                         f"missing call)")

    def tensor_of(ref: Any) -> Any:
        if not (isinstance(ref, list) and len(ref) == 3 and isinstance(ref[0], str)):
            raise _serialization.ConfigError(f"{where}: input_layers and output_layers hold "
                                             f"[layer name, call index, output index] "
                                             f"triples; got {ref!r:.80}")
        return _lookup(ref, made, where)

    def structure(value: Any, depth: int = 0) -> Any:
        if depth > _serialization.MAX_DEPTH:
            raise _serialization.ConfigError(f"{where}: input_layers/output_layers nested "
                                             f"too deeply")
        if isinstance(value, list) and len(value) == 3 and isinstance(value[0], str):
            return tensor_of(value)
        if isinstance(value, list):
            return [structure(v, depth + 1) for v in value]
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return {k: structure(v, depth + 1) for k, v in value.items()}  # inputs by key
        raise _serialization.ConfigError(f"{where}: malformed input_layers/output_layers "
                                         f"{value!r:.80}")

    inputs = structure(config.pop("input_layers"))
    outputs = structure(config.pop("output_layers"))
    name = config.pop("name", None)
    trainable = config.pop("trainable", True)
    if config:
        raise _serialization.ConfigError(f"{where}: unknown keys {sorted(config)} in a "
                                         f"functional model's config")
    model = cls(inputs, outputs, name=name)
    if trainable is False:
        model.trainable = False
    return model


def _collect_refs(data: Any, out: list[Any], at: str, depth: int) -> None:
    if depth > _serialization.MAX_DEPTH:
        raise _serialization.ConfigError(f"{at}: nested too deep")
    if isinstance(data, list):
        for v in data:
            _collect_refs(v, out, at, depth + 1)
    elif isinstance(data, dict):
        if data.get("class_name") == "__keras_tensor__":
            history = (data.get("config") or {}).get("keras_history") if isinstance(
                data.get("config"), dict) else None
            if not (isinstance(history, list) and len(history) == 3
                    and isinstance(history[0], str)
                    and all(isinstance(h, int) and not isinstance(h, bool) and h >= 0
                            for h in history[1:])):
                raise _serialization.ConfigError(f"{at}: a __keras_tensor__ needs a "
                                                 f"keras_history [name, int, int]")
            out.append(history)
            return
        for v in data.values():
            _collect_refs(v, out, at, depth + 1)


def _lookup(ref: list[Any], made: dict[str, list[Any]], at: str) -> Any:
    name, node, index = ref
    calls = made.get(name)
    if calls is None or not isinstance(node, int) or not 0 <= node < len(calls) or \
            calls[node] is None:
        raise _serialization.ConfigError(f"{at}: no call {node} of layer {name!r}")
    leaves = _symbolic.leaves(calls[node])
    if not isinstance(index, int) or not 0 <= index < len(leaves):
        raise _serialization.ConfigError(f"{at}: layer {name!r} has no output {index}")
    return leaves[index]


def _node_arguments(data: Any, made: dict[str, list[Any]], at: str) -> tuple[list[Any], Any]:
    if isinstance(data, list):  # Keras 2's form: [[name, node, index, kwargs], ...]
        refs = [_lookup(list(r[:3]), made, at) for r in data]
        kwargs = data[0][3] if data and len(data[0]) > 3 else {}
        return [refs[0] if len(refs) == 1 else refs], dict(kwargs)
    if not isinstance(data, dict) or not isinstance(data.get("args", []), list) or \
            not isinstance(data.get("kwargs", {}), dict):
        raise _serialization.ConfigError(f"{at}: a call needs args (a list) and kwargs "
                                         f"(a dict)")

    def value(v: Any, depth: int = 0) -> Any:
        if isinstance(v, dict) and v.get("class_name") == "__keras_tensor__":
            return _lookup(v["config"]["keras_history"], made, at)
        if isinstance(v, list):
            return [value(x, depth + 1) for x in v]
        if isinstance(v, dict) and not ("class_name" in v and "config" in v):
            return {k: value(x, depth + 1) for k, x in v.items()}
        return _serialization._deserialize(v, depth + 1, at)

    args = [value(a) for a in data.get("args", [])]
    kwargs = {str(k): value(v) for k, v in data.get("kwargs", {}).items()}
    if not args:
        raise _serialization.ConfigError(f"{at}: a layer call without inputs")
    return args, kwargs


# --- Sequential ----------------------------------------------------------------------

def sequential_config(model: Any, base: dict[str, Any]) -> dict[str, Any]:
    """``Sequential.get_config()`` in Keras 3's form: an ``InputLayer`` first when the
    input is known, each layer's config, and ``build_input_shape``."""
    layers = []
    shape = model._ember.batch_input_shape if model.built else None
    if shape is not None:
        tensor = model._input_tensor
        name = getattr(tensor, "name", None) or "input_layer"
        recorded = model._ember.extra.get("build_input")  # a first call's (ids: ints)
        dtype = model._input[1] if model._input is not None else (
            recorded[1] if recorded and isinstance(recorded[1], str) else model.dtype)
        layers.append(input_layer_config(_symbolic.SymbolicTensor(shape, dtype), name))
    layers += [_serialization.serialize_keras_object(layer) for layer in model.layers]
    config = {**base, "layers": layers}
    if shape is not None:
        config["build_input_shape"] = list(shape)
    return config


def sequential_from_config(cls: Any, config: Any, where: str = "config") -> Any:
    """A new Sequential (fresh weights) from ``sequential_config``'s dict (or the form
    ember wrote before: each layer's ``module``, ``class_name`` and ``config``)."""
    from .layers.base import Layer

    if not isinstance(config, dict) or not isinstance(config.get("layers", []), list):
        raise _serialization.ConfigError(f"{where}: a Sequential config needs a list of "
                                         f"layers")
    config = dict(config)
    entries = config.pop("layers", [])
    build_shape = config.pop("build_input_shape", None)
    kwargs = {k: v for k, v in config.items() if k in ("name", "trainable", "dtype")}
    if set(config) - set(kwargs):
        raise _serialization.ConfigError(f"{where}: unknown keys "
                                         f"{sorted(set(config) - set(kwargs))} in a "
                                         f"Sequential config")
    kwargs = {k: _serialization._deserialize(v, 1, f"{where}.{k}") for k, v in kwargs.items()}
    model = cls(**kwargs)
    for i, data in enumerate(entries):
        at = f"{where}.layers[{i}]"
        if is_input_layer(data):
            model.add(input_from_config(data, at))
            continue
        layer = _serialization._deserialize(data, 1, at)
        if not isinstance(layer, Layer):
            raise _serialization.ConfigError(f"{at}: expected a layer, got "
                                             f"{type(layer).__name__}")
        model.add(layer)
    if build_shape is not None and not model.built and model.layers:
        _serialization.check_shape(build_shape, f"{where}.build_input_shape")
        model.build(tuple(build_shape))
    return model

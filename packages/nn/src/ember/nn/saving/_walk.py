"""Where each variable of a model goes in a weights file: Keras 3's paths.

Keras walks a model's attributes in sorted order (private ones last; a Sequential's or
functional model's ``layers`` first, and a subclassed model's ``layers`` property among
its attributes) and gives every layer and the optimizer a group ``<path>/vars`` holding
its own variables as ``0``, ``1``, ... (trainable ones first, each in the order made). A
layer in a list is named after its class (``layers/dense``, ``layers/dense_1``), never
by its own name, so two copies of a model address the same paths. A layer reached twice
is saved once, at the first path. This module gives ember's models the same paths.

A variable a layer shares with a sub-layer (ember's ``LSTM`` holds its cell's kernel as
``kernel`` too) belongs to the sub-layer, as in Keras, where only the cell owns it.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

import ember.core as em

from ..layers import _tracking


def _snake(name: str) -> str:
    """Keras's ``to_snake_case``: ``Conv2D`` -> ``conv2d``, ``LSTMCell`` -> ``lstm_cell``."""
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return s if not s.startswith("_") else "private" + s


def _name_key(name: str) -> str:
    return f"~{name}" if name.startswith("_") else name


def _unique(name: str, used: dict[str, int]) -> str:
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def _is_optimizer(obj: Any) -> bool:
    from ..optimizers import Optimizer

    return isinstance(obj, Optimizer)


def _graph_model(obj: Any) -> bool:
    from ..model import Functional, Sequential

    return isinstance(obj, (Functional, Sequential))


def _keras_layers(model: Any) -> list[Any]:
    """What Keras's ``Model.layers`` holds: a functional model's layers in Keras's order,
    without its operation nodes (``x + y``: Keras's operations are not layers, and their
    class names would take the numbers of layers of the same snake-case name)."""
    from ..layers.operations import _Operation
    from ..model import Functional, keras_layer_order

    layers = keras_layer_order(model) if isinstance(model, Functional) else model.layers
    return [layer for layer in layers if not isinstance(layer, _Operation)]


def _children(obj: Any, root: bool, include_optimizer: bool) -> list[tuple[str, Any]]:
    """A saveable's attributes in Keras's order: ``(name, child)``."""
    from ..model import Model

    if _is_optimizer(obj):  # a wrapper (LossScaleOptimizer) holds the inner optimizer
        inner = obj.__dict__.get("inner_optimizer")
        return [("inner_optimizer", inner)] if _is_optimizer(inner) else []
    kids = dict(_tracking.children_of(obj))
    first: list[tuple[str, Any]] = []
    if _graph_model(obj):
        first.append(("layers", _keras_layers(obj)))
        kids.pop("layers", None)
    elif isinstance(obj, Model):
        kids.setdefault("layers", obj.layers)  # Keras's Model.layers property
    if root and include_optimizer and getattr(obj, "optimizer", None) is not None:
        kids.setdefault("optimizer", obj.optimizer)
    return first + sorted(kids.items(), key=lambda kv: _name_key(kv[0]))


def saveables(model: Any, include_optimizer: bool = True) -> list[tuple[str, Any]]:
    """``[(path, layer or optimizer), ...]``: each once, at Keras's path ("" for the
    model itself)."""
    out: list[tuple[str, Any]] = []
    visited: set[int] = set()

    def visit(obj: Any, path: str, root: bool = False) -> None:
        if id(obj) in visited:
            return
        visited.add(id(obj))
        out.append((path, obj))
        for name, child in _children(obj, root, include_optimizer):
            child_path = f"{path}/{name}" if path else name
            if _tracking.is_layer(child) or _is_optimizer(child):
                visit(child, child_path)
            elif isinstance(child, (list, tuple, dict)):
                container(child, child_path, set())

    def container(items: Any, path: str, seen: set[int]) -> None:
        if id(items) in seen:
            return
        seen.add(id(items))
        used: dict[str, int] = {}
        for item in (items.values() if isinstance(items, dict) else items):
            if _tracking.is_layer(item) or _is_optimizer(item):
                visit(item, f"{path}/{_unique(_snake(type(item).__name__), used)}")
            elif isinstance(item, (list, tuple, dict)):
                container(item, f"{path}/{_unique('container', used)}", seen)

    visit(model, "", root=True)
    return out


def own_variables(layer: Any) -> list[Any]:
    """The variables a layer saves in its own ``vars`` group: those among its attributes
    (in containers too) that no sub-layer holds, trainable ones first, each in the order
    the layer took them."""
    direct: list[Any] = []
    below: set[int] = set()

    def scan(value: Any) -> None:
        if isinstance(value, em.Variable):
            if all(v is not value for v in direct):
                direct.append(value)
        elif _tracking.is_layer(value):
            below.update(id(v) for v in value.variables)
        elif isinstance(value, dict):
            for v in value.values():
                scan(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                scan(v)

    for value in _tracking.children_of(layer).values():
        scan(value)
    mine = [v for v in direct if id(v) not in below]
    return [v for v in mine if v.trainable] + [v for v in mine if not v.trainable]


# --- optimizers ------------------------------------------------------------------------

# Slots Keras 3 makes in one ``add_optimizer_variables`` call, which interleaves them per
# variable: Adam's, Adamax's, Nadam's and Lamb's (momentum, velocity or norm), Adadelta's
# (accumulated_grad, accumulated_delta_var) and Ftrl's (accumulator, linear)
_INTERLEAVED = (("m", "v"), ("accum_grad", "accum_var"), ("accumulator", "linear"))


def _slot_groups(first: dict[str, Any]) -> list[tuple[str, ...]]:
    """The slots of one variable grouped as Keras orders them: a pair Keras makes together
    interleaved per variable, every other slot a list of its own after them."""
    names = list(first)
    groups: list[tuple[str, ...]] = []
    for pair in _INTERLEAVED:
        if all(n in names for n in pair):
            groups.append(pair)
            names = [n for n in names if n not in pair]
    return groups + [(n,) for n in names]


def optimizer_built(opt: Any) -> bool:
    """Whether the optimizer has made its slots (Keras's ``built``): it has stepped."""
    return bool(opt._slots) or int(opt.iterations.numpy()) > 0


def build_optimizer(opt: Any, var_list: list[Any]) -> None:
    """Make the slots each variable of ``var_list`` will have (as the first update does),
    so that the optimizer's variables are listed for all of them (Keras's ``build``)."""
    for v in var_list:
        if v.uid not in opt._slots:
            opt._slots[v.uid] = {}
            opt._primaries[v.uid] = v
            opt.init_slots(v)


def slot_owner(opt: Any) -> Any:
    """The optimizer that holds the slots: ``opt``, or the one a wrapper (a
    ``LossScaleOptimizer``) wraps."""
    while "_slots" not in opt.__dict__ and _is_optimizer(opt.__dict__.get("inner_optimizer")):
        opt = opt.__dict__["inner_optimizer"]
    return opt


def optimizer_variables(opt: Any, var_list: list[Any]) -> list[Any]:
    """The optimizer's variables in Keras's order: ``iterations``, the learning rate when
    it is a variable, then the slots of ``var_list`` by slot group. A wrapper's are its
    own (a loss scale and its step counter); the wrapped optimizer's are its own group
    (``optimizer/inner_optimizer``)."""
    if "_slots" not in opt.__dict__:
        inner = {id(v) for v in slot_owner(opt).variables}
        return [v for v in opt.variables if id(v) not in inner]
    out = [opt.iterations]
    lr = opt._hypers.get("learning_rate")
    if isinstance(lr, em.Variable):
        out.append(lr)
    slots = [opt._slots.get(v.uid, {}) for v in var_list]
    if not any(slots):
        return out
    template = next(s for s in slots if s)
    for group in _slot_groups(template):
        for own in slots:
            for name in group:
                if name in own:
                    out.append(own[name])
    return out


def value_of(var: Any) -> np.ndarray:
    """A variable's value as a host array."""
    return np.asarray(var.numpy())

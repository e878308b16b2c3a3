"""Attribute tracking: which objects a layer owns, named by attribute path.

A layer keeps one ordered mapping ``name -> child`` (variables, layers, and lists, tuples
or dicts of them, nested). ``variables``, ``trainable_variables`` and the checkpoint
children all read it, so there is exactly one source of truth and nothing is ever keyed by
position. Every attribute is tracked, ``_private`` ones included, as Keras does.

All of ember's own state on a user's layer lives in one ``LayerState`` object stored
under ``STATE`` (set with ``object.__setattr__``), so no attribute name a user picks
(``_name``, ``_built``, ``_output_shape``, ``_layers`` ...) can collide with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.core as em

from ..random import SeedGenerator

STATE = "_ember_state"


class LayerState:
    """ember's bookkeeping for one layer; never a user attribute."""

    __slots__ = ("activity_regularizer", "autocast", "batch_input_shape", "building",
                 "call_losses", "children", "listeners", "loss_fns", "output_shape", "policy",
                 "regularized", "stack", "unannounced", "weight_names", "extra")

    def __init__(self) -> None:
        self.children: dict[str, Any] = {}
        self.weight_names: set[str] = set()        # children named by add_weight
        self.unannounced: dict[int, str] = {}      # id(variable) -> add_weight name
        self.listeners: list[Any] = []
        self.batch_input_shape: tuple[Any, ...] | None = None
        self.output_shape: Any = None
        self.stack: Any = None                     # Sequential's layer list
        self.building = 0
        self.autocast = True
        self.policy: Any = None                    # the layer's DTypePolicy
        self.activity_regularizer: Any = None
        self.call_losses: list[Any] = []           # add_loss() / activity losses of the last call
        self.loss_fns: list[Any] = []              # add_loss's zero-argument callables
        self.regularized: list[tuple[Any, Any]] = []  # (variable, its add_weight regularizer)
        self.extra: dict[str, Any] = {}            # other framework state (compile, fit)


def state_of(obj: Any) -> LayerState | None:
    """The ``LayerState`` of a layer, or None for anything else."""
    try:
        st = object.__getattribute__(obj, "__dict__").get(STATE)
    except AttributeError:
        return None
    return st if isinstance(st, LayerState) else None


def is_layer(value: Any) -> bool:
    """Whether ``value`` is a layer; a Layer subclass that never called
    ``super().__init__()`` (as a tf.Module need not) is initialized here, so that a parent
    it is assigned to tracks it (and the variables it makes later) as any layer."""
    if state_of(value) is not None:
        return True
    init = getattr(type(value), "_ember_state_or_init", None)
    return init is not None and init(value) is not None


def is_trackable(value: Any) -> bool:
    """Variables, layers, random generators (their state is checkpointed, as a
    ``tf.random.Generator`` on a ``tf.Module`` is; Keras's ``SeedGenerator`` too) and
    (nested) containers holding them; tracked containers always."""
    if isinstance(value, (em.Variable, TrackedList, TrackedDict, em.random.Generator,
                          SeedGenerator)) or \
            is_layer(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(is_trackable(v) for v in value)
    if isinstance(value, dict):
        return any(is_trackable(v) for v in value.values())
    return False


def wrap(value: Any) -> Any:
    """Lists and dicts (empty, or holding layers/variables) become tracked containers, nested
    ones too, so later appends and insertions are seen."""
    if type(value) is list and (not value or is_trackable(value)):
        return TrackedList([wrap(v) for v in value])
    if (type(value) is dict and (not value or is_trackable(value))
            and all(isinstance(k, str) and k and "/" not in k for k in value)):
        return TrackedDict({k: wrap(v) for k, v in value.items()})
    if type(value) is tuple and is_trackable(value):
        return tuple(wrap(v) for v in value)
    return value


# Bumped whenever a layer's attribute or a tracked container changes: what is computed from
# the layer tree (a model's held metrics) is kept until it moves.
VERSION = [0]


class _Listened:
    """Keeps checkpoint listeners and tells them about children created later."""

    def _ember_listeners(self) -> list[Any]:
        st = state_of(self)
        if st is not None:
            return st.listeners
        ls = self.__dict__.get("_ember_ckpt_listeners")
        if ls is None:
            ls = []
            object.__setattr__(self, "_ember_ckpt_listeners", ls)
        return ls

    def __checkpoint_listen__(self, listener: Any) -> None:
        self._ember_listeners().append(listener)

    def _ember_notify(self, name: str, child: Any) -> None:
        VERSION[0] += 1
        for listener in list(self._ember_listeners()):
            listener.child_created(self, name, child)


def _trackable_items(pairs: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    return {k: v for k, v in pairs if is_trackable(v)}


class TrackedList(list, _Listened):
    """A list that reports added layers/variables to checkpoint listeners."""

    def __checkpoint_children__(self) -> dict[str, Any]:
        return _trackable_items((str(i), v) for i, v in enumerate(self))

    def append(self, value: Any) -> None:
        super().append(wrap(value))
        self._announce(len(self) - 1)

    def extend(self, values: Any) -> None:
        for v in list(values):
            self.append(v)

    def __iadd__(self, values: Any) -> TrackedList:  # type: ignore[override,misc]
        self.extend(values)
        return self

    def insert(self, index: Any, value: Any) -> None:
        super().insert(index, wrap(value))
        for i in range(len(self)):  # later elements moved: their paths changed
            self._announce(i)

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            super().__setitem__(index, [wrap(v) for v in value])
            for i in range(len(self)):
                self._announce(i)
        else:
            super().__setitem__(index, wrap(value))
            self._announce(index % len(self))

    def _announce(self, i: int) -> None:
        if is_trackable(self[i]):
            self._ember_notify(str(i), self[i])


class TrackedDict(dict, _Listened):
    """A dict that reports new entries to checkpoint listeners."""

    def __checkpoint_children__(self) -> dict[str, Any]:
        return _trackable_items(iter(self.items()))

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str) or not key or "/" in key:
            raise KeyError(f"a tracked dict needs non-empty str keys without '/', got {key!r}")
        value = wrap(value)
        changed = self.get(key, _MISSING) is not value
        super().__setitem__(key, value)
        if changed and is_trackable(value):
            self._ember_notify(key, value)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]


_MISSING = object()


def _items(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        yield from ((str(k), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        yield from ((str(i), v) for i, v in enumerate(value))


def children_of(value: Any) -> dict[str, Any]:
    st = state_of(value)
    return st.children if st is not None else {}


def walk_variables(children: dict[str, Any], prefix: str, seen: set[int],
                   out: dict[str, tuple[Any, bool]], frozen: bool = False) -> None:
    """Fill ``out`` with ``path -> (variable, frozen)`` in attribute order, each once.

    ``frozen`` is True when some layer on the path has ``trainable = False``.
    """
    for name, value in children.items():
        path = f"{prefix}{name}"
        if id(value) in seen:
            continue
        if isinstance(value, em.Variable):
            seen.add(id(value))
            out[path] = (value, frozen)
        elif is_layer(value):
            seen.add(id(value))
            if getattr(value, "_ember_orders_variables", False):
                # a model lists its variables in Keras's order (a functional model's,
                # layer by layer, not its calls'): a model holding it lists them so too,
                # as Keras's does (get_weights/set_weights of equal shapes would permute)
                for sub, (var, fr) in value._ember_variables_by_path().items():
                    if id(var) not in seen:
                        seen.add(id(var))
                        out[f"{path}/{sub}"] = (var, frozen or fr)
                continue
            walk_variables(children_of(value), path + "/", seen, out,
                           frozen or not value.trainable)
        elif isinstance(value, (list, tuple, dict)):
            walk_variables(dict(_items(value)), path + "/", seen, out, frozen)


def walk_layers(children: dict[str, Any], seen: set[int], out: list[Any]) -> None:
    """Direct and nested sub-layers, depth first, each once."""
    for value in children.values():
        if id(value) in seen:
            continue
        if is_layer(value):
            seen.add(id(value))
            out.append(value)
            walk_layers(children_of(value), seen, out)
        elif isinstance(value, (list, tuple, dict)):
            walk_layers(dict(_items(value)), seen, out)


def direct_layers(children: dict[str, Any]) -> list[Any]:
    """Sub-layers one level down (inside containers too), each once."""
    out: list[Any] = []
    seen: set[int] = set()
    for value in children.values():
        stack = [value]
        while stack:
            v = stack.pop(0)
            if is_layer(v):
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
            elif isinstance(v, (list, tuple, dict)):
                stack[:0] = [x for _, x in _items(v)]
    return out

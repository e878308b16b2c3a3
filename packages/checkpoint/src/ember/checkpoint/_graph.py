"""The object-graph walker: which objects a checkpoint holds, and under which paths.

Objects take part by duck typing (see the package docstring for the protocol):

* a **value** (leaf) has ``numpy()`` and ``assign(value)`` (a variable), or is a
  ``numpy.ndarray`` (restored in place);
* a **container** has ``__checkpoint_children__()``, or is a ``dict`` with str keys, a
  ``list`` or a ``tuple`` (elements named ``"0"``, ``"1"``, ...);
* an **optimizer** adds ``__checkpoint_slots__()``, keyed
  ``<owner>/slots/<primary's path>/<slot name>``;
* **opaque state** comes from ``__checkpoint_state__()`` and goes back through
  ``__checkpoint_restore_state__(state)``; ``numpy.random.Generator``, numpy bit
  generators and ``random.Random`` take part natively.

The walk is breadth first with children in sorted name order, so the primary path of an
object reached by several paths is its shortest, then alphabetically first, path; the
others are recorded as aliases. Children that take no part (ints, strings, functions) are
skipped.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SLOTS = "slots"


def is_value(obj: Any) -> bool:
    """True for leaves: numpy arrays and variables (``numpy()`` + ``assign()``)."""
    if isinstance(obj, np.ndarray):
        return True
    return callable(getattr(obj, "numpy", None)) and callable(getattr(obj, "assign", None))


def children(obj: Any) -> Mapping[str, Any] | None:
    """The named children of a container, or None when ``obj`` is not one."""
    hook = getattr(type(obj), "__checkpoint_children__", None)
    if hook is not None:
        return hook(obj)
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, (list, tuple)):
        return {str(i): v for i, v in enumerate(obj)}
    return None


def has_state(obj: Any) -> bool:
    """True when ``obj`` carries opaque state (protocol hooks or a known RNG type)."""
    if hasattr(type(obj), "__checkpoint_state__"):
        return True
    return isinstance(obj, (np.random.Generator, np.random.BitGenerator, random.Random))


def get_state(obj: Any) -> Any:
    if hasattr(type(obj), "__checkpoint_state__"):
        return obj.__checkpoint_state__()
    if isinstance(obj, np.random.Generator):
        return obj.bit_generator.state
    if isinstance(obj, np.random.BitGenerator):
        return obj.state
    return obj.getstate()


def set_state(obj: Any, state: Any) -> None:
    if hasattr(type(obj), "__checkpoint_restore_state__"):
        obj.__checkpoint_restore_state__(state)
    elif isinstance(obj, np.random.Generator):
        obj.bit_generator.state = state
    elif isinstance(obj, np.random.BitGenerator):
        obj.state = state
    else:
        obj.setstate(state)


def participates(obj: Any) -> bool:
    return is_value(obj) or has_state(obj) or children(obj) is not None


def slots(obj: Any) -> Iterable[tuple[Any, str, Any]]:
    hook = getattr(type(obj), "__checkpoint_slots__", None)
    return hook(obj) if hook is not None else ()


def join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def check_name(name: Any, parent: str) -> str:
    if not isinstance(name, str) or not name or "/" in name:
        where = parent or "the checkpoint root"
        raise ValueError(
            f"child names must be non-empty str without '/', got {name!r} under {where}")
    return name


@dataclass
class Graph:
    """The result of a walk. ``paths`` maps id(obj) to every path reaching it, primary first."""

    values: dict[str, Any] = field(default_factory=dict)
    objects: dict[str, Any] = field(default_factory=dict)
    states: dict[str, Any] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    paths: dict[int, list[str]] = field(default_factory=dict)
    keep: dict[int, Any] = field(default_factory=dict)

    def primary(self, obj: Any) -> str | None:
        found = self.paths.get(id(obj))
        return found[0] if found else None

    def _add(self, path: str, obj: Any) -> bool:
        """Record ``obj`` at ``path``; True when the object was not seen before."""
        if path in self.values or path in self.objects or path in self.aliases:
            raise ValueError(f"two objects map to the checkpoint path {path!r}")
        known = self.paths.get(id(obj))
        if known is not None:
            known.append(path)
            self.aliases[path] = known[0]
            return False
        self.paths[id(obj)] = [path]
        self.keep[id(obj)] = obj
        if is_value(obj):
            self.values[path] = obj
            return True
        self.objects[path] = obj
        if has_state(obj):
            self.states[path] = obj
        return True


def walk(roots: Mapping[str, Any], prefix: str = "", graph: Graph | None = None) -> Graph:
    """Walk everything reachable from ``roots`` (named children of the node at ``prefix``)."""
    graph = graph if graph is not None else Graph()
    new: list[str] = []
    queue: deque[tuple[str, Any]] = deque(_named(roots, prefix))
    while queue:
        path, obj = queue.popleft()
        if not graph._add(path, obj) or path not in graph.objects:
            continue
        new.append(path)
        kids = children(obj)
        if kids is not None:
            queue.extend(_named(kids, path))
    for path in new:
        add_slots(graph, path, graph.objects[path])
    return graph


def _named(kids: Mapping[str, Any], parent: str) -> list[tuple[str, Any]]:
    named = [(check_name(k, parent), v) for k, v in kids.items() if participates(v)]
    return [(join(parent, k), v) for k, v in sorted(named, key=lambda kv: kv[0])]


def slot_path(owner_path: str, primary_path: str, slot_name: str) -> str:
    return join(owner_path, f"{SLOTS}/{primary_path}/{check_name(slot_name, owner_path)}")


def add_slots(graph: Graph, owner_path: str, owner: Any) -> list[str]:
    """Record the slots of ``owner``; returns the new paths (slots of unknown primaries skip)."""
    added = []
    for primary, name, slot in slots(owner):
        primary_path = graph.primary(primary)
        if primary_path is None or not participates(slot):
            continue
        path = slot_path(owner_path, primary_path, name)
        if graph._add(path, slot):
            added.append(path)
    return added

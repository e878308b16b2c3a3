"""Attribute tracking: which objects a layer owns, named by attribute path.

A layer keeps one ordered mapping ``name -> child`` (variables, layers, and lists or dicts
of them). ``variables``, ``trainable_variables`` and the checkpoint children all read it,
so there is exactly one source of truth and nothing is ever keyed by position.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.core as em


def is_trackable(value: Any) -> bool:
    """Variables, layers (anything with ``_children``) and containers holding them."""
    if isinstance(value, em.Variable) or hasattr(value, "_children"):
        return True
    if isinstance(value, (TrackedList, TrackedDict)):
        return True
    if isinstance(value, (list, tuple)):
        return any(is_trackable(v) for v in value)
    if isinstance(value, dict):
        return any(is_trackable(v) for v in value.values())
    return False


def wrap(value: Any, owner: Any, name: str) -> Any:
    """Lists and dicts become tracked containers so later appends are seen."""
    if type(value) is list:
        return TrackedList(value)
    if type(value) is dict and all(isinstance(k, str) and "/" not in k for k in value):
        return TrackedDict(value)
    return value


class _Listened:
    """Keeps checkpoint listeners and tells them about children created later."""

    def _listeners_list(self) -> list[Any]:
        ls = self.__dict__.get("_ckpt_listeners")
        if ls is None:
            ls = []
            object.__setattr__(self, "_ckpt_listeners", ls)
        return ls

    def __checkpoint_listen__(self, listener: Any) -> None:
        self._listeners_list().append(listener)

    def _notify(self, name: str, child: Any) -> None:
        for listener in self.__dict__.get("_ckpt_listeners") or ():
            listener.child_created(self, name, child)


class TrackedList(list, _Listened):
    """A list that reports appended layers/variables to checkpoint listeners."""

    def __checkpoint_children__(self) -> dict[str, Any]:
        return {str(i): v for i, v in enumerate(self)}

    def append(self, value: Any) -> None:
        super().append(value)
        self._notify(str(len(self) - 1), value)

    def extend(self, values: Any) -> None:
        for v in values:
            self.append(v)


class TrackedDict(dict, _Listened):
    """A dict that reports new entries to checkpoint listeners."""

    def __checkpoint_children__(self) -> dict[str, Any]:
        return dict(self)

    def __setitem__(self, key: str, value: Any) -> None:
        new = key not in self
        super().__setitem__(key, value)
        if new:
            self._notify(key, value)


def _items(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        yield from ((str(k), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        yield from ((str(i), v) for i, v in enumerate(value))


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
        elif hasattr(value, "_children"):
            seen.add(id(value))
            walk_variables(value._children, path + "/", seen, out,
                           frozen or not value.trainable)
        elif isinstance(value, (list, tuple, dict)):
            walk_variables(dict(_items(value)), path + "/", seen, out, frozen)


def walk_layers(children: dict[str, Any], seen: set[int], out: list[Any]) -> None:
    """Direct and nested sub-layers, depth first, each once."""
    for value in children.values():
        if id(value) in seen:
            continue
        if hasattr(value, "_children"):
            seen.add(id(value))
            out.append(value)
            walk_layers(value._children, seen, out)
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
            if hasattr(v, "_children"):
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
            elif isinstance(v, (list, tuple, dict)):
                stack[:0] = [x for _, x in _items(v)]
    return out

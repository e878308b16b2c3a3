"""Matching a checkpoint file to live objects: all-or-nothing now, the rest when created.

A ``Restorer`` owns one open ``CheckpointFile``. ``restore_existing`` walks the live graph,
checks every match (kind, shape, dtype), reads and checksums every tensor of the file
(also those with no object yet), and only then assigns. Values whose objects do not exist
yet stay *pending*: containers that implement ``__checkpoint_listen__`` report new
children and slots, and each is validated and assigned the moment it appears.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _graph
from ._errors import CheckpointMismatchError, describe
from ._format import CheckpointFile

log = logging.getLogger("ember.checkpoint")


def _describe(dtype: Any, shape: tuple[int, ...]) -> str:
    return f"{np.dtype(dtype).name}[{', '.join(map(str, shape))}]"


def _spec_of(obj: Any) -> tuple[np.dtype, tuple[int, ...]]:
    """dtype and shape of a live value, from its attributes where it has them."""
    try:
        return np.dtype(obj.dtype), tuple(obj.shape)
    except (AttributeError, TypeError):
        array = np.asarray(obj.numpy())
        return array.dtype, array.shape


def assign(obj: Any, array: np.ndarray) -> None:
    """Write a restored array into a live value (in place for ndarrays)."""
    if isinstance(obj, np.ndarray):
        np.copyto(obj, array)
    else:
        obj.assign(array)


@dataclass
class Plan:
    """What a restore step will do, computed before anything is touched."""

    values: list[tuple[str, Any]] = field(default_factory=list)  # (file key, live object)
    states: list[tuple[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _release(mapping: Any) -> None:
    try:
        mapping.close()
    except BufferError:
        pass  # a view escaped (it keeps the mapping alive); the GC closes it later


class Hub:
    """One per ``Checkpoint``: its active restore and the containers listened to.

    Containers hold the hub's listener, so a restore stays alive (and keeps assigning
    values as variables are created) for as long as the objects it restores into, even
    when the ``Checkpoint`` itself was a temporary.
    """

    def __init__(self) -> None:
        self.active: Restorer | None = None
        self._listening: dict[int, Any] = {}
        self.listener = Listener(self)

    def listen(self, obj: Any) -> None:
        hook = getattr(type(obj), "__checkpoint_listen__", None)
        if hook is not None and id(obj) not in self._listening:
            self._listening[id(obj)] = obj
            hook(obj, self.listener)

    def activate(self, restorer: Restorer) -> None:
        previous, self.active = self.active, restorer
        if previous is not None:
            previous.close()


class Listener:
    """Given to ``__checkpoint_listen__``; forwards events to the hub's active restore."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub

    def child_created(self, owner: Any, name: str, child: Any) -> None:
        if self._hub.active is not None:
            self._hub.active.child_created(owner, name, child)

    def slot_created(self, owner: Any, primary: Any, slot_name: str, slot: Any) -> None:
        if self._hub.active is not None:
            self._hub.active.slot_created(owner, primary, slot_name, slot)


@dataclass
class Progress:
    """What one restore has left to do; outlives nothing, references no live object."""

    path: str
    pending_values: set[str]
    pending_states: set[str]
    expect_partial: bool = False

    @property
    def pending(self) -> list[str]:
        return sorted(self.pending_values | self.pending_states)


def _warn_unused(progress: Progress) -> None:
    if progress.pending and not progress.expect_partial:
        pending = progress.pending
        log.warning("%s: %d checkpointed value(s) were never restored, e.g. %s; call "
                    "expect_partial() on the restore status if this is intended",
                    progress.path, len(pending), ", ".join(pending[:5]))


class Restorer:
    """The state of one ``Checkpoint.restore``: its file, and what is still pending."""

    def __init__(self, file: CheckpointFile, roots: Mapping[str, Any],
                 listen: Callable[[Any], None]) -> None:
        self.file = file
        self._roots = roots
        self._listen = listen
        self.graph = _graph.Graph()
        self.progress = Progress(file.path, set(file.entries), set(file.states))
        self.pending_values = self.progress.pending_values
        self.pending_states = self.progress.pending_states
        self._closer = weakref.finalize(self, file.close)
        weakref.finalize(self, _warn_unused, self.progress)

    @property
    def pending(self) -> list[str]:
        return self.progress.pending

    def close(self) -> None:
        """Stop restoring (superseded or failed); unused values are reported if unexpected."""
        _warn_unused(self.progress)
        self.pending_values.clear()
        self.pending_states.clear()
        self._closer()

    def restore_existing(self) -> None:
        _graph.walk(self._roots, graph=self.graph)
        plan = self._plan(list(self.graph.values), list(self.graph.objects))
        self._check(plan)
        mapping = self.file.map()
        try:
            matched = {key for key, _ in plan.values}
            for key in sorted(self.pending_values - matched):
                self.file.view(mapping, key)  # all-or-nothing covers later values, too
            self._apply(plan, list(self.graph.objects.values()), mapping)
        finally:
            _release(mapping)

    def _lookup(self, path: str) -> str | None:
        obj = self._object_at(path)
        for candidate in self.graph.paths.get(id(obj), [path]):
            key = self.file.resolve(candidate)
            if key is not None:
                return key
        return None

    def _object_at(self, path: str) -> Any:
        g = self.graph
        return g.values.get(path, g.objects.get(path))

    def _plan(self, value_paths: list[str], object_paths: list[str]) -> Plan:
        plan = Plan()
        for path in value_paths:
            obj, key = self.graph.values[path], self._lookup(path)
            if key is None:
                continue
            if key not in self.file.entries:
                plan.problems.append(f"{path}: expected a tensor, found an object in the file")
            elif key in self.pending_values:
                self._check_spec(plan, path, key, obj)
        for path in object_paths:
            key = self._lookup(path)
            if key is not None and key in self.file.entries:
                plan.problems.append(f"{path}: expected an object, found a tensor in the file")
            elif key is not None and path in self.graph.states and key in self.pending_states:
                plan.states.append((key, self.graph.states[path]))
        return plan

    def _check_spec(self, plan: Plan, path: str, key: str, obj: Any) -> None:
        entry = self.file.entries[key]
        dtype, shape = _spec_of(obj)
        if dtype != entry.dtype or shape != entry.shape:
            plan.problems.append(
                f"{path}: expected {_describe(dtype, shape)} (the variable), "
                f"found {_describe(entry.dtype, entry.shape)} (saved as {key!r})")
        else:
            plan.values.append((key, obj))

    def _check(self, plan: Plan) -> None:
        if plan.problems:
            raise CheckpointMismatchError(
                f"{self.file.path}: {len(plan.problems)} saved value(s) do not fit the "
                f"objects restoring them; nothing was restored:\n{describe(plan.problems)}")

    def _apply(self, plan: Plan, new_objects: list[Any], mapping: Any = None) -> None:
        """Assign a checked plan: every tensor is read and verified before the first write."""
        if mapping is None:
            arrays = [(key, obj, self.file.read(key)) for key, obj in plan.values]
        else:
            arrays = [(key, obj, self.file.view(mapping, key)) for key, obj in plan.values]
        for key, obj, array in arrays:
            if mapping is not None and not isinstance(obj, np.ndarray):
                array = np.array(array)  # a variable may keep what it is given: no views
            assign(obj, array)
            self.pending_values.discard(key)
        del arrays
        for key, obj in plan.states:
            _graph.set_state(obj, self.file.states[key])
            self.pending_states.discard(key)
        for obj in new_objects:
            self._listen(obj)
        if not self.pending_values and not self.pending_states:
            self._closer()

    def _adopt(self, path: str, obj: Any, walk: Callable[[], Any]) -> None:
        """Walk a newly created object and restore whatever of it is pending."""
        g = self.graph
        if path in g.values or path in g.objects or path in g.aliases:
            return
        before_values, before_objects = len(g.values), len(g.objects)
        walk()
        new_objects = list(g.objects)[before_objects:]
        plan = self._plan(list(g.values)[before_values:], new_objects)
        self._check(plan)
        self._apply(plan, [g.objects[p] for p in new_objects])

    def child_created(self, owner: Any, name: str, child: Any) -> None:
        owner_path = self.graph.primary(owner)
        if owner_path is None or not self.pending or not _graph.participates(child):
            return
        path = _graph.join(owner_path, _graph.check_name(name, owner_path))
        self._adopt(path, child,
                    lambda: _graph.walk({name: child}, prefix=owner_path, graph=self.graph))

    def slot_created(self, owner: Any, primary: Any, slot_name: str, slot: Any) -> None:
        owner_path = self.graph.primary(owner)
        if owner_path is None or not self.pending:
            return
        primary_path = self.graph.primary(primary)
        if primary_path is None:  # created where no listener saw it: look again
            primary_path = _graph.walk(self._roots).primary(primary)
        if primary_path is None or not _graph.participates(slot):
            return
        path = _graph.slot_path(owner_path, primary_path, slot_name)
        self._adopt(path, slot, lambda: self._add_slot(path, slot))

    def _add_slot(self, path: str, slot: Any) -> None:
        if self.graph._add(path, slot) and path in self.graph.objects:
            _graph.walk(_graph.children(slot) or {}, prefix=path, graph=self.graph)

"""Matching a checkpoint file to live objects: all-or-nothing now, the rest when created.

A ``Restorer`` owns one open ``CheckpointFile``. ``restore_existing`` walks the live graph,
checks every match (kind, shape, dtype), reads and checksums every tensor of the file
(also those with no object yet), and only then assigns. numpy arrays, and variables
that offer their own buffer (``__checkpoint_buffer__``), are checked in a mapping of the
file and written in place last. Any other variable gets a fresh array, read once from the
file (its checksum taken beside the read, ``_reading``); one that implements
``__checkpoint_assign__`` keeps that array without a copy and gives back its previous
value for a rollback. Values whose objects do not exist
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

from . import _graph, _reading, _state
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


def assign(obj: Any, array: np.ndarray, undo: list[Callable[[], None]]) -> None:
    """Give a variable its restored value, ``array`` (fresh: nothing else holds it), and
    append to ``undo`` what puts the previous value back.

    ``__checkpoint_assign__(array)`` where the variable has it (it keeps ``array`` and
    returns its own rollback, holding the previous value rather than a copy); otherwise a
    copy of ``numpy()`` is kept and ``assign(array)`` called. The rollback is appended
    before ``assign`` runs: an ``assign`` that raises may have changed the value.
    """
    hook = getattr(type(obj), "__checkpoint_assign__", None)
    if hook is None:
        undo.append(_value_undo(obj))
        obj.assign(array)
        return
    back = hook(obj, array)
    if not callable(back):
        raise TypeError(f"{type(obj).__name__}.__checkpoint_assign__ returned "
                        f"{type(back).__name__}, not a callable that puts the value back")
    undo.append(back)


def buffer_of(obj: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray | None:
    """The variable's own host array, for a restore to write into in place, where it
    offers one (``__checkpoint_buffer__``: only while nothing else could see the write).

    Raises:
        TypeError: the hook returned something other than None or a writable array of
            the value's dtype and shape.
    """
    hook = getattr(type(obj), "__checkpoint_buffer__", None)
    buffer = None if hook is None else hook(obj)
    if buffer is None:
        return None
    if not (isinstance(buffer, np.ndarray) and buffer.flags.writeable
            and buffer.dtype == dtype and buffer.shape == shape):
        raise TypeError(f"{type(obj).__name__}.__checkpoint_buffer__ returned "
                        f"{_what(buffer)}, not None or a writable {_describe(dtype, shape)}")
    return buffer


def _what(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"a{'' if x.flags.writeable else ' read-only'} {_describe(x.dtype, x.shape)}"
    return type(x).__name__


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
            hook(obj, self.listener)
            self._listening[id(obj)] = obj

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
    # a weak reference to the restorer's ``awaited``: dead once the restorer is collected
    awaited: Callable[[], Callable[[], set[str]] | None] | None = None

    @property
    def pending(self) -> list[str]:
        return sorted(self.pending_values | self.pending_states)


def _warn_unused(progress: Progress) -> None:
    """Log the saved values that will never be restored.

    Values still pending under a live container that listens for new children (Adam's
    slots before the first ``apply_gradients``) are not reported: they are restored when
    created. They are reported once the restore is garbage-collected with them unrestored
    (TensorFlow warns when its restore coordinator is deleted, which deferred
    restorations keep alive).
    """
    if not progress.pending or progress.expect_partial:
        return
    awaited_of = progress.awaited() if progress.awaited is not None else None
    awaited = awaited_of() if awaited_of is not None else set()
    pending = [k for k in progress.pending if k not in awaited]
    if pending:
        log.warning("%s: %d checkpointed value(s) were never restored, e.g. %s; call "
                    "expect_partial() on the restore status if this is intended",
                    progress.path, len(pending), ", ".join(pending[:5]))


class Restorer:
    """The state of one ``Checkpoint.restore``: its file, and what is still pending.

    Every step runs in two phases. *Check*: match paths, compare kind, shape and dtype,
    verify checksums, ask state holders to validate their blobs
    (``__checkpoint_validate_state__``) and find read-only targets. *Commit*: assign
    opaque states, then variables, then numpy arrays (which cannot fail once checked),
    keeping each object's previous value; if anything raises, everything assigned in that
    step is put back and the error names the path, the key and why.

    A container whose children are created later (deferred restore) is restored as a
    whole or not at all: values assigned to its earlier children are kept in case a later
    child does not fit, and are put back if one does not.
    """

    def __init__(self, file: CheckpointFile, roots: Mapping[str, Any],
                 listen: Callable[[Any], None]) -> None:
        self.file = file
        self._roots = roots
        self._listen = listen
        self.graph = _graph.Graph()
        self.progress = Progress(file.path, set(file.entries), set(file.states))
        self.pending_values = self.progress.pending_values
        self.pending_states = self.progress.pending_states
        self.refused: dict[str, str] = {}  # file key -> why it will never be restored
        self._refused_containers: set[str] = set()
        self.restored = 0  # values and states assigned so far
        self._undo: dict[str, list[Callable[[], None]]] = {}  # container -> its rollback
        self._closer = weakref.finalize(self, file.close)
        self.progress.awaited = weakref.WeakMethod(self.awaited)
        weakref.finalize(self, _warn_unused, self.progress)

    @property
    def pending(self) -> list[str]:
        return self.progress.pending

    def awaited(self) -> set[str]:
        """Pending keys that a live, listening container may still create (and restore)."""
        listening = {p for p, obj in self.graph.objects.items()
                     if getattr(type(obj), "__checkpoint_listen__", None) is not None}
        out = set()
        for key in self.pending:
            parent = key.rpartition("/")[0]
            while parent:
                if parent in listening:
                    out.add(key)
                    break
                parent = parent.rpartition("/")[0]
        return out

    def close(self) -> None:
        """Stop restoring (superseded or failed); unused values are reported if unexpected."""
        _warn_unused(self.progress)
        self.pending_values.clear()
        self.pending_states.clear()
        self._undo.clear()
        self._closer()

    def restore_existing(self) -> None:
        _graph.walk(self._roots, graph=self.graph)
        plan = self._plan(list(self.graph.values), list(self.graph.objects))
        self._check(plan, "")
        mapping = self.file.map()
        try:
            # every tensor, also those with no object yet: all-or-nothing covers them too
            self._apply(plan, list(self.graph.objects.values()), mapping,
                        check=sorted(self.pending_values))
        finally:
            _release(mapping)

    def matched_anything(self) -> bool:
        """Whether any saved value or state (not the save counter) was restored or can be:
        restored now, or pending under a live container that may still create it."""
        counter = "save_counter" in self.file.entries and "save_counter" not in self.pending
        if self.restored > int(counter):
            return True
        live = set(self.graph.objects)
        return any(key.rpartition("/")[0] in live for key in self.pending)

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
                self._check_state(plan, path, key, self.graph.states[path])
        return plan

    def _check_spec(self, plan: Plan, path: str, key: str, obj: Any) -> None:
        entry = self.file.entries[key]
        dtype, shape = _spec_of(obj)
        if dtype != entry.dtype or shape != entry.shape:
            plan.problems.append(
                f"{path}: expected {_describe(dtype, shape)} (the variable), "
                f"found {_describe(entry.dtype, entry.shape)} (saved as {key!r})")
        elif isinstance(obj, np.ndarray) and not obj.flags.writeable:
            plan.problems.append(f"{path}: the numpy array is read-only (saved as {key!r})")
        else:
            plan.values.append((key, obj))

    def _check_state(self, plan: Plan, path: str, key: str, obj: Any) -> None:
        hook = getattr(type(obj), "__checkpoint_validate_state__", None)
        if hook is not None:
            try:
                hook(obj, self.file.states[key])
            except Exception as err:  # any rejection, reported with its path and key
                plan.problems.append(f"{path}: opaque state saved as {key!r} rejected by "
                                     f"{type(obj).__name__}: {type(err).__name__}: {err}")
                return
        plan.states.append((key, obj))

    def _check(self, plan: Plan, container: str) -> None:
        if not plan.problems:
            return
        if not container:
            raise CheckpointMismatchError(
                f"{self.file.path}: {len(plan.problems)} saved value(s) do not fit the "
                f"objects restoring them; nothing was restored:\n{describe(plan.problems)}")
        undone = self._refuse(container, "; ".join(plan.problems))
        earlier = (f"{undone} value(s) of it assigned a moment ago were put back, so none of "
                   f"{container} is restored" if undone else
                   f"nothing of {container} was restored")
        raise CheckpointMismatchError(
            f"{self.file.path}: {container} was created with values that do not fit the "
            f"checkpoint:\n{describe(plan.problems)}\n{earlier}; its remaining saved values "
            f"are dropped (the restore status lists them). {self.restored} value(s) restored "
            "into other objects are kept.")

    def _refuse(self, container: str, why: str) -> int:
        """Put back what was assigned under ``container``; never restore the rest of it."""
        self._refused_containers.add(container)
        undo = self._undo.pop(container, [])
        for step in reversed(undo):
            step()
        self.restored -= len(undo)
        prefix = container + "/"
        for key in [k for k in self.pending if k.startswith(prefix) or k == container]:
            self.refused[key] = why
            self.pending_values.discard(key)
            self.pending_states.discard(key)
        return len(undo)

    def _apply(self, plan: Plan, new_objects: list[Any], mapping: Any = None,
               container: str = "", check: list[str] | None = None) -> None:
        """Commit a checked plan; on failure put back every object it changed, then raise.

        Every tensor it assigns, and those in ``check``, is checksummed first. numpy
        arrays, and variables that offer their own buffer (with a ``mapping`` to copy
        from), are only checked, then written in place last; other variables' values are
        read into fresh arrays that they keep. Without a mapping, everything is read."""
        arrays = [(key, obj) for key, obj in plan.values if isinstance(obj, np.ndarray)]
        variables = [(key, obj) for key, obj in plan.values if not isinstance(obj, np.ndarray)]
        in_place = [(key, obj) for key, obj in variables if mapping is not None
                    and self._buffer(key, obj) is not None]  # asked again when writing
        written = {id(obj) for _, obj in in_place}
        variables = [(key, obj) for key, obj in variables if id(obj) not in written]
        loaded = self.file.load([key for key, _ in variables],
                                check=[key for key, _ in arrays + in_place] + (check or []),
                                mapping=mapping)
        fresh = _own_arrays(variables, {key for key, _ in arrays + in_place}, loaded)

        def source(key: str) -> np.ndarray:
            return loaded[key] if mapping is None else self.file.view(mapping, key, False)

        undo: list[Callable[[], None]] = []
        key = ""
        try:
            for obj in new_objects:  # first: a hook that raises leaves nothing assigned
                key = f"<__checkpoint_listen__ of {type(obj).__name__}>"
                self._listen(obj)
            for key, obj in plan.states:
                undo.append(_state_undo(obj))
                _graph.set_state(obj, self.file.states[key])
            while fresh:  # popped: once given, the variable alone holds its array
                key, obj, array = fresh.pop(0)
                assign(obj, array, undo)
                del array
            # Last the copies in place: once checked, np.copyto cannot fail, so they need no
            # saved copy. A variable that something took hold of since the check gets a
            # new array instead, first, while a failure can still be put back.
            targets = []
            for key, obj in in_place:
                buffer = self._buffer(key, obj)
                if buffer is None:
                    assign(obj, np.array(source(key)), undo)
                else:
                    targets.append((key, buffer))
            copies = []
            for key, target in targets + arrays:
                undo.append(_array_undo(target) if container else _nothing)
                copies.append((self.file.entries[key].begin, target, source(key)))
            key = "<copies of checked values>"
            copies.sort(key=lambda c: c[0])  # in file order, as checked (copy_all's order)
            _reading.copy_all([(target, value) for _, target, value in copies])
        except Exception as err:
            self._fail(undo, key, err, container)
        loaded.clear()
        for key, _ in plan.values:
            self.pending_values.discard(key)
        for key, _ in plan.states:
            self.pending_states.discard(key)
        self.restored += len(undo)
        if container:
            self._undo.setdefault(container, []).extend(undo)
            self._settle(container)
        if not self.pending_values and not self.pending_states:
            self._undo.clear()
            self._closer()

    def _buffer(self, key: str, obj: Any) -> np.ndarray | None:
        entry = self.file.entries[key]
        return buffer_of(obj, entry.dtype, entry.shape)

    def _settle(self, container: str) -> None:
        """Forget a container's rollback once nothing of it is pending any more."""
        prefix = container + "/"
        if not any(k.startswith(prefix) for k in self.pending):
            self._undo.pop(container, None)

    def _fail(self, undo: list[Callable[[], None]], key: str, err: Exception,
              container: str) -> None:
        broken = []
        for i, step in enumerate(reversed(undo)):
            try:
                step()
            except Exception as again:  # report, keep undoing the others
                unchanged = getattr(step, "unchanged", None)
                if i == 0 and unchanged is not None and unchanged():
                    continue  # the object that failed kept its value
                broken.append(f"{type(again).__name__}: {again}")
        if container:
            try:
                self._refuse(container, f"{key}: {type(err).__name__}: {err}")
            except Exception as again:
                broken.append(f"{container}: {type(again).__name__}: {again}")
            outcome = (f"none of {container} is restored (values assigned to it were put "
                       f"back); {self.restored} value(s) restored into other objects are kept")
        else:
            outcome = "every object changed was put back; nothing was restored"
        if broken:
            outcome = ("putting values back failed too, so objects may hold partly restored "
                       "values:\n" + describe(broken))
        where = f" (while {container} was being created)" if container else ""
        raise CheckpointMismatchError(
            f"{self.file.path}: restoring {key!r}{where} failed: {type(err).__name__}: "
            f"{err}; {outcome}") from err

    def _adopt(self, container: str, obj: Any, walk: Callable[[], Any]) -> None:
        """Walk a newly created object and restore whatever of it is pending."""
        g = self.graph
        if any(container == p or container.startswith(p + "/") for p in self._refused_roots()):
            return
        before_values, before_objects = len(g.values), len(g.objects)
        walk()
        new_objects = list(g.objects)[before_objects:]
        plan = self._plan(list(g.values)[before_values:], new_objects)
        self._check(plan, container)
        self._apply(plan, [g.objects[p] for p in new_objects], container=container)

    def _refused_roots(self) -> set[str]:
        return self._refused_containers

    def child_created(self, owner: Any, name: str, child: Any) -> None:
        owner_path = self.graph.primary(owner)
        if owner_path is None or not self.pending or not _graph.participates(child):
            return
        path = _graph.join(owner_path, _graph.check_name(name, owner_path))
        g = self.graph
        if path in g.values or path in g.objects or path in g.aliases:
            return
        self._adopt(owner_path, child,
                    lambda: _graph.walk({name: child}, prefix=owner_path, graph=self.graph))

    def root_created(self, name: str, child: Any) -> None:
        """A new top-level object (set as an attribute of the ``Checkpoint``)."""
        if not self.pending or not _graph.participates(child):
            return
        g = self.graph
        if name in g.values or name in g.objects or name in g.aliases:
            return
        self._adopt(name, child, lambda: _graph.walk({name: child}, graph=self.graph))

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
        g = self.graph
        if path in g.values or path in g.objects or path in g.aliases:
            return
        group = path.rpartition("/")[0]  # the slots of one variable form one container
        refused = self._refused_roots()
        if any(primary_path == p or primary_path.startswith(p + "/") for p in refused):
            self._refuse(group, f"its variable {primary_path} was not restored")
            return
        self._adopt(group, slot, lambda: self._add_slot(path, slot))

    def _add_slot(self, path: str, slot: Any) -> None:
        if self.graph._add(path, slot) and path in self.graph.objects:
            _graph.walk(_graph.children(slot) or {}, prefix=path, graph=self.graph)


def _own_arrays(variables: list[tuple[str, Any]], elsewhere: set[str],
                loaded: dict[str, np.ndarray]) -> list[tuple[str, Any, np.ndarray]]:
    """(key, variable, array) with an array of each variable's own: a key that restores
    several objects (an alias in the file) gives each a copy. ``loaded`` keeps only the
    arrays that keys in ``elsewhere`` still need."""
    taken, fresh = set(elsewhere), []
    for key, obj in variables:
        fresh.append((key, obj, loaded[key].copy() if key in taken else loaded[key]))
        taken.add(key)
    for key in {key for key, _ in variables} - elsewhere:
        del loaded[key]
    return fresh


def _nothing() -> None:
    pass


def _state_undo(obj: Any) -> Callable[[], None]:
    old = _graph.get_state(obj)
    try:
        old = _state.decode(_state.encode(old))  # a deep copy the object cannot mutate
    except (TypeError, ValueError):
        pass
    return lambda: _graph.set_state(obj, old)


def _value_undo(obj: Any) -> Callable[[], None]:
    old = np.array(obj.numpy())

    def undo() -> None:
        obj.assign(old)

    def unchanged() -> bool:
        try:
            return bool(np.array_equal(np.asarray(obj.numpy()), old, equal_nan=True))
        except (TypeError, ValueError):
            return bool(np.array_equal(np.asarray(obj.numpy()), old))

    undo.unchanged = unchanged  # type: ignore[attr-defined]
    return undo


def _array_undo(obj: np.ndarray) -> Callable[[], None]:
    old = obj.copy()
    return lambda: np.copyto(obj, old)

"""``Checkpoint``: save and restore a graph of objects by the paths that reach them."""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _atomic, _format, _graph, _index, _state, _tracked
from ._errors import CheckpointError, CheckpointNotFoundError, io_error
from ._restore import Hub, Restorer
from ._status import RestoreStatus

log = logging.getLogger("ember.checkpoint")
SAVE_COUNTER = "save_counter"


class Checkpoint:
    """Saves and restores the objects given as keyword arguments, by object-graph path.

    Args:
        **objects: what to checkpoint: variables, numpy arrays, models, optimizers, lists,
            dicts, RNGs, anything implementing the object-graph protocol. Each keyword is
            the first segment of its objects' paths (``model/dense1/kernel``).

    Examples:
        >>> import numpy as np, tempfile, os
        >>> from ember.checkpoint import Checkpoint, latest_checkpoint
        >>> weights = {"w": np.arange(3.0), "b": np.zeros(2)}
        >>> ckpt = Checkpoint(model=weights)
        >>> directory = tempfile.mkdtemp()
        >>> os.path.basename(ckpt.save(os.path.join(directory, "ckpt")))
        'ckpt-1'
        >>> weights["w"][:] = -1.0
        >>> ckpt.restore(latest_checkpoint(directory)).assert_consumed().pending
        []
        >>> weights["w"]
        array([0., 1., 2.])
    """

    def __init__(self, **objects: Any) -> None:
        if SAVE_COUNTER in objects:
            raise ValueError(f"{SAVE_COUNTER!r} is reserved for the checkpoint's own counter")
        for name, obj in objects.items():
            _check_root(name, obj)
        self._objects = dict(objects)
        self._counter = np.zeros((), dtype=np.int64)
        self._hub = Hub()
        self._listeners: list[Any] = []

    @property
    def save_counter(self) -> SaveCounter:
        """How many times ``save`` has run (restored along with everything else).

        Reads like a scalar int64 variable: ``.numpy()``, ``int()``, comparisons and
        arithmetic work; it cannot be assigned.
        """
        return SaveCounter(self._counter)

    def __getattr__(self, name: str) -> Any:
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(f"{type(self).__name__} has no object {name!r} "
                             f"(it holds {', '.join(sorted(objects)) or 'nothing'})")

    def __setattr__(self, name: str, value: Any) -> None:
        """``ckpt.name = obj`` adds ``obj`` under ``name`` (restored at once if pending)."""
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        if name == SAVE_COUNTER or name in type(self).__dict__:
            raise AttributeError(f"{name!r} is the checkpoint's own; pick another name")
        value = _tracked.track(value)  # appends to a list or dict are restored too
        _check_root(name, value)
        self._objects[name] = value
        for listener in list(self._listeners):
            listener.child_created(self, name, value)
        if self._hub.active is not None:
            self._hub.active.root_created(name, value)

    def __delattr__(self, name: str) -> None:
        if name.startswith("_") or name not in self._objects:
            object.__delattr__(self, name)
        else:
            del self._objects[name]

    def __checkpoint_children__(self) -> dict[str, Any]:
        """A ``Checkpoint`` inside another is a container of its objects."""
        return dict(self._objects)

    def __checkpoint_listen__(self, listener: Any) -> None:
        self._listeners.append(listener)

    def _roots(self) -> Mapping[str, Any]:
        return {**self._objects, SAVE_COUNTER: self._counter}

    def write(self, path: str | os.PathLike[str]) -> str:
        """Write a checkpoint to ``path`` (no numbering, no state file); returns ``path``.

        The file is ``path`` plus ``.safetensors`` unless ``path`` already ends so. It is
        written atomically: an existing checkpoint at ``path`` stays intact until the new
        one is complete and durable.
        """
        path = os.fspath(path)
        final = _format.data_file(path)
        directory = os.path.dirname(final)
        if directory:
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError as err:
                raise io_error(err, directory, "create the directory") from err
        _atomic.clean_temporaries(directory)
        values, objects, states, aliases = self._collect()
        _atomic.replace_durably(
            final, lambda fd: _format.write(fd, values, objects, states, aliases, final))
        return path

    def _collect(self) -> tuple[dict[str, np.ndarray], list[str], dict[str, Any], dict]:
        graph = _graph.walk(self._roots())
        values = {p: _host_array(p, v) for p, v in graph.values.items()}
        states = {p: _state.encode(_graph.get_state(o), p) for p, o in graph.states.items()}
        return values, sorted(graph.objects), states, dict(sorted(graph.aliases.items()))

    def save(self, file_prefix: str | os.PathLike[str]) -> str:
        """Increment ``save_counter``, write ``<file_prefix>-<save_counter>``, record it.

        The directory's ``checkpoint`` state file is updated (atomically, after the data is
        durable) so that ``latest_checkpoint`` finds the new checkpoint.

        Returns:
            The checkpoint path, for ``restore``.
        """
        path = self._write_numbered(os.fspath(file_prefix), None)
        directory, name = os.path.split(path)
        try:
            index = _index.read_index(directory) or _index.Index()
        except CheckpointError as err:
            log.warning("replacing an unreadable checkpoint state file: %s", err)
            index = _index.Index()
        index.add(name, time.time())
        _index.write_index(directory, index)
        return path

    def _write_numbered(self, prefix: str, number: int | None) -> str:
        self._counter[...] = self._counter + 1
        try:
            return self.write(f"{prefix}-{int(self._counter) if number is None else number}")
        except BaseException:
            self._counter[...] = self._counter - 1
            raise

    def restore(self, path: str | os.PathLike[str] | None) -> RestoreStatus:
        """Restore from ``path`` (a path from ``save``/``write``/``latest_checkpoint``).

        Everything is validated (presence, kind, shape, dtype, checksums of every tensor)
        before the first value is assigned; on any error nothing changes. Values whose
        objects do not exist yet are assigned when those objects are created.

        Args:
            path: the checkpoint, or None (nothing to restore: a first run).

        Returns:
            A ``RestoreStatus``.

        Raises:
            CheckpointNotFoundError: no such checkpoint.
            CorruptCheckpointError: the file is damaged, truncated or not ember's.
            CheckpointMismatchError: saved values do not fit the live objects.
        """
        if path is None:
            return RestoreStatus(None, self._roots)
        file = self._open(os.fspath(path))
        restorer = Restorer(file, self._roots(), self._hub.listen)
        try:
            restorer.restore_existing()
        except BaseException:
            restorer.progress.expect_partial = True  # the error says it all
            restorer.close()
            raise
        self._hub.activate(restorer)
        status = RestoreStatus(restorer, self._roots)
        if not restorer.matched_anything():
            saved = [k for k in sorted(file.entries) if k != SAVE_COUNTER]
            live = status.unmatched
            warnings.warn(
                f"{file.path}: NOTHING in this checkpoint matched the objects being restored, "
                f"so nothing was restored. Saved: {len(saved)} value(s), e.g. "
                f"{', '.join(saved[:3]) or 'none'}; live objects, e.g. "
                f"{', '.join(live[:3]) or 'none'}. Is it another model's checkpoint? "
                "status.assert_existing_objects_matched() raises CheckpointError on this.",
                stacklevel=2)
        return status

    def read(self, path: str | os.PathLike[str]) -> RestoreStatus:
        """``restore(path)``, under TensorFlow's name for the pair of ``write``."""
        return self.restore(path)

    @staticmethod
    def _open(path: str) -> _format.CheckpointFile:
        final = _format.data_file(path)
        if os.path.isdir(path) and not os.path.exists(final):
            raise CheckpointNotFoundError(
                f"{path} is a directory; pass latest_checkpoint({path!r}) to restore from it")
        try:
            return _format.CheckpointFile(final)
        except FileNotFoundError:
            raise CheckpointNotFoundError(f"no checkpoint at {path} (looked for {final})"
                                          ) from None
        except OSError as err:
            if isinstance(err, CheckpointError):
                raise
            raise io_error(err, final, "open it for reading") from err


def _check_root(name: str, obj: Any) -> None:
    _graph.check_name(name, "")
    if not _graph.participates(obj):
        raise TypeError(
            f"cannot checkpoint {name}={type(obj).__name__}: not a variable, array, "
            "container or state holder (wrap plain numbers in numpy.array)")


class SaveCounter:
    """``Checkpoint.save_counter``: a read-only view of the counter, like a scalar variable.

    Examples:
        >>> import numpy as np
        >>> from ember.checkpoint import Checkpoint
        >>> counter = Checkpoint(w=np.zeros(1)).save_counter
        >>> counter.numpy(), int(counter), counter + 1, counter == 0
        (np.int64(0), 0, 1, True)
    """

    __slots__ = ("_array",)
    dtype = np.dtype(np.int64)
    shape: tuple[int, ...] = ()

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def numpy(self) -> np.int64:
        """The current count as a numpy scalar (a copy)."""
        return np.int64(self._array[()])

    def read_value(self) -> np.int64:
        return self.numpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self._array, dtype=dtype)

    def __int__(self) -> int:
        return int(self._array)

    __index__ = __int__

    def __float__(self) -> float:
        return float(self._array)

    def __bool__(self) -> bool:
        return bool(self._array)

    def __hash__(self) -> int:
        return hash(int(self))

    def __eq__(self, other: object) -> bool:
        return int(self) == other

    def __lt__(self, other: Any) -> bool:
        return int(self) < other

    def __le__(self, other: Any) -> bool:
        return int(self) <= other

    def __gt__(self, other: Any) -> bool:
        return int(self) > other

    def __ge__(self, other: Any) -> bool:
        return int(self) >= other

    def __add__(self, other: Any) -> Any:
        return int(self) + other

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return int(self) - other

    def __rsub__(self, other: Any) -> Any:
        return other - int(self)

    def __mul__(self, other: Any) -> Any:
        return int(self) * other

    __rmul__ = __mul__

    def __format__(self, spec: str) -> str:
        return format(int(self), spec)

    def __repr__(self) -> str:
        return f"<save_counter: {int(self)}>"

    def __str__(self) -> str:
        return str(int(self))


def _host_array(path: str, value: Any) -> np.ndarray:
    # through __array__ where the value has it: ember's is a view, where numpy() copies
    array = value if isinstance(value, np.ndarray) else np.asarray(
        value if hasattr(value, "__array__") else value.numpy())
    if array.dtype.hasobject:
        raise TypeError(f"{path}: object arrays cannot be checkpointed (no pickling)")
    return array


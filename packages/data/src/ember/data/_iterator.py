"""Iterators: the internal protocol every transformation implements, and the public wrapper.

Every internal iterator implements ``__next__`` plus ``get_state()`` (a small JSON value:
positions and counters, never buffered data) and ``set_state(state)``. ``set_state`` is only
ever called on a *fresh* iterator, before its first ``__next__``; that is what lets a
shuffle buffer be rebuilt by replaying from a saved position instead of being stored.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from . import _tracing
from ._state import State, StateError, as_state, transaction, wrap

_STATE_VERSION = 1
MAX_EPOCH = 2**31 - 1  # epochs count iter() calls on one dataset


class _It:
    """Base of internal iterators."""

    def __iter__(self):
        return self

    def __next__(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def get_state(self) -> Any:
        raise TypeError(f"{type(self).__name__} cannot save its position")

    def set_state(self, state: Any) -> None:
        raise TypeError(f"{type(self).__name__} cannot restore a position")


def skip_n(it, n: int) -> None:
    """Advance ``it`` by ``n`` elements (replay), stopping quietly at its end."""
    for _ in itertools.islice(it, n):
        pass


class Iterator:
    """What ``iter(dataset)`` returns: yields elements, and saves/restores its position.

    It takes part in ember checkpoints by duck typing: ``__checkpoint_state__`` returns a
    small JSON value and ``__checkpoint_restore_state__`` makes the iterator continue with
    exactly the elements it would have produced.

    Examples:
        >>> import numpy as np
        >>> from ember import data
        >>> ds = data.Dataset.range(10).shuffle(4, seed=0)
        >>> it = iter(ds)
        >>> _ = next(it); state = it.save_state()
        >>> rest = list(it)
        >>> it2 = iter(ds); it2.restore_state(state)
        >>> [int(x) for x in it2] == [int(x) for x in rest]
        True
    """

    def __init__(self, dataset, epoch: int):
        self._dataset = dataset
        self._epoch = epoch
        self._it = dataset._make_iterator((epoch,))

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self) -> Iterator:
        return self

    def __next__(self):
        if _tracing.recording():  # inside a graph.function: a replay would freeze it
            _tracing.tell_tracers()
        return next(self._it)

    def get_next(self):
        """The next element (tf's ``iterator.get_next()``)."""
        return self.__next__()

    def __checkpoint_state__(self) -> dict:
        return {"version": _STATE_VERSION, "epoch": self._epoch, "state": self._it.get_state()}

    def __checkpoint_prepare_restore__(self, state: dict) -> Callable[[], None]:
        """Check ``state`` in full and build the restored iterator; commit later.

        Everything that can fail happens here (the state is checked field by field and
        the pipeline is replayed to its position); nothing about this iterator or its
        dataset changes until the returned callable runs, and that cannot fail. A
        checkpoint restoring many objects calls this on each first, then every commit.

        Raises:
            ValueError: the state does not fit this pipeline or is malformed; the message
                names the field (e.g. ``state.state.input.pos``).
        """
        if not isinstance(state, dict):
            raise StateError(f"not an ember.data iterator state: expected an object, got "
                             f"{type(state).__name__} {state!r:.100}")
        root = wrap(state)
        if "version" not in root or root["version"] != _STATE_VERSION:
            raise StateError(f"not an ember.data iterator state (field state.version is "
                             f"{root.get('version')!r:.50}, expected {_STATE_VERSION})")
        epoch = root.integer("epoch", high=MAX_EPOCH)
        inner = root["state"]
        with transaction() as commits:
            it = self._dataset._make_iterator((epoch,))
            it.set_state(inner if isinstance(inner, State) else as_state(inner, "state.state"))

        def commit() -> None:
            for action in commits:
                action()
            self._epoch, self._it = epoch, it
            self._dataset._note_epoch(epoch)

        return commit

    def __checkpoint_restore_state__(self, state: dict) -> None:
        """Continue from ``state`` (as saved by ``__checkpoint_state__``), or change nothing.

        Raises:
            ValueError: the state does not fit this pipeline or is malformed; the message
                names the field (e.g. ``state.state.input.pos``). The iterator and its
                dataset are then exactly as they were.
        """
        self.__checkpoint_prepare_restore__(state)()

    save_state = __checkpoint_state__
    restore_state = __checkpoint_restore_state__

"""Iterators: the internal protocol every transformation implements, and the public wrapper.

Every internal iterator implements ``__next__`` plus ``get_state()`` (a small JSON value:
positions and counters, never buffered data) and ``set_state(state)``. ``set_state`` is only
ever called on a *fresh* iterator, before its first ``__next__``; that is what lets a
shuffle buffer be rebuilt by replaying from a saved position instead of being stored.
"""

from __future__ import annotations

import itertools
from typing import Any

_STATE_VERSION = 1


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
        return next(self._it)

    def get_next(self):
        """The next element (tf's ``iterator.get_next()``)."""
        return next(self._it)

    def __checkpoint_state__(self) -> dict:
        return {"version": _STATE_VERSION, "epoch": self._epoch, "state": self._it.get_state()}

    def __checkpoint_restore_state__(self, state: dict) -> None:
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
            raise ValueError(f"not an ember.data iterator state: {state!r:.200}")
        self._epoch = int(state["epoch"])
        self._dataset._note_epoch(self._epoch)
        self._it = self._dataset._make_iterator((self._epoch,))
        self._it.set_state(state["state"])

    save_state = __checkpoint_state__
    restore_state = __checkpoint_restore_state__

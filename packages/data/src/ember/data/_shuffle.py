"""The buffer shuffle, element-wise and as vectorised index arithmetic (same order).

The algorithm (both paths): fill a buffer with the first ``B`` elements. Then, for each
further input element ``x``: draw a slot ``j`` uniformly from ``[0, B)``, emit the slot's
element and put ``x`` in its place. When the input ends, emit what is left in the buffer in
the order of ``rng.permutation(len(buffer))``. Slot draws come from
``rng.integers(0, B, size=DRAW_CHUNK)``, one chunk at a time, drawn when the first input
element of the chunk has arrived.

The vectorised form: the element emitted at step ``t`` is the one that was put into slot
``j[t]`` the last time that slot was drawn (input ``B + t'``), or the slot's initial
element if it was never drawn; a stable argsort of the draws finds every ``t'`` at once.
Iterator state is the number of elements emitted; restoring replays from the seed (cheap
for index streams, which replay indices, not data).
"""

from __future__ import annotations

import numpy as np

from ._dataset import Dataset
from ._index_stream import _EMPTY, IndexedElementIterator, take_exact
from ._iterator import _It, skip_n
from ._seed import op_seed
from ._state import on_commit

DRAW_CHUNK = 4096


def epoch_rng(seed: int, epoch: tuple) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, len(epoch), *epoch]))


def steady_chunk(slots: np.ndarray, j: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Emit for draws ``j`` while inserting ``x``; updates ``slots`` in place."""
    m = len(j)
    order = np.argsort(j, kind="stable")
    sj = j[order]
    new_run = np.ones(m, dtype=bool)
    new_run[1:] = sj[1:] != sj[:-1]
    out = np.empty(m, dtype=slots.dtype)
    out[order[new_run]] = slots[sj[new_run]]
    repeat_pos = np.flatnonzero(~new_run)
    out[order[repeat_pos]] = x[order[repeat_pos - 1]]
    run_end = np.ones(m, dtype=bool)
    run_end[:-1] = new_run[1:]
    slots[sj[run_end]] = x[order[run_end]]
    return out


def _adopt_seed(owner, state) -> int:
    """An unseeded shuffle draws its seed when the dataset is built; a restored iterator
    brings the saved seed, and the dataset keeps it for later passes (repeat, next epoch).
    """
    seed = state.integer("seed", high=2**128 - 1)
    if owner is not None:
        on_commit(lambda: setattr(owner, "_seed", seed))
    return seed


class ShuffleStream:
    """The shuffle over an index stream."""

    def __init__(self, up, buffer_size: int, seed: int, epoch: tuple, owner=None):
        self._up, self._b, self._seed, self._epoch = up, buffer_size, seed, epoch
        self._owner = owner
        self._rng = epoch_rng(seed, epoch)
        self._slots: np.ndarray | None = None
        self._pending, self._pend_off = _EMPTY, 0
        self._done, self._pos = False, 0

    def _refill(self) -> None:
        if self._slots is None:
            self._slots = take_exact(self._up, self._b).copy()
            if len(self._slots) < self._b:
                self._drain()
                return
        x = take_exact(self._up, DRAW_CHUNK)
        if len(x) == 0:
            self._drain()
            return
        j = self._rng.integers(0, self._b, size=DRAW_CHUNK)[: len(x)]
        out = steady_chunk(self._slots, j, x)
        if len(x) < DRAW_CHUNK:
            rest = self._slots[self._rng.permutation(len(self._slots))]
            out = np.concatenate([out, rest])
            self._done = True
        self._pending, self._pend_off = out, 0

    def _drain(self) -> None:
        slots = self._slots
        assert slots is not None
        self._pending = slots[self._rng.permutation(len(slots))]
        self._pend_off, self._done = 0, True

    def next_chunk(self, k: int) -> np.ndarray:
        if self._pend_off >= len(self._pending):
            if self._done:
                return _EMPTY
            self._refill()
        lo = self._pend_off
        out = self._pending[lo : lo + k]
        self._pend_off += len(out)
        self._pos += len(out)
        return out

    def get_state(self):
        return {"pos": self._pos, "seed": self._seed}

    def set_state(self, state):
        self._seed = _adopt_seed(self._owner, state)
        self._rng = epoch_rng(self._seed, self._epoch)
        left = state.integer("pos")
        while left > 0 and len(part := self.next_chunk(left)):
            left -= len(part)


class _ShuffleIterator(_It):
    """The element-wise buffer shuffle for inputs that are not in-memory arrays."""

    def __init__(self, it, buffer_size: int, seed: int, epoch: tuple, owner=None):
        self._it, self._b, self._seed, self._epoch = it, buffer_size, seed, epoch
        self._owner = owner
        self._rng = epoch_rng(seed, epoch)
        self._buf: list | None = None
        self._draws: list = []
        self._k = 0
        self._perm: list | None = None
        self._pos = 0

    def _fill(self) -> None:
        self._buf = []
        for x in self._it:
            self._buf.append(x)
            if len(self._buf) >= self._b:
                return
        self._start_drain()

    def _start_drain(self) -> None:
        buf = self._buf
        assert buf is not None
        self._perm = self._rng.permutation(len(buf)).tolist()
        self._k = 0

    def __next__(self):
        if self._buf is None:
            self._fill()
        if self._perm is None:
            try:
                x = next(self._it)
            except StopIteration:
                self._start_drain()
            else:
                if self._k >= len(self._draws):
                    self._draws = self._rng.integers(0, self._b, size=DRAW_CHUNK).tolist()
                    self._k = 0
                j = self._draws[self._k]
                self._k += 1
                buf = self._buf
                assert buf is not None  # _fill made it
                out = buf[j]
                buf[j] = x
                self._pos += 1
                return out
        perm, buf = self._perm, self._buf
        assert perm is not None and buf is not None  # _start_drain made them
        if self._k >= len(perm):
            raise StopIteration
        out = buf[perm[self._k]]
        self._k += 1
        self._pos += 1
        return out

    def get_state(self):
        return {"pos": self._pos, "seed": self._seed}

    def set_state(self, state):
        self._seed = _adopt_seed(self._owner, state)
        self._rng = epoch_rng(self._seed, self._epoch)
        skip_n(self, state.integer("pos"))


class ShuffleDataset(Dataset):
    # a new shuffle starts at pass 0, however often its input was iterated before; the
    # datasets built on it share its count (Dataset._passes)
    _counts_own_passes = True

    def __init__(self, input_ds: Dataset, buffer_size: int, seed, reshuffle: bool):
        buffer_size = int(buffer_size)
        if buffer_size < 1:
            raise ValueError(f"shuffle: buffer_size must be at least 1, got {buffer_size}")
        seed = op_seed(seed)
        self._input, self._b, self._seed = input_ds, buffer_size, int(seed)
        self._reshuffle = reshuffle

    def _epoch(self, epoch):
        return tuple(epoch) if self._reshuffle else ()

    def _indexed(self):
        up = self._input._indexed()
        if up is None:
            return None
        source, factory = up

        def make(epoch):
            return ShuffleStream(factory(epoch), self._b, self._seed, self._epoch(epoch), self)

        return source, make

    def _make_iterator(self, epoch):
        indexed = self._indexed()
        if indexed is not None:
            source, make = indexed
            return IndexedElementIterator(source, make(epoch))
        return _ShuffleIterator(self._input._make_iterator(epoch), self._b, self._seed,
                                self._epoch(epoch), self)

    def _compute_spec(self):
        return self._input.element_spec

    def cardinality(self):
        return self._input.cardinality()

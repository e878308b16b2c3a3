"""interleave and flat_map: each input element becomes a dataset; cycle through them."""

from __future__ import annotations

import os

from .._dataset import Dataset
from .._iterator import _It
from .._state import StateError
from .basic import _UnaryDataset, call_unpacked


class _Slot:
    __slots__ = ("pre", "index", "it")

    def __init__(self, pre, index, it):
        self.pre, self.index, self.it = pre, index, it


class _InterleaveIterator(_It):
    def __init__(self, ds, epoch) -> None:
        self._ds, self._epoch = ds, epoch
        self._it = ds._input._make_iterator(epoch)
        self._slots: list[_Slot | None] = [None] * ds._cycle
        self._cur, self._in_block, self._opened = 0, 0, 0
        self._input_done = False

    def _child(self, element, index):
        child = call_unpacked(self._ds._fn, element)
        if not isinstance(child, Dataset):
            raise TypeError(f"interleave/flat_map: map_func must return a Dataset, "
                            f"got {type(child).__name__}")
        return child._make_iterator(self._epoch + (index,))

    def _open(self, k) -> bool:
        if self._input_done:
            return False
        pre = self._it.get_state()
        try:
            element = next(self._it)
        except StopIteration:
            self._input_done = True
            return False
        self._slots[k] = _Slot(pre, self._opened, self._child(element, self._opened))
        self._opened += 1
        return True

    def __next__(self):
        while True:
            if self._input_done and all(s is None for s in self._slots):
                raise StopIteration
            slot = self._slots[self._cur]
            if slot is None and not self._open(self._cur):
                self._advance()
                continue
            slot = self._slots[self._cur]
            assert slot is not None  # _open filled it
            try:
                x = next(slot.it)
            except StopIteration:
                # TF's order (InterleaveDatasetOp): an input that ends empties its slot and
                # the cycle moves on; the slot takes the next input when the cycle is back
                self._slots[self._cur] = None
                self._advance()
                continue
            self._in_block += 1
            if self._in_block >= self._ds._block:
                self._advance()
            return x

    def _advance(self):
        self._cur = (self._cur + 1) % len(self._slots)
        self._in_block = 0

    def get_state(self):
        slots = [None if s is None else {"pre": s.pre, "index": s.index,
                                          "child": s.it.get_state()} for s in self._slots]
        return {"input": self._it.get_state(), "slots": slots, "cur": self._cur,
                "in_block": self._in_block, "opened": self._opened,
                "input_done": self._input_done}

    def set_state(self, state):
        self._it.set_state(state.node("input"))
        self._cur = state.integer("cur", high=len(self._slots) - 1)
        self._in_block = state.integer("in_block", high=self._ds._block)
        self._opened, self._input_done = state.integer("opened"), state.boolean("input_done")
        for k, st in enumerate(state.nodes("slots", len(self._slots))):
            if st is None:
                self._slots[k] = None
                continue
            # Rebuild the child from its input element by replaying a fresh input iterator.
            src = self._ds._input._make_iterator(self._epoch)
            pre, index = st.node("pre"), st.integer("index", high=self._opened)
            src.set_state(pre)
            try:
                element = next(src)
            except StopIteration:
                raise StateError(f"iterator state: {st.path}.pre is past the end of the "
                                 "interleaved input") from None
            it = self._child(element, index)
            it.set_state(st.node("child"))
            self._slots[k] = _Slot(pre, index, it)


class InterleaveDataset(_UnaryDataset):
    def __init__(self, input_ds, fn, cycle_length, block_length):
        super().__init__(input_ds)
        if cycle_length is None or cycle_length < 0:
            cycle_length = os.cpu_count() or 1
        self._fn, self._cycle, self._block = fn, max(1, int(cycle_length)), max(1, block_length)

    def _make_iterator(self, epoch):
        return _InterleaveIterator(self, tuple(epoch))

    def _compute_spec(self):
        return Dataset._compute_spec(self)

    def cardinality(self):
        from .._dataset import UNKNOWN_CARDINALITY

        return 0 if self._input.cardinality() == 0 else UNKNOWN_CARDINALITY

"""window: elements are small datasets of consecutive input elements."""

from __future__ import annotations

import collections

from .._dataset import UNKNOWN_CARDINALITY
from .._iterator import _It
from .._sources import ListDataset
from .basic import _UnaryDataset


class _WindowIterator(_It):
    def __init__(self, it, size, shift, stride, drop) -> None:
        self._it, self._size, self._shift, self._stride, self._drop = it, size, shift, stride, drop
        self._buf: collections.deque = collections.deque()  # (state before, element)
        self._discard = 0
        self._done = False

    def _pull(self) -> bool:
        pre = self._it.get_state()
        try:
            x = next(self._it)
        except StopIteration:
            self._done = True
            return False
        self._buf.append((pre, x))
        return True

    def __next__(self):
        while self._discard and not self._done:
            if self._pull():
                self._buf.popleft()
                self._discard -= 1
        # a window takes every stride-th of the (size - 1) * stride + 1 inputs from its
        # start (TensorFlow's); it came out as the every stride-th of only `size` inputs
        span = (self._size - 1) * self._stride + 1
        while len(self._buf) < span and not self._done:
            self._pull()
        items = [x for _, x in list(self._buf)[:span:self._stride]]
        if not items or (self._drop and len(items) < self._size):
            raise StopIteration
        drop = min(self._shift, len(self._buf))
        for _ in range(drop):
            self._buf.popleft()
        self._discard = self._shift - drop
        if self._done and not self._buf:
            self._discard = 0
        return ListDataset(items)

    def get_state(self):
        pre = self._buf[0][0] if self._buf else self._it.get_state()
        return {"input": pre, "discard": self._discard, "done": self._done and not self._buf}

    def set_state(self, state):
        self._it.set_state(state.node("input"))
        self._discard = state.integer("discard", high=self._shift)
        self._done = state.boolean("done")


class WindowDataset(_UnaryDataset):
    def __init__(self, input_ds, size, shift, stride, drop_remainder):
        super().__init__(input_ds)
        shift = size if shift is None else shift
        if size < 1 or shift < 1 or stride < 1:
            raise ValueError("window: size, shift and stride must be positive")
        self._args = (int(size), int(shift), int(stride), bool(drop_remainder))

    def _make_iterator(self, epoch):
        return _WindowIterator(self._input._make_iterator(epoch), *self._args)

    def _compute_spec(self):
        return self._input.element_spec

    def cardinality(self):
        return UNKNOWN_CARDINALITY if self._input.cardinality() != 0 else 0

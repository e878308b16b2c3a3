"""window: elements are small datasets of consecutive input elements (for a tuple or dict
input, a tuple or dict of datasets, one per component, as TensorFlow's)."""

from __future__ import annotations

import collections

from .._dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .._iterator import _It
from .._sources import ListDataset
from .._structure import DatasetSpec, flatten, pack_as
from .basic import _UnaryDataset


class _Window(ListDataset):
    """One component of a window: its elements, and its spec that of the input's
    component (not of these few elements)."""

    def __init__(self, items: list, owner: WindowDataset, component: int):
        super().__init__(items)
        self._owner, self._component = owner, component

    def _compute_spec(self):
        return flatten(self._owner._input.element_spec)[self._component]


class _WindowIterator(_It):
    def __init__(self, owner, it, size, shift, stride, drop) -> None:
        self._owner = owner
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
        # TensorFlow's window of a tuple (dict) is a tuple (dict) of datasets, so that
        # flat_map(lambda a, b: ...) gets one dataset per component
        columns = zip(*(flatten(x) for x in items), strict=True)
        return pack_as(items[0], [_Window(list(c), self._owner, k)
                                  for k, c in enumerate(columns)])

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
        return _WindowIterator(self, self._input._make_iterator(epoch), *self._args)

    def _compute_spec(self):
        spec = self._input.element_spec
        return pack_as(spec, [DatasetSpec(s) for s in flatten(spec)])

    def cardinality(self):
        """TensorFlow's WindowDatasetOp: a window starts every ``shift`` inputs; with
        ``drop_remainder`` only those with a full span of inputs."""
        n = self._input.cardinality()
        if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY):
            return n
        size, shift, stride, drop = self._args
        if drop:
            rest = n - ((size - 1) * stride + 1)
            return 0 if rest < 0 else rest // shift + 1
        return -(-n // shift)

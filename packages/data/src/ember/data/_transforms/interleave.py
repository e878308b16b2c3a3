"""interleave and flat_map: each input element becomes a dataset; cycle through them.

With ``num_parallel_calls``, each open input is read ahead by one element on a thread pool
(``map_func`` runs there too), so the ``cycle_length`` inputs are opened and read at the
same time, as TensorFlow's parallel interleave reads them. The order of the elements is the
sequential one: an input that ends takes its next input at once rather than when the cycle
is back, which hands the inputs to the slots in the same order.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import os
import weakref
from typing import Any

from .._dataset import Dataset
from .._iterator import _It
from .._state import StateError
from .basic import _UnaryDataset, call_unpacked, first_elements


class _Slot:
    __slots__ = ("pre", "index", "it")

    def __init__(self, pre, index, it):
        self.pre, self.index, self.it = pre, index, it


class _InterleaveIterator(_It):
    def __init__(self, ds, epoch) -> None:
        self._ds, self._epoch = ds, epoch
        self._it = ds._input._make_iterator(epoch)
        self._slots: list[Any] = [None] * ds._cycle  # a _Slot (_ParallelSlot) or None
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
        self._slots[k] = self._slot(pre, self._opened, element)
        self._opened += 1
        return True

    def _slot(self, pre, index, element):
        """The slot of the input opened for ``element``."""
        return _Slot(pre, index, self._child(element, index))

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


_END = object()


def _fetch(it):
    """One element of ``it`` (``_END`` past its end), with its state before the read: the
    state after the element handed out last. A state that cannot be had (a
    nondeterministic input) is kept as its exception, raised if a state is asked for."""
    try:
        before = it.get_state()
    except Exception as e:  # raised again by get_state
        before = e
    try:
        return before, next(it)
    except StopIteration:
        return before, _END


class _ParallelSlot:
    __slots__ = ("pre", "index", "it", "fut")

    def __init__(self, pre, index, fut):
        self.pre, self.index, self.it, self.fut = pre, index, None, fut


class _ParallelInterleaveIterator(_InterleaveIterator):
    """The cycle of ``_InterleaveIterator``, each slot read ahead by one on a pool."""

    def __init__(self, ds, epoch) -> None:
        super().__init__(ds, epoch)
        self._pool = cf.ThreadPoolExecutor(ds._workers, thread_name_prefix="ember-data-interleave")
        weakref.finalize(self, self._pool.shutdown, wait=False, cancel_futures=True)
        self._started = False

    def _submit(self, fn, *args):
        return self._pool.submit(contextvars.copy_context().run, fn, *args)

    def _open_job(self, element, index):
        it = self._child(element, index)
        return it, _fetch(it)

    def _slot(self, pre, index, element):
        return _ParallelSlot(pre, index, self._submit(self._open_job, element, index))

    def _result(self, slot):
        """The slot's read-ahead element (``_END`` at its end) and the state before it."""
        if slot.it is None:  # the open job: the child, then its first read
            slot.it, first = slot.fut.result()
            slot.fut = cf.Future()
            slot.fut.set_result(first)
        return slot.fut.result()

    def __next__(self):
        if not self._started:  # open the whole cycle at once, in slot order
            self._started = True
            for k in range(len(self._slots)):
                self._open(k)
        while True:
            if self._input_done and all(s is None for s in self._slots):
                self._pool.shutdown(wait=False)
                raise StopIteration
            slot = self._slots[self._cur]
            if slot is None:
                self._advance()
                continue
            _, x = self._result(slot)
            if x is _END:
                self._slots[self._cur] = None
                self._open(self._cur)  # at once: the input it would take when the cycle is back
                self._advance()
                continue
            slot.fut = self._submit(_fetch, slot.it)
            self._in_block += 1
            if self._in_block >= self._ds._block:
                self._advance()
            return x

    def get_state(self):
        slots: list[Any] = []
        for s in self._slots:
            if s is None:
                slots.append(None)
                continue
            before, _ = self._result(s)  # waits for the read ahead
            if isinstance(before, Exception):
                raise before
            slots.append({"pre": s.pre, "index": s.index, "child": before})
        return {"input": self._it.get_state(), "slots": slots, "cur": self._cur,
                "in_block": self._in_block, "opened": self._opened,
                "input_done": self._input_done, "started": self._started}

    def set_state(self, state):
        super().set_state(state)
        self._started = state.boolean("started")
        for k, slot in enumerate(self._slots):
            if slot is not None:  # the rebuilt child, read ahead again from where it was
                it = slot.it
                par = _ParallelSlot(slot.pre, slot.index, self._submit(_fetch, it))
                par.it = it
                self._slots[k] = par


def _cores() -> int:
    """The cores this process may run on (TensorFlow's default cycle length)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class InterleaveDataset(_UnaryDataset):
    def __init__(self, input_ds, fn, cycle_length, block_length, num_parallel_calls=None):
        super().__init__(input_ds)
        if cycle_length is None or cycle_length < 0:
            cycle_length = _cores()
        self._fn, self._cycle, self._block = fn, max(1, int(cycle_length)), max(1, block_length)
        if num_parallel_calls is not None and (
                isinstance(num_parallel_calls, bool) or not isinstance(num_parallel_calls, int)
                or (num_parallel_calls < 1 and num_parallel_calls != -1)):
            raise ValueError(f"interleave: num_parallel_calls must be a positive int, "
                             f"AUTOTUNE or None, got {num_parallel_calls!r}")
        self._workers = None if num_parallel_calls is None else (
            self._cycle if num_parallel_calls == -1 else min(num_parallel_calls, self._cycle))

    def _make_iterator(self, epoch):
        if self._workers is not None:
            return _ParallelInterleaveIterator(self, tuple(epoch))
        return _InterleaveIterator(self, tuple(epoch))

    def _compute_spec(self):
        """The element spec of the datasets ``map_func`` makes (TensorFlow's: that of the
        dataset its traced function returns), here of those made for the first two input
        elements, with ``None`` for each size in which they differ; for an empty input,
        of the one made for an element made from the input's spec (``prototype``). The
        spec of the first elements of the result claimed their sizes as fixed (a
        ``window(3).flat_map(lambda w: w.batch(3))`` claimed 3 rows, where the last batch
        may have fewer), and a result with no elements had none."""
        from .._structure import merge_specs, prototype, specs_compatible

        elems = first_elements(self._input, 2)
        made = not elems
        if made:
            try:
                elems = [prototype(self._input.element_spec)]
            except ValueError:
                raise ValueError("element_spec of InterleaveDataset is unknown: the dataset "
                                 "is empty") from None
        specs = []
        for x in elems:
            try:
                child = call_unpacked(self._fn, x)
            except Exception as e:
                if not made:
                    raise
                raise ValueError(f"element_spec of InterleaveDataset is unknown: the input "
                                 f"is empty, and map_func on an element made from its spec "
                                 f"gave {type(e).__name__}: {e}") from e
            if not isinstance(child, Dataset):
                raise TypeError(f"interleave/flat_map: map_func must return a Dataset, "
                                f"got {type(child).__name__}")
            try:
                specs.append(child.element_spec)
            except ValueError:  # an empty dataset of unknown spec
                continue
        if not specs:
            return Dataset._compute_spec(self)
        if len(specs) == 2 and specs_compatible(specs[0], specs[1]):
            return merge_specs(specs[0], specs[1])
        return specs[0]

    def cardinality(self):
        from .._dataset import UNKNOWN_CARDINALITY

        return 0 if self._input.cardinality() == 0 else UNKNOWN_CARDINALITY

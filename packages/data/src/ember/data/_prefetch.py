"""``prefetch``: a background thread runs the input ahead into a bounded queue.

Each queued element carries the input's position right after it, so the iterator's state
is the position after the last element handed out: the buffered elements are not saved.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
import weakref

from ._iterator import _It
from ._transforms.basic import _UnaryDataset as UnaryDataset

_END = object()


class _Failure:
    def __init__(self, exc: BaseException):
        self.exc = exc


def _produce(it, q: queue.Queue, stop: threading.Event, convert) -> None:
    def put(item) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    try:
        while not stop.is_set():
            try:
                x = next(it)
            except StopIteration:
                put(_END)
                return
            if convert is not None:
                x = convert(x)
            if not put((x, it.get_state())):
                return
    except BaseException as exc:  # handed to the consumer, who re-raises it
        put(_Failure(exc))


class PrefetchIterator(_It):
    def __init__(self, it, buffer_size, convert=None) -> None:
        self._it, self._convert = it, convert
        n = int(buffer_size)
        self._size = max(2, os.cpu_count() or 2) if n < 0 else max(1, n)
        self._q: queue.Queue | None = None
        self._stop = threading.Event()
        self._state = None
        self._done = False

    def _start(self) -> queue.Queue:
        q: queue.Queue = queue.Queue(self._size)
        self._q = q
        # the producer runs in a copy of the consumer's context: its device scope (where
        # a map's ember ops put their tensors) and other context variables go with it
        t = threading.Thread(target=contextvars.copy_context().run,
                             args=(_produce, self._it, self._q, self._stop, self._convert),
                             name="ember-data-prefetch", daemon=True)
        weakref.finalize(self, self._stop.set)
        t.start()
        return q

    def __next__(self):
        if self._done:
            raise StopIteration
        q = self._q
        if q is None:
            q = self._start()
        item = q.get()
        if item is _END:
            self._done = True
            raise StopIteration
        if isinstance(item, _Failure):
            self._done = True
            raise item.exc
        x, self._state = item
        return x

    def get_state(self):
        return {"input": self._state}

    def set_state(self, state):
        inner = state.node("input", optional=True)
        if inner is not None:
            self._it.set_state(inner)
            self._state = inner


class PrefetchDataset(UnaryDataset):
    def __init__(self, input_ds, buffer_size, convert=None):
        super().__init__(input_ds)
        self._size, self._convert = buffer_size, convert

    def _make_iterator(self, epoch):
        return PrefetchIterator(self._input._make_iterator(epoch), self._size, self._convert)


def prefetch_to_device(device: str, buffer_size: int = 1):
    """A transformation (for ``Dataset.apply``) yielding ember tensors on ``device``.

    Elements are converted with ``ember.core.convert_to_tensor`` inside
    ``ember.core.device(device)`` on the prefetch thread, so the copy overlaps training.

    Raises:
        ImportError: when ember-core is not installed.
    """
    try:
        import ember.core as em
    except ImportError as exc:
        raise ImportError(
            "prefetch_to_device needs ember-core; install it with `pip install ember-core`"
        ) from exc
    from ._structure import map_structure

    def convert(element):
        with em.device(device):
            return map_structure(em.convert_to_tensor, element)

    def apply(ds):
        return PrefetchDataset(ds, buffer_size, convert)

    return apply

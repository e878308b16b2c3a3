"""``map(num_parallel_calls=...)``: calls run on a thread pool, results kept in input order.

numpy releases the GIL in most array work, so threads give real speed-ups for numpy-heavy
functions without pickling elements to processes. The main thread pulls input elements and
records the input's position after each, so the state after any output is exact.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import contextvars
import os
import weakref

from ._iterator import _It
from ._transforms.basic import call_unpacked


class ParallelMapIterator(_It):
    def __init__(self, it, fn, num_parallel_calls, deterministic) -> None:
        self._it, self._fn, self._det = it, fn, deterministic
        n = int(num_parallel_calls)
        self._workers = (os.cpu_count() or 1) if n < 0 else max(1, n)
        self._in_flight = 2 * self._workers
        self._pending: collections.deque = collections.deque()
        self._pool: cf.ThreadPoolExecutor | None = None
        self._exhausted = False
        self._state = None  # input state after the last element handed out; None = fresh

    def _start(self) -> cf.ThreadPoolExecutor:
        pool = cf.ThreadPoolExecutor(self._workers, thread_name_prefix="ember-data-map")
        self._pool = pool
        weakref.finalize(self, pool.shutdown, wait=False, cancel_futures=True)
        return pool

    def _fill(self):
        pool = self._pool
        assert pool is not None  # __next__ started it
        while not self._exhausted and len(self._pending) < self._in_flight:
            try:
                x = next(self._it)
            except StopIteration:
                self._exhausted = True
                break
            # each call runs in a copy of the puller's context (its device scope, ...)
            fut = pool.submit(contextvars.copy_context().run, call_unpacked, self._fn, x)
            self._pending.append((fut, self._it.get_state() if self._det else None))

    def __next__(self):
        pool = self._pool if self._pool is not None else self._start()
        self._fill()
        if not self._pending:
            pool.shutdown(wait=False)
            raise StopIteration
        if self._det:
            fut, state = self._pending.popleft()
        else:
            futs = [f for f, _ in self._pending]
            done, _ = cf.wait(futs, return_when=cf.FIRST_COMPLETED)
            k = next(i for i, f in enumerate(futs) if f in done)
            fut, state = self._pending[k]
            del self._pending[k]
        result = fut.result()  # re-raises the function's exception with its traceback
        self._state = state
        return result

    def get_state(self):
        if not self._det:
            raise ValueError(
                "map(..., deterministic=False) cannot save an exact position; "
                "use deterministic=True for resumable iteration"
            )
        return {"input": self._state}

    def set_state(self, state):
        inner = state.node("input", optional=True)
        if inner is not None:
            self._it.set_state(inner)
            self._state = inner

"""``cupy.cuda``'s streams and stream capture on the strict GPU double: CUDA Graphs in CI.

It mirrors what code that captures a CUDA Graph through cupy meets:

- ``Stream(non_blocking=True)``; ``with stream:`` makes it current; ``Stream.null`` (the
  legacy default stream) cannot capture.
- ``stream.begin_capture()`` ... ``stream.end_capture()`` gives a ``Graph`` whose
  ``launch(stream=None)`` runs the captured work again on the buffers it was captured
  with, reading their contents at launch.
- While a capture is under way, host transfers (uploads, copies to the host, scalar
  reads) and synchronizations by the capturing thread raise ``RuntimeError``, as cupy
  and CUDA do, and so does that thread's work on the legacy default stream (it would
  invalidate the capture).
- The current stream and ``using_allocator`` are each thread's own, as cupy's are, and
  cupy captures in relaxed mode (``begin_capture``'s default): another thread (a dataset's
  ``map`` worker) goes on uploading and computing on its own stream during a capture,
  and its work stays out of the graph. Legacy-stream work from another thread raises
  only while a blocking stream captures.
- CUDA does not run captured work. The double runs it once (results need their shapes
  and dtypes), then fills every buffer the capture allocated with garbage (NaN, or the
  dtype's largest value), so code that reads a capture's results before launching its
  graph reads garbage here too. Buffers alive before the capture keep their contents,
  views of them included (``x.reshape`` of an array made before the capture).
- ``MemoryPool()`` and ``using_allocator(pool.malloc)``: arrays made inside take their
  buffers from that pool, which counts them (``used_bytes()``, ``_strict_memory``), and
  ``Graph.private_pool`` says whether every allocation of the capture came from a
  private pool. A graph's buffers are fixed addresses; from the shared pool they could
  be handed to other arrays after capture, and each launch would then overwrite those
  arrays.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._strict_memory import Memory, MemoryPointer, PooledMemory
from ._strict_memory import MemoryPool as _MemoryPool

CAPTURING = "the current stream is capturing, so {} are disallowed"


def normalized(out: Any) -> Any:
    """``out`` with numpy scalars as 0-d arrays (the buffers a device result lives in)."""
    if isinstance(out, np.generic):
        return np.asarray(out)
    if isinstance(out, tuple):  # numpy's named results too: cupy returns plain tuples
        return tuple(normalized(o) for o in out)
    if type(out) is list:
        return [normalized(o) for o in out]
    return out


def _arrays(x: Any) -> list[np.ndarray]:
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in _arrays(v)]
    if isinstance(x, dict):
        return [a for v in x.values() for a in _arrays(v)]
    return []


class Capture:
    """The work recorded while one stream captures."""

    def __init__(self, stream: StrictStream) -> None:
        self.stream = stream
        self.thread = threading.get_ident()  # the thread that began it
        self.ops: list[tuple[Callable[[], Any], list[np.ndarray]]] = []
        self.fresh: list[np.ndarray] = []  # buffers the capture allocated
        self.shared_pool_used = False
        self.kernels = 0  # the graph's kernels (``_strict_launches``), run at each launch

    def record(self, compute: Callable[[], Any], out: Any, args: Any,
               allocator: Any) -> None:
        """One call's work, ``out`` its results; ``args`` the arrays it reads (an array
        method's own array among them)."""
        outs = _arrays(out)
        self.ops.append((compute, outs))
        ins = _arrays(args)
        memory = self.stream._backend.memory
        for o in outs:
            # Only memory the call allocated is garbage after the capture. A result in a
            # buffer alive before it (a view of an input, or of a constant the graph only
            # reads: ``x.reshape`` of an array made before the capture) holds what it held.
            if not any(np.may_share_memory(o, a) for a in ins) and not memory.holds(o):
                self.fresh.append(o)
                if allocator is None:
                    self.shared_pool_used = True


class StrictGraph:
    """A captured graph (``cupy.cuda.Graph``): ``launch`` runs its work again."""

    def __init__(self, backend: Any, capture: Capture) -> None:
        self._backend = backend
        self._ops = capture.ops
        self.private_pool = not capture.shared_pool_used
        self.kernels = capture.kernels
        self.launches = 0
        # CUDA orders each launch of a graph exec behind its previous launches, on any
        # stream: two threads launching one graph run it one after the other, never
        # interleaved (a generator's state it reads and advances is never read twice)
        self._ordered = threading.Lock()

    def launch(self, stream: Any = None) -> None:
        self._backend.check_not_capturing("graph launches")
        with self._ordered, np.errstate(all="ignore"):
            for compute, outs in self._ops:
                new = _arrays(normalized(compute()))
                for r, n in zip(outs, new):
                    if n is not r and not np.may_share_memory(r, n):
                        np.copyto(r, n)
            self.launches += 1
        self._backend.counters.graph_launches += 1  # one host launch ...
        self._backend.counters.launches += self.kernels  # ... running the graph's kernels


class StrictStream:
    """A stream of the double (``cupy.cuda.Stream``)."""

    def __init__(self, backend: Any, null: bool = False, non_blocking: bool = False,
                 ptr: int | None = None) -> None:
        self._backend = backend
        self.ptr = 0 if null else id(self)
        self.non_blocking = non_blocking
        self._outer = threading.local()  # each thread's streams before its ``with self:``

    def __enter__(self) -> StrictStream:
        stack = self._outer.__dict__.setdefault("stack", [])
        stack.append(self._backend.current_stream)
        self._backend.current_stream = self
        return self

    def __exit__(self, *exc: Any) -> None:
        self._backend.current_stream = self._outer.stack.pop()

    def use(self) -> StrictStream:
        self._backend.current_stream = self
        return self

    def begin_capture(self, mode: Any = None) -> None:
        if self.ptr == 0:
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if self._backend.capture is not None:
            raise RuntimeError("cudaErrorIllegalState: a stream is already capturing")
        self._backend.capture = Capture(self)

    def end_capture(self) -> StrictGraph:
        cap = self._backend.capture
        if cap is None or cap.stream is not self:
            raise RuntimeError("cudaErrorIllegalState: the stream is not capturing")
        self._backend.capture = None
        for a in cap.fresh:  # CUDA ran none of it: what the capture allocated is garbage
            if a.flags.writeable:
                a.fill(_garbage(a.dtype))
        return StrictGraph(self._backend, cap)

    def is_capturing(self) -> bool:
        cap = self._backend.capture
        return cap is not None and cap.stream is self

    def synchronize(self) -> None:
        self._backend.synchronize()


def _garbage(dtype: np.dtype) -> Any:
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind in "iu":
        return np.iinfo(dtype).max
    return True


class StrictCuda:
    """``xp.cuda`` of one strict GPU: streams, graphs, memory pools (``_strict_memory``)."""

    Memory = Memory
    MemoryPointer = MemoryPointer
    PooledMemory = PooledMemory

    def __init__(self, backend: Any) -> None:
        self._backend = backend

        class MemoryPool(_MemoryPool):
            """A pool of this device's memory (``cupy.cuda.MemoryPool()``): a private one
            for a graph's capture, whose allocations it counts as the default pool does."""

            def __init__(self, allocator: Any = None) -> None:
                super().__init__(backend.memory, allocator)

        self.MemoryPool = MemoryPool

        class Stream(StrictStream):
            null = backend.null_stream

            def __init__(self, null: bool = False, non_blocking: bool = False,
                         ptr: int | None = None) -> None:
                if null:
                    raise ValueError("use cupy.cuda.Stream.null for the default stream")
                super().__init__(backend, non_blocking=non_blocking)

        self.Stream = Stream

    def get_current_stream(self) -> StrictStream:
        return self._backend.current_stream

    def alloc(self, size: int) -> Any:
        """``cupy.cuda.alloc``: ``size`` bytes from the current allocator (``using_allocator``'s,
        else the default pool), held by the pointer returned."""
        be = self._backend
        if be.allocator is not None:
            return be.allocator(int(size))
        return be.memory.default_pool.malloc(int(size))

    @contextlib.contextmanager
    def Device(self, device: int = 0) -> Iterator[None]:  # cupy's name
        """``with cupy.cuda.Device(i):`` (ember's cupy backend selects a GPU so): each
        strict GPU has an ``xp`` of its own, so only its own index is valid here."""
        if int(device) != self._backend.index:
            raise ValueError(f"cuda.Device({device}) through the xp of /gpu:"
                             f"{self._backend.index} (strict double)")
        yield

    @contextlib.contextmanager
    def using_allocator(self, allocator: Any = None) -> Iterator[None]:
        outer, self._backend.allocator = self._backend.allocator, allocator
        try:
            yield
        finally:
            self._backend.allocator = outer

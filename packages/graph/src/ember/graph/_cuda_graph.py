"""CUDA Graphs: a GPU replay captured once through cupy's stream capture, then launched as
one graph, so each call costs one launch instead of one kernel launch per op.

A graph replays fixed device addresses. Each call copies its arguments (and the
variables it reads) into the graph's input buffers, launches the graph on the current
stream, and copies the results and the variables' new values out, so nothing the caller
keeps aliases a buffer the next launch overwrites. The capture allocates from a private
memory pool that lives as long as the graph: a buffer freed during the capture is reused
only within it, never handed to another array that a later launch would overwrite.

A plan is captured on its second replay (the first one warms every cache a capture
cannot fill: generated kernels compiled, library handles made). A plan is not captured
when a graph would repeat something a call must redo on the host:

- a guard or a value-dependent shape (both read device values on the host);
- a random draw from a generator with no device state (its numbers would be drawn on the
  host and uploaded: a graph would repeat them);
- work on more than one device, or on a backend that cannot capture (the CPU).

Random draws are captured: ember's generator draws on a GPU with one Philox kernel that
reads the generator's state (a uint64 [key, next block, stream] array on the device) and
one in-place add that advances it (``ember.core._philox_cuda``), so each launch reads the
counter the last one left and draws new numbers. The graph keeps the state array it
captured; the generator keeps that array for its life on the GPU (``set_seed``, a new
``state`` and a host draw write into it), and at each launch the state is put back into
it if it lives elsewhere (a host draw, another device), so a launch draws exactly what
the op-by-op replay would. The capture itself leaves the counter as it found it (CUDA
runs nothing while capturing; the strict double runs the work once, and the counter is
put back).

Anything else a capture meets that CUDA or cupy forbids raises during the capture, and the
plan then replays op by op, as before, with the reason kept in ``status``, naming the op
whose call raised: a host transfer or a synchronization (CUDA), or a call into cuBLAS,
cuSOLVER or cuRAND (cupy 14 refuses them on a capturing stream, cupy issue 6290: a
factorization, an ``einsum`` contraction). Float matrix products (Dense layers,
convolutions and recurrent cells through their GEMMs) capture through nvmath-python
(``ember.core._nvmath_products``); where it is not installed, or does not take a product,
the reason says so.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Sequence
from typing import Any

CAPTURE_ON_REPLAY = 2  # the replay that captures (the first one warms the caches)
REPLAY_FILE = "<ember.graph replay>"  # the file name of a plan's generated replay
# cupy's refusal (cupy_backends/cuda/libs/{cublas,cusolver,curand}.pyx, setStream)
_NVMATH_REASON = "ember_nvmath_reason"  # ember.core._nvmath_products.REASON_ATTR
_LIBRARY_REFUSED = re.compile(r"calling (\w+) API during stream capture is currently "
                              r"unsupported")


def blocker(plan: Any, steps: list[Any], devices: list[Any]) -> str | None:
    """Why ``plan`` (its kept ``steps``, the devices of its inputs and outputs) cannot be
    captured as a CUDA Graph, or None."""
    backends = {id(s.backend): s.backend for s in steps}
    backends.update((id(d.backend), d.backend) for d in devices)
    if not steps:
        return "it runs no op"
    if len(backends) > 1 or len({d.name for d in devices}) > 1:
        return "it runs on more than one device"
    (backend,) = backends.values()
    if not devices or not hasattr(getattr(backend.xp, "cuda", None), "Stream"):
        return "its device cannot capture graphs (CUDA Graphs are for GPUs)"
    if plan.has_guards:
        return "it reads device values on the host (guards)"
    for s in steps:
        if s.name == "py_function":
            return "it calls a Python function on every call (py_function)"
    if any(s.shapes is not None for s in steps):
        return "an op's result shape depends on values"
    for s in steps:
        g = s.attrs.get("generator") if s.attrs else None
        if g is not None and getattr(g, "stateless", False):
            return (f"{s.name} is a stateless draw (the same numbers at every call): a "
                    "graph would advance its generator")
        if g is not None and not callable(getattr(g, "_target", None)):
            return (f"{s.name} draws random numbers from a {type(g).__name__}, which has no "
                    "device state a graph could advance (drawn on the host: a graph would "
                    "repeat them)")
    return None


class _DeviceDraws:
    """The generators a capture draws from, and the state array each one's draws read
    on the graph's device (see the module docstring)."""

    def __init__(self, generators: list[Any], device: Any) -> None:
        self.be, self.index = device.backend, device.index
        self.generators = generators
        self.states = [g._target()._device_state(self.be, self.index) for g in generators]

    def saved(self) -> list[Any]:
        return [s.copy() for s in self.states]

    def restore(self, saved: list[Any]) -> None:
        for state, old in zip(self.states, saved):
            self.be.xp.copyto(state, old)

    def before_launch(self) -> None:
        """Each generator's current state into the array the graph reads (nothing to do
        when it lives there, as it does unless the generator moved or was replaced)."""
        for g, state in zip(self.generators, self.states):
            target = g._target()
            now = target._device_state(self.be, self.index)  # uploads a host-held state
            if now is not state:
                self.be.xp.copyto(state, now)
                target._adopt(self.be, self.index, state)


class CudaGraph:
    """A plan's replay captured on one GPU: ``launch(args)`` returns (stores, outputs)."""

    def __init__(self, replay: Any, args: list[Any], device: Any,
                 generators: Sequence[Any] = ()) -> None:
        xp = self.xp = device.xp
        cuda = xp.cuda
        self.device = device
        self.pool = cuda.MemoryPool()  # the graph's own: see the module docstring
        self.stream = cuda.Stream(non_blocking=True)
        with self._on_device():
            self.draws = _DeviceDraws(list(generators), device)  # uploaded before capture
            counters = self.draws.saved()
        with self._on_device(), cuda.using_allocator(self.pool.malloc):
            self.inputs = [xp.empty_like(a) for a in args]
            for buffer, a in zip(self.inputs, args):  # (only the strict double reads them)
                xp.copyto(buffer, a)
            with self.stream:
                self.stream.begin_capture()
                try:
                    self.results = replay(*self.inputs)
                finally:
                    self.graph = self.stream.end_capture()
        with self._on_device():
            self.draws.restore(counters)  # the capture drew nothing
        self.launches = 0

    def _on_device(self) -> Any:
        return self.device.backend.activate(self.device.index) or contextlib.nullcontext()

    def launch(self, args: list[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        xp = self.xp
        with self._on_device():
            for buffer, a in zip(self.inputs, args):
                xp.copyto(buffer, a)
            self.draws.before_launch()
            self.graph.launch()  # on the current stream, after the copies
            self.launches += 1
            stores, outs = self.results
            return tuple(xp.copy(a) for a in stores), tuple(xp.copy(a) for a in outs)


class Capturing:
    """A plan's CUDA Graph, from warm-up to capture (or to the reason it has none)."""

    def __init__(self, device: Any, generators: Sequence[Any] = ()) -> None:
        self.why_not: str | None = None
        self.device = device
        self.generators = list(generators)  # drawn from by the replay (_DeviceDraws)
        self.replays = 0
        self.graph: CudaGraph | None = None
        # one call at a time: a capture saves the generators' counters and puts them back
        # (it drew nothing), so another thread's replay drawing meanwhile would have its
        # numbers drawn again; launches of one graph are ordered anyway, as CUDA orders them
        self._lock = threading.Lock()

    def status(self) -> str:
        if self.graph is not None:
            return f"captured (launched {self.graph.launches} times)"
        if self.why_not is not None:
            return f"not captured: {self.why_not}"
        return f"replayed op by op until replay {CAPTURE_ON_REPLAY}, which captures it"

    def run(self, replay: Any, args: list[Any]) -> Any:
        """``replay(*args)``: op by op while warming up, then as a graph."""
        with self._lock:
            return self._run(replay, args)

    def _run(self, replay: Any, args: list[Any]) -> Any:
        if self.graph is not None:
            return self.graph.launch(args)
        self.replays += 1
        if self.why_not is None and self.replays >= CAPTURE_ON_REPLAY:
            try:
                self.graph = CudaGraph(replay, args, self.device, self.generators)
            except Exception as e:  # whatever the capture met: replay op by op, as before
                self.why_not = why_not_captured(e, replay)
            else:
                return self.graph.launch(args)
        return replay(*args)


def why_not_captured(e: BaseException, replay: Any) -> str:
    """The reason a capture failed with ``e``; for cupy's refusal of a library, the op
    (``replay.step_at``) whose call it refused, and for a product that did not go through
    nvmath-python, why (not installed, or a product it does not take)."""
    refused = _LIBRARY_REFUSED.fullmatch(str(e))
    if not isinstance(e, NotImplementedError) or refused is None:
        return f"the capture failed: {type(e).__name__}: {e}"
    op, tb = None, e.__traceback__
    step_at = getattr(replay, "step_at", {})
    while tb is not None:  # the replay's innermost line that was running
        if tb.tb_frame.f_code.co_filename == REPLAY_FILE:
            op = step_at.get(tb.tb_lineno, op)
        tb = tb.tb_next
    library = refused.group(1)
    why = f"{op or 'an op'} calls {library}, which cupy refuses during stream capture"
    reason = getattr(e, _NVMATH_REASON, None)  # set where ember's matmul fell back to cupy's
    return why if reason is None else f"{why}; {_plain(reason)}"


def _plain(reason: str) -> str:
    """The routing's reason as the status reads it."""
    if reason.startswith("nvmath-python"):
        return reason
    return f"nvmath-python does not take it: {reason}"

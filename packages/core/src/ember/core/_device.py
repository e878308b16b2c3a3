"""Devices, the ``device`` scope and default placement.

A tensor lives on one ``Device``. Ops run where their tensor inputs live; the scope
only decides where *new* tensors go (constants, zeros, random numbers, converted Python
values). With no scope, new tensors go to ``/gpu:0`` when a GPU is usable, else ``/cpu:0``.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _cupy_backend
from ._backend import GPU_UNSUPPORTED_DTYPES, NumpyBackend
from ._errors import DeviceError


class Device:
    """One place arrays live: a kind (``cpu``/``gpu``), an index and a backend."""

    __slots__ = ("backend", "index", "kind", "name", "xp")

    def __init__(self, kind: str, index: int, backend: Any) -> None:
        self.kind = kind
        self.index = index
        self.backend = backend
        self.xp = backend.xp
        self.name = f"/{kind}:{index}"

    def __repr__(self) -> str:
        return f"Device('{self.name}')"

    def __str__(self) -> str:
        return self.name


_NUMPY = NumpyBackend()
CPU0 = Device("cpu", 0, _NUMPY)
_gpus: list[Device] | None = None  # real cupy GPUs, probed on first need
# Simulated GPUs (numpy-backed) for testing placement without hardware; see ember.core.testing.
_simulated: contextvars.ContextVar[tuple[Device, ...] | None] = contextvars.ContextVar(
    "ember_simulated_gpus", default=None
)
_scope: contextvars.ContextVar[Device | None] = contextvars.ContextVar(
    "ember_device_scope", default=None
)


def _real_gpus() -> list[Device]:
    global _gpus
    if _gpus is None:
        cupy, n = _cupy_backend.probe()
        if n:
            be = _cupy_backend.CupyBackend(cupy)
            _gpus = [Device("gpu", i, be) for i in range(n)]
        else:
            _gpus = []
    return _gpus


def set_present_gpus(devices: list[Device]) -> None:
    """Make ``devices`` this process's GPUs in place of probing cupy (what
    ``ember.core.testing.install_present_gpu`` does with the strict double)."""
    global _gpus
    _gpus = list(devices)


def gpus() -> tuple[Device, ...] | list[Device]:
    sim = _simulated.get()
    return sim if sim is not None else _real_gpus()


def num_gpus() -> int:
    """How many GPUs ember can use (cupy installed and a CUDA device answering)."""
    return len(gpus())


def list_devices() -> list[str]:
    """Names of every device ember can place tensors on, e.g. ``['/cpu:0', '/gpu:0']``."""
    return [CPU0.name] + [d.name for d in gpus()]


_NAME = re.compile(
    r"^/?(?:job:[^/]+/)?(?:replica:\d+/)?(?:task:\d+/)?(?:device:)?(cpu|gpu)(?::(\d+))?$",
    re.IGNORECASE,
)


def get_device(spec: str | Device) -> Device:
    """The ``Device`` for a name like ``"/gpu:0"``, ``"gpu:0"``, ``"GPU:0"``, ``"/cpu:0"``."""
    if isinstance(spec, Device):
        return spec
    m = _NAME.match(str(spec).strip())
    if m is None:
        raise DeviceError(f"device: cannot parse device name {spec!r}; use e.g. '/cpu:0' or '/gpu:0'")
    kind, index = m.group(1).lower(), int(m.group(2) or 0)
    if kind == "cpu":
        if index != 0:
            raise DeviceError(f"device: {spec!r} does not exist; ember has one CPU device, '/cpu:0'")
        return CPU0
    g = gpus()
    if index >= len(g):
        have = ", ".join(list_devices())
        why = "" if g else " (no usable GPU: cupy is not installed or no CUDA device answers)"
        raise DeviceError(f"device: {spec!r} is not available{why}; devices here: {have}")
    return g[index]


def default_device() -> Device:
    g = gpus()
    return g[0] if g else CPU0


def current_device() -> Device:
    """Where new tensors go: the innermost ``device`` scope, else the default placement."""
    d = _scope.get()
    return d if d is not None else default_device()


def placement(dtype: Any = None) -> Device:
    """Where a new tensor of ``dtype`` goes: the innermost ``device`` scope; with no scope,
    the default device, unless that is a GPU and ``dtype`` is one a GPU cannot hold
    (bfloat16): then ``/cpu:0``, as TensorFlow's soft placement keeps an op without a GPU
    kernel on the host. Inside an explicit GPU scope such a dtype stays an error that names
    the op (the user asked for the GPU)."""
    d = _scope.get()
    if d is not None:
        return d
    d = default_device()
    if dtype is not None and d.kind == "gpu":
        try:
            unsupported = np.dtype(dtype) in GPU_UNSUPPORTED_DTYPES
        except TypeError:
            unsupported = False
        if unsupported:
            return CPU0
    return d


@contextlib.contextmanager
def device(name: str | Device) -> Iterator[Device]:
    """Place new tensors on ``name`` inside the block: ``with em.device("/gpu:0"): ...``."""
    d = get_device(name)
    token = _scope.set(d)
    try:
        yield d
    finally:
        _scope.reset(token)

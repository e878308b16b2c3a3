"""Devices for tests: simulated numpy-backed GPUs, and the backends to parametrize over."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from .._backend import NumpyBackend
from .._cupy_backend import probe
from .._device import Device, _simulated


@contextlib.contextmanager
def simulated_gpus(n: int = 1) -> Iterator[tuple[Device, ...]]:
    """Make ember see ``n`` numpy-backed GPUs (``/gpu:0`` ... ) inside the block.

    Each has its own backend object, so placement, default device, ``x.gpu()``/``x.cpu()``
    and device-mismatch errors behave as with real GPUs. Like every ember scope this is a
    context variable: other threads do not see the simulated devices.

    Examples:
        >>> import ember.core as em
        >>> from ember.core.testing import simulated_gpus
        >>> with simulated_gpus(2):
        ...     em.num_gpus(), em.constant(1.0).device
        (2, '/gpu:0')
    """
    gpus = tuple(Device("gpu", i, NumpyBackend()) for i in range(n))
    token = _simulated.set(gpus)
    try:
        yield gpus
    finally:
        _simulated.reset(token)


def gpu_requested() -> bool:
    """Whether ``EMBER_TEST_BACKENDS`` (comma-separated, e.g. ``cpu,gpu``) asks for GPU tests."""
    names = os.environ.get("EMBER_TEST_BACKENDS", "cpu")
    return "gpu" in [n.strip().lower() for n in names.split(",")]


def real_gpu_available() -> bool:
    """True when cupy imports and at least one CUDA device answers."""
    return probe()[1] > 0


def available_backends() -> list[str]:
    """Device names to run backend tests on: ``/cpu:0``, plus ``/gpu:0`` when requested
    through ``EMBER_TEST_BACKENDS`` and a real GPU answers."""
    out = ["/cpu:0"]
    if gpu_requested() and real_gpu_available():
        out.append("/gpu:0")
    return out


def gpu_skip_reason() -> str | None:
    """Why GPU tests do not run here, or None when they do."""
    if not gpu_requested():
        return "GPU backend not requested (set EMBER_TEST_BACKENDS=cpu,gpu)"
    if not real_gpu_available():
        return "no usable GPU: cupy is not installed or no CUDA device answers"
    return None

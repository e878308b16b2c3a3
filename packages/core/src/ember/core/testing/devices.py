"""Devices for tests: simulated numpy-backed GPUs, and the backends to parametrize over."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np

from .._backend import NumpyBackend
from .._cupy_backend import probe
from .._device import Device, _simulated, set_present_gpus
from ._strict import StrictBackend

_BF16 = np.dtype(ml_dtypes.bfloat16)


@contextlib.contextmanager
def simulated_gpus(n: int = 1, strict: bool = False) -> Iterator[tuple[Device, ...]]:
    """Make ember see ``n`` numpy-backed GPUs (``/gpu:0`` ... ) inside the block.

    Each has its own backend object, so placement, default device, ``x.gpu()``/``x.cpu()``
    and device-mismatch errors behave as with real GPUs. Like every ember scope this is a
    context variable: other threads do not see the simulated devices.

    Args:
        n: how many GPUs.
        strict: ``False`` (default): the GPUs hold plain numpy arrays. ``True``: a cupy-like
            double (``ember.core.testing._strict``): arrays of their own type whose implicit
            host conversion raises ``TypeError`` as cupy's does, host/device mixing raises,
            what cupy lacks is missing (bfloat16 included), and each device's
            ``backend.counters`` counts host copies, uploads and syncs (scalar reads).

    Returns:
        A context manager yielding the tuple of devices.

    Examples:
        >>> import ember.core as em
        >>> from ember.core.testing import simulated_gpus
        >>> with simulated_gpus(2):
        ...     em.num_gpus(), em.constant(1.0).device
        (2, '/gpu:0')
        >>> with simulated_gpus(1, strict=True) as (gpu,):
        ...     x = em.constant([1.0, 2.0]) * 3.0
        ...     total = float(em.reduce_sum(x))
        ...     total, gpu.backend.counters.syncs
        (9.0, 1)
    """
    if not isinstance(strict, bool):
        raise TypeError(f"simulated_gpus: strict must be True or False, got {strict!r}")
    make = StrictBackend if strict else (lambda i: NumpyBackend())
    gpus = tuple(Device("gpu", i, make(i)) for i in range(n))
    token = _simulated.set(gpus)
    try:
        yield gpus
    finally:
        _simulated.reset(token)


def _requested() -> list[str]:
    names = os.environ.get("EMBER_TEST_BACKENDS", "cpu,strict-gpu")
    return [n.strip().lower() for n in names.split(",") if n.strip()]


def gpu_requested() -> bool:
    """Whether ``EMBER_TEST_BACKENDS`` (comma-separated, e.g. ``cpu,gpu``) asks for GPU tests."""
    return "gpu" in _requested()


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


# --- the backends every backend test runs on ------------------------------------------
#: ``cpu`` always; ``strict-gpu`` (the cupy-like double, inside each test) always;
#: ``present-gpu`` (the double as this process's GPU, for the whole run); ``gpu`` (real
#: cupy) only with ``EMBER_TEST_BACKENDS=cpu,gpu`` and a GPU that answers (it skips otherwise).
TEST_BACKENDS = ("cpu", "strict-gpu", "present-gpu", "gpu")


def backends_to_test() -> list[str]:
    """The test backends ``EMBER_TEST_BACKENDS`` names (default ``cpu,strict-gpu``; the GPU
    session sets ``cpu,gpu``), in ``TEST_BACKENDS`` order. Raises on an unknown name.

    ``present-gpu`` installs the strict double as this process's GPU here, once (see
    ``install_present_gpu``): every suite's conftest calls this at import, before any test."""
    asked = _requested()
    bad = [n for n in asked if n not in TEST_BACKENDS]
    if bad:
        raise ValueError(f"EMBER_TEST_BACKENDS: unknown backend(s) {bad}; use {TEST_BACKENDS}")
    if "present-gpu" in asked:
        if "gpu" in asked:
            raise ValueError("EMBER_TEST_BACKENDS: 'present-gpu' stands in for a real 'gpu'; "
                             "ask for one of them")
        install_present_gpu()
    return [n for n in TEST_BACKENDS if n in asked]


_present: tuple[Device, ...] | None = None


def install_present_gpu() -> Device:
    """Make one strict double this process's GPU, as cupy's would be on a GPU machine:
    ``/gpu:0`` is the default device in every thread and with no scope, so code and tests
    that never name a device run there, as they did on the H200 (where about 90 of 156
    failures were in tests with no device fixture). Idempotent; lasts for the process.

    Unlike ``simulated_gpus`` (a context variable: one block, one thread), this is what a
    machine has, and it cannot be undone: run it in a process of its own (the
    ``tests-present-gpu`` nox session, ``EMBER_TEST_BACKENDS=present-gpu``)."""
    global _present
    if _present is None:
        _present = (Device("gpu", 0, StrictBackend(0)),)
        set_present_gpus(list(_present))
    return _present[0]


def present_gpu() -> Device | None:
    """The double installed as this process's GPU, or None."""
    return _present[0] if _present else None


@contextlib.contextmanager
def backend_scope(name: str) -> Iterator[str]:
    """Run the block on the test backend ``name`` (one of ``TEST_BACKENDS``); yields the
    device name new tensors go to (``/cpu:0`` or ``/gpu:0``).

    ``strict-gpu`` makes one strict simulated GPU the default device, as a real GPU is on a
    machine that has one; ``cpu`` scopes new tensors to ``/cpu:0`` (so a GPU machine runs
    it on the CPU too).

    Raises:
        ValueError: for an unknown name. Callers skip ``gpu`` with ``gpu_skip_reason()``.
    """
    from .._device import device

    if name == "cpu":
        with device("/cpu:0"):
            yield "/cpu:0"
    elif name == "strict-gpu":
        with simulated_gpus(1, strict=True), device("/gpu:0"):
            yield "/gpu:0"
    elif name in ("gpu", "present-gpu"):
        if name == "present-gpu":
            install_present_gpu()
        with device("/gpu:0"):
            yield "/gpu:0"
    else:
        raise ValueError(f"backend_scope: unknown backend {name!r}; use one of {TEST_BACKENDS}")


@contextlib.contextmanager
def backend_for_test(request: Any) -> Iterator[str]:
    """Body of the backend fixture of ember's test suites (``request.param`` is a name from
    ``backends_to_test()``): skips ``gpu`` where no GPU answers and GPU runs of bfloat16
    cases (cupy has no bfloat16; the clear error is tested on its own), else enters
    ``backend_scope``."""
    import pytest

    name = request.param
    if name == "gpu" and gpu_skip_reason():
        pytest.skip(gpu_skip_reason() or "backend not available")
    if name != "cpu" and _mentions_bfloat16(request.node):
        pytest.skip("bfloat16 is not supported on a GPU (cupy has no bfloat16): the clear "
                    "error is tested in ember-core's tests/test_strict_gpu.py")
    with backend_scope(name) as dev:
        yield dev


def _mentions_bfloat16(node: Any) -> bool:
    if "bfloat16" in node.name:
        return True
    params = getattr(getattr(node, "callspec", None), "params", {})
    return any(_is_bf16(v) for v in params.values())


def _is_bf16(v: Any) -> bool:
    if not isinstance(v, (str, type, np.dtype)):
        return False
    try:
        return bool(np.dtype(v) == _BF16)
    except (TypeError, ValueError):
        return False

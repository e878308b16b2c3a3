"""pytest fixtures for ember packages' tests (a conftest imports the ones it uses).

This module imports pytest: import it only from tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .devices import backend_for_test, backends_to_test


@pytest.fixture(params=backends_to_test())
def device(request: pytest.FixtureRequest) -> Iterator[str]:
    """``/cpu:0`` (``cpu``); ``/gpu:0`` on the strict cupy-like double (``strict-gpu``); ``/gpu:0``
    on a real GPU (``gpu``, with EMBER_TEST_BACKENDS=cpu,gpu; skips where none answers).
    EMBER_TEST_BACKENDS chooses (default ``cpu,strict-gpu``)."""
    with backend_for_test(request) as name:
        yield name


@pytest.fixture
def bfloat16_on_host(request: pytest.FixtureRequest) -> Iterator[None]:
    """Run a test whose id names bfloat16 (``bfloat16`` or ``bf16``) on ``/cpu:0``: no GPU
    holds bfloat16 (cupy has none), so with a GPU present such a case mixes a host tensor
    (soft-placed there) with device ones. Its dtype rules are the same on every device, and
    the test's other cases still run on the default device. Use with
    ``pytestmark = pytest.mark.usefixtures("bfloat16_on_host")``."""
    from .._device import device

    name = request.node.name
    if "bfloat16" in name or "bf16" in name:
        with device("/cpu:0"):
            yield
    else:
        yield


@pytest.fixture
def host_unless_device(request: pytest.FixtureRequest) -> Iterator[None]:
    """Run a test that takes no ``device`` fixture on ``/cpu:0``: tests about host memory
    would otherwise place their tensors on a present GPU (``present-gpu``, or a real one).
    Use with ``pytestmark = pytest.mark.usefixtures("host_unless_device")``."""
    from .._device import device

    if "device" in request.fixturenames:
        yield
        return
    with device("/cpu:0"):
        yield


def _one_strict_gpu(default: bool) -> Iterator[Any]:
    from .._device import device
    from .devices import simulated_gpus

    with simulated_gpus(1, strict=True) as (gpu,):
        if default:
            with device("/gpu:0"):
                yield gpu
        else:
            yield gpu


@pytest.fixture
def strict_gpu() -> Iterator[Any]:
    """One GPU of the strict cupy-like double (``simulated_gpus(1, strict=True)``), for
    tests of the double itself and of what ember runs on it; the default device stays the
    host's (name ``/gpu:0`` where a test places a tensor there)."""
    yield from _one_strict_gpu(default=False)


@pytest.fixture
def strict_gpu_default() -> Iterator[Any]:
    """``strict_gpu``, made the default device (``/gpu:0``) for the test."""
    yield from _one_strict_gpu(default=True)

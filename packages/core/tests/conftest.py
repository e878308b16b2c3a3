"""Shared fixtures: the backend device every backend-sensitive test runs on."""

from __future__ import annotations

import pytest

from ember.core.testing import available_backends, gpu_skip_reason

_BACKENDS = ["/cpu:0", "/gpu:0"]


@pytest.fixture(params=_BACKENDS, ids=["cpu", "gpu"])
def device(request: pytest.FixtureRequest) -> str:
    """``/cpu:0`` always; ``/gpu:0`` only with a real GPU and EMBER_TEST_BACKENDS=cpu,gpu."""
    if request.param not in available_backends():
        pytest.skip(gpu_skip_reason() or "backend not available")
    return request.param

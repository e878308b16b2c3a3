"""pytest fixtures for ember packages' tests (a conftest imports the ones it uses).

This module imports pytest: import it only from tests.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .devices import backend_for_test, backends_to_test


@pytest.fixture(params=backends_to_test())
def device(request: pytest.FixtureRequest) -> Iterator[str]:
    """``/cpu:0`` (``cpu``); ``/gpu:0`` on the strict cupy-like double (``strict-gpu``); ``/gpu:0``
    on a real GPU (``gpu``, with EMBER_TEST_BACKENDS=cpu,gpu; skips where none answers).
    EMBER_TEST_BACKENDS chooses (default ``cpu,strict-gpu``)."""
    with backend_for_test(request) as name:
        yield name

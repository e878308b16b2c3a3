"""The test backend fixture for the integration tests that run on every test backend.

A module opts in with ``pytestmark = pytest.mark.usefixtures("backend")``: each of its tests
then runs once per backend of ``EMBER_TEST_BACKENDS`` (default ``cpu`` and the strict
cupy-like GPU double ``strict-gpu``), with new tensors going to that backend's device, as
the core/tape/nn suites do (see ember-core's ``tests/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ember.core.testing import backend_for_test, backends_to_test


@pytest.fixture(params=backends_to_test())
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """The device new tensors go to in this test (``/cpu:0`` or ``/gpu:0``)."""
    with backend_for_test(request) as name:
        yield name

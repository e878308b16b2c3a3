"""Shared fixtures: the backend device every backend-sensitive test runs on."""

from ember.core.testing.fixtures import (  # noqa: F401  (fixtures, by name)
    bfloat16_on_host,
    device,
    host_unless_device,
)

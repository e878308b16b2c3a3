"""Shared fixtures: the backend device every backend-sensitive test runs on."""

from ember.core.testing.fixtures import bfloat16_on_host, device  # noqa: F401  (fixtures, by name)

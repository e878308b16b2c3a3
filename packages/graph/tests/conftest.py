"""Shared fixtures: the backend device every backend-sensitive test runs on."""

from ember.core.testing.fixtures import device  # noqa: F401  (a fixture, by name)

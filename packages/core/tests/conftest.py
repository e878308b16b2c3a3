"""Shared fixtures: the backend device every backend-sensitive test runs on, and one GPU
of the strict double (``gpu``; ``strict_gpu_default`` makes it the default device)."""

from ember.core.testing.fixtures import (  # noqa: F401  (fixtures, by name)
    bfloat16_on_host,
    device,
    host_unless_device,
    strict_gpu_default,
)
from ember.core.testing.fixtures import strict_gpu as gpu  # noqa: F401  (by name)

"""The errors ember.checkpoint raises; every message names the file and the paths involved."""

from __future__ import annotations

__all__ = [
    "CheckpointError",
    "CheckpointMismatchError",
    "CheckpointNotFoundError",
    "CorruptCheckpointError",
    "IncompleteRestoreError",
]


class CheckpointError(Exception):
    """Base class of every error raised by ember.checkpoint."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """The checkpoint file named by a path does not exist."""


class CorruptCheckpointError(CheckpointError):
    """The file is truncated, damaged, not safetensors, or not written by ember.checkpoint."""


class CheckpointMismatchError(CheckpointError, ValueError):
    """Saved values do not fit the objects they would restore into (shape, dtype or kind)."""


class IncompleteRestoreError(CheckpointError, AssertionError):
    """A restore status assertion failed: values are unused or objects were not restored."""


def describe(items: list[str], limit: int = 20) -> str:
    """Format a list of offending paths, one per line, eliding beyond ``limit``."""
    lines = [f"  {item}" for item in items[:limit]]
    if len(items) > limit:
        lines.append(f"  ... and {len(items) - limit} more")
    return "\n".join(lines)

"""Reading a checkpoint without the objects it was saved from: ``list_variables`` and
``load_variable`` (TensorFlow's ``tf.train.list_variables`` / ``tf.train.load_variable``)."""

from __future__ import annotations

import os

import numpy as np

from ._checkpoint import Checkpoint
from ._errors import CheckpointNotFoundError
from ._index import latest_checkpoint


def _path(ckpt_dir_or_file: str | os.PathLike[str]) -> str:
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is not None:
            return latest
    return path


def list_variables(ckpt_dir_or_file: str | os.PathLike[str]) -> list[tuple[str, list[int]]]:
    """The values a checkpoint holds: ``(path, shape)`` pairs, sorted by path.

    Args:
        ckpt_dir_or_file: a checkpoint's path (as ``save`` returns it), or a directory
            (its latest checkpoint is read).

    Raises:
        CheckpointNotFoundError: there is no checkpoint there.
        CorruptCheckpointError: its header is not a valid ember checkpoint's.
    """
    with Checkpoint._open(_path(ckpt_dir_or_file)) as f:
        return [(key, list(e.shape)) for key, e in sorted(f.entries.items())]


def load_variable(ckpt_dir_or_file: str | os.PathLike[str], name: str) -> np.ndarray:
    """The value saved under ``name`` (a path ``list_variables`` gives, or an alias of
    one), checksum verified, as a new numpy array.

    Raises:
        CheckpointNotFoundError: there is no checkpoint there, or it holds no value
            ``name`` (the message names the nearest paths it does hold).
        CorruptCheckpointError: the file is damaged (its checksum does not match).
    """
    path = _path(ckpt_dir_or_file)
    with Checkpoint._open(path) as f:
        key = f.resolve(name)
        if key is None or key not in f.entries:
            near = sorted(f.entries, key=lambda k: _distance(k, name))[:3]
            raise CheckpointNotFoundError(
                f"load_variable: {path} holds no value {name!r}; it holds "
                f"{len(f.entries)} values, e.g. {near}")
        return f.read(key)


def _distance(a: str, b: str) -> int:
    """How many leading path parts two paths do not share (for naming near misses)."""
    pa, pb = a.split("/"), b.split("/")
    common = 0
    for x, y in zip(pa, pb):
        if x != y:
            break
        common += 1
    return max(len(pa), len(pb)) - common

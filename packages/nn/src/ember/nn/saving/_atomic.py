"""Atomic file writes: a save killed half way leaves the old file whole.

The new file is written under a hidden temporary name in the target's own directory,
flushed and fsynced, renamed over the target (atomic on POSIX and Windows), and the
directory is fsynced so the rename survives a power cut. Readers see the old file or the
new one, never a mix; a failed write removes its temporary file.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from typing import BinaryIO

TMP_SUFFIX = ".ember-tmp"


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # Windows cannot open a directory; NTFS journals the rename itself
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse it; nothing more can be done
    finally:
        os.close(fd)


def write_atomically(path: str, write: Callable[[BinaryIO], None], what: str) -> None:
    """Call ``write(file)`` on a fresh temporary file, then make it ``path`` atomically.

    Raises:
        IsADirectoryError: ``path`` is a directory.
        OSError: the OS refused (disk full, permissions); ``path`` is untouched and the
            temporary file removed. Whatever ``write`` raised passes through the same way.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"{what}: {path!r} is a directory")
    directory, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{base}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o666)  # the umask applies, as for open(path, "wb")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)

"""Fetching files over HTTP(S) into a directory, verified by sha256 before they land."""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(url: str, dest: str, sha256: str | None, timeout: float = 60.0) -> None:
    """Fetch ``url`` to ``dest`` atomically; a checksum mismatch leaves nothing behind."""
    directory = os.path.dirname(os.path.abspath(dest))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            for block in iter(lambda: resp.read(1 << 20), b""):
                out.write(block)
        if sha256 is not None:
            got = sha256_of(tmp)
            if got != sha256:
                raise OSError(f"download of {url} has sha256 {got}, expected {sha256}")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)

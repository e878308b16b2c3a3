"""Reading a checkpoint's tensors with every checksum verified, reads and checks overlapped.

A restore reads each tensor that goes into a fresh array once, from the page cache straight
into that array (``os.preadv``), and checks it: the checksum of each piece runs on a
second thread while the main thread reads the next piece (``preadv`` releases the GIL;
``google-crc32c`` holds it for one piece at most), so checking costs little beyond the
read. Runs of small tensors, adjacent in the file, are read by one ``preadv`` and checked
by one task. Tensors that are only checked (a numpy array or a variable's own buffer written
in place later, a value whose object does not exist yet) are checksummed in a read-only
mapping of the file, without a copy.

Nothing is returned before every checksum has been compared: a damaged tensor raises
``CorruptCheckpointError`` and no array escapes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

PIECE = 4 << 20  # bytes per read and per checksum task (fits a CPU's cache)


def _iov_max() -> int:
    """Buffers one ``preadv`` takes (16, POSIX's least, where the system does not say)."""
    try:
        n = os.sysconf("SC_IOV_MAX")
    except (AttributeError, ValueError, OSError):
        return 16
    return n if n > 0 else 1024


_IOV_MAX = _iov_max()
# Checksums on a second thread only where there is a second CPU to run it.
THREADED = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1) > 1

Pieces = list[tuple[str, np.ndarray]]


class Checker:
    """Running checksums of tensors whose pieces arrive in file order: taken by one worker
    thread (one, so that each tensor's pieces are folded in order), or inline."""

    def __init__(self, checksum: Callable[[np.ndarray, int], int], keys: Iterable[str]) -> None:
        self._checksum = checksum
        self.crcs = dict.fromkeys(keys, 0)  # an empty tensor's checksum is 0
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ember-crc") if THREADED \
            else None
        self._futures: list[Future[None]] = []

    def add(self, pieces: Pieces) -> None:
        if self._pool is None:
            self._fold(pieces)
        else:
            self._futures.append(self._pool.submit(self._fold, pieces))

    def _fold(self, pieces: Pieces) -> None:
        for key, piece in pieces:
            self.crcs[key] = self._checksum(piece, self.crcs[key])

    def finish(self) -> dict[str, int]:
        """The checksums, once every piece is folded in (a worker's error raises here)."""
        for future in self._futures:
            future.result()
        return self.crcs

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=exc[0] is not None)


def read_checked(read: Callable[[list[np.ndarray], int], None],
                 checksum: Callable[[np.ndarray, int], int], spans: Mapping[str, Any],
                 out: Mapping[str, np.ndarray], check: Iterable[str],
                 mapped: Callable[[int, int], np.ndarray]) -> dict[str, int]:
    """Read tensors into the buffers ``out`` and checksum them and the tensors ``check``.

    Args:
        read: ``read(buffers, offset)`` fills ``buffers`` from the file's bytes at
            ``offset`` on (raising if it cannot).
        checksum: ``checksum(piece, crc)``, the file format's checksum continued.
        spans: every tensor's place in the file (``begin`` and ``end`` offsets).
        out: by key, the flat uint8 buffer (of the tensor's size) to read it into.
        check: keys only to checksum, in ``mapped(begin, end)``, a view of the file.

    Returns:
        The checksum of each key of both sets; the caller compares them with the file's
        record before using any buffer.
    """
    keys = sorted(set(out) | set(check), key=lambda k: (spans[k].begin, spans[k].end))
    with Checker(checksum, keys) as checker:
        batch: Pieces = []  # to read, then check: the file's bytes [at, end)
        in_place: Pieces = []  # only to check, in the mapping: no read
        at = end = checked = 0

        def flush() -> None:
            if batch:
                read([piece for _, piece in batch], at)
                checker.add(list(batch))
                batch.clear()

        for key in keys:
            span, dest = spans[key], out.get(key)
            for start in range(span.begin, span.end, PIECE):
                stop = min(start + PIECE, span.end)
                if dest is None:
                    in_place.append((key, mapped(start, stop)))
                    checked += stop - start
                    if checked >= PIECE:
                        checker.add(list(in_place))
                        in_place.clear()
                        checked = 0
                    continue
                if batch and (start != end or end - at + stop - start > PIECE
                              or len(batch) == _IOV_MAX):
                    flush()
                if not batch:
                    at = start
                batch.append((key, dest[start - span.begin:stop - span.begin]))
                end = stop
        flush()
        checker.add(in_place)
        return checker.finish()


def preadv_all(fd: int, buffers: list[Any], offset: int,
               truncated: Callable[[int], Exception]) -> None:
    """Fill ``buffers`` (writable, contiguous) from ``fd`` at ``offset``, as many calls as
    it takes; ``truncated(position)`` is raised where the file ends early."""
    views = [memoryview(b).cast("B") for b in buffers]
    views = [v for v in views if len(v)]
    while views:
        n = os.preadv(fd, views[:_IOV_MAX], offset)
        if n <= 0:
            raise truncated(offset)
        offset += n
        while views and n >= len(views[0]):
            n -= len(views[0])
            views.pop(0)
        if views and n:
            views[0] = views[0][n:]

"""Reading a checkpoint's tensors with every checksum verified, reads and checks overlapped.

A restore reads each tensor that goes into a fresh array once, from the page cache straight
into that array (``os.preadv``), and checks it: the checksum of each piece runs on a
second thread while the main thread reads the next piece (``preadv`` releases the GIL, and
so does the checksum where ``_checksum.gil_free`` says so; otherwise it holds the GIL for
one piece at most), so checking costs little beyond the read. Runs of small tensors,
adjacent in the file, are read by one ``preadv`` and checked by one task. Tensors that are
only checked (a numpy array or a variable's own buffer written in place later, a value
whose object does not exist yet) are checksummed in a read-only mapping of the file,
without a copy, in pieces shared out over the CPUs (``check_mapped``); their copies, once
everything is checked, are shared out the same way (``copy_all``).

Nothing is returned before every checksum has been compared: a damaged tensor raises
``CorruptCheckpointError`` and no array escapes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from . import _checksum, _parallel

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
        check: keys only to checksum, in ``mapped(begin, end)``, a view of the file
            (``check_mapped``).

    Returns:
        The checksum of each key of both sets; the caller compares them with the file's
        record before using any buffer.
    """
    crcs = _read_checked(read, checksum, spans, out) if out else {}
    crcs.update(check_mapped(checksum, spans, set(check) - set(out), mapped))
    return crcs


def _read_checked(read: Callable[[list[np.ndarray], int], None],
                  checksum: Callable[[np.ndarray, int], int], spans: Mapping[str, Any],
                  out: Mapping[str, np.ndarray]) -> dict[str, int]:
    keys = sorted(out, key=lambda k: (spans[k].begin, spans[k].end))
    with Checker(checksum, keys) as checker:
        batch: Pieces = []  # to read, then check: the file's bytes [at, end)
        at = end = 0

        def flush() -> None:
            if batch:
                read([piece for _, piece in batch], at)
                checker.add(list(batch))
                batch.clear()

        for key in keys:
            span, dest = spans[key], out[key]
            for start in range(span.begin, span.end, PIECE):
                stop = min(start + PIECE, span.end)
                if batch and (start != end or end - at + stop - start > PIECE
                              or len(batch) == _IOV_MAX):
                    flush()
                if not batch:
                    at = start
                batch.append((key, dest[start - span.begin:stop - span.begin]))
                end = stop
        flush()
        return checker.finish()


def check_mapped(checksum: Callable[[np.ndarray, int], int], spans: Mapping[str, Any],
                 keys: Iterable[str], mapped: Callable[[int, int], np.ndarray]
                 ) -> dict[str, int]:
    """The checksums of the tensors ``keys``, taken in ``mapped(begin, end)`` (a view of the
    file: no read, no copy), on the idle CPUs where the checksum releases the GIL.

    Each tensor is cut into pieces of ``PIECE`` bytes whose checksums are taken separately
    (from 0) and joined in file order (``_checksum.combiner``), so one large tensor is
    shared out too; small tensors, adjacent in the file, form one task."""
    combine = _checksum.combiner(checksum)
    pieces: list[tuple[str, int, int]] = []
    for key in sorted(keys, key=lambda k: (spans[k].begin, spans[k].end)):
        span = spans[key]
        step = PIECE if combine is not None else max(span.end - span.begin, 1)
        pieces += [(key, start, min(start + step, span.end))
                   for start in range(span.begin, span.end, step)]
    tasks, group, size = [], [], 0
    for piece in pieces:
        group.append(piece)
        size += piece[2] - piece[1]
        if size >= PIECE:
            tasks.append(group)
            group, size = [], 0
    if group:
        tasks.append(group)

    def task(group: list[tuple[str, int, int]]) -> Callable[[], list[int]]:
        return lambda: [checksum(mapped(begin, end), 0) for _, begin, end in group]

    parallel = THREADED and _checksum.gil_free(checksum) and len(tasks) > 1
    results = _parallel.run([task(g) for g in tasks], None if parallel else 1)
    crcs = dict.fromkeys(keys, 0)  # an empty tensor's checksum is 0
    for group, values in zip(tasks, results):
        for (key, begin, end), crc in zip(group, values):
            first = begin == spans[key].begin
            crcs[key] = crc if first or combine is None else combine(crcs[key], crc, end - begin)
    return crcs


def copy_all(pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> None:
    """``np.copyto(target, source)`` for each pair, on the idle CPUs: same-typed contiguous
    arrays are cut into pieces of ``PIECE`` bytes, and small copies share a task. (A copy
    is memory-bound; it cannot fail once shapes and dtypes were checked.) Pieces are
    copied last first: give them in file order, the order ``check_mapped`` read them in."""
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    for target, source in pairs:
        if (target.dtype == source.dtype and target.shape == source.shape
                and target.flags.c_contiguous and source.flags.c_contiguous
                and target.size and target.itemsize):
            flat_target, flat_source = target.reshape(-1), source.reshape(-1)
            step = max(PIECE // target.itemsize, 1)
            parts += [(flat_target[i:i + step], flat_source[i:i + step])
                      for i in range(0, target.size, step)]
        else:
            parts.append((target, source))
    parts.reverse()  # the last bytes checked first: they may still be in the CPU's cache
    tasks, group, size = [], [], 0
    for part in parts:
        group.append(part)
        size += part[0].nbytes
        if size >= PIECE:
            tasks.append(group)
            group, size = [], 0
    if group:
        tasks.append(group)

    def task(group: list[tuple[np.ndarray, np.ndarray]]) -> Callable[[], None]:
        def copy() -> None:
            for target, source in group:
                np.copyto(target, source)
        return copy

    _parallel.run([task(g) for g in tasks], None if THREADED and len(tasks) > 1 else 1)


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

"""The file writer: a queue in front of a background thread that owns one event file.

The training loop's side of a summary call only appends a small tuple to a deque. The
writer thread wakes when ``max_queue`` items are pending, when ``flush_millis`` has passed,
or on ``flush()``/``close()``; it serializes everything pending into TensorBoard events,
frames them (length + CRC32C) and writes them with one ``write`` and one ``flush`` per
wake-up. ``flush()`` puts a marker in the same queue and waits for it, so it returns only
once everything queued before it is in the file. An exception in the thread is kept and
raised by the next call on the writer. At interpreter exit, every open writer is flushed
and closed, so a run that never calls ``close()`` still leaves a complete file.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

from . import _context
from ._proto import Event, SourceMetadata
from ._record import frame

_FILE_VERSION = "brain.Event:2"
_ids = itertools.count()
_open_writers: set[SummaryWriter] = set()
_open_lock = threading.Lock()


class SummaryWriterError(RuntimeError):
    """The writer thread failed; ``__cause__`` holds what it raised."""


class SummaryWriter:
    """Writes summaries to one TensorBoard event file in ``logdir``, in the background.

    Create one with :func:`create_file_writer`. Summary ops write to the default writer
    of the current context; make a writer the default with :meth:`as_default` (scoped)
    or :meth:`set_as_default`.
    """

    def __init__(self, logdir: str | os.PathLike[str], max_queue: int = 10,
                 flush_millis: int = 2000, filename_suffix: str = "") -> None:
        if int(max_queue) < 1:
            raise ValueError(f"max_queue must be at least 1, got {max_queue}")
        if flush_millis <= 0:
            raise ValueError(f"flush_millis must be positive, got {flush_millis}")
        self.logdir = os.fspath(logdir)
        os.makedirs(self.logdir, exist_ok=True)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                f"{os.getpid()}.{next(_ids)}{filename_suffix or ''}")
        self.path = os.path.join(self.logdir, name)
        self._max_queue = int(max_queue)
        self._flush_secs = flush_millis / 1000.0
        self._queue: deque[tuple[Any, ...]] = deque()
        self._wake = threading.Event()
        self._error: BaseException | None = None
        self._closed = False
        self._close_lock = threading.Lock()
        self._pid = os.getpid()
        self._file = open(self.path, "wb")  # closed by close()
        header = Event(wall_time=time.time(), file_version=_FILE_VERSION,
                       source_metadata=SourceMetadata(writer="ember"))
        self._file.write(frame(header.SerializeToString()))
        self._file.flush()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"ember-summary-writer-{name}")
        self._thread.start()
        with _open_lock:
            _open_writers.add(self)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"SummaryWriter({self.path!r}, {state})"

    # --- the default writer ---------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator[SummaryWriter]:
        """Make this the default writer (and ``step`` the default step) inside ``with``.

        Leaving the block wakes the writer thread to write what is pending, without
        waiting for it (a ``with`` inside the training loop must not stall it); call
        :meth:`flush` where you need the file complete.
        """
        w_token = _context.default_writer.set(self)
        s_token = _context.default_step.set(step) if step is not None else None
        try:
            yield self
        finally:
            if s_token is not None:
                _context.default_step.reset(s_token)
            _context.default_writer.reset(w_token)
            self._wake.set()

    def set_as_default(self, step: Any = None) -> None:
        """Make this the default writer (and ``step`` the default step) from now on."""
        _context.default_writer.set(self)
        if step is not None:
            _context.default_step.set(step)

    # --- the training loop's side ---------------------------------------------------
    def _put(self, item: tuple[Any, ...]) -> None:
        if self._error is not None:
            self._raise_error()
        if self._closed:
            raise ValueError(f"{self!r}: cannot write to a closed writer" + (
                f" (it belongs to process {self._pid}; create writers after forking)"
                if self._pid != os.getpid() else ""))
        queue = self._queue
        queue.append(item)
        if len(queue) >= self._max_queue and not self._wake.is_set():
            self._wake.set()

    def flush(self) -> None:
        """Return once everything written so far is in the file (handed to the OS)."""
        if self._error is not None:
            self._raise_error()
        if self._closed:
            return
        done = threading.Event()
        self._queue.append((None, done))
        self._wake.set()
        while not done.wait(0.05):
            if not self._thread.is_alive():
                break
        if self._error is not None:
            self._raise_error()

    def close(self) -> None:
        """Flush and close the file; the writer accepts no more summaries. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._queue.append((None, None))
            self._wake.set()
            self._thread.join()
            self._file.close()
            with _open_lock:
                _open_writers.discard(self)
        if self._error is not None:
            self._raise_error()

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        raise SummaryWriterError(f"{self!r}: the writer thread failed: {error!r}") from error

    # --- the writer thread ----------------------------------------------------------
    def _run(self) -> None:
        event = Event()
        seen: set[str] = set()
        while True:
            self._wake.wait(self._flush_secs)
            self._wake.clear()
            try:
                if self._drain(event, seen):
                    return
            except BaseException as e:  # keep the thread alive; the next call raises it
                self._error = e

    def _drain(self, event: Event, seen: set[str]) -> bool:
        """Write out everything queued; True once the close marker is reached."""
        queue, chunks, markers, closing = self._queue, [], [], False
        while queue:
            item = queue.popleft()
            if item[0] is None:
                if item[1] is None:
                    closing = True
                else:
                    markers.append(item[1])
                continue
            try:
                chunks.append(frame(_serialize(event, seen, item)))
            except Exception as e:  # one bad summary must not lose the others
                self._error = e
        try:
            if chunks:
                self._file.write(b"".join(chunks))
            self._file.flush()
        finally:
            for done in markers:
                done.set()
        return closing


def _serialize(event: Event, seen: set[str], item: tuple[Any, ...]) -> bytes:
    kind, tag, payload, step, wall_time, description = item
    event.Clear()
    event.wall_time = wall_time
    event.step = step
    value = event.summary.value.add()
    value.tag = tag
    kind.encode(value, payload)
    if tag not in seen:
        # TensorBoard takes a tag's metadata from its first event; later ones skip it.
        value.metadata.CopyFrom(kind.metadata(description))
        seen.add(tag)
    return event.SerializeToString()


def create_file_writer(logdir: str | os.PathLike[str], max_queue: int = 10,
                       flush_millis: int = 2000, filename_suffix: str = "") -> SummaryWriter:
    """A writer of TensorBoard event files in ``logdir`` (created if missing).

    Args:
        logdir: the run's directory; TensorBoard shows each directory as a run.
        max_queue: wake the writer thread once this many summaries are pending.
        flush_millis: the longest a summary waits in memory before it is written.
        filename_suffix: appended to the event file's name.

    Examples:
        >>> import tempfile
        >>> from ember.summary import create_file_writer, scalar
        >>> writer = create_file_writer(tempfile.mkdtemp())
        >>> with writer.as_default():
        ...     scalar("loss", 0.5, step=1)
        True
        >>> writer.close()
    """
    return SummaryWriter(logdir, max_queue=max_queue, flush_millis=flush_millis,
                         filename_suffix=filename_suffix)


def flush(writer: SummaryWriter | None = None) -> None:
    """Flush ``writer``, or the default writer of this context if there is one."""
    writer = writer if writer is not None else _context.default_writer.get()
    if writer is not None:
        writer.flush()


def write(kind: Any, tag: str, payload: Any, step: int, description: str | None) -> bool:
    """Queue one prepared summary on the default writer; False when there is none."""
    writer = _context.default_writer.get()
    if writer is None:
        return False
    writer._put((kind, tag, payload, step, time.time(), description))
    return True


def _disown_after_fork() -> None:
    """In a forked child, the parent's writers have no thread: refuse writes, loudly."""
    global _open_lock
    _open_lock = threading.Lock()
    for writer in _open_writers:
        writer._closed = True
    _open_writers.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_disown_after_fork)


@atexit.register
def _close_all() -> None:
    """At interpreter exit, everything queued reaches the disk."""
    with _open_lock:
        writers = list(_open_writers)
    for writer in writers:
        with contextlib.suppress(Exception):
            writer.close()

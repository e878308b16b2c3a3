"""The file writer: a queue in front of a background thread that owns one event file.

The training loop's side of a summary call only appends a small tuple to a deque. The
writer thread wakes when ``max_queue`` items are pending, when ``flush_millis`` has passed,
or on ``flush()``/``close()``; it serializes what was pending when it woke into TensorBoard
events, frames them (length + CRC32C) and writes them in batches of at most ``_BATCH``, so a
loop that queues faster than the thread encodes still sees its file grow. A caller that
gets ``_BACKLOG`` summaries ahead waits for the thread to catch up. ``flush()``
puts a marker in the same queue and waits for it, so it returns only once everything
queued before it is in the file.

Failures: the thread keeps the *first* error (with the summary's tag and step when one
summary could not be encoded) and counts every event it could not write; the next call
on the writer raises ``SummaryWriterError`` saying what failed and how many events
were lost. A write that fails part-way (disk full) is cut back off the file, so the file
only ever holds whole records.

Lifetime: the thread and the file belong to a ``_Core`` that never refers back to the
``SummaryWriter``. A writer dropped without ``close()`` is closed by its finalizer (what
was queued is written, the thread ends, the file is closed); at interpreter exit every
open writer is flushed and closed the same way.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import socket
import threading
import time
import warnings
import weakref
from collections import deque
from collections.abc import Iterator
from typing import Any

from . import _context
from ._proto import Event, SourceMetadata
from ._record import frame
from ._validate import count

_FILE_VERSION = "brain.Event:2"
_ids = itertools.count()
_open_cores: set[_Core] = set()
_open_lock = threading.Lock()
_BATCH = 256  # events per write: a long backlog reaches the file a batch at a time
_BACKLOG = 20_000  # summaries queued before the caller waits for the thread to catch up


class SummaryWriterError(RuntimeError):
    """The writer thread failed; ``__cause__`` holds the first error it met.

    Attributes:
        lost: how many events were not written since the last report.
    """

    def __init__(self, message: str, lost: int = 0) -> None:
        super().__init__(message)
        self.lost = lost


class _Core:
    """The queue, the file and the thread of one writer; never refers to the writer."""

    def __init__(self, path: str, label: str, max_queue: int, flush_secs: float) -> None:
        self.path, self.label = path, label
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self.queue: deque[tuple[Any, ...]] = deque()
        self.wake = threading.Event()
        self.closed = False
        self.pid = os.getpid()
        self._close_lock = threading.Lock()
        self._error_lock = threading.Lock()
        self.error: tuple[BaseException, str] | None = None  # the first since the last report
        self.more_errors = 0  # errors after the first, since the last report
        self.lost = 0  # events not written since the last report
        self.lost_total = 0
        self.broken = False  # a failed write could not be cut back: write nothing more
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.size = 0
        try:
            header = Event(wall_time=time.time(), file_version=_FILE_VERSION,
                           source_metadata=SourceMetadata(writer="ember"))
            self.write_all(frame(header.SerializeToString()))
        except OSError as e:
            os.close(self.fd)
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise OSError(e.errno, f"cannot write the event file header: {e.strerror}",
                          path) from e
        self.thread = threading.Thread(target=self.run, daemon=True,
                                       name=f"ember-summary-writer-{label}")
        self.thread.start()
        with _open_lock:
            _open_cores.add(self)

    # --- the caller's side ------------------------------------------------------------
    def describe(self) -> str:
        return f"SummaryWriter({self.path!r}, {'closed' if self.closed else 'open'})"

    def put(self, item: tuple[Any, ...]) -> None:
        if self.error is not None or self.lost:
            self.raise_error()
        if self.closed:
            raise ValueError(f"{self.describe()}: cannot write to a closed writer" + (
                f" (it belongs to process {self.pid}; create writers after forking)"
                if self.pid != os.getpid() else ""))
        queue = self.queue
        queue.append(item)
        if len(queue) >= self.max_queue and not self.wake.is_set():
            self.wake.set()
        if len(queue) > _BACKLOG:
            self.catch_up()

    def catch_up(self) -> None:
        """Wait while the backlog is over _BACKLOG: a loop that outruns the disk would
        otherwise hold every summary it ever made in memory (TensorFlow's writer flushes
        in the caller when its queue is full)."""
        self.wake.set()
        while len(self.queue) > _BACKLOG // 2 and self.thread.is_alive():
            time.sleep(0.0005)

    def flush(self) -> None:
        if self.error is not None or self.lost:
            self.raise_error()
        if self.closed:
            return
        done = threading.Event()
        self.queue.append((None, done))
        self.wake.set()
        while not done.wait(0.05):
            if not self.thread.is_alive():
                break
        if self.error is not None or self.lost:
            self.raise_error()

    def close(self) -> None:
        """Write what is queued, end the thread, close the file. Idempotent."""
        with self._close_lock:
            if self.closed:
                return
            self.closed = True
            self.queue.append((None, None))
            self.wake.set()
            with _open_lock:
                _open_cores.discard(self)
            # The thread closes the file once it reaches the marker. A finalizer run by a
            # garbage collection inside this writer's own thread must not wait for itself.
            if self.thread is not threading.current_thread():
                self.thread.join()

    def pending_error(self) -> SummaryWriterError | None:
        """The error to report now (and forget), or None."""
        with self._error_lock:
            first, more, lost = self.error, self.more_errors, self.lost
            self.error, self.more_errors, self.lost = None, 0, 0
        if first is None and not lost:
            return None
        parts = [f"{self.describe()}: the writer thread failed"]
        if first is not None:
            exc, where = first
            parts.append(f" {where}: {type(exc).__name__}: {exc}")
            if more:
                parts.append(f" (and {more} later error{'s' if more > 1 else ''})")
        parts.append(f"; {lost} event{'s' if lost != 1 else ''} lost since the last report, "
                     f"{self.lost_total} in all")
        error = SummaryWriterError("".join(parts), lost)
        error.__cause__ = first[0] if first is not None else None
        return error

    def raise_error(self) -> None:
        error = self.pending_error()
        if error is not None:
            raise error

    # --- the writer thread --------------------------------------------------------------
    def fail(self, exc: BaseException, where: str, lost: int) -> None:
        with self._error_lock:
            if self.error is None:
                self.error = (exc, where)
            else:
                self.more_errors += 1
            self.lost += lost
            self.lost_total += lost

    def run(self) -> None:
        event = Event()
        seen: set[str] = set()
        while True:
            self.wake.wait(self.flush_secs)
            self.wake.clear()
            try:
                closing = self.drain(event, seen)
            except BaseException as e:  # keep the thread alive; the next call raises it
                self.fail(e, "while writing", 0)
                closing = self.closed and not self.queue
            if closing:
                try:
                    os.close(self.fd)
                except OSError as e:
                    self.fail(e, f"closing {self.path}", 0)
                return

    def drain(self, event: Event, seen: set[str]) -> bool:
        """Write out what was queued when the thread woke; True at the close marker.

        Only that many items: a loop that queues faster than this thread encodes must
        still see its events reach the file, a batch at a time, not once it stops.
        """
        queue, chunks, markers, closing = self.queue, [], [], False
        for _ in range(len(queue)):
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
                self.fail(e, f"on summary {item[1]!r} at step {item[3]}", 1)
            if len(chunks) >= _BATCH:
                self.commit(b"".join(chunks), len(chunks))
                chunks = []
        try:
            if chunks:
                self.commit(b"".join(chunks), len(chunks))
        finally:
            for done in markers:
                done.set()
        return closing

    def commit(self, data: bytes, events: int) -> None:
        """Append whole records, or none of them (a partial write is cut back off)."""
        if self.broken:
            self.fail(OSError(f"{self.path}: an earlier failed write could not be undone"),
                      "while writing", events)
            return
        try:
            self.write_all(data)
        except OSError as e:
            self.fail(e, f"writing {events} event{'s' if events != 1 else ''} to {self.path}",
                      events)
            try:
                os.ftruncate(self.fd, self.size)
                os.lseek(self.fd, self.size, os.SEEK_SET)
            except OSError:
                self.broken = True

    def write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        self.size += len(data)


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


def _finalize(core: _Core) -> None:
    """A writer was dropped (or the interpreter exits) without close(): close it."""
    try:
        core.close()
    except OSError as e:
        warnings.warn(f"{core.describe()}: closing failed: {e}", RuntimeWarning, stacklevel=1)
    error = core.pending_error()
    if error is not None:
        warnings.warn(f"{error} (the writer was never closed, so nothing could raise this)",
                      RuntimeWarning, stacklevel=1)


class SummaryWriter:
    """Writes summaries to one TensorBoard event file in ``logdir``, in the background.

    Create one with ``create_file_writer``. Summary ops write to the default writer
    of the current context; make a writer the default with ``as_default`` (scoped)
    or ``set_as_default``.
    """

    def __init__(self, logdir: str | os.PathLike[str], max_queue: int = 10,
                 flush_millis: int = 2000, filename_suffix: str = "",
                 name: str | None = None) -> None:
        max_queue, flush_secs, filename_suffix, name = _check_options(
            max_queue, flush_millis, filename_suffix, name)
        self.logdir = os.fspath(logdir)
        os.makedirs(self.logdir, exist_ok=True)
        file = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                f"{os.getpid()}.{next(_ids)}{filename_suffix}")
        self.path = os.path.join(self.logdir, file)
        self.name = name
        self._core = _Core(self.path, name or file, max_queue, flush_secs)
        self._finalizer = weakref.finalize(self, _finalize, self._core)

    def __repr__(self) -> str:
        return self._core.describe()

    @property
    def lost_events(self) -> int:
        """How many events this writer could not write, in all (0 when none was lost)."""
        return self._core.lost_total

    # --- the default writer ---------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator[SummaryWriter]:
        """Make this the default writer (and ``step`` the default step) inside ``with``.

        Leaving the block wakes the writer thread to write what is pending, without
        waiting for it (a ``with`` inside the training loop must not stall it); call
        ``flush`` where you need the file complete.
        """
        try:
            with _context.writing_to(self, step):
                yield self
        finally:
            self._core.wake.set()

    def set_as_default(self, step: Any = None) -> None:
        """Make this the default writer (and ``step`` the default step) from now on."""
        _context.set_defaults(self, step)

    # --- the training loop's side ---------------------------------------------------
    def _put(self, item: tuple[Any, ...]) -> None:
        self._core.put(item)

    def flush(self) -> None:
        """Return once everything written so far is in the file (handed to the OS).

        Raises:
            SummaryWriterError: the thread failed since the last call (it names the
                first error, the summary's tag and step, and how many events were lost).
        """
        self._core.flush()

    def close(self) -> None:
        """Flush and close the file; the writer accepts no more summaries. Idempotent."""
        self._finalizer.detach()
        self._core.close()
        self._core.raise_error()


class NoopWriter:
    """What ``create_file_writer(None)`` returns: a writer that records nothing.

    Summary ops under it return False, as with no default writer; its methods do nothing.
    """

    path = None
    logdir = None
    lost_events = 0

    def __init__(self, name: str | None = None) -> None:
        self.name = name

    def __repr__(self) -> str:
        return "NoopWriter()"

    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator[NoopWriter]:
        """Make this (recording nothing) the default writer inside ``with``."""
        with _context.writing_to(self, step):
            yield self

    def set_as_default(self, step: Any = None) -> None:
        """Make this (recording nothing) the default writer from now on."""
        _context.set_defaults(self, step)

    def flush(self) -> None:
        """Nothing to write."""

    def close(self) -> None:
        """Nothing to close."""


def _check_options(max_queue: Any, flush_millis: Any, filename_suffix: Any,
                   name: Any) -> tuple[int, float, str, str | None]:
    max_queue = count("max_queue", max_queue, low=1)
    if isinstance(flush_millis, bool) or not isinstance(flush_millis, (int, float)):
        raise TypeError(f"flush_millis must be a number, got {type(flush_millis).__name__}")
    if not (math.isfinite(flush_millis) and flush_millis > 0):
        raise ValueError(f"flush_millis must be positive and finite, got {flush_millis}")
    filename_suffix = "" if filename_suffix is None else filename_suffix
    if not isinstance(filename_suffix, str):
        raise TypeError(f"filename_suffix must be a str, got {type(filename_suffix).__name__}")
    if os.sep in filename_suffix or (os.altsep and os.altsep in filename_suffix) \
            or "\0" in filename_suffix:
        raise ValueError(f"filename_suffix must not hold a path separator or NUL, got "
                         f"{filename_suffix!r}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None, got {type(name).__name__}")
    return max_queue, flush_millis / 1000.0, filename_suffix, name


def create_file_writer(logdir: str | os.PathLike[str] | None, max_queue: int = 10,
                       flush_millis: int = 2000, filename_suffix: str = "",
                       name: str | None = None) -> SummaryWriter | NoopWriter:
    """A writer of TensorBoard event files in ``logdir`` (created if missing).

    Args:
        logdir: the run's directory; TensorBoard shows each directory as a run. ``None``
            gives a ``NoopWriter`` that records nothing, as TensorFlow does.
        max_queue: wake the writer thread once this many summaries are pending.
        flush_millis: the longest a summary waits in memory before it is written.
        filename_suffix: appended to the event file's name (no path separators).
        name: the writer's name (TensorFlow's ``name``): kept as ``writer.name`` and
            used to name its thread.

    Returns:
        A ``SummaryWriter``, or a ``NoopWriter`` when ``logdir`` is None.

    Examples:
        >>> import tempfile
        >>> from ember.summary import create_file_writer, scalar
        >>> writer = create_file_writer(tempfile.mkdtemp(), name="train")
        >>> with writer.as_default():
        ...     scalar("loss", 0.5, step=1)
        True
        >>> writer.close()
        >>> with create_file_writer(None).as_default():
        ...     scalar("loss", 0.5, step=1)
        False
    """
    if logdir is None:
        _check_options(max_queue, flush_millis, filename_suffix, name)
        return NoopWriter(name)
    return SummaryWriter(logdir, max_queue=max_queue, flush_millis=flush_millis,
                         filename_suffix=filename_suffix, name=name)


def flush(writer: SummaryWriter | NoopWriter | None = None) -> None:
    """Flush ``writer``, or the default writer of this context if there is one."""
    writer = writer if writer is not None else _context.default_writer.get()
    if writer is not None:
        writer.flush()


def write(kind: Any, tag: str, payload: Any, step: int, description: str | None) -> bool:
    """Queue one prepared summary on the default writer; False when there is none."""
    writer = _context.default_writer.get()
    if writer is None or writer.path is None:
        return False
    writer._put((kind, tag, payload, step, time.time(), description))
    return True


def _disown_after_fork() -> None:
    """In a forked child, the parent's writers have no thread: refuse writes, loudly."""
    global _open_lock
    _open_lock = threading.Lock()
    for core in _open_cores:
        core.closed = True
    _open_cores.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_disown_after_fork)

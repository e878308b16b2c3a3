"""Independent tasks run on the CPUs this process may use: checksums and copies of a restore.

A restore's check and its copy are memory-bound loops in C that release the GIL (the
CRC through ``ctypes``, ``np.copyto`` on large arrays), so a second CPU takes a share of
the bytes. Threads are started per call (a restore is tens of milliseconds per 100 MB, a
thread start tens of microseconds) and joined before it returns: no pool outlives a
restore, nothing to reset after ``fork``. Small jobs run inline, and so does everything
where no CPU is idle (``idle_workers``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# Memory bandwidth, not CPUs, bounds these loops beyond a few threads.
WORKERS = max(1, min(_cpus(), 8))


def idle_workers() -> int:
    """Threads worth starting now: ``WORKERS``, fewer where other processes keep the CPUs
    busy. On a machine whose CPUs are all taken, a second thread only waits for its turn
    while the caller waits for it: on a 2-CPU machine at load 8-9, restores with two
    threads ran 0.88-0.95x as fast as with one (issue 30's measurements).

    Busy is the number of threads running or ready to run right now, other than the
    caller (Linux's ``/proc/loadavg``); elsewhere the 1-minute load average, this process
    included. The load average lags: a process that has just been busy itself counts
    about one CPU more for a minute, which gave a restore right after a busy stretch one
    thread on an idle 2-CPU machine, and 0.55-0.6x ``load_file``'s speed where two
    threads give 0.85x."""
    others = _others_running()
    if others is None:
        try:
            others = os.getloadavg()[0] - 1
        except (AttributeError, OSError):
            return WORKERS
    return max(1, min(WORKERS, int(_cpus() - others)))


def _others_running() -> float | None:
    """Threads running or runnable now besides the caller, or None where unknown."""
    try:
        with open("/proc/loadavg", "rb") as f:
            fields = f.read().split()
        return max(0, int(fields[3].split(b"/")[0]) - 1)
    except (OSError, IndexError, ValueError):
        return None


def run(tasks: Sequence[Callable[[], T]], workers: int | None = None) -> list[T]:
    """The results of ``tasks``, in order, computed by up to ``workers`` threads (by
    default ``idle_workers()``; the caller's among them) that each take the next task
    left. After a task raises, the others stop taking tasks, and the first error is
    raised once every thread is done."""
    if len(tasks) < 2:
        return [task() for task in tasks]
    n = max(1, min(idle_workers() if workers is None else workers, len(tasks)))
    results: list[T | None] = [None] * len(tasks)
    errors: list[BaseException] = []
    lock = threading.Lock()
    order = iter(range(len(tasks)))

    def work() -> None:
        while not errors:
            with lock:
                i = next(order, None)
            if i is None:
                return
            try:
                results[i] = tasks[i]()
            except BaseException as err:  # re-raised in the caller
                errors.append(err)

    threads = [threading.Thread(target=work, name="ember-checkpoint", daemon=True)
               for _ in range(n - 1)]
    for thread in threads:
        thread.start()
    try:
        work()
    finally:
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]

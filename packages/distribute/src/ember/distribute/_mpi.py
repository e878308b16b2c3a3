"""The MPI communicator (mpi4py), with a watchdog on every collective.

Collectives are mpi4py's blocking calls, so they run at raw MPI speed. A watchdog thread
knows which collective is in flight and since when; if one outlasts the timeout (a peer
died, hangs, or never makes the call), it prints an error naming the collective and the
rank and aborts the whole job (``MPI_Abort``), so no rank waits forever and a restart
resumes from the last checkpoint.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

import numpy as np

from ._errors import DistributeError

ABORT_GRACE_S = 1.0  # how long the watchdog waits between its message and MPI_Abort


def launched_by_mpi() -> bool:
    """Whether this process was started by an MPI launcher (mpiexec / mpirun / srun)."""
    keys = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALRANKID",
            "HYDRA_CONTROL_FD")
    return any(k in os.environ for k in keys)


class _Watchdog:
    def __init__(self, comm: Any, rank: int, size: int, timeout: float) -> None:
        self.comm, self.rank, self.size, self.timeout = comm, rank, size, timeout
        self.what: str | None = None
        self.since = 0.0
        t = threading.Thread(target=self._run, name="ember-distribute-watchdog", daemon=True)
        t.start()

    def _run(self) -> None:
        period = min(1.0, self.timeout / 4)
        while True:
            time.sleep(period)
            what, since = self.what, self.since
            if what is not None and time.monotonic() - since > self.timeout:
                sys.stderr.write(
                    f"ember.distribute.CommunicationTimeout: {what}: rank {self.rank} of "
                    f"{self.size} waited {self.timeout:g} s for the other ranks; one of them "
                    "died, hangs, or never made this call. Aborting the job; restart it to "
                    "resume from its last checkpoint.\n")
                sys.stderr.flush()
                # MPI_Abort makes the launcher kill every rank and exit, and it may exit
                # before it has forwarded what this rank just wrote (seen with MPICH's
                # hydra on a loaded machine: the job died without a word). Give the
                # launcher a moment to pass the message on.
                time.sleep(ABORT_GRACE_S)
                try:
                    self.comm.Abort(1)
                finally:
                    os._exit(1)


class MPICommunicator:
    kind = "mpi"

    def __init__(self, comm: Any = None, timeout: float | None = 600.0) -> None:
        try:
            from mpi4py import MPI
        except ImportError as e:  # pragma: no cover - exercised only without mpi4py
            raise DistributeError(
                "this process was started by an MPI launcher, but mpi4py is not installed: "
                "pip install 'ember-distribute[mpi]'") from e
        self._MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        local = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank = local.Get_rank()
        self.local_size = local.Get_size()
        local.Free()
        self._ops = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}
        self._dog = (None if timeout is None or self.size == 1
                     else _Watchdog(self.comm, self.rank, self.size, timeout))

    def _start(self, what: str) -> None:
        if self._dog is not None:
            self._dog.since = time.monotonic()
            self._dog.what = what

    def _done(self) -> None:
        if self._dog is not None:
            self._dog.what = None

    def allreduce(self, send: np.ndarray, recv: np.ndarray, op: str, what: str) -> None:
        src = self._MPI.IN_PLACE if send is recv else send
        self._start(what)
        self.comm.Allreduce(src, recv, op=self._ops[op])
        self._done()

    def broadcast(self, buf: np.ndarray, root: int, what: str) -> None:
        self._start(what)
        self.comm.Bcast(buf, root=root)
        self._done()

    def allgather(self, buf: np.ndarray, what: str) -> np.ndarray:
        out = np.empty((self.size, *buf.shape), buf.dtype)
        self._start(what)
        self.comm.Allgather(np.require(buf, requirements="C"), out)
        self._done()
        return out

    def barrier(self, what: str) -> None:
        self._start(what)
        self.comm.Barrier()
        self._done()

    def abort(self, code: int = 1) -> None:
        self.comm.Abort(code)

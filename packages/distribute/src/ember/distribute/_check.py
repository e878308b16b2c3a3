"""One cheap collective that proves every rank is making the same call.

Each rank hashes a description of its call (which collective, operation, dtypes, shapes)
to a 24-bit number ``h``. One SUM-allreduce of ``[h, h*h]`` tells every rank the same
thing: the ranks agree exactly when ``n * sum(h*h) == sum(h)**2`` (Cauchy-Schwarz holds
with equality only for equal values). On a mismatch every rank gathers the descriptions
and raises the same :class:`RankMismatchError`, so no rank is left waiting in a
collective the others never make. Extra integers (the optimizer sends which gradients
each rank has) are summed in a second message, once the ranks are known to agree on its
length.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from ember.core import recording

from ._errors import RankMismatchError

_MSG = 512


def agree(comm: Any, what: str, description: str, extra: Any = None) -> np.ndarray:
    """Check that every rank describes its call the same way; returns the summed ``extra``."""
    extras = np.zeros(0 if extra is None else len(extra), np.int64)
    extras[:] = [] if extra is None else extra
    if len(extras):
        description = f"{description} extras={len(extras)}"
    h = zlib.crc32(description.encode()) & 0xFFFFFF
    if comm.size > 1:
        # inside a graph.function: a replay would reuse this call's result and skip the
        # collective, so this rank would fall out of step with the others (silently)
        recording.notify_host_input(f"the result of a collective with the other ranks "
                                    f"({what})")
        msg = np.array([h, h * h], np.int64)
        comm.allreduce(msg, msg, "sum", what)
        s, s2 = int(msg[0]), int(msg[1])
        if comm.size * s2 != s * s:
            _raise_mismatch(comm, what, description)
        if len(extras):
            comm.allreduce(extras, extras, "sum", what)
    return extras


def _raise_mismatch(comm: Any, what: str, description: str) -> None:
    raw = description.encode()[:_MSG]
    buf = np.zeros(_MSG, np.uint8)
    buf[: len(raw)] = np.frombuffer(raw, np.uint8)
    rows = comm.allgather(buf, what)
    texts = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in rows]
    lines = [f"  rank {r}: {text}" for r, text in enumerate(texts)]
    raise RankMismatchError(
        f"{what}: the ranks made different calls (every rank must call the same collectives "
        "with the same dtypes and shapes, in the same order):\n" + "\n".join(lines))

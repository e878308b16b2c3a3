"""Scalars per second: ember.summary vs a minimal pure-Python writer, PyTorch and tf.summary.

Each contender writes ``--n`` scalars (one tag, steps 0..n-1) into a fresh log directory
and then flushes. Two rates are reported for each:

* **call**: ``n / time spent in the summary calls`` -- what the training loop pays;
* **written**: ``n / (calls + flush)`` -- until every event is in the file.

Contenders run in one process, alternating round by round; the best round is reported.
Run: ``python bench/bench_summary.py [--n 20000] [--rounds 5] [--out bench/results/summary.md]``
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import struct
import sys
import tempfile
import time
from collections.abc import Callable

# --- a minimal pure-Python event writer: the practical limit without compiled help ----

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def _crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class MinimalWriter:
    """Hand-encodes ``Event{wall_time, step, summary{value{tag, simple_value}}}``."""

    def __init__(self, logdir: str) -> None:
        path = os.path.join(logdir, f"events.out.tfevents.{int(time.time())}.minimal")
        self._file = open(path, "wb")
        self._write(b"\x1a\x0dbrain.Event:2")

    def _write(self, event: bytes) -> None:
        header = struct.pack("<Q", len(event))
        self._file.write(header + struct.pack("<I", _crc32c(header)) + event
                         + struct.pack("<I", _crc32c(event)))

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        t = tag.encode()
        v = b"\x0a" + _varint(len(t)) + t + b"\x15" + struct.pack("<f", value)
        s = b"\x0a" + _varint(len(v)) + v
        event = (b"\x09" + struct.pack("<d", time.time()) + b"\x10" + _varint(step)
                 + b"\x2a" + _varint(len(s)) + s)
        self._write(event)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()


# --- contenders: each returns (add(tag, value, step), flush(), close()) ----------------

def ember_contender(logdir: str):
    from ember import summary

    writer = summary.create_file_writer(logdir)
    writer.set_as_default()
    scalar = summary.scalar
    return (lambda tag, value, step: scalar(tag, value, step=step)), writer.flush, writer.close


def minimal_contender(logdir: str):
    writer = MinimalWriter(logdir)
    return writer.add_scalar, writer.flush, writer.close


def torch_contender(logdir: str):
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(logdir)
    return writer.add_scalar, writer.flush, writer.close


def tf_contender(logdir: str):
    import tensorflow as tf

    writer = tf.summary.create_file_writer(logdir)
    ctx = writer.as_default()
    ctx.__enter__()

    def add(tag, value, step):
        tf.summary.scalar(tag, value, step=step)

    def close():
        ctx.__exit__(None, None, None)
        writer.close()

    return add, writer.flush, close


def _available(module: str) -> str | None:
    try:
        __import__(module)
    except Exception as e:  # any import failure means "not installed"
        return f"not installed ({type(e).__name__})"
    return None


def run_once(make: Callable, n: int) -> tuple[float, float]:
    logdir = tempfile.mkdtemp(prefix="bench_summary_")
    try:
        add, flush, close = make(logdir)
        add("loss", 0.0, 0)  # warm-up outside the timing
        flush()
        start = time.perf_counter()
        for step in range(n):
            add("loss", step * 0.001, step)
        calls = time.perf_counter() - start
        flush()
        written = time.perf_counter() - start
        close()
        return n / calls, n / written
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "summary.md"))
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "packages", "summary",
                                    "src"))
    contenders = {
        "ember.summary.scalar": (ember_contender, None),
        "minimal pure-Python writer": (minimal_contender, None),
        "PyTorch SummaryWriter.add_scalar": (torch_contender, _available("torch")),
        "tf.summary.scalar": (tf_contender, _available("tensorflow")),
    }
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.rounds):
        for name, (make, missing) in contenders.items():
            if missing:
                continue
            call, written = run_once(make, args.n)
            old = best.get(name, (0.0, 0.0))
            best[name] = (max(old[0], call), max(old[1], written))
    torch_rate = best.get("PyTorch SummaryWriter.add_scalar")
    lines = [
        "# ember.summary: scalars per second",
        "",
        f"{args.n} scalars per round, best of {args.rounds} alternating rounds, one process; "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs.",
        "**call** = n / time in the summary calls (what the training loop pays); "
        "**written** = n / (calls + flush).",
        "",
        "| writer | call (scalars/s) | written (scalars/s) | call vs PyTorch "
        "| written vs PyTorch |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (_, missing) in contenders.items():
        if missing:
            lines.append(f"| {name} | {missing} | | | |")
            continue
        call, written = best[name]
        ratio = (f"{call / torch_rate[0]:.1f}x", f"{written / torch_rate[1]:.1f}x") \
            if torch_rate else ("n/a", "n/a")
        lines.append(f"| {name} | {call:,.0f} | {written:,.0f} | {ratio[0]} | {ratio[1]} |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

"""Side-by-side timing: contenders alternate inside one process, best-of-rounds per call.

The machines are shared and noisy, so results are reported as ratios to a reference
(the "limit": numpy by hand) rather than as absolute times.
"""

from __future__ import annotations

import pathlib
import time
from collections.abc import Callable

RESULTS = pathlib.Path(__file__).parent / "results"


def time_per_call(fn: Callable[[], object], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def compare(contenders: dict[str, Callable[[], object]], number: int,
            rounds: int = 7) -> dict[str, float]:
    """Seconds per call for each contender: the best of ``rounds``, alternating."""
    for fn in contenders.values():  # warm up
        time_per_call(fn, max(1, number // 10))
    best = {k: float("inf") for k in contenders}
    for _ in range(rounds):
        for k, fn in contenders.items():
            best[k] = min(best[k], time_per_call(fn, number))
    return best


def table(title: str, times: dict[str, float], reference: str, unit: str = "us",
          note: str = "") -> str:
    scale = {"us": 1e6, "ms": 1e3}[unit]
    ref = times[reference]
    lines = [f"### {title}", "", f"| contender | time per call ({unit}) | ratio to {reference} |",
             "|---|---:|---:|"]
    for k, v in times.items():
        if v != v:  # nan: not available
            lines.append(f"| {k} | not installed | - |")
        else:
            lines.append(f"| {k} | {v * scale:.2f} | {v / ref:.2f}x |")
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def write(name: str, text: str) -> None:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.md").write_text(text)
    print(text)


def try_import(name: str) -> object | None:
    try:
        return __import__(name)
    except ImportError:
        return None

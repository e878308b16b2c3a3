"""Side-by-side timing: contenders alternate inside one process, best-of-rounds per call.

The machines are shared and noisy, so results are reported as ratios to a reference
(the "limit": numpy by hand) rather than as absolute times.
"""

from __future__ import annotations

import functools
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


CHARTS = pathlib.Path(__file__).parents[1] / "docs" / "img" / "bench"


def _number(cell: str) -> float | None:
    cell = cell.strip().strip("*").replace(",", "").removesuffix("x").strip()
    try:
        return float(cell)
    except ValueError:
        return None


def tables(markdown: str) -> list[tuple[str, str, list[tuple[str, float]]]]:
    """Each table of a results file: (heading above it, its 2nd column's name, rows).

    A row is (first cell, number in the second cell); rows without a number (e.g. "not
    installed") are left out.
    """
    out, heading, lines = [], "", markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|--"):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in lines[i].strip("|").split("|")]
                value = _number(cells[1]) if len(cells) > 1 else None
                if value is not None:
                    rows.append((cells[0], value))
                i += 1
            if rows:
                out.append((heading, header[1], rows))
            continue
        i += 1
    return out


def chart(name: str) -> pathlib.Path | None:
    """Draw results/<name>.md's tables as bar charts into docs/img/bench/<name>.svg.

    Returns the path written, or None when matplotlib is not installed.
    """
    try:
        import matplotlib
    except ImportError:
        print(f"matplotlib not installed: no chart for {name}")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = tables((RESULTS / f"{name}.md").read_text())
    if not found:
        return None
    plt.rcParams.update({"svg.hashsalt": "ember", "svg.fonttype": "none", "font.size": 9})
    heights = [0.6 + 0.32 * len(rows) for _, _, rows in found]
    fig, axes = plt.subplots(len(found), 1, figsize=(7.5, sum(heights) + 0.4 * len(found)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (heading, column, rows) in zip(axes[:, 0], found):
        labels, values = zip(*rows)
        colors = ["tab:orange" if lab.lower().startswith("ember") else "tab:gray"
                  for lab in labels]
        ax.barh(range(len(values)), values, color=colors)
        ax.set_yticks(range(len(values)), labels)
        ax.invert_yaxis()
        ax.set_title(heading, loc="left", fontsize=9)
        ax.set_xlabel(column)
        for y, v in enumerate(values):
            ax.annotate(f"{v:,.2f}" if v < 100 else f"{v:,.0f}", (v, y), xytext=(3, 0),
                        textcoords="offset points", va="center", fontsize=8)
        ax.margins(x=0.15)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    CHARTS.mkdir(parents=True, exist_ok=True)
    out = CHARTS / f"{name}.svg"
    fig.savefig(out, metadata={"Date": None})
    plt.close(fig)
    print(f"wrote {out}")
    return out


def gemm_ceiling(torch: object, shapes: dict[str, tuple[int, int, int]],
                 rounds: int = 7) -> list[str]:
    """A markdown table: numpy's matmul (its BLAS) against PyTorch's ``mm`` on the same
    float32 products, at the thread count in force. Where a step is mostly these
    products, their ratio bounds what any numpy-backed framework can reach against
    PyTorch without doing fewer multiply-adds."""
    import numpy as np

    rng = np.random.default_rng(0)
    lines = ["| product (M x K) @ (K x N) | numpy (us) | PyTorch (us) | numpy relative to "
             "PyTorch |", "|---|---:|---:|---:|"]
    for name, (m, k, n) in shapes.items():
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        out = np.empty((m, n), np.float32)
        c: dict[str, Callable[[], object]] = {
            "numpy": functools.partial(np.matmul, a, b, out=out)}
        if torch is not None:
            c["PyTorch"] = functools.partial(
                torch.mm, torch.from_numpy(a), torch.from_numpy(b),  # type: ignore[attr-defined]
                out=torch.empty(m, n))  # type: ignore[attr-defined]
        number = max(3, int(2e8 // (2 * m * k * n)))
        t = compare(c, number=number, rounds=rounds)
        pt = t.get("PyTorch", float("nan"))
        lines.append(f"| {name}: ({m} x {k}) @ ({k} x {n}) | {t['numpy'] * 1e6:.1f} | "
                     f"{pt * 1e6:.1f} | {pt / t['numpy']:.2f}x |")
    return lines + [""]

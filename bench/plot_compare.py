"""Draw ``bench/compare.py --json``'s before/after table as a bar chart (an SVG).

    python bench/plot_compare.py compare.json docs/img/bench/compare.svg [--title T]

One horizontal bar per figure: the working tree's time over REF's (1 is "no change",
left of it faster), with the spread of the rounds as an error bar, so a move inside the
noise looks like one. Figures of contenders (numpy, PyTorch) are left out unless
``--all``: both sides ran them with the same code, so they only show the machine's noise.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys

CONTENDERS = ("numpy", "np.", "torch", "pytorch", "safetensors")


def is_contender(figure: str) -> bool:
    low = figure.lower()
    return any(low.startswith(c) or f"({c}" in low or f" {c}" in low for c in CONTENDERS)


def draw(data: dict, out: pathlib.Path, title: str | None, everything: bool) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in data["rows"] if everything or not is_contender(r["figure"])]
    if not rows:
        print("plot_compare.py: no ember figures in the JSON", file=sys.stderr)
        return 1
    labels = [f"{r['benchmark']}: {r['figure']}" for r in rows]
    ratios = [r["ratio"] for r in rows]
    # the spread as a factor either side of the ratio (log scale: symmetric)
    lo = [r - r / (1 + r_["spread"]) for r, r_ in zip(ratios, rows)]
    hi = [r * r_["spread"] for r, r_ in zip(ratios, rows)]
    colors = ["#2a7ab0" if r["flag"] == "faster" else "#c0392b" if r["flag"] == "slower"
              else "#999999" for r in rows]
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(rows) + 1.6))
    y = list(range(len(rows)))[::-1]
    ax.barh(y, [math.log2(r) for r in ratios], color=colors, height=0.6,
            xerr=[[math.log2(r) - math.log2(r - a) for r, a in zip(ratios, lo)],
                  [math.log2(r + b) - math.log2(r) for r, b in zip(ratios, hi)]],
            error_kw={"elinewidth": 1, "capsize": 3})
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(y, labels, fontsize=8)
    ticks = [t for t in (-3, -2, -1, 0, 1, 2, 3)
             if min(math.log2(r) for r in ratios) - 1 <= t <= max(math.log2(r) for r in ratios) + 1]
    ax.set_xticks(ticks, [f"{2 ** t:g}x" for t in ticks])
    ax.set_xlabel(f"time at {data['head']} / time at {data['ref']} ({data['ref_sha'][:9]}), "
                  f"log scale: left of 1x is faster; bars: the rounds' spread", fontsize=8)
    right = ax.get_xlim()[1]
    for yi, r, row in zip(y, ratios, rows):  # the figures in a column at the right edge
        ax.text(right, yi, f"  {r:.2f}x" + (f" ({row['flag']})" if row["flag"] else ""),
                va="center", fontsize=8)
    ax.set_title(title or f"Before/after: {data['head']} against {data['ref']}", fontsize=9)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    fig.savefig(tmp, format=out.suffix.lstrip(".") or "svg")
    plt.close(fig)
    tmp.replace(out)
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", type=pathlib.Path, help="what bench/compare.py --json wrote")
    p.add_argument("out", type=pathlib.Path, help="the chart to write (.svg or .png)")
    p.add_argument("--title", default=None)
    p.add_argument("--all", action="store_true", help="also draw the contenders' figures")
    args = p.parse_args(argv)
    return draw(json.loads(args.json.read_text()), args.out, args.title, args.all)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

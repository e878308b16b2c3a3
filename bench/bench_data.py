"""ember.data input-pipeline benchmark, side by side with its peers in one process.

One epoch of 60,000 examples (784 float32 + an int label), shuffled with a buffer of 10,000
and batched by 128:

* numpy: a full permutation and a fancy-index loop (the practical limit),
* ember.data: ``from_tensor_slices(...).shuffle(10000).batch(128)`` (a true buffer shuffle),
* PyTorch ``DataLoader`` over a ``TensorDataset`` (shuffle=True, a full permutation),
* tf.data, the seeds' pipeline (when TensorFlow is installed).

Runs alternate (round-robin) so that machine noise hits everyone alike; the best of the
rounds is reported. Then parallel ``map`` scaling with a numpy-heavy function.

Usage: python bench/bench_data.py [--rounds 5] [--out bench/results/data.md]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packages" / "data" / "src"))

from ember import data  # noqa: E402

N, DIM, BUFFER, BATCH = 60_000, 784, 10_000, 128


def make_arrays():
    rng = np.random.default_rng(0)
    x = rng.random((N, DIM), dtype=np.float32)
    y = rng.integers(0, 10, N).astype(np.int64)
    return x, y


def run_numpy(x, y):
    perm = np.random.default_rng(1).permutation(N)
    total = 0
    for lo in range(0, N, BATCH):
        idx = perm[lo : lo + BATCH]
        xb, yb = x[idx], y[idx]
        total += min(len(xb), len(yb))
    return total


def run_ember(x, y):
    ds = data.Dataset.from_tensor_slices((x, y)).shuffle(BUFFER, seed=1).batch(BATCH)
    total = 0
    for xb, yb in ds:
        total += min(len(xb), len(yb))
    return total


def make_torch(x, y):
    try:
        import torch
        from torch.utils.data import DataLoader, TensorDataset
    except ImportError:
        return None
    torch.manual_seed(0)
    tds = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))

    def run(x, y):
        total = 0
        for xb, yb in DataLoader(tds, batch_size=BATCH, shuffle=True):
            total += min(len(xb), len(yb))
        return total

    return run


def make_tf(x, y):
    try:
        import tensorflow as tf
    except ImportError:
        return None
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(BUFFER, seed=1).batch(BATCH)

    def run(x, y):
        total = 0
        for xb, yb in ds:
            total += min(int(xb.shape[0]), int(yb.shape[0]))
        return total

    return run


def bench_epochs(rounds: int):
    x, y = make_arrays()
    runners = {"numpy permutation + fancy index (limit)": run_numpy,
               "ember.data shuffle(10000).batch(128)": run_ember,
               "PyTorch DataLoader(TensorDataset, shuffle=True)": make_torch(x, y),
               "tf.data shuffle(10000).batch(128)": make_tf(x, y)}
    best = {k: float("inf") for k, f in runners.items() if f is not None}
    for _ in range(rounds):
        for name, fn in runners.items():
            if fn is None:
                continue
            t0 = time.perf_counter()
            assert fn(x, y) == N
            best[name] = min(best[name], time.perf_counter() - t0)
    return {k: (N / best[k] if k in best else None) for k in runners}


def heavy(x):
    """A numpy-heavy element function (~1.5 ms): sorting the rows of a 784 x 392 product.

    numpy releases the GIL while it sorts, which is what lets threads scale.
    """
    big = np.outer(x, x[:392])
    return np.sort(big, axis=1)[:, -1]


def bench_map(rounds: int, n: int = 1000):
    x, _ = make_arrays()
    base = data.Dataset.from_tensor_slices(x[:n])
    rows = []
    cpus = os.cpu_count() or 1
    settings = [None, 1, 2, 4] + ([cpus] if cpus > 4 else [])
    for calls in settings:
        best = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter()
            count = sum(1 for _ in base.map(heavy, num_parallel_calls=calls).batch(64))
            best = min(best, time.perf_counter() - t0)
        assert count == -(-n // 64)
        rows.append((calls, n / best))
    return rows


def fmt(rate):
    return "not installed" if rate is None else f"{rate:,.0f}"


def render(rates, map_rows, rounds):
    ember = rates["ember.data shuffle(10000).batch(128)"]
    lines = [
        "# ember.data benchmark",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, numpy {np.__version__}. Best of {rounds} alternating "
        f"rounds, one process. Written by `python bench/bench_data.py`.",
        "",
        f"## One epoch: {N:,} x {DIM} float32 + labels, shuffle({BUFFER}), batch({BATCH})",
        "",
        "| pipeline | examples/s | ember / it |",
        "|---|---:|---:|",
    ]
    for name, rate in rates.items():
        ratio = "" if rate is None else f"{ember / rate:.2f}x"
        lines.append(f"| {name} | {fmt(rate)} | {ratio} |")
    lines += [
        "",
        "numpy and PyTorch shuffle with a full permutation; ember.data and tf.data with a "
        "buffer of 10,000 (ember.data computes the buffer order as index arithmetic and "
        "gathers each batch with one fancy index).",
        "",
    ]
    tf_rate = rates["tf.data shuffle(10000).batch(128)"]
    limit = rates["numpy permutation + fancy index (limit)"]
    if tf_rate is None:
        lines += [
            f"tf.data is not installed here, so it was not measured. For scale only: the "
            f"issue quotes tf.data at ~124k/s where the numpy loop does ~1.7M/s (7.3% of "
            f"the limit); ember.data runs at {ember / limit:.0%} of the limit on this "
            f"machine, which by that proportion would be ~{ember / limit / 0.073:.0f}x "
            f"tf.data (an estimate, not a measurement).",
            "",
        ]
    lines += [
        "## Parallel map scaling (numpy-heavy function, 1,000 examples, batch 64)",
        "",
        "| num_parallel_calls | examples/s | speed-up |",
        "|---|---:|---:|",
    ]
    base = map_rows[0][1]
    for calls, rate in map_rows:
        label = "None (sequential)" if calls is None else str(calls)
        lines.append(f"| {label} | {rate:,.0f} | {rate / base:.2f}x |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "data.md"))
    args = p.parse_args(argv)
    rates = bench_epochs(args.rounds)
    map_rows = bench_map(max(1, args.rounds // 2))
    text = render(rates, map_rows, args.rounds)
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)


if __name__ == "__main__":
    main()

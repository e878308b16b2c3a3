"""The main job's `--model cnn` (conv-pool-conv-pool-LSTM, batch 32, Adam) against the same
model in PyTorch eager: seconds per training step, and one epoch (1,875 steps) estimated
from them. Same process, contenders alternating, best of 3 rounds of 15 steps, 1 thread.

A full epoch takes minutes per contender on this 2-core machine, so the epoch time is
the per-step time times 1,875; data loading (ember.data, already measured in bench_data)
is left out of both.
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np
from _harness import try_import, write
from bench_graph import training_step
from bench_nn import _torch_step

import ember.core as em
from ember import graph, nn

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "examples"))
from mnist import CNNLSTM  # the main job's model itself

BATCH, STEPS_PER_EPOCH, STEPS, ROUNDS = 32, 1875, 15, 3
rng = np.random.default_rng(0)
X = rng.random((BATCH, 784), dtype=np.float32)
Y = rng.integers(0, 10, BATCH)


def _ember(traced: bool):
    model = CNNLSTM()
    model(em.zeros([1, 784]))
    step = training_step(model, nn.optimizers.Adam(1e-3))
    run = graph.function(step) if traced else step
    x, y = em.constant(X), em.constant(Y)
    return lambda: run(x, y)


def _torch(torch):
    F = torch.nn

    class Net(F.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = F.Conv2d(1, 32, 5, padding=2), F.Conv2d(32, 64, 5, padding=2)
            self.lstm, self.out = F.LSTM(64, 128, batch_first=True), F.Linear(128, 10)

        def forward(self, x):
            x = x.reshape(-1, 1, 28, 28)
            x = F.functional.max_pool2d(F.functional.relu(self.c1(x)), 2)
            x = F.functional.max_pool2d(F.functional.relu(self.c2(x)), 2)
            x = x.permute(0, 2, 3, 1).reshape(-1, 49, 64)  # the 49 positions, as ember's
            return self.out(self.lstm(x)[0][:, -1])

    return _torch_step(torch, Net(), X, Y, lambda p: torch.optim.Adam(p, lr=1e-3))


def main() -> None:
    torch = try_import("torch")
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    steps = {"ember traced": _ember(True), "ember eager": _ember(False)}
    if torch is not None:
        torch.set_num_threads(1)
        steps["PyTorch eager"] = _torch(torch)
    for fn in steps.values():  # builds, traces, warms up
        for _ in range(3):
            fn()
    best = {k: float("inf") for k in steps}
    for _ in range(ROUNDS):
        for k, fn in steps.items():
            t0 = time.perf_counter()
            for _ in range(STEPS):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t0) / STEPS)
    ref = best.get("PyTorch eager", best["ember eager"])
    lines = ["# The main job's CNN + LSTM: one epoch, estimated from steps\n",
             "Batch 32, Adam; best of 3 rounds of 15 steps, contenders alternating, 1 thread. "
             f"An epoch is {STEPS_PER_EPOCH} steps.\n",
             "### CNN + LSTM training step (the main job's `--model cnn`)\n",
             "| contender | speed relative to PyTorch eager | s per step | one epoch (min) |",
             "|---|---:|---:|---:|"]
    for k, s in best.items():
        lines.append(f"| {k} | {ref / s:.2f}x | {s:.3f} | {s * STEPS_PER_EPOCH / 60:.1f} |")
    write("mnist_cnn", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

"""Checkpoint save/restore throughput: ember.checkpoint vs its peers, side by side.

A model of ~100 MB of float32 parameters (24 dense layers of 1024x1024 plus biases) is
saved by each contender in turn, alternating within every round so that disk and
page-cache conditions are shared (the order rotates each round), then loaded the same
way; the median of the rounds is reported, in one process. The machines are shared and
noisy: read the ratios, measured side by side, rather than the absolute rates.

* ember: ``Checkpoint.write`` (atomic: temp file, fsync, rename, fsync dir; CRC-32C per
  tensor) and ``Checkpoint.restore`` (all checksums verified before anything is
  written), into numpy arrays (in place), into ember variables (``ember.core.Variable``:
  written in place while nothing else holds them, ``__checkpoint_buffer__``), into ember
  variables whose tensors are also held elsewhere (they keep a new array read for them,
  ``__checkpoint_assign__``, as on a GPU) and into duck-typed variables with
  ``numpy()``/``assign()`` only (a copy kept for the rollback).
* safetensors: ``safetensors.numpy.save_file`` / ``load_file`` (no fsync, no checksums).
* torch: ``torch.save`` / ``torch.load(weights_only=True)`` when torch imports, and
  ``torch.save`` followed by ``os.fsync`` of the same file (the durable peer of ember's
  save: ember's target is to save at least as fast as this).
* TensorFlow: ``tf.train.Checkpoint.write`` / ``read`` when tensorflow imports.
* numpy: ``np.savez`` / ``np.load`` with every array materialised.

Loads are timed twice: in this process, alternating (each contender reuses memory that
its previous load freed), and as the first load of a new process that has just built its
model (a job that restarts: fresh memory for everyone), in alternating subprocesses.

Usage: ``python bench/bench_checkpoint.py [--rounds N] [--fresh-rounds N] [--out FILE]``
(``--out ''`` prints only). The sources imported are those of the tree the script is in.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
for _package in ("core", "checkpoint"):  # this tree's sources, before any installed ones
    sys.path.insert(0, os.path.join(HERE, "..", "packages", _package, "src"))

from ember.checkpoint import Checkpoint  # noqa: E402


def make_model(layers: int = 24, width: int = 1024) -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    return {f"dense{i}": {"kernel": rng.standard_normal((width, width), dtype=np.float32),
                          "bias": rng.standard_normal(width, dtype=np.float32)}
            for i in range(layers)}


def flat(model: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {f"{layer}/{name}": v for layer, vs in model.items() for name, v in vs.items()}


Pair = tuple[Callable[[], None], Callable[[], None]]


def ember_pair(model, directory) -> Pair:
    path = os.path.join(directory, "ember")
    ckpt = Checkpoint(model=model)
    targets = {k: {n: np.ones_like(v) for n, v in vs.items()} for k, vs in model.items()}
    target = Checkpoint(model=targets)
    return (lambda: ckpt.write(path)), (lambda: target.restore(path))


class _Var:
    """A variable stand-in: ``numpy()`` copies out, ``assign`` copies in (as ember's do)."""

    def __init__(self, value: np.ndarray) -> None:
        self._value, self.shape, self.dtype = value, value.shape, value.dtype

    def numpy(self) -> np.ndarray:
        return self._value.copy()

    def assign(self, value: np.ndarray) -> None:
        np.copyto(self._value, value)


def duck_variables_pair(model, directory) -> Pair:
    path = os.path.join(directory, "ember-duck")
    ckpt = Checkpoint(model=model)
    targets = {k: {n: _Var(np.ones_like(v)) for n, v in vs.items()} for k, vs in model.items()}
    target = Checkpoint(model=targets)
    return (lambda: ckpt.write(path)), (lambda: target.restore(path))


def ember_variables_pair(model, directory, held: bool = False) -> Pair:
    import ember.core as em

    path = os.path.join(directory, "ember-vars-held" if held else "ember-vars")
    ckpt = Checkpoint(model={k: {n: em.Variable(v) for n, v in vs.items()}
                             for k, vs in model.items()})
    targets = {k: {n: em.Variable(np.ones_like(v)) for n, v in vs.items()}
               for k, vs in model.items()}
    target = Checkpoint(model=targets)

    def restore() -> None:
        kept = [v.value() for vs in targets.values() for v in vs.values()] if held else []
        target.restore(path)
        del kept

    return (lambda: ckpt.write(path)), restore


def ember_held_variables_pair(model, directory) -> Pair:
    return ember_variables_pair(model, directory, held=True)


def safetensors_pair(model, directory) -> Pair:
    from safetensors.numpy import load_file, save_file

    path = os.path.join(directory, "raw.safetensors")
    tensors = flat(model)
    return (lambda: save_file(tensors, path)), (lambda: load_file(path))


def numpy_pair(model, directory) -> Pair:
    path = os.path.join(directory, "np.npz")
    tensors = {k.replace("/", "."): v for k, v in flat(model).items()}

    def load() -> None:
        with np.load(path) as f:
            {k: f[k] for k in f.files}

    return (lambda: np.savez(path, **tensors)), load


def torch_pair(model, directory) -> Pair:
    import torch

    path = os.path.join(directory, "torch.pt")
    tensors = {k: torch.from_numpy(v) for k, v in flat(model).items()}
    return (lambda: torch.save(tensors, path)), (
        lambda: torch.load(path, weights_only=True))


def torch_fsync_pair(model, directory) -> Pair:
    import torch

    path = os.path.join(directory, "torch-fsync.pt")
    tensors = {k: torch.from_numpy(v) for k, v in flat(model).items()}

    def save() -> None:
        torch.save(tensors, path)
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    return save, (lambda: torch.load(path, weights_only=True))


def tensorflow_pair(model, directory) -> Pair:
    import tensorflow as tf

    path = os.path.join(directory, "tf")
    variables = {k.replace("/", "_"): tf.Variable(v) for k, v in flat(model).items()}
    ckpt = tf.train.Checkpoint(**variables)
    return (lambda: ckpt.write(path)), (lambda: ckpt.read(path).assert_consumed())


EMBER = "ember.checkpoint, numpy arrays (atomic, fsync, CRC-32C)"
EMBER_VARS = "ember.checkpoint, ember variables"
EMBER_HELD = "ember.checkpoint, ember variables also held elsewhere (new arrays)"
CONTENDERS = {
    EMBER: ember_pair,
    EMBER_VARS: ember_variables_pair,
    EMBER_HELD: ember_held_variables_pair,
    "ember.checkpoint, duck-typed variables (a copy kept to put back on failure)":
        duck_variables_pair,
    "safetensors (raw)": safetensors_pair,
    "torch.save / torch.load": torch_pair,
    "torch.save + os.fsync / torch.load": torch_fsync_pair,
    "TensorFlow Checkpoint": tensorflow_pair,
    "np.savez / np.load": numpy_pair,
}


def timed(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


RAW = "safetensors (raw)"
DURABLE_TORCH = "torch.save + os.fsync / torch.load"
TORCH = "torch.save / torch.load"
# (label, ember's contender, peer, save (0) or load (1), target): speed ratios to a peer
RATIOS = [("ember save / (torch.save + os.fsync)", EMBER, DURABLE_TORCH, 0, 1.0),
          ("ember save / torch.save without fsync", EMBER, TORCH, 0, None),
          ("ember save / safetensors save_file (no fsync)", EMBER, RAW, 0, None),
          ("ember restore into numpy arrays / safetensors load_file", EMBER, RAW, 1, 0.7),
          ("ember restore into ember variables / safetensors load_file", EMBER_VARS, RAW, 1,
           0.7),
          ("ember restore into held ember variables / safetensors load_file", EMBER_HELD, RAW,
           1, None)]
Ratios = dict[str, tuple[float, float, float]]


def paired(times: dict[str, tuple[list[float], list[float]]]) -> Ratios:
    """Per-round speed ratios of ember to each peer (same round, adjacent in time):
    median, lowest and highest over the rounds. Robust to a machine whose load drifts."""
    out = {}
    for label, ours, peer, which, _ in RATIOS:
        if ours in times and peer in times:
            r = [p / e for e, p in zip(times[ours][which][1:], times[peer][which][1:])]
            out[label] = (statistics.median(r), min(r), max(r))
    return out


# The loads timed again as the first thing a new process does once its model is built.
FRESH = [EMBER, EMBER_VARS, EMBER_HELD, RAW, TORCH]


def _rotated(names: list[str], r: int) -> list[str]:
    return names[r % len(names):] + names[:r % len(names)]


def fresh_loads(directory: str, names: list[str], rounds: int) -> dict[str, list[float]]:
    """Seconds of each load as a new process's first (a job that restarts), alternating
    subprocesses with the order rotating. Unlike the loads in one process, no contender
    reuses the memory an earlier load freed: each gets fresh pages, as a restart does."""
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for name in _rotated(names, r):
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name,
                                  directory], capture_output=True, text=True, check=True)
            times[name].append(float(out.stdout.split()[-1]))
    return times


def child(name: str, directory: str) -> None:
    """Build the model, then time one load by ``name`` of the file already in ``directory``."""
    load = CONTENDERS[name](make_model(), directory)[1]
    print(timed(load))


def run(rounds: int, fresh_rounds: int = 0) -> tuple[float, dict[str, tuple[float, float] | str],
                                                      Ratios, dict[str, list[float]]]:
    model = make_model()
    megabytes = sum(v.nbytes for v in flat(model).values()) / 1e6
    results: dict[str, tuple[float, float] | str] = {}
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as directory:
        pairs: dict[str, Pair] = {}
        for name, make in CONTENDERS.items():
            try:
                pairs[name] = make(model, directory)
            except ImportError:
                results[name] = "not installed"
        times: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in pairs}
        # Saves alternate among contenders, then loads do: a load measures reading a file
        # at rest (as a restarting job does), not one whose predecessor is still being
        # freed by the save just before it. The first round warms up and is dropped.
        # The order rotates each round, so no contender always follows the same one (a
        # peer's leftover work, such as torch's spinning OpenMP threads, is shared out).
        names = list(pairs)
        for which in (0, 1):
            for r in range(rounds + 1):
                for name in names[r % len(names):] + names[:r % len(names)]:
                    times[name][which].append(timed(pairs[name][which]))
        for name, (saves, loads) in times.items():
            results[name] = (megabytes / 1e3 / statistics.median(saves[1:]),
                             megabytes / 1e3 / statistics.median(loads[1:]))
        fresh = fresh_loads(directory, [n for n in FRESH if n in pairs], fresh_rounds)
    return megabytes, results, paired(times), fresh


def fresh_table(megabytes: float, fresh: dict[str, list[float]]) -> list[str]:
    if not fresh or RAW not in fresh or not fresh[RAW]:
        return []
    lines = ["", f"First load in a new process (a job that restarts), {len(fresh[RAW])} "
             "rounds of alternating subprocesses, each building its model first; speed ratio "
             "to safetensors `load_file` per round, median [lowest, highest]:", "",
             "| method | load GB/s | load / safetensors |", "|---|---:|---:|"]
    for name, t in fresh.items():
        r = [p / e for e, p in zip(t, fresh[RAW])]
        lines.append(f"| {name} | {megabytes / 1e3 / statistics.median(t):.2f} | "
                     f"**{statistics.median(r):.2f}** [{min(r):.2f}, {max(r):.2f}] |")
    return lines


def table(megabytes: float, results: dict[str, tuple[float, float] | str],
          ratios: Ratios, fresh: dict[str, list[float]] | None = None) -> str:
    raw = results["safetensors (raw)"]
    assert isinstance(raw, tuple)
    lines = [f"Model: {megabytes:.0f} MB of float32 in 48 tensors. Median of the rounds.",
             "",
             "| method | save GB/s | load GB/s | save / safetensors | load / safetensors |",
             "|---|---:|---:|---:|---:|"]
    for name, value in results.items():
        if isinstance(value, str):
            lines.append(f"| {name} | {value} | | | |")
        else:
            lines.append(f"| {name} | {value[0]:.2f} | {value[1]:.2f} | "
                         f"{value[0] / raw[0]:.2f} | {value[1] / raw[1]:.2f} |")
    lines += ["", "Speed ratios of ember to a peer, per round (the two ran back to back), "
              "median [lowest, highest] over the rounds:", ""]
    for label, _, _, _, target in RATIOS:
        if label in ratios:
            mid, low, high = ratios[label]
            goal = f" (target >= {target})" if target else ""
            lines.append(f"- {label}: **{mid:.2f}** [{low:.2f}, {high:.2f}]{goal}")
    return "\n".join(lines + fresh_table(megabytes, fresh or {}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--fresh-rounds", type=int, default=5,
                        help="rounds of first loads in new processes (0: none)")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "checkpoint.md"))
    parser.add_argument("--child", nargs=2, metavar=("CONTENDER", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    megabytes, results, ratios, fresh = run(args.rounds, args.fresh_rounds)
    text = table(megabytes, results, ratios, fresh)
    print(text)
    import ember.checkpoint

    print(f"(ember.checkpoint from {os.path.dirname(ember.checkpoint.__file__)})")
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    header = ("# Checkpoint throughput\n\nWritten by `python bench/bench_checkpoint.py` "
              f"({machine}; files in the system temp dir, page cache warm for loads).\n\n")
    if args.out:
        with open(args.out, "w") as f:
            f.write(header + text + "\n")


if __name__ == "__main__":
    main()

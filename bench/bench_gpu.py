"""Issue #28's table on a real GPU: training steps per second and kernels per step of ember
(eager, traced as one CUDA graph, traced op by op) against PyTorch CUDA (eager, and the
whole step captured in one CUDA graph). Writes results/gpu.md, naming the GPU.

One command, from the repository root of a machine with cupy, torch (CUDA) and a GPU:

    PYTHONPATH=$(ls -d packages/*/src | tr '\\n' ':') python bench/bench_gpu.py

Options: ``--optimizers sgd,adam`` (default both), ``--models mlp,lenet,lstm``,
``--rounds 5``, ``--no-micro`` (skip the matmul and small-op sections).

What it measures, per model (the shapes of ``packages/nn/tests/test_gpu_launches.py``:
MLP 784-256-256-10 batch 128; LeNet conv32-conv64-1024 batch 64; LSTM(128) over 28 steps
of 28 then Dense(10), batch 64; float32, data already on the GPU) and optimizer:

- **steps/s**: contenders alternate in rounds, each round times a fixed number of steps
  (about 0.25 s of them) between two device synchronizes; the median of the rounds. The
  GPU report of 2026-11-27 found every contender bound by the host's launches, so the
  host-side loop is what is timed, as a user's training loop would run it.
- **kernels/step, memcpy/step, memset/step**: CUPTI through ``torch.profiler`` over a few
  steps (it sees cupy's and nvmath's kernels too, and the kernels a graph launch runs),
  divided by the steps. **host launches/step**: the launch, memcpy and memset API calls
  CUPTI recorded on the host (a graph launch is one); "-" where the profiler recorded
  none, as when it does not trace the driver API.
- **loss at step 1**: every contender starts from the same weights (ember's initializers,
  copied into the PyTorch models) and data, so this column agrees to float32 rounding; it
  is the check that the contenders train the same model.
- ember traced: ``cuda_graph_status()`` after the run, and graph launches per step.

Without a usable GPU (no cupy, or no CUDA device answers) it says so and exits 0,
leaving results/gpu.md as it is: no number is ever written that was not measured.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from _harness import CHARTS, RESULTS, compare, write

WORKLOADS = {
    "mlp": "MLP 784-256-256-10, batch 128",
    "lenet": "LeNet conv32(5x5)-pool-conv64(5x5)-pool-1024-10, batch 64",
    "lstm": "LSTM(128) x 28 steps of 28, Dense(10), batch 64",
}
SHAPES = {"mlp": (128, 784), "lenet": (64, 28, 28, 1), "lstm": (64, 28, 28)}
OPTIMIZERS = {"sgd": "SGD (learning rate 0.01)",
              "adam": "Adam (learning rate 0.001, epsilon 1e-7; `capturable=True` in PyTorch's graphed step)"}
EMBER_EAGER = "ember eager"
EMBER_GRAPH = "ember traced (one CUDA graph)"
EMBER_REPLAY = "ember traced, `cuda_graphs=False`"
TORCH_EAGER = "PyTorch eager"
TORCH_GRAPH = "PyTorch, step in one CUDA graph"
CONTENDERS = (EMBER_EAGER, EMBER_GRAPH, EMBER_REPLAY, TORCH_EAGER, TORCH_GRAPH)
COLUMNS = ("workload", "contender", "steps/s", "ratio to PyTorch eager", "kernels/step",
           "memcpy/step", "memset/step", "host launches/step", "loss at step 1")
# host API calls that put work on the device: each is one launch from the host
LAUNCH_CALLS = ("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch", "cudaMemcpy",
                "cuMemcpy", "cudaMemset", "cuMemset")


@dataclasses.dataclass
class Measurement:
    """One contender on one workload; ``error`` set where it could not run."""

    workload: str
    contender: str
    steps_per_s: float | None = None
    kernels: float | None = None
    memcpy: float | None = None
    memset: float | None = None
    host_launches: float | None = None
    first_loss: float | None = None
    status: list[str] | None = None  # ember traced: cuda_graph_status()
    graph_launches: float | None = None  # ember traced: CUDA graph launches per step
    error: str | None = None


# ---------------------------------------------------------------- counting and tables


def count_events(events: Iterable[tuple[str, str]], steps: int) -> dict[str, float]:
    """Per step: kernels, memcpy and memset on the device, and launch calls on the host.

    ``events`` are (name, kineto activity type) pairs, as CUPTI reports them through
    ``torch.profiler``: ``kernel`` (a graph launch's kernels each count), ``gpu_memcpy``,
    ``gpu_memset``; ``cuda_runtime`` / ``cuda_driver`` API calls named like a launch
    (``cudaLaunchKernel``, ``cuLaunchKernel``, ``cudaGraphLaunch``, ``cudaMemcpyAsync``...)
    are host launches. Everything else (operators, ``gpu_user_annotation`` ranges that
    PyTorch's ``record_function`` projects onto the device, synchronizes) is not counted."""
    n = {"kernels": 0, "memcpy": 0, "memset": 0, "host_launches": 0}
    device = {"kernel": "kernels", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
    for name, activity in events:
        if activity in device:
            n[device[activity]] += 1
        elif activity in ("cuda_runtime", "cuda_driver") and name.startswith(LAUNCH_CALLS):
            n["host_launches"] += 1
    return {k: v / steps for k, v in n.items()}


def _num(v: float | None, digits: int = 1) -> str:
    if v is None:
        return "-"
    if abs(v - round(v)) < 1e-9 or abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def steps_table(optimizer: str, rows: Sequence[Measurement]) -> str:
    """The markdown table of one optimizer's measurements: one row per (workload,
    contender), in ``COLUMNS``; the ratio is to the same workload's PyTorch eager steps/s
    ("-" where either is missing). Then each ember traced step's CUDA graph status."""
    ref = {m.workload: m.steps_per_s for m in rows if m.contender == TORCH_EAGER}
    lines = [f"### {OPTIMIZERS.get(optimizer, optimizer)}", "",
             "| " + " | ".join(COLUMNS) + " |",
             "|---|---|" + "---:|" * (len(COLUMNS) - 2)]
    notes = []
    for m in rows:
        if m.error is not None:
            cells = [f"failed: {m.error}"] + ["-"] * (len(COLUMNS) - 3)
        else:
            r = ref.get(m.workload)
            ratio = f"{m.steps_per_s / r:.2f}x" if m.steps_per_s and r else "-"
            loss = "-" if m.first_loss is None else f"{m.first_loss:.5f}"
            cells = [_num(m.steps_per_s, 0) if m.steps_per_s is not None else "-", ratio,
                     _num(m.kernels), _num(m.memcpy), _num(m.memset),
                     _num(m.host_launches), loss]
        lines.append("| " + " | ".join([m.workload, m.contender, *cells]) + " |")
        if m.status is not None:
            launches = "" if m.graph_launches is None else (
                f"; {_num(m.graph_launches, 2)} graph launches a step")
            notes.append(f"- {m.workload}, {m.contender}: "
                         + "; ".join(f"`{s}`" for s in m.status) + launches)
    if notes:
        lines += ["", "`cuda_graph_status()` after the run:", "", *notes]
    return "\n".join(lines) + "\n"


def chart(markdown: str, out: pathlib.Path) -> pathlib.Path:
    """Draw the steps tables of ``markdown`` (results/gpu.md) as grouped bars: per
    optimizer, each workload's contenders as steps/s relative to PyTorch eager, on a log
    axis (1 is PyTorch eager)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    sections: list[tuple[str, dict[str, dict[str, float]]]] = []
    for block in markdown.split("\n### ")[1:]:
        title, rows = block.splitlines()[0], {}
        for line in block.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("|") and len(cells) == len(COLUMNS) and cells[3].endswith("x"):
                rows.setdefault(cells[0], {})[cells[1]] = float(cells[3][:-1])
        if rows:
            sections.append((title, rows))
    if not sections:
        raise ValueError("bench_gpu.chart: no steps table in the results")
    plt.rcParams.update({"svg.hashsalt": "ember", "svg.fonttype": "none", "font.size": 9})
    fig, axes = plt.subplots(len(sections), 1, figsize=(7.5, 2.6 * len(sections) + 0.8),
                             squeeze=False)
    colors = {EMBER_EAGER: "tab:orange", EMBER_GRAPH: "tab:red", EMBER_REPLAY: "#f5b041",
              TORCH_EAGER: "tab:gray", TORCH_GRAPH: "#555555"}
    for ax, (title, rows) in zip(axes[:, 0], sections):
        workloads = list(rows)
        width = 0.8 / len(CONTENDERS)
        for j, who in enumerate(CONTENDERS):
            ys = [i + j * width for i in range(len(workloads))]
            xs = [rows[w].get(who, float("nan")) for w in workloads]
            ax.barh(ys, xs, height=width, color=colors[who], label=who)
        ax.set_yticks([i + 0.4 - width / 2 for i in range(len(workloads))],
                      [w.split(" ")[0] for w in workloads])
        ax.invert_yaxis()
        ax.set_xscale("log")
        ticks = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20]
        ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlim(0.1, 20)
        ax.axvline(1.0, color="black", linewidth=0.8)
        older = re.search(r"\(at ([0-9a-f]{7,40})", title)  # a section kept from a run before
        when = f" (ember at {older.group(1)})" if older else ""
        ax.set_title(f"{title.split(' (')[0]}{when}: steps per second relative to PyTorch "
                     "eager", loc="left", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].legend(fontsize=7, loc="upper center", ncol=2, bbox_to_anchor=(0.5, -0.25))
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, metadata={"Date": None})
    plt.close(fig)
    return out


# ---------------------------------------------------------------- the models, both sides


def ember_model(name: str) -> object:
    """The model of ``test_gpu_launches.py`` (built: its weights exist on creation)."""
    from ember import nn

    L = nn.layers
    if name == "mlp":
        return nn.Sequential([L.Dense(256, activation="relu", input_shape=(784,)),
                              L.Dense(256, activation="relu"), L.Dense(10)])
    if name == "lenet":
        return nn.Sequential([
            L.Conv2D(32, 5, padding="same", activation="relu", input_shape=(28, 28, 1)),
            L.MaxPool2D(), L.Conv2D(64, 5, padding="same", activation="relu"),
            L.MaxPool2D(), L.Flatten(), L.Dense(1024, activation="relu"), L.Dense(10)])
    if name == "lstm":
        return nn.Sequential([L.LSTM(128, input_shape=(28, 28)), L.Dense(10)])
    raise ValueError(f"bench_gpu: unknown model {name!r}; one of {sorted(WORKLOADS)}")


def initial_weights(name: str, seed: int = 0) -> list[np.ndarray]:
    """ember's initial weights for ``name``, drawn on the host from ``seed``, in
    ``trainable_variables`` order: every contender starts from these."""
    import ember.core as em

    em.random.set_seed(seed)
    with em.device("/cpu:0"):
        model = ember_model(name)
    return [np.array(v.numpy()) for v in model.trainable_variables]  # type: ignore[attr-defined]


def data(name: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A batch (float32 inputs in ember's NHWC / NTC layout, int64 labels in [0, 10))."""
    rng = np.random.default_rng(seed)
    shape = SHAPES[name]
    return rng.random(shape, dtype=np.float32), rng.integers(0, 10, shape[0])


def torch_weights(name: str, weights: Sequence[np.ndarray]) -> list[np.ndarray]:
    """ember's weights laid out as the PyTorch model's ``parameters()``: Linear weights are
    (out, in), convolution kernels (out, in, kh, kw), the flattened features of LeNet are
    (C, H, W) where ember's are (H, W, C); LSTM gates are i, f, c, o on both sides, and
    PyTorch's second bias is zero."""
    w = [np.ascontiguousarray(a, np.float32) for a in weights]
    if name == "mlp":
        return [w[0].T, w[1], w[2].T, w[3], w[4].T, w[5]]
    if name == "lenet":
        fc1 = w[4].reshape(7, 7, 64, 1024).transpose(3, 2, 0, 1).reshape(1024, 7 * 7 * 64)
        return [w[0].transpose(3, 2, 0, 1), w[1], w[2].transpose(3, 2, 0, 1), w[3],
                fc1, w[5], w[6].T, w[7]]
    if name == "lstm":
        return [w[0].T, w[1].T, w[2], np.zeros_like(w[2]), w[3].T, w[4]]
    raise ValueError(f"bench_gpu: unknown model {name!r}")


def torch_input(name: str, x_h: np.ndarray) -> np.ndarray:
    """ember's batch as PyTorch's layers take it: LeNet's NHWC images as NCHW, converted
    on the host so that no transpose kernel lands in PyTorch's step."""
    return np.ascontiguousarray(x_h.transpose(0, 3, 1, 2) if name == "lenet" else x_h)


def torch_model(torch: object, name: str, weights: Sequence[np.ndarray],
                device: str) -> object:
    """The PyTorch twin of ``ember_model(name)``, holding ``weights`` (ember's) on
    ``device``. It takes ``torch_input``'s layout: NCHW for LeNet, batch-first for the
    LSTM."""
    T: object = torch
    F = T.nn.functional  # type: ignore[attr-defined]

    class Net(T.nn.Module):  # type: ignore[attr-defined,misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            nn_ = T.nn  # type: ignore[attr-defined]
            if name == "mlp":
                self.body = nn_.Sequential(nn_.Linear(784, 256), nn_.ReLU(),
                                           nn_.Linear(256, 256), nn_.ReLU(),
                                           nn_.Linear(256, 10))
            elif name == "lenet":
                self.c1, self.c2 = nn_.Conv2d(1, 32, 5, padding=2), nn_.Conv2d(32, 64, 5,
                                                                               padding=2)
                self.f1, self.f2 = nn_.Linear(7 * 7 * 64, 1024), nn_.Linear(1024, 10)
            else:
                self.rnn, self.out = nn_.LSTM(28, 128, batch_first=True), nn_.Linear(128, 10)

        def forward(self, x: object) -> object:
            if name == "mlp":
                return self.body(x)
            if name == "lenet":
                x = F.max_pool2d(F.relu(self.c1(x)), 2)
                x = F.max_pool2d(F.relu(self.c2(x)), 2)
                return self.f2(F.relu(self.f1(x.flatten(1))))  # type: ignore[attr-defined]
            _, (h, _) = self.rnn(x)
            return self.out(h[-1])

    net = Net()
    with T.no_grad():  # type: ignore[attr-defined]
        for p, a in zip(net.parameters(), torch_weights(name, weights), strict=True):
            assert tuple(p.shape) == a.shape, (name, tuple(p.shape), a.shape)
            p.copy_(T.from_numpy(np.ascontiguousarray(a)))  # type: ignore[attr-defined]
    return net.to(device)


def _ember_step(model: object, opt: object, x: object, y: object) -> object:
    from ember import nn, tape

    with tape.GradientTape() as t:
        loss = nn.losses.sparse_softmax_cross_entropy(y, model(x, training=True))  # type: ignore
    variables = model.trainable_variables  # type: ignore[attr-defined]
    opt.apply_gradients(zip(t.gradient(loss, variables), variables))  # type: ignore
    return loss


@dataclasses.dataclass
class Prepared:
    """A contender ready to time: ``call`` runs one step; ``status`` (ember traced) reads
    its ``cuda_graph_status()``."""

    call: Callable[[], object]
    first_loss: float
    status: Callable[[], list[str]] | None = None


def prepare_ember(name: str, optimizer: str, mode: str, weights: Sequence[np.ndarray],
                  x_h: np.ndarray, y_h: np.ndarray, device: str = "/gpu:0",
                  warmup: int = 4) -> Prepared:
    """``mode``: "eager", "graph" (``graph.function``) or "replay" (``cuda_graphs=False``).
    The first call's loss is kept; ``warmup`` more build the slots, trace, plan the
    products and capture (a traced step captures on its third call)."""
    import ember.core as em
    from ember import graph, nn

    with em.device(device):
        model = ember_model(name)
        for v, a in zip(model.trainable_variables, weights, strict=True):  # type: ignore
            v.assign(a)
        x, y = em.constant(x_h), em.constant(y_h)
    opt = nn.optimizers.SGD(0.01) if optimizer == "sgd" else nn.optimizers.Adam(1e-3)
    fn = _ember_step if mode == "eager" else graph.function(
        _ember_step, cuda_graphs=mode == "graph")

    def call() -> object:
        return fn(model, opt, x, y)

    first = float(call())  # type: ignore[arg-type]
    for _ in range(warmup):
        call()
    status = None if mode == "eager" else fn.cuda_graph_status  # type: ignore[attr-defined]
    return Prepared(call, first, status)


def prepare_torch(torch: object, name: str, optimizer: str, graphed: bool,
                  weights: Sequence[np.ndarray], x_h: np.ndarray, y_h: np.ndarray,
                  device: str = "cuda", warmup: int = 4) -> Prepared:
    """PyTorch's step: ``zero_grad``, forward, cross-entropy, backward, optimizer step.
    ``graphed``: the whole step captured in one ``torch.cuda.CUDAGraph`` with static
    inputs, as PyTorch's CUDA Graphs notes show ("whole network capture": warm-up on a
    side stream, grads set to None before the capture, Adam with ``capturable=True``);
    a step is then one ``replay()``."""
    T: object = torch
    model = torch_model(torch, name, weights, device)
    x = T.from_numpy(torch_input(name, x_h)).to(device)  # type: ignore[attr-defined]
    y = T.from_numpy(y_h.astype(np.int64)).to(device)  # type: ignore[attr-defined]
    params = model.parameters()  # type: ignore[attr-defined]
    opt = (T.optim.SGD(params, lr=0.01) if optimizer == "sgd"  # type: ignore[attr-defined]
           else T.optim.Adam(params, lr=1e-3, eps=1e-7,  # type: ignore[attr-defined]
                             capturable=graphed))
    loss_fn = T.nn.functional.cross_entropy  # type: ignore[attr-defined]

    def step() -> object:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)  # type: ignore[operator]
        loss.backward()
        opt.step()
        return loss

    first = float(step().detach())  # type: ignore[attr-defined]
    if not graphed:
        for _ in range(warmup):
            step()
        return Prepared(step, first)
    cuda = T.cuda  # type: ignore[attr-defined]
    side = cuda.Stream()
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):
        for _ in range(3):
            step()
    cuda.current_stream().wait_stream(side)
    g = cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with cuda.graph(g):
        static_loss = loss_fn(model(x), y)  # type: ignore[operator]
        static_loss.backward()
        opt.step()
    for _ in range(warmup):
        g.replay()

    # The graph reads and writes x, y, the parameters and the optimizer's state at fixed
    # addresses: they must outlive it. Held by ``step`` alone, they were freed when this
    # returned, and the next allocations' bytes became the labels (the H200's first run:
    # cross_entropy's device assert, labels out of range).
    static = (model, opt, x, y)

    def replay() -> object:
        g.replay()
        assert static  # (kept alive with the graph)
        return static_loss

    return Prepared(replay, first)


# ---------------------------------------------------------------- measuring


def rates(calls: dict[str, Callable[[], object]], sync: Callable[[], None], rounds: int,
          seconds: float = 0.25) -> dict[str, float]:
    """Median steps per second of each call over ``rounds``, contenders alternating; each
    round times about ``seconds`` of steps between two synchronizes."""
    n = {}
    for k, call in calls.items():
        sync()
        t0 = time.perf_counter()
        for _ in range(3):
            call()
        sync()
        n[k] = max(3, min(5000, int(seconds / max((time.perf_counter() - t0) / 3, 1e-6))))
    got: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(rounds):
        for k, call in calls.items():
            sync()
            t0 = time.perf_counter()
            for _ in range(n[k]):
                call()
            sync()
            got[k].append(n[k] / (time.perf_counter() - t0))
    return {k: statistics.median(v) for k, v in got.items()}


def profiled_events(torch: object, call: Callable[[], object], sync: Callable[[], None],
                    steps: int) -> list[tuple[str, str]]:
    """(name, kineto activity type) of every event CUPTI recorded over ``steps`` calls."""
    from torch.profiler import ProfilerActivity, profile

    sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            call()
        sync()
    return [(e.name(), activity_of(e)) for e in prof.profiler.kineto_results.events()]


def activity_of(event: object) -> str:
    """The kineto activity type of a profiler event. PyTorch 2.13 has
    ``activity_type()``; 2.11 (the H200's) has not, so it is told from the device and
    the name: on the GPU ``Memcpy ...`` and ``Memset ...`` are copies and sets, anything
    else (but user annotations) a kernel; on the host, CUDA API calls are named ``cuda*`` or
    ``cu*`` followed by a capital (``cudaLaunchKernel``, ``cuLaunchKernel``)."""
    e: Any = event
    if hasattr(e, "activity_type"):
        return str(e.activity_type())
    name = e.name()
    on_gpu = "CUDA" in str(e.device_type())
    if getattr(e, "is_user_annotation", lambda: False)():
        return "gpu_user_annotation" if on_gpu else "user_annotation"
    if on_gpu:
        return ("gpu_memcpy" if name.startswith("Memcpy")
                else "gpu_memset" if name.startswith("Memset") else "kernel")
    if re.match(r"cuda[A-Z]", name):
        return "cuda_runtime"
    if re.match(r"cu[A-Z]", name):
        return "cuda_driver"
    return "cpu_op"


def _launched(status: list[str]) -> int:
    return sum(int(n) for s in status for n in re.findall(r"launched (\d+) time", s))


def measure(torch: object | None, name: str, optimizer: str, sync: Callable[[], None],
            rounds: int, profile_steps: int = 5, device: str = "/gpu:0",
            seconds: float = 0.25) -> list[Measurement]:
    """Every contender on one workload: prepared, timed together, then profiled (with
    ``torch`` None, PyTorch's rows say so and nothing is profiled). ``device``: ember's
    (the self-test runs this on the CPU)."""
    weights = initial_weights(name)
    x_h, y_h = data(name)
    label = WORKLOADS[name]
    makers: dict[str, Callable[[], Prepared]] = {
        EMBER_EAGER: lambda: prepare_ember(name, optimizer, "eager", weights, x_h, y_h,
                                           device),
        EMBER_GRAPH: lambda: prepare_ember(name, optimizer, "graph", weights, x_h, y_h,
                                           device),
        EMBER_REPLAY: lambda: prepare_ember(name, optimizer, "replay", weights, x_h, y_h,
                                           device),
        TORCH_EAGER: lambda: prepare_torch(torch, name, optimizer, False, weights, x_h, y_h),
        TORCH_GRAPH: lambda: prepare_torch(torch, name, optimizer, True, weights, x_h, y_h),
    }
    out = {k: Measurement(label, k) for k in CONTENDERS}
    ready: dict[str, Prepared] = {}
    for k, make in makers.items():
        if torch is None and k in (TORCH_EAGER, TORCH_GRAPH):
            out[k].error = "PyTorch with CUDA is not installed here"
            continue
        try:
            ready[k] = make()
            out[k].first_loss = ready[k].first_loss
        except Exception as e:  # one contender failing must not lose the others' numbers
            first_line = (str(e).splitlines() or [""])[0][:200]
            out[k].error = f"{type(e).__name__}: {first_line}"
    for k, r in rates({k: p.call for k, p in ready.items()}, sync, rounds, seconds).items():
        out[k].steps_per_s = r
    for k, p in ready.items():
        before = _launched(p.status()) if p.status else 0
        if torch is not None:
            try:
                counts = count_events(profiled_events(torch, p.call, sync, profile_steps),
                                      profile_steps)
            except Exception as e:  # CUPTI refused: keep the timings, leave counts "-"
                print(f"bench_gpu: {name} {k}: profiling failed: {type(e).__name__}: {e}",
                      file=sys.stderr)
            else:
                out[k].kernels, out[k].memcpy = counts["kernels"], counts["memcpy"]
                out[k].memset = counts["memset"]
                out[k].host_launches = counts["host_launches"] or None
        if p.status:
            out[k].status = p.status()
            if torch is not None:
                out[k].graph_launches = (_launched(out[k].status) - before) / profile_steps
    return [out[k] for k in CONTENDERS]


# ---------------------------------------------------------------- the micro sections


def _synced(fn: Callable[[], object], sync: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        fn()
        sync()

    return run


def _matmul(cupy: object, em: object, sync: Callable[[], None]) -> str:
    cp = cupy
    rng = np.random.default_rng(0)
    a_h = rng.standard_normal((1000, 1000)).astype(np.float32)
    b_h = rng.standard_normal((1000, 1000)).astype(np.float32)
    a, b = cp.asarray(a_h), cp.asarray(b_h)  # type: ignore[attr-defined]
    with em.device("/gpu:0"):  # type: ignore[attr-defined]
        ta, tb = em.constant(a_h), em.constant(b_h)  # type: ignore[attr-defined]

    def raw() -> None:
        for _ in range(200):
            a @ b

    def ember() -> None:
        for _ in range(200):
            em.matmul(ta, tb)  # type: ignore[attr-defined]

    t = compare({"cupy": _synced(raw, sync), "ember": _synced(ember, sync)}, number=3, rounds=5)
    ratio = t["ember"] / t["cupy"]
    return ("### 1000x1000 float32 matmul, 200 times (target: within 5% of cupy)\n\n"
            "| contender | ms per 200 | ratio to cupy |\n|---|---:|---:|\n"
            f"| cupy `a @ b` | {t['cupy'] * 1e3:.2f} | 1.00x |\n"
            f"| ember `em.matmul` | {t['ember'] * 1e3:.2f} | {ratio:.3f}x |\n\n"
            f"Within 5%: {'yes' if ratio <= 1.05 else 'NO'}.\n")


def _small_ops(cupy: object, em: object, sync: Callable[[], None]) -> str:
    cp = cupy
    a = cp.ones((2, 2), np.float32)  # type: ignore[attr-defined]
    with em.device("/gpu:0"):  # type: ignore[attr-defined]
        t = em.ones((2, 2))  # type: ignore[attr-defined]
    n = 2000

    def raw() -> None:
        for _ in range(n):
            cp.add(a, a)  # type: ignore[attr-defined]

    def ember() -> None:
        for _ in range(n):
            em.add(t, t)  # type: ignore[attr-defined]

    times = compare({"cupy": _synced(raw, sync), "ember": _synced(ember, sync)}, number=3)
    per = {k: v / n for k, v in times.items()}
    ratio = per["ember"] / per["cupy"]
    return ("### small-op overhead: add on (2, 2) float32 (target: <= 1.5x cupy)\n\n"
            "| contender | us per call | ratio to cupy |\n|---|---:|---:|\n"
            f"| cupy `cupy.add` | {per['cupy'] * 1e6:.2f} | 1.00x |\n"
            f"| ember `em.add` | {per['ember'] * 1e6:.2f} | {ratio:.2f}x |\n\n"
            f"Within 1.5x: {'yes' if ratio <= 1.5 else 'NO'}.\n")


# ---------------------------------------------------------------- the run


def _gpu() -> tuple[object, str] | None:
    """(cupy, the GPU's name) when cupy imports and a CUDA device answers, else None."""
    try:
        import cupy
    except ImportError:
        return None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    except Exception:  # no driver, no device: cupy raises its own runtime errors
        return None
    return cupy, name.decode() if isinstance(name, bytes) else str(name)


def _torch_cuda() -> tuple[object | None, str]:
    """(torch, its version) when torch imports and sees CUDA, else (None, why not)."""
    try:
        import torch
    except ImportError:
        return None, "not installed"
    if not torch.cuda.is_available():
        return None, f"{torch.__version__}, which sees no CUDA device"
    return torch, torch.__version__


def ember_commit() -> str:
    """The checkout's commit (``+ local changes`` when the tree differs), or
    ``$EMBER_COMMIT`` where there is no git (a copied tree)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.environ.get("EMBER_COMMIT"):  # named by whoever copied the tree (its git, if
        return os.environ["EMBER_COMMIT"]  # any, may be another checkout's: the H200's was)
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True).stdout.strip()
        return head + (" + local changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("EMBER_COMMIT", "unknown (no git here; set EMBER_COMMIT)")


def _version(module: str) -> str:
    try:
        return str(getattr(__import__(module), "__version__", "present"))
    except ImportError:
        return "not installed"


def header(gpu: str, cupy_version: str, torch_version: str, nvmath: str, commit: str) -> str:
    return (f"## ember on a GPU: issue #28's table\n\nGPU: {gpu}. ember {commit}; cupy "
            f"{cupy_version}, PyTorch {torch_version}, nvmath-python {nvmath}, numpy "
            f"{np.__version__}, Python {platform.python_version()}. float32, data on the "
            "GPU, same initial weights and batch on both sides. steps/s: median of rounds, "
            "contenders alternating, each round between two device synchronizes. "
            "Kernels, memcpy, memset and host launches per step: CUPTI through "
            "`torch.profiler`, divided by the steps profiled.\n")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="mlp,lenet,lstm")
    p.add_argument("--optimizers", default="sgd,adam")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-micro", action="store_true",
                   help="skip the matmul and small-op sections")
    p.add_argument("--chart", action="store_true",
                   help="only redraw docs/img/bench/gpu.svg from results/gpu.md")
    args = p.parse_args(argv)
    if args.chart:
        print(f"wrote {chart(RESULTS.joinpath('gpu.md').read_text(), CHARTS / 'gpu.svg')}")
        return 0
    models = [m for m in args.models.split(",") if m]
    optimizers = [o for o in args.optimizers.split(",") if o]
    for m in models:
        if m not in WORKLOADS:
            p.error(f"--models: unknown model {m!r}; one of {sorted(WORKLOADS)}")
    for o in optimizers:
        if o not in OPTIMIZERS:
            p.error(f"--optimizers: unknown optimizer {o!r}; one of {sorted(OPTIMIZERS)}")

    found = _gpu()
    if found is None:
        print("bench_gpu: skipped: no usable GPU here (cupy is not installed or no CUDA device "
              "answers); results/gpu.md is left as it is")
        return 0
    cupy, name = found
    import ember.core as em

    if not em.num_gpus():
        print("bench_gpu: skipped: cupy sees a GPU but ember does not (em.num_gpus() == 0); "
              "results/gpu.md is left as it is")
        return 0
    torch, torch_version = _torch_cuda()

    def sync() -> None:
        cupy.cuda.runtime.deviceSynchronize()  # type: ignore[attr-defined]

    parts = [header(name, cupy.__version__, torch_version,  # type: ignore[attr-defined]
                    _version("nvmath"), ember_commit())]
    for opt in optimizers:
        rows: list[Measurement] = []
        for m in models:
            print(f"bench_gpu: {m}, {opt} ...", flush=True)
            rows += measure(torch, m, opt, sync, args.rounds)
        parts.append(steps_table(opt, rows))
        print(parts[-1], flush=True)
    if not args.no_micro:
        parts += [_matmul(cupy, em, sync), _small_ops(cupy, em, sync)]
    write("gpu", "\n".join(parts))
    try:
        print(f"wrote {chart(RESULTS.joinpath('gpu.md').read_text(), CHARTS / 'gpu.svg')}")
    except ImportError:
        print("matplotlib not installed: no chart (python bench/bench_gpu.py --chart)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

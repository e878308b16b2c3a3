"""Convolutions: ember's algorithms against PyTorch eager (oneDNN), side by side in one
process, with 1 and with 2 BLAS threads.

- LeNet CNN 28x28x1, batch 64: one training step (also numpy by hand, from bench_nn);
- a ResNet-style block (conv3x3-relu-conv3x3-add-relu, 56x56x64, batch 8): forward and
  backward with respect to the input and both filters;
- per layer and per algorithm: forward plus both gradient products;
- peak memory of one step (peak resident set growth, in a fresh process per contender).

Writes results/conv.md and docs/img/bench/conv.png. Ratios only: speed relative to
PyTorch eager (its time divided by the contender's; higher is better).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time
import tracemalloc

import numpy as np
from _harness import CHARTS, compare, gemm_ceiling, try_import, write

import ember.core as em
from ember import tape

HERE = pathlib.Path(__file__).parent
THREADS = (1, 2)
ALGORITHMS = ("im2col", "fft", "winograd")
rng = np.random.default_rng(0)


def _normal(*shape):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[:-1]))).astype(np.float32)


# --- workloads: name -> builder(torch) returning {contender: step}, calls per round --------
def lenet(torch):
    import bench_nn

    c, number = bench_nn.cnn(torch)
    return c, number


def resnet_block(torch):
    n, hw, ch = 8, 56, 64
    x = rng.standard_normal((n, hw, hw, ch)).astype(np.float32)
    w1, w2 = _normal(3, 3, ch, ch), _normal(3, 3, ch, ch)
    xe, w1e, w2e = em.constant(x), em.constant(w1), em.constant(w2)
    nn = em.nn_ops

    def ember_step():
        with tape.GradientTape() as t:
            t.watch([xe, w1e, w2e])
            h = nn.relu(nn.conv2d(xe, w1e, padding="SAME"))
            y = nn.relu(em.add(nn.conv2d(h, w2e, padding="SAME"), xe))
            loss = em.reduce_sum(y)
        t.gradient(loss, [xe, w1e, w2e])

    c = {"ember": ember_step}
    if torch is not None:
        F = torch.nn.functional
        xt = torch.tensor(x).permute(0, 3, 1, 2).contiguous().requires_grad_()
        w1t = torch.tensor(w1).permute(3, 2, 0, 1).contiguous().requires_grad_()
        w2t = torch.tensor(w2).permute(3, 2, 0, 1).contiguous().requires_grad_()

        def torch_step():
            for v in (xt, w1t, w2t):
                v.grad = None
            y = F.relu(F.conv2d(F.relu(F.conv2d(xt, w1t, padding=1)), w2t, padding=1) + xt)
            y.sum().backward()

        def release():
            for v in (xt, w1t, w2t):
                v.grad = None

        torch_step.release = release  # for the memory benchmark (see bench_nn._torch_step)
        c["PyTorch eager"] = torch_step
    return c, 2


WORKLOADS = {
    "LeNet CNN 28x28x1 (conv32-pool-conv64-pool-1024-10), batch 64, training step": lenet,
    "ResNet-style block (3x3 convs, 56x56x64, batch 8), forward + backward": resnet_block,
}

# products of a LeNet step (batch 64): (M, K, N)
GEMMS = {
    "dense 3136 -> 1024, forward": (64, 7 * 7 * 64, 1024),
    "dense 3136 -> 1024, kernel gradient": (7 * 7 * 64, 64, 1024),
    "conv2 Winograd, one of 64 tile points": (64 * 16, 32, 64),
    "conv1 im2col, forward": (64 * 28 * 28, 25, 32),
}

# (name, input shape, filter shape): SAME padding, stride 1
LAYERS = (
    ("LeNet conv1 28x28x1 -> 32, 5x5, b64", (64, 28, 28, 1), (5, 5, 1, 32)),
    ("LeNet conv2 14x14x32 -> 64, 5x5, b64", (64, 14, 14, 32), (5, 5, 32, 64)),
    ("ResNet conv 56x56x64 -> 64, 3x3, b8", (8, 56, 56, 64), (3, 3, 64, 64)),
)


def _layer_contenders(torch, x_shape, w_shape):
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = _normal(*w_shape)
    xe, we = em.constant(x), em.constant(w)
    dye = em.constant(rng.standard_normal(x_shape[:3] + w_shape[3:]).astype(np.float32))

    def ember(algo):
        def run():
            with em.config.using(conv_algorithm=algo):
                with tape.GradientTape() as t:
                    t.watch([xe, we])
                    y = em.nn_ops.conv2d(xe, we, padding="SAME")
                t.gradient(y, [xe, we], output_gradients=dye)
        return run

    c = {f"ember {a}": ember(a) for a in ALGORITHMS
         if a != "winograd" or max(w_shape[:2]) <= 5}
    c["ember auto"] = ember("auto")
    if torch is not None:
        F = torch.nn.functional
        xt = torch.tensor(x).permute(0, 3, 1, 2).contiguous().requires_grad_()
        wt = torch.tensor(w).permute(3, 2, 0, 1).contiguous().requires_grad_()
        dyt = torch.tensor(dye.numpy()).permute(0, 3, 1, 2).contiguous()

        def torch_run():
            xt.grad = wt.grad = None
            F.conv2d(xt, wt, padding=w_shape[0] // 2).backward(dyt)

        c["PyTorch eager"] = torch_run
    return c


def _set_threads(torch, n: int):
    from threadpoolctl import threadpool_limits

    if torch is not None:
        torch.set_num_threads(n)
    em.config.clear_conv_choices()  # the fastest algorithm depends on the thread count
    return threadpool_limits(n)


def _ratios(times: dict[str, float]) -> dict[str, float]:
    ref = times.get("PyTorch eager", float("nan"))
    return {k: ref / v for k, v in times.items()}


def _table(title: str, times: dict[str, float], unit: str = "ms") -> list[str]:
    r = _ratios(times)
    lines = [f"#### {title}", "", f"| contender | speed relative to PyTorch eager | time ({unit}) |",
             "|---|---:|---:|"]
    for k, v in times.items():
        lines.append(f"| {k} | {r[k]:.2f}x | {v * 1e3:.1f} |")
    return lines + [""]


def _auto_choices() -> list[str]:
    out = []
    for (op, (xs, ws, *_), _dtype, _), algo in sorted(em.config.conv_choices().items()):
        out.append(f"| {op} | {xs} | {ws} | {algo} |")
    return out


# --- peak memory: one fresh process per (workload, contender) ---------------------------
def _rss_kb(field: str) -> int:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _measure_memory(workload: str, contender: str) -> None:
    """In a child process: warm up, then the peak RSS growth of one step (and, for numpy
    and ember, tracemalloc's peak, which sees numpy's allocations)."""
    from threadpoolctl import threadpool_limits

    torch = try_import("torch")
    if torch is not None:
        torch.set_num_threads(1)
    with threadpool_limits(1):
        steps, _ = WORKLOADS[workload](torch)
        step = steps[contender]
        step()
        step()  # autotuning done, buffers settled
        release = getattr(step, "release", None)
        if release is not None:  # PyTorch keeps the last step's gradients: drop them
            release()
        base = _rss_kb("VmRSS")
        pathlib.Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM)
        tracemalloc.start()
        step()
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        peak = _rss_kb("VmHWM")
    print(json.dumps({"rss_mb": (peak - base) / 1024, "traced_mb": traced / 2**20}))


def memory(workload: str, contenders: list[str]) -> dict[str, dict[str, float]]:
    # a fixed mmap threshold: large arrays go back to the system when freed, so the
    # resident set follows what is alive (glibc would otherwise raise it dynamically)
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072", MALLOC_TRIM_THRESHOLD_="131072")
    out = {}
    for c in contenders:
        r = subprocess.run([sys.executable, __file__, "--memory", workload, c], env=env,
                           capture_output=True, text=True, cwd=HERE, check=True)
        out[c] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


# --- chart ----------------------------------------------------------------------------
def chart(speed: dict[int, dict[str, dict[str, float]]],
          layers: dict[int, dict[str, dict[str, float]]]) -> pathlib.Path | None:
    try:
        import matplotlib
    except ImportError:
        print("matplotlib not installed: no chart for conv")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [2, 3]})
    ax = axes[0]
    names = list(next(iter(speed.values())))
    short = ["LeNet step", "ResNet block"]
    width = 0.35
    for j, t in enumerate(THREADS):
        vals = [_ratios(speed[t][n]).get("ember", np.nan) for n in names]
        ax.bar(np.arange(len(names)) + (j - 0.5) * width, vals, width,
               label=f"{t} BLAS thread{'s' if t > 1 else ''}",
               color=["tab:orange", "tab:red"][j])
        for i, v in enumerate(vals):
            ax.annotate(f"{v:.2f}", (i + (j - 0.5) * width, v), ha="center", va="bottom",
                        fontsize=8)
    for i, target in enumerate((1.0, 0.8)):
        ax.hlines(target, i - 0.45, i + 0.45, colors="k", linestyles="--", linewidth=1)
    ax.axhline(1.0, color="gray", linewidth=0.5)
    ax.set_xticks(range(len(names)), short)
    ax.set_ylabel("ember speed / PyTorch eager speed")
    ax.set_title("training workloads (dashed: target)", fontsize=9, loc="left")
    ax.legend(fontsize=8)
    ax = axes[1]
    lnames = list(layers[THREADS[0]])
    algos = [f"ember {a}" for a in ALGORITHMS] + ["ember auto"]
    width = 0.8 / len(algos)
    for j, a in enumerate(algos):
        vals = [_ratios(layers[1][n]).get(a, np.nan) for n in lnames]
        ax.bar(np.arange(len(lnames)) + (j - (len(algos) - 1) / 2) * width, vals, width,
               label=a.removeprefix("ember "))
    ax.axhline(1.0, color="k", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(lnames)), [n.split(",")[0].replace(" -> ", "\n-> ")
                                       for n in lnames], fontsize=8)
    ax.set_title("one layer, forward + both gradients, 1 thread (1.0 = PyTorch)", fontsize=9,
                 loc="left")
    ax.legend(fontsize=8, title="ember algorithm", title_fontsize=8)
    fig.tight_layout()
    CHARTS.mkdir(parents=True, exist_ok=True)
    out = CHARTS / "conv.png"
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {out}")
    return out


# ember op -> the PyTorch ops doing the same work (their self times are summed)
PROFILE_GROUPS = {
    "convolutions (forward and both gradients)": (
        {"conv2d", "conv2d_backprop_input", "conv2d_backprop_filter"},
        {"aten::mkldnn_convolution", "aten::convolution_backward"}),
    "dense layers (matrix products)": ({"matmul"}, {"aten::mm", "aten::addmm"}),
    "max pooling and its gradient": (
        {"max_pool_tiled", "max_pool_tiled_grad"},
        {"aten::max_pool2d_with_indices", "aten::max_pool2d_with_indices_backward"}),
    "bias + relu and their gradients": (
        {"bias_activation", "bias_activation_grad"},
        {"aten::clamp_min", "aten::threshold_backward", "aten::sum", "aten::relu"}),
}
# the optimizer's whole update, timed around ember's apply_gradients (its updates run in
# place, outside the op table, where nothing else holds a variable's value) and taken from
# PyTorch's profiler as its SGD.step's total (the aten::add_ calls and what surrounds them)
OPTIMIZER_GROUP = ("optimizer updates (the whole apply_gradients / SGD.step)",
                   "Optimizer.step#SGD.step")


def profile_lenet(torch) -> dict[str, tuple[float, float]]:
    """Milliseconds per LeNet step in each group of PROFILE_GROUPS: ember's by timing
    every op's forward function, PyTorch's by its profiler's self CPU time; and the
    optimizer's whole update (OPTIMIZER_GROUP). The rest of each step (Python, the tape,
    other small ops) is under "everything else"."""
    import bench_nn
    from torch.profiler import ProfilerActivity, profile

    from ember import nn
    from ember.core import REGISTRY

    contenders, _ = bench_nn.cnn(torch)
    steps = 10
    spent: dict[str, float] = {}
    wrapped = {}
    apply = nn.optimizers.SGD.apply_gradients

    def timed_apply(*a, **k):
        t0 = time.perf_counter()
        try:
            return apply(*a, **k)
        finally:
            spent[OPTIMIZER_GROUP[0]] = spent.get(OPTIMIZER_GROUP[0], 0.0) + \
                time.perf_counter() - t0
    nn.optimizers.SGD.apply_gradients = timed_apply
    for name, op in REGISTRY.items():
        def timed(*a, _fw=op.forward, _name=name, **k):
            t0 = time.perf_counter()
            try:
                return _fw(*a, **k)
            finally:
                spent[_name] = spent.get(_name, 0.0) + time.perf_counter() - t0
        wrapped[name] = op.forward
        op.forward = timed
    try:
        for _ in range(3):
            contenders["ember"]()
        spent.clear()
        t0 = time.perf_counter()
        for _ in range(steps):
            contenders["ember"]()
        ember_total = time.perf_counter() - t0
    finally:
        for name, fw in wrapped.items():
            REGISTRY[name].forward = fw
        nn.optimizers.SGD.apply_gradients = apply
    step = contenders["PyTorch eager"]
    for _ in range(3):
        step()
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    torch_total = time.perf_counter() - t0
    torch_self = {e.key: e.self_cpu_time_total / 1e6 for e in prof.key_averages()}
    torch_incl = {e.key: e.cpu_time_total / 1e6 for e in prof.key_averages()}
    out = {}
    for group, (ours, theirs) in PROFILE_GROUPS.items():
        out[group] = (sum(spent.get(n, 0.0) for n in ours) / steps * 1e3,
                      sum(torch_self.get(n, 0.0) for n in theirs) / steps * 1e3)
    ours, theirs = OPTIMIZER_GROUP
    out[ours] = (spent.get(ours, 0.0) / steps * 1e3, torch_incl.get(theirs, 0.0) / steps * 1e3)
    e_rest = ember_total / steps * 1e3 - sum(v[0] for v in out.values())
    t_rest = torch_total / steps * 1e3 - sum(v[1] for v in out.values())
    out["everything else"] = (e_rest, t_rest)
    out["the whole step"] = (ember_total / steps * 1e3, torch_total / steps * 1e3)
    return out


def main() -> None:
    torch = try_import("torch")
    speed: dict[int, dict[str, dict[str, float]]] = {}
    layers: dict[int, dict[str, dict[str, float]]] = {}
    choices: dict[int, list[str]] = {}
    for t in THREADS:
        with _set_threads(torch, t):
            speed[t] = {}
            for name, make in WORKLOADS.items():
                contenders, number = make(torch)
                speed[t][name] = compare(contenders, number=number, rounds=5)
            choices[t] = _auto_choices()
            layers[t] = {name: compare(_layer_contenders(torch, xs, ws), number=2, rounds=5)
                         for name, xs, ws in LAYERS}
    mem = {name: memory(name, [c for c in ("numpy by hand", "ember", "PyTorch eager")
                               if c != "numpy by hand" or "LeNet" in name])
           for name in WORKLOADS} if torch is not None else {}
    with _set_threads(torch, 1):
        prof = profile_lenet(torch) if torch is not None else {}
        ceiling = gemm_ceiling(torch, GEMMS)
    write("conv", _report(speed, layers, choices, mem, prof) + "\n".join(
        ["### The ceiling: numpy's matrix products against PyTorch's, 1 thread", "",
         "The matrix products of a LeNet step, alone: numpy multiplies through its BLAS "
         "(OpenBLAS in the wheels), PyTorch through MKL. Their ratio bounds the ratio to "
         "PyTorch that a numpy-backed step reaches without doing fewer multiply-adds "
         "(Winograd does fewer).", "", *ceiling]))
    chart(speed, layers)


def _report(speed, layers, choices, mem, prof) -> str:
    lines = ["# ember-core: convolutions against PyTorch eager", "",
             "Same process, contenders alternating, best of 5 rounds. Speed relative to "
             "PyTorch eager = its time / the contender's (higher is better; above 1.0 is "
             "faster than PyTorch). Times are for scale only: the machine is shared.", ""]
    for t in THREADS:
        lines += [f"### {t} BLAS thread{'s' if t > 1 else ''} (and torch.set_num_threads({t}))",
                  ""]
        for name, times in speed[t].items():
            lines += _table(name, times)
        for name, times in layers[t].items():
            lines += _table(f"layer: {name}, forward + both gradients", times)
        lines += ["Algorithms the autotuner chose (`em.config.conv_algorithm = \"auto\"`):", "",
                  "| product | input | filters | algorithm |", "|---|---|---|---|",
                  *choices[t], ""]
    lines += ["### Thread policy: time with 1 BLAS thread / time with 2 (above 1: 2 win)", "",
              "| workload | contender | speed-up from 2 threads |", "|---|---|---:|"]
    for name in speed[THREADS[0]]:
        for c in speed[1][name]:
            lines.append(f"| {name.split(',')[0]} | {c} | "
                         f"{speed[1][name][c] / speed[2][name][c]:.2f}x |")
    lines.append("")
    if mem:
        lines += ["### Peak memory of one step (1 thread)", "",
                  "Growth of the peak resident set during one step after two warm-up steps, "
                  "each contender in a fresh process (glibc's mmap threshold fixed so freed "
                  "arrays leave the resident set). PyTorch's gradients from the warm-up "
                  "step are dropped before the baseline, so its step's gradients count, "
                  "as ember's do. tracemalloc's peak sees numpy's allocations only.", "",
                  "| workload | contender | peak RSS growth (MB) | ratio to PyTorch | "
                  "tracemalloc peak (MB) |", "|---|---|---:|---:|---:|"]
        for name, per in mem.items():
            ref = per.get("PyTorch eager", {}).get("rss_mb", float("nan"))
            for c, m in per.items():
                traced = f"{m['traced_mb']:.1f}" if c != "PyTorch eager" else "-"
                lines.append(f"| {name.split(',')[0]} | {c} | {m['rss_mb']:.1f} | "
                             f"{m['rss_mb'] / ref:.2f}x | {traced} |")
        lines.append("")
    if prof:
        lines += ["### Where one LeNet step's time goes (1 thread)", "",
                  "Milliseconds per step: ember's ops timed one by one, PyTorch's by its "
                  "profiler (self CPU time of the ATen ops doing the same work; the "
                  "profiler adds a little to PyTorch's whole step); the optimizer's whole "
                  "update on both sides. Ten steps, after three warm-up steps.", "",
                  "| part of the step | ember (ms) | PyTorch eager (ms) |", "|---|---:|---:|"]
        for group, (e, t) in prof.items():
            lines.append(f"| {group} | {e:.1f} | {t:.1f} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--memory":
        sys.path.insert(0, str(HERE))
        _measure_memory(sys.argv[2], sys.argv[3])
    else:
        main()

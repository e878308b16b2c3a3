"""Recurrent training steps: ember's LSTM and GRU (fused cell ops) vs PyTorch eager and
numpy by hand, with 1 and with 2 BLAS threads; and the peak memory of one step.

LSTM(128) and GRU(128) over 28 steps of 28 features, batch 64, then Dense(10), softmax
cross-entropy and SGD: the MNIST-rows model of the seeds. Contenders alternate in one
process (best of several rounds); results are ratios. Writes bench/results/recurrent.md
and the chart docs/img/recurrent.png.

    python bench/bench_recurrent.py            # both thread counts
    python bench/bench_recurrent.py --quick    # fewer rounds
"""

from __future__ import annotations

import ctypes
import pathlib
import sys
import time

import numpy as np
from _harness import RESULTS, compare, gemm_ceiling, try_import

import ember.core as em
from ember import nn, tape

N, T, F, U = 64, 28, 28, 128
CHART = pathlib.Path(__file__).parents[1] / "docs" / "img" / "recurrent.png"
rng = np.random.default_rng(0)


def _glorot(*shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * np.sqrt(2.0 / sum(shape[-2:]))).astype(np.float32)


def _sig(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-z))


def _ce_grad(logits: np.ndarray, y: np.ndarray) -> np.ndarray:
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(y)), y] -= 1
    return p / len(y)


# --- numpy by hand: the forward caches what the backward needs, nothing else ---------------
def numpy_lstm(x: np.ndarray, y: np.ndarray) -> object:
    Wx, Wh = _glorot(F, 4 * U), _glorot(U, 4 * U)
    b, Wo, bo = np.zeros(4 * U, np.float32), _glorot(U, 10), np.zeros(10, np.float32)
    xt = x.transpose(1, 0, 2).reshape(T * N, F)
    u = U

    def step() -> None:
        xw = (xt @ Wx + b).reshape(T, N, 4 * u)
        h, c = np.zeros((N, u), np.float32), np.zeros((N, u), np.float32)
        cache = []
        for t in range(T):
            z = xw[t] + h @ Wh
            i, fg, o = _sig(z[:, :u]), _sig(z[:, u:2 * u]), _sig(z[:, 3 * u:])
            g = np.tanh(z[:, 2 * u:3 * u])
            c_prev, h_prev = c, h
            c = fg * c + i * g
            tc = np.tanh(c)
            h = o * tc
            cache.append((i, fg, o, g, c_prev, h_prev, tc))
        dlog = _ce_grad(h @ Wo + bo, y)
        dWo, dbo = h.T @ dlog, dlog.sum(0)
        dh, dc = dlog @ Wo.T, np.zeros((N, u), np.float32)
        dWh = np.zeros_like(Wh)
        dz_all = np.empty((T, N, 4 * u), np.float32)
        for t in reversed(range(T)):
            i, fg, o, g, c_prev, h_prev, tc = cache[t]
            dc = dc + dh * o * (1 - tc * tc)
            dz = dz_all[t]
            dz[:, :u] = dc * g * i * (1 - i)
            dz[:, u:2 * u] = dc * c_prev * fg * (1 - fg)
            dz[:, 2 * u:3 * u] = dc * i * (1 - g * g)
            dz[:, 3 * u:] = dh * tc * o * (1 - o)
            dWh += h_prev.T @ dz
            dh = dz @ Wh.T
            dc = dc * fg
        dz2 = dz_all.reshape(T * N, 4 * u)
        dWx = xt.T @ dz2
        for w, d in ((Wx, dWx), (Wh, dWh), (b, dz2.sum(0)), (Wo, dWo), (bo, dbo)):
            w -= 0.01 * d

    return step


def numpy_gru(x: np.ndarray, y: np.ndarray) -> object:
    """GRU with reset_after=True (Keras 2+ and PyTorch), input and recurrent biases."""
    Wx, Wh = _glorot(F, 3 * U), _glorot(U, 3 * U)
    b, rb = np.zeros(3 * U, np.float32), np.zeros(3 * U, np.float32)
    Wo, bo = _glorot(U, 10), np.zeros(10, np.float32)
    xt = x.transpose(1, 0, 2).reshape(T * N, F)
    u = U

    def step() -> None:
        xw = (xt @ Wx + b).reshape(T, N, 3 * u)
        h = np.zeros((N, u), np.float32)
        cache = []
        for t in range(T):
            hu = h @ Wh + rb
            zr = _sig(xw[t, :, :2 * u] + hu[:, :2 * u])
            z, r = zr[:, :u], zr[:, u:]
            hh = hu[:, 2 * u:]
            cand = np.tanh(xw[t, :, 2 * u:] + r * hh)
            cache.append((z, r, cand, hh, h))
            h = z * h + (1 - z) * cand
        dlog = _ce_grad(h @ Wo + bo, y)
        dWo, dbo = h.T @ dlog, dlog.sum(0)
        dh = dlog @ Wo.T
        dWh = np.zeros_like(Wh)
        dxw = np.empty((T, N, 3 * u), np.float32)
        dhu_all = np.empty((T, N, 3 * u), np.float32)
        for t in reversed(range(T)):
            z, r, cand, hh, h_prev = cache[t]
            da = dh * (1 - z) * (1 - cand * cand)
            dhu = dhu_all[t]
            dhu[:, :u] = dh * (h_prev - cand) * z * (1 - z)
            dhu[:, u:2 * u] = da * hh * r * (1 - r)
            dhu[:, 2 * u:] = da * r
            dxw[t, :, :2 * u] = dhu[:, :2 * u]
            dxw[t, :, 2 * u:] = da
            dWh += h_prev.T @ dhu
            dh = dh * z + dhu @ Wh.T
        dx2 = dxw.reshape(T * N, 3 * u)
        dWx = xt.T @ dx2
        drb = dhu_all.reshape(T * N, 3 * u).sum(0)
        for w, d in ((Wx, dWx), (Wh, dWh), (b, dx2.sum(0)), (rb, drb), (Wo, dWo), (bo, dbo)):
            w -= 0.01 * d

    return step


# --- ember and PyTorch ----------------------------------------------------------------------
def ember_step(kind: str, x: np.ndarray, y: np.ndarray) -> object:
    L = nn.layers
    rnn = L.LSTM(U) if kind == "LSTM" else L.GRU(U)
    model = nn.Sequential([rnn, L.Dense(10)])
    opt = nn.optimizers.SGD(0.01)
    xe, ye = em.constant(x), em.constant(y)

    def step() -> None:
        with tape.GradientTape() as t:
            loss = nn.losses.sparse_softmax_cross_entropy(ye, model(xe, training=True))
        vs = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, vs), vs))

    return step


def torch_step(torch: object, kind: str, x: np.ndarray, y: np.ndarray) -> object:
    T_: object = torch

    class Net(T_.nn.Module):  # type: ignore[attr-defined,name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            cls = T_.nn.LSTM if kind == "LSTM" else T_.nn.GRU  # type: ignore[attr-defined]
            self.rnn = cls(F, U, batch_first=True)
            self.out = T_.nn.Linear(U, 10)  # type: ignore[attr-defined]

        def forward(self, t: object) -> object:
            return self.out(self.rnn(t)[0][:, -1])

    model = Net()
    opt = T_.optim.SGD(model.parameters(), lr=0.01)  # type: ignore[attr-defined]
    xt = T_.tensor(x)  # type: ignore[attr-defined]
    yt = T_.tensor(y, dtype=T_.long)  # type: ignore[attr-defined]

    def step() -> None:
        opt.zero_grad()
        T_.nn.functional.cross_entropy(model(xt), yt).backward()  # type: ignore[attr-defined]
        opt.step()

    return step


def contenders(torch: object, kind: str) -> dict[str, object]:
    x = rng.random((N, T, F), dtype=np.float32)
    y = rng.integers(0, 10, N)
    c = {"numpy by hand": (numpy_lstm if kind == "LSTM" else numpy_gru)(x, y),
         "ember": ember_step(kind, x, y)}
    if torch is not None:
        c["PyTorch eager"] = torch_step(torch, kind, x, y)
    return c


def compare_cpu(contenders: dict[str, object], number: int, rounds: int) -> dict[str, float]:
    """As ``_harness.compare`` but in process CPU seconds: on a shared machine a step that
    waits for a core is not charged for the wait (meaningful with one thread)."""
    best = {k: float("inf") for k in contenders}
    for _ in range(rounds):
        for k, fn in contenders.items():
            t0 = time.process_time()
            for _ in range(number):
                fn()  # type: ignore[operator]
            best[k] = min(best[k], (time.process_time() - t0) / number)
    return best


# --- peak memory of one step -----------------------------------------------------------------
def _rss_kib(field: str) -> int:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def peak_step_mib(step: object) -> float:
    """Resident memory a step adds at its peak (Linux: VmHWM reset through clear_refs)."""
    step()  # one-time allocations (lazy builds, caches) happen outside the measurement
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    try:
        pathlib.Path("/proc/self/clear_refs").write_text("5")  # reset the high-water mark
    except OSError:  # not Linux, or not allowed: no measurement rather than a wrong one
        return float("nan")
    before = _rss_kib("VmRSS")
    step()
    return (_rss_kib("VmHWM") - before) / 1024


# --- report ----------------------------------------------------------------------------------
def run(threads_list: list[int], rounds: int) -> str:
    from threadpoolctl import threadpool_limits

    torch = try_import("torch")
    lines = ["# Recurrent layers: fused cells, training steps", "",
             f"LSTM/GRU({U}) over {T} steps x {F} features, batch {N}, Dense(10), softmax "
             "cross-entropy, SGD. Same process, contenders alternating, best of "
             f"{rounds} rounds. Ratio = steps/s relative to the named reference (higher is "
             "better).", ""]
    ratios: dict[str, dict[str, float]] = {}
    for kind in ("LSTM", "GRU"):
        c = contenders(torch, kind)
        for th in threads_list:
            with threadpool_limits(th):
                if torch is not None:
                    torch.set_num_threads(th)  # type: ignore[attr-defined]
                times = compare(c, number=3, rounds=rounds)  # type: ignore[arg-type]
                cpu = compare_cpu(c, number=3, rounds=rounds) if th == 1 else None
            ref = times["numpy by hand"]
            pt = times.get("PyTorch eager")
            lines += [f"### {kind}, {th} BLAS/torch thread{'s' if th > 1 else ''}", "",
                      "| contender | steps/s | ratio to numpy by hand | ratio to PyTorch |"
                      + (" ratio to PyTorch, CPU time |" if cpu else ""),
                      "|---|---:|---:|---:|" + ("---:|" if cpu else "")]
            for k, v in times.items():
                vs_pt = f"{pt / v:.2f}x" if pt else "-"
                row = f"| {k} | {1 / v:.1f} | {ref / v:.2f}x | {vs_pt} |"
                if cpu:
                    pc = cpu.get("PyTorch eager")
                    row += f" {pc / cpu[k]:.2f}x |" if pc else " - |"
                lines.append(row)
            lines.append("")
            ratios[f"{kind}, {th} thread{'s' if th > 1 else ''}"] = {
                k: (pt / v if pt else float("nan")) for k, v in times.items()}
    lines += ["### The ceiling: numpy's matrix products against PyTorch's, 1 thread", "",
              "The step is mostly these products (the recurrent one 28 times forward and "
              "twice that backward). numpy multiplies through its BLAS (OpenBLAS in the "
              "wheels), PyTorch through MKL: their ratio bounds the ratio to PyTorch a "
              "numpy-backed step can reach.", ""]
    with threadpool_limits(1):
        if torch is not None:
            torch.set_num_threads(1)  # type: ignore[attr-defined]
        lines += gemm_ceiling(torch, {"recurrent, one step": (N, U, 4 * U),
                                      "input projection, all steps": (N * T, F, 4 * U),
                                      "recurrent kernel's gradient": (U, N * T, 4 * U)},
                              rounds=rounds)
    lines += ["### Peak memory of one training step", "",
              "Resident memory the step adds at its peak (VmHWM after a reset, minus VmRSS "
              "before), after one warm-up step.", "",
              "| model | contender | peak MiB | ratio to PyTorch |", "|---|---|---:|---:|"]
    for kind in ("LSTM", "GRU"):
        c = contenders(torch, kind)
        mem = {k: peak_step_mib(s) for k, s in c.items()}  # type: ignore[arg-type]
        pt_mem = mem.get("PyTorch eager")
        for k, v in mem.items():
            r = f"{v / pt_mem:.2f}x" if pt_mem else "-"
            lines.append(f"| {kind} | {k} | {v:.1f} | {r} |")
    lines.append("")
    _chart(ratios)
    return "\n".join(lines)


def _chart(ratios: dict[str, dict[str, float]]) -> None:
    try:
        import matplotlib
    except ImportError:
        print("matplotlib not installed: no chart")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(ratios)
    names = list(next(iter(ratios.values())))
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    width = 0.8 / len(names)
    colors = {"ember": "tab:orange", "PyTorch eager": "tab:gray", "numpy by hand": "tab:blue"}
    for j, name in enumerate(names):
        vals = [ratios[g][name] for g in groups]
        xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, vals, width, label=name, color=colors.get(name))
        for xx, v in zip(xs, vals):
            ax.annotate(f"{v:.2f}", (xx, v), xytext=(0, 2), textcoords="offset points",
                        ha="center", fontsize=7)
    ax.axhline(1.0, color="black", lw=0.6)
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.set_ylabel("steps/s relative to PyTorch eager")
    ax.set_title("Recurrent training step (128 units, 28 steps, batch 64)", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    CHART.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(CHART, dpi=110, metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {CHART}")


def main() -> None:
    quick = "--quick" in sys.argv
    text = run([1, 2], rounds=3 if quick else 7)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "recurrent.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()

"""Graph mode (ember.graph): a traced training step against eager ember, numpy by hand and
PyTorch eager; the tiny-op case; the cost of the first (tracing) call; peak memory.

Same process, contenders alternating, best of several rounds; ratios only.
"""

from __future__ import annotations

import time
import tracemalloc

import bench_nn
import numpy as np
from _harness import compare, table, try_import, write

import ember.core as em
from ember import graph, nn, tape

L = nn.layers
rng = np.random.default_rng(0)


def training_step(model, opt):
    """An eager training step ``step(x, y)``: tape, sparse softmax cross entropy, ``opt``."""
    def step(x, y):
        with tape.GradientTape() as t:
            loss = nn.losses.sparse_softmax_cross_entropy(y, model(x, training=True))
        vs = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, vs), vs))
        return loss
    return step


def forward_traced_step(model, opt):
    """``training_step`` with only the model's forward pass traced: the tape records each
    replayed call as one op whose gradient is the traced backward."""
    forward = graph.function(lambda x: model(x, training=True))

    def step(x, y):
        with tape.GradientTape() as t:
            loss = nn.losses.sparse_softmax_cross_entropy(y, forward(x))
        vs = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, vs), vs))
        return loss
    return step


def _ember_pair(make_model, x, y):
    """Eager, traced and forward-traced steps of identical models."""
    out = {}
    for name in ("ember eager", "ember traced", "ember traced forward, eager tape"):
        em.random.set_seed(0)
        model = make_model()
        make = forward_traced_step if name.endswith("eager tape") else training_step
        step = make(model, nn.optimizers.SGD(0.01))
        if name == "ember traced":
            step = graph.function(step)
        xt, yt = em.constant(x), em.constant(y)
        for _ in range(3):  # builds, traces
            step(xt, yt)
        out[name] = (lambda step=step, xt=xt, yt=yt: step(xt, yt))
    return out


def _training(title, builder, make_model, x, y, torch):
    base, number = builder(torch)
    c = {"numpy by hand": base["numpy by hand"], **_ember_pair(make_model, x, y)}
    if "PyTorch eager" in base:
        c["PyTorch eager"] = base["PyTorch eager"]
    times = compare(c, number=number, rounds=5)
    steps = {k: 1 / v for k, v in times.items()}
    ref = steps["numpy by hand"]
    lines = [f"### {title}", "", "| contender | steps/s relative to numpy by hand | steps/s |",
             "|---|---:|---:|"]
    lines += [f"| {k} | {v / ref:.2f}x | {v:.1f} |" for k, v in steps.items()]
    if "PyTorch eager" in steps:
        lines += ["", f"ember traced / PyTorch eager: "
                      f"{steps['ember traced'] / steps['PyTorch eager']:.2f}x; "
                      f"ember traced / ember eager: "
                      f"{steps['ember traced'] / steps['ember eager']:.2f}x; "
                      f"traced forward under an eager tape / ember eager: "
                      f"{steps['ember traced forward, eager tape'] / steps['ember eager']:.2f}x"]
    return "\n".join(lines) + "\n"


def _mlp() -> nn.Model:
    return nn.Sequential([L.Dense(256, activation="relu", input_shape=(784,)),
                          L.Dense(256, activation="relu"), L.Dense(10)])


def _lstm() -> nn.Model:
    return nn.Sequential([L.LSTM(128, input_shape=(28, 28)), L.Dense(10)])


def _tiny() -> str:
    x = em.constant(rng.random(16, dtype=np.float32))

    def fwd_bwd(x):
        with tape.GradientTape() as t:
            t.watch(x)
            y = em.reduce_sum(x * x + x)
        return t.gradient(y, x)

    traced = graph.function(fwd_bwd)
    traced(x)
    times = compare({"ember eager": lambda: fwd_bwd(x), "ember traced": lambda: traced(x)},
                    number=2000)
    return table("tiny forward+backward: reduce_sum(x * x + x), 16 elements", times,
                 "ember eager", note=f"traced is {times['ember eager'] / times['ember traced']:.2f}x "
                 "as fast as eager (target: 3x)")


def _first_call() -> str:
    """The tracing call against one eager call of the same MLP step (best of 5 each)."""
    xt = em.constant(rng.random((128, 784), dtype=np.float32))
    yt = em.constant(rng.integers(0, 10, 128))
    eager_t, trace_t = [], []
    for _ in range(5):
        step = training_step(_mlp(), nn.optimizers.SGD(0.01))
        step(xt, yt)  # builds the model
        t0 = time.perf_counter()
        step(xt, yt)
        eager_t.append(time.perf_counter() - t0)
        traced = graph.function(step)
        t0 = time.perf_counter()
        traced(xt, yt)  # variables exist: this call traces
        trace_t.append(time.perf_counter() - t0)
        assert traced.experimental_get_tracing_count() == 1
    e, t = min(eager_t), min(trace_t)
    return ("### First call (tracing) against one eager call, MLP step\n\n"
            f"tracing call / eager call: {t / e:.2f}x (target: at most 3x)\n")


def _peak(fn) -> int:
    fn()
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def _memory() -> str:
    x, y = rng.random((128, 784), dtype=np.float32), rng.integers(0, 10, 128)
    pair = _ember_pair(_mlp, x, y)
    e, t = _peak(pair["ember eager"]), _peak(pair["ember traced"])
    return ("### Peak memory of one MLP training step (tracemalloc: numpy buffers)\n\n"
            f"| contender | peak (MiB) |\n|---|---:|\n| ember eager | {e / 2**20:.2f} |\n"
            f"| ember traced | {t / 2**20:.2f} |\n\ntraced / eager: {t / e:.2f}x "
            "(target: no higher)\n")


def main() -> None:
    torch = try_import("torch")
    if torch is not None:
        torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(1)
    except ImportError:
        limit = None
    parts = ["# ember-graph: traced steps\n",
             "Same process, contenders alternating, best of 5 rounds; 1 BLAS/torch thread. "
             "Ratios are steps/s relative to numpy by hand (higher is better).\n"]
    x = rng.random((128, 784), dtype=np.float32)
    y = rng.integers(0, 10, 128)
    parts.append(_training("MLP 784-256-256-10, batch 128, SGD", bench_nn.mlp, _mlp, x, y,
                           torch))
    xl = rng.random((64, 28, 28), dtype=np.float32)
    yl = rng.integers(0, 10, 64)
    parts.append(_training("LSTM 128 units, 28 steps x 28 features, batch 64, SGD",
                           bench_nn.lstm, _lstm, xl, yl, torch))
    parts += [_tiny(), _first_call(), _memory()]
    if limit is not None:
        limit.restore_original_limits()
    write("graph", "\n".join(parts))


if __name__ == "__main__":
    main()

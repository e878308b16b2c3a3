"""Eager overhead, the figures issue 30 guards: a tape step, em.add on 2x2, an MLP step.

For ``bench/compare.py`` (``python bench/compare.py REF eager_overhead``): ``figures()``
returns seconds per call for ember and its contenders (numpy by hand, PyTorch when
installed), each the best of several rounds alternating in this process. The contenders
do not change between trees, so their ratios in compare.py's table show how much the
machine moved.

Only public API that ember already had at 41829c3 (the issue's baseline) is used, so the
same module runs against old refs. ``python bench/eager_overhead.py`` prints the figures.
What was measured, as in-process ratios (wall-clock figures on a shared machine move too
much), with the instruction counts behind them: ``bench/results/eager_overhead.md``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from _harness import compare, try_import

import ember.core as em
from ember import nn, tape


def _threads() -> int:
    return int(os.environ.get("OMP_NUM_THREADS") or 1)


def tape_step(torch: object | None) -> dict[str, float]:
    """Forward + backward of ``reduce_sum(x * x + x)`` on a (2, 2) float32 tensor."""
    a = np.ones((2, 2), np.float32)
    x = em.constant(a)

    def numpy_by_hand() -> object:
        return (a * a + a).sum(), np.ones_like(a) * (2 * a + 1)

    def ember_tape() -> object:
        with tape.GradientTape() as t:
            t.watch(x)
            s = em.reduce_sum(x * x + x)
        return t.gradient(s, x)

    c = {"numpy by hand": numpy_by_hand, "ember": ember_tape}
    if torch is not None:
        def torch_autograd() -> object:
            tx = torch.ones((2, 2), requires_grad=True)  # type: ignore[attr-defined]
            (tx * tx + tx).sum().backward()
            return tx.grad

        c["PyTorch autograd"] = torch_autograd
    return {f"tape step: {k}": v for k, v in compare(c, number=2000).items()}


def add_2x2(torch: object | None) -> dict[str, float]:
    """``em.add`` of two (2, 2) float32 tensors, no tape, against ``np.add``."""
    a = np.ones((2, 2), np.float32)
    t = em.constant(a)
    c = {"numpy": lambda: np.add(a, a), "ember": lambda: em.add(t, t)}
    if torch is not None:
        ta = torch.ones((2, 2))  # type: ignore[attr-defined]
        c["PyTorch"] = lambda: torch.add(ta, ta)  # type: ignore[attr-defined]
    return {f"add 2x2: {k}": v for k, v in compare(c, number=20000).items()}


def mlp_step(torch: object | None = None, batch: int = 128) -> dict[str, float]:
    """One eager SGD step of the MLP 784-256-256-10 (batch 128 as bench_nn.py's), against
    the same step in numpy by hand and in PyTorch (when installed). At batch 8 the
    frameworks' own overhead is most of a step."""
    rng = np.random.default_rng(0)
    x = rng.random((batch, 784), dtype=np.float32)
    y = rng.integers(0, 10, batch)
    shapes = ((784, 256), (256, 256), (256, 10))
    W = [(rng.standard_normal(s) * np.sqrt(2.0 / sum(s))).astype(np.float32) for s in shapes]
    B = [np.zeros(s[1], np.float32) for s in shapes]

    def numpy_by_hand() -> None:
        h1 = np.maximum(x @ W[0] + B[0], 0)
        h2 = np.maximum(h1 @ W[1] + B[1], 0)
        z = h2 @ W[2] + B[2]
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        p[np.arange(len(y)), y] -= 1
        d3 = p / len(y)
        d2 = (d3 @ W[2].T) * (h2 > 0)
        d1 = (d2 @ W[1].T) * (h1 > 0)
        for w, b, act, d in ((W[2], B[2], h2, d3), (W[1], B[1], h1, d2), (W[0], B[0], x, d1)):
            w -= 0.01 * (act.T @ d)
            b -= 0.01 * d.sum(0)

    L = nn.layers
    model = nn.Sequential([L.Dense(256, activation="relu", input_shape=(784,)),
                           L.Dense(256, activation="relu"), L.Dense(10)])
    opt = nn.optimizers.SGD(0.01)
    xt, yt = em.constant(x), em.constant(y)

    def ember_step() -> None:
        with tape.GradientTape() as t:
            loss = nn.losses.sparse_softmax_cross_entropy(yt, model(xt, training=True))
        vs = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, vs), vs))

    c = {"numpy by hand": numpy_by_hand, "ember": ember_step}
    if torch is not None:
        c["PyTorch"] = _torch_mlp_step(torch, x, y, W, B)
    label = "MLP 784-256-256-10 step" + ("" if batch == 128 else f", batch {batch}")
    return {f"{label}: {k}": v
            for k, v in compare(c, number=20 if batch == 128 else 100, rounds=5).items()}


def _torch_mlp_step(torch: Any, x: np.ndarray, y: np.ndarray, W: list[np.ndarray],
                    B: list[np.ndarray]) -> Any:
    """The same step in PyTorch eager: autograd, ``cross_entropy``, ``optim.SGD``."""
    ws = [torch.tensor(w, requires_grad=True) for w in W]
    bs = [torch.tensor(b, requires_grad=True) for b in B]
    tx, ty = torch.tensor(x), torch.tensor(y)
    opt = torch.optim.SGD(ws + bs, lr=0.01)
    relu, xent = torch.relu, torch.nn.functional.cross_entropy

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        h = relu(tx @ ws[0] + bs[0])
        h = relu(h @ ws[1] + bs[1])
        xent(h @ ws[2] + bs[2], ty).backward()
        opt.step()

    return step


def figures() -> dict[str, float]:
    """Seconds per call of every figure, ember's and its contenders'."""
    torch = try_import("torch")
    if torch is not None:
        torch.set_num_threads(_threads())  # type: ignore[attr-defined]
    return {**tape_step(torch), **add_2x2(torch), **mlp_step(torch),
            **mlp_step(torch, batch=8)}


if __name__ == "__main__":
    for name, seconds in figures().items():
        print(f"{name}: {seconds * 1e6:.2f} us")

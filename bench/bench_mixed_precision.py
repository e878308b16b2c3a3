"""Mixed precision on the CPU: a training step of a small MLP and a small CNN under the
float32, mixed_float16 (with its LossScaleOptimizer, as fit uses it) and mixed_bfloat16
policies, traced as fit traces it, beside PyTorch's CPU autocast (bfloat16) and float32.

numpy has no fast float16 or bfloat16 kernels (ml_dtypes' bfloat16 products are computed
in float32 and cast back; float16 arithmetic is converted element by element), so mixed
precision on ember's CPU backend costs time instead of saving it: it is there to run and
test mixed-precision programs on a machine without a GPU, where float16 is fast. Same
process, contenders alternating, best of 5 rounds, 1 thread.
"""

from __future__ import annotations

import time

import numpy as np
from _harness import try_import, write

import ember.core as em
from ember import graph, nn, tape

ROUNDS, STEPS = 5, 10
POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
rng = np.random.default_rng(0)


def _mlp() -> nn.Model:
    inputs = nn.Input(shape=(784,))
    x = nn.layers.Dense(256, activation="relu")(inputs)
    x = nn.layers.Dense(256, activation="relu")(x)
    x = nn.layers.Dense(10)(x)
    return nn.Model(inputs, nn.layers.Activation("softmax", dtype="float32")(x))


def _cnn() -> nn.Model:
    inputs = nn.Input(shape=(28, 28, 1))
    x = nn.layers.Conv2D(16, 3, activation="relu")(inputs)
    x = nn.layers.MaxPooling2D()(x)
    x = nn.layers.Conv2D(32, 3, activation="relu")(x)
    x = nn.layers.MaxPooling2D()(x)
    x = nn.layers.Flatten()(x)
    x = nn.layers.Dense(10)(x)
    return nn.Model(inputs, nn.layers.Activation("softmax", dtype="float32")(x))


MODELS = {"MLP 784-256-256-10, batch 128": (_mlp, (128, 784)),
          "CNN conv16-pool-conv32-pool-dense, 28x28, batch 64": (_cnn, (64, 28, 28, 1))}


def _ember(make, shape, policy):
    nn.mixed_precision.set_global_policy(policy)
    try:
        model = make()
        opt = nn.optimizers.SGD(0.01)
        if policy == "mixed_float16":  # what compile(auto_scale_loss=True) makes
            opt = nn.mixed_precision.LossScaleOptimizer(opt)
        loss_fn = nn.losses.SparseCategoricalCrossentropy()

        def step(x, y):
            with tape.GradientTape() as t:
                loss = loss_fn(y, model(x, training=True))
                scaled = opt.scale_loss(loss)
            vs = model.trainable_variables
            opt.apply_gradients(zip(t.gradient(scaled, vs), vs))
            return loss
    finally:
        nn.mixed_precision.set_global_policy("float32")
    run = graph.function(step)
    x = em.constant(rng.random(shape, dtype=np.float32))
    y = em.constant(rng.integers(0, 10, shape[0]))
    return lambda: run(x, y)


def _torch(torch, which, shape, autocast):
    F = torch.nn
    if len(shape) == 2:
        net = F.Sequential(F.Linear(784, 256), F.ReLU(), F.Linear(256, 256), F.ReLU(),
                           F.Linear(256, 10))
    else:
        net = F.Sequential(F.Conv2d(1, 16, 3), F.ReLU(), F.MaxPool2d(2), F.Conv2d(16, 32, 3),
                           F.ReLU(), F.MaxPool2d(2), F.Flatten(), F.Linear(32 * 5 * 5, 10))
        shape = (shape[0], 1, 28, 28)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.rand(shape)
    y = torch.randint(0, 10, (shape[0],))

    def step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            logits = net(x)
        loss = F.functional.cross_entropy(logits.float(), y)
        loss.backward()
        opt.step()
    return step


def _best(steps: dict) -> dict[str, float]:
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
    return best


def main() -> None:
    torch = try_import("torch")
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    if torch is not None:
        torch.set_num_threads(1)
    lines = ["# Mixed precision on the CPU: training steps by dtype policy\n",
             "SGD, sparse categorical cross-entropy, the last layer in float32 as the guide "
             "says; ember traced (as fit), mixed_float16 with its LossScaleOptimizer. Best "
             f"of {ROUNDS} rounds of {STEPS} steps, contenders alternating, 1 thread. "
             "Ratio = time per step relative to ember float32 (lower is faster).\n"]
    for title, (make, shape) in MODELS.items():
        steps = {f"ember {p}": _ember(make, shape, p) for p in POLICIES}
        if torch is not None:
            steps["PyTorch float32"] = _torch(torch, title, shape, autocast=False)
            steps["PyTorch autocast bfloat16"] = _torch(torch, title, shape, autocast=True)
        best = _best(steps)
        ref = best["ember float32"]
        lines += [f"### {title}\n", "| contender | ms per step | ratio to ember float32 |",
                  "|---|---:|---:|"]
        lines += [f"| {k} | {s * 1e3:.2f} | {s / ref:.2f}x |" for k, s in best.items()]
        lines.append("")
    write("mixed_precision", "\n".join(lines))


if __name__ == "__main__":
    main()

"""Kernel launches of a training step on the strict GPU double (``counters.launches``), at
the shapes of the H200 report (``bench/bench_nn.py``'s models, SGD, float32): the double's
launch model, calibrated op by op in ``packages/core/tests/test_launch_counter.py``, must
also add up to what the H200 ran for whole steps, eagerly and traced (``graph.function``)."""

import numpy as np
import pytest

import ember.core as em
from ember import graph, nn, tape
from ember.core.testing.conv import INPUT_GRADIENT, conv_algorithms_chosen_by

ONLY_BACKENDS = ["strict-gpu"]  # the counters belong to the strict double (conftest)
L = nn.layers

# Kernels per training step on the H200 (CUPTI through torch.profiler, memsets included;
# 2026-11-27 report, ember at bbc82ec). The traced steps ran op by op there: cupy refuses
# cuBLAS during stream capture, so no step with a matrix product was captured.
H200 = {("mlp", "eager"): 76, ("mlp", "traced"): 67, ("lenet", "eager"): 237,
        ("lenet", "traced"): 226, ("lstm", "eager"): 1202, ("lstm", "traced"): 1194}
# What the double counted when this test was written (2026-11-27), for the record: eager /
# traced MLP 78/69, LeNet 230/219, LSTM 1206/1198 (at 9549a1f, the report's code plus no-op
# seams: eager 74, 226, 1202, four fewer for MLP and LeNet before sparse cross-entropy
# checked its labels into the GPU's error flag; that double still captured cuBLAS calls, so
# its traced MLP and LSTM steps ran as CUDA graphs: 83 and 1210, the input copies included).
# The H200's eager counts calibrated the counter (the double counted 76-78, 226-237 and
# 1202-1206 for them at 9549a1f, within 4%); issue #28's fused kernels replaced those
# eager steps (below), so only the traced steps are still held to the H200's counts: a
# traced step must count within TOLERANCE of what the H200 ran.
TOLERANCE = 0.15

# Issue #28's budgets for an eager step (kernels, SGD or Adam), and what the double counts
# now (2026-11-28): the MLP meets its budget; LeNet's step spends 117 launches in its
# convolutions (im2col's pads and copies, and their products), LSTM's 28 in the split-K
# reductions cuBLAS adds to the recurrent gradient's 512-deep product on an H200. A step
# must not count more than now, and the budgets not met yet are expected to fail.
EAGER_BUDGET = {"mlp": 40, "lenet": 80, "lstm": 170}
EAGER_NOW = {"mlp": 40, "lenet": 164, "lstm": 177}
OPTIMIZERS = {"sgd": lambda: nn.optimizers.SGD(0.01), "adam": lambda: nn.optimizers.Adam()}


def _mlp():
    return nn.Sequential([L.Dense(256, activation="relu", input_shape=(784,)),
                          L.Dense(256, activation="relu"), L.Dense(10)]), (128, 784)


def _lenet():
    return nn.Sequential([
        L.Conv2D(32, 5, padding="same", activation="relu", input_shape=(28, 28, 1)),
        L.MaxPool2D(), L.Conv2D(64, 5, padding="same", activation="relu"), L.MaxPool2D(),
        L.Flatten(), L.Dense(1024, activation="relu"), L.Dense(10)]), (64, 28, 28, 1)


def _lstm():
    return nn.Sequential([L.LSTM(128, input_shape=(28, 28)), L.Dense(10)]), (64, 28, 28)


MODELS = {"mlp": _mlp, "lenet": _lenet, "lstm": _lstm}


def _step(model, opt, x, y):
    with tape.GradientTape() as t:
        loss = nn.losses.sparse_softmax_cross_entropy(y, model(x, training=True))
    variables = model.trainable_variables
    opt.apply_gradients(zip(t.gradient(loss, variables), variables))
    return loss


@pytest.fixture
def as_the_h200_tuned():
    """The convolution algorithms the H200's autotuner chose for LeNet: im2col, except
    Winograd for the second layer's input gradient. (Its kernel names say so: 73 copies,
    35 GEMMs and 10 split-K reductions a step; on the double the autotuner times numpy,
    which would choose differently from run to run.)"""
    def choose(direction, candidates, g):
        second_input_gradient = direction == INPUT_GRADIENT and g.w_shape[2] == 32
        return "winograd" if second_input_gradient and "winograd" in candidates else "im2col"

    with conv_algorithms_chosen_by(choose):
        yield


def _count(backend, name, mode, opt):
    """(launches, syncs, host copies) of one training step, after three that build the
    weights, trace and warm the caches of uploaded numbers."""
    rng = np.random.default_rng(0)
    model, shape = MODELS[name]()
    x = em.constant(rng.random(shape, dtype=np.float32))
    y = em.constant(rng.integers(0, 10, shape[0]))
    assert x.device == "/gpu:0"
    step = graph.function(_step) if mode == "traced" else _step
    for _ in range(3):
        step(model, opt, x, y)
    counters = em.get_device(backend).backend.counters
    counters.reset()
    step(model, opt, x, y)
    return counters.launches, counters.syncs, counters.to_host


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("name", ["mlp", "lenet", "lstm"])
def test_an_eager_training_step_launches_no_more_kernels_than_now(backend, as_the_h200_tuned,
                                                                   name, opt):
    got, syncs, to_host = _count(backend, name, "eager", OPTIMIZERS[opt]())
    assert got <= EAGER_NOW[name], f"{name} {opt}: {got} kernels a step, {EAGER_NOW[name]} before"
    assert syncs == 0 and to_host == 0


@pytest.mark.parametrize("name", [n for n in EAGER_BUDGET if EAGER_NOW[n] > EAGER_BUDGET[n]])
@pytest.mark.xfail(strict=True, reason="issue #28's budget is not met yet (see EAGER_NOW)")
def test_an_eager_training_step_meets_its_budget(backend, as_the_h200_tuned, name):
    got, _, _ = _count(backend, name, "eager", nn.optimizers.SGD(0.01))
    assert got <= EAGER_BUDGET[name], f"{name}: {got} kernels a step"


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_an_eager_mlp_step_meets_its_budget(backend, opt):
    got, _, _ = _count(backend, "mlp", "eager", OPTIMIZERS[opt]())
    assert got <= EAGER_BUDGET["mlp"], f"mlp {opt}: {got} kernels a step"


@pytest.mark.parametrize("mode", ["traced"])
@pytest.mark.parametrize("name", ["mlp", "lenet", "lstm"])
def test_a_training_step_counts_the_kernels_the_h200_ran(backend, as_the_h200_tuned, name,
                                                         mode):
    opt = nn.optimizers.SGD(0.01)
    got, syncs, to_host = _count(backend, name, mode, opt)
    want = H200[name, mode]
    assert abs(got - want) <= TOLERANCE * want, (
        f"{name} {mode}: the double counts {got} kernels a step, the H200 ran {want}")
    assert syncs == 0 and to_host == 0  # and it reads nothing back

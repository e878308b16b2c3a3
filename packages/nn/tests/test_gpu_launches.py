"""Kernel launches of a training step on the strict GPU double (``counters.launches``), at
the shapes of the H200 report (``bench/bench_nn.py``'s models, float32): the double's
launch model, calibrated op by op in ``packages/core/tests/test_launch_counter.py`` and on
whole steps against the H200 (below), holds eager and traced (``graph.function``) steps to
issue #28's budgets, SGD and Adam: a step counts no more kernels than now, the budgets not
met yet are expected to fail, and a captured step is one host launch."""

import numpy as np
import pytest
from bench_models import MODELS
from bench_models import train_step as _step

import ember.core as em
from ember import graph, nn
from ember.core.testing.conv import INPUT_GRADIENT, conv_algorithms_chosen_by

ONLY_BACKENDS = ["strict-gpu"]  # the counters belong to the strict double (conftest)
L = nn.layers

# Kernels per training step on the H200 (CUPTI through torch.profiler, memsets included;
# 2026-11-27 report, ember at bbc82ec), kept as the calibration's record: eager / traced MLP
# 76/67, LeNet 237/226, LSTM 1202/1194 (SGD). The traced steps ran op by op there (cupy
# refused cuBLAS during stream capture). The double counted 76-78, 226-237 and 1202-1206
# for the eager steps at 9549a1f (within 4%); issue #28's fused kernels and captured
# steps have since replaced both, so the steps are held to the budgets instead.

# Issue #28's budgets for an eager step (kernels, SGD or Adam), and what the double counts
# now (2026-11-28): every step meets its budget. LeNet's convolutions took 117 of its 164
# launches, im2col's pads, copies and products chunk by chunk, until each of their
# products became one gather kernel and its GEMM (18 of 65, conv_gather); LSTM's 177 held
# 28 split-K reductions cuBLAS(Lt) adds to the recurrent gradient's 512-deep product at
# each step on an H200, until that product was planned with no split-K (nvmath's
# reduction_scheme_mask=NONE), and 3 copies and a sum that one gather kernel replaced
# (146 at 9ac27cf), then one launch fewer each when the label range check updated the
# error flag in place (dc43cca). A step must not count more than now.
EAGER_BUDGET = {"mlp": 40, "lenet": 80, "lstm": 170}
EAGER_NOW = {"mlp": 39, "lenet": 64, "lstm": 145}
OPTIMIZERS = {"sgd": lambda: nn.optimizers.SGD(0.01), "adam": lambda: nn.optimizers.Adam()}

# Issue #28's budgets for a traced step: the kernels its CUDA graph holds, counted as the
# launches of its uncaptured replay (``cuda_graphs=False``), and one host launch a step
# once captured. What the double counts now (2026-11-28, at fd839c9; LeNet at ea1a579;
# LSTM at 9ac27cf, which meets its budget), per optimizer. A step must not count more
# than now.
TRACED_BUDGET = {"mlp": 30, "lenet": 60, "lstm": 150}
# MLP at b1e4c89 (the optimizer's update one op, constants folded): 37, of which 9 the
# sparse cross-entropy's (4 its label range check's), 2 the mean's; 36 (LeNet 61) once
# the check updated the error flag in place (min, max and one kernel); LSTM then 141.
# MLP 31, LeNet 57 (its budget met), LSTM 137 with the dense op and unsplit cheap products;
# MLP 29 (every budget met), LeNet 55, LSTM 135 with the reduction kernels (see EAGER_NOW).
# The H200 (2026-11-27, at ca36e73) ran 32 for the MLP where the double counted 29: each
# BGRADA product launches cuBLASLt's bias-gradient kernel after its GEMM
# (globalKernelBgradAB), which the double now counts too (MLP 32, the H200's; LeNet 57, the
# H200's 54; LSTM 136, the H200's). The MLP's budget of 30 is not met since.
TRACED_NOW = {("mlp", "sgd"): 32, ("mlp", "adam"): 32, ("lenet", "sgd"): 57,
              ("lenet", "adam"): 57, ("lstm", "sgd"): 136, ("lstm", "adam"): 136}
# Steps not captured now, and why (a strict xfail: it passes once they are). LeNet's was
# not until Winograd's transforms were kept per device (a capture refuses an upload).
NOT_CAPTURED: dict[str, str] = {}




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


def _counters(backend, name, mode, opt):
    """The counters of one training step and its CUDA graph status, after four that build the weights and the
    optimizer's slots, trace, warm the caches of uploaded numbers and capture. ``mode``:
    "eager", "traced" (replayed op by op: ``cuda_graphs=False``) or "captured"."""
    rng = np.random.default_rng(0)
    model, shape = MODELS[name]()
    x = em.constant(rng.random(shape, dtype=np.float32))
    y = em.constant(rng.integers(0, 10, shape[0]))
    assert x.device == "/gpu:0"
    step = _step if mode == "eager" else graph.function(_step,
                                                        cuda_graphs=mode == "captured")
    for _ in range(4):
        step(model, opt, x, y)
    counters = em.get_device(backend).backend.counters
    counters.reset()
    step(model, opt, x, y)
    return counters, None if mode == "eager" else step.cuda_graph_status()


def _count(backend, name, mode, opt):
    """(launches, syncs, host copies) of one training step (``_counters``)."""
    c, _ = _counters(backend, name, mode, opt)
    return c.launches, c.syncs, c.to_host


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("name", ["mlp", "lenet", "lstm"])
def test_an_eager_training_step_launches_no_more_kernels_than_now(backend, as_the_h200_tuned,
                                                                   name, opt):
    got, syncs, to_host = _count(backend, name, "eager", OPTIMIZERS[opt]())
    assert got <= EAGER_NOW[name], f"{name} {opt}: {got} kernels a step, {EAGER_NOW[name]} before"
    assert syncs == 0 and to_host == 0


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("name", sorted(EAGER_BUDGET))
def test_an_eager_step_meets_its_budget(backend, as_the_h200_tuned, name, opt):
    got, _, _ = _count(backend, name, "eager", OPTIMIZERS[opt]())
    assert got <= EAGER_BUDGET[name], f"{name} {opt}: {got} kernels a step"


def _unmet(budget, now):
    """(name, opt) cases, those whose budget is not met now expected to fail."""
    return [pytest.param(n, o, marks=pytest.mark.xfail(strict=True, reason=(
        f"issue #28's budget of {budget[n]} kernels is not met yet: {now[n, o]} now")))
        if now[n, o] > budget[n] else pytest.param(n, o) for n, o in sorted(now)]


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("name", ["mlp", "lenet", "lstm"])
def test_a_traced_step_launches_no_more_kernels_than_now(backend, as_the_h200_tuned, name,
                                                         opt):
    got, syncs, to_host = _count(backend, name, "traced", OPTIMIZERS[opt]())
    now = TRACED_NOW[name, opt]
    assert got <= now, f"{name} {opt}: {got} kernels a traced step, {now} before"
    assert syncs == 0 and to_host == 0  # and it reads nothing back


@pytest.mark.parametrize(("name", "opt"), _unmet(TRACED_BUDGET, TRACED_NOW))
def test_a_traced_step_meets_its_budget(backend, as_the_h200_tuned, name, opt):
    got, _, _ = _count(backend, name, "traced", OPTIMIZERS[opt]())
    assert got <= TRACED_BUDGET[name], f"{name} {opt}: {got} kernels a traced step"


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(
    strict=True, reason=f"not captured now: {NOT_CAPTURED[n]}")) if n in NOT_CAPTURED else n
    for n in MODELS])
def test_a_captured_step_is_one_host_launch(backend, as_the_h200_tuned, name, opt):
    c, status = _counters(backend, name, "captured", OPTIMIZERS[opt]())
    assert status[0].startswith("call: captured"), status
    assert c.graph_launches == 1
    assert c.syncs == 0 and c.to_host == 0 and c.from_host == 0

"""An optimizer's update on a GPU is one kernel per variable (``optimizers/_fused.py``):
the same numbers as the ops' update on the host, within the device's tolerance, and one
launch per variable plus the step counter's."""

import numpy as np
import pytest

import ember.core as em
from ember import nn
from ember.core.testing import backend_tolerance
from ember.nn.optimizers import _fused

ONLY_BACKENDS = ["strict-gpu"]  # the fused path is the GPU's; the host runs the ops

OPTIMIZERS = {
    "sgd": lambda: nn.optimizers.SGD(0.1),
    "momentum": lambda: nn.optimizers.SGD(0.1, momentum=0.9),
    "nesterov": lambda: nn.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: nn.optimizers.Adam(0.01),
    "adam_tensor_betas": lambda: nn.optimizers.Adam(
        0.01, beta_1=em.Variable(np.float32(0.8)), beta_2=em.Variable(np.float32(0.99))),
    "adamw": lambda: nn.optimizers.AdamW(0.01, weight_decay=0.1),
}
SHAPES = [(3, 4), (4,), ()]


def _steps(make, device):
    rng = np.random.default_rng(0)
    inits = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(3)]
    with em.device(device):
        opt = make()
        vs = [em.Variable(v) for v in inits]
        for gs in grads:
            pairs = [(em.constant(g), v) for g, v in zip(gs, vs)]
            opt.apply_gradients(pairs)
        return [v.numpy() for v in vs], opt


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_fused_update_gives_the_hosts_numbers(backend, name, monkeypatch):
    got, _ = _steps(OPTIMIZERS[name], backend)
    want, _ = _steps(OPTIMIZERS[name], "/cpu:0")
    monkeypatch.setattr(_fused, "update", lambda *a, **k: False)  # the ops, on the GPU
    unfused, _ = _steps(OPTIMIZERS[name], backend)
    rtol, atol = backend_tolerance(np.float32, backend)
    for g, w, u in zip(got, want, unfused):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        np.testing.assert_allclose(g, u, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["sgd", "momentum", "nesterov", "adam"])
def test_a_fused_update_launches_one_kernel_per_variable(backend, name):
    with em.device(backend):
        opt = OPTIMIZERS[name]()
        vs = [em.Variable(np.ones(s, np.float32)) for s in SHAPES]
        gs = [em.constant(np.full(s, 0.5, np.float32)) for s in SHAPES]
        opt.apply_gradients(zip(gs, vs))  # makes the slots
        counters = em.get_device(backend).backend.counters
        counters.reset()
        opt.apply_gradients(zip(gs, vs))
    assert counters.launches == len(vs) + 1  # and the step counter's increment
    assert counters.syncs == 0

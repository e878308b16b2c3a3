"""An optimizer's update on a GPU is one kernel per variable (``optimizers/_fused.py``):
the same numbers as the ops' update on the host, within the device's tolerance, and one
launch per variable plus the step counter's."""

import numpy as np
import pytest

import ember.core as em
from ember import graph, nn
from ember.core import extend
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


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_traced_update_is_the_eager_one_bit_for_bit(backend, name):
    rng = np.random.default_rng(0)
    inits = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(4)]
    results = []
    for traced in (False, True):
        with em.device(backend):
            opt = OPTIMIZERS[name]()
            vs = [em.Variable(v) for v in inits]

            def apply(gs, opt=opt, vs=vs):
                opt.apply_gradients(zip(gs, vs))

            step = graph.function(apply, cuda_graphs=False) if traced else apply
            for gs in grads:
                step([em.constant(g) for g in gs])
            results.append([v.numpy() for v in vs])
    for eager, traced in zip(*results):
        np.testing.assert_array_equal(traced, eager)


@pytest.mark.parametrize("name", ["sgd", "momentum", "nesterov", "adam"])
def test_a_traced_update_replays_one_kernel_per_variable(backend, name):
    with em.device(backend):
        opt = OPTIMIZERS[name]()
        vs = [em.Variable(np.ones(s, np.float32)) for s in SHAPES]
        gs = [em.constant(np.full(s, 0.5, np.float32)) for s in SHAPES]
        step = graph.function(lambda: opt.apply_gradients(zip(gs, vs)), cuda_graphs=False)
        for _ in range(3):  # slots, trace, replay
            step()
        counters = em.get_device(backend).backend.counters
        counters.reset()
        step()
    assert counters.launches == len(vs) + 1  # and the step counter's increment
    assert counters.syncs == 0
    assert float(opt.iterations) == 4


@pytest.mark.parametrize("kind", sorted(_fused._SPECS))
def test_the_update_ops_host_forward_is_its_kernel(backend, kind):
    """The op's numpy forward (for a caller on the CPU) computes what its kernel does."""
    spec = _fused._SPECS[kind]
    rng = np.random.default_rng(1)
    n_hypers = len(spec.ins.split(",")) - 2 - spec.slots - ("it" in spec.ins)
    numbers = tuple(float(h) for h in rng.uniform(0.05, 0.95, n_hypers))
    arrays = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2 + spec.slots)]
    arrays[2:] = [np.abs(a) for a in arrays[2:]]  # (Adam's v is not negative)
    extra = [np.int64(2)] if "it" in spec.ins else []
    got = []
    for device in ("/cpu:0", backend):
        with em.device(device):
            out = extend.run_op("nn_fused_update", [em.constant(a) for a in arrays + extra],
                                {"kind": kind, "numbers": numbers})
        got.append([t.numpy() for t in (out if isinstance(out, tuple) else (out,))])
    rtol, atol = backend_tolerance(np.float32, backend)
    assert len(got[0]) == 1 + spec.slots
    for host, device in zip(*got):
        np.testing.assert_allclose(host, device, rtol=rtol, atol=atol)

"""A whole training step in one CUDA graph (issue #28), on the strict GPU double with its
fake nvmath-python: the bench models' traced SGD step (forward, backward, update) is
captured once and then costs one host launch a step, and it trains bit for bit like the
same step replayed op by op (``cuda_graphs=False``), its products through the same library
(nvmath's cuBLASLt, eagerly too)."""

import numpy as np
import pytest
from bench_models import MODELS
from bench_models import train_step as _step
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, nn, tape
from ember.core.testing import without_nvmath

ONLY_BACKENDS = ["strict-gpu"]  # CUDA graphs and the counters belong to the GPU double
L = nn.layers




def _data(shape, steps, seed=0):
    rng = np.random.default_rng(seed)
    return [(em.constant(rng.random(shape, dtype=np.float32)),
             em.constant(rng.integers(0, 10, shape[0]))) for _ in range(steps)]


@pytest.mark.parametrize("name", ["mlp", "lenet", "lstm"])
def test_a_traced_step_is_one_captured_graph_and_one_host_launch(backend, name):
    model, shape = MODELS[name]()
    opt = nn.optimizers.SGD(0.01)
    step = graph.function(_step)
    data = _data(shape, 4)
    for x, y in data[:3]:  # traces, replays op by op (warming the caches), captures
        step(model, opt, x, y)
    assert step.cuda_graph_status() == ["call: captured (launched 1 times)"]
    counters = em.get_device(backend).backend.counters
    counters.reset()
    step(model, opt, *data[3])
    assert counters.graph_launches == 1  # the whole step: one launch from the host
    assert counters.syncs == 0 and counters.to_host == 0 and counters.from_host == 0
    assert step.cuda_graph_status() == ["call: captured (launched 2 times)"]


@pytest.mark.parametrize("name", ["mlp", "lstm"])
def test_a_captured_step_trains_bit_for_bit_like_its_uncaptured_replay(backend, name):
    em.random.set_seed(5)
    captured_model, shape = MODELS[name]()
    em.random.set_seed(5)
    replayed_model, _ = MODELS[name]()
    captured = graph.function(_step)
    replayed = graph.function(_step, cuda_graphs=False)
    opt_c, opt_r = nn.optimizers.SGD(0.05), nn.optimizers.SGD(0.05)
    for x, y in _data(shape, 5, seed=1):
        loss_c = captured(captured_model, opt_c, x, y)
        loss_r = replayed(replayed_model, opt_r, x, y)
        assert_array_equal(loss_c.numpy(), loss_r.numpy())
    assert captured.cuda_graph_status() == ["call: captured (launched 3 times)"]
    assert replayed.cuda_graph_status() == [
        "call: not captured: graph.function(cuda_graphs=False)"]
    for a, b in zip(captured_model.variables, replayed_model.variables):
        assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(captured_model.variables[0].numpy(),
                              MODELS[name]()[0].variables[0].numpy())  # it trained


def test_without_nvmath_the_step_is_not_captured_and_says_why(backend):
    model, shape = MODELS["mlp"]()
    opt = nn.optimizers.SGD(0.01)
    step = graph.function(_step)
    with without_nvmath(em.get_device(backend)):
        for x, y in _data(shape, 3):
            step(model, opt, x, y)
    (status,) = step.cuda_graph_status()
    assert status.startswith("call: not captured: ") and "calls cuBLAS, which cupy refuses " \
        "during stream capture; nvmath-python is not installed (pip install " \
        "ember-core[cuda12]" in status


def _dropout_model():
    em.random.set_seed(5)  # the same initial weights for every variant
    return nn.Sequential([L.Dense(64, activation="relu", input_shape=(32,)), L.Dropout(0.5),
                          L.Dense(10)])


def _dropout_step(model, opt, x, y):
    """A step that also returns what Dropout let through (its mask, on the GPU)."""
    with tape.GradientTape() as t:
        h = model.layers[0](x)
        dropped = model.layers[1](h, training=True)
        loss = nn.losses.sparse_softmax_cross_entropy(y, model.layers[2](dropped))
    variables = model.trainable_variables
    opt.apply_gradients(zip(t.gradient(loss, variables), variables))
    return loss, em.cast(em.equal(dropped, 0.0), em.int32) * em.cast(
        em.greater(h, 0.0), em.int32)  # 1 where dropout zeroed a nonzero activation


def _dropout_script(step, data):
    """Steps with a reseed and host (CPU) draws between them: each step's loss and
    dropout mask, each host draw, and the trained weights."""
    model = _dropout_model()
    opt = nn.optimizers.Adam(0.01)
    em.random.set_seed(11)
    seen = []
    for i, (x, y) in enumerate(data):
        if i == 5:
            em.random.set_seed(12)  # reseeds the captured step as it reseeds eager code
        if i in (6, 7):
            with em.device("/cpu:0"):  # a host draw sees the counter the graph advanced
                seen.append(em.random.uniform([3]).numpy())
        loss, mask = step(model, opt, x, y)
        seen += [loss.numpy(), mask.numpy()]
    return seen, [v.numpy() for v in model.variables]


@pytest.mark.parametrize("cuda_graphs", [True, False])
def test_a_captured_dropout_step_draws_fresh_masks_bit_for_bit_like_eager(backend,
                                                                          cuda_graphs):
    """Dropout draws on the GPU with the Philox kernel, which reads the generator's state
    on the device and advances it: the captured step draws a new mask each launch, the
    same as the eager step and as its op-by-op replay, through a reseed and host draws."""
    data = _data((16, 32), 9, seed=2)
    eager, eager_weights = _dropout_script(_dropout_step, data)
    traced = graph.function(_dropout_step, cuda_graphs=cuda_graphs)
    got, weights = _dropout_script(traced, data)
    for a, b in zip(got, eager):
        assert_array_equal(a, b)
    for a, b in zip(weights, eager_weights):
        assert_array_equal(a, b)
    masks = [m for m in eager if m.shape == (16, 64)]
    assert len({m.tobytes() for m in masks}) == len(masks) and masks[0].any()
    (status,) = traced.cuda_graph_status()
    if cuda_graphs:  # Adam makes its slots on the first call: traced on the second
        assert status == "call: captured (launched 6 times)"
    else:
        assert status == "call: not captured: graph.function(cuda_graphs=False)"

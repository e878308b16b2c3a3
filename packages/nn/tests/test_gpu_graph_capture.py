"""A whole training step in one CUDA graph (issue #28), on the strict GPU double with its
fake nvmath-python: the bench models' traced SGD step (forward, backward, update) is
captured once and then costs one host launch a step, and it trains bit for bit like the
same step replayed op by op (``cuda_graphs=False``), its products through the same library
(nvmath's cuBLASLt, eagerly too)."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, nn, tape
from ember.core.testing import without_nvmath

ONLY_BACKENDS = ["strict-gpu"]  # CUDA graphs and the counters belong to the GPU double
L = nn.layers


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

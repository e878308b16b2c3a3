"""A restore writes a host variable's own array in place while nothing else holds it
(``__checkpoint_buffer__``) and otherwise gives the variable a new array
(``__checkpoint_assign__``: no copy on the host, one upload on a GPU). Either way, a
training step traced before the restore (``graph.function``; on a GPU a captured CUDA
graph where the step allows one) reads the restored values at its next call, without
tracing again, and trains bit for bit like eager execution restored from the same
checkpoint, and a tensor read before the restore keeps its value. Runs on every test
backend (the strict GPU double included)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import checkpoint, graph, nn, tape

pytestmark = pytest.mark.usefixtures("backend")
rng = np.random.default_rng(0)


def _model(x, kind):
    if kind == "dense":
        layers = [nn.layers.Dense(16, activation="relu"), nn.layers.Dense(4)]
    else:  # no matrix product, so that a GPU captures the whole step as a graph
        layers = [nn.layers.LayerNormalization(), nn.layers.Activation("tanh"),
                  nn.layers.LayerNormalization()]
    model = nn.Sequential(layers)
    model(x)
    return model


def _step(model, opt):
    loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(x, y):
        with tape.GradientTape() as t:
            loss = loss_fn(y, model(x, training=True))
        grads = t.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


@pytest.mark.parametrize("kind", ["elementwise", "dense"])
def test_a_step_traced_before_a_restore_trains_from_the_restored_values(tmp_path, kind):
    data = [(em.constant(rng.standard_normal((8, 5)).astype(np.float32)),
             em.constant(rng.integers(0, 4, 8))) for _ in range(9)]
    model, opt = _model(data[0][0], kind), nn.optimizers.Adam(1e-2)
    traced = graph.function(_step(model, opt))
    for x, y in data[:3]:
        traced(x, y)
    path = checkpoint.Checkpoint(model=model, optimizer=opt).write(tmp_path / "c")
    for x, y in data[3:6]:  # away from the saved values (on a GPU, through the graph)
        traced(x, y)
    moved = [v.numpy().copy() for v in model.variables]
    before = (traced.experimental_get_tracing_count(), traced.cuda_graph_status())
    kept = model.variables[0].value()  # held: this variable gets a new array

    checkpoint.Checkpoint(model=model, optimizer=opt).restore(path).assert_consumed()
    assert_array_equal(kept.numpy(), moved[0])
    assert not np.array_equal(model.variables[0].numpy(), moved[0])
    assert not all(np.array_equal(a, v.numpy()) for a, v in zip(moved, model.variables))
    device = em.constant(0.0).device
    assert all(v.device == device for v in model.variables)
    eager_model, eager_opt = _model(data[0][0], kind), nn.optimizers.Adam(1e-2)
    checkpoint.Checkpoint(model=eager_model, optimizer=eager_opt).restore(path)
    eager = _step(eager_model, eager_opt)  # its Adam slots take their values when made
    for x, y in data[6:]:
        assert_array_equal(traced(x, y).numpy(), eager(x, y).numpy())
    for a, b in zip(model.variables + opt.variables, eager_model.variables + eager_opt.variables):
        assert_array_equal(a.numpy(), b.numpy())
    assert traced.experimental_get_tracing_count() == before[0], "the restore retraced"
    status = traced.cuda_graph_status()
    if device.startswith("/gpu") and kind == "elementwise":
        assert before[1] == ["call: captured (launched 3 times)"]
        assert status == ["call: captured (launched 6 times)"]

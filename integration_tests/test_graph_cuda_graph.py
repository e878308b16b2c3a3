"""CUDA Graphs in training programs, on the strict GPU double: a whole traced training step
(tape, optimizer, layers) and a traced forward under an eager tape (its forward and
backward plans) are captured and launched, and train bit for bit like eager execution.

cupy 14 refuses cuBLAS during stream capture (the H200 run, 2026-11-27); a model whose
layers multiply matrices (Dense) is captured all the same, its products through
nvmath-python's cuBLASLt (ember.core._nvmath_products, faked by the double). Without
nvmath-python it says why and replays op by op, still bit for bit like eager.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, nn, tape
from ember.core.testing import simulated_gpus, without_nvmath

rng = np.random.default_rng(0)


# the first op of the plan that calls cuBLAS: a Dense layer forward (one op), the product
# for d(x) backward
CUBLAS = ("not captured: {} calls cuBLAS, which cupy refuses during stream capture; "
          "nvmath-python is not installed (pip install ember-core[cuda12], or "
          "ember-core[cuda13] on CUDA 13)")


def _nvmath_unless(kind, gpus):
    return without_nvmath(*gpus) if kind.endswith("without-nvmath") else contextlib.nullcontext()


def _model(x, kind="dense"):
    if kind == "dense":
        layers = [nn.layers.Dense(16, activation="relu"), nn.layers.Dense(4)]
    else:  # no matrix product: layer normalization and an element-wise activation
        layers = [nn.layers.LayerNormalization(), nn.layers.Activation("tanh"),
                  nn.layers.LayerNormalization()]  # 5 logits for labels 0..3
    model = nn.Sequential(layers)
    em.random.set_seed(3)
    model(x)  # builds: the same initial weights for each copy
    return model


def _data(steps):
    return [(em.constant(rng.standard_normal((8, 5)).astype(np.float32)),
             em.constant(rng.integers(0, 4, 8))) for _ in range(steps)]


@pytest.mark.parametrize(("kind", "status"), [
    ("elementwise", "call: captured (launched 3 times)"),
    ("dense", "call: captured (launched 3 times)"),
    ("dense-without-nvmath", "call: " + CUBLAS.format("dense"))])
def test_a_traced_training_step_is_one_graph_and_trains_like_eager(kind, status):
    with simulated_gpus(1, strict=True) as gpus, em.device("/gpu:0"), \
            _nvmath_unless(kind, gpus):
        kind = kind.split("-")[0]
        data = _data(6)
        loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)

        def make_step(model, opt):
            def step(x, y):
                with tape.GradientTape() as t:
                    loss = loss_fn(y, model(x, training=True))
                grads = t.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            return step

        traced_model, eager_model = _model(data[0][0], kind), _model(data[0][0], kind)
        traced = graph.function(make_step(traced_model, nn.optimizers.Adam(1e-2)))
        eager = make_step(eager_model, nn.optimizers.Adam(1e-2))
        for x, y in data:
            assert_array_equal(traced(x, y).numpy(), eager(x, y).numpy())
        for a, b in zip(traced_model.variables, eager_model.variables):
            assert_array_equal(a.numpy(), b.numpy())
        # call 1 makes Adam's slots (a trace that cannot be kept), call 2 traces again,
        # call 3 replays op by op, call 4 captures and launches, calls 5 and 6 launch
        assert traced.experimental_get_tracing_count() == 2
        assert traced.cuda_graph_status() == [status]


@pytest.mark.parametrize(("kind", "status"), [
    ("elementwise", ["forward: captured (launched 3 times)",
                     "backward: captured (launched 3 times)"]),
    ("dense", ["forward: captured (launched 3 times)",
               "backward: captured (launched 3 times)"]),
    ("dense-without-nvmath", ["forward: " + CUBLAS.format("dense"),
                              "backward: " + CUBLAS.format("matmul")])])
def test_a_traced_forward_under_an_eager_tape_launches_both_plans(kind, status):
    with simulated_gpus(1, strict=True) as gpus, em.device("/gpu:0"), \
            _nvmath_unless(kind, gpus):
        kind = kind.split("-")[0]
        data = _data(5)
        traced_model, eager_model = _model(data[0][0], kind), _model(data[0][0], kind)
        forward = graph.function(lambda x: traced_model(x, training=True))
        loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)
        opt_t, opt_e = nn.optimizers.SGD(0.1), nn.optimizers.SGD(0.1)
        for x, y in data:
            with tape.GradientTape() as t:
                loss_t = loss_fn(y, forward(x))
            opt_t.apply_gradients(zip(t.gradient(loss_t, traced_model.trainable_variables),
                                      traced_model.trainable_variables))
            with tape.GradientTape() as t:
                loss_e = loss_fn(y, eager_model(x, training=True))
            opt_e.apply_gradients(zip(t.gradient(loss_e, eager_model.trainable_variables),
                                      eager_model.trainable_variables))
            assert_array_equal(loss_t.numpy(), loss_e.numpy())
        for a, b in zip(traced_model.variables, eager_model.variables):
            assert_array_equal(a.numpy(), b.numpy())
        # the first call traces; its forward plan replays from call 2, its backward from
        # the gradient of call 2 (the first call's gradient came from the eager tape)
        # (the backward's first product is the fused bias rule's or a matmul's)
        got = [re.sub(r"^backward: not captured: \w+ calls", "backward: not captured: matmul "
                      "calls", line) for line in forward.cuda_graph_status()]
        assert got == status

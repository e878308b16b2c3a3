"""Depthwise and separable convolutions in a traced training step on the strict GPU double:
the step (forward, both gradients of each tap loop, the update) is captured as one CUDA
graph, and it trains bit for bit like the same step replayed op by op and like eager
steps."""

import numpy as np
from bench_models import train_step as _step
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, nn

ONLY_BACKENDS = ["strict-gpu"]  # CUDA graphs belong to the GPU double
L = nn.layers


def _model():
    em.random.set_seed(3)
    return nn.Sequential([
        L.SeparableConv2D(8, 3, padding="same", depth_multiplier=2, activation="relu",
                          input_shape=(12, 12, 3)),
        L.DepthwiseConv2D(3, strides=2, dilation_rate=1, padding="same"),
        L.GlobalAveragePooling2D(), L.Dense(10)])




def test_a_captured_step_trains_like_its_replay_and_like_eager(backend):
    models = [_model() for _ in range(3)]
    opts = [nn.optimizers.SGD(0.05) for _ in range(3)]
    captured, replayed = graph.function(_step), graph.function(_step, cuda_graphs=False)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = em.constant(rng.random((4, 12, 12, 3), dtype=np.float32))
        y = em.constant(rng.integers(0, 10, 4))
        losses = [f(m, o, x, y) for f, m, o in zip((captured, replayed, _step), models, opts)]
        assert_array_equal(losses[0].numpy(), losses[1].numpy())
        assert_array_equal(losses[0].numpy(), losses[2].numpy())
    assert captured.cuda_graph_status() == ["call: captured (launched 2 times)"]
    for a, b, c in zip(*(m.variables for m in models)):
        assert_array_equal(a.numpy(), b.numpy())
        assert_array_equal(a.numpy(), c.numpy())
    assert not np.array_equal(models[0].variables[0].numpy(), _model().variables[0].numpy())

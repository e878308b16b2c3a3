"""Values a traced function makes from nothing (``em.zeros``, ``em.fill``, ``em.eye``, a
``zeros_like``) are constants of its plan (``_fuse.fold_constants``): a replay reads the
traced arrays, and a captured CUDA Graph reads them at fixed addresses. Every launch must
read them as they were traced, whatever the ops that consume them do with them (views:
a 1x1 convolution's window matrix is its input reshaped).

This once failed on the strict GPU double: a gradient of a 1x1 convolution of ``em.zeros``
was right on the first two calls and NaN from the first launch of the graph. The double
took the views an array method made during the capture (``x.reshape``: the array was not
among the arrays the call read) for buffers the capture allocated, and filled them with
garbage, as CUDA leaves those; the constant behind the view turned NaN. A real GPU leaves
a buffer made before a capture as it is, so ember's plan was right and the double wrong
(``ember.core.testing._strict_cuda``; ``test_strict_cuda`` checks the double itself).
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import graph, tape

RNG = np.random.default_rng(0)

# name -> (the input's shape, the filter's (or weight's) shape, the op on (input, filter))
CONSUMERS = {
    "conv1d_1x1": ((2, 7, 3), (1, 3, 4),
                   lambda x, w: em.nn_ops.conv1d(x, w, 1, "VALID")),
    "conv2d_1x1": ((2, 5, 5, 3), (1, 1, 3, 4),
                   lambda x, w: em.nn_ops.conv2d(x, w, 1, "SAME")),
    "conv2d_3x3": ((2, 5, 5, 3), (3, 3, 3, 4),
                   lambda x, w: em.nn_ops.conv2d(x, w, 1, "SAME")),
    "conv3d_1x1": ((2, 3, 4, 4, 3), (1, 1, 1, 3, 4),
                   lambda x, w: em.nn_ops.conv3d(x, w, 1, "VALID")),
    "depthwise_1x1": ((2, 5, 5, 3), (1, 1, 3, 2),
                      lambda x, w: em.nn_ops.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID")),
    "matmul": ((6, 3), (3, 4), em.matmul),
}

# name -> the input made inside the function, from an argument ``a`` of its shape
CREATIONS = {
    "zeros": lambda a: em.zeros(a.shape),
    "ones": lambda a: em.ones(a.shape),
    "fill": lambda a: em.fill(a.shape, 0.5),
    "zeros_like": em.zeros_like,
    "ones_like": em.ones_like,
    "eye": lambda a: em.eye(a.shape[-2], a.shape[-1], batch_shape=a.shape[:-2]),
    "constant": lambda a: em.constant(np.linspace(-1.0, 1.0, int(np.prod(a.shape)),
                                                  dtype=np.float32).reshape(a.shape)),
    "ones_plus_one": lambda a: em.ones(a.shape) + 1.0,  # an op of constants: folded too
}


@pytest.mark.parametrize("consumer", list(CONSUMERS))
@pytest.mark.parametrize("creation", list(CREATIONS))
def test_a_constant_input_reads_the_same_at_every_launch(backend, creation, consumer):
    x_shape, w_shape, op = CONSUMERS[consumer]
    make = CREATIONS[creation]
    w = em.Variable(RNG.standard_normal(w_shape).astype(np.float32))

    def f(a, dy):
        with tape.GradientTape() as t:
            y = op(make(a), w.value())
            loss = em.reduce_sum(y * dy)
        (dw,) = t.gradient(loss, [w])
        return loss, dw

    fn = graph.function(f)
    a = em.constant(RNG.standard_normal(x_shape).astype(np.float32))
    dy_shape = tuple(op(make(a), w.value()).shape)
    calls = []
    for _ in range(4):  # trace, replay, capture and launch, launch
        dy = em.constant(RNG.standard_normal(dy_shape).astype(np.float32))
        calls.append((dy, fn(a, dy)))
    for dy, got in calls:
        want = f(a, dy)
        for g, e in zip(got, want):
            assert not np.isnan(g.numpy()).any()
            assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-5)
    if backend != "/cpu:0":  # the launches above are the graph's, not an op-by-op replay
        assert fn.cuda_graph_status() == ["call: captured (launched 2 times)"]

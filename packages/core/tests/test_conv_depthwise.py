"""The depthwise convolution's host chunks: with every image its own chunk (the budget at
one element), each op-table case of the three primitives still matches its numpy
reference, and a batch of several chunks gives the results of one chunk (the table's cases
are small enough to run in one)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember.core._ops import conv_depthwise
from ember.core.testing import OP_SPECS, case_id, check_case_forward, iter_cases

SPECS = [s for s in OP_SPECS if s.name in (
    "nn_ops.depthwise_conv2d", "nn_ops.separable_conv2d",
    "depthwise_conv2d_native_backprop_input", "depthwise_conv2d_native_backprop_filter")]
CASES = list(iter_cases(SPECS))


@pytest.mark.parametrize("spec, case, dtype", CASES, ids=[case_id(*c) for c in CASES])
def test_every_case_in_one_image_chunks(spec, case, dtype, device, monkeypatch):
    monkeypatch.setattr(conv_depthwise, "HOST_CHUNK_ELEMENTS", 1)
    check_case_forward(spec, case, dtype, device)


@pytest.mark.parametrize("multiplier", [1, 3])
def test_chunks_add_up_to_the_whole_batch(multiplier, monkeypatch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 9, 8, 4)).astype(np.float32)
    w = rng.standard_normal((3, 2, 4, multiplier)).astype(np.float32)
    geometry = ((2, 1), (1, 2), ((1, 2), (0, 1)))
    dy = rng.standard_normal((5, 5, 7, 4 * multiplier)).astype(np.float32)

    def run():
        return [conv_depthwise.depthwise_conv2d_native(x, w, *geometry).numpy(),
                conv_depthwise.depthwise_conv2d_native_backprop_input(
                    em.constant(dy), em.constant(w), x.shape, *geometry).numpy(),
                conv_depthwise.depthwise_conv2d_native_backprop_filter(
                    em.constant(x), em.constant(dy), w.shape, *geometry).numpy()]

    whole = run()
    for budget in (1, 5 * 7 * 4 * multiplier * 2):  # one image a chunk; two (5 = 2 + 2 + 1)
        monkeypatch.setattr(conv_depthwise, "HOST_CHUNK_ELEMENTS", budget)
        for got, want in zip(run(), whole):
            assert_allclose(got, want, rtol=1e-6, atol=1e-6)

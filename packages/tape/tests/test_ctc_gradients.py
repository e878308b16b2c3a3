"""ctc_loss's gradient beyond the op table: unreachable labellings, frames past a
sequence's end, the missing second order, and gradient descent on it reaching the labels."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import tape


def _grad(labels, x, label_length, logit_length, **kw):
    xt = em.constant(x)
    with tape.GradientTape() as t:
        t.watch(xt)
        loss = em.nn_ops.ctc_loss(labels, xt, label_length, logit_length, **kw)
        total = em.reduce_sum(em.where(em.math.is_finite(loss), loss, em.zeros_like(loss)))
    return loss, t.gradient(total, xt)


def test_an_unreachable_labelling_gets_zero_gradient_and_the_rest_theirs():
    x = np.random.default_rng(0).standard_normal((3, 2, 4))
    loss, g = _grad([[1, 1, 1], [1, 2, 3]], x, [3, 2], [3, 3])
    assert np.isinf(loss.numpy()[0])
    np.testing.assert_array_equal(g.numpy()[:, 0], 0.0)
    _, alone = _grad([[1, 2]], x[:, 1:], [2], [3])
    np.testing.assert_allclose(g.numpy()[:, 1:], alone.numpy(), rtol=1e-12)


def test_frames_past_a_sequence_get_no_gradient():
    x = np.random.default_rng(1).standard_normal((6, 1, 3))
    _, g = _grad([[1, 2]], x, [2], [4])
    np.testing.assert_array_equal(g.numpy()[4:], 0.0)
    assert np.abs(g.numpy()[:4]).min() > 0
    # and each frame's gradient sums to 0 over the classes (softmax minus a distribution)
    np.testing.assert_allclose(g.numpy()[:4].sum(-1), 0.0, atol=1e-12)


def test_second_order_raises_naming_the_op():
    x = em.constant(np.random.default_rng(2).standard_normal((4, 1, 3)))
    with tape.GradientTape() as outer:
        outer.watch(x)
        with tape.GradientTape() as inner:
            inner.watch(x)
            loss = em.nn_ops.ctc_loss([[1, 2]], x, [2], [4])
        g = inner.gradient(loss, x)
        s = em.reduce_sum(em.square(g))
    with pytest.raises(LookupError, match="ctc_loss has no second-order gradient"):
        outer.gradient(s, x)


def test_gradient_descent_on_free_logits_decodes_the_labels():
    # the loss's gradient is right in direction and size: plain descent on free logits
    # drives the probability of the labelling up until greedy decoding reads it back
    rng = np.random.default_rng(3)
    labels = np.array([[3, 1, 1, 2], [2, 4, 0, 0]])
    lengths = np.array([4, 2])
    x = em.Variable(rng.standard_normal((9, 2, 5)) * 0.1)
    first = None
    for _ in range(150):
        with tape.GradientTape() as t:
            loss = em.reduce_sum(em.nn_ops.ctc_loss(labels, x, lengths, [9, 6]))
        first = float(loss) if first is None else first
        x.assign_sub(0.5 * t.gradient(loss, x))
    assert float(loss) < 0.05 * first
    (decoded,), _ = em.nn_ops.ctc_greedy_decoder(x, [9, 6], blank_index=0)
    assert decoded.numpy()[0, :4].tolist() == [3, 1, 1, 2]
    assert decoded.numpy()[1, :3].tolist() == [2, 4, -1]

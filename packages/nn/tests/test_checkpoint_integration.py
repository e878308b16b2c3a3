"""Model + optimizer + global step through ember.checkpoint (skipped when it is absent)."""

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape

checkpoint = pytest.importorskip("ember.checkpoint")


def _model():
    return nn.Sequential([nn.layers.Dense(8, activation="relu"), nn.layers.BatchNormalization(),
                          nn.layers.Dense(3)])


def _train(model, opt, steps=3):
    x = em.constant(np.random.default_rng(0).standard_normal((16, 5)).astype(np.float32))
    y = em.constant(np.arange(16) % 3)
    for _ in range(steps):
        with tape.GradientTape() as t:
            loss = nn.losses.sparse_softmax_cross_entropy(y, model(x, training=True))
        vs = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, vs), vs))
    return x


def test_roundtrip_with_deferred_restoration(tmp_path):
    model, opt = _model(), nn.optimizers.Adam(0.01)
    x = _train(model, opt)
    step = em.Variable(np.int64(3))
    path = checkpoint.Checkpoint(model=model, optimizer=opt, step=step).save(
        str(tmp_path / "ckpt"))
    expected = model(x).numpy()

    model2, opt2, step2 = _model(), nn.optimizers.Adam(0.01), em.Variable(np.int64(0))
    status = checkpoint.Checkpoint(model=model2, optimizer=opt2, step=step2).restore(path)
    assert int(step2) == 3 and int(opt2.iterations) == 3
    np.testing.assert_allclose(model2(x).numpy(), expected, rtol=1e-6)  # built now: restored
    for p, v in model.variables_by_path().items():
        np.testing.assert_array_equal(model2.variables_by_path()[p].numpy(), v.numpy())
    _train(model2, opt2, steps=1)  # slots are created now and take their saved values
    for (_, name, slot) in opt2.__checkpoint_slots__():
        assert np.any(slot.numpy() != 0), name
    status.assert_consumed()

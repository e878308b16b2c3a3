"""Keras 3's CTC names in ember.nn: ``ops.ctc_loss``, ``ops.ctc_decode``, ``losses.CTC``
and ``losses.ctc``, and a model trained with them through ``fit``."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import nn


def _logits(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_ops_ctc_loss_is_the_batch_major_tf_loss_with_blank_mask_index():
    x = _logits(2, 6, 4)
    labels, ll, xl = np.array([[1, 3, 3], [2, 1, 0]]), np.array([3, 2]), np.array([6, 5])
    got = nn.ops.ctc_loss(labels, x, ll, xl).numpy()
    want = em.nn_ops.ctc_loss(labels, np.transpose(x, (1, 0, 2)), ll, xl).numpy()
    np.testing.assert_array_equal(got, want)
    shifted = nn.ops.ctc_loss(labels - 1 + (labels == 0) * 4, x[..., [1, 2, 3, 0]], ll, xl,
                              mask_index=3).numpy()
    np.testing.assert_allclose(shifted, got, rtol=1e-6)


@pytest.mark.parametrize("dtype,want", [(np.float64, em.float64), (np.float16, em.float32)])
def test_ops_ctc_loss_result_dtype_is_keras(dtype, want):
    out = nn.ops.ctc_loss([[1, 2]], _logits(1, 5, 3, dtype=dtype), [2], [5])
    assert out.dtype == want


def test_ctc_decode_greedy_is_keras_shaped():
    x = _logits(3, 6, 4, seed=1)
    decoded, scores = nn.ops.ctc_decode(x, [6, 3, 0])
    assert decoded.shape == (1, 3, 6) and decoded.dtype == em.int32
    assert scores.shape == (3, 1)
    best = x.argmax(-1)
    for b, n in enumerate([6, 3, 0]):
        want, prev = [], None
        for c in best[b, :n]:
            if c != prev and c != 0:
                want.append(int(c))
            prev = c
        row = decoded.numpy()[0, b].tolist()
        assert row == want + [-1] * (6 - len(want))
        np.testing.assert_allclose(scores.numpy()[b, 0], -x[b, :n].max(-1).sum(), rtol=1e-6)


def test_ctc_decode_beam_search_ranks_labellings():
    x = _logits(2, 5, 3, seed=2)
    decoded, scores = nn.ops.ctc_decode(x, [5, 4], strategy="beam_search", top_paths=3)
    assert decoded.shape == (3, 2, 5) and scores.shape == (2, 3)
    s = scores.numpy()
    assert (np.diff(s, axis=1) <= 0).all()  # best first
    rows = {tuple(decoded.numpy()[k, 0]) for k in range(3)}
    assert len(rows) == 3  # three distinct labellings


def test_ctc_decode_rejects_what_it_cannot_honour():
    x = _logits(1, 4, 3)
    with pytest.raises(em.InvalidArgumentError, match="strategy"):
        nn.ops.ctc_decode(x, [4], strategy="prefix")
    with pytest.raises(em.InvalidArgumentError, match="top_paths"):
        nn.ops.ctc_decode(x, [4], top_paths=2)


def test_ctc_loss_class_averages_the_function():
    x = _logits(3, 7, 5)
    y = np.array([[1, 2, 2], [4, 3, 1], [2, 2, 2]])
    per = nn.losses.ctc(y, x).numpy()
    want = em.nn_ops.ctc_loss(y, np.transpose(x, (1, 0, 2)), [3, 3, 3], [7, 7, 7]).numpy()
    np.testing.assert_allclose(per, want, rtol=1e-6)
    np.testing.assert_allclose(float(nn.losses.CTC()(y, x)), per.mean(), rtol=1e-6)
    assert nn.losses.CTC().name == "ctc"
    assert nn.losses.get("ctc") is nn.losses.ctc
    assert isinstance(nn.losses.get("CTC"), nn.losses.CTC)
    with pytest.raises(ValueError, match=r"ctc: y_pred must be \(batch_size, max_length, "):
        nn.losses.ctc(y, x[0])
    # 0 pads a row after its labels: its length is its count of nonzero labels, as Keras
    # 3.15 counts it (keras.losses.ctc([[1, 2, 0]], zeros((1, 5, 4))) is 3.3761 there)
    padded = np.array([[1, 2, 0], [4, 0, 0], [0, 0, 0]])
    lengths = [2, 1, 0]
    want = em.nn_ops.ctc_loss(padded, np.transpose(x, (1, 0, 2)), lengths, [7, 7, 7]).numpy()
    np.testing.assert_allclose(nn.losses.ctc(padded, x).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(float(nn.losses.ctc([[1, 2, 0]], np.zeros((1, 5, 4)))[0]),
                               3.3761, rtol=1e-4)
    np.testing.assert_allclose(want[2], -np.log(_softmax(x[2])[:, 0]).sum(), rtol=1e-5)
    with pytest.raises(em.InvalidArgumentError,
                       match=r"other than the blank|labels must be in \[1, 5\)"):
        nn.losses.ctc(np.array([[1, 0, 2]]), x[:1]).numpy()  # (a GPU's check: at a read)


def test_fit_with_the_ctc_loss_learns_to_spell():
    # each input spells its two-letter word over 6 frames, each frame seeing the word and
    # its own position; a frame-wise Dense model trained with compile(loss="ctc") decodes
    # every word back
    rng = np.random.default_rng(0)
    words = np.array([[1, 2], [2, 1], [3, 3], [1, 3]])
    which = rng.integers(0, 4, 64)
    x = np.zeros((64, 6, 10), np.float32)
    x[np.arange(64), :, which] = 1.0
    x[:, np.arange(6), 4 + np.arange(6)] = 1.0
    x += rng.normal(0, 0.1, x.shape).astype(np.float32)
    y = words[which]
    em.random.set_seed(0)
    model = nn.Sequential([nn.layers.Input((6, 10)), nn.layers.Dense(32, activation="tanh"),
                           nn.layers.Dense(4)])
    model.compile(optimizer=nn.optimizers.Adam(0.05), loss="ctc")
    history = model.fit(x, y, batch_size=16, epochs=30, verbose=0)
    assert history.history["loss"][-1] < 0.2 * history.history["loss"][0]
    decoded, _ = nn.ops.ctc_decode(model.predict(x, verbose=0), np.full(64, 6))
    np.testing.assert_array_equal(decoded.numpy()[0, :, :2], y)
    assert (decoded.numpy()[0, :, 2:] == -1).all()


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)

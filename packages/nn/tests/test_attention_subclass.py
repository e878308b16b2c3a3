"""MultiHeadAttention's Keras 3 internals, which subclasses override (keras-io's locality
self-attention overrides ``_compute_attention`` and reads ``_key_dim``,
``_dot_product_equation``, ``_masked_softmax``, ``_dropout_layer``, ``_combine_equation``):
the override is called, and the default computes what the fused path does."""

from __future__ import annotations

import math

import numpy as np

import ember.core as em
from ember import nn, tape


class LSA(nn.layers.MultiHeadAttention):  # keras-io vit_small_ds, names changed
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tau = nn.Variable(math.sqrt(float(self._key_dim)), trainable=True)

    def _compute_attention(self, query, key, value, attention_mask=None, training=None):
        query = nn.ops.multiply(query, 1.0 / self.tau)
        attention_scores = nn.ops.einsum(self._dot_product_equation, key, query)
        attention_scores = self._masked_softmax(attention_scores, attention_mask)
        attention_scores_dropout = self._dropout_layer(attention_scores, training=training)
        attention_output = nn.ops.einsum(self._combine_equation, attention_scores_dropout,
                                         value)
        return attention_output, attention_scores


def _pair(mask=None):
    x = em.constant(np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32))
    plain = nn.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    lsa = LSA(num_heads=2, key_dim=4)
    plain(x, x)
    lsa(x, x)
    w = plain.get_weights()
    lsa.set_weights(w[:6] + [np.float32(math.sqrt(4.0))] + w[6:])  # tau after q, k, v
    return x, plain, lsa


def test_the_override_is_called_and_equals_the_fused_path_at_tau_sqrt_d():
    x, plain, lsa = _pair()
    diag = 1 - np.eye(5, dtype=bool)  # as the example: no token attends to itself
    for mask in (None, diag):
        a, sa = plain(x, x, attention_mask=mask, return_attention_scores=True)
        b, sb = lsa(x, x, attention_mask=mask, return_attention_scores=True)
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sb.numpy(), sa.numpy(), rtol=1e-5, atol=1e-6)
    _, s = lsa(x, x, attention_mask=diag, return_attention_scores=True)
    assert np.all(s.numpy()[:, :, np.arange(5), np.arange(5)] < 1e-6)


def test_tau_trains_through_the_override():
    x, _, lsa = _pair()
    with tape.GradientTape() as t:
        y = em.reduce_sum(em.square(lsa(x, x)))
    g = t.gradient(y, lsa.tau)
    assert g is not None and abs(float(g)) > 0


def test_keras_s_default_compute_attention_matches_the_fused_path():
    class Same(nn.layers.MultiHeadAttention):  # overrides with Keras's own body
        def _compute_attention(self, *args, **kwargs):
            return super()._compute_attention(*args, **kwargs)

    x = em.constant(np.random.default_rng(1).standard_normal((2, 3, 6)).astype(np.float32))
    plain, same = nn.layers.MultiHeadAttention(3, 2), Same(3, 2)
    plain(x, x, use_causal_mask=True)
    same(x, x, use_causal_mask=True)
    same.set_weights(plain.get_weights())
    np.testing.assert_allclose(same(x, x, use_causal_mask=True).numpy(),
                               plain(x, x, use_causal_mask=True).numpy(), rtol=1e-5, atol=1e-6)


def test_softmax_layer_takes_keras_s_mask_and_axes():
    x = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32)
    mask = np.array([[1, 1, 0, 1]] * 3 * 2, bool).reshape(2, 3, 4)
    got = nn.layers.Softmax()(x, mask=mask).numpy()
    want = np.exp(x - 1e9 * ~mask)
    want /= want.sum(-1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    both = nn.layers.Softmax(axis=(1, 2))(x).numpy()
    e = np.exp(x - x.max((1, 2), keepdims=True))
    np.testing.assert_allclose(both, e / e.sum((1, 2), keepdims=True), rtol=1e-6)
    assert nn.layers.Softmax(axis=(1, 2)).get_config()["axis"] == (1, 2)


def test_softmax_layer_takes_a_timestep_mask_over_each_step():
    x = np.random.default_rng(3).standard_normal((2, 3, 3)).astype(np.float32)
    steps = np.array([[True, False, True], [True, True, False]])
    got = nn.layers.Softmax()(x, mask=steps).numpy()
    e = np.exp(x - x.max(-1, keepdims=True))
    want = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(got[steps], want[steps], rtol=1e-6)  # kept steps: unchanged
    np.testing.assert_array_equal(got[~steps], 0.0)  # masked: zeros, as Keras 3.15

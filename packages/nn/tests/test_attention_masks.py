"""MultiHeadAttention's masks, against a numpy model of Keras 3's masked attention.

Keras merges the masks the inputs carry (query (N, Tq) -> (N, Tq, 1); value and key
(N, Tv) -> (N, 1, Tv)), the causal mask (query ``i`` sees keys ``j <= i``) and
``attention_mask`` with a logical AND, and adds -1e9 (-3e4 in float16) to each masked
score before the softmax, whose masked entries are then 0 (Keras 3.15's Softmax layer).
The same with the inputs' masks from an Embedding, outside any model, in a functional
model, and in a traced call whose masks change.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import graph, nn
from ember.nn.layers import _masks

L = nn.layers
TOL = {"rtol": 1e-5, "atol": 1e-6}


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def keras_attention(layer, query, value, key=None, mask=None):
    """What Keras 3 computes, from ``layer``'s weights: ``mask`` is the merged boolean
    mask, broadcasting to (N, Tq, Tv), or None."""
    key = value if key is None else key
    h, kd, vd = layer.num_heads, layer.key_dim, layer.value_dim

    def project(dense, x, d):
        y = np.asarray(x, np.float64) @ dense.kernel.numpy() + dense.bias.numpy()
        return y.reshape(*y.shape[:2], h, d).transpose(0, 2, 1, 3)

    q = project(layer.query_dense, query, kd)
    k = project(layer.key_dense, key, kd)
    v = project(layer.value_dense, value, vd)
    scores = (q / np.sqrt(kd)) @ k.transpose(0, 1, 3, 2)
    if mask is not None:
        m = np.asarray(mask, bool)
        while m.ndim < 4:
            m = m[..., None, :, :]
        # in the layer's float32, as Keras adds it: a score plus -1e9 rounds to a multiple
        # of 64, so a query step with every key masked gets equal scores
        scores = (scores.astype(np.float32) + ((1.0 - m) * -1e9).astype(np.float32)
                  ).astype(np.float64)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    if mask is not None:  # Keras 3.15's Softmax zeroes the masked entries afterwards
        w = np.where(m, w, 0.0)
    ctx = (w @ v).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[2], h * vd)
    out = layer.output_dense
    return ctx @ out.kernel.numpy() + out.bias.numpy(), w


def randomize(layer, seed=3):
    rng = np.random.default_rng(seed)
    for w in layer.weights:
        w.assign(rng.standard_normal(tuple(w.shape)).astype(np.float32) * 0.5)


def padded(n, steps, seed=0):
    """Token ids with trailing zeros of different lengths, and the mask of the rest."""
    ids = np.random.default_rng(seed).integers(1, 20, (n, steps)).astype(np.int32)
    for i in range(n):
        ids[i, steps - 1 - i % steps:] = 0
    return ids, ids != 0


def test_the_masks_an_embedding_makes_are_merged_as_keras_merges_them():
    ids, keep = padded(4, 6)
    emb = L.Embedding(20, 8, mask_zero=True)
    x = emb(ids)
    assert _masks.get_mask(x) is not None
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3)
    y, w = mha(x, x, return_attention_scores=True)
    randomize(mha)
    y, w = mha(x, x, return_attention_scores=True)
    merged = keep[:, :, None] & keep[:, None, :]
    want, want_w = keras_attention(mha, x.numpy(), x.numpy(), mask=merged)
    np.testing.assert_allclose(y.numpy(), want, **TOL)
    np.testing.assert_allclose(w.numpy(), want_w, **TOL)
    # a masked key gets no weight from a kept query step; a masked query step (all its
    # keys masked) gives none either, as Keras 3.15's Softmax zeroes masked entries
    w = w.numpy()
    kept_q = np.broadcast_to(keep[:, None, :, None], w.shape)
    masked_k = np.broadcast_to(~keep[:, None, None, :], w.shape)
    assert np.all(w[kept_q & masked_k] < 1e-30)
    np.testing.assert_array_equal(w[~np.broadcast_to(keep[:, None, :, None], w.shape)], 0.0)
    np.testing.assert_array_equal(np.asarray(_masks.get_mask(y)), keep)  # the query's
    unmasked, _ = keras_attention(mha, x.numpy(), x.numpy())
    assert not np.allclose(y.numpy(), unmasked, **TOL)  # the masks changed the result


def test_cross_attention_takes_the_value_and_key_masks_and_an_attention_mask():
    ids_q, keep_q = padded(3, 4, seed=1)
    ids_v, keep_v = padded(3, 5, seed=2)
    emb_q, emb_v = L.Embedding(20, 6, mask_zero=True), L.Embedding(20, 6, mask_zero=True)
    q, v = emb_q(ids_q), emb_v(ids_v)
    key = em.constant(rand(3, 5, 6, seed=4))
    key_keep = np.ones((3, 5), bool)
    key_keep[:, 0] = False
    allowed = np.random.default_rng(5).random((3, 4, 5)) > 0.3
    mha = L.MultiHeadAttention(num_heads=2, key_dim=4, value_dim=3)
    mha(q, v, key=key)
    randomize(mha)
    y = mha(q, v, key=key, key_mask=key_keep, attention_mask=allowed)
    merged = allowed & keep_q[:, :, None] & keep_v[:, None, :] & key_keep[:, None, :]
    want, _ = keras_attention(mha, q.numpy(), v.numpy(), key.numpy(), merged)
    np.testing.assert_allclose(y.numpy(), want, **TOL)
    # an explicit mask wins over the one the input carries
    y2 = mha(q, v, key=key, value_mask=np.ones((3, 5), bool))
    want2, _ = keras_attention(mha, q.numpy(), v.numpy(), key.numpy(),
                               keep_q[:, :, None] & np.ones((3, 1, 5), bool))
    np.testing.assert_allclose(y2.numpy(), want2, **TOL)


def test_the_causal_mask_counts_from_the_first_step_when_lengths_differ():
    q, v = rand(2, 3, 4), rand(2, 5, 4, seed=1)
    mha = L.MultiHeadAttention(num_heads=1, key_dim=2)
    mha(em.constant(q), em.constant(v))
    randomize(mha)
    y, w = mha(em.constant(q), em.constant(v), use_causal_mask=True,
               return_attention_scores=True)
    causal = np.tril(np.ones((3, 5), bool))  # Keras's: key j <= query i, from the start
    want, want_w = keras_attention(mha, q, v, mask=causal[None])
    np.testing.assert_allclose(y.numpy(), want, **TOL)
    np.testing.assert_allclose(w.numpy(), want_w, **TOL)
    assert w.numpy()[0, 0, 0, 1] < 1e-30  # the first query sees the first key only


def test_masks_of_numbers_and_bad_masks():
    x = em.constant(rand(2, 4, 6))
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3)
    as_bools = mha(x, x, attention_mask=np.tril(np.ones((4, 4), bool)))
    as_ints = mha(x, x, attention_mask=em.constant(np.tril(np.ones((4, 4), np.int32))))
    np.testing.assert_array_equal(as_bools.numpy(), as_ints.numpy())
    with pytest.raises(TypeError, match="attention_mask must be booleans"):
        mha(x, x, attention_mask=np.array([["a"] * 4] * 4))
    with pytest.raises(TypeError, match="missing its value input"):
        mha(x)
    with pytest.raises(TypeError, match="missing its query input"):
        mha(value=x)


def test_query_value_and_key_by_name_as_keras_examples_call_them():
    ids, keep = padded(3, 5, seed=4)
    x = L.Embedding(20, 6, mask_zero=True)(ids)
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3)
    by_position = mha(x, x, x, attention_mask=keep[:, None, :])
    by_name = mha(query=x, value=x, key=x, attention_mask=keep[:, None, :])
    np.testing.assert_array_equal(by_name.numpy(), by_position.numpy())
    merged = keep[:, None, :] & keep[:, :, None] & keep[:, None, :]
    np.testing.assert_allclose(by_name.numpy(),
                               keras_attention(mha, x.numpy(), x.numpy(), mask=merged)[0],
                               **TOL)


def test_a_query_step_with_every_key_masked_stays_finite_in_float16():
    """-1e9 is -inf in float16: a fully masked row would be NaN; Keras adds -3e4."""
    x = rand(2, 4, 6)
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3, dtype="float16")
    keep = np.array([[True, True, False, False], [True, False, False, False]])
    y = mha(em.constant(x.astype(np.float16)), em.constant(x.astype(np.float16)),
            query_mask=keep, value_mask=keep)
    assert y.dtype == np.float16
    assert np.all(np.isfinite(y.numpy()))
    np.testing.assert_allclose(
        y.numpy(), keras_attention(mha, x.astype(np.float16), x.astype(np.float16),
                                   mask=keep[:, :, None] & keep[:, None, :])[0],
        rtol=2e-2, atol=2e-2)


def test_a_functional_model_passes_the_masks_on():
    ids, keep = padded(4, 6, seed=3)
    inp = L.Input((6,), dtype="int32")
    x = L.Embedding(20, 8, mask_zero=True)(inp)
    h = L.MultiHeadAttention(num_heads=2, key_dim=4)(x, x)
    model = nn.Model(inp, L.GlobalAveragePooling1D()(h))
    got = model.predict(ids, verbose=0)
    emb, = [lay for lay in model.layers if isinstance(lay, L.Embedding)]
    mha, = [lay for lay in model.layers if isinstance(lay, L.MultiHeadAttention)]
    e = emb(ids).numpy()
    att, _ = keras_attention(mha, e, e, mask=keep[:, :, None] & keep[:, None, :])
    want = (att * keep[..., None]).sum(1) / keep.sum(1, keepdims=True)  # masked mean
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_traced_call_keeps_one_trace_while_its_masks_change():
    """The masks are combined with ops, never read to the host: new mask values replay."""
    x = em.constant(rand(3, 5, 4))
    mha = L.MultiHeadAttention(num_heads=2, key_dim=2)
    mha(x, x)

    @graph.function
    def attend(x, allowed):
        return mha(x, x, attention_mask=allowed)

    rng = np.random.default_rng(0)
    for _ in range(4):
        allowed = em.constant(rng.random((3, 5, 5)) > 0.4)
        np.testing.assert_allclose(attend(x, allowed).numpy(),
                                   mha(x, x, attention_mask=allowed).numpy(), **TOL)
    assert attend.experimental_get_tracing_count() == 1


def test_a_row_masked_entirely_gets_zero_weights_as_keras_3():
    """Keras 3.15's Softmax zeroes masked outputs, so a query masked from every key
    attends to nothing: padded queries of self-attention give zero scores and an output of
    the output projection's bias (ember gave a uniform row; found by a parity sweep against
    Keras 3.15.1, whose torch and jax backends both give 0)."""
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    none = np.array([[False, False, False]])
    np.testing.assert_array_equal(nn.layers.Softmax()(x, mask=none).numpy(), [[0, 0, 0]])
    some = np.array([[True, False, True]])
    want = np.exp([1.0, 3.0]) / np.exp([1.0, 3.0]).sum()
    np.testing.assert_allclose(nn.layers.Softmax()(x, mask=some).numpy(),
                               [[want[0], 0.0, want[1]]], rtol=1e-6)
    ids = np.array([[1, 2, 0, 0], [3, 1, 2, 0]])
    emb = nn.layers.Embedding(4, 3, mask_zero=True)
    mha = nn.layers.MultiHeadAttention(1, 2, kernel_initializer="ones")
    h = emb(ids)
    out, scores = mha(h, h, return_attention_scores=True)
    keep = ids != 0
    s = scores.numpy()[:, 0]  # (N, Tq, Tv)
    assert np.all(s[~keep] == 0.0)  # padded queries: no weight anywhere
    np.testing.assert_allclose(s[keep].sum(-1), 1.0, rtol=1e-6)
    assert np.all(s[:, :, :][np.broadcast_to(~keep[:, None, :], s.shape)] == 0.0)
    np.testing.assert_array_equal(out.numpy()[~keep], 0.0)  # bias 0: ctx 0 gives 0

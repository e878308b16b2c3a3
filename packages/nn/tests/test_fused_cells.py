"""LSTM and GRU layers run the fused ops (em.nn_ops.lstm_sequence, gru_sequence; gru_cell
for a GRU with ``reset_after=False``) and agree
with the composed step (the path non-default activations take) in values, gradients and
second derivatives, with masks, reversed sequences and dropout."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn, tape
from ember.core import extend

L = nn.layers


def _tanh(x):  # the same function, but not em.tanh: the layer composes its step
    return em.tanh(x)


class _Ops:
    def __init__(self):
        self.names = collections.Counter()

    def record_op(self, op, inputs, attrs, outputs):
        self.names[op.name] += 1

    def variable_read(self, variable, value):
        pass


def _pair(kind, **kw):
    """(fused layer, composed layer) with the same weights, in float64."""
    make = {"lstm": L.LSTM, "gru": L.GRU}[kind]
    fused = make(3, dtype="float64", **kw)
    composed = make(3, dtype="float64", activation=_tanh, **kw)
    x = em.constant(np.random.default_rng(0).uniform(-1, 1, (2, 4, 5)))
    fused(x), composed(x)
    rng = np.random.default_rng(1)
    for a, b in zip(fused.weights, composed.weights):
        w = rng.uniform(-0.7, 0.7, a.shape)  # nonzero biases too
        a.assign(w)
        b.assign(w)
    return fused, composed, x


CASES = [("lstm", {}), ("gru", {}), ("gru", {"reset_after": False}),
         ("lstm", {"return_sequences": True, "go_backwards": True}),
         ("gru", {"reset_after": False, "return_sequences": True})]


@pytest.mark.parametrize(("kind", "kw"), CASES)
def test_the_layer_runs_the_fused_op_and_matches_the_composed_step(kind, kw):
    fused, composed, x = _pair(kind, **kw)
    seen = _Ops()
    with extend.recording_to(seen):
        fused(x)
    op, calls = {"lstm": ("lstm_sequence", 1), "gru": ("gru_sequence", 1)}[kind]
    if kw.get("reset_after") is False:  # the sequence op computes reset_after only
        op, calls = "gru_cell", 4
    assert seen.names[op] == calls, seen.names
    seen = _Ops()
    with extend.recording_to(seen):
        composed(x)
    assert seen.names[op] == 0 and seen.names[f"{kind}_cell"] == 0, seen.names
    for layer in (fused, composed):
        with tape.GradientTape() as t:
            t.watch(x)
            y = em.reduce_sum(em.square(layer(x)))
        layer.grads = t.gradient(y, [x, *layer.trainable_variables])
        layer.out = y.numpy()
    assert_allclose(fused.out, composed.out, rtol=1e-12)
    for a, b in zip(fused.grads, composed.grads):
        assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


MASKED = [("lstm", {"return_sequences": True}), ("gru", {"return_sequences": True}),
          ("gru", {"return_sequences": True, "go_backwards": True}),
          ("gru", {"zero_output_for_mask": True}), ("gru", {"return_state": True}),
          ("gru", {"reset_after": False, "return_sequences": True}),
          ("lstm", {}), ("lstm", {"return_sequences": True, "go_backwards": True}),
          ("lstm", {"return_sequences": True, "zero_output_for_mask": True}),
          ("lstm", {"zero_output_for_mask": True}), ("lstm", {"return_state": True})]


@pytest.mark.parametrize(("kind", "kw"), MASKED)
def test_masked_steps_keep_the_state_as_the_composed_step_does(kind, kw):
    fused, composed, x = _pair(kind, **kw)
    # the second sequence ends on masked steps: its final output depends on the mode
    mask = em.constant(np.array([[True, True, False, True], [True, False, True, False]]))
    outs = []
    for layer in (fused, composed):
        with tape.GradientTape() as t:
            t.watch(x)
            ys = layer(x, mask=mask)
            ys = ys if isinstance(ys, list) else [ys]
            loss = sum(em.reduce_sum(em.sin(y)) for y in ys)
        grads = t.gradient(loss, [x, *layer.trainable_variables])
        outs.append(([y.numpy() for y in ys], [g.numpy() for g in grads]))
    for a, b in zip(outs[0][0] + outs[0][1], outs[1][0] + outs[1][1]):
        assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    y = outs[0][0][0]
    if kw.get("return_sequences") and not kw.get("go_backwards"):
        if kw.get("zero_output_for_mask"):
            assert_allclose(y[1, 1], 0.0)
        else:
            assert_allclose(y[1, 1], y[1, 0])  # masked: the previous output


def test_second_derivatives_with_a_mask_match_the_composed_step():
    fused, composed, x = _pair("lstm", return_sequences=True)
    mask = em.constant(np.array([[True, False, True, True], [True, True, False, False]]))
    hvps = []
    for layer in (fused, composed):
        k = layer.trainable_variables[1]
        with tape.GradientTape() as outer:
            outer.watch(x)
            with tape.GradientTape() as inner:
                inner.watch(x)
                y = em.reduce_sum(em.sin(layer(x, mask=mask)))
            gv = em.reduce_sum(inner.gradient(y, x) * x)
        hvps.append([g.numpy() for g in outer.gradient(gv, [x, k])])
    for a, b in zip(*hvps):
        assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("kind", "kw"), CASES[:3] + [("gru", {"return_sequences": True})])
def test_second_derivatives_match_the_composed_step(kind, kw):
    fused, composed, x = _pair(kind, **kw)
    v = em.constant(np.random.default_rng(3).uniform(-1, 1, x.shape))
    hvps = []
    for layer in (fused, composed):
        k = layer.trainable_variables[1]  # the recurrent kernel
        with tape.GradientTape() as outer:
            outer.watch(x)
            with tape.GradientTape() as inner:
                inner.watch(x)
                y = em.reduce_sum(em.sin(layer(x)))
            gx = inner.gradient(y, x)
            gv = em.reduce_sum(gx * v)
        hvps.append([g.numpy() for g in outer.gradient(gv, [x, k])])
    for a, b in zip(*hvps):
        assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_recurrent_dropout_on_a_gru_takes_the_composed_step():
    # the fused GRU ops read h once; a dropout mask on the matmul's h alone needs the
    # composed step (the LSTM applies it to the op's h input and stays fused)
    seen = _Ops()
    with extend.recording_to(seen):
        L.GRU(3, recurrent_dropout=0.5)(em.ones((2, 4, 5)), training=True)
        L.LSTM(3, recurrent_dropout=0.5)(em.ones((2, 4, 5)), training=True)
    assert seen.names["gru_cell"] == seen.names["gru_sequence"] == 0, seen.names
    assert seen.names["lstm_cell"] == 4, seen.names

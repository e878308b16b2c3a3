"""RepeatVector (Keras's ``layers.RepeatVector``): (N, F) -> (N, n, F), the bridge between an
encoder RNN's last output and a decoder RNN in sequence-to-sequence models."""

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape

L = nn.layers


def test_repeats_each_example_along_a_new_time_axis():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = L.RepeatVector(4)(x)
    assert y.shape == (2, 4, 3)
    np.testing.assert_allclose(y.numpy(), np.repeat(x[:, None, :], 4, axis=1))


def test_gradient_sums_over_the_repeated_steps():
    x = em.Variable(np.ones((2, 3), np.float32))
    w = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32)
    with tape.GradientTape() as t:
        loss = em.reduce_sum(L.RepeatVector(5)(x) * w)
    np.testing.assert_allclose(t.gradient(loss, x).numpy(), w.sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize("n, error", [(0, ValueError), (-2, ValueError), (2.0, TypeError),
                                      ("3", TypeError), (True, TypeError)])
def test_n_must_be_a_positive_int(n, error):
    with pytest.raises(error, match="RepeatVector: n"):
        L.RepeatVector(n)


def test_rejects_inputs_of_another_rank_naming_the_layer():
    layer = L.RepeatVector(2, name="rep")
    with pytest.raises(ValueError, match="'rep'.*rank 2.*\\(2, 3, 4\\)"):
        layer(np.zeros((2, 3, 4), np.float32))
    layer(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="'rep'.*rank 2"):
        layer(np.zeros((2,), np.float32))


def test_encoder_decoder_sequential_and_functional_shapes():
    # the shape of keras-io's addition_rnn: LSTM -> RepeatVector -> LSTM(seq) -> Dense per step
    model = nn.Sequential([L.LSTM(8, input_shape=(7, 12)), L.RepeatVector(4),
                           L.LSTM(8, return_sequences=True), L.Dense(12, activation="softmax")])
    out = model(np.zeros((3, 7, 12), np.float32))
    assert out.shape == (3, 4, 12)
    np.testing.assert_allclose(out.numpy().sum(-1), 1.0, rtol=1e-5)
    assert model.layers[1].output_shape == (None, 4, 8)
    inp = nn.Input(shape=(5,))
    assert L.RepeatVector(3)(inp).shape == (None, 3, 5)

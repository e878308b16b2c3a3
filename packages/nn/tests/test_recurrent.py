"""RNN(cell), cells, Bidirectional and the LSTM/GRU/SimpleRNN layers (no PyTorch needed)."""

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape

L = nn.layers


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_legacy_layers_keep_their_variable_paths_and_share_the_cells_variables():
    for cls in (L.LSTM, L.GRU, L.SimpleRNN):
        layer = cls(4)
        layer(em.ones((2, 3, 5)))
        assert list(layer.variables_by_path()) == ["kernel", "recurrent_kernel", "bias"]
        assert layer.kernel is layer.cell.kernel
        assert layer.bias is layer.cell.bias
        assert len(layer.trainable_variables) == 3
        assert layer.units == 4


def test_lstm_forget_bias_starts_at_one():
    layer = L.LSTM(3)
    layer(em.ones((1, 2, 2)))
    np.testing.assert_array_equal(layer.bias.numpy(), [0] * 3 + [1] * 3 + [0] * 6)
    layer = L.LSTM(3, unit_forget_bias=False)
    layer(em.ones((1, 2, 2)))
    np.testing.assert_array_equal(layer.bias.numpy(), 0.0)


def test_rnn_of_a_cell_equals_the_layer_with_the_same_weights():
    x = em.constant(rand(2, 5, 3))
    layer = L.LSTM(4, return_sequences=True)
    y = layer(x)
    rnn = L.RNN(L.LSTMCell(4), return_sequences=True)
    rnn(x)
    rnn.set_weights(layer.get_weights())
    assert_close(rnn(x), y)


def test_generic_cell_path_equals_the_fast_path():
    """A cell written by a user (no split step) runs through cell(x_t, states)."""

    class MinimalRNNCell(nn.layers.Layer):
        def __init__(self, units, **kw):
            super().__init__(**kw)
            self.units, self.state_size = units, units

        def build(self, input_shape):
            self.kernel = self.add_weight("kernel", (input_shape[-1], self.units))
            self.recurrent_kernel = self.add_weight("recurrent_kernel",
                                                    (self.units, self.units))

        def call(self, inputs, states):
            h = em.tanh(inputs @ self.kernel + states[0] @ self.recurrent_kernel)
            return h, [h]

    x = em.constant(rand(3, 4, 2))
    mine = L.RNN(MinimalRNNCell(5), return_sequences=True)
    y = mine(x)
    ref = L.SimpleRNN(5, use_bias=False, return_sequences=True)
    ref(x)
    ref.set_weights(mine.get_weights())
    assert_close(y, ref(x))


def test_get_initial_state_and_zero_state():
    cell = L.LSTMCell(3)
    h, c = cell.get_initial_state(batch_size=2)
    assert h.shape == c.shape == (2, 3)
    np.testing.assert_array_equal(h.numpy(), 0.0)
    assert [s.shape for s in cell.zero_state(4, em.float64)] == [(4, 3), (4, 3)]
    assert cell.zero_state(4, em.float64)[0].dtype == np.float64
    assert len(L.GRUCell(2).get_initial_state(inputs=em.ones((5, 7)))) == 1
    stacked = L.StackedRNNCells([L.GRUCell(2), L.LSTMCell(3)])
    assert [[s.shape for s in e] for e in stacked.get_initial_state(batch_size=2)] == [
        [(2, 2)], [(2, 3), (2, 3)]]
    with pytest.raises(ValueError, match="batch_size"):
        cell.get_initial_state()


def test_single_state_cell_returns_what_it_was_given():
    cell = L.GRUCell(3)
    out, h = cell(em.ones((2, 4)), em.zeros((2, 3)))
    assert isinstance(h, em.Tensor)
    out2, hs = cell(em.ones((2, 4)), [em.zeros((2, 3))])
    assert isinstance(hs, list)
    assert_close(out, out2)


def test_stacked_cells_equal_two_layers():
    x = em.constant(rand(2, 6, 3))
    stacked = L.RNN([L.GRUCell(4), L.LSTMCell(5)], return_sequences=True)
    y = stacked(x)
    first, second = L.GRU(4, return_sequences=True), L.LSTM(5, return_sequences=True)
    second(first(x))
    first.set_weights(stacked.cell.cells[0].get_weights())
    second.set_weights(stacked.cell.cells[1].get_weights())
    assert_close(y, second(first(x)))


def test_stateful_carries_the_state_between_calls():
    x = rand(3, 8, 2)
    full = L.GRU(4, return_sequences=True)
    y = full(em.constant(x)).numpy()
    stateful = L.GRU(4, return_sequences=True, stateful=True)
    stateful(em.constant(x[:, :1]))
    stateful.set_weights(full.get_weights())
    stateful.reset_states()
    a = stateful(em.constant(x[:, :5])).numpy()
    b = stateful(em.constant(x[:, 5:])).numpy()
    assert_close(np.concatenate([a, b], axis=1), y)
    stateful.reset_states()
    assert_close(stateful(em.constant(x[:, :5])), a)
    with pytest.raises(ValueError, match="stateful"):
        stateful(em.constant(x[:2]))
    with pytest.raises(AttributeError, match="stateful"):
        full.reset_states()


def test_stateful_calls_do_not_backpropagate_into_the_previous_batch():
    layer = L.SimpleRNN(3, stateful=True)
    x1, x2 = em.constant(rand(2, 4, 2)), em.constant(rand(2, 4, 2, seed=1))
    with tape.GradientTape(persistent=True) as t:
        t.watch(x1)
        layer(x1)
        y = layer(x2)
    assert t.gradient(y, x1) is None


def test_go_backwards_runs_the_reversed_sequence():
    x = rand(2, 5, 3)
    fwd = L.LSTM(4, return_sequences=True)
    y = fwd(em.constant(x[:, ::-1].copy())).numpy()
    bwd = L.LSTM(4, return_sequences=True, go_backwards=True)
    bwd(em.constant(x))
    bwd.set_weights(fwd.get_weights())
    assert_close(bwd(em.constant(x)), y)  # outputs in processing order, as Keras


def test_unroll_true_computes_the_same():
    x = em.constant(rand(2, 5, 3))
    a = L.GRU(3, unroll=False)
    ya = a(x)
    b = L.GRU(3, unroll=True)
    b(x)
    b.set_weights(a.get_weights())
    assert_close(b(x), ya)


def test_dropout_only_in_training_and_repeatable_under_a_seed():
    x = em.constant(rand(4, 6, 3))
    plain = L.LSTM(5)
    y = plain(x).numpy()
    drop = L.LSTM(5, dropout=0.5, recurrent_dropout=0.3)
    drop(x)
    drop.set_weights(plain.get_weights())
    assert_close(drop(x, training=False), y)
    em.random.set_seed(3)
    t1 = drop(x, training=True).numpy()
    em.random.set_seed(3)
    t2 = drop(x, training=True).numpy()
    np.testing.assert_array_equal(t1, t2)
    assert np.abs(t1 - y).max() > 1e-3
    with pytest.raises(ValueError, match="dropout"):
        L.GRU(3, dropout=1.5)


@pytest.mark.parametrize("mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merge_modes(mode):
    x = em.constant(rand(2, 5, 3))
    bi = L.Bidirectional(L.GRU(4, return_sequences=True), merge_mode=mode)
    y = bi(x)
    f = bi.forward_layer(x).numpy()
    b = bi.backward_layer(x).numpy()[:, ::-1]
    want = {"concat": lambda: np.concatenate([f, b], -1), "sum": lambda: f + b,
            "mul": lambda: f * b, "ave": lambda: (f + b) / 2, None: lambda: None}[mode]()
    if mode is None:
        assert_close(y[0], f)
        assert_close(y[1], b)
    else:
        assert_close(y, want)
    assert bi.backward_layer.go_backwards and not bi.forward_layer.go_backwards
    paths = list(bi.variables_by_path())
    assert paths[0] == "forward_layer/kernel" and "backward_layer/bias" in paths


def test_bidirectional_return_state_and_initial_state():
    x = em.constant(rand(2, 5, 3))
    bi = L.Bidirectional(L.LSTM(4, return_state=True))
    out, fh, fc, bh, bc = bi(x)
    assert out.shape == (2, 8)
    assert_close(out[:, :4], fh)
    assert_close(out[:, 4:], bh)
    again = bi(x, initial_state=[fh, fc, bh, bc])[0]
    assert np.abs(again.numpy() - out.numpy()).max() > 1e-4
    with pytest.raises(ValueError, match="merge_mode"):
        L.Bidirectional(L.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="weights"):
        L.Bidirectional(L.LSTM(2), weights=[np.zeros(1)])


def test_bidirectional_with_a_custom_backward_layer():
    bi = L.Bidirectional(L.LSTM(3, return_sequences=True),
                         backward_layer=L.GRU(3, return_sequences=True, go_backwards=True))
    assert bi(em.ones((2, 4, 2))).shape == (2, 4, 6)
    with pytest.raises(ValueError, match="go_backwards"):
        L.Bidirectional(L.LSTM(3), backward_layer=L.GRU(3))
    with pytest.raises(ValueError, match="return_sequences"):
        L.Bidirectional(L.LSTM(3), backward_layer=L.GRU(3, go_backwards=True,
                                                           return_sequences=True))


def _unnamed(cfg):
    if isinstance(cfg, dict):
        return {k: _unnamed(v) for k, v in cfg.items() if k != "name"}
    if isinstance(cfg, list):
        return [_unnamed(v) for v in cfg]
    return cfg


def test_layers_round_trip_through_get_config():
    for layer in (L.LSTM(3, recurrent_activation="tanh", return_sequences=True, dropout=0.1),
                  L.GRU(2, reset_after=False, go_backwards=True),
                  L.RNN([L.LSTMCell(2), L.SimpleRNNCell(3)], return_state=True)):
        clone = type(layer).from_config(layer.get_config())
        assert type(clone) is type(layer)
        assert _unnamed(clone.get_config()) == _unnamed(layer.get_config())


def test_arguments_are_honoured_or_rejected_by_name():
    with pytest.raises(TypeError, match="kernel_constraintx"):
        L.LSTM(3, kernel_constraintx=None)
    with pytest.raises(ValueError, match="implementation"):
        L.LSTM(3, implementation=3)
    with pytest.raises(TypeError, match="return_sequences"):
        L.GRU(3, return_sequences="yes")
    with pytest.raises(ValueError, match="state_size"):
        L.RNN(L.Dense(3))
    with pytest.raises(ValueError, match="initial state"):
        L.LSTM(3)(em.ones((2, 4, 2)), initial_state=[em.zeros((2, 3))])
    with pytest.raises(ValueError, match=r"\(batch, steps, features\)"):
        L.LSTM(3)(em.ones((2, 4)))


def test_float64_layer_computes_in_float64():
    y = L.LSTM(3, dtype="float64")(em.constant(rand(2, 4, 2)))
    assert y.dtype == np.float64
    y = L.RNN(L.GRUCell(3, dtype="float64"))(em.constant(rand(2, 4, 2)))
    assert y.dtype == np.float64


def test_time_distributed_applies_the_layer_to_each_step_with_shared_weights():
    x = rand(2, 4, 3)
    td = L.TimeDistributed(L.Dense(5, activation="tanh"))
    y = td(em.constant(x)).numpy()
    assert y.shape == (2, 4, 5)
    for t_ in range(4):
        assert_close(y[:, t_], td.layer(em.constant(x[:, t_])))
    assert list(td.variables_by_path()) == ["layer/kernel", "layer/bias"]
    with pytest.raises(ValueError, match="rank >= 3"):
        L.TimeDistributed(L.Dense(2))(em.ones((2, 3)))


def test_wrapper_dtypes_are_honoured_or_rejected():
    bi = L.Bidirectional(L.RNN([L.GRUCell(3), L.LSTMCell(2)], return_sequences=True),
                         dtype="float64")
    assert bi(em.ones((2, 4, 3))).dtype == np.float64
    assert bi.backward_layer.cell.cells[1].kernel.dtype == np.float64
    with pytest.raises(ValueError, match="dtype"):
        L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(2, go_backwards=True),
                        dtype="float64")
    with pytest.raises(ValueError, match="dtype"):
        L.TimeDistributed(L.Dense(2), dtype="float64")
    with pytest.raises(ValueError, match="dtype"):
        L.StackedRNNCells([L.GRUCell(2)], dtype="float64")
    with pytest.raises(ValueError, match="dtype"):
        L.RNN(L.GRUCell(2), dtype="float64")
    stacked = L.RNN([L.GRUCell(2, dtype="float64"), L.GRUCell(2, dtype="float64")])
    assert stacked(em.ones((1, 3, 2))).dtype == np.float64


def test_activity_regularizer_of_a_recurrent_layer_penalises_its_output():
    layer = L.LSTM(3, activity_regularizer=nn.regularizers.L2(0.5))
    y = layer(em.constant(rand(2, 4, 3)))
    (loss,) = layer.losses
    assert_close(loss, 0.5 * np.sum(np.square(y.numpy())) / 2)  # divided by the batch, as tf.keras


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_without_bias_in_both_reset_modes(reset_after):
    layer = L.GRU(3, use_bias=False, reset_after=reset_after, return_sequences=True)
    x = em.constant(rand(2, 4, 2))
    with tape.GradientTape() as t:
        y = em.reduce_sum(layer(x))
    assert list(layer.variables_by_path()) == ["kernel", "recurrent_kernel"]
    assert [g.shape for g in t.gradient(y, layer.trainable_variables)] == [(2, 9), (3, 9)]
    with_bias = L.GRU(3, reset_after=reset_after, return_sequences=True)
    with_bias(x)
    with_bias.kernel.assign(layer.kernel.numpy())
    with_bias.recurrent_kernel.assign(layer.recurrent_kernel.numpy())
    assert_close(with_bias(x), layer(x))  # a zero bias is no bias


def test_bidirectional_copies_keep_the_activity_regularizer():
    bi = L.Bidirectional(L.LSTM(3, activity_regularizer=nn.regularizers.L2(0.5)))
    bi(em.constant(rand(2, 4, 3)))
    assert len(bi.losses) == 2  # one per direction

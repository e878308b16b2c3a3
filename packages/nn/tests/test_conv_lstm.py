"""ConvLSTM1D, ConvLSTM2D and ConvLSTM3D against Keras itself, and their recurrent
behaviour (masks, states, dropout, stateful, channels first, saving, a traced fit).

``data/keras_conv_lstm.json`` holds Keras 3.15.1's outputs (torch backend, CPU), weight
names and shapes, configs, input and weight gradients for the cases of
``keras_conv_lstm_reference.py`` (which wrote it, in Keras's interpreter), and the paths
of the ``.weights.h5`` file Keras writes for a ConvLSTM2D; the inputs and weights are that
script's sines.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from keras_conv_lstm_reference import CASES, arr
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn, tape

L = nn.layers
KERAS = json.loads((pathlib.Path(__file__).parent / "data" / "keras_conv_lstm.json")
                   .read_text())
CONFIG_KEYS = ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
               "use_bias", "unit_forget_bias", "dropout", "recurrent_dropout", "seed",
               "return_sequences", "return_state", "go_backwards", "stateful", "unroll",
               "zero_output_for_mask", "activation", "recurrent_activation",
               "kernel_regularizer", "activity_regularizer")


def _listed(v):
    return [_listed(i) for i in v] if isinstance(v, (list, tuple)) else v


def _built(cid, dtype=None):
    cls, kwargs, shape, mask = CASES[cid]
    layer = getattr(L, cls)(**kwargs, **({} if dtype is None else {"dtype": dtype}))
    x = em.constant(arr(shape, 1).astype(dtype or np.float32))
    layer(x)
    layer.set_weights([arr(tuple(w.shape), 10 + i, 0.5) for i, w in enumerate(layer.weights)])
    return layer, x, (None if mask is None else em.constant(np.array(mask)))


def _outputs(layer, x, mask):
    ys = layer(x, mask=mask)
    return list(ys) if isinstance(ys, (list, tuple)) else [ys]


def _loss(ys):
    return em.add_n([em.reduce_sum(y * em.cast(em.constant(arr(tuple(y.shape), 3 + j)),
                                               y.dtype)) for j, y in enumerate(ys)])


def test_reference_is_keras_3_15():
    assert KERAS["keras_version"] == "3.15.1"
    assert set(KERAS["cases"]) == set(CASES)


@pytest.mark.parametrize("cid", list(CASES))
def test_layer_matches_keras(cid):
    want = KERAS["cases"][cid]
    layer, x, mask = _built(cid)
    assert [[w.name.split("/")[-1].split(":")[0], list(w.shape)] for w in layer.weights] \
        == want["weights"]
    ys = _outputs(layer, x, mask)
    assert len(ys) == len(want["outputs"])
    for y, w in zip(ys, want["outputs"]):
        assert_allclose(y.numpy(), np.array(w, np.float32), rtol=1e-5, atol=2e-6)
    config = layer.get_config()
    for key in CONFIG_KEYS:
        assert _listed(config[key]) == want["config"][key], key


@pytest.mark.parametrize("cid", list(CASES))
def test_gradients_match_keras(cid):
    want = KERAS["cases"][cid]
    layer, x, mask = _built(cid)
    with tape.GradientTape() as t:
        t.watch(x)
        loss = _loss(_outputs(layer, x, mask))
    grads = t.gradient(loss, [x, *layer.weights])
    assert_allclose(grads[0].numpy(), np.array(want["input_gradient"], np.float32),
                    rtol=1e-4, atol=2e-5)
    for g, w in zip(grads[1:], want["weight_gradients"]):
        assert_allclose(g.numpy(), np.array(w, np.float32), rtol=1e-4, atol=5e-5)


@pytest.mark.parametrize("cid", ["2d_state_backwards", "1d_strided_channels_first",
                                 "2d_mask_sequences"])
def test_input_gradient_matches_finite_differences(cid):
    layer, x, mask = _built(cid, dtype="float64")
    xs = x.numpy()

    def f(v):
        return float(_loss(_outputs(layer, em.constant(v), mask)))

    with tape.GradientTape() as t:
        t.watch(x)
        loss = _loss(_outputs(layer, x, mask))
    g = t.gradient(loss, x).numpy()
    rng = np.random.default_rng(0)
    for _ in range(6):
        d = rng.standard_normal(xs.shape)
        eps = 1e-6
        fd = (f(xs + eps * d) - f(xs - eps * d)) / (2 * eps)
        assert_allclose(fd, float((g * d).sum()), rtol=1e-6, atol=1e-8)


def test_keras_weights_file_layout(tmp_path):
    """Keras's .weights.h5 paths and shapes; a file under those paths loads back."""
    h5py = pytest.importorskip("h5py")
    model = nn.Sequential([nn.Input((3, 5, 4, 2)), L.ConvLSTM2D(2, 3, padding="same")])
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    files = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda k, v: files.__setitem__(k, list(v.shape))
                     if isinstance(v, h5py.Dataset) else None)
    assert files == KERAS["weights_h5"]
    with h5py.File(path, "r+") as f:  # Keras's numbers of case 2d_same, at Keras's paths
        for i in range(3):
            ds = f[f"layers/conv_lstm2d/cell/vars/{i}"]
            ds[...] = arr(ds.shape, 10 + i, 0.5)
            for name in list(ds.attrs):  # (ember's checksum of what it wrote; Keras has none)
                del ds.attrs[name]
    again = nn.Sequential([nn.Input((3, 5, 4, 2)), L.ConvLSTM2D(2, 3, padding="same")])
    again.load_weights(path)
    y = again(em.constant(arr((2, 3, 5, 4, 2), 1)))
    assert_allclose(y.numpy(), np.array(KERAS["cases"]["2d_same"]["outputs"][0], np.float32),
                    rtol=1e-5, atol=2e-6)


def test_keras_config_builds_the_same_layer():
    for cid, (cls, kwargs, _shape, _mask) in CASES.items():
        config = dict(KERAS["cases"][cid]["config"])
        layer = getattr(L, cls).from_config(config)
        mine = getattr(L, cls)(**kwargs)
        for key in CONFIG_KEYS:
            assert _listed(layer.get_config()[key]) == _listed(mine.get_config()[key]), key
        again = type(mine).from_config(mine.get_config())
        assert again.get_config() == {**mine.get_config(), "name": again.name}


def test_keras_file_round_trip(tmp_path):
    model = nn.Sequential([nn.Input((3, 6, 6, 1)),
                           L.ConvLSTM2D(2, 3, padding="same", return_sequences=True,
                                        recurrent_dropout=0.2, kernel_regularizer="l2"),
                           L.ConvLSTM2D(1, 3, data_format="channels_last")])
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6, 1)).astype(np.float32)
    model.save(tmp_path / "m.keras")
    loaded = nn.models.load_model(tmp_path / "m.keras")
    assert type(loaded.layers[0]) is L.ConvLSTM2D
    for a, b in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert loaded.layers[0].recurrent_dropout == 0.2


def test_initial_weights_are_keras_ones():
    layer = L.ConvLSTM2D(3, (3, 2))
    layer(em.ones((1, 2, 5, 5, 2)))
    kernel, recurrent, bias = layer.get_weights()
    limit = np.sqrt(6.0 / (3 * 2 * 2 + 3 * 2 * 12))  # glorot_uniform's fans
    assert np.abs(kernel).max() <= limit
    r = recurrent.reshape(-1, 12)  # orthogonal as a (kh * kw * filters, 4 * filters) matrix
    assert_allclose(r.T @ r, np.eye(12), atol=1e-5)
    np.testing.assert_array_equal(bias, np.repeat([0.0, 1.0, 0.0, 0.0], 3))
    assert layer.kernel is layer.cell.kernel and layer.filters == 3
    assert layer.kernel_size == (3, 2) and layer.strides == (1, 1)
    assert L.ConvLSTM2D(3, 1, unit_forget_bias=False, bias_initializer="ones").cell \
        .unit_forget_bias is False


def test_names_and_signature_are_keras():
    import inspect

    assert L.ConvLSTM2D(1, 1).name.startswith("conv_lstm2d")
    assert L.ConvLSTM1D(1, 1).name.startswith("conv_lstm1d")
    names = list(inspect.signature(L.ConvLSTM3D.__init__).parameters)[1:]
    assert names[:7] == ["filters", "kernel_size", "strides", "padding", "data_format",
                         "dilation_rate", "activation"]
    assert names[-5:] == ["return_sequences", "return_state", "go_backwards", "stateful",
                          "kwargs"]


def test_the_cell_is_one_step_of_the_layer():
    layer = L.ConvLSTM2D(2, 3, padding="same", return_sequences=True, return_state=True)
    x = em.constant(np.random.default_rng(1).standard_normal((2, 3, 4, 4, 2))
                    .astype(np.float32))
    seq, h, c = layer(x)
    states = layer.cell.get_initial_state(x)
    for t in range(3):
        out, states = layer.cell(x[:, t], states)
        assert_allclose(out.numpy(), seq[:, t].numpy(), rtol=1e-5, atol=1e-6)
    assert_allclose(states[0].numpy(), h.numpy(), rtol=1e-5, atol=1e-6)
    assert_allclose(states[1].numpy(), c.numpy(), rtol=1e-5, atol=1e-6)


def test_initial_state_and_stateful():
    x = em.constant(np.random.default_rng(2).standard_normal((2, 4, 5, 5, 1))
                    .astype(np.float32))
    layer = L.ConvLSTM2D(2, 3, return_state=True)
    y, h, c = layer(x[:, :2])
    full = layer(x)[0]
    rest = layer(x[:, 2:], initial_state=[h, c])[0]
    assert_allclose(rest.numpy(), full.numpy(), rtol=1e-5, atol=1e-6)
    stateful = L.ConvLSTM2D(2, 3, stateful=True)
    stateful(x[:, :1])
    stateful.set_weights(layer.get_weights())
    stateful.reset_states()
    stateful(x[:, :2])
    assert_allclose(stateful(x[:, 2:]).numpy(), full.numpy(), rtol=1e-5, atol=1e-6)
    stateful.reset_states()
    assert not np.allclose(stateful(x[:, 2:]).numpy(), full.numpy())
    with pytest.raises(ValueError, match=r"states\[0\] has shape \(2, 1, 3, 2\); every "
                       r"state must have shape \(2, 3, 3, 2\)"):
        layer(x, initial_state=[h[:, :1], c])
    with pytest.raises(ValueError, match="2 initial state"):
        layer(x, initial_state=[h])


def test_dropout_masks_one_per_gate_for_the_sequence():
    x = em.ones((1, 3, 4, 4, 2))
    layer = L.ConvLSTM2D(2, 3, padding="same", dropout=0.5, recurrent_dropout=0.5, seed=3,
                         return_sequences=True)
    plain = layer(x)
    assert_allclose(layer(x, training=False).numpy(), plain.numpy())
    em.random.set_seed(5)
    a = layer(x, training=True)
    em.random.set_seed(5)
    b = layer(x, training=True)
    assert_allclose(a.numpy(), b.numpy())
    assert not np.allclose(a.numpy(), plain.numpy())
    with pytest.raises(ValueError, match="dropout"):
        L.ConvLSTM2D(2, 3, dropout=1.0)


def test_mask_keeps_states_at_masked_steps():
    x = em.constant(np.random.default_rng(3).standard_normal((2, 4, 3, 3, 1))
                    .astype(np.float32))
    mask = np.array([[True, False, True, True], [True, True, True, False]])
    layer = L.ConvLSTM2D(2, 3, padding="same", return_sequences=True, return_state=True)
    seq, h, c = layer(x, mask=em.constant(mask))
    assert_allclose(seq[0, 1].numpy(), seq[0, 0].numpy())  # repeated at a masked step
    assert_allclose(h[1].numpy(), seq[1, 2].numpy())
    zeroed = L.ConvLSTM2D(2, 3, padding="same", return_sequences=True,
                          zero_output_for_mask=True)
    zeroed(x)
    zeroed.set_weights(layer.get_weights())
    assert float(em.reduce_max(em.abs(zeroed(x, mask=em.constant(mask))[0, 1]))) == 0.0
    # the mask comes out with return_sequences (not with the last output, nor the states)
    assert_allclose(L.get_mask(seq).numpy(), mask)
    assert L.get_mask(h) is None and L.get_mask(c) is None
    assert L.get_mask(L.ConvLSTM2D(2, 3)(x, mask=em.constant(mask))) is None


@pytest.mark.parametrize("make, match", [
    (lambda: L.ConvLSTM2D(2, 3, strides=2, dilation_rate=2), "dilation_rate"),
    (lambda: L.ConvLSTM2D(2, (3, 3, 3)), "kernel_size"),
    (lambda: L.ConvLSTM1D(2, 3, padding="causal"), "padding"),
    (lambda: L.ConvLSTM2D(2, 3, data_format="NHWC"), "data_format"),
    (lambda: L.ConvLSTM2D(0, 3), "filters"),
    (lambda: L.ConvLSTM2D(2, 3, recurrent_dropout=-0.1), "recurrent_dropout"),
    (lambda: L.ConvLSTM2D(2, 3)(em.ones((1, 3, 4, 4))), "rank 5"),
    (lambda: L.ConvLSTM3D(2, 3)(em.ones((1, 3, 4, 4, 2))), "rank 6"),
])
def test_bad_arguments_are_refused_by_name(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_channels_are_checked_after_building():
    layer = L.ConvLSTM2D(2, 3)
    layer(em.ones((1, 2, 5, 5, 3)))
    with pytest.raises(ValueError, match="axis -1"):
        layer(em.ones((1, 2, 5, 5, 2)))


def test_other_spatial_sizes_after_building():
    layer = L.ConvLSTM2D(2, 3, padding="same")
    layer(em.ones((1, 2, 5, 5, 1)))
    assert layer(em.ones((3, 4, 7, 6, 1))).shape == (3, 7, 6, 2)


def _model(seed):
    em.random.set_seed(seed)
    inp = nn.Input((None, 6, 6, 1))
    x = L.ConvLSTM2D(3, 3, padding="same", return_sequences=True, dropout=0.25)(inp)
    x = L.BatchNormalization()(x)
    x = L.ConvLSTM2D(2, (1, 1), padding="same", return_sequences=True)(x)
    out = L.Conv3D(1, 3, padding="same", activation="sigmoid")(x)
    return nn.Model(inp, out)


def test_traced_fit_matches_eager_fit():
    rng = np.random.default_rng(4)
    x = rng.uniform(0, 1, (8, 4, 6, 6, 1)).astype(np.float32)
    y = (x > 0.5).astype(np.float32)
    results = []
    for run_eagerly in (False, True):
        model = _model(7)
        model.compile(nn.optimizers.Adam(0.01), "binary_crossentropy",
                      run_eagerly=run_eagerly)
        em.random.set_seed(11)
        hist = model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
        results.append((hist.history["loss"], model.get_weights()))
        if not run_eagerly:
            step = model._ember.extra["traced_steps"]["train_step"][1]
            assert step.cache_size() == 1  # one traced step served every batch
    (loss_t, w_t), (loss_e, w_e) = results
    assert loss_t[1] < loss_t[0]
    assert_allclose(loss_t, loss_e, rtol=1e-4)
    for a, b in zip(w_t, w_e):
        assert_allclose(a, b, rtol=1e-3, atol=1e-5)

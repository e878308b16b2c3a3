"""Keras's ``model.input_shape`` / ``output_shape`` on functional and Sequential models
(keras-io's PixelCNN sizes its sampling canvas from ``input_shape``)."""

import pytest

from ember import nn


def test_functional_models_give_their_inputs_and_outputs_shapes():
    i = nn.Input(shape=(28, 28, 1))
    m = nn.Model(i, nn.layers.Conv2D(4, 3)(i))
    assert m.input_shape == (None, 28, 28, 1) and m.output_shape == (None, 26, 26, 4)
    a, b = nn.Input(shape=(2,)), nn.Input(shape=(3,))
    two = nn.Model([a, b], [nn.layers.Dense(1)(a), nn.layers.Dense(5)(b)])
    assert two.input_shape == [(None, 2), (None, 3)]
    assert two.output_shape == [(None, 1), (None, 5)]


def test_a_sequential_model_has_them_once_built_and_says_so_before():
    s = nn.Sequential([nn.Input(shape=(4,)), nn.layers.Dense(3)])
    assert s.input_shape == (None, 4) and s.output_shape == (None, 3)
    with pytest.raises(ValueError, match="not built yet"):
        nn.Sequential([nn.layers.Dense(3)]).input_shape


def test_predicts_arrays_are_the_callers_to_write():
    # Keras's predict returns arrays of their own (keras-io's conditional GAN scales them
    # in place); a read-only view of an output tensor raised "output array is read-only"
    import numpy as np

    m = nn.Sequential([nn.layers.InputLayer((3,)), nn.layers.Dense(2)])
    for n, batch in [(4, 32), (70, 32)]:
        out = m.predict(np.ones((n, 3), np.float32), batch_size=batch, verbose=0)
        before = out.copy()
        out *= 2.0
        np.testing.assert_array_equal(out, before * 2.0)
        again = m.predict(np.ones((n, 3), np.float32), batch_size=batch, verbose=0)
        np.testing.assert_array_equal(again, before)  # the model's own values untouched
    on_batch = m.predict_on_batch(np.ones((4, 3), np.float32))
    on_batch += 1.0


@pytest.mark.parametrize("layer, shape, want", [
    (lambda: nn.layers.Dense(3), (None, 5), (None, 3)),  # was (1, 3): None became 1
    (lambda: nn.layers.Dense(3), (32, 5), (32, 3)),
    (lambda: nn.layers.Embedding(10, 2), (None,), (None, 2)),
    (lambda: nn.layers.Embedding(10, 2), (None, 7), (None, 7, 2)),
    (lambda: nn.layers.Dot(axes=1), [(None, 5), (None, 5)], (None, 1)),  # raised
    (lambda: nn.layers.Concatenate(), [(None, 2), (None, 3)], (None, 5)),
    (lambda: nn.layers.Conv2D(4, 3, strides=2), (None, None, 28, 1), (None, None, 13, 4)),
    (lambda: nn.layers.LSTM(4, return_sequences=True), (None, None, 8), (None, None, 4)),
])
def test_compute_output_shape_is_kerass(layer, shape, want):
    made = layer()
    assert made.compute_output_shape(shape) == want
    with pytest.raises(AttributeError):
        made.output


def test_compute_output_shape_names_what_is_not_a_shape():
    with pytest.raises(ValueError, match="is not a shape"):
        nn.layers.Dense(3).compute_output_shape(("a", 5))


def test_a_functional_model_takes_a_dict_of_inputs_by_key(tmp_path):
    # Keras 3's Model(inputs={"a": a, "b": b}, ...): called with a dict by those keys (or
    # a list in their order), saved and loaded with its InputLayers' own names
    import numpy as np

    a, b = nn.Input(shape=(2,), name="a"), nn.Input(shape=(3,), name="bee")
    out = nn.layers.Dense(1)(nn.layers.Concatenate()([a, b]))
    m = nn.Model({"a": a, "b": b}, out)
    assert m.input_names == ["a", "b"] and [lay.name for lay in m.layers][:2] == ["a", "bee"]
    xa, xb = np.ones((4, 2), np.float32), np.full((4, 3), 2.0, np.float32)
    want = m({"a": xa, "b": xb}).numpy()
    np.testing.assert_array_equal(m([xa, xb]).numpy(), want)
    m.compile("sgd", "mse")
    m.fit({"a": xa, "b": xb}, np.zeros((4, 1), np.float32), epochs=1, verbose=0)
    m.save(tmp_path / "m.keras")
    back = nn.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(back({"a": xa, "b": xb}).numpy(), m({"a": xa, "b": xb}).numpy())
    with pytest.raises(ValueError, match=r"needs the inputs' names \['a', 'b'\]; missing "
                                         r"\['b'\]"):
        m({"a": xa, "bee": xb})
    with pytest.warns(UserWarning, match=r"keys \['target'\] that match no input") as seen:
        got = m({"a": xa, "b": xb, "target": xb})  # as Keras: left out, with a warning
    np.testing.assert_array_equal(got.numpy(), m({"a": xa, "b": xb}).numpy())
    assert len(seen) == 1
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per model and set of keys
        m({"a": xa, "b": xb, "target": xb})
    with pytest.raises(TypeError, match="a dict of them by name"):
        nn.Model({"a": a, 1: b}, out)


def test_a_built_sequentials_layers_have_their_inputs_and_outputs():
    # Keras builds a Sequential with an Input as a functional graph when it is made:
    # model.layers[0].output works at once (keras-io's anomaly-detection example)
    model = nn.Sequential([nn.Input(shape=(288, 1)),
                           nn.layers.Conv1D(32, 7, padding="same", strides=2),
                           nn.layers.Dense(3)])
    assert model.layers[0].output.shape == (None, 144, 32)
    assert model.layers[1].input.shape == (None, 144, 32)
    with pytest.raises(AttributeError, match="never been called on symbolic inputs"):
        nn.Sequential([nn.layers.Dense(3)]).layers[0].output

"""Keras's functional API: nn.Input, layers called on symbolic tensors, nn.Model(inputs,
outputs) replaying those calls; several inputs, shared layers, nested models, subclasses."""

import re

import numpy as np
import pytest

import ember.core as em
from ember import nn

L = nn.layers
RNG = np.random.default_rng(0)


def test_a_chain_computes_what_the_same_sequential_computes_and_trains():
    inp = nn.Input(shape=(6, 6, 1))
    x = L.Conv2D(3, 3, activation="relu", padding="same")(inp)
    x = L.MaxPooling2D(2)(x)
    x = L.Flatten()(x)
    out = L.Dense(2)(x)
    assert out.shape == (None, 2) and inp.shape == (None, 6, 6, 1)
    model = nn.Model(inp, out)
    assert isinstance(model, nn.Model) and model.built
    seq = nn.Sequential([L.Conv2D(3, 3, activation="relu", padding="same",
                                  input_shape=(6, 6, 1)), L.MaxPooling2D(2), L.Flatten(),
                         L.Dense(2)])
    assert model.count_params() == seq.count_params() == 30 + 56
    seq.set_weights(model.get_weights())
    x = RNG.standard_normal((5, 6, 6, 1)).astype(np.float32)
    np.testing.assert_allclose(model(x).numpy(), seq(x).numpy(), rtol=1e-5, atol=1e-6)
    # Keras's model.layers: the input's InputLayer first (a Sequential lists none)
    assert [type(layer).__name__ for layer in model.layers] == [
        "InputLayer", "Conv2D", "MaxPooling2D", "Flatten", "Dense"]
    assert [type(layer).__name__ for layer in seq.layers] == [
        "Conv2D", "MaxPooling2D", "Flatten", "Dense"]
    assert list(model.variables_by_path())[:2] == ["layers/0/kernel", "layers/0/bias"]
    y = (x.sum((1, 2, 3)) > 0).astype(np.int32)
    model.compile("adam", nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    hist = model.fit(x, y, epochs=20, batch_size=5, verbose=0)
    assert hist.history["loss"][-1] < hist.history["loss"][0]
    model.summary(print_fn=lambda text: None)


def test_two_inputs_a_shared_tower_a_lambda_and_a_nested_model():
    inp = nn.Input((4,))
    tower = nn.Model(inp, L.Dense(3, activation="tanh")(inp))
    a, b = nn.Input((4,)), nn.Input((4,))
    dist = L.Lambda(lambda ab: em.reduce_sum(em.square(ab[0] - ab[1]), 1, keepdims=True))(
        [tower(a), tower(b)])
    out = L.Dense(1, activation="sigmoid")(L.BatchNormalization()(dist))
    siamese = nn.Model(inputs=[a, b], outputs=out)
    assert len(siamese.trainable_variables) == 2 + 2 + 2  # the tower once: it is shared
    xa, xb = RNG.standard_normal((2, 8, 4)).astype(np.float32)
    k, c = (v.numpy() for v in tower.trainable_variables)
    d = ((np.tanh(xa @ k + c) - np.tanh(xb @ k + c)) ** 2).sum(1, keepdims=True)
    bn, dense = siamese.layers[-2], siamese.layers[-1]
    want = 1 / (1 + np.exp(-((d / np.sqrt(1 + bn.epsilon)) @ dense.kernel.numpy()
                             + dense.bias.numpy())))
    np.testing.assert_allclose(siamese([xa, xb], training=False).numpy(), want, rtol=1e-4)
    siamese.compile("rmsprop", "binary_crossentropy")
    siamese.fit([xa, xb], np.ones((8, 1), np.float32), batch_size=4, verbose=0)
    assert bn.moving_mean.numpy()[0] != 0  # training=True reached the BatchNormalization
    with pytest.raises(ValueError, match="expects 2 input"):
        siamese(xa)


def test_subclass_called_functionally_keeps_its_methods():
    calls = []

    class Custom(nn.Model):
        def train_step(self, data):
            calls.append(1)
            return super().train_step(*data)

    inp = nn.Input((3,))
    model = Custom(inp, L.Dense(1)(inp))
    assert isinstance(model, Custom) and isinstance(model, nn.Functional)
    model.compile("sgd", "mse", run_eagerly=True)
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 1), np.float32), batch_size=2,
              verbose=0)
    assert len(calls) == 2

    class WithInit(nn.Model):  # its own two arguments are not (inputs, outputs)
        def __init__(self, units, name):
            super().__init__(name=name)
            self.dense = L.Dense(units)

        def call(self, x):
            return self.dense(x)

    assert not isinstance(WithInit(2, "w"), nn.Functional)

    class Wrapped(nn.Model):  # hands (inputs, outputs) to Model.__init__, as Keras allows
        def __init__(self, units):
            inp = nn.Input((3,))
            super().__init__(inp, L.Dense(units)(inp))

    wrapped = Wrapped(5)
    assert isinstance(wrapped, Wrapped) and isinstance(wrapped, nn.Functional)
    assert wrapped(np.ones((2, 3), np.float32)).shape == (2, 5)


def test_an_input_one_axis_short_gets_its_channel_axis_as_in_keras():
    inp = nn.Input((5, 5, 1))
    model = nn.Model(inp, L.Flatten()(inp))
    assert model(np.ones((2, 5, 5), np.float32)).shape == (2, 25)


def test_what_the_functional_api_refuses_says_why():
    inp = nn.Input((3,))
    with pytest.raises(TypeError, match="Lambda"):
        float(inp)  # (operators and ember's functions make nodes: test_op_lambda.py)
    with pytest.raises(TypeError, match="Lambda"):
        np.asarray(inp)
    other = nn.Input((3,))
    with pytest.raises(ValueError, match="disconnected"):
        nn.Model(inp, L.Dense(1)(other))
    with pytest.raises(TypeError, match="nn.Input"):
        nn.Model(L.Dense(1)(inp), L.Dense(1)(inp))
    with pytest.raises(ValueError, match="shape"):
        nn.Input()
    with pytest.raises(ValueError, match="sparse"):
        nn.Input((3,), sparse=True)
    twice = L.Dense(1, name="same")
    with pytest.raises(ValueError, match="named 'same'"):  # a config names each layer once
        nn.Model(inp, L.Add()([twice(inp), L.Dense(1, name="same")(inp)])).get_config()


def test_symbolic_tensors_in_keyword_arguments_are_replayed():
    """An encoder's states handed to a decoder as ``initial_state=`` (working_with_rnns):
    the call's keyword arguments are part of the graph, read with the call's values."""
    enc_in, dec_in = nn.Input(shape=(None, 3)), nn.Input(shape=(None, 2))
    _, h, c = L.LSTM(4, return_state=True)(enc_in)
    decoder = L.LSTM(4)
    out = decoder(dec_in, initial_state=[h, c])
    model = nn.Model([enc_in, dec_in], out)
    enc, dec = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 3, 2))
    got = model([enc, dec]).numpy()
    encoder = next(layer for layer in model.layers if isinstance(layer, L.LSTM))
    _, h2, c2 = encoder(em.constant(enc, dtype="float32"))
    want = decoder(em.constant(dec, dtype="float32"), initial_state=[h2, c2]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    other = model([RNG.standard_normal((2, 5, 3)), dec]).numpy()
    assert not np.allclose(got, other)  # the decoder reads the encoder's states


def test_predict_on_batch_returns_host_arrays_of_one_batch():
    inp = nn.Input(shape=(3,))
    model = nn.Model(inp, [L.Dense(2)(inp), L.Dense(1)(inp)])
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    a, b = model.predict_on_batch(x)
    assert isinstance(a, np.ndarray) and a.shape == (4, 2) and b.shape == (4, 1)
    want = model(x)
    np.testing.assert_allclose(a, want[0].numpy(), rtol=1e-6)


def test_predict_of_several_outputs_is_one_array_per_output():
    # it was the outputs' batches stacked and joined into one (4, 4, 2) array: garbage
    inp = nn.Input(shape=(3,))
    model = nn.Model(inp, [L.Dense(2)(inp), L.Dense(1)(inp)])
    x = RNG.standard_normal((10, 3)).astype(np.float32)
    for batch_size in (4, 5):  # a short last batch, and batches that divide the examples
        a, b = model.predict(x, batch_size=batch_size)
        want = model(x)
        # a batch of 4 and one of 10 may take different BLAS kernels (a few ulps apart;
        # one value near zero was 5e-8 off): the arrays are the outputs', not a mix
        np.testing.assert_allclose(a, want[0].numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(b, want[1].numpy(), rtol=1e-6, atol=1e-7)


def test_a_list_of_one_input_or_output_is_its_tensor_as_in_keras():
    # keras-io's involution: Model(inputs=[inputs], outputs=[outputs]); predict(x)[0] was
    # the whole batch (a list of one array), not the first example: no error
    inp = nn.Input(shape=(3,))
    model = nn.Model(inputs=[inp], outputs=[L.Dense(2)(inp)])
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    assert isinstance(model(x), em.Tensor) and model.input is inp
    assert model.output is model.outputs[0] and model.output_shape == (None, 2)
    got = model.predict(x, batch_size=2, verbose=0)
    assert isinstance(got, np.ndarray) and got.shape == (5, 2)
    np.testing.assert_allclose(got[0], model(x[:1]).numpy()[0], rtol=1e-6)
    assert model.predict_on_batch(x).shape == (5, 2)
    # a loss given as a list of one, or a dict by the output's name (Keras 3 takes both)
    y = RNG.standard_normal((5, 2)).astype(np.float32)
    for loss in (["mse"], {model.output_names[0]: "mse"}):
        model.compile("sgd", loss=loss)
        want = float(np.mean((model.predict(x, verbose=0) - y) ** 2))
        np.testing.assert_allclose(model.evaluate(x, [y], verbose=0), want, rtol=1e-5)
    with pytest.raises(ValueError, match="key 'nothing', which names no output"):
        model.compile("sgd", loss={"nothing": "mse"})


def test_predict_keeps_nested_outputs_nested():
    # keras-io's involution predicts a list of (output, kernel) tuples; ember's predict
    # tried to stack each tuple into one array and failed
    inp = nn.Input(shape=(3,))
    a, b = L.Dense(2)(inp), L.Dense(1)(inp)
    model = nn.Model(inp, [(a, b), {"c": a}])
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    for got in (model.predict(x, batch_size=2, verbose=0), model.predict_on_batch(x)):
        (pa, pb), pc = got
        assert isinstance(got, list) and isinstance(got[0], tuple) and list(pc) == ["c"]
        want = model(x)
        np.testing.assert_allclose(pa, want[0][0].numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(pb, want[0][1].numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(pc["c"], pa, rtol=0)


def test_fit_and_evaluate_refuse_one_target_for_several_outputs():
    # one target and a loss over the stacked outputs would broadcast: a wrong loss, no error
    inp = nn.Input(shape=(3,))
    model = nn.Model(inp, [L.Dense(1)(inp), L.Dense(1)(inp)])
    model.compile(optimizer="sgd", loss=lambda y, p: em.reduce_mean(em.square(y - p)),
                  metrics=["mae"])
    x = RNG.standard_normal((8, 3)).astype(np.float32)
    y = np.zeros((8, 1), np.float32)
    for run in (lambda: model.fit(x, y, verbose=0), lambda: model.evaluate(x, y)):
        with pytest.raises(ValueError, match=r"has 2 outputs \['dense(_\d+)?', "
                                             r"'dense(_\d+)?'\], so its targets are a list "
                                             r"of 2 .* or a dict by output name.*; got one"):
            run()


def test_a_subclassed_model_of_several_outputs_is_refused_by_compile_and_fit():
    class TwoHeads(nn.Model):
        def __init__(self):
            super().__init__()
            self.a, self.b = L.Dense(1), L.Dense(1)

        def call(self, x):
            return [self.a(x), self.b(x)]

    model = TwoHeads()
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x = RNG.standard_normal((8, 3)).astype(np.float32)
    y = np.zeros((8, 1), np.float32)
    with pytest.raises(ValueError, match=r"the compiled loss got 2 outputs \(list\)"):
        model.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match=r"the compiled metrics got 2 outputs"):
        model.compiled_metrics.update_state(y, model(x))


def test_register_keras_serializable_names_a_class_and_refuses_a_second_owner():
    @nn.saving.register_keras_serializable(package="TestFunctional")
    class Scale(L.Layer):
        def call(self, x):
            return x * 3

    assert nn.saving.get_registered_name(Scale) == "TestFunctional>Scale"
    assert nn.saving.get_registered_object("TestFunctional>Scale") is Scale
    assert nn.saving.get_registered_object("TestFunctional>Nope") is None
    assert nn.saving.get_registered_object("x", custom_objects={"x": Scale}) is Scale

    class Other(L.Layer):
        pass

    with pytest.raises(ValueError, match="already registered"):
        nn.saving.register_keras_serializable(package="TestFunctional", name="Scale")(Other)


def test_input_batch_shape_is_batch_size_and_shape_in_one():
    x = nn.Input(batch_shape=(16, 10, 5), name="seq")
    assert x.shape == (16, 10, 5) and x.name == "seq"
    with pytest.raises(ValueError, match="give batch_shape= or shape= .*not both"):
        nn.Input(shape=(3,), batch_shape=(1, 3))
    with pytest.raises(ValueError, match="batch_shape= needs the batch axis first"):
        nn.Input(batch_shape=())


def test_a_layer_is_built_with_the_mask_its_symbolic_input_carries():
    """keras-io's Transformer encoder reads ``mask`` in call and fails without one: Keras
    builds it with the mask the Embedding's symbolic output carries, and so does ember
    (it was built with none)."""
    seen = []

    class NeedsMask(L.Layer):
        def __init__(self):
            super().__init__()
            self.supports_masking = True

        def call(self, inputs, mask=None):
            seen.append(None if mask is None else tuple(mask.shape))
            return inputs * em.expand_dims(em.cast(mask, inputs.dtype), -1)

    ids = nn.Input(shape=(4,), dtype="int32")
    out = NeedsMask()(L.Embedding(10, 3, mask_zero=True)(ids))
    assert seen == [(1, 4)]  # at build: zeros of batch 1, their mask
    model = nn.Model(ids, L.GlobalAveragePooling1D()(out))
    x = np.array([[1, 2, 0, 0], [3, 0, 0, 0]])
    got = model.predict(x, verbose=0)
    assert seen[-1] == (2, 4)
    table = model.layers[1].embeddings.numpy()  # (after the input's InputLayer)
    keep = x != 0
    want = (table[x] * keep[..., None]).sum(1) / keep.sum(1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_input_and_output_are_the_model_s_as_given():
    """Keras's ``model.input``/``model.output`` of a functional model: its inputs and
    outputs, one tensor or a list as given (keras-io's lstm_seq2seq reads model.input[0]
    and model.layers[2].output of a loaded model to build its inference models)."""
    a, b = nn.Input((3,)), nn.Input((2,))
    y = L.Dense(1)(L.Concatenate()([a, b]))
    two = nn.Model([a, b], y)
    assert two.input == [a, b] and two.input[0] is a and two.output is y
    one = nn.Model(a, [L.Dense(2)(a), L.Dense(1)(a)])
    assert one.input is a and len(one.output) == 2
    assert [type(layer).__name__ for layer in two.layers] == [
        "InputLayer", "InputLayer", "Concatenate", "Dense"]
    assert two.layers[0].output is a and two.layers[1].output is b
    sub = nn.Model(two.input, two.layers[2].output)  # the Concatenate's output
    assert sub([np.ones((4, 3), np.float32), np.ones((4, 2), np.float32)]).shape == (4, 5)


def test_inputs_are_converted_to_their_input_dtype_as_keras():
    # Keras 3's Functional converts each input to its Input's dtype: a float64 array into
    # a float32 model stays float32 through operation nodes, which cast nothing themselves
    # (ember returned float64 before: a promotion nobody asked for); a float array into an
    # int32 Input truncates, as Keras 3.15 gave (int32, 2 for 1.7 * 2)
    inp = nn.Input((3,))
    model = nn.Model(inp, 1.0 - inp * 2.0)
    out = model(np.full((2, 3), 0.25))
    assert out.dtype == em.float32
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 0.5, np.float32))
    ints = nn.Input((3,), dtype="int32")
    out = nn.Model(ints, ints * 2)(np.full((2, 3), 1.7))
    assert out.dtype == em.int32 and out.numpy().tolist() == [[2, 2, 2]] * 2
    assert nn.Model(inp, inp * 2.0).predict(np.ones((4, 3)), verbose=0).dtype == np.float32


def test_an_axis_of_unknown_size_stays_unknown_through_the_layers():
    # the layers are built on zeros of size 1 for each unknown axis; an output axis that
    # follows one was recorded as 1 (an LSTM over (None, 8) gave (None, 1, 4), and the
    # summary said so). Keras's shapes: None there, known sizes kept.
    inp = nn.Input((None, 8))
    seq = nn.layers.LSTM(4, return_sequences=True)(inp)
    last = nn.layers.LSTM(3)(seq)
    dense = nn.layers.Dense(2)(seq)
    assert (seq.shape, last.shape, dense.shape) == ((None, None, 4), (None, 3),
                                                    (None, None, 2))
    ids = nn.Input((None,), dtype="int32")
    embedded = nn.layers.Embedding(10, 4, mask_zero=True)(ids)  # its mask widens too
    assert embedded.shape == (None, None, 4)
    assert nn.layers.LSTM(5, return_sequences=True)(embedded).shape == (None, None, 5)
    fixed = nn.layers.Reshape((2, 4))(nn.Input((8,)))  # nothing unknown: one probe
    assert fixed.shape == (None, 2, 4)
    model = nn.Model(inp, [dense, last])
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "(None, None, 8)" in text and "(None, None, 4)" in text and "(None, 3)" in text
    out = model(np.zeros((2, 5, 8), np.float32))  # and it runs at any length
    assert tuple(out[0].shape) == (2, 5, 2)


# Keras 3.15's output shapes for these layers on inputs with unknown axes (run there)
UNKNOWN_AXES = [
    (lambda L: L.MaxPooling1D(4), (None, 3), (None, None, 3)),
    (lambda L: L.Conv1D(2, 1, strides=2, padding="same"), (None, 3), (None, None, 2)),
    (lambda L: L.Conv1D(3, 3), (None, 10), (None, None, 3)),
    (lambda L: L.Conv2D(4, 3, strides=2, padding="same"), (None, None, 3),
     (None, None, None, 4)),
    (lambda L: L.Conv2D(4, 3), (None, 8, 3), (None, None, 6, 4)),
    (lambda L: L.AveragePooling2D(4), (None, None, 3), (None, None, None, 3)),
    (lambda L: L.Conv1D(3, 5, dilation_rate=2), (None, 4), (None, None, 3)),
    (lambda L: L.Conv2DTranspose(2, 3, strides=2), (None, None, 3), (None, None, None, 2)),
]


@pytest.mark.parametrize(("make", "shape", "want"), UNKNOWN_AXES)
def test_an_unknown_axis_stays_unknown_through_windows_and_strides(make, shape, want):
    # probes at sizes 1 and 2 failed on windows longer than one step, and met under a
    # stride of 2 ("same": both give 1) or a pool of 4, where the axis then looked fixed
    assert make(nn.layers)(nn.Input(shape)).shape == want


def test_a_model_on_unknown_lengths_runs_on_any_length():
    x = nn.Input((None, 10))
    y = nn.layers.GlobalMaxPooling1D()(nn.layers.Conv1D(3, 3)(x))
    model = nn.Model(x, nn.layers.Dense(2)(y))
    for steps in (3, 7, 40):
        assert model(np.ones((2, steps, 10), np.float32)).shape == (2, 2)
    with pytest.raises(em.InvalidArgumentError, match="larger than the padded input"):
        model(np.ones((2, 2, 10), np.float32))  # shorter than the window: refused at run


def test_the_models_training_flag_wins_over_one_recorded_at_a_call():
    # Keras 3 records training=True in its random image layers' nodes; predict and
    # evaluate call the model with training=False, which must win (ember augmented)
    i = nn.Input((4, 4, 1))
    out = nn.layers.GaussianNoise(1.0, seed=1)(i, training=True)
    model = nn.Model(i, out)
    x = np.full((3, 4, 4, 1), 0.25, np.float32)
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    np.testing.assert_array_equal(model(x, training=False).numpy(), x)
    assert np.abs(model(x).numpy() - x).max() > 0  # no flag given: the recorded one stands


def test_a_call_recorded_in_inference_mode_stays_there_when_the_model_trains():
    # keras-io's transfer-learning guide: base_model(inputs, training=False) keeps its
    # BatchNormalization in inference mode through fit (tf.keras did; Keras 3.15 does not,
    # keras-team/keras#20285, against its own guide)
    i = nn.Input((3,))
    bn = nn.layers.BatchNormalization()
    model = nn.Model(i, nn.layers.Dense(1)(bn(i, training=False)))
    model.compile("adam", "mse")
    x = np.random.default_rng(0).random((32, 3)).astype(np.float32) * 5
    model.fit(x, x[:, :1], epochs=1, verbose=0)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(3))


def test_summary_shows_keras_s_connected_to_column_for_a_graph_that_is_not_a_chain():
    lines = []
    a, b = nn.Input(shape=(3,), name="a"), nn.Input(shape=(2,), name="b")
    shared = L.Dense(2, name="shared")
    merged = L.concatenate([shared(L.Dense(2, name="da")(a)), b], name="merged")
    model = nn.Model([a, b], [L.Dense(1, name="out")(merged), shared(merged[:, :2])])
    model.summary(print_fn=lines.append)
    text = lines[0].splitlines()
    assert text[2].split() == ["Layer", "(type)", "Output", "Shape", "Param", "#",
                               "Connected", "to"]
    rows = {line.split()[0]: line for line in text[4:-5]}
    assert rows["merged"].endswith("shared[0][0], b[0][0]")
    assert rows["out"].endswith("merged[0][0]")
    # two calls: both listed (the indexing node's name takes a number per session)
    assert re.search(r"da\[0\]\[0\], getitem(_\d+)?\[0\]\[0\]$", rows["shared"])
    assert rows["a"].endswith("0")  # an input reads nothing
    chain = nn.Model(a, L.Dense(1)(L.Dense(2)(a)))
    chain.summary(print_fn=lines.append)
    assert "Connected to" not in lines[1]  # a chain: Keras's three columns
    # a name longer than its column shifts the row's other cells, which stay apart
    i = nn.Input((4, 3), name="i")
    x = L.BatchNormalization(name="a_rather_long_layer_name_indeed")(i)
    nn.Model(i, L.Add()([x, i])).summary(print_fn=lines.append)
    row = next(r for r in lines[-1].splitlines() if r.startswith("a_rather"))
    assert row.split()[-2:] == ["12", "i[0][0]"], row


def test_a_users_build_gets_the_symbolic_shape_with_a_none_batch_as_in_keras():
    # ember built a layer by running it on zeros of batch 1, so build() saw (1, 3): a
    # build that sized a weight by the batch axis made another model than Keras's
    seen = []

    class PerExample(L.Layer):
        def build(self, input_shape):
            seen.append(tuple(input_shape))
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="ones")

        def call(self, x):
            return em.matmul(x, self.w)

    out = PerExample()(nn.Input((None, 5)))
    assert seen == [(None, None, 5)] and out.shape == (None, None, 2)
    model = nn.Model(*(lambda i: (i, PerExample()(i)))(nn.Input((3,))))
    assert seen[-1] == (None, 3)
    np.testing.assert_allclose(model(np.ones((4, 3), np.float32)).numpy(), np.full((4, 2), 3.0))

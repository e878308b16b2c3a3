"""compile/fit/evaluate/predict and callbacks."""

import importlib.util

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape


def _data(n=256, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    return x, y


def _model():
    return nn.Sequential([nn.layers.Dense(16, activation="relu", input_shape=(4,)),
                          nn.layers.Dropout(0.1), nn.layers.Dense(2)])


def test_fit_over_an_iterable_of_batches_with_callbacks(capsys):
    x, y = _data()
    batches = [(x[i:i + 32], y[i:i + 32]) for i in range(0, len(x), 32)]
    model = _model()
    model.compile(nn.optimizers.Adam(0.01),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    seen = []

    class Recorder(nn.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append((epoch, dict(logs)))

        def on_train_batch_end(self, batch, logs=None):
            assert "loss" in logs

    hist = model.fit(batches, epochs=5, callbacks=[Recorder()], verbose=1)
    assert [e for e, _ in seen] == [0, 1, 2, 3, 4]
    assert hist.history["loss"][-1] < hist.history["loss"][0]
    assert hist.history["accuracy"][-1] > 0.9
    if importlib.util.find_spec("tqdm") is not None:  # the bar is tqdm's (none without it)
        assert "epoch 5/5" in capsys.readouterr().err
    res = model.evaluate(batches, return_dict=True)
    assert set(res) == {"loss", "accuracy"} and res["accuracy"] > 0.9
    loss, acc = model.evaluate(batches)  # a list by default, as Keras
    assert loss == res["loss"] and acc == res["accuracy"]
    pred = model.predict(batches)
    assert pred.shape == (256, 2)


def test_fit_with_arrays_validation_and_stop_training():
    x, y = _data()
    model = _model()
    model = nn.Sequential([nn.layers.Dense(16, activation="relu", input_shape=(4,)),
                           nn.layers.Dense(2, activation="softmax")])
    model.compile("sgd", nn.losses.sparse_categorical_crossentropy)  # per example, probs
    stopper = nn.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: setattr(model, "stop_training", epoch == 1))
    hist = model.fit(x, y, batch_size=64, epochs=10, verbose=0, shuffle=True,
                     validation_data=[(x, y)], callbacks=[stopper])
    assert len(hist.history["loss"]) == 2
    assert "val_loss" in hist.history
    assert model.predict(x, batch_size=100).shape == (256, 2)


def test_fit_requires_compile():
    with pytest.raises(RuntimeError, match="compile"):
        _model().fit([(np.zeros((1, 4), np.float32), np.zeros(1, np.int32))], verbose=0)


def test_dropout_active_only_in_fit():
    x, y = _data(64)
    model = nn.Sequential([nn.layers.Dropout(0.99), nn.layers.Dense(2)])
    model.compile("sgd", "sparse_categorical_crossentropy")
    a = model.predict(x)
    b = model.predict(x)
    np.testing.assert_array_equal(a, b)
    assert model(em.constant(x), training=True).numpy().std() != a.std()


def test_minimize_without_var_list_leaves_a_frozen_layer_alone():
    import numpy as np

    import ember.core as em
    from ember import nn

    em.random.set_seed(0)
    frozen = nn.layers.Dense(4, input_shape=(3,))
    head = nn.layers.Dense(1)
    model = nn.Sequential([frozen, head])
    x, y = em.random.normal([8, 3]), em.random.normal([8, 1])
    model(x)
    frozen.trainable = False
    before = [v.numpy().copy() for v in frozen.variables]
    head_before = [v.numpy().copy() for v in head.variables]
    opt = nn.optimizers.SGD(0.1)
    opt.minimize(lambda: nn.losses.mean_squared_error(y, model(x)))
    for b, v in zip(before, frozen.variables):
        np.testing.assert_array_equal(v.numpy(), b)
    assert any(not np.array_equal(v.numpy(), b) for b, v in zip(head_before, head.variables))
    frozen.trainable = True
    opt.minimize(lambda: nn.losses.mean_squared_error(y, model(x)))
    assert any(not np.array_equal(v.numpy(), b) for b, v in zip(before, frozen.variables))


def test_fit_arguments_that_cannot_apply_are_errors_not_ignored():
    x, y = _data(64)
    batches = [(x[i:i + 32], y[i:i + 32]) for i in range(0, 64, 32)]
    model = _model()
    model.compile("sgd", nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(ValueError, match="batch_size"):
        model.fit(batches, batch_size=16, verbose=0)
    with pytest.raises(ValueError, match="shuffle"):
        model.fit(batches, shuffle=True, verbose=0)
    with pytest.raises(ValueError, match="batch_size"):
        model.evaluate(batches, batch_size=16)
    with pytest.raises(ValueError, match="verbose"):
        model.fit(batches, verbose=3)


def test_fit_shuffles_arrays_by_default_as_keras(capsys):
    x, y = _data(64)
    seen = []

    class Recorder(nn.Sequential):
        def train_step(self, bx, by, sw=None):
            seen.append(np.asarray(bx)[:, 0].copy())
            return {"loss": 0.0}

    model = Recorder([nn.layers.Dense(2, input_shape=(4,))])
    model.compile("sgd", "mse")
    model.fit(x, y, batch_size=64, epochs=1, verbose=2)
    assert not np.array_equal(seen[0], x[:, 0])
    np.testing.assert_array_equal(np.sort(seen[0]), np.sort(x[:, 0]))
    model.fit(x, y, batch_size=64, epochs=1, verbose=0, shuffle=False)
    np.testing.assert_array_equal(seen[1], x[:, 0])
    assert "epoch 1/1 - loss: 0.0000" in capsys.readouterr().out


def test_keras_style_train_step_override_with_compiled_loss_and_metrics():
    x, y = _data(64)

    class Custom(nn.Model):
        def __init__(self):
            super().__init__()
            self.dense = nn.layers.Dense(2)
            self.steps = 0

        def call(self, inputs):
            return self.dense(inputs)

        def train_step(self, data):
            bx, by = data
            with tape.GradientTape() as t:
                pred = self(bx, training=True)
                loss = self.compiled_loss(by, pred, regularization_losses=self.losses)
            grads = t.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.compiled_metrics.update_state(by, pred)
            self.steps += 1
            return {m.name: m.result() for m in self.metrics}

        def evaluate_batch(self, data):
            bx, by = data
            pred = self(bx, training=False)
            self.compiled_loss(by, pred)
            self.compiled_metrics.update_state(by, pred)
            return {m.name: m.result() for m in self.metrics}

        test_step = evaluate_batch  # Keras's override (a name pytest does not collect)

    runs = []
    for run_eagerly in (True, False):
        em.random.set_seed(3)
        model = Custom()
        model.compile(nn.optimizers.Adam(0.05),
                      nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"], run_eagerly=run_eagerly)
        hist = model.fit(x, y, batch_size=16, epochs=4, verbose=0)
        assert model.metrics_names == ["loss", "accuracy"]
        assert hist.history["loss"][-1] < hist.history["loss"][0]
        assert model.evaluate(x, y, return_dict=True)["accuracy"] > 0.8
        runs.append((model.steps, hist.history))
    # Eagerly the override's Python runs every step; traced (the default, as Keras's
    # tf.function) only while tracing: the first step, which builds the optimizer's slots,
    # and the second, which traces. The training is the same.
    assert runs[0][0] == 16 and runs[1][0] == 2
    assert runs[0][1] == runs[1][1]


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_predict_runs_an_overridden_predict_step_as_keras(run_eagerly):
    # keras-io's GAT: predict_step gathers and softmaxes the call's output; predict called
    # the model itself and skipped the override: other numbers, no error
    class Scaled(nn.Model):
        def __init__(self):
            super().__init__()
            self.dense = nn.layers.Dense(2)

        def call(self, inputs):
            a, b = inputs
            return self.dense(a - b)

        def predict_step(self, data):
            (a, b), = data  # several inputs come packed in a tuple, as Keras packs them
            return em.nn_ops.softmax(self((a, b)) * 3.0)

    model = Scaled()
    model.run_eagerly = run_eagerly
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((5, 3)).astype(np.float32) for _ in range(2))
    logits = model((a, b)).numpy() * 3.0
    want = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(model.predict((a, b), batch_size=2, verbose=0), want,
                               rtol=1e-5)
    np.testing.assert_allclose(model.predict_on_batch((a, b)), want, rtol=1e-5)

    class One(nn.Sequential):
        def predict_step(self, data):  # one input: the batch itself
            return em.argmax(self(data), axis=-1)

    one = One([nn.layers.Dense(3)])
    x = rng.standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_array_equal(one.predict(x, verbose=0), one(x).numpy().argmax(-1))


def test_fit_sets_model_history_as_keras():
    model = nn.Sequential([nn.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((4, 2), np.float32), np.zeros((4, 1), np.float32)
    history = model.fit(x, y, epochs=2, verbose=0)
    assert model.history is history and len(model.history.history["loss"]) == 2
    assert "history" not in [p.split("/")[0] for p in model._ember_variables_by_path()]


def test_compile_without_loss_minimises_add_loss_and_weightless_models_fit():
    class Shrink(nn.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", (input_shape[-1],), initializer="ones")

        def call(self, inputs):
            self.add_loss(em.reduce_sum(em.square(self.w)))
            return inputs * self.w

    class ActivityLoss(nn.layers.Layer):
        def call(self, inputs):
            self.add_loss(em.reduce_mean(inputs))
            return inputs

    x = np.ones((8, 3), np.float32)
    model = nn.Sequential([Shrink(input_shape=(3,))])
    model.compile(nn.optimizers.SGD(0.1))
    model.fit(x, x, batch_size=8, epochs=3, verbose=0)
    np.testing.assert_allclose(model.layers[0].w.numpy(), 0.8 ** 3, rtol=1e-5)
    weightless = nn.Sequential([ActivityLoss(input_shape=(3,))])
    weightless.compile("adam", loss="mse")
    hist = weightless.fit(x, x, batch_size=8, epochs=1, verbose=0)
    np.testing.assert_allclose(hist.history["loss"], [1.0], rtol=1e-6)  # mse 0 + mean 1
    nothing = nn.Sequential([nn.layers.Dense(1, input_shape=(3,))])
    nothing.compile("sgd")
    with pytest.raises(ValueError, match="add_loss"):
        nothing.fit(x, x[:, :1], batch_size=8, verbose=0)


def test_validation_split_holds_out_the_last_examples():
    x, y = _data(100)
    seen = []

    class Recorder(nn.Sequential):
        def recording_step(self, bx, by=None, sw=None):
            seen.append(np.asarray(bx).copy())
            return super().test_step(bx, by, sw)

        test_step = recording_step  # evaluate's hook (a name pytest does not collect)

    model = Recorder([nn.layers.Dense(2, input_shape=(4,))])
    model.compile("sgd", nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    hist = model.fit(x, y, batch_size=100, epochs=1, verbose=0, validation_split=0.2)
    np.testing.assert_array_equal(np.concatenate(seen), x[80:])
    assert "val_loss" in hist.history
    # the split index is rounded down, as Keras's: 0.8 of 101 trains on 80, validates 21
    # (FordA's 3,601 series train on 2,880; rounding would have moved one across)
    seen.clear()
    x1, y1 = _data(101)
    model.fit(x1, y1, batch_size=101, epochs=1, verbose=0, validation_split=0.2)
    np.testing.assert_array_equal(np.concatenate(seen), x1[80:])
    with pytest.raises(ValueError, match="validation_split"):
        model.fit([(x, y)], epochs=1, verbose=0, validation_split=0.2)
    assert isinstance(model.evaluate(x, y), float)  # only the loss: a scalar, as Keras


def test_output_shape_and_from_config():
    model = nn.Sequential([nn.layers.Dense(4, input_shape=(3,))])
    assert model.output_shape == (None, 4)
    model.add(nn.layers.Reshape((2, 2)))
    assert model.output_shape == (None, 2, 2) and model.layers[0].output_shape == (None, 4)
    with pytest.raises(AttributeError, match="not been called"):
        _ = nn.layers.Dense(2).output_shape

    class Linear(nn.layers.Layer):
        def __init__(self, units=32, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    config = Linear(64, name="lin").get_config()
    again = Linear.from_config(config)
    assert again.units == 64 and again.get_config() == config


def test_fit_and_evaluate_take_per_example_sample_weight_arrays():
    rng = np.random.default_rng(0)
    x = rng.random((40, 3)).astype(np.float32)
    y = rng.random((40, 1)).astype(np.float32)
    sw = np.zeros((40, 1), np.float32)
    sw[:20] = 1.0
    model = nn.Sequential([nn.layers.Dense(1, input_shape=(3,))])
    model.compile(nn.optimizers.SGD(0.0), "mse", metrics=["mae"], weighted_metrics=["mae"])
    pred = model.predict(x)
    per = ((pred - y) ** 2).mean(-1)
    loss, mae, weighted_mae = model.evaluate(x, y, sample_weight=sw, batch_size=40)
    np.testing.assert_allclose(loss, (per * sw[:, 0]).sum() / 40, rtol=1e-5)
    np.testing.assert_allclose(mae, np.abs(pred - y).mean(), rtol=1e-5)  # Keras 3: unweighted
    np.testing.assert_allclose(weighted_mae, np.abs(pred - y)[:20].mean(), rtol=1e-5)
    hist = model.fit(x, y, sample_weight=sw, batch_size=40, epochs=1, verbose=0,
                     shuffle=False)
    np.testing.assert_allclose(hist.history["loss"], [(per * sw[:, 0]).sum() / 40], rtol=1e-5)
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit([(x, y)], sample_weight=sw, verbose=0)


def test_validation_keeps_its_sample_weights():
    # validation_split held the weights out with the examples but dropped them, so val_loss
    # was unweighted while loss was weighted; (x, y, sample_weight) was read as 3 inputs
    rng = np.random.default_rng(1)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    y = rng.standard_normal((40, 1)).astype(np.float32)
    w = np.linspace(0.0, 2.0, 40).astype(np.float32)
    model = nn.Sequential([nn.layers.Dense(1, input_shape=(3,))])
    model.compile(nn.optimizers.SGD(0.0), "mse")  # no update: the same model throughout
    pred = model.predict(x)
    weighted = float((((pred - y) ** 2).mean(-1) * w)[30:].sum() / 10)
    split = model.fit(x, y, batch_size=8, verbose=0, validation_split=0.25, sample_weight=w)
    given = model.fit(x[:30], y[:30], batch_size=8, verbose=0,
                      validation_data=(x[30:], y[30:], w[30:]))
    for hist in (split, given):
        np.testing.assert_allclose(hist.history["val_loss"], [weighted], rtol=1e-5)


def test_a_step_with_its_own_losses_reports_no_compiled_loss_it_never_computed():
    # Keras lists the loss tracker once compiled_loss has run; a distiller-style step that
    # computes its own losses (compile without loss) must not report "loss": 0.0.
    x, y = _data(32)

    class OwnLoss(nn.Sequential):
        def train_step(self, data):
            bx, by = data
            with tape.GradientTape() as t:
                pred = self(bx, training=True)
                own = nn.losses.sparse_categorical_crossentropy(by, pred, from_logits=True)
                own = em.reduce_mean(own)
            grads = t.gradient(own, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.compiled_metrics.update_state(by, pred)
            return {**{m.name: m.result() for m in self.metrics}, "own_loss": own}

    model = OwnLoss([nn.layers.Dense(2, input_shape=(4,))])
    model.compile("adam", metrics=[nn.metrics.SparseCategoricalAccuracy()])
    hist = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    assert set(hist.history) == {"sparse_categorical_accuracy", "own_loss"}, hist.history
    assert model.metrics_names == ["sparse_categorical_accuracy"]
    # a compiled loss is tracked as before, and add_loss alone is tracked once it ran
    model.compile("adam", loss=nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert model.metrics_names == ["loss"]


def test_metric_classes_take_keras_default_names():
    names = {cls: cls().name for cls in (nn.metrics.SparseCategoricalAccuracy,
                                         nn.metrics.CategoricalAccuracy,
                                         nn.metrics.BinaryAccuracy,
                                         nn.metrics.MeanAbsoluteError, nn.metrics.Mean)}
    assert list(names.values()) == ["sparse_categorical_accuracy", "categorical_accuracy",
                                    "binary_accuracy", "mean_absolute_error", "mean"]


class _TwoInputs(nn.Model):
    """out = dense(a - b): a model with two inputs, called on a list as Keras's."""

    def __init__(self):
        super().__init__()
        self.dense = nn.layers.Dense(1)

    def call(self, inputs):
        a, b = inputs
        return self.dense(a - b)


def test_fit_evaluate_and_predict_take_a_list_of_input_arrays():
    # Keras: fit([x1, x2], y) batches each input alike; ember took the list for one array
    # of two rows (or for an iterable of two batches in predict)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 40, 3)).astype(np.float32)
    y = (a - b).sum(-1, keepdims=True)
    model = _TwoInputs()
    model.compile(nn.optimizers.SGD(0.1), loss="mse")
    hist = model.fit([a, b], y, batch_size=8, epochs=5, verbose=0,
                     validation_data=([a[:8], b[:8]], y[:8]))
    assert hist.history["loss"][-1] < 0.5 * hist.history["loss"][0], hist.history
    pred = model.predict([a, b], batch_size=16)
    assert pred.shape == (40, 1)
    np.testing.assert_allclose(pred, model([a, b]).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.evaluate([a, b], y, batch_size=40),
                               np.mean((pred - y) ** 2), rtol=1e-4)
    np.testing.assert_allclose(hist.history["val_loss"][-1],
                               np.mean((pred[:8] - y[:8]) ** 2), rtol=1e-4)
    split = model.fit([a, b], y, batch_size=8, epochs=1, verbose=0, validation_split=0.25)
    assert "val_loss" in split.history
    with pytest.raises(ValueError, match="different numbers of examples"):
        model.fit([a, b[:30]], y, verbose=0)


def test_a_custom_loss_gets_labels_of_the_predictions_rank_as_in_keras():
    # Keras expands labels (N,) to (N, 1) for predictions (N, 1) before calling the loss; a
    # loss written as reduce_mean(y_true * y_pred) would otherwise broadcast to (N, N)
    seen = []

    def product(y_true, y_pred):
        seen.append(tuple(y_true.shape))
        return em.reduce_mean(y_true * y_pred)

    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    y = np.array([1.0, 0.0, 1.0, 0.0], np.float32)
    model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", loss=product)
    got = model.evaluate(x, y, batch_size=4)
    assert seen[-1] == (4, 1)
    np.testing.assert_allclose(got, np.mean(y[:, None] * model.predict(x)), rtol=1e-5)


@pytest.mark.parametrize("make", [
    lambda: nn.layers.Conv2D(3, 3, activation="relu", padding="same"),
    lambda: nn.layers.Conv2DTranspose(2, 3, strides=2, activation="sigmoid", padding="same"),
    lambda: nn.layers.LeakyReLU(alpha=0.05),
    lambda: nn.layers.Dense(4, activation="tanh", use_bias=False),
    lambda: nn.layers.BatchNormalization(momentum=0.5, epsilon=0.1),
    lambda: nn.layers.Lambda(lambda v: v * 3.0),
], ids=["Conv2D", "Conv2DTranspose", "LeakyReLU", "Dense", "BatchNormalization", "Lambda"])
def test_from_config_of_get_config_computes_what_the_layer_computes(make):
    # get_config kept only name/trainable/dtype for most layers, so from_config built the
    # layer with default arguments: relu -> linear, alpha 0.05 -> 0.3, momentum -> 0.99
    x = np.random.default_rng(0).standard_normal((2, 6, 6, 3)).astype(np.float32) * 3
    layer = make()
    want = layer(x, training=True).numpy()
    clone = type(layer).from_config(layer.get_config())
    clone(x)  # builds
    clone.set_weights(layer.get_weights() if not isinstance(layer, nn.layers.BatchNormalization)
                      else [np.ones(3), np.zeros(3), np.zeros(3), np.ones(3)])
    if isinstance(layer, nn.layers.BatchNormalization):
        fresh = make()
        fresh(x, training=True)
        clone(x, training=True)
        for a, b in zip(fresh.get_weights(), clone.get_weights()):
            np.testing.assert_allclose(a, b, rtol=1e-5)  # the moving averages use momentum
        want = fresh(x, training=False).numpy()
        np.testing.assert_allclose(clone(x, training=False).numpy(), want, rtol=1e-5)
        return
    np.testing.assert_allclose(clone(x, training=True).numpy(), want, rtol=1e-5)


def test_fit_evaluate_and_predict_take_kerass_arguments_in_kerass_order():
    x, y = _data(40)
    model = nn.Sequential([nn.layers.Dense(2, input_shape=(4,))])
    model.compile("sgd", nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    seen = []

    class Count(nn.callbacks.Callback):
        def on_test_batch_end(self, batch, logs=None):
            seen.append(batch)

    # positionally, as Keras: ..., callbacks, validation_split, validation_data, shuffle
    hist = model.fit(x, y, 8, 4, 0, [Count()], 0.25, None, False,
                     validation_freq=2, validation_batch_size=4, validation_steps=2)
    assert len(hist.history["loss"]) == 4 and len(hist.history["val_loss"]) == 2
    assert seen == [0, 1, 0, 1]  # epochs 2 and 4, two batches of 4 each
    seen.clear()
    model.fit(x, y, batch_size=8, epochs=3, verbose=0, validation_data=(x, y),
              validation_freq=[1, 3], callbacks=[Count()])
    assert seen == [0, 1, 2, 3, 4] * 2
    seen.clear()
    loss = model.evaluate(x, y, 8, 0, None, 2, [Count()])  # ..., sample_weight, steps
    assert seen == [0, 1] and isinstance(loss, float)
    assert model.predict(x, 8, 0, 3).shape == (24, 2)  # ..., verbose, steps
    for kw, match in (({"validation_freq": 0}, "validation_freq"),
                      ({"validation_freq": "2"}, "validation_freq"),
                      ({"validation_steps": 0}, "validation_steps"),
                      ({"steps_per_epoch": -1}, "steps_per_epoch")):
        with pytest.raises(ValueError, match=match):
            model.fit(x, y, batch_size=8, verbose=0, validation_data=(x, y), **kw)
    with pytest.raises(ValueError, match="validation_batch_size applies to validation arrays"):
        model.fit(x, y, batch_size=8, verbose=0, validation_data=[(x, y)],
                  validation_batch_size=4)
    with pytest.raises(ValueError, match="steps must be"):
        model.evaluate(x, y, steps=0, verbose=0)


class _Batches:
    """Ten batches, each tagged by its number in x; records what fit drew."""

    def __init__(self, n=10):
        self.n, self.drawn = n, []

    def __iter__(self):
        for i in range(self.n):
            self.drawn.append(i)
            yield np.full((2, 3), i, np.float32), np.zeros((2, 2), np.float32)


def test_steps_per_epoch_goes_on_through_the_data_as_keras():
    model = nn.Sequential([nn.layers.Input((3,)), nn.layers.Dense(2)])
    model.compile("sgd", "mse")
    data = _Batches()
    with pytest.warns(UserWarning, match="ran out after 1 of this epoch's steps_per_epoch=3"):
        history = model.fit(data, epochs=5, steps_per_epoch=3, verbose=0)
    # 0-2, 3-5, 6-8, then 9 (the data ran out: the epoch ends), then a new pass
    assert data.drawn == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2]
    assert len(history.history["loss"]) == 5
    data = _Batches(6)  # a pass that ends with an epoch: the next starts anew, silently
    model.fit(data, epochs=3, steps_per_epoch=3, verbose=0)
    assert data.drawn == [0, 1, 2, 3, 4, 5, 0, 1, 2]
    data = _Batches()  # without steps_per_epoch: a pass an epoch
    model.fit(data, epochs=2, verbose=0)
    assert data.drawn == list(range(10)) * 2
    with pytest.raises(ValueError, match="gave no batches"):
        model.fit(_Batches(0), epochs=1, steps_per_epoch=2, verbose=0)


def test_a_train_step_given_only_x_gets_x_itself_as_keras_packs_it():
    seen = []

    class Auto(nn.Model):
        def __init__(self):
            super().__init__()
            self.dense = nn.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            seen.append(type(data))
            with tape.GradientTape() as t:
                loss = em.reduce_mean(em.square(self(data) - 1.0))
            grads = t.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}

    model = Auto()
    model.compile("sgd")
    model.fit(np.zeros((8, 2), np.float32), batch_size=4, epochs=1, verbose=0)
    assert seen and all(t is em.Tensor for t in seen), seen  # was a 1-tuple (x,)
    assert model.predict(np.zeros((8, 2), np.float32), batch_size=4, verbose=0).shape == (8, 1)


def test_a_metric_of_several_results_logs_an_array_as_keras(tmp_path):
    model = nn.Sequential([nn.layers.Dense(3, activation="softmax", input_shape=(4,))])
    model.compile("sgd", "categorical_crossentropy",
                  metrics=[nn.metrics.Precision(thresholds=[0.3, 0.6])])
    x = np.ones((8, 4), np.float32)
    y = np.eye(3, dtype=np.float32)[np.arange(8) % 3]
    log = tmp_path / "log.csv"
    history = model.fit(x, y, epochs=2, verbose=2, callbacks=[
        nn.callbacks.CSVLogger(str(log)),
        nn.callbacks.TensorBoard(str(tmp_path / "tb"))])
    values = history.history["precision"]
    assert len(values) == 2 and all(np.shape(v) == (2,) for v in values)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert np.shape(logs["precision"]) == (2,)
    assert '"[' in log.read_text()  # Keras's CSV form of an array


def test_a_per_example_add_loss_counts_as_its_sum_logged_and_trained_as_keras_3():
    # Keras 3's _aggregate_additional_loss sums each extra loss: batches [1..4] and [5]
    # give 10 and 5, weighted by their sizes: (4 * 10 + 1 * 5) / 5 = 9 (ember logged 45/17)
    class AddLoss(nn.layers.Layer):
        def call(self, x):
            self.add_loss(x)
            return x

    inp = nn.Input(shape=(1,))
    model = nn.Model(inp, AddLoss()(inp))
    model.compile(optimizer="sgd")
    x = np.arange(1, 6, dtype="float32").reshape(5, 1)
    assert model.evaluate(x, batch_size=4, verbose=0) == pytest.approx(9.0)
    # and the step minimises that sum: d(sum(w * x))/dw = sum(x)
    w = em.Variable(1.0)

    class Scaled(nn.layers.Layer):
        def call(self, x):
            self.add_loss(w * x)
            return x

    inp = nn.Input(shape=(1,))
    scaled = nn.Model(inp, Scaled()(inp))
    scaled.w = w
    scaled.compile(optimizer=nn.optimizers.SGD(0.1))
    scaled.fit(x, batch_size=5, epochs=1, verbose=0)
    assert float(w) == pytest.approx(1.0 - 0.1 * 15.0)


def test_a_custom_train_step_returning_the_tracked_loss_logs_the_epoch_mean():
    # Keras 3's _get_metrics_result_or_logs: step logs naming exactly the model's metrics
    # are replaced by the metrics' results at the epoch's end (ember kept the last batch)
    class Custom(nn.Model):
        def __init__(self):
            super().__init__()
            self.d = nn.layers.Dense(1)

        def call(self, x):
            return self.d(x)

        def train_step(self, data):
            x, y = data
            with tape.GradientTape() as t:
                loss = self.compiled_loss(y, self(x, training=True))
            g = t.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(g, self.trainable_variables))
            return {"loss": loss}

    rng = np.random.default_rng(0)
    x = rng.random((64, 3), dtype=np.float32)
    y = (x.sum(1, keepdims=True) * 3).astype(np.float32)
    batches = []
    seen = nn.callbacks.LambdaCallback(
        on_train_batch_end=lambda step, logs: batches.append(float(logs["loss"])))
    model = Custom()
    model.compile("sgd", "mse")
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0,
                        callbacks=[seen])
    np.testing.assert_allclose(history.history["loss"],
                               [np.mean(batches[:4]), np.mean(batches[4:])], rtol=1e-5)
    assert history.history["loss"][0] != pytest.approx(batches[3])


def test_model_loss_is_what_compile_was_given():
    model = nn.Sequential([nn.layers.Input((2,)), nn.layers.Dense(1)])
    mse = nn.losses.MeanSquaredError()
    model.compile("sgd", mse)
    assert model.loss is mse  # keras-io DDPM's train_step calls self.loss(noise, pred)
    assert float(model.loss(np.zeros((1, 1)), np.ones((1, 1)))) == 1.0
    model.compile("sgd", "mae")
    assert model.loss == "mae"

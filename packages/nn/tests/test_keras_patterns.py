"""Keras patterns from keras-io's endpoint-layer and U-Net examples: metrics held by
layers are the model's (logged and reset by fit), BinaryAccuracy compares labels with
thresholded predictions, a layer's first argument may be given by name, and Keras 3's
other names (utils.Sequence, preprocessing.image/sequence, clear_session)."""

import numpy as np
import pytest

import ember.core as em
from ember import nn


def test_binary_accuracy_does_not_threshold_the_labels():
    # Keras: y_true == cast(y_pred > threshold, y_true.dtype); a label of 0.7 matches
    # neither class (ember thresholded the labels too, and counted it a match)
    acc = nn.metrics.BinaryAccuracy()
    acc.update_state([[0.7], [0.3]], [[0.9], [0.1]])
    assert float(acc.result()) == 0.0
    acc = nn.metrics.BinaryAccuracy(threshold=0.7)
    acc.update_state([[1.0], [0.0], [1.0]], [[0.8], [0.6], [0.6]])
    assert float(acc.result()) == pytest.approx(2 / 3)


class _Endpoint(nn.layers.Layer):
    def __init__(self):
        super().__init__()
        self.accuracy_fn = nn.metrics.BinaryAccuracy(name="accuracy")

    def call(self, logits, targets):
        p = em.sigmoid(logits)
        self.add_loss(em.reduce_mean(nn.losses.binary_crossentropy(targets, p)))
        self.accuracy_fn.update_state(targets, p)
        return p


def test_a_layers_metric_is_the_models_and_fit_logs_and_resets_it():
    x, t = nn.Input((3,)), nn.Input((1,))
    endpoint = _Endpoint()
    out = endpoint(logits=nn.layers.Dense(1)(x), targets=t)  # the first by name
    model = nn.Model([x, t], out)
    model.compile("adam")
    assert [m.name for m in model.metrics] == ["accuracy"]
    rng = np.random.default_rng(0)
    X = rng.random((64, 3)).astype(np.float32)
    T = (X.sum(1, keepdims=True) > 1.5).astype(np.float32)
    history = model.fit([X, T], epochs=2, batch_size=16, verbose=0).history
    assert sorted(history) == ["accuracy", "loss"]
    # reset each epoch: the last epoch's accuracy is over its 64 examples only
    p = model.predict([X, T], verbose=0)
    endpoint.accuracy_fn.reset_state()
    endpoint.accuracy_fn.update_state(T, p)
    assert float(endpoint.accuracy_fn.count) == 64
    assert float(model.evaluate([X, T], verbose=0, return_dict=True)["accuracy"]) == \
        pytest.approx(float(np.mean((p > 0.5) == T)))


def test_a_layer_called_without_inputs_says_how_to_give_them():
    with pytest.raises(TypeError, match="by the name call\\(\\) gives them, 'logits'"):
        _Endpoint()()


def test_keras_3s_other_names():
    assert nn.utils.Sequence is nn.utils.PyDataset
    assert nn.preprocessing.image.array_to_img is nn.utils.array_to_img
    assert nn.preprocessing.sequence.pad_sequences is nn.utils.pad_sequences
    nn.layers.Dense(1)
    nn.mixed_precision.set_global_policy("mixed_bfloat16")
    nn.utils.clear_session()
    assert nn.layers.Dense(1).name == "dense"
    assert nn.mixed_precision.global_policy().name == "float32"
    with pytest.raises(TypeError, match="free_memory must be a bool"):
        nn.utils.clear_session(free_memory="yes")


def test_a_generator_held_by_a_layer_is_checkpointed_with_it(tmp_path):
    # TF's tf.Module tracks a tf.random.Generator attribute; ember's layers did not, so a
    # checkpoint of the layer held no generator state and restored nothing
    from ember import checkpoint

    class Noisy(nn.layers.Layer):
        def __init__(self):
            super().__init__()
            self.g = em.random.Generator.from_seed(0)

    layer = Noisy()
    layer.g.normal([3])
    path = checkpoint.Checkpoint(m=layer).write(str(tmp_path / "c"))
    want = layer.g.normal([2]).numpy()
    fresh = Noisy()
    checkpoint.Checkpoint(m=fresh).read(path).assert_consumed()
    np.testing.assert_array_equal(fresh.g.normal([2]).numpy(), want)
    assert fresh.variables == []


def test_the_basic_regression_tutorials_inputs_are_taken_as_keras_takes_them():
    # a Normalization adapted with axis=None on 1-D data, in a model for (None, 1), given
    # 1-D inputs and array-likes (pandas frames have __array__; iterating gives columns)
    class Frame:
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return self.a

        def __iter__(self):
            return iter(["Horsepower"])

    horsepower = np.linspace(50.0, 200.0, 40)
    normalizer = nn.layers.Normalization(input_shape=[1], axis=None)
    normalizer.adapt(horsepower)
    model = nn.Sequential([normalizer, nn.layers.Dense(1)])
    model.compile(nn.optimizers.Adam(0.1), "mean_absolute_error")
    history = model.fit(Frame(horsepower), Frame(horsepower / 10), epochs=3,
                        validation_split=0.2, verbose=0)
    assert len(history.history["val_loss"]) == 3
    assert model.predict(Frame(horsepower[:10]), verbose=0).shape == (10, 1)
    assert model.predict(horsepower[:10], verbose=0).shape == (10, 1)
    z = normalizer(np.full((2, 1), horsepower.mean(), np.float32)).numpy()
    np.testing.assert_allclose(z, 0.0, atol=1e-6)


def test_the_models_metrics_follow_attributes_set_and_lists_grown_later():
    # model.metrics is kept between changes (fit reads it each step); a new attribute or a
    # metric appended to a list attribute is seen at once
    model = nn.Sequential([nn.Input((2,)), nn.layers.Dense(1)])
    model.compile("sgd", "mse")
    assert [m.name for m in model.metrics] == ["loss"]  # compile's (Keras 3's order first)
    model.layers[0].tracker = nn.metrics.Mean(name="tracker")
    assert [m.name for m in model.metrics] == ["loss", "tracker"]
    model.extra = []
    assert [m.name for m in model.metrics] == ["loss", "tracker"]
    model.extra.append(nn.metrics.Mean(name="appended"))  # the model's own, then its layers'
    assert [m.name for m in model.metrics] == ["loss", "appended", "tracker"]
    del model.layers[0].tracker
    assert [m.name for m in model.metrics] == ["loss", "appended"]


def test_a_pandas_series_is_one_column_as_keras_3_takes_it():
    # Keras 3 (array_slicing's PandasSeriesSliceable) makes a Series an (n, 1) column; TF's
    # "Load a pandas DataFrame" tutorial predicts on dict(df.iloc[:3]), a dict of Series
    Series = type("Series", (np.ndarray,), {"__module__": "pandas.core.series"})

    class Concat(nn.Model):
        def __init__(self):
            super().__init__()
            self.concat = nn.layers.Concatenate(axis=1)
            self.dense = nn.layers.Dense(1, kernel_initializer="ones")

        def call(self, inputs):
            return self.dense(self.concat([inputs["a"], inputs["b"]]))

    a = np.array([1.0, 2.0, 3.0]).view(Series)
    b = np.array([10.0, 20.0, 30.0]).view(Series)
    got = Concat().predict({"a": a, "b": b}, verbose=0)
    np.testing.assert_allclose(got, [[11.0], [22.0], [33.0]])
    seq = nn.Sequential([nn.layers.Dense(1, kernel_initializer="ones")])
    np.testing.assert_allclose(seq.predict(a, verbose=0), [[1.0], [2.0], [3.0]])
    seq.compile("sgd", "mse")
    seq.fit(a, b, epochs=1, verbose=0)  # a Series target is a column too: no broadcast

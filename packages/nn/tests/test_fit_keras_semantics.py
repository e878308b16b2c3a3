"""fit/evaluate behaviours a differential run against Keras 3.15.1 (torch backend) found
different, each checked here against what Keras does (its source named in each test)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ember import nn

L = nn.layers
RNG = np.random.default_rng(3)


def _dense(units: int = 1, activation: str | None = None) -> nn.Model:
    inp = L.Input((3,))
    return nn.Model(inp, L.Dense(units, activation=activation, name="out")(inp))


def test_validation_data_wins_and_every_array_is_trained_on():
    """Keras 3's trainer splits only ``if validation_split and validation_data is None``:
    given both, all 20 rows train (4 steps of 5), validation_data validates."""
    x = RNG.standard_normal((20, 3)).astype(np.float32)
    y = RNG.standard_normal((20, 1)).astype(np.float32)
    model, twin = _dense(), _dense()
    twin.set_weights(model.get_weights())
    for m in (model, twin):
        m.compile(nn.optimizers.SGD(0.05), "mse")
    seen = []
    record = nn.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: seen.append(b))
    got = model.fit(x, y, batch_size=5, shuffle=False, verbose=0, validation_split=0.5,
                    validation_data=(x[:4], y[:4]), callbacks=[record]).history
    want = twin.fit(x, y, batch_size=5, shuffle=False, verbose=0,
                    validation_data=(x[:4], y[:4])).history
    assert seen == [0, 1, 2, 3]
    assert got.keys() == want.keys() == {"loss", "val_loss"}
    assert_allclose(got["loss"], want["loss"], rtol=1e-6)
    assert_allclose(got["val_loss"], want["val_loss"], rtol=1e-6)


def test_validation_data_may_be_a_list():
    """Keras 3 unpacks ``[x_val, y_val]`` as the tuple (``unpack_x_y_sample_weight``)."""
    x = RNG.standard_normal((8, 3)).astype(np.float32)
    y = RNG.standard_normal((8, 1)).astype(np.float32)
    model, twin = _dense(), _dense()
    twin.set_weights(model.get_weights())
    for m in (model, twin):
        m.compile("sgd", "mse")
    as_list = model.fit(x, y, verbose=0, validation_data=[x[:4], y[:4]]).history["val_loss"]
    as_tuple = twin.fit(x, y, verbose=0, validation_data=(x[:4], y[:4])).history["val_loss"]
    assert_allclose(as_list, as_tuple, rtol=1e-6)
    assert_allclose(as_list[0], model.evaluate(x[:4], y[:4], verbose=0), rtol=1e-6)


@pytest.mark.parametrize("labels", ["soft", "regression"])
def test_accuracy_string_with_one_column_compares_labels_as_binary_accuracy(labels):
    """``metrics=["accuracy"]`` with one output column is Keras's ``BinaryAccuracy``
    (compile_utils.get_metric), which compares the labels as they are: soft labels 0.1/0.9
    and regression targets match no thresholded prediction (Keras 3.15.1: 0.0)."""
    x = RNG.standard_normal((10, 3)).astype(np.float32)
    y = (np.where(RNG.random((10, 1)) > 0.5, 0.9, 0.1) if labels == "soft" else
         RNG.standard_normal((10, 1)) * 0.2 + 0.5).astype(np.float32)
    model = _dense(activation="sigmoid")
    model.compile("sgd", "binary_crossentropy" if labels == "soft" else "mse",
                  metrics=["accuracy"])
    assert model.evaluate(x, y, return_dict=True, verbose=0)["accuracy"] == 0.0
    hard = (y > 0.5).astype(np.float32)
    pred = model.predict(x, verbose=0)
    got = model.evaluate(x, hard, return_dict=True, verbose=0)["accuracy"]
    assert_allclose(got, np.mean((pred > 0.5) == (hard > 0.5)), rtol=1e-6)


def test_metric_strings_keep_their_spelling_in_the_logs():
    """Keras 3's compile names a metric given as a string by the string
    (``metric_obj.name = identifier``): ``AUC``, ``Precision``, ``TruePositives``."""
    x = RNG.standard_normal((12, 3)).astype(np.float32)
    y = (RNG.random((12, 1)) > 0.5).astype(np.float32)
    model = _dense(activation="sigmoid")
    model.compile("sgd", "binary_crossentropy", metrics=["AUC", "Precision", "TruePositives"])
    history = model.fit(x, y, verbose=0).history
    assert list(history) == ["AUC", "Precision", "TruePositives", "loss"]
    assert nn.metrics.get("AUC").name == "auc"  # metrics.get keeps the class's own name


def test_history_keys_are_sorted_as_one_list():
    """Keras 3 sorts every hook's logs (``pythonify_logs``): ``val_loss`` comes before
    ``weighted_mae``; the validation run's ``on_test_end`` logs are sorted too."""
    x = RNG.standard_normal((8, 3)).astype(np.float32)
    y = RNG.standard_normal((8, 1)).astype(np.float32)
    w = RNG.random(8).astype(np.float32)
    model = _dense()
    model.compile("sgd", "mse", metrics=["mae"], weighted_metrics=["mae"])
    ends = []
    record = nn.callbacks.LambdaCallback()
    record.on_test_end = lambda logs=None: ends.append(list(logs))
    history = model.fit(x, y, sample_weight=w, validation_split=0.25, verbose=0,
                        callbacks=[record]).history
    assert list(history) == ["loss", "mae", "val_loss", "val_mae", "val_weighted_mae",
                             "weighted_mae"]
    assert ends == [["loss", "mae", "weighted_mae"]]


@pytest.mark.parametrize("case", ["binary", "sparse", "categorical"])
def test_crossentropy_string_picks_by_the_shapes(case):
    """``loss="crossentropy"`` / ``"ce"``: Keras 3's compile picks binary, sparse or
    categorical cross-entropy by the shapes (compile_utils.get_loss)."""
    x = RNG.standard_normal((6, 3)).astype(np.float32)
    if case == "binary":
        units, y, ref = 1, (RNG.random((6, 1)) > 0.5).astype(np.float32), \
            nn.losses.BinaryCrossentropy()
        act = "sigmoid"
    elif case == "sparse":
        units, y, ref = 4, RNG.integers(0, 4, 6), nn.losses.SparseCategoricalCrossentropy()
        act = "softmax"
    else:
        units, y, ref = 4, np.eye(4, dtype=np.float32)[RNG.integers(0, 4, 6)], \
            nn.losses.CategoricalCrossentropy()
        act = "softmax"
    model = _dense(units, act)
    for name in ("crossentropy", "CE"):
        model.compile("sgd", name)
        assert_allclose(model.evaluate(x, y, verbose=0),
                        float(ref(y, model.predict(x, verbose=0))), rtol=1e-5)
    with pytest.raises(ValueError, match="unknown loss 'crossentropy'"):
        nn.losses.get("crossentropy")  # (keras.losses.get refuses it too)


def test_per_output_metrics_may_give_none_for_an_output():
    """``metrics=[["mae"], None]``: a list of lists with None for an output without
    metrics (Keras 3 takes it as the per-output structure)."""
    inp = L.Input((3,))
    model = nn.Model(inp, [L.Dense(1, name="a")(inp), L.Dense(2, name="b")(inp)])
    model.compile("sgd", loss=["mse", "mse"], metrics=[["mae"], None])
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    logs = model.evaluate(x, [np.zeros((4, 1)), np.zeros((4, 2))], return_dict=True,
                          verbose=0)
    assert sorted(logs) == ["a_loss", "a_mae", "b_loss", "loss"]
    a, _ = model.predict(x, verbose=0)
    assert_allclose(logs["a_mae"], np.abs(a).mean(), rtol=1e-5)

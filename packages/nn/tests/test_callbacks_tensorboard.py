"""TensorBoard: the event files Keras 3's callback writes (train/ and validation/, their tags
and steps), read back with ember.summary; each argument honoured or refused by name."""

import glob
import os

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ember import nn, summary
from ember.nn import training

X = np.random.default_rng(0).standard_normal((16, 3)).astype(np.float32)
Y = X.sum(1)


def _model():
    model = nn.Sequential([nn.layers.Dense(4, input_shape=(3,), name="hidden"),
                           nn.layers.Dense(1, name="out")])
    model.compile(nn.optimizers.SGD(0.05), "mse", metrics=["mae"])
    return model


def _events(log_dir, which):
    """tag -> [(step, value proto)] over every event file of log_dir/which."""
    out = {}
    for path in sorted(glob.glob(os.path.join(log_dir, which, "events.out.tfevents.*"))):
        for event in summary.read_events(path):
            for value in event.summary.value:
                out.setdefault(value.tag, []).append((event.step, value))
    return out


def _scalars(events, tag):
    return [(step, v.simple_value) for step, v in events.get(tag, [])]


def _fit(log_dir, epochs=2, callbacks=(), **kw):
    model = _model()
    tb = nn.callbacks.TensorBoard(log_dir, **kw)
    history = model.fit(X, Y, batch_size=4, epochs=epochs, verbose=0, shuffle=False,
                        validation_data=(X[:8], Y[:8]), callbacks=[*callbacks, tb])
    return model, history


def test_epoch_scalars_under_train_and_validation_as_keras(tmp_path):
    model, history = _fit(tmp_path)
    train, val = _events(tmp_path, "train"), _events(tmp_path, "validation")
    assert set(train) == {"epoch_loss", "epoch_mae", "epoch_learning_rate", "model_summary"}
    for name in ("loss", "mae"):
        assert_allclose(_scalars(train, f"epoch_{name}"),
                        list(enumerate(history.history[name])), rtol=1e-6)
        assert_allclose(_scalars(val, f"epoch_{name}"),
                        list(enumerate(history.history[f"val_{name}"])), rtol=1e-6)
    assert_allclose(_scalars(train, "epoch_learning_rate"), [(0, 0.05), (1, 0.05)], rtol=1e-6)
    # after each validation, by the optimizer's step count (4 batches an epoch)
    assert_allclose(_scalars(val, "evaluation_loss_vs_iterations"),
                    [(4, history.history["val_loss"][0]), (8, history.history["val_loss"][1])],
                    rtol=1e-6)
    [(step, text)] = train["model_summary"]
    assert step == 0 and b"hidden (Dense)" in text.tensor.string_val[0]


def test_write_graph_false_writes_no_model_summary(tmp_path):
    _fit(tmp_path, write_graph=False)
    assert "model_summary" not in _events(tmp_path, "train")


class RunningLogs(nn.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.logs = []

    def on_train_batch_end(self, batch, logs=None):
        self.logs.append(training.host_logs(logs))


@pytest.mark.parametrize("update_freq,steps", [("epoch", []), ("batch", list(range(1, 9))),
                                               (3, [3, 6]), (1, list(range(1, 9)))])
def test_update_freq_writes_running_batch_logs(tmp_path, update_freq, steps):
    running = RunningLogs()
    _fit(tmp_path, callbacks=[running], update_freq=update_freq)
    train = _events(tmp_path, "train")
    want = [(s, running.logs[s - 1]["loss"]) for s in steps]  # steps count over the fit
    got = _scalars(train, "batch_loss")
    assert [s for s, _ in got] == steps
    assert_allclose([v for _, v in got], [v for _, v in want], rtol=1e-6)
    assert [s for s, _ in _scalars(train, "batch_mae")] == steps


def test_histograms_and_images_every_histogram_freq_epochs(tmp_path):
    class Record(nn.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(self.model.get_weights())

    seen = []
    _fit(tmp_path, epochs=3, callbacks=[Record()], histogram_freq=2, write_images=True)
    train = _events(tmp_path, "train")
    names = ["hidden/kernel", "hidden/bias", "out/kernel", "out/bias"]
    for name, weights in zip(names, zip(*seen)):
        hist = train[f"{name}/histogram"]
        assert [s for s, _ in hist] == [0, 2]
        for (_, value), w in zip(hist, (weights[0], weights[2])):
            buckets = np.frombuffer(value.tensor.tensor_content, np.float64).reshape(-1, 3)
            assert buckets[:, 2].sum() == w.size
            assert_allclose([buckets[0, 0], buckets[-1, 1]], [w.min(), w.max()], rtol=1e-6)
    # images as Keras lays them out: a (3, 4) kernel as 3 rows of 4, a (4,) bias as a
    # column of 4, a (4, 1) kernel squeezed to a column; out's one-element bias: none
    sizes = {name: [(s, v.tensor.string_val[1], v.tensor.string_val[0]) for s, v in
                    train.get(f"{name}/image", [])] for name in names}
    assert sizes == {"hidden/kernel": [(0, b"3", b"4"), (2, b"3", b"4")],
                     "hidden/bias": [(0, b"4", b"1"), (2, b"4", b"1")],
                     "out/kernel": [(0, b"4", b"1"), (2, b"4", b"1")],
                     "out/bias": []}


def test_no_histograms_by_default(tmp_path):
    _fit(tmp_path, write_images=True)
    assert not [t for t in _events(tmp_path, "train") if "/" in t]


def test_steps_per_second(tmp_path):
    _fit(tmp_path, write_steps_per_second=True, update_freq=2)
    train = _events(tmp_path, "train")
    assert [s for s, _ in _scalars(train, "epoch_steps_per_second")] == [0, 1]
    assert [s for s, _ in _scalars(train, "batch_steps_per_second")] == [2, 4, 6, 8]
    assert all(v > 0 for _, v in _scalars(train, "epoch_steps_per_second"))
    _fit(tmp_path / "off")
    assert "epoch_steps_per_second" not in _events(tmp_path / "off", "train")


def test_evaluate_alone_writes_evaluation_scalars(tmp_path):
    model = _model()
    model.fit(X, Y, batch_size=4, epochs=1, verbose=0)
    result = model.evaluate(X, Y, batch_size=4, return_dict=True,
                            callbacks=[nn.callbacks.TensorBoard(tmp_path)])
    val = _events(tmp_path, "validation")
    assert_allclose(_scalars(val, "evaluation_mae_vs_iterations"), [(4, result["mae"])],
                    rtol=1e-6)


def test_a_second_fit_writes_new_files(tmp_path):
    model = _model()
    tb = nn.callbacks.TensorBoard(tmp_path)
    for _ in range(2):
        model.fit(X, Y, batch_size=4, epochs=1, verbose=0, callbacks=[tb])
    assert len(glob.glob(os.path.join(tmp_path, "train", "events.out.tfevents.*"))) == 2
    assert [s for s, _ in _scalars(_events(tmp_path, "train"), "epoch_loss")] == [0, 0]


@pytest.mark.parametrize("kw,match", [
    (dict(profile_batch=3), "profile_batch=3"), (dict(profile_batch=(2, 4)), "profile_batch"),
    (dict(embeddings_freq=1), "embeddings_freq"),
    (dict(embeddings_metadata={"embedding": "m.tsv"}), "embeddings_metadata"),
    (dict(update_freq=0), "update_freq"), (dict(update_freq="step"), "update_freq"),
    (dict(histogram_freq=-1), "histogram_freq"), (dict(write_graph="yes"), "write_graph"),
    (dict(write_images=1), "write_images"), (dict(write_steps_per_second=None),
                                             "write_steps_per_second"),
])
def test_what_ember_cannot_do_is_refused_by_name(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        nn.callbacks.TensorBoard("logs", **kw)
    nn.callbacks.TensorBoard("logs", profile_batch=0, embeddings_freq=0)  # the defaults

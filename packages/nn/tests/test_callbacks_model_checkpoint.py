"""ModelCheckpoint as Keras 3: {epoch:02d}-style names, the best model only, weights only,
every save_freq batches, a threshold to beat; each file loads into the model as it stood
when the file was written."""

import os

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import nn

RNG = np.random.default_rng(0)
X = RNG.standard_normal((32, 3)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5], np.float32))[:, None]
VAL = (X[:8] + 0.5, Y[:8])


def _model(lr=0.05):
    em.random.set_seed(0)
    model = nn.Sequential([nn.layers.Dense(4, activation="tanh", input_shape=(3,)),
                           nn.layers.Dense(1)])
    model.compile(nn.optimizers.SGD(lr, momentum=0.9), "mse", metrics=["mae"])
    return model


class Snapshots(nn.callbacks.Callback):
    """The weights at each epoch's end (and every batch's), as the checkpoint saw them."""

    def __init__(self):
        super().__init__()
        self.epochs, self.batches = [], []

    def on_train_batch_end(self, batch, logs=None):
        self.batches.append([w.copy() for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append([w.copy() for w in self.model.get_weights()])


def _same(weights, model):
    got = model.get_weights()
    assert len(got) == len(weights)
    for u, v in zip(got, weights):
        assert_array_equal(u, v)


def test_every_epoch_to_epoch_named_files(tmp_path):
    model, snaps = _model(), Snapshots()
    save = nn.callbacks.ModelCheckpoint(tmp_path / "ckpt" / "m-{epoch:02d}.keras")
    model.fit(X, Y, batch_size=8, epochs=3, verbose=0, validation_data=VAL,
              callbacks=[save, snaps])
    assert sorted(os.listdir(tmp_path / "ckpt")) == ["m-01.keras", "m-02.keras", "m-03.keras"]
    for epoch, weights in enumerate(snaps.epochs):
        loaded = nn.models.load_model(tmp_path / "ckpt" / f"m-{epoch + 1:02d}.keras")
        _same(weights, loaded)
        assert int(loaded.optimizer.iterations.numpy()) == 4 * (epoch + 1)


def test_save_best_only_keeps_the_best_epoch(tmp_path, capsys):
    model, snaps = _model(lr=0.3), Snapshots()  # a rate that makes val_loss go up and down
    path = tmp_path / "best.keras"
    save = nn.callbacks.ModelCheckpoint(path, save_best_only=True, verbose=1)
    history = model.fit(X, Y, batch_size=8, epochs=6, verbose=0, validation_data=VAL,
                        callbacks=[save, snaps])
    losses = history.history["val_loss"]
    best = int(np.argmin(losses))
    assert best < 5 and sorted(losses) != losses[::-1]  # some epoch did not improve
    _same(snaps.epochs[best], nn.models.load_model(path))
    assert save.best == pytest.approx(losses[best])
    out = capsys.readouterr().out
    assert f"Epoch 1: val_loss improved from None to {losses[0]:.5f}, saving model to " \
           f"{path}" in out
    assert "did not improve from" in out


def test_mode_and_monitor_choose_what_is_best(tmp_path):
    model, snaps = _model(lr=0.3), Snapshots()
    path = tmp_path / "worst.keras"  # the highest val_mae, by mode="max"
    history = model.fit(X, Y, batch_size=8, epochs=5, verbose=0, validation_data=VAL,
                        callbacks=[nn.callbacks.ModelCheckpoint(
                            path, monitor="val_mae", mode="max", save_best_only=True),
                            snaps])
    best = int(np.argmax(history.history["val_mae"]))
    saved = nn.models.load_model(path).get_weights()
    assert len(saved) == len(snaps.epochs[best])
    for epoch, weights in enumerate(snaps.epochs):  # the worst epoch's, no other's
        same = all(np.array_equal(u, v) for u, v in zip(saved, weights))
        assert same == (epoch == best), (epoch, best, history.history["val_mae"])


def test_initial_value_threshold_must_be_beaten(tmp_path):
    model = _model()
    path = tmp_path / "m.keras"
    save = nn.callbacks.ModelCheckpoint(path, save_best_only=True,
                                        initial_value_threshold=1e-9)
    model.fit(X, Y, batch_size=8, epochs=2, verbose=0, validation_data=VAL, callbacks=[save])
    assert not path.exists()
    with pytest.warns(UserWarning, match="can save the best model only with 'val_loss'"):
        model.fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[  # no validation
            nn.callbacks.ModelCheckpoint(path, save_best_only=True)])
    assert path.exists()  # Keras saves when it cannot tell


def test_save_weights_only_and_a_logged_value_in_the_name(tmp_path):
    model, snaps = _model(), Snapshots()
    pattern = str(tmp_path / "w-{epoch}-{val_loss:.4f}.weights.h5")
    history = model.fit(X, Y, batch_size=8, epochs=2, verbose=0, validation_data=VAL,
                        callbacks=[nn.callbacks.ModelCheckpoint(pattern,
                                                                save_weights_only=True),
                                   snaps])
    for epoch, loss in enumerate(history.history["val_loss"]):
        name = tmp_path / f"w-{epoch + 1}-{loss:.4f}.weights.h5"
        assert name.exists()
        fresh = _model()
        fresh.load_weights(name)
        _same(snaps.epochs[epoch], fresh)
    safetensors = nn.callbacks.ModelCheckpoint(tmp_path / "w.safetensors",
                                               save_weights_only=True)
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[safetensors])
    assert (tmp_path / "w.safetensors").exists()


def test_save_freq_in_batches(tmp_path):
    model, snaps = _model(), Snapshots()
    pattern = tmp_path / "e{epoch}-b{batch}.keras"
    model.fit(X, Y, batch_size=8, epochs=2, verbose=0,  # 4 batches an epoch
              callbacks=[nn.callbacks.ModelCheckpoint(pattern, save_freq=3), snaps])
    # batches 3 and 6 of 8: epoch 1 batch 3, epoch 2 batch 2
    assert sorted(os.listdir(tmp_path)) == ["e1-b3.keras", "e2-b2.keras"]
    _same(snaps.batches[2], nn.models.load_model(tmp_path / "e1-b3.keras"))
    _same(snaps.batches[5], nn.models.load_model(tmp_path / "e2-b2.keras"))


def test_what_it_refuses(tmp_path):
    for path, kw, match in [
        ("m.h5", {}, "no Keras 2"), ("m.tf", {}, r"must end in `\.keras`"),
        ("m.keras", {"save_weights_only": True}, r"must end in `\.weights\.h5`"),
        ("m.keras", {"save_freq": "batch"}, "unrecognized save_freq"),
        ("m.keras", {"save_freq": 0}, "unrecognized save_freq"),
        ("m.keras", {"verbose": 3}, "verbose"),
        ("m.keras", {"mode": "best"}, "mode"),
    ]:
        with pytest.raises(ValueError, match=match):
            nn.callbacks.ModelCheckpoint(tmp_path / path, **kw)
    with pytest.raises(TypeError, match="save_best_only must be a bool"):
        nn.callbacks.ModelCheckpoint(tmp_path / "m.keras", save_best_only="yes")
    model = _model()
    with pytest.raises(KeyError, match="'val_acc' is not in the logs"):
        model.fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[
            nn.callbacks.ModelCheckpoint(tmp_path / "m-{val_acc}.keras")])
    (tmp_path / "dir.keras").mkdir()
    with pytest.raises(OSError, match="is an existing directory"):
        model.fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[
            nn.callbacks.ModelCheckpoint(tmp_path / "dir.keras")])

"""Every built-in callback at once leaves fit's traced step traced: they read and write
between steps (logs, the learning rate, weights, checkpoints, summaries), so the step is
traced no more often than without them, fails no guard, and trains as the eager step does
with the same callbacks. On the strict GPU double, the callbacks that read only the epoch's
logs add no GPU sync beyond fit's own one per epoch."""

import http.server
import threading
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn

X = np.random.default_rng(0).standard_normal((48, 3)).astype(np.float32)
Y = (X.sum(1) > 0).astype(np.int64)


@pytest.fixture
def server():
    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _model(run_eagerly=False):
    em.random.set_seed(0)
    model = nn.Sequential([nn.layers.Dense(8, activation="relu", input_shape=(3,)),
                           nn.layers.Dropout(0.2), nn.layers.Dense(2)])
    model.compile(nn.optimizers.Adam(0.02),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.run_eagerly = run_eagerly
    return model


def _all_callbacks(tmp, root):
    tmp.mkdir()
    return [
        nn.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.9),
        nn.callbacks.ReduceLROnPlateau("val_loss", factor=0.5, patience=0, min_delta=1.0),
        nn.callbacks.EarlyStopping("val_accuracy", patience=10, restore_best_weights=True),
        nn.callbacks.TerminateOnNaN(),
        nn.callbacks.CSVLogger(tmp / "log.csv"),
        nn.callbacks.TensorBoard(tmp / "tb", histogram_freq=1, write_images=True,
                                 update_freq=2, write_steps_per_second=True),
        nn.callbacks.BackupAndRestore(tmp / "backup", save_freq=3),
        nn.callbacks.ModelCheckpoint(tmp / "m-{epoch}-{batch}.keras", save_freq=3),
        nn.callbacks.RemoteMonitor(root=root),
        nn.callbacks.ProgbarLogger(),
    ]


def _step(model):
    return model._ember.extra["traced_steps"]["train_step"][1]


def test_all_callbacks_leave_the_step_traced_and_train_as_eager(tmp_path, server):
    model = _model()
    # traced without callbacks, for each batch shape (36 examples: 4 of 8, 1 of 4)
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, validation_split=0.25)
    traces = _step(model).experimental_get_tracing_count()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a guard failing over and over warns: none may
        history = model.fit(X, Y, batch_size=8, epochs=4, verbose=0, validation_split=0.25,
                            callbacks=_all_callbacks(tmp_path / "traced", server))
    assert _step(model).experimental_get_tracing_count() == traces, "a callback retraced"
    rates = history.history["learning_rate"]
    # each epoch the schedule takes 10% off; from epoch 1's end the plateau halves it too
    assert_allclose(rates, [0.018, 0.0162, 0.0162 * 0.45, 0.0162 * 0.45 ** 2], rtol=1e-6)

    eager = _model(run_eagerly=True)
    eager.fit(X, Y, batch_size=8, epochs=1, verbose=0, validation_split=0.25)
    want = eager.fit(X, Y, batch_size=8, epochs=4, verbose=0, validation_split=0.25,
                     callbacks=_all_callbacks(tmp_path / "eager", server))
    assert_allclose(rates, want.history["learning_rate"], rtol=1e-6)
    assert_allclose(history.history["loss"], want.history["loss"], rtol=1e-5)
    for a, b in zip(model.get_weights(), eager.get_weights()):
        assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_callbacks_reading_epoch_logs_add_no_sync(tmp_path, backend):
    counters = getattr(em.get_device(backend).backend, "counters", None)
    if counters is None:
        pytest.skip("the transfer counters are the strict GPU double's (its run has them)")
    x, y = em.constant(X), em.constant(Y)
    model = _model()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)  # builds, traces
    quiet = [nn.callbacks.EarlyStopping("loss", patience=10),
             nn.callbacks.ReduceLROnPlateau("loss", patience=10),
             nn.callbacks.CSVLogger(tmp_path / "log.csv"),
             nn.callbacks.TensorBoard(tmp_path / "tb", write_graph=False)]
    counters.reset()
    model.fit(x, y, batch_size=8, epochs=3, verbose=0)
    without = counters.syncs  # the logs, and the shuffle reading the generator's counter
    counters.reset()
    model.fit(x, y, batch_size=8, epochs=3, verbose=0, callbacks=quiet)
    # the learning rate, unchanged, read once and remembered: one read in all
    assert counters.syncs == without + 1, (without, counters)
    # each epoch: the logs, and fit's host shuffle reading the generator's counter, which
    # the Dropout layer's draws on the GPU keep there
    assert without == 3 * 2, counters

"""CSVLogger, TerminateOnNaN, RemoteMonitor (against a loopback HTTP server) and
ProgbarLogger, as Keras 3 behaves, each argument honoured or refused by name."""

import csv
import http.server
import json
import threading
import urllib.parse

import numpy as np
import pytest

from ember import nn

X = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)
Y = X.sum(1)


def _model():
    model = nn.Sequential([nn.layers.Dense(1, input_shape=(3,))])
    model.compile(nn.optimizers.SGD(0.05), "mse", metrics=["mae"])
    return model


def _fit(model, callbacks, epochs=2, **kw):
    return model.fit(X, Y, batch_size=4, epochs=epochs, verbose=0, callbacks=callbacks, **kw)


# --- CSVLogger ---------------------------------------------------------------------------
def test_csv_logger_writes_each_epochs_logs(tmp_path):
    path = tmp_path / "log.csv"
    history = _fit(_model(), [nn.callbacks.CSVLogger(path)], validation_data=(X, Y))
    rows = list(csv.DictReader(path.open()))
    assert list(rows[0]) == ["epoch", "loss", "mae", "val_loss", "val_mae"]
    assert [int(r["epoch"]) for r in rows] == [0, 1]
    for key, values in history.history.items():
        assert [float(r[key]) for r in rows] == values  # every digit of the float


def test_csv_logger_without_validation_has_keras_na_columns_and_a_separator(tmp_path):
    path = tmp_path / "log.tsv"
    _fit(_model(), [nn.callbacks.CSVLogger(path, separator="\t")])
    lines = path.read_text().splitlines()
    assert lines[0] == "epoch\tloss\tmae\tval_loss\tval_mae"
    assert lines[1].split("\t")[3:] == ["NA", "NA"] and len(lines) == 3


@pytest.mark.parametrize("append", [True, False])
def test_csv_logger_append(tmp_path, append):
    path = tmp_path / "log.csv"
    model = _model()
    _fit(model, [nn.callbacks.CSVLogger(path)])
    _fit(model, [nn.callbacks.CSVLogger(path, append=append)], epochs=3, initial_epoch=2)
    lines = path.read_text().splitlines()
    if append:  # one header, then epochs 0, 1 and (continued) 2
        assert [line.split(",")[0] for line in lines] == ["epoch", "0", "1", "2"]
    else:
        assert [line.split(",")[0] for line in lines] == ["epoch", "2"]


def test_csv_logger_refuses_bad_arguments_by_name():
    with pytest.raises(ValueError, match="separator"):
        nn.callbacks.CSVLogger("x.csv", separator=", ")
    with pytest.raises(TypeError, match="append"):
        nn.callbacks.CSVLogger("x.csv", append="yes")


# --- TerminateOnNaN ----------------------------------------------------------------------
def _nan_at(i):
    y = Y.copy()
    y[i] = np.nan
    return y


def test_terminate_on_nan_stops_after_the_batch(capsys):
    batches = []
    seen = nn.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: batches.append(b))
    model = _model()
    history = model.fit(X, _nan_at(5), batch_size=2, epochs=3, shuffle=False, verbose=0,
                        callbacks=[nn.callbacks.TerminateOnNaN(), seen])
    assert batches == [0, 1, 2] and len(history.history["loss"]) == 1  # sample 5: batch 2
    assert capsys.readouterr().out == "Batch 2: Invalid loss, terminating training\n"
    untouched = _model().fit(X, _nan_at(5), batch_size=2, epochs=3, shuffle=False,
                             verbose=0)
    assert len(untouched.history["loss"]) == 3  # without the callback, training goes on


def test_terminate_on_nan_raise_error_skips_on_train_end():
    ended = []
    with pytest.raises(RuntimeError, match="loss of batch 1 is nan"):
        _model().fit(X, _nan_at(2), batch_size=2, epochs=2, shuffle=False, verbose=0,
                     callbacks=[nn.callbacks.TerminateOnNaN(raise_error=True),
                                nn.callbacks.LambdaCallback(
                                    on_train_end=lambda logs: ended.append(1))])
    assert ended == []
    with pytest.raises(TypeError, match="raise_error"):
        nn.callbacks.TerminateOnNaN(raise_error=1)


def test_terminate_on_nan_sees_infinity_too():
    model = _model()
    y = Y.copy()
    y[0] = np.inf
    history = model.fit(X, y, batch_size=4, epochs=3, shuffle=False, verbose=0,
                        callbacks=[nn.callbacks.TerminateOnNaN()])
    assert len(history.history["loss"]) == 1


# --- RemoteMonitor -----------------------------------------------------------------------
@pytest.fixture
def server():
    """A loopback HTTP server keeping each POST's path, headers and body."""
    got = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.append((self.path, dict(self.headers), body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", got
    httpd.shutdown()
    httpd.server_close()


def test_remote_monitor_posts_each_epochs_logs_as_a_form(server):
    root, got = server
    history = _fit(_model(), [nn.callbacks.RemoteMonitor(root=root)])
    assert [p for p, _, _ in got] == ["/publish/epoch/end/"] * 2
    for epoch, (_, headers, body) in enumerate(got):
        assert headers["Content-Type"] == "application/x-www-form-urlencoded"
        sent = json.loads(urllib.parse.parse_qs(body.decode())["data"][0])
        assert sent == {"epoch": epoch, **{k: v[epoch] for k, v in history.history.items()}}


def test_remote_monitor_path_field_headers_and_json(server):
    root, got = server
    _fit(_model(), [nn.callbacks.RemoteMonitor(root=root, path="/x", field="logs",
                                               headers={"X-Run": "7"})], epochs=1)
    _fit(_model(), [nn.callbacks.RemoteMonitor(root=root, send_as_json=True)], epochs=1)
    (path, headers, body), (_, json_headers, json_body) = got
    assert path == "/x" and headers["X-Run"] == "7"
    assert set(urllib.parse.parse_qs(body.decode())) == {"logs"}
    assert json_headers["Content-Type"] == "application/json"
    assert set(json.loads(json_body)) == {"epoch", "loss", "mae"}


def test_remote_monitor_warns_when_the_server_is_away():
    with pytest.warns(UserWarning, match="could not reach the server at http://127.0.0.1:9"):
        history = _fit(_model(), [nn.callbacks.RemoteMonitor(root="http://127.0.0.1:9")])
    assert len(history.history["loss"]) == 2
    with pytest.raises(TypeError, match="headers"):
        nn.callbacks.RemoteMonitor(headers=[("a", "b")])
    with pytest.raises(TypeError, match="send_as_json"):
        nn.callbacks.RemoteMonitor(send_as_json="yes")


# --- ProgbarLogger -----------------------------------------------------------------------
def test_fit_adds_one_progress_bar_unless_given_one(capsys):
    pytest.importorskip("tqdm", reason="the bar is tqdm's")

    def bars(err):  # a closed tqdm bar is one line (it redraws with carriage returns)
        return [line for line in err.split("\n") if line.strip()]

    model = _model()
    model.fit(X, Y, batch_size=4, epochs=2, verbose=1)
    err = bars(capsys.readouterr().err)
    assert len(err) == 2 and "epoch 2/2" in err[1] and "2/2" in err[1]
    model.fit(X, Y, batch_size=4, epochs=1, verbose=1, callbacks=[nn.callbacks.ProgbarLogger()])
    assert len(bars(capsys.readouterr().err)) == 1  # the one given, no second
    model.fit(X, Y, batch_size=4, epochs=2, verbose=0, callbacks=[nn.callbacks.ProgbarLogger()])
    assert capsys.readouterr().err == ""  # fit's verbose=0 is the bar's too, as Keras


def test_progress_lines_for_verbose_2(capsys):
    model = _model()
    history = model.fit(X, Y, batch_size=4, epochs=2, verbose=2)
    out = capsys.readouterr().out.splitlines()
    assert out == [f"epoch {e + 1}/2 - loss: {history.history['loss'][e]:.4f} - "
                   f"mae: {history.history['mae'][e]:.4f}" for e in range(2)]
    result = model.evaluate(X, Y, verbose=2, return_dict=True)
    assert capsys.readouterr().out == (f"evaluate - loss: {result['loss']:.4f} - "
                                       f"mae: {result['mae']:.4f}\n")


def test_evaluate_and_predict_show_a_bar_of_their_batches(capsys):
    pytest.importorskip("tqdm", reason="the bar is tqdm's")
    model = _model()
    model.evaluate(X, Y, batch_size=2, verbose=1)
    model.predict(X, batch_size=2, verbose=1)
    err = capsys.readouterr().err
    assert "evaluate" in err and "predict" in err and "4/4" in err


def test_small_logged_values_show_as_keras_shows_them(capsys):
    """Keras's bar prints a value of at most 1e-3 in exponent form: a loss of 2.4e-06 is
    not ``0.0000``."""
    model = nn.Sequential([nn.layers.Dense(1, kernel_initializer="zeros", input_shape=(2,))])
    model.compile(nn.optimizers.SGD(0.0), "mse")
    x, y = np.ones((4, 2), np.float32), np.full((4, 1), 1e-3, np.float32)
    model.fit(x, y, batch_size=4, epochs=1, verbose=2)
    assert capsys.readouterr().out == "epoch 1/1 - loss: 1.0000e-06\n"
    y[:] = 0.5
    model.fit(x, y, batch_size=4, epochs=1, verbose=2)
    assert capsys.readouterr().out == "epoch 1/1 - loss: 0.2500\n"

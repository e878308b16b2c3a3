"""Which callback hooks fit/evaluate/predict call, in what order, with which logs (Keras's)."""

import numpy as np

from ember import nn

HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
         "on_train_batch_begin", "on_train_batch_end", "on_test_begin", "on_test_end",
         "on_test_batch_begin", "on_test_batch_end", "on_predict_begin", "on_predict_end",
         "on_predict_batch_begin", "on_predict_batch_end")


class Log(nn.callbacks.Callback):
    """Every hook as (name, batch or epoch, sorted log keys); the logs of the *_end ones."""

    def __init__(self):
        super().__init__()
        self.calls, self.ends = [], {}

    def __getattribute__(self, name):
        if name not in HOOKS:
            return super().__getattribute__(name)

        def hook(*args):
            *index, logs = args
            self.calls.append((name, *index, sorted(logs)))
            self.ends.setdefault(name, []).append(dict(logs))

        return hook


def _model():
    model = nn.Sequential([nn.layers.Dense(1, input_dim=3)])
    model.compile(nn.optimizers.SGD(0.01), "mse", metrics=["mae"])
    return model


def _data(n):
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, 3)).astype(np.float32), rng.standard_normal(n)


def test_fit_runs_the_test_hooks_of_its_callbacks_for_validation_before_epoch_end():
    x, y = _data(20)
    log = Log()
    _model().fit(x, y, batch_size=4, epochs=2, verbose=0, validation_split=0.4,
                 callbacks=[log])
    keys, val_keys = ["loss", "mae"], ["loss", "mae", "val_loss", "val_mae"]
    epoch = [[("on_train_batch_begin", b, []), ("on_train_batch_end", b, keys)]
             for b in range(3)]
    test = [[("on_test_batch_begin", b, []), ("on_test_batch_end", b, keys)] for b in range(2)]
    expected = [("on_train_begin", [])]
    for e in range(2):
        expected += [("on_epoch_begin", e, []), *sum(epoch, []), ("on_test_begin", []),
                     *sum(test, []), ("on_test_end", keys), ("on_epoch_end", e, val_keys)]
    expected += [("on_train_end", val_keys)]
    assert log.calls == expected
    for test_end, epoch_end in zip(log.ends["on_test_end"], log.ends["on_epoch_end"]):
        assert test_end == {"loss": epoch_end["val_loss"], "mae": epoch_end["val_mae"]}


def test_on_train_end_gets_the_last_epochs_logs_also_when_stopped_early():
    x, y = _data(8)
    model = _model()
    log = Log()
    stop = nn.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: setattr(model, "stop_training", epoch == 1))
    history = model.fit(x, y, batch_size=4, epochs=5, verbose=0, callbacks=[stop, log])
    assert len(history.history["loss"]) == 2
    assert log.ends["on_train_end"] == [log.ends["on_epoch_end"][-1]]
    assert log.ends["on_train_end"][0]["loss"] == history.history["loss"][-1]


def test_evaluate_and_predict_hooks():
    x, y = _data(10)
    model = _model()
    log = Log()
    result = model.evaluate(x, y, batch_size=4, callbacks=[log], return_dict=True)
    model.predict(x, batch_size=4, callbacks=[log])
    keys = ["loss", "mae"]
    assert log.calls == [
        ("on_test_begin", []),
        *[c for b in range(3) for c in (("on_test_batch_begin", b, []),
                                        ("on_test_batch_end", b, keys))],
        ("on_test_end", keys), ("on_predict_begin", []),
        *[c for b in range(3) for c in (("on_predict_batch_begin", b, []),
                                        ("on_predict_batch_end", b, ["outputs"]))],
        ("on_predict_end", [])]
    assert log.ends["on_test_end"] == [result]

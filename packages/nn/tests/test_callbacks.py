"""Which callback hooks fit/evaluate/predict call, in what order, with which logs (Keras's)."""

import numpy as np
import pytest

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


def test_on_batch_begin_and_end_are_kerass_older_names_for_training_batches():
    seen = []

    class Old(nn.callbacks.Callback):
        def on_batch_begin(self, batch, logs=None):
            seen.append(("begin", batch))

        def on_batch_end(self, batch, logs=None):
            seen.append(("end", batch, sorted(logs)))

    x, y = _data(8)
    _model().fit(x, y, batch_size=4, epochs=1, verbose=0, validation_data=(x, y),
                 callbacks=[Old(), nn.callbacks.LambdaCallback(
                     on_batch_end=lambda batch, logs: seen.append(("lambda", batch)))])
    assert seen == [("begin", 0), ("end", 0, ["loss", "mae"]), ("lambda", 0),
                    ("begin", 1), ("end", 1, ["loss", "mae"]), ("lambda", 1)]


# Every argument of every built-in callback, and the test that shows it honoured (or refused
# by name): a new argument fails test_every_callback_argument_has_a_probe until it has one.
PROBES = {
    "BackupAndRestore": {
        "backup_dir": "backup::test_a_resumed_fit_ends_as_if_never_interrupted",
        "save_freq": "backup::test_a_resumed_fit_ends_as_if_never_interrupted",
        "double_checkpoint": "backup::test_double_checkpoint_falls_back_to_the_backup_before_a_"
                             "damaged_one",
        "delete_checkpoint": "backup::test_delete_checkpoint_false_keeps_the_backup_and_a_"
                             "finished_fit_runs_no_epoch"},
    "CSVLogger": {"filename": "loggers::test_csv_logger_writes_each_epochs_logs",
                  "separator": "loggers::test_csv_logger_without_validation_has_keras_na_"
                               "columns_and_a_separator",
                  "append": "loggers::test_csv_logger_append"},
    "EarlyStopping": {
        **dict.fromkeys(["min_delta", "patience", "mode", "baseline", "start_from_epoch"],
                        "early_stopping::test_each_argument_changes_when_training_stops"),
        "monitor": "early_stopping::test_mode_auto_reads_the_quantity",
        "verbose": "early_stopping::test_restore_best_weights_when_stopped_and_verbose",
        "restore_best_weights": "early_stopping::test_restore_best_weights_puts_back_the_best_"
                                "epochs_weights"},
    "LearningRateScheduler": {
        "schedule": "learning_rate::test_scheduler_sets_each_epochs_rate_and_a_traced_step_"
                    "uses_it",
        "verbose": "learning_rate::test_scheduler_takes_keras_older_one_argument_form_and_"
                   "prints"},
    "ReduceLROnPlateau": {
        **dict.fromkeys(["monitor", "factor", "patience", "mode", "min_delta", "cooldown",
                         "min_lr"], "learning_rate::test_plateau_reduces_as_keras"),
        "verbose": "learning_rate::test_plateau_verbose_and_the_model_keeps_the_last_rate"},
    "ModelCheckpoint": {
        "filepath": "model_checkpoint::test_every_epoch_to_epoch_named_files",
        "monitor": "model_checkpoint::test_mode_and_monitor_choose_what_is_best",
        "mode": "model_checkpoint::test_mode_and_monitor_choose_what_is_best",
        "verbose": "model_checkpoint::test_save_best_only_keeps_the_best_epoch",
        "save_best_only": "model_checkpoint::test_save_best_only_keeps_the_best_epoch",
        "save_weights_only": "model_checkpoint::test_save_weights_only_and_a_logged_value_"
                             "in_the_name",
        "save_freq": "model_checkpoint::test_save_freq_in_batches",
        "initial_value_threshold": "model_checkpoint::test_initial_value_threshold_must_be_"
                                   "beaten"},
    "RemoteMonitor": {
        "root": "loggers::test_remote_monitor_posts_each_epochs_logs_as_a_form",
        **dict.fromkeys(["path", "field", "headers", "send_as_json"],
                        "loggers::test_remote_monitor_path_field_headers_and_json")},
    "TensorBoard": {
        "log_dir": "tensorboard::test_epoch_scalars_under_train_and_validation_as_keras",
        "histogram_freq": "tensorboard::test_histograms_and_images_every_histogram_freq_epochs",
        "write_images": "tensorboard::test_histograms_and_images_every_histogram_freq_epochs",
        "write_graph": "tensorboard::test_write_graph_false_writes_no_model_summary",
        "write_steps_per_second": "tensorboard::test_steps_per_second",
        "update_freq": "tensorboard::test_update_freq_writes_running_batch_logs",
        **dict.fromkeys(["profile_batch", "embeddings_freq", "embeddings_metadata"],
                        "tensorboard::test_what_ember_cannot_do_is_refused_by_name")},
    "TerminateOnNaN": {"raise_error": "loggers::test_terminate_on_nan_raise_error_skips_on_"
                                      "train_end"},
    "LambdaCallback": {},  # takes the hooks by name: tested above
    "ProgbarLogger": {}, "History": {}, "Callback": {},
}


def _probes():
    """PROBES, and the CALLBACK_PROBES of any other test module here (a callback built
    elsewhere lists its arguments' tests beside them)."""
    import importlib
    import pathlib

    probes = dict(PROBES)
    for path in sorted(pathlib.Path(__file__).parent.glob("test_*.py")):
        if path.stem != "test_callbacks" and "CALLBACK_PROBES" in path.read_text():
            probes.update(importlib.import_module(path.stem).CALLBACK_PROBES)
    return probes


def test_every_callback_argument_has_a_probe():
    import importlib
    import inspect

    probes = _probes()
    for name in nn.callbacks.__all__:
        cls = getattr(nn.callbacks, name)
        if name == "CallbackList":
            continue
        params = [p for p in list(inspect.signature(cls.__init__).parameters)[1:]
                  if p not in ("hooks",)]
        assert name in probes, (
            f"{name}: list the test of each of its arguments in PROBES here, or as "
            f"CALLBACK_PROBES = {{{name!r}: {{'argument': 'test_module::test_name'}}}} in "
            f"its own test module")
        assert sorted(probes[name]) == sorted(params), name
        for arg, probe in probes[name].items():
            module, test = probe.split("::")
            if not module.startswith("test_"):  # PROBES' short names
                module = f"test_callbacks_{module}"
            assert hasattr(importlib.import_module(module), test), (
                f"{name}.{arg}: no test {probe}")


def test_one_callback_or_nested_lists_are_taken_as_keras_3_flattens_them():
    """keras 3's CallbackList does tree.flatten(callbacks): fit(callbacks=EarlyStopping())
    works there (ember raised "'EarlyStopping' object is not iterable"; found porting
    TensorFlow's "Simple audio recognition")."""
    x = np.zeros((8, 2), np.float32)
    y = np.zeros((8, 1), np.float32)
    model = nn.Sequential([nn.layers.Dense(1)])
    model.compile("sgd", "mse")
    seen = []
    one = nn.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(("one", e)))
    two = nn.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(("two", e)))
    model.fit(x, y, epochs=1, verbose=0, callbacks=one)
    model.fit(x, y, epochs=1, verbose=0, callbacks=[[one], (two,)])
    model.evaluate(x, y, verbose=0, callbacks=one)
    model.predict(x, verbose=0, callbacks=one)
    assert seen == [("one", 0), ("one", 0), ("two", 0)]
    with pytest.raises(TypeError, match="callbacks must be a Callback"):
        model.fit(x, y, epochs=1, verbose=0, callbacks="early_stopping")

    class DuckTyped:  # ember.distribute's callbacks do not subclass Callback
        def set_model(self, model):
            self.model = model

        def set_params(self, params):
            pass

        def on_epoch_end(self, epoch, logs=None):
            seen.append(("duck", epoch))

        def __getattr__(self, name):  # every other hook: nothing
            if name.startswith("on_"):
                return lambda *args, **kwargs: None
            raise AttributeError(name)

    model.fit(x, y, epochs=1, verbose=0, callbacks=DuckTyped())
    assert seen[-1] == ("duck", 0)


def test_a_history_given_to_two_fits_keeps_both():
    """Keras 3's ``History.on_train_begin`` resets ``epoch`` only: one History given to
    two fits of 2 epochs holds 4 losses (fit's own returned History holds its 2)."""
    model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse")
    x, y = np.ones((4, 2), np.float32), np.zeros((4, 1), np.float32)
    mine = nn.callbacks.History()
    first = model.fit(x, y, epochs=2, verbose=0, callbacks=[mine]).history["loss"]
    second = model.fit(x, y, epochs=2, verbose=0, callbacks=[mine]).history["loss"]
    assert mine.history["loss"] == first + second and len(first) == len(second) == 2
    assert mine.epoch == [0, 1]

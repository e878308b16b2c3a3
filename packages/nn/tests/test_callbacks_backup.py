"""BackupAndRestore: an interrupted fit, run again, finishes with the weights, optimizer state
and logs of a fit that was never interrupted, bit for bit (shuffled arrays, dropout, Adam,
a traced step). Interrupted by an exception from a callback and by SIGKILL in a child
process, backed up every epoch and every few batches."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import checkpoint, nn

EPOCHS, N, BATCH = 4, 40, 8  # 32 examples train: 4 batches an epoch


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, 3)).astype(np.float32)
    return x, (x.sum(1) > 0).astype(np.int64)


def _model(optimizer="adam", seed=None):
    em.random.set_seed(0)  # each run as a new process would start
    model = nn.Sequential([nn.layers.Dense(8, activation="relu", input_shape=(3,)),
                           nn.layers.Dropout(0.3, seed=seed), nn.layers.Dense(2)])
    opt = nn.optimizers.Adam(0.01) if optimizer == "adam" else nn.optimizers.SGD(0.1, 0.9)
    model.compile(opt, nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


class Interrupt(nn.callbacks.Callback):
    def __init__(self, epoch, batch):
        super().__init__()
        self.at, self.epoch = (epoch, batch), None

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        if (self.epoch, batch) == self.at:
            raise KeyboardInterrupt(f"interrupted at {self.at}")


def _fit(model, callbacks, **kw):
    x, y = _data()
    return model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0, callbacks=callbacks,
                     validation_split=0.2, **kw)


def _state(model):
    return [v.numpy() for v in model.variables + model.optimizer.variables]


def _assert_same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert_array_equal(u, v)


@pytest.fixture(scope="module")
def uninterrupted():
    """The reference run, on each backend (the backend fixture is per test: computed lazily
    per backend name)."""
    cache = {}

    def get(backend, optimizer="adam", seed=None):
        key = (backend, optimizer, seed)
        if key not in cache:
            model = _model(optimizer, seed)
            history = _fit(model, [])
            cache[key] = (_state(model), history.history, history.epoch)
        return cache[key]
    return get


@pytest.mark.parametrize("save_freq,stop,first", [
    ("epoch", (2, 0), 2),  # interrupted at an epoch's start: resumes there
    ("epoch", (2, 3), 2),  # inside an epoch: does it again from its start
    (3, (2, 3), 2),        # backed up after batch 0 of epoch 2 (the 9th): resumes at batch 1
    (4, (2, 0), 1),        # backed up after epoch 1's last batch: its end runs again
])
def test_a_resumed_fit_ends_as_if_never_interrupted(tmp_path, backend, uninterrupted,
                                                    save_freq, stop, first):
    want_state, want_history, _ = uninterrupted(backend)
    backup = nn.callbacks.BackupAndRestore(tmp_path / "backup", save_freq=save_freq)
    with pytest.raises(KeyboardInterrupt):
        _fit(_model(), [backup, Interrupt(*stop)])
    assert os.listdir(tmp_path / "backup"), "no backup was left behind"

    model = _model()  # a new process: new model, new optimizer, same seed
    history = _fit(model, [backup])
    _assert_same(_state(model), want_state)
    assert history.epoch == list(range(first, EPOCHS))
    for k, values in history.history.items():
        assert values == want_history[k][first:], k
    assert not (tmp_path / "backup").exists(), "delete_checkpoint=True left the backups"


@pytest.mark.parametrize("save_freq", ["epoch", 3])
def test_a_seeded_dropouts_stream_resumes_too(tmp_path, backend, uninterrupted, save_freq):
    want_state, want_history, _ = uninterrupted(backend, seed=11)
    backup = nn.callbacks.BackupAndRestore(tmp_path / "backup", save_freq=save_freq)
    with pytest.raises(KeyboardInterrupt):
        _fit(_model(seed=11), [backup, Interrupt(2, 3)])
    model = _model(seed=11)
    history = _fit(model, [backup])
    _assert_same(_state(model), want_state)
    assert history.history["loss"] == want_history["loss"][2:]


def test_a_killed_child_process_resumes_bit_for_bit(tmp_path, backend, uninterrupted, request):
    """SIGKILL in the middle of an epoch (no on_train_end, no cleanup, no flush): a second
    process resumes from the backup of the batch before and finishes as the uninterrupted
    run. The child runs the same code on the same backend as this test."""
    want_state, want_history, _ = uninterrupted(backend, "sgd")
    name = request.node.callspec.params["backend"]  # cpu, strict-gpu, ...
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, sys
        import numpy as np
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from ember.core.testing import backend_scope
        from ember import nn
        import test_callbacks_backup as t

        class Kill(t.Interrupt):
            def on_train_batch_begin(self, batch, logs=None):
                if (self.epoch, batch) == self.at:
                    os.kill(os.getpid(), signal.SIGKILL)

        with backend_scope({name!r}):
            backup = nn.callbacks.BackupAndRestore(sys.argv[1], save_freq=2)
            model = t._model("sgd")
            kill = [Kill(2, 3)] if sys.argv[3:] == ["kill"] else []
            history = t._fit(model, [backup, *kill])
            np.savez(sys.argv[2], *t._state(model), epoch=history.epoch,
                     **{{"h_" + k: v for k, v in history.history.items()}})
    """))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    run = [sys.executable, str(script), str(tmp_path / "backup"), str(tmp_path / "out.npz")]
    first = subprocess.run(run + ["kill"], env=env, capture_output=True, text=True,
                           timeout=120)
    assert first.returncode == -signal.SIGKILL, first.stderr
    assert not (tmp_path / "out.npz").exists()
    second = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    out = np.load(tmp_path / "out.npz")
    _assert_same([out[f"arr_{i}"] for i in range(len(want_state))], want_state)
    assert list(out["epoch"]) == [2, 3]  # resumed inside epoch 2
    for k, values in want_history.items():
        assert list(out["h_" + k]) == values[2:], k


def test_double_checkpoint_falls_back_to_the_backup_before_a_damaged_one(tmp_path, backend,
                                                                           uninterrupted):
    want_state, _, _ = uninterrupted(backend)
    directory = tmp_path / "backup"
    backup = nn.callbacks.BackupAndRestore(directory, double_checkpoint=True)
    with pytest.raises(KeyboardInterrupt):
        _fit(_model(), [backup, Interrupt(3, 1)])
    files = sorted(p for p in directory.iterdir() if p.suffix == ".safetensors")
    assert [p.name for p in files] == ["backup-2.safetensors", "backup-3.safetensors"]
    raw = bytearray(files[1].read_bytes())
    raw[-3] ^= 0xFF  # a flipped bit in the newest backup's last tensor
    files[1].write_bytes(bytes(raw))
    model = _model()
    history = _fit(model, [backup])
    assert history.epoch == [2, 3]  # from the end of epoch 1, the older backup
    _assert_same(_state(model), want_state)


def test_a_damaged_backup_without_a_second_is_an_error_naming_it(tmp_path, backend):
    directory = tmp_path / "backup"
    backup = nn.callbacks.BackupAndRestore(directory)
    with pytest.raises(KeyboardInterrupt):
        _fit(_model(), [backup, Interrupt(1, 0)])
    [file] = [p for p in directory.iterdir() if p.suffix == ".safetensors"]
    raw = bytearray(file.read_bytes())
    raw[-3] ^= 0xFF
    file.write_bytes(bytes(raw))
    with pytest.raises(checkpoint.CorruptCheckpointError, match="cannot resume from"):
        _fit(_model(), [backup])


def test_a_backup_of_another_model_is_refused(tmp_path, backend):
    backup = nn.callbacks.BackupAndRestore(tmp_path / "b")
    with pytest.raises(KeyboardInterrupt):
        _fit(_model(), [backup, Interrupt(1, 0)])
    other = nn.Sequential([nn.layers.Dense(5, input_shape=(3,)), nn.layers.Dense(2)])
    other.compile(nn.optimizers.Adam(0.01),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(checkpoint.CheckpointMismatchError, match="another model"):
        _fit(other, [backup])


def test_delete_checkpoint_false_keeps_the_backup_and_a_finished_fit_runs_no_epoch(
        tmp_path, backend):
    directory = tmp_path / "backup"
    (directory).mkdir()
    (directory / "notes.txt").write_text("mine")
    backup = nn.callbacks.BackupAndRestore(directory, delete_checkpoint=False)
    _fit(_model(), [backup])
    assert any(p.suffix == ".safetensors" for p in directory.iterdir())
    history = _fit(_model(), [backup])  # the backup says all epochs are done
    assert history.epoch == []
    deleting = nn.callbacks.BackupAndRestore(directory)
    _fit(_model(), [deleting])
    assert sorted(p.name for p in directory.iterdir()) == ["notes.txt"]  # only its own files


@pytest.mark.parametrize("kw,match", [
    (dict(backup_dir=""), "backup_dir is empty"),
    (dict(backup_dir="d", save_freq=0), "save_freq"),
    (dict(backup_dir="d", save_freq=False), "save_freq"),
    (dict(backup_dir="d", save_freq="batch"), "save_freq"),
    (dict(backup_dir="d", double_checkpoint=1), "double_checkpoint"),
    (dict(backup_dir="d", delete_checkpoint="no"), "delete_checkpoint"),
])
def test_bad_arguments_are_refused_by_name(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        nn.callbacks.BackupAndRestore(**kw)


def test_initial_epoch_starts_fit_there(backend):
    x, y = _data()
    model = _model()
    history = model.fit(x, y, batch_size=BATCH, epochs=3, initial_epoch=1, verbose=0)
    assert history.epoch == [1, 2] and int(model.optimizer.iterations.numpy()) == 10
    with pytest.raises(ValueError, match="initial_epoch"):
        model.fit(x, y, epochs=3, initial_epoch=-1, verbose=0)

import os

import numpy as np
import pytest
from ckpt_fakes import Variable

from ember.checkpoint import (
    Checkpoint,
    CheckpointManager,
    CorruptCheckpointError,
    _atomic,
    _manager,
    latest_checkpoint,
)


def _files(directory):
    return sorted(n for n in os.listdir(directory) if n.endswith(".safetensors"))


def test_keeps_the_newest(tmp_path):
    w = Variable(np.zeros(2))
    manager = CheckpointManager(Checkpoint(w=w), tmp_path, max_to_keep=2)
    assert manager.latest_checkpoint is None
    for i in range(4):
        w.assign(np.full(2, float(i)))
        manager.save()
    assert manager.checkpoints == [str(tmp_path / "ckpt-3"), str(tmp_path / "ckpt-4")]
    assert _files(tmp_path) == ["ckpt-3.safetensors", "ckpt-4.safetensors"]
    assert latest_checkpoint(tmp_path) == manager.latest_checkpoint == str(tmp_path / "ckpt-4")
    fresh = Variable(np.zeros(2))
    Checkpoint(w=fresh).restore(manager.latest_checkpoint).assert_consumed()
    np.testing.assert_array_equal(fresh.numpy(), [3.0, 3.0])


def test_checkpoint_number_and_name(tmp_path):
    manager = CheckpointManager(Checkpoint(w=np.zeros(1)), tmp_path, max_to_keep=None,
                                checkpoint_name="model")
    assert manager.save(checkpoint_number=100) == str(tmp_path / "model-100")
    assert manager.save() == str(tmp_path / "model-2")
    assert manager.checkpoint.save_counter == 2


def test_a_new_manager_picks_up_where_the_last_left(tmp_path):
    first = CheckpointManager(Checkpoint(w=np.zeros(1)), tmp_path, max_to_keep=3)
    for _ in range(3):
        first.save()
    ckpt = Checkpoint(w=np.zeros(1))
    second = CheckpointManager(ckpt, tmp_path, max_to_keep=2)
    assert second.checkpoints == first.checkpoints
    ckpt.restore(second.latest_checkpoint)
    assert second.save() == str(tmp_path / "ckpt-4")
    assert _files(tmp_path) == ["ckpt-3.safetensors", "ckpt-4.safetensors"]


def test_keep_checkpoint_every_n_hours(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(_manager.time, "time", lambda: clock[0])
    manager = CheckpointManager(Checkpoint(w=np.zeros(1)), tmp_path, max_to_keep=1,
                                keep_checkpoint_every_n_hours=1)
    for _ in range(6):
        clock[0] += 1800.0  # half an hour per save
        manager.save()
    # ckpt-2 is an hour after the start, ckpt-4 an hour after ckpt-2: both preserved.
    assert _files(tmp_path) == ["ckpt-2.safetensors", "ckpt-4.safetensors",
                                "ckpt-6.safetensors"]
    assert manager.checkpoints == [str(tmp_path / "ckpt-6")]


def test_leftover_temporaries_of_dead_writers_are_cleaned(tmp_path):
    dead = tmp_path / f".ckpt-9.safetensors.{_atomic._host()}.999999999.abcd{_atomic.TMP_SUFFIX}"
    alive = tmp_path / f".ckpt-8.safetensors.{_atomic._host()}.{os.getpid()}.abcd.ember-tmp"
    foreign = tmp_path / f".ckpt-7.safetensors.otherhost.1.abcd{_atomic.TMP_SUFFIX}"
    for p in (dead, alive, foreign):
        p.write_bytes(b"partial")
    manager = CheckpointManager(Checkpoint(w=np.zeros(1)), tmp_path, max_to_keep=1)
    assert not dead.exists() and alive.exists() and foreign.exists()
    assert manager.latest_checkpoint is None


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError):
        CheckpointManager(Checkpoint(w=np.zeros(1)), tmp_path, max_to_keep=0)
    with pytest.raises(ValueError):
        CheckpointManager(Checkpoint(w=np.zeros(1)), tmp_path, 1, checkpoint_name="a/b")


def test_latest_checkpoint_skips_removed_files_and_rejects_garbage(tmp_path):
    ckpt = Checkpoint(w=np.zeros(1))
    ckpt.save(tmp_path / "ckpt")
    ckpt.save(tmp_path / "ckpt")
    os.unlink(tmp_path / "ckpt-2.safetensors")
    assert latest_checkpoint(tmp_path) == str(tmp_path / "ckpt-1")
    (tmp_path / "checkpoint").write_text("model_checkpoint_path: 'x'")
    with pytest.raises(CorruptCheckpointError, match="state file"):
        latest_checkpoint(tmp_path)
    assert latest_checkpoint(tmp_path / "empty") is None

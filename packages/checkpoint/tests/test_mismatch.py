import numpy as np
import pytest
from ckpt_fakes import Variable
from numpy.testing import assert_array_equal

from ember.checkpoint import (
    Checkpoint,
    CheckpointError,
    CheckpointMismatchError,
    CheckpointNotFoundError,
    CorruptCheckpointError,
)


def _saved(tmp_path):
    return Checkpoint(model={"a": np.ones((2, 3), np.float32), "b": np.ones(4, np.float32),
                             "c": np.ones(1, np.float32)}).write(tmp_path / "c")


def test_mismatch_names_file_paths_shapes_and_dtypes_and_changes_nothing(tmp_path):
    path = _saved(tmp_path)
    a, b = Variable(np.zeros((3, 2)), np.float32), np.zeros(4, np.float64)
    c = np.zeros(1, np.float32)
    with pytest.raises(CheckpointMismatchError) as err:
        Checkpoint(model={"a": a, "b": b, "c": c}).restore(path)
    text = str(err.value)
    assert path + ".safetensors" in text
    assert "model/a: expected float32[3, 2] (the variable), found float32[2, 3]" in text
    assert "model/b: expected float64[4] (the variable), found float32[4]" in text
    assert_array_equal(c, [0.0])  # matching values are not assigned either
    assert a.assigned_devices == []


def test_kind_mismatch(tmp_path):
    path = _saved(tmp_path)
    with pytest.raises(CheckpointMismatchError, match="model: expected a tensor"):
        Checkpoint(model=np.zeros(1)).restore(path)


def test_not_found_and_directory(tmp_path):
    with pytest.raises(CheckpointNotFoundError, match="no checkpoint at"):
        Checkpoint(a=np.zeros(1)).restore(tmp_path / "nope")
    with pytest.raises(CheckpointNotFoundError, match="latest_checkpoint"):
        Checkpoint(a=np.zeros(1)).restore(tmp_path)
    assert issubclass(CheckpointNotFoundError, FileNotFoundError)


def test_foreign_safetensors_file(tmp_path):
    from safetensors.numpy import save_file

    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "f.safetensors"))
    with pytest.raises(CorruptCheckpointError, match="not an ember checkpoint"):
        Checkpoint(a=np.zeros(2, np.float32)).restore(tmp_path / "f.safetensors")


def test_errors_share_a_base():
    assert issubclass(CorruptCheckpointError, CheckpointError)
    assert issubclass(CheckpointMismatchError, ValueError)

"""list_variables / load_variable: reading a checkpoint without the objects it saved
(TensorFlow's tf.train.list_variables / tf.train.load_variable)."""

from __future__ import annotations

import numpy as np
import pytest

from ember import checkpoint


def _saved(tmp_path):
    w = np.arange(6.0).reshape(2, 3)
    b = np.ones(3, np.float32)
    ckpt = checkpoint.Checkpoint(model={"w": w, "b": b}, also=w)
    return ckpt.save(str(tmp_path / "ckpt")), w, b


def test_list_variables_gives_sorted_paths_and_shapes_of_a_file_or_a_directory(tmp_path):
    path, _, _ = _saved(tmp_path)
    got = checkpoint.list_variables(path)
    # model/w is the array saved as "also" (first in the walk): an alias, read below
    assert got == [("also", [2, 3]), ("model/b", [3]), ("save_counter", [])]
    assert checkpoint.list_variables(tmp_path) == got


def test_load_variable_reads_a_value_by_path_or_alias(tmp_path):
    path, w, b = _saved(tmp_path)
    got = checkpoint.load_variable(path, "model/b")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, b)
    np.testing.assert_array_equal(checkpoint.load_variable(tmp_path, "model/w"), w)
    got[0] = 5.0  # a new array: nothing else changes
    np.testing.assert_array_equal(checkpoint.load_variable(path, "model/b"), b)


def test_a_missing_value_or_checkpoint_is_named(tmp_path):
    path, _, _ = _saved(tmp_path)
    with pytest.raises(checkpoint.CheckpointNotFoundError, match="no value 'model/x'.*model/b"):
        checkpoint.load_variable(path, "model/x")
    with pytest.raises(checkpoint.CheckpointNotFoundError, match="no checkpoint"):
        checkpoint.list_variables(tmp_path / "nothing")

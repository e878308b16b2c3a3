import numpy as np
import pytest
from ckpt_fakes import Variable

from ember.checkpoint import Checkpoint, IncompleteRestoreError


def test_restore_none_is_a_first_run():
    status = Checkpoint(w=np.zeros(2)).restore(None)
    assert status.pending == [] and status.path is None
    assert status.expect_partial() is status
    with pytest.raises(IncompleteRestoreError, match="nothing was restored"):
        status.assert_consumed()
    with pytest.raises(AssertionError):
        status.assert_existing_objects_matched()


def test_unused_values_are_pending_and_fail_assert_consumed(tmp_path):
    path = Checkpoint(a=np.ones(2), b=np.ones(3)).write(tmp_path / "c")
    a = np.zeros(2)
    status = Checkpoint(a=a).restore(path)
    assert status.pending == ["b"]
    status.assert_existing_objects_matched()
    with pytest.raises(IncompleteRestoreError, match="(?s)1 saved value.*\n  b"):
        status.assert_consumed()
    assert status.expect_partial() is status


def test_live_objects_missing_from_file_are_unmatched(tmp_path):
    path = Checkpoint(a=np.ones(2)).write(tmp_path / "c")
    status = Checkpoint(a=np.zeros(2), extra={"v": Variable(np.zeros(1))}).restore(path)
    assert status.unmatched == ["extra", "extra/v"]
    with pytest.raises(IncompleteRestoreError, match="extra/v: not in the checkpoint"):
        status.assert_existing_objects_matched()


def test_value_created_without_listener_is_reported(tmp_path):
    path = Checkpoint(m={"w": np.ones(2)}).write(tmp_path / "c")
    holder = {}
    status = Checkpoint(m=holder).restore(path)
    holder["w"] = np.zeros(2)  # a plain dict cannot tell anyone
    with pytest.raises(IncompleteRestoreError, match="m/w: exists but was not restored"):
        status.assert_existing_objects_matched()


def test_unused_values_are_logged_unless_expected(tmp_path, caplog):
    import gc

    path = Checkpoint(a=np.ones(2), b=np.ones(3)).write(tmp_path / "c")
    Checkpoint(a=np.zeros(2)).restore(path)
    gc.collect()
    assert "never restored" in caplog.text
    caplog.clear()
    Checkpoint(a=np.zeros(2)).restore(path).expect_partial()
    gc.collect()
    assert "never restored" not in caplog.text

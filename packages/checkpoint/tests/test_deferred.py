import numpy as np
import pytest
from ckpt_fakes import MLP, Adam, DataPosition, Variable, batch, train_step
from numpy.testing import assert_array_equal

from ember.checkpoint import Checkpoint, CheckpointMismatchError, latest_checkpoint


def _run(steps, model=None, opt=None, start=0):
    model, opt = model or MLP(), opt or Adam()
    for step in range(start, start + steps):
        train_step(model, opt, step)
    return model, opt


def test_resume_trains_exactly_as_if_never_interrupted(tmp_path):
    uninterrupted, uopt = _run(5)

    model, opt = _run(3)
    Checkpoint(model=model, optimizer=opt).save(tmp_path / "ckpt")
    del model, opt

    # A new process: nothing is built yet when restore runs.
    model, opt = MLP(), Adam()
    root = Checkpoint(model=model, optimizer=opt)
    status = root.restore(latest_checkpoint(tmp_path))
    assert "model/dense1/kernel" in status.pending
    assert "optimizer/slots/model/dense2/bias/m" in status.pending
    status.assert_existing_objects_matched()
    assert int(opt.iterations.numpy()) == 3  # existing variables restored at once
    model(batch(3)[0])  # builds the layers: variables take their saved values
    assert not [p for p in status.pending if p.startswith("model/")]
    assert_array_equal(model.dense1.kernel.numpy(), _run(3)[0].dense1.kernel.numpy())
    train_step(model, opt, 3)  # slots are created here and restored before use
    train_step(model, opt, 4)
    status.assert_consumed()
    for a, b in zip(uninterrupted.variables, model.variables):
        assert_array_equal(a.numpy(), b.numpy())
    for (_, n, s1), (_, _, s2) in zip(uopt.__checkpoint_slots__(), opt.__checkpoint_slots__()):
        assert_array_equal(s1.numpy(), s2.numpy(), err_msg=n)


def test_deferred_mismatch_names_the_path(tmp_path):
    model, opt = _run(1)
    path = Checkpoint(model=model).save(tmp_path / "c")
    wrong = MLP(hidden=5)
    Checkpoint(model=wrong).restore(path)
    with pytest.raises(CheckpointMismatchError, match=r"model/dense1/bias: expected float32\[5\]"):
        wrong(batch(0)[0])


def test_deferred_state_and_nested_containers(tmp_path):
    class Lazy:
        def __init__(self):
            self.kids = {}
            self.listeners = []

        def __checkpoint_children__(self):
            return self.kids

        def __checkpoint_listen__(self, listener):
            self.listeners.append(listener)

        def add(self, name, child):
            self.kids[name] = child
            for listener in self.listeners:
                listener.child_created(self, name, child)

    pos = DataPosition()
    pos.index = 41
    src = Lazy()
    src.add("data", pos)
    src.add("sub", {"w": np.arange(3.0)})
    path = Checkpoint(root=src).write(tmp_path / "c")
    dst = Lazy()
    status = Checkpoint(root=dst).restore(path)
    assert status.pending == ["root/data", "root/sub/w"]
    dst.add("data", DataPosition())
    dst.add("sub", {"w": np.zeros(3)})
    assert dst.kids["data"].index == 41
    assert_array_equal(dst.kids["sub"]["w"], [0.0, 1.0, 2.0])
    status.assert_consumed()


def test_new_restore_supersedes_pending_values(tmp_path):
    model, _ = _run(1)
    path = Checkpoint(model=model).write(tmp_path / "c")
    fresh = MLP()
    root = Checkpoint(model=fresh)
    root.restore(path)
    root.restore(None)  # does not supersede: nothing was restored
    other = Checkpoint(x=Variable(np.zeros(1))).write(tmp_path / "d")
    Checkpoint(x=Variable(np.zeros(1))).restore(other)
    fresh(batch(0)[0])
    assert_array_equal(fresh.dense1.kernel.numpy(), model.dense1.kernel.numpy())

import os
import random

import ml_dtypes
import numpy as np
import pytest
from ckpt_fakes import MLP, Adam, DataPosition, Variable, batch, train_step
from numpy.testing import assert_array_equal
from safetensors import safe_open

from ember.checkpoint import Checkpoint, CheckpointFile, latest_checkpoint


def test_save_numbers_and_counter(tmp_path):
    w = Variable(np.arange(4.0), np.float32)
    ckpt = Checkpoint(w=w)
    prefix = str(tmp_path / "run" / "ckpt")
    assert ckpt.save(prefix) == prefix + "-1"
    assert ckpt.save(prefix) == prefix + "-2"
    assert latest_checkpoint(tmp_path / "run") == prefix + "-2"
    assert os.path.exists(prefix + "-2.safetensors")
    fresh = Checkpoint(w=Variable(np.zeros(4), np.float32))
    fresh.restore(prefix + "-1").assert_consumed()
    assert fresh.save_counter == 1
    assert fresh.save(prefix) == prefix + "-2"  # continues the restored numbering


def test_write_has_no_numbering_and_no_state_file(tmp_path):
    ckpt = Checkpoint(a=np.ones(2))
    assert ckpt.write(tmp_path / "plain") == str(tmp_path / "plain")
    assert ckpt.write(tmp_path / "x.safetensors") == str(tmp_path / "x.safetensors")
    assert sorted(os.listdir(tmp_path)) == ["plain.safetensors", "x.safetensors"]
    assert ckpt.save_counter == 0
    assert latest_checkpoint(tmp_path) is None


def test_model_and_optimizer_with_slots(tmp_path):
    model, opt = MLP(), Adam()
    for step in range(3):
        train_step(model, opt, step)
    ckpt = Checkpoint(model=model, optimizer=opt)
    path = ckpt.save(tmp_path / "ckpt")
    keys = set(CheckpointFile(path + ".safetensors").entries)
    assert {"model/dense1/kernel", "model/dense2/bias", "optimizer/iterations",
            "optimizer/slots/model/dense1/kernel/m", "optimizer/slots/model/dense2/bias/v",
            "save_counter"} <= keys
    model2, opt2 = MLP(), Adam()
    train_step(model2, opt2, 99)  # built, with different values
    Checkpoint(model=model2, optimizer=opt2).restore(path).assert_consumed()
    for a, b in zip(model.variables, model2.variables):
        assert_array_equal(a.numpy(), b.numpy())
    assert int(opt2.iterations.numpy()) == 3
    for (_, name, s1), (_, _, s2) in zip(opt.__checkpoint_slots__(), opt2.__checkpoint_slots__()):
        assert_array_equal(s1.numpy(), s2.numpy(), err_msg=name)


def test_nested_lists_dicts_tuples(tmp_path):
    state = {"layers": [np.ones(2), {"w": np.full(3, 2.0)}], "pair": (np.zeros(1), np.ones(1))}
    path = Checkpoint(state=state).write(tmp_path / "c")
    assert "state/layers/1/w" in CheckpointFile(path + ".safetensors").entries
    other = {"layers": [np.zeros(2), {"w": np.zeros(3)}], "pair": (np.ones(1), np.zeros(1))}
    Checkpoint(state=other).restore(path).assert_consumed()
    assert_array_equal(other["layers"][1]["w"], [2.0, 2.0, 2.0])
    assert_array_equal(other["pair"][0], [0.0])


def test_shared_object_saved_once_and_restored_through_alias(tmp_path):
    shared = Variable(np.arange(3.0))
    encoder = {"kernel": shared}
    path = Checkpoint(model={"enc": encoder}, decoder={"enc": encoder, "tied": shared}).write(
        tmp_path / "c")
    file = CheckpointFile(path + ".safetensors")
    # breadth first: the shortest path is primary
    assert [k for k in file.entries if k != "save_counter"] == ["decoder/tied"]
    assert file.aliases == {"decoder/enc/kernel": "decoder/tied", "model/enc": "decoder/enc"}
    # Restore into a program that only reaches the variable by a path that was an alias.
    target = Variable(np.zeros(3))
    status = Checkpoint(model={"enc": {"kernel": target}}).restore(path)
    assert_array_equal(target.numpy(), [0.0, 1.0, 2.0])
    status.assert_existing_objects_matched()


def test_creation_order_does_not_matter(tmp_path):
    model, opt = MLP(), Adam()
    train_step(model, opt, 0)
    path = Checkpoint(model=model, optimizer=opt).save(tmp_path / "c")
    model2, opt2 = MLP(reverse_build=True), Adam()
    model2(batch(0)[0])
    # same shapes everywhere in dense2 bias vs dense1 bias would be swapped by position
    Checkpoint(model=model2, optimizer=opt2).restore(path).expect_partial()
    for a, b in zip(model.variables, model2.variables):
        assert_array_equal(a.numpy(), b.numpy())


DTYPES = [
    np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
    np.uint64, np.float16, np.float32, np.float64, np.longdouble, np.complex64,
    np.complex128, np.clongdouble, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2, ml_dtypes.int4, "datetime64[ns]", "timedelta64[s]", "U5", "S3",
    ">f4", ">i8", ">c16", [("a", "<i4"), ("b", "<f8", (2,))],
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3)], ids=str)
def test_every_dtype_round_trips(tmp_path, dtype, shape):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    raw = raw % 2 if dtype.kind == "b" else raw
    value = raw.view(dtype).reshape(shape).copy()
    path = Checkpoint(v=value).write(tmp_path / "c")
    out = np.zeros(shape, dtype)
    Checkpoint(v=out).restore(path).assert_consumed()
    assert out.dtype == dtype
    assert out.tobytes() == value.tobytes()


def test_file_opens_with_plain_safetensors(tmp_path):
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    half = np.arange(4, dtype=ml_dtypes.bfloat16)
    path = Checkpoint(model={"w": value, "h": half}).write(tmp_path / "c")
    with safe_open(path + ".safetensors", framework="np") as f:
        assert_array_equal(f.get_tensor("model/w"), value)
        assert set(f.keys()) == {"model/w", "model/h", "save_counter"}
        assert "ember.checkpoint" in f.metadata()


def test_opaque_state_round_trips_exactly(tmp_path):
    pos = DataPosition()
    pos.epoch, pos.index = 3, 2**200 + 7
    gen = np.random.default_rng(123)
    mt = np.random.Generator(np.random.MT19937(5))
    py = random.Random(9)
    for g in (gen, mt):
        g.standard_normal(7)
    py.random()
    path = Checkpoint(data=pos, rng=gen, mt=mt, py=py).write(tmp_path / "c")
    expected = gen.standard_normal(5), mt.standard_normal(5), py.random()
    pos2, gen2 = DataPosition(), np.random.default_rng(0)
    mt2, py2 = np.random.Generator(np.random.MT19937(0)), random.Random(0)
    Checkpoint(data=pos2, rng=gen2, mt=mt2, py=py2).restore(path).assert_consumed()
    assert (pos2.epoch, pos2.index) == (3, 2**200 + 7)
    assert_array_equal(gen2.standard_normal(5), expected[0])
    assert_array_equal(mt2.standard_normal(5), expected[1])
    assert py2.random() == expected[2]


def test_restored_value_lands_on_the_variable_device(tmp_path):
    path = Checkpoint(w=Variable(np.ones(2), device="gpu:1")).write(tmp_path / "c")
    target = Variable(np.zeros(2), device="gpu:1")
    Checkpoint(w=target).restore(path)
    assert target.assigned_devices == ["gpu:1"]
    assert target.device == "gpu:1"


def test_object_arrays_are_refused(tmp_path):
    with pytest.raises(TypeError, match="pickl"):
        Checkpoint(w=np.array([object()])).write(tmp_path / "c")


def test_root_objects_must_take_part():
    with pytest.raises(TypeError, match="step=int"):
        Checkpoint(step=5)
    with pytest.raises(ValueError, match="reserved"):
        Checkpoint(save_counter=np.zeros(()))
    with pytest.raises(ValueError, match="'/'"):
        Checkpoint(**{"a/b": np.zeros(())})


def test_path_collision_is_an_error(tmp_path):
    class Weird:
        def __checkpoint_children__(self):
            return {"slots": {"p": {"x": np.zeros(1)}}}

        def __checkpoint_slots__(self):
            return [(prim, "x", np.ones(1))]

    prim = np.zeros(1)
    with pytest.raises(ValueError, match="two objects"):
        Checkpoint(p=prim, o=Weird()).write(tmp_path / "c")

"""Restore at the speed of a plain load (issue 30): each variable's value is read once into
a fresh array, checksummed beside the read, and handed to a variable that implements
``__checkpoint_assign__`` without a copy; all or nothing still holds, for files of both
formats, whichever way the reads are cut into pieces and batches."""

import json
import os
import struct

import google_crc32c
import numpy as np
import pytest
from ckpt_fakes import Variable
from numpy.testing import assert_array_equal

from ember.checkpoint import (
    Checkpoint,
    CheckpointFile,
    CheckpointMismatchError,
    CorruptCheckpointError,
    _checksum,
    _format,
    _reading,
)


class Adopting(Variable):
    """A variable that keeps the array a restore hands it (as ember.core's does)."""

    def __init__(self, value, dtype=np.float32):
        super().__init__(value, dtype)
        self.calls = []

    @property
    def held(self):
        """The array it holds now (read without a copy, and without counting a call)."""
        return self._value

    def numpy(self):
        self.calls.append("numpy")
        return super().numpy()

    def assign(self, value):
        self.calls.append("assign")
        super().assign(value)

    def __checkpoint_assign__(self, array):
        self.calls.append("adopt")
        old, self._value = self._value, array
        return lambda: setattr(self, "_value", old)


class Broken(Variable):
    def assign(self, value):
        raise RuntimeError("device out of memory")


def _model(cls=Adopting, fill=None):
    rng = np.random.default_rng(0)
    out = {"big": rng.standard_normal((64, 33)), "small": rng.standard_normal(5),
           "empty": np.zeros((0, 3)), "scalar": np.float32(2.5)}
    out.update({f"b{i}": rng.standard_normal(i + 1) for i in range(12)})
    return {k: cls(np.full(np.shape(v), fill) if fill is not None else v)
            for k, v in out.items()}


def _values(model):
    return {k: np.array(v.held) for k, v in model.items()}


@pytest.fixture(params=["threaded", "inline"])
def cut_small(request, monkeypatch):
    """Reads in pieces of 40 bytes and batches of at most 3 buffers, the checksums on a
    second thread or inline: every way a tensor is split and batched is exercised."""
    monkeypatch.setattr(_reading, "PIECE", 40)
    monkeypatch.setattr(_reading, "_IOV_MAX", 3)
    monkeypatch.setattr(_reading, "THREADED", request.param == "threaded")


def test_handed_over_values_are_the_saved_ones_with_no_copy_kept(tmp_path, cut_small):
    source = _model()
    path = Checkpoint(model=source, extra=np.arange(7.0)).write(tmp_path / "c")
    target, extra = _model(fill=-1.0), np.zeros(7)
    Checkpoint(model=target, extra=extra).restore(path).assert_consumed()
    for key, value in _values(source).items():
        got = target[key].held
        assert_array_equal(got, value)
        assert got.dtype == value.dtype and got.flags.writeable and got.flags.c_contiguous
        assert got.base is None, key  # owns its memory: who else holds it can be counted
        assert target[key].calls == ["adopt"], key  # no numpy() copy kept, no assign
    assert_array_equal(extra, np.arange(7.0))


def test_a_failing_commit_puts_handed_over_values_back(tmp_path):
    path = Checkpoint(model={"a": Adopting(np.arange(3.0)), "z": Variable(np.ones(2))}).write(
        tmp_path / "c")
    target = {"a": Adopting(np.full(3, -1.0)), "z": Broken(np.full(2, -1.0))}
    with pytest.raises(CheckpointMismatchError, match="every object changed was put back"):
        Checkpoint(model=target).restore(path)
    assert_array_equal(target["a"].held, np.full(3, -1.0))
    assert_array_equal(target["z"].numpy(), np.full(2, -1.0))


def test_a_hook_that_gives_no_rollback_is_refused_and_the_rest_put_back(tmp_path):
    class NoRollback(Adopting):
        def __checkpoint_assign__(self, array):
            super().__checkpoint_assign__(array)
            return None

    path = Checkpoint(model={"a": Adopting(np.arange(3.0)), "b": Adopting(np.ones(2))}).write(
        tmp_path / "c")
    target = {"a": Adopting(np.full(3, -1.0)), "b": NoRollback(np.full(2, -1.0))}
    with pytest.raises(CheckpointMismatchError, match="NoRollback.__checkpoint_assign__ "
                                                      "returned NoneType"):
        Checkpoint(model=target).restore(path)
    assert_array_equal(target["a"].held, np.full(3, -1.0))


def test_a_key_restoring_several_objects_gives_each_its_own_array(tmp_path):
    shared = Adopting(np.arange(4.0))
    path = Checkpoint(a={"w": shared}, b={"w": shared}, c={"w": shared}).write(tmp_path / "c")
    assert CheckpointFile(path + ".safetensors").aliases  # saved once, the others aliases
    a, b, c = Adopting(np.zeros(4)), Adopting(np.zeros(4)), np.zeros(4, np.float32)
    Checkpoint(a={"w": a}, b={"w": b}, c={"w": c}).restore(path)
    for got in (a.held, b.held, c):
        assert_array_equal(got, np.arange(4.0))
    assert not np.shares_memory(a.held, b.held)
    assert not np.shares_memory(a.held, c) and not np.shares_memory(b.held, c)


class InPlace(Adopting):
    """A variable that offers its own buffer while ``free`` (nothing else holds it)."""

    free = True

    def __checkpoint_buffer__(self):
        self.calls.append("buffer")
        return self._value if self.free else None


def test_a_variable_that_offers_its_buffer_is_written_in_place(tmp_path, cut_small):
    source = _model()
    path = Checkpoint(model=source).write(tmp_path / "c")
    target = _model(InPlace, fill=-1.0)
    buffers = {k: v.held for k, v in target.items()}
    Checkpoint(model=target).restore(path).assert_consumed()
    for key, value in _values(source).items():
        assert target[key].held is buffers[key]
        assert_array_equal(buffers[key], value)
        assert target[key].calls == ["buffer", "buffer"], key  # asked when planned and written


def test_a_buffer_taken_since_the_check_gets_a_new_array_and_damage_writes_nothing(tmp_path):
    path = Checkpoint(model={"a": Adopting(np.arange(3.0)), "b": Adopting(np.ones(2))}).write(
        tmp_path / "c")

    class TakenLater(InPlace):
        def __checkpoint_buffer__(self):
            self.free = not self.calls  # free when the restore plans, held when it writes
            return super().__checkpoint_buffer__()

    target = {"a": TakenLater(np.full(3, -1.0)), "b": InPlace(np.full(2, -1.0))}
    held = target["a"].held
    Checkpoint(model=target).restore(path)
    assert_array_equal(target["a"].held, np.arange(3.0))
    assert_array_equal(held, np.full(3, -1.0))  # the holder's array is not written
    assert target["a"].calls[-1] == "adopt"
    _flip(path + ".safetensors", 0, "model/a")
    target = {"a": InPlace(np.full(3, -1.0)), "b": InPlace(np.full(2, -1.0))}
    with pytest.raises(CorruptCheckpointError, match="'model/a'"):
        Checkpoint(model=target).restore(path)
    assert all(np.all(v.held == -1.0) for v in target.values())


def test_a_buffer_that_does_not_fit_is_refused_by_name(tmp_path):
    path = Checkpoint(model={"a": Adopting(np.arange(3.0))}).write(tmp_path / "c")

    class Wrong(InPlace):
        def __checkpoint_buffer__(self):
            return np.zeros(4, np.float32)

    target = {"a": Wrong(np.full(3, -1.0))}
    with pytest.raises(TypeError, match=r"Wrong.__checkpoint_buffer__ returned a float32\[4\], "
                                        r"not None or a writable float32\[3\]"):
        Checkpoint(model=target).restore(path)
    assert_array_equal(target["a"].held, np.full(3, -1.0))


def _flip(path, offset_in_tensor, key):
    file = CheckpointFile(path)
    at = file._data_start + file.entries[key].begin + offset_in_tensor
    file.close()
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x10]))


@pytest.mark.parametrize("offset", [0, 39, 40, 1000, 64 * 33 * 4 - 1])
def test_damage_anywhere_in_a_tensor_restores_nothing(tmp_path, cut_small, offset):
    path = Checkpoint(model=_model()).write(tmp_path / "c") + ".safetensors"
    _flip(path, offset, "model/big")
    target = _model(fill=-1.0)
    with pytest.raises(CorruptCheckpointError, match=r"checksum mismatch in tensor "
                                                     r"'model/big'"):
        Checkpoint(model=target).restore(path)
    for key, variable in target.items():
        assert variable.calls == [], key
        assert np.all(variable.held == -1.0)


@pytest.mark.parametrize("offset", [0, 41, 64 * 33 * 4 - 1])
def test_damage_in_an_array_restored_in_place_restores_nothing(tmp_path, cut_small, offset):
    """numpy arrays are checked in the file's mapping, in batches of pieces, then copied."""
    source = {k: v.held for k, v in _model().items()}
    path = Checkpoint(model=source).write(tmp_path / "c") + ".safetensors"
    _flip(path, offset, "model/big")
    target = {k: np.full_like(v, -1.0) for k, v in source.items()}
    with pytest.raises(CorruptCheckpointError, match="'model/big'"):
        Checkpoint(model=target).restore(path)
    assert all(np.all(v == -1.0) for v in target.values())


def test_short_reads_are_resumed_and_a_file_that_ends_early_is_corrupt(tmp_path, monkeypatch,
                                                                      cut_small):
    path = Checkpoint(model=_model()).write(tmp_path / "c")
    preadv = os.preadv
    monkeypatch.setattr(os, "preadv", lambda fd, views, at: preadv(fd, [views[0][:7]], at))
    target = _model(fill=-1.0)
    Checkpoint(model=target).restore(path)
    for key, value in _values(_model()).items():
        assert_array_equal(target[key].held, value)
    monkeypatch.setattr(os, "preadv", lambda fd, views, at: 0)
    target = _model(fill=-1.0)
    with pytest.raises(CorruptCheckpointError, match="truncated: no data at byte"):
        Checkpoint(model=target).restore(path)
    assert all(np.all(v.held == -1.0) for v in target.values())


def _header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n)), 8 + n


def test_new_files_are_format_2_with_the_crc32c_of_each_tensor(tmp_path):
    path = Checkpoint(model=_model()).write(tmp_path / "c") + ".safetensors"
    table, start = _header(path)
    meta = json.loads(table.pop("__metadata__")["ember.checkpoint"])
    assert meta["format"] == "ember.checkpoint/2"
    data = open(path, "rb").read()
    for key, spec in table.items():
        begin, end = spec["data_offsets"]
        record = meta["values"][key]
        assert set(record) == {"dtype", "shape", "crc32c"}
        assert record["crc32c"] == google_crc32c.value(data[start + begin:start + end])


def _write_format_1(monkeypatch, path, **objects):
    with monkeypatch.context() as m:
        m.setattr(_format, "FORMAT", "ember.checkpoint/1")
        m.setattr(_format, "CHECKSUM_KEY", "crc32")
        m.setattr(_format, "_CHECKSUM", _checksum.crc32)
        return Checkpoint(**objects).write(path) + ".safetensors"


def test_format_1_files_with_zlib_crc32_still_restore_and_damage_is_found(tmp_path,
                                                                         monkeypatch):
    path = _write_format_1(monkeypatch, tmp_path / "old", model=_model(),
                           arrays={"x": np.arange(5.0)})
    table, _ = _header(path)
    meta = json.loads(table["__metadata__"]["ember.checkpoint"])
    assert meta["format"] == "ember.checkpoint/1" and "crc32" in meta["values"]["model/big"]
    target, x = _model(fill=-1.0), np.zeros(5)
    Checkpoint(model=target, arrays={"x": x}).restore(path).assert_consumed()
    for key, value in _values(_model()).items():
        assert_array_equal(target[key].held, value)
    assert_array_equal(x, np.arange(5.0))
    _flip(path, 100, "model/big")
    target = _model(fill=-1.0)
    with pytest.raises(CorruptCheckpointError, match="'model/big'"):
        Checkpoint(model=target).restore(path)
    assert all(np.all(v.held == -1.0) for v in target.values())


def test_an_unknown_format_is_refused_naming_the_known_ones(tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(_format, "FORMAT", "ember.checkpoint/9")
        m.setattr(_checksum, "BY_FORMAT", {**_checksum.BY_FORMAT,
                                           "ember.checkpoint/9": ("crc32c", _checksum.crc32c)})
        path = Checkpoint(w=np.ones(2)).write(tmp_path / "c")
    with pytest.raises(CorruptCheckpointError, match=r"unsupported ember checkpoint format "
                                                     r"\(expected one of 'ember.checkpoint/1'"):
        Checkpoint(w=np.ones(2)).restore(path)


def test_checksums_come_in_pieces_and_match_one_pass(monkeypatch):
    """Without the native library (``_checksum._NATIVE``), the Python function, which holds
    the GIL, takes pieces of at most ``PIECE`` bytes."""
    monkeypatch.setattr(_checksum, "_NATIVE", None)
    data = np.random.default_rng(0).integers(0, 255, 3 * 1000 + 17, dtype=np.uint8)
    whole = google_crc32c.value(data.tobytes())
    old = _checksum.PIECE
    try:
        _checksum.PIECE = 1000
        assert _checksum.crc32c(data) == whole
        assert _checksum.crc32c(data[1000:], _checksum.crc32c(data[:1000])) == whole
    finally:
        _checksum.PIECE = old
    assert _checksum.crc32c(data[:0]) == 0

"""Checks and copies shared out over the CPUs (issue 30): the CRC-32C is called without the
GIL, pieces of one tensor checked apart join to the tensor's checksum, and a restore cut
into tiny pieces over several threads restores every byte, or nothing where one is damaged;
without the native library everything still restores, on one thread."""

import ctypes
import os
import threading
import zlib

import google_crc32c
import numpy as np
import pytest
from numpy.testing import assert_array_equal

from ember.checkpoint import (
    Checkpoint,
    CheckpointFile,
    CorruptCheckpointError,
    _checksum,
    _parallel,
    _reading,
)

CHECKSUMS = {"crc32c": (_checksum.crc32c, lambda b: google_crc32c.value(b)),
             "crc32": (_checksum.crc32, zlib.crc32)}


@pytest.mark.parametrize("name", CHECKSUMS)
@pytest.mark.parametrize("size", [0, 1, 9, 4096, 100_003])
def test_pieces_checked_apart_join_to_the_checksum_of_the_whole(name, size):
    checksum, reference = CHECKSUMS[name]
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    combine = _checksum.combiner(checksum)
    whole = checksum(data, 0)
    assert whole == reference(data.tobytes())
    for cut in {0, min(1, size), size // 3, size // 2, max(size - 1, 0), size}:
        head, tail = checksum(data[:cut], 0), checksum(data[cut:], 0)
        assert combine(head, tail, size - cut) == whole, cut
    three = [data[: size // 4], data[size // 4: size // 2], data[size // 2:]]
    crc = 0
    for piece in three:
        crc = combine(crc, checksum(piece, 0), len(piece))
    assert crc == whole
    assert _checksum.combiner(lambda data, crc: 0) is None  # no guess for another checksum


def test_the_native_crc32c_is_the_libraries_and_runs_without_the_gil():
    if google_crc32c.implementation != "c":
        pytest.fail("google-crc32c has no C extension here; restores check on one CPU")
    native = _checksum._NATIVE
    # a ctypes.CDLL function (a PyDLL one would keep the GIL for the call)
    assert isinstance(native, ctypes._CFuncPtr)
    assert not native._flags_ & ctypes._FUNCFLAG_PYTHONAPI
    assert _checksum.GIL_FREE and _checksum.gil_free(_checksum.crc32c)
    data = np.random.default_rng(1).integers(0, 256, 1 << 20, dtype=np.uint8)
    assert _checksum.crc32c(data) == google_crc32c.value(data.tobytes())
    assert _checksum.crc32c(data[5:], _checksum.crc32c(data[:5])) == _checksum.crc32c(data)
    with pytest.raises(TypeError, match="C-contiguous numpy array"):
        _checksum.crc32c(data[::2])


def test_tasks_run_on_several_threads_in_order_and_the_first_error_is_raised():
    meet = threading.Barrier(3, timeout=10)  # passes only if three threads run at once
    assert _parallel.run([lambda i=i: (meet.wait(), i)[1] for i in range(3)], 3) == [0, 1, 2]
    ran = []

    def fail():
        raise ValueError("task 1 failed")

    with pytest.raises(ValueError, match="task 1 failed"):
        _parallel.run([lambda: ran.append(0), fail, lambda: ran.append(2)], 1)
    assert ran == [0]  # after a failure no task is taken up
    main = threading.get_ident()
    assert _parallel.run([threading.get_ident] * 4, 1) == [main] * 4  # one: the caller's


@pytest.fixture
def idle(monkeypatch):
    """Several threads whatever the machine's load (the default gives busy CPUs none)."""
    monkeypatch.setattr(_parallel, "WORKERS", 4)
    monkeypatch.setattr(_parallel, "_cpus", lambda: 4)
    monkeypatch.setattr(_parallel, "_others_running", lambda: 0)
    assert _parallel.idle_workers() == 4


def test_threads_are_started_only_where_cpus_are_idle(monkeypatch):
    monkeypatch.setattr(_parallel, "WORKERS", 4)
    monkeypatch.setattr(_parallel, "_cpus", lambda: 4)
    for others, workers in [(0, 4), (1, 3), (2, 2), (3, 1), (4, 1), (9, 1)]:
        monkeypatch.setattr(_parallel, "_others_running", lambda n=others: n)
        assert _parallel.idle_workers() == workers, others
    # where the running threads are unknown, the load average counts this process too
    monkeypatch.setattr(_parallel, "_others_running", lambda: None)
    for load, workers in [(0.0, 4), (1.0, 4), (2.5, 2), (3.0, 2), (4.0, 1), (9.0, 1)]:
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        assert _parallel.idle_workers() == workers, load
    assert set(_parallel.run([threading.get_ident] * 8)) == {threading.get_ident()}


def test_the_running_threads_are_read_from_proc_loadavg(monkeypatch, tmp_path):
    """The caller is one of the running threads /proc/loadavg counts; a file that cannot
    be read or parsed leaves the load average to decide."""
    import builtins
    real_open = builtins.open
    for text, others in [(b"1.01 0.96 0.98 1/79 558\n", 0), (b"3.5 1 1 4/200 9\n", 3),
                         (b"garbled\n", None)]:
        fake = tmp_path / "loadavg"
        fake.write_bytes(text)
        monkeypatch.setattr(builtins, "open", lambda p, *a, fake=fake, **k:
                            real_open(fake if p == "/proc/loadavg" else p, *a, **k))
        assert _parallel._others_running() == others, text


def test_copies_cut_into_pieces_equal_plain_copies(monkeypatch, idle):
    monkeypatch.setattr(_reading, "PIECE", 40)
    rng = np.random.default_rng(2)
    sources = [rng.standard_normal((37, 11)).astype(np.float32),
               rng.standard_normal((6, 8)),  # into a strided target
               rng.standard_normal(5).astype(">f8"),  # another byte order
               np.zeros((0, 4), np.float32), np.float32(3.5) * np.ones(())]
    targets = [np.zeros((37, 11), np.float32), np.zeros((6, 16))[:, ::2], np.zeros(5),
               np.zeros((0, 4), np.float32), np.zeros((), np.float32)]
    _reading.copy_all(list(zip(targets, sources)))
    for target, source in zip(targets, sources):
        assert_array_equal(target, source)


def _model():
    rng = np.random.default_rng(3)
    return {"big": rng.standard_normal((300, 7)).astype(np.float32),
            "b": rng.standard_normal(3), "empty": np.zeros((0, 2)),
            **{f"s{i}": rng.integers(0, 9, i + 1) for i in range(5)}}


def _flip(path, key, offset):
    file = CheckpointFile(path)
    at = file._data_start + file.entries[key].begin + offset
    file.close()
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x01]))


@pytest.mark.parametrize("native", [True, False])
def test_a_restore_in_tiny_pieces_on_several_threads_is_exact_or_changes_nothing(
        tmp_path, monkeypatch, idle, native):
    monkeypatch.setattr(_reading, "PIECE", 24)
    if not native:  # the Python function: correct, on one thread
        monkeypatch.setattr(_checksum, "_NATIVE", None)
        monkeypatch.setattr(_checksum, "GIL_FREE", False)
    source = _model()
    path = Checkpoint(model=source).write(tmp_path / "c") + ".safetensors"
    target = {k: np.full_like(v, 7) for k, v in source.items()}
    Checkpoint(model=target).restore(path).assert_consumed()
    for key, value in source.items():
        assert_array_equal(target[key], value)
    for offset in (0, 23, 24, 25, 300 * 7 * 4 - 1):
        _flip(path, "model/big", offset)
        target = {k: np.full_like(v, 7) for k, v in source.items()}
        with pytest.raises(CorruptCheckpointError, match="checksum mismatch in tensor "
                                                         "'model/big'"):
            Checkpoint(model=target).restore(path)
        assert all(np.all(v == 7) for v in target.values())
        _flip(path, "model/big", offset)  # mended: restores again
    Checkpoint(model=target).restore(path)
    assert_array_equal(target["big"], source["big"])


def test_format_1_pieces_join_too(tmp_path, monkeypatch):
    """zlib's CRC-32 (format 1) is checked in pieces and joined the same way."""
    from ember.checkpoint import _format

    monkeypatch.setattr(_reading, "PIECE", 24)
    with monkeypatch.context() as m:
        m.setattr(_format, "FORMAT", "ember.checkpoint/1")
        m.setattr(_format, "CHECKSUM_KEY", "crc32")
        m.setattr(_format, "_CHECKSUM", _checksum.crc32)
        path = Checkpoint(model=_model()).write(tmp_path / "old") + ".safetensors"
    target = {k: np.full_like(v, 7) for k, v in _model().items()}
    Checkpoint(model=target).restore(path).assert_consumed()
    for key, value in _model().items():
        assert_array_equal(target[key], value)
    _flip(path, "model/big", 30)
    with pytest.raises(CorruptCheckpointError, match="'model/big'"):
        Checkpoint(model={k: np.full_like(v, 7) for k, v in _model().items()}).restore(path)

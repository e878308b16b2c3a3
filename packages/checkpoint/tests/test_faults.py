"""Fault injection: kills, full and read-only disks, hostile files, concurrent runs.

Every case checks the promises of the README: a latest checkpoint is always readable,
nothing leaks on disk, errors are ``CheckpointError`` subclasses naming the path, and a
failed restore changes nothing. The module is bounded to well under a minute on 2 cores.
"""

import contextlib
import errno
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ember.checkpoint import (
    Checkpoint,
    CheckpointError,
    CheckpointIOError,
    CheckpointLockedError,
    CheckpointManager,
    CorruptCheckpointError,
    _format,
    latest_checkpoint,
)

HAS_FORK = hasattr(os, "fork") and hasattr(signal, "SIGKILL")
needs_fork = pytest.mark.skipif(not HAS_FORK, reason="needs os.fork and SIGKILL (POSIX)")
TMP = re.compile(r"^\..+\.ember-tmp$")
SIZE = 50_000  # float32 per array: 8 arrays, 1.6 MB per checkpoint


def _state(fill=0.0):
    return {f"w{i}": np.full(SIZE, fill, np.float32) for i in range(8)}


def _fork(body):
    """Run ``body()`` in a forked child that never returns into pytest."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            body()
            code = 0
        finally:
            os._exit(code)
    return pid


def _kill(pid):
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _writer(directory, max_to_keep, ready_fd=None):
    def body():
        state = _state()
        ckpt = Checkpoint(model=state)
        manager = CheckpointManager(ckpt, directory, max_to_keep=max_to_keep)
        if manager.latest_checkpoint:
            ckpt.restore(manager.latest_checkpoint).assert_consumed()
        if ready_fd is not None:
            os.write(ready_fd, b"r")
        while True:
            for value in state.values():
                value[:] = int(ckpt.save_counter) + 1
            manager.save()

    return body


def _check_latest(directory):
    """Restore the latest checkpoint; every array must hold its save_counter."""
    latest = latest_checkpoint(directory)
    if latest is None:
        return 0
    state = _state(-1.0)
    ckpt = Checkpoint(model=state)
    ckpt.restore(latest).assert_consumed()
    values = {float(v) for a in state.values() for v in np.unique(a)}
    assert values == {float(ckpt.save_counter)}, (latest, values)
    return int(ckpt.save_counter)


def _disk_bytes(directory):
    return {n: os.stat(os.path.join(directory, n)).st_blocks * 512 for n in os.listdir(directory)}


@needs_fork
def test_sigkill_during_manager_saves_leaks_nothing(tmp_path):
    """120 SIGKILLs at random moments of CheckpointManager.save (max_to_keep=2)."""
    rnd = random.Random(1)
    directory = str(tmp_path / "run")
    last, kills, foreign = 0, 0, []
    deadline = time.monotonic() + 40
    while kills < 120 and time.monotonic() < deadline:
        ready, tell = os.pipe()
        pid = _fork(_writer(directory, 2, tell))
        os.close(tell)
        os.read(ready, 1)  # the writer has started (and resumed): kill it while it saves
        os.close(ready)
        time.sleep(rnd.uniform(0.0, 0.04 if last else 0.15))  # longer until one exists
        _kill(pid)
        kills += 1
        if os.path.isdir(directory):  # only ember's own names, whatever the kill left
            foreign += [n for n in os.listdir(directory) if n.startswith(".")
                        and not TMP.match(n) and n != ".ember-checkpoint.lock"]
        step = _check_latest(directory)
        assert step >= last  # a resumed run only moves forward
        last = step
    assert kills >= 100 and last > 0 and foreign == []
    CheckpointManager(Checkpoint(model=_state()), directory, max_to_keep=2).close()
    names = sorted(os.listdir(directory))
    index = json.loads(open(os.path.join(directory, "checkpoint")).read())
    kept = sorted(e["name"] + ".safetensors" for e in index["checkpoints"])
    assert names == sorted(["checkpoint", ".ember-checkpoint.lock", *kept])
    assert len(kept) <= 2
    usage = _disk_bytes(directory)
    expected = sum(usage[n] for n in kept) + usage["checkpoint"] + usage[".ember-checkpoint.lock"]
    leaked = sum(usage.values()) - expected
    print(f"\nSIGKILL: {kills} kills, resumed up to save {last}, {leaked} bytes leaked")
    assert leaked == 0


@needs_fork
def test_latest_checkpoint_is_never_none_while_saves_run(tmp_path):
    directory = str(tmp_path / "run")
    pid = _fork(_writer(directory, 1))  # max_to_keep=1: each save deletes the previous
    try:
        deadline = time.monotonic() + 20
        while latest_checkpoint(directory) is None:
            assert time.monotonic() < deadline, "the writer never saved"
            time.sleep(0.005)
        reads, nones, restored = 0, 0, 0
        end = time.monotonic() + 3
        while time.monotonic() < end:
            latest = latest_checkpoint(directory)
            reads += 1
            if latest is None:
                nones += 1
            elif reads % 20 == 0:
                with contextlib.suppress(CheckpointError):  # deleted before open: a race
                    Checkpoint(model=_state()).restore(latest).assert_consumed()
                    restored += 1
    finally:
        _kill(pid)
    print(f"\nreaders: {reads} latest_checkpoint() reads, {nones} None, {restored} restored")
    assert nones == 0 and reads > 100 and restored > 0


@needs_fork
def test_a_second_manager_in_another_process_is_refused_until_the_first_dies(tmp_path):
    directory = str(tmp_path / "run")
    ready = tmp_path / "ready"

    def hold():
        manager = CheckpointManager(Checkpoint(w=np.zeros(1)), directory, max_to_keep=1)
        manager.save()
        ready.write_text("1")
        time.sleep(60)

    pid = _fork(hold)
    try:
        deadline = time.monotonic() + 20
        while not ready.exists():
            assert time.monotonic() < deadline
            time.sleep(0.005)
        with pytest.raises(CheckpointLockedError, match=rf"{re.escape(directory)}.*process "
                                                        rf"{pid} on host"):
            CheckpointManager(Checkpoint(w=np.zeros(1)), directory, max_to_keep=1)
        assert latest_checkpoint(directory) is not None  # readers are never locked out
    finally:
        _kill(pid)
    manager = CheckpointManager(Checkpoint(w=np.zeros(1)), directory, max_to_keep=1)
    assert manager.save().endswith("ckpt-1")  # the dead process's lock is stale
    manager.close()


def test_a_newer_manager_in_the_same_process_takes_over(tmp_path):
    first = CheckpointManager(Checkpoint(w=np.zeros(1)), tmp_path, max_to_keep=2)
    first.save()
    second = CheckpointManager(Checkpoint(w=np.zeros(1)), tmp_path, max_to_keep=2)
    with pytest.raises(CheckpointLockedError, match="no longer manages"):
        first.save()
    second.save()
    second.close()
    with pytest.raises(CheckpointLockedError):
        second.save()


def test_a_stale_lock_file_of_a_dead_process_is_taken_over(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(proc.stdout)
    (tmp_path / ".ember-checkpoint.lock").write_text(
        json.dumps({"pid": dead, "host": os.uname().nodename, "time": 0}))
    manager = CheckpointManager(Checkpoint(w=np.zeros(1)), tmp_path, max_to_keep=1)
    path = manager.save()
    assert manager.latest_checkpoint == path
    assert json.loads((tmp_path / ".ember-checkpoint.lock").read_text())["pid"] == os.getpid()


def test_orphans_of_a_killed_run_are_removed_when_a_manager_starts(tmp_path):
    manager = CheckpointManager(Checkpoint(w=np.zeros(1000)), tmp_path, max_to_keep=1,
                                keep_checkpoint_every_n_hours=1e-9)
    for _ in range(3):
        manager.save()
    manager.close()
    preserved = sorted(n for n in os.listdir(tmp_path) if n.endswith(".safetensors"))
    # what a kill leaves: a superseded file never deleted, a dead writer's temporary
    shutil.copy(tmp_path / "ckpt-3.safetensors", tmp_path / "ckpt-0.safetensors")
    (tmp_path / ".ckpt-9.safetensors.host.999999999.ab.ember-tmp").write_bytes(b"x" * 100)
    os.rename(tmp_path / ".ckpt-9.safetensors.host.999999999.ab.ember-tmp",
              tmp_path / f".ckpt-9.safetensors.{_host()}.999999999.ab.ember-tmp")
    (tmp_path / "notes.safetensors").write_bytes(b"not ours")  # not a managed name: kept
    CheckpointManager(Checkpoint(w=np.zeros(1000)), tmp_path, max_to_keep=1).close()
    left = sorted(n for n in os.listdir(tmp_path) if n.endswith((".safetensors", "-tmp")))
    assert left == sorted([*preserved, "notes.safetensors"])


def _host():
    from ember.checkpoint import _atomic

    return _atomic._host()


def test_disk_full_is_a_clean_error_and_leaves_nothing(tmp_path, monkeypatch):
    """ENOSPC on any platform, by making the OS write call fail part-way."""
    manager = CheckpointManager(Checkpoint(model=_state(1.0)), tmp_path, max_to_keep=2)
    manager.save()
    before = sorted(os.listdir(tmp_path))
    real, calls = os.pwrite, [0]

    def pwrite(fd, data, offset):
        calls[0] += 1
        if calls[0] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", pwrite)
    with pytest.raises(CheckpointIOError, match=r"ckpt-2\.safetensors: cannot write it: "
                                                r"the disk is full") as err:
        manager.save()
    assert err.value.errno == errno.ENOSPC and isinstance(err.value, OSError)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == before
    assert _check_latest(str(tmp_path)) == 1
    assert manager.save().endswith("ckpt-2")  # the counter did not move on the failure


@contextlib.contextmanager
def _tmpfs(path, size):
    path.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a small tmpfs needs root and mount(8); ENOSPC is also covered by "
                    "test_disk_full_is_a_clean_error_and_leaves_nothing")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_a_really_full_disk(tmp_path):
    with _tmpfs(tmp_path / "small", "6m") as directory:
        state = _state(0.0)  # 1.6 MB per checkpoint: the third one does not fit
        ckpt = Checkpoint(model=state)
        manager = CheckpointManager(ckpt, directory, max_to_keep=5)
        saved, errors = 0, []
        for step in range(1, 8):
            for value in state.values():
                value[:] = step
            try:
                manager.save(checkpoint_number=step)
                saved += 1
            except CheckpointIOError as err:
                errors.append(err)
        print(f"\ntmpfs disk full: {saved + len(errors)} saves, {saved} written, "
              f"{len(errors)} clean CheckpointIOError")
        assert saved >= 2 and errors
        assert all("the disk is full" in str(e) and str(directory) in str(e) for e in errors)
        assert [n for n in os.listdir(directory) if TMP.match(n)] == []
        latest = latest_checkpoint(directory)
        target = _state(-1.0)
        Checkpoint(model=target).restore(latest).expect_partial()
        assert target["w0"][0] == saved


def test_a_read_only_file_system(tmp_path):
    with _tmpfs(tmp_path / "ro", "4m") as directory:
        ckpt = Checkpoint(w=np.arange(3.0))
        path = ckpt.save(directory / "ckpt")
        subprocess.run(["mount", "-o", "remount,ro", str(directory)], check=True)
        with pytest.raises(CheckpointIOError, match=r"read-only") as err:
            ckpt.save(directory / "ckpt")
        assert str(directory) in str(err.value)
        with pytest.raises(CheckpointIOError, match="read-only"):
            CheckpointManager(ckpt, directory, max_to_keep=1)
        w = np.zeros(3)
        Checkpoint(w=w).restore(path)  # reading still works
        np.testing.assert_array_equal(w, [0.0, 1.0, 2.0])


def test_a_directory_where_a_file_should_be(tmp_path):
    (tmp_path / "c.safetensors").mkdir()
    with pytest.raises(CheckpointIOError, match=r"c\.safetensors: cannot replace it: a "
                                                r"directory is in the way"):
        Checkpoint(w=np.zeros(1)).write(tmp_path / "c")
    with pytest.raises(CheckpointIOError, match=r"c\.safetensors: cannot open it"):
        Checkpoint(w=np.zeros(1)).restore(tmp_path / "c")
    (tmp_path / "run" / "checkpoint").mkdir(parents=True)
    with pytest.raises(CheckpointIOError, match=r"run/checkpoint: cannot read"):
        latest_checkpoint(tmp_path / "run")
    with pytest.raises(CheckpointIOError, match=r"run/checkpoint"):
        Checkpoint(w=np.zeros(1)).save(tmp_path / "run" / "ckpt")
    assert [n for n in os.listdir(tmp_path / "run") if TMP.match(n)] == []


def test_a_file_where_the_directory_should_be(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(CheckpointIOError, match=r"f/sub: cannot create the directory"):
        Checkpoint(w=np.zeros(1)).write(tmp_path / "f" / "sub" / "c")


def _hostile(records, table_extra=None, data=b"", states=None):
    """An ember checkpoint file whose (checksummed) header says what the test wants."""
    meta = {"format": _format.FORMAT, "values": records, "objects": ["model"],
            "states": states or {}, "aliases": {}}
    text = json.dumps(meta)
    metadata = {_format.META_KEY: text, _format.META_CRC_KEY: str(zlib.crc32(text.encode()))}
    table = {"__metadata__": metadata, **(table_extra or {})}
    header = json.dumps(table).encode()
    return struct.pack("<Q", len(header)) + header + data


def _restore_fails_cleanly(path, match):
    target = {"w": np.full(4, 7.0, np.float32)}
    with pytest.raises(CorruptCheckpointError, match=match) as err:
        Checkpoint(model=target).restore(path)
    assert str(path) in str(err.value)
    np.testing.assert_array_equal(target["w"], np.full(4, 7.0, np.float32))


def test_absurd_declared_shape_is_refused_before_allocating(tmp_path):
    shape = [0, 2**62, 2**62]
    path = tmp_path / "huge.safetensors"
    path.write_bytes(_hostile({"model/w": {"dtype": "<f4", "shape": shape, _format.CHECKSUM_KEY: 0}},
                              {"model/w": {"dtype": "F32", "shape": shape,
                                           "data_offsets": [0, 0]}}))
    _restore_fails_cleanly(path, r"impossible shape \[0, 4611686018427387904")


def test_hostile_header_sizes_are_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "h.safetensors"
    path.write_bytes(struct.pack("<Q", 200 * 2**20) + b"{" + b" " * 100)
    _restore_fails_cleanly(path, r"header length 209715200 is over the 104857600 bytes")
    monkeypatch.setattr(_format, "MAX_HEADER", 4096)
    big = {"blob": np.zeros(1)}

    class Blob:
        def __checkpoint_state__(self):
            return "x" * 10_000

        def __checkpoint_restore_state__(self, state):
            pass

    with pytest.raises(CheckpointError, match=r"over the 4096 bytes a reader accepts; the "
                                              r"largest opaque states: blob"):
        Checkpoint(model=big, blob=Blob()).write(tmp_path / "w")
    assert os.listdir(tmp_path) == ["h.safetensors"]


SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
DIMS = st.integers(0, 2**64) | st.integers(-3, 70) | st.sampled_from([2**31, 2**62, 2**63])


@SETTINGS
@given(shape=st.lists(DIMS, max_size=40), stored=st.lists(DIMS, max_size=4),
       dtype=st.sampled_from(["<f4", "|u1", "<c16", "bfloat16", "nope", 3]),
       code=st.sampled_from(["F32", "U8", "C64", "X"]),
       offsets=st.lists(st.integers(-1, 2**64), min_size=0, max_size=3),
       crc=st.integers(-1, 2**33), data=st.binary(max_size=64))
def test_checksummed_but_hostile_headers_never_escape_as_raw_errors(
        tmp_path, shape, stored, dtype, code, offsets, crc, data):
    path = tmp_path / "hostile.safetensors"
    path.write_bytes(_hostile({"model/w": {"dtype": dtype, "shape": shape, _format.CHECKSUM_KEY: crc}},
                              {"model/w": {"dtype": code, "shape": stored,
                                           "data_offsets": offsets}}, data))
    target = {"w": np.full(4, 7.0, np.float32)}
    try:
        Checkpoint(model=target).restore(path).expect_partial()
    except CheckpointError as err:
        assert str(path) in str(err)
        np.testing.assert_array_equal(target["w"], np.full(4, 7.0, np.float32))


@SETTINGS
@given(state=st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4)
    | st.fixed_dictionaries({"__ember__": st.sampled_from(
        ["int", "float", "bytes", "tuple", "dict", "ndarray", "scalar", "?"]),
        "v": st.text(max_size=6) | st.integers() | st.lists(st.integers(), max_size=2)},
        optional={"dtype": st.sampled_from(["<f4", "zz", 1]),
                  "shape": st.lists(DIMS, max_size=3)}),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids,
                                                               max_size=3),
    max_leaves=8))
def test_hostile_opaque_state_blobs(tmp_path, state):
    path = tmp_path / "state.safetensors"
    path.write_bytes(_hostile({}, states={"model": state}))

    class Holder:
        got = None

        def __checkpoint_state__(self):
            return None

        def __checkpoint_restore_state__(self, value):
            self.got = value

    holder = Holder()
    try:
        Checkpoint(model=holder).restore(path).expect_partial()
    except CheckpointError as err:
        assert str(path) in str(err)
        assert holder.got is None


def test_early_flushes_round_trip_and_report_a_full_disk(tmp_path, monkeypatch):
    """Large saves start the disk early (fdatasync every FLUSH_EVERY bytes): an error
    there is a clean CheckpointIOError too, and nothing is left behind."""
    monkeypatch.setattr(_format, "FLUSH_EVERY", 4096)
    state = _state(3.0)
    path = Checkpoint(model=state).write(tmp_path / "a")
    assert _check_latest_path(path) == 3.0
    calls = [0]
    real = os.fdatasync

    def fdatasync(fd):
        calls[0] += 1
        if calls[0] == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    assert calls == [0]
    with pytest.raises(CheckpointIOError, match=r"b\.safetensors: cannot write it: the disk "
                                                r"is full"):
        Checkpoint(model=state).write(tmp_path / "b")
    assert sorted(os.listdir(tmp_path)) == ["a.safetensors"]


def _check_latest_path(path):
    state = _state(-1.0)
    Checkpoint(model=state).restore(path).assert_consumed()
    (value,) = {float(v) for a in state.values() for v in np.unique(a)}
    return value

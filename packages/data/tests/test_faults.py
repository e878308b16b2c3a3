"""Fault injection: hostile and corrupted files, hostile iterator states.

Only ``DataFormatError`` (files) or a ``ValueError`` naming the field (states) may
escape; a failed restore changes nothing. Each test prints its figures (trials, clean
errors); run with ``-s`` to see them. The module runs in well under a minute.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import json
import os
import pathlib
import resource
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest
from ember_data_testutil import as_list, to_py
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember.data
from ember.data import (
    CsvDataset,
    DataFormatError,
    Dataset,
    TextLineDataset,
    TFRecordDataset,
    TFRecordWriter,
    read_idx,
    write_idx,
)
from ember.data._readers.tfrecord import masked_crc32c

# ----------------------------------------------------------------------------- IDX


def idx_bytes(code: int, dims: list[int], payload: bytes = b"") -> bytes:
    return bytes([0, 0, code, len(dims)]) + struct.pack(f">{len(dims)}i", *dims) + payload


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("dims, message", [
    ([-1, 4], r"dimension 0 is negative \(-1\) at byte 4"),
    ([4, -2**31], r"dimension 1 is negative \(-2147483648\) at byte 8"),
    ([2**31 - 1] * 5, r"need \d+ bytes after the 24-byte header, found 16"),
    ([65536, 65536, 65536], r"need 281474976710656 bytes"),
])
def test_idx_hostile_dims(tmp_path, gz, dims, message):
    raw = idx_bytes(0x08, dims, b"\0" * 16)
    path = tmp_path / ("h.idx.gz" if gz else "h.idx")
    path.write_bytes(gzip.compress(raw) if gz else raw)
    with pytest.raises(DataFormatError, match=message) as info:
        read_idx(path)
    assert str(path) in str(info.value)


def test_idx_huge_gzip_claim_reads_only_what_exists(tmp_path):
    """A gzip stream cannot be sized up front: the reader reads in pieces and stops."""
    path = tmp_path / "big.idx.gz"
    path.write_bytes(gzip.compress(idx_bytes(0x0E, [2**30, 8], b"\0" * 1000)))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DataFormatError, match=r"IDX data truncated: dims \[1073741824, 8\]"):
        read_idx(path)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 200


# ----------------------------------------------------------------------------- CSV


def test_csv_invalid_utf8_names_file_line_and_byte(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"a,b\n1,2\n3,\xff\xfe\n")
    with pytest.raises(DataFormatError, match=r"bad\.csv:3: invalid UTF-8 at byte 10"):
        list(CsvDataset(path, [0, 0], header=True))
    with pytest.raises(DataFormatError, match=r"bad\.csv:3: invalid UTF-8 at byte 10"):
        list(TextLineDataset(path))


@pytest.mark.parametrize("field, dtype", [
    ("99999999999999999999", np.int32), ("99999999999999999999", np.int64),
    ("-1", np.uint8), ("300", np.uint8), ("1e999", np.int64),
])
def test_csv_numbers_that_do_not_fit(tmp_path, field, dtype):
    path = tmp_path / "n.csv"
    path.write_text(f"1\n{field}\n")
    with pytest.raises(DataFormatError, match=r"n\.csv:2: column 0: cannot parse"):
        list(CsvDataset(path, [dtype]))


def test_csv_bools_are_parsed_not_truthiness(tmp_path):
    path = tmp_path / "b.csv"
    path.write_text("True\nfalse\n1\n0\nFALSE\n")
    assert [bool(r[0]) for r in CsvDataset(path, [np.bool_])] == [True, False, True, False,
                                                                   False]
    path.write_text("yes\n")
    with pytest.raises(DataFormatError, match=r"b\.csv:1: column 0: cannot parse 'yes'"):
        list(CsvDataset(path, [np.bool_]))


def test_csv_nul_and_bad_arguments(tmp_path):
    path = tmp_path / "nul.csv"
    path.write_bytes(b"1,2\n3,\x004\n")
    with pytest.raises(DataFormatError, match=r"nul\.csv:2: column 1"):
        list(CsvDataset(path, [0, 0]))
    path.write_bytes(b"1,2\n3," + b"9" * 200_000 + b"\n")  # past csv's field size limit
    with pytest.raises(DataFormatError, match=r"nul\.csv:2: malformed CSV \(field larger"):
        list(CsvDataset(path, [0, 0]))
    with pytest.raises(ValueError, match="select_cols must be non-negative"):
        CsvDataset(path, [0], select_cols=[-1])
    with pytest.raises(ValueError, match="field_delim must be one character"):
        CsvDataset(path, [0], field_delim=";;")


# ------------------------------------------------------------------------ TFRecord


def record(data: bytes, length: int | None = None) -> bytes:
    head = struct.pack("<Q", len(data) if length is None else length)
    return (head + struct.pack("<I", masked_crc32c(head)) + data
            + struct.pack("<I", masked_crc32c(data)))


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("length", [2**63, 2**40, 10**9, 100])
def test_tfrecord_length_beyond_the_file(tmp_path, gz, length):
    """The length's own CRC is valid: only the size check stands between it and malloc."""
    raw = record(b"ok") + record(b"x" * 10, length=length)
    path = tmp_path / "r.tfrecord"
    path.write_bytes(gzip.compress(raw) if gz else raw)
    ds = TFRecordDataset(path, compression_type="GZIP" if gz else None)
    it = iter(ds)
    assert next(it) == b"ok"
    match = (r"r\.tfrecord: TFRecord at byte 18 declares \d+ data bytes, but only 10 remain"
             if not gz else r"r\.tfrecord: truncated TFRecord at byte 18")
    with pytest.raises(DataFormatError, match=match):
        next(it)


def test_tfrecord_corrupt_gzip(tmp_path):
    path = tmp_path / "c.tfrecord.gz"
    data = bytearray(gzip.compress(record(b"a" * 1000) * 20))
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(DataFormatError, match=r"c\.tfrecord\.gz"):
        list(TFRecordDataset(path, compression_type="GZIP"))


# ----------------------------------------------------- hypothesis: corrupted files

_corruptions = st.lists(st.tuples(st.sampled_from(["flip", "cut", "insert", "set"]),
                                  st.floats(0, 1), st.integers(0, 255)),
                        min_size=1, max_size=4)


def corrupt(data: bytes, ops) -> bytes:
    out = bytearray(data)
    for op, where, byte in ops:
        i = min(int(where * len(out)), max(len(out) - 1, 0))
        if op == "flip" and out:
            out[i] ^= byte or 1
        elif op == "cut":
            del out[i:]
        elif op == "insert":
            out[i:i] = bytes([byte]) * (1 + byte % 7)
        elif op == "set" and out:
            out[i] = byte
    return bytes(out)


def _valid_file(kind: str) -> bytes:
    if kind in ("idx", "idx.gz"):
        dims = [3, 4, 5]
        raw = idx_bytes(0x0D, dims, np.arange(60, dtype=">f4").tobytes())
        return gzip.compress(raw, mtime=0) if kind == "idx.gz" else raw
    if kind in ("tfrecord", "tfrecord.gz"):
        raw = b"".join(record(bytes([i]) * (i * 3)) for i in range(12))
        return gzip.compress(raw, mtime=0) if kind == "tfrecord.gz" else raw
    return "x,y,z,name\n" + "".join(f"{i},{i * 0.5},{i % 2},n{i}\n" for i in range(15)) \
        if kind == "csv" else None  # type: ignore[return-value]


def _read_all(kind: str, path) -> None:
    if kind.startswith("idx"):
        read_idx(path)
    elif kind.startswith("tfrecord"):
        list(TFRecordDataset(path, compression_type="GZIP" if kind.endswith("gz") else None))
    elif kind == "csv":
        list(CsvDataset(path, [np.int32, np.float32, np.bool_, ""], header=True))
        list(TextLineDataset(path))


_STATS: dict[str, list[int]] = {}


@pytest.mark.parametrize("kind", ["idx", "idx.gz", "tfrecord", "tfrecord.gz", "csv"])
def test_corrupted_files_raise_only_data_format_errors(tmp_path, kind):
    valid = _valid_file(kind)
    if isinstance(valid, str):
        valid = valid.encode()
    stats = _STATS.setdefault(kind, [0, 0])

    @settings(max_examples=150, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(ops=_corruptions)
    def check(ops):
        path = tmp_path / f"f.{kind}"
        path.write_bytes(corrupt(valid, ops))
        stats[0] += 1
        try:
            _read_all(kind, path)
        except DataFormatError as e:
            assert str(path) in str(e)
            stats[1] += 1

    check()
    print(f"\ndata corrupted {kind}: {stats[0]} trials, {stats[1]} clean DataFormatErrors, "
          f"{stats[0] - stats[1]} read as valid, 0 other errors")
    assert stats[1] > 0


# -------------------------------------------------------- hostile iterator states

PIPELINES = {
    "fused": lambda: Dataset.from_tensor_slices(np.arange(40)).shuffle(8, seed=1).repeat(2)
    .batch(3),
    "generic": lambda: Dataset.range(30).map(lambda x: x * 2).shuffle(5, seed=2).take(25)
    .skip(2).shard(2, 1).batch(2),
    "zip_concat": lambda: Dataset.zip(Dataset.range(10), Dataset.range(10)).concatenate(
        Dataset.zip(Dataset.range(3), Dataset.range(3))).enumerate(),
    "interleave": lambda: Dataset.range(4).interleave(
        lambda i: Dataset.range(i * 10, i * 10 + 3), cycle_length=2, block_length=2),
    "parallel_interleave": lambda: Dataset.range(4).interleave(
        lambda i: Dataset.range(i * 10, i * 10 + 3), cycle_length=2, block_length=2,
        num_parallel_calls=2),
    "unbatch_window": lambda: Dataset.range(20).batch(3).unbatch().window(4, shift=2)
    .flat_map(lambda w: w.batch(4)),
}

_BAD_VALUES = ["x", None, [], {}, 10**30, -1, True, 1.5, 2**63, {"pos": 0}]


def _paths(state, prefix=()):
    """Every path to a dict field in ``state``."""
    if isinstance(state, dict):
        for k, v in state.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(state, list):
        for i, v in enumerate(state):
            yield from _paths(v, prefix + (i,))


def _set(state, path, value, delete=False):
    out = copy.deepcopy(state)
    node = out
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_hostile_states_raise_a_named_value_error_and_change_nothing(name):
    make = PIPELINES[name]
    full = as_list(make())
    it = iter(make())
    for _ in range(5):
        next(it)
    good = json.loads(json.dumps(it.__checkpoint_state__()))
    expected_rest = full[5:]
    trials = clean = accepted = 0
    hostile = [_set(good, p, v) for p in _paths(good) for v in _BAD_VALUES]
    hostile += [_set(good, p, None, delete=True) for p in _paths(good)]
    hostile += [None, [], "state", 7, {}, {"version": 1}, {"version": 1, "epoch": 0}]
    for state in hostile:
        target = iter(make())
        head = to_py(next(target))
        trials += 1
        try:
            target.__checkpoint_restore_state__(state)
        except ValueError as e:
            clean += 1
            message = str(e)
            assert "state" in message, message
            # Nothing changed: the iterator goes on from where it was.
            assert [head, *as_list(target)] == full
            continue
        accepted += 1  # a mutation that is still a valid state: it must work
        rest = as_list(target)
        assert len(rest) <= len(full)
    # The good state still restores exactly.
    fresh = iter(make())
    fresh.__checkpoint_restore_state__(good)
    assert as_list(fresh) == expected_rest
    print(f"\ndata hostile states {name}: {trials} trials, {clean} clean ValueErrors, "
          f"{accepted} accepted as valid, 0 other errors, 0 half-restored")
    assert clean > trials // 2


@pytest.mark.parametrize("state, field", [
    ({"version": 1, "epoch": 10**30, "state": {}}, "state.epoch must be in"),
    ({"version": 1, "epoch": -1, "state": {}}, "state.epoch must be in"),
    ({"version": 1, "epoch": "0", "state": {}}, "state.epoch must be an int, got str"),
    ({"version": 1, "epoch": 0, "state": "x"}, "state.state must be an object"),
    ({"version": 1, "epoch": 0, "state": {"stream": {"pos": -3}, "offset": 0}},
     "field state.state.stream.pos must be in"),
    ({"version": 1, "epoch": 0, "state": {"stream": {"pos": "a"}, "offset": 0}},
     "field state.state.stream.pos must be an int, got str"),
    ({"version": 1, "epoch": 0, "state": {"stream": {}, "offset": 0}},
     "field state.state.stream.pos is missing"),
    ({"version": 1, "epoch": 0, "state": {"stream": {"pos": 99}, "offset": 0}},
     r"field state.state.stream.pos must be in \[0, 10\]"),
    ({"version": 2}, "not an ember.data iterator state"),
])
def test_hostile_state_messages_name_the_field(state, field):
    it = iter(Dataset.from_tensor_slices(np.arange(10)))
    with pytest.raises(ValueError, match=field):
        it.__checkpoint_restore_state__(state)
    assert as_list(it) == list(range(10))


def test_a_failed_restore_does_not_adopt_a_shuffle_seed():
    """The zip's first child (a shuffle) restores fine and would adopt the saved seed;
    the second child's state is bad, so the whole restore fails and nothing changes."""
    def make():
        shuffled = Dataset.range(20).map(lambda x: x).shuffle(5, seed=1)
        return Dataset.zip(shuffled, Dataset.range(20)), shuffled

    (ds, shuffled), (twin, _) = make(), make()
    it = iter(ds)
    next(it)
    state = json.loads(json.dumps(it.__checkpoint_state__()))
    state["state"]["children"][0]["seed"] = 12345
    state["state"]["children"][1]["next"] = "oops"
    with pytest.raises(ValueError, match=r"state.state.children\[1\].next must be an int"):
        iter(ds).__checkpoint_restore_state__(state)
    assert shuffled._seed == 1
    iter(twin), iter(twin)  # the same number of passes started, none restored
    assert as_list(ds) == as_list(twin)


@pytest.mark.parametrize("reader", ["text", "tfrecord"])
def test_file_states_point_inside_the_files(tmp_path, reader):
    if reader == "text":
        path = tmp_path / "t.txt"
        path.write_text("a\nb\nc\n")
        ds = TextLineDataset(path)
    else:
        path = tmp_path / "t.tfrecord"
        with TFRecordWriter(path) as w:
            for r in (b"a", b"b"):
                w.write(r)
        ds = TFRecordDataset(path)
    it = iter(ds)
    next(it)
    state = json.loads(json.dumps(it.__checkpoint_state__()))
    state["state"]["offset"] = 10**6
    with pytest.raises(ValueError, match=r"state.state.offset must be in \[0, \d+\]"):
        iter(ds).__checkpoint_restore_state__(state)
    state["state"]["offset"], state["state"]["file"] = 0, 5
    with pytest.raises(ValueError, match=r"state.state.file must be in \[0, 1\]"):
        iter(ds).__checkpoint_restore_state__(state)


def test_prepare_then_commit():
    ds = Dataset.range(10)
    it = iter(ds)
    for _ in range(3):
        next(it)
    state = it.__checkpoint_state__()
    target = iter(ds)
    commit = target.__checkpoint_prepare_restore__(state)
    assert int(next(target)) == 0  # nothing changed yet
    commit()
    assert [int(x) for x in target] == list(range(3, 10))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(blob=st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=4),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(["version", "epoch", "state", "stream", "pos",
                                       "offset", "input", "seed", "count"]), children,
                      max_size=4), max_leaves=12))
def test_random_blobs_raise_value_errors_only(blob):
    it = iter(Dataset.from_tensor_slices(np.arange(6)).shuffle(3, seed=0).batch(2))
    with pytest.raises(ValueError):
        it.__checkpoint_restore_state__(blob)


# ------------------------------------------------------------ disk full, SIGKILL

SRC = str(pathlib.Path(ember.data.__file__).parents[2])  # the directory holding ember/


@contextlib.contextmanager
def small_tmpfs(path: pathlib.Path, size: str):
    path.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("disk-full test needs root to mount a small tmpfs")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                              str(path)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_disk_full_write_idx_leaves_the_old_file(tmp_path):
    with small_tmpfs(tmp_path / "small", "256k") as disk:
        path = disk / "x.idx"
        old = np.arange(100, dtype=np.uint8)
        write_idx(path, old)
        with pytest.raises(OSError, match="write_idx: cannot write the file") as info:
            write_idx(path, np.zeros(400_000, np.uint8))
        assert info.value.filename == str(path)
        np.testing.assert_array_equal(read_idx(path), old)
        assert sorted(os.listdir(disk)) == ["x.idx"]  # no temporary file left


def test_disk_full_cache_removes_its_partial_file(tmp_path):
    with small_tmpfs(tmp_path / "small", "256k") as disk:
        target = str(disk / "c")
        ds = Dataset.range(2000).map(lambda i: np.full(64, i, np.float64)).cache(target)
        with pytest.raises(OSError, match="cache\\(\\): cannot write the cache file") as info:
            list(ds)
        assert info.value.filename == target + ".tmp"
        assert os.listdir(disk) == []
        small = Dataset.range(20).map(lambda i: np.full(4, i, np.float64)).cache(target)
        assert [int(x[0]) for x in small] == list(range(20))
        assert [int(x[0]) for x in small] == list(range(20))  # now from the file
        assert sorted(os.listdir(disk)) == ["c", "c.count"]


def test_disk_full_tfrecord_writer_names_the_file(tmp_path):
    with small_tmpfs(tmp_path / "small", "128k") as disk:
        path = disk / "r.tfrecord"
        with pytest.raises(OSError) as info:
            with TFRecordWriter(path) as w:
                for _ in range(100):
                    w.write(b"z" * 4000)
                    w.flush()
        assert info.value.filename == str(path)
        assert "No space left" in str(info.value)


def test_damaged_cache_files_raise_data_format_errors(tmp_path):
    target = str(tmp_path / "c")
    ds = Dataset.range(10).map(lambda i: np.full(3, i, np.int64)).cache(target)
    list(ds)
    data = pathlib.Path(target).read_bytes()
    for damage, match in [(data[: len(data) // 2], "damaged cache file"),
                          (b"garbage" + data, "damaged cache file")]:
        pathlib.Path(target).write_bytes(damage)
        fresh = Dataset.range(10).map(lambda i: np.full(3, i, np.int64)).cache(target)
        with pytest.raises(DataFormatError, match=match):
            list(fresh)
    pathlib.Path(target + ".count").write_text("ten")
    fresh = Dataset.range(10).map(lambda i: np.full(3, i, np.int64)).cache(target)
    with pytest.raises(DataFormatError, match=r"c\.count: not an element count"):
        list(fresh)


KILLS = 100

# One process imports ember.data once, then forks a child per trial; each child rewrites
# an IDX file and fills a file cache until the parent SIGKILLs it at a random moment.
KILL_LOOP = """
import os, random, signal, sys, time, warnings
import numpy as np
from ember import data

root, trials = sys.argv[1], int(sys.argv[2])
rng = random.Random(0)
warnings.simplefilter("ignore", DeprecationWarning)
complete = tmp_max = 0
for trial in range(trials):
    pid = os.fork()
    if pid == 0:
        try:
            k = 1
            while True:
                data.write_idx(os.path.join(root, "x.idx"), np.full(20_000, k % 251, np.uint8))
                cache = os.path.join(root, "cache")
                for name in (cache, cache + ".count"):  # rebuild it, again and again
                    if os.path.exists(name):
                        os.remove(name)
                ds = data.Dataset.range(60).map(lambda i: np.full(50, i, np.int64))
                cached = ds.cache(cache)
                for _ in range(3):  # one pass fills the file, two read it back
                    for _ in cached:
                        pass
                k += 1
        finally:
            os._exit(1)
    # Mostly early kills (mid-write), some late ones (after a cache was completed).
    time.sleep(rng.uniform(0.0, 0.05) if rng.random() < 0.8 else rng.uniform(0.1, 0.3))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    # After every kill: the IDX file is whole, the cache absent or complete.
    x = data.read_idx(os.path.join(root, "x.idx"))
    assert x.shape == (20_000,) and (x == x[0]).all(), "torn x.idx"
    cache = os.path.join(root, "cache")
    if os.path.exists(cache):
        ds = data.Dataset.range(60).map(lambda i: np.full(50, i, np.int64)).cache(cache)
        assert [int(e[0]) for e in ds] == list(range(60)), "incomplete cache"
        complete += 1
    tmp_max = max(tmp_max, sum(n.endswith("tmp") for n in os.listdir(root)))
print("done", trials, complete, tmp_max, flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill loop forks")
def test_sigkill_loop_leaves_whole_files_only(tmp_path):
    write_idx(tmp_path / "x.idx", np.full(20_000, 0, np.uint8))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", KILL_LOOP, str(tmp_path), str(KILLS)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    word, trials, complete, tmp_max = done.stdout.split()
    assert (word, int(trials)) == ("done", KILLS)
    names = set(os.listdir(tmp_path))
    # At most the last kill's temporary file per target, never a growing pile.
    assert names <= {"x.idx", "x.idx.ember-tmp", "cache", "cache.count", "cache.tmp",
                     "cache.count.tmp"}, names
    leftovers = sorted(n for n in names if n.endswith("tmp"))
    print(f"\ndata SIGKILL: {KILLS} kills; after each, x.idx whole and the cache absent "
          f"or complete ({complete} complete caches read back); at most {tmp_max} "
          f"temporary files at once; left at the end: {leftovers or 'none'}")
    assert int(tmp_max) <= 3
    assert int(complete) > 0  # some kills came after a cache was complete

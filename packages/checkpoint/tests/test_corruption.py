"""Damaged files always raise CheckpointError, never crash, never restore partially."""

import os
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ember.checkpoint import Checkpoint, CorruptCheckpointError

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    rng = np.random.default_rng(0)
    state = {"w": rng.standard_normal((16, 8)).astype(np.float32),
             "b": np.arange(8, dtype=np.int64), "h": np.ones(3, np.float16)}
    path = Checkpoint(model=state, data=np.random.default_rng(5)).write(
        tmp_path_factory.mktemp("good") / "c")
    with open(path + ".safetensors", "rb") as f:
        return f.read()


def _targets():
    return {"w": np.full((16, 8), 7, np.float32), "b": np.full(8, 7, np.int64),
            "h": np.full(3, 7, np.float16)}


def _restore_fails_cleanly(tmp_path, data: bytes):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    targets = _targets()
    rng = np.random.default_rng(1)
    before = rng.bit_generator.state
    with pytest.raises(CorruptCheckpointError) as err:
        Checkpoint(model=targets, data=rng).restore(str(path))
    assert str(path) in str(err.value)
    for name, value in _targets().items():
        np.testing.assert_array_equal(targets[name], value)
    assert rng.bit_generator.state == before


def test_good_file_restores(tmp_path, good):
    path = tmp_path / "ok.safetensors"
    path.write_bytes(good)
    targets = _targets()
    Checkpoint(model=targets, data=np.random.default_rng(1)).restore(str(path)).assert_consumed()
    np.testing.assert_array_equal(targets["b"], np.arange(8))


@SETTINGS
@given(data=st.data())
def test_truncation(tmp_path, good, data):
    cut = data.draw(st.integers(0, len(good) - 1))
    _restore_fails_cleanly(tmp_path, good[:cut])


@SETTINGS
@given(data=st.data())
def test_bit_flips(tmp_path, good, data):
    flips = data.draw(st.lists(st.integers(0, len(good) * 8 - 1), min_size=1, max_size=3,
                               unique=True))
    damaged = bytearray(good)
    for bit in flips:
        damaged[bit // 8] ^= 1 << (bit % 8)
    _restore_fails_cleanly(tmp_path, bytes(damaged))


@SETTINGS
@given(garbage=st.binary(min_size=1, max_size=300), at=st.integers(0, 400))
def test_garbage_in_header(tmp_path, good, garbage, at):
    damaged = good[:at] + garbage + good[at + len(garbage):]
    if damaged == good:
        return
    _restore_fails_cleanly(tmp_path, damaged)


@SETTINGS
@given(header=st.one_of(
    st.binary(max_size=200),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                 lambda kids: st.lists(kids, max_size=3)
                 | st.dictionaries(st.text(max_size=8), kids, max_size=3),
                 max_leaves=10).map(lambda v: repr(v).encode())))
def test_garbage_headers_with_valid_length(tmp_path, good, header):
    (length,) = struct.unpack("<Q", good[:8])
    data = good[8 + length:]
    _restore_fails_cleanly(tmp_path, struct.pack("<Q", len(header)) + header + data)


def test_appended_bytes(tmp_path, good):
    _restore_fails_cleanly(tmp_path, good + b"\0" * 8)


def test_empty_file(tmp_path):
    _restore_fails_cleanly(tmp_path, b"")
    assert not os.path.exists(tmp_path / "bad.safetensors.tmp")

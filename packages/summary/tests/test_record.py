"""Record framing: lengths and masked CRC32C, checked against TensorBoard's reader."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ember.summary import RecordError
from ember.summary._record import frame, masked_crc32c, read_records


@given(st.binary(max_size=300))
def test_crc_matches_tensorboards(data):
    tf_stub = pytest.importorskip("tensorboard.compat.tensorflow_stub.pywrap_tensorflow")
    assert masked_crc32c(data) == tf_stub.masked_crc32c(data)


@settings(max_examples=50)
@given(st.lists(st.binary(max_size=200), max_size=20))
def test_records_round_trip(tmp_path_factory, records):
    path = tmp_path_factory.mktemp("r") / "f"
    path.write_bytes(b"".join(frame(r) for r in records))
    assert list(read_records(path, strict=True)) == records


@settings(max_examples=50)
@given(st.lists(st.binary(min_size=1, max_size=100), min_size=1, max_size=5), st.data())
def test_a_cut_anywhere_keeps_every_whole_record(tmp_path_factory, records, data):
    blob = b"".join(frame(r) for r in records)
    cut = data.draw(st.integers(0, len(blob)))
    path = tmp_path_factory.mktemp("r") / "f"
    path.write_bytes(blob[:cut])
    ends = itertools.accumulate(len(frame(r)) for r in records)
    whole = sum(end <= cut for end in ends)
    assert list(read_records(path)) == records[:whole]


def test_truncation_is_an_error_when_strict(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(frame(b"abc") + frame(b"defg")[:-1])
    assert list(read_records(path)) == [b"abc"]
    with pytest.raises(RecordError, match="truncated"):
        list(read_records(path, strict=True))


@pytest.mark.parametrize("offset", [0, 8, 12, 14, 15])  # length, its crc, data, data crc
def test_a_flipped_byte_is_caught(tmp_path, offset):
    blob = bytearray(frame(b"abc") + frame(b"xyz"))
    blob[offset] ^= 0x01
    path = tmp_path / "f"
    path.write_bytes(bytes(blob))
    with pytest.raises(RecordError, match="CRC mismatch"):
        list(read_records(path))


def test_tensorboards_reader_accepts_our_records(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing import event_file_loader

    from ember import summary

    writer = summary.create_file_writer(tmp_path)
    with writer.as_default():
        for step in range(3):
            summary.scalar("x", step, step=step)
    writer.close()
    loader = event_file_loader.LegacyEventFileLoader(writer.path)
    events = list(loader.Load())
    assert [e.step for e in events if e.HasField("summary")] == [0, 1, 2]

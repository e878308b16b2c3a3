import numpy as np
import pytest
from ember_data_testutil import as_list
from hypothesis import given, settings
from hypothesis import strategies as st

from ember.data import (
    CsvDataset,
    DataFormatError,
    TextLineDataset,
    TFRecordDataset,
    TFRecordWriter,
    read_idx,
    write_idx,
)
from ember.data._readers import tfrecord


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32,
                                   np.float64])
@pytest.mark.parametrize("name", ["a.idx", "a.idx.gz"])
def test_idx_round_trip(tmp_path, dtype, name):
    arr = (np.arange(24) - 5).astype(dtype).reshape(2, 3, 4)
    path = tmp_path / name
    write_idx(path, arr)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
    out = read_idx(path)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, arr)


def test_idx_truncated_names_file(tmp_path):
    path = tmp_path / "images.idx"
    write_idx(path, np.zeros((4, 5), np.uint8))
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(DataFormatError, match=r"images\.idx.*truncated"):
        read_idx(path)


def test_idx_truncated_gzip_names_file(tmp_path):
    path = tmp_path / "images.idx.gz"
    write_idx(path, np.arange(1000, dtype=np.uint8))
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(DataFormatError, match=r"images\.idx\.gz.*gzip"):
        read_idx(path)


def test_idx_bad_magic_names_file(tmp_path):
    path = tmp_path / "junk.idx"
    path.write_bytes(b"\x01\x02\x03\x04hello")
    with pytest.raises(DataFormatError, match=r"junk\.idx.*magic"):
        read_idx(path)
    path.write_bytes(b"\x00\x00\x42\x01")
    with pytest.raises(DataFormatError, match="type code 0x42"):
        read_idx(path)


def test_crc32c_known_value():
    assert tfrecord.crc32c(b"123456789") == 0xE3069283
    assert tfrecord._crc32c_py(b"123456789") == 0xE3069283
    # TensorFlow's masked crc of an empty length field
    assert tfrecord.masked_crc32c(b"\x00" * 8) == tfrecord.masked_crc32c(bytes(8))


def test_tfrecord_matches_tensorflow_framing(tmp_path):
    # bytes written by tf.io.TFRecordWriter for the single record b"hello"
    path = tmp_path / "x.tfrecord"
    with TFRecordWriter(path) as w:
        w.write(b"hello")
    raw = path.read_bytes()
    assert raw[:8] == (5).to_bytes(8, "little") and raw[12:17] == b"hello"
    assert len(raw) == 8 + 4 + 5 + 4


@settings(max_examples=30, deadline=None)
@given(records=st.lists(st.binary(max_size=300), max_size=20), gz=st.booleans())
def test_tfrecord_round_trip(tmp_path_factory, records, gz):
    path = tmp_path_factory.mktemp("tfr") / "r.tfrecord"
    comp = "GZIP" if gz else None
    with TFRecordWriter(path, compression_type=comp) as w:
        for r in records:
            w.write(r)
    assert list(TFRecordDataset(str(path), compression_type=comp)) == records


def _write_records(path, n=5):
    with TFRecordWriter(path) as w:
        for i in range(n):
            w.write(f"record {i}".encode())


def test_tfrecord_corrupted_data_names_file(tmp_path):
    path = tmp_path / "bad.tfrecord"
    _write_records(path)
    raw = bytearray(path.read_bytes())
    raw[14] ^= 0xFF  # inside the first record's data
    path.write_bytes(bytes(raw))
    with pytest.raises(DataFormatError, match=r"bad\.tfrecord.*corrupted TFRecord data"):
        list(TFRecordDataset(str(path)))


def test_tfrecord_corrupted_length_names_file(tmp_path):
    path = tmp_path / "bad.tfrecord"
    _write_records(path)
    raw = bytearray(path.read_bytes())
    raw[0] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(DataFormatError, match=r"bad\.tfrecord.*corrupted TFRecord length"):
        list(TFRecordDataset(str(path)))


def test_tfrecord_truncated_names_file(tmp_path):
    path = tmp_path / "cut.tfrecord"
    _write_records(path)
    path.write_bytes(path.read_bytes()[:-3])
    it = iter(TFRecordDataset(str(path)))
    assert [next(it) for _ in range(4)] == [f"record {i}".encode() for i in range(4)]
    with pytest.raises(DataFormatError, match=r"cut\.tfrecord.*truncated"):
        next(it)


def test_tfrecord_batches_keep_binary_bytes(tmp_path):
    path = tmp_path / "b.tfrecord"
    with TFRecordWriter(path) as w:
        w.write(b"a\x00")
        w.write(b"\x00")
    (batch,) = list(TFRecordDataset(str(path)).batch(2))
    assert batch.tolist() == [b"a\x00", b"\x00"]


def test_text_lines(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("header\nx\ny\r\n")
    b.write_bytes("head\nhéllo\nlast".encode())
    ds = TextLineDataset([str(a), str(b)], skip_header_lines=1)  # per file, as tf.data
    assert list(ds) == ["x", "y", "héllo", "last"]


def test_text_lines_plain(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("one\ntwo\n\nfour")
    assert list(TextLineDataset(str(a))) == ["one", "two", "", "four"]


def test_text_lines_end_as_tensorflow_ends_them(tmp_path):
    # tensorflow/tsl InputBuffer::ReadLine: one "\n" ends a line and one "\r" before it
    # goes too; other "\r"s are text; a last line without "\n" that is empty after
    # that is no line
    a = tmp_path / "a.txt"
    a.write_bytes(b"a\r\r\nb\n\r")
    assert list(TextLineDataset(str(a))) == ["a\r", "b"]
    a.write_bytes(b"x\r\n\r\n \r")
    assert list(TextLineDataset(str(a))) == ["x", "", " "]


def test_csv_defaults_in_lists_of_one_as_tensorflow(tmp_path):
    # keras-io's Wide & Deep passes [[0], ["NA"]] (TF's record_defaults): ember typed the
    # string column '<U2' and cut every string to two characters, with no error, and a
    # missing [0] field came back of shape (1,)
    p = tmp_path / "t.csv"
    p.write_text("n,s\n7,soil_type_29\n,area_type_1\n")
    rows = list(CsvDataset(str(p), [[0], ["NA"]], header=True))
    assert rows == [(7, "soil_type_29"), (0, "area_type_1")]
    assert all(np.shape(v) == () for row in rows for v in row)
    assert rows[0][0].dtype == np.int32
    wide = list(CsvDataset(str(p), [np.array([0], np.int64), ["NA"]], header=True))
    assert wide[1][0].dtype == np.int64
    with pytest.raises(DataFormatError, match="column 0 is empty and required"):
        list(CsvDataset(str(p), [[], ["NA"]], header=True))  # none: required (float32)
    with pytest.raises(ValueError, match=r"record_defaults\[0\] holds 2 values"):
        CsvDataset(str(p), [[1, 2], ["NA"]], header=True)


def test_csv(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text('x,y,name\n1.5,2,"a,b"\n,3,c\n')
    ds = CsvDataset(str(p), [0.0, np.int32, ""], header=True)
    rows = list(ds)
    assert rows[0] == (1.5, 2, "a,b") and rows[1] == (0.0, 3, "c")
    # a Python float default types its column float32, as TensorFlow's (it was float64)
    assert rows[0][1].dtype == np.int32 and rows[0][0].dtype == np.float32
    ints = CsvDataset(str(p), [0.0, 999], header=True, select_cols=[0, 1])
    assert [x.dtype for x in next(iter(ints))] == [np.float32, np.int32]
    wide = CsvDataset(str(p), [np.float64], header=True, select_cols=[0])  # asked for
    assert next(iter(wide))[0].dtype == np.float64
    sel = CsvDataset(str(p), [np.float32], header=True, select_cols=[1])
    assert as_list(sel.batch(2)) == [([2.0, 3.0],)]


def test_csv_errors_name_file_and_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("1,2\n3\n")
    with pytest.raises(DataFormatError, match=r"bad\.csv:2: 1 fields, expected 2"):
        list(CsvDataset(str(p), [0, 0]))
    p.write_text("1,x\n")
    with pytest.raises(DataFormatError, match=r"bad\.csv:1: column 1"):
        list(CsvDataset(str(p), [0, 0]))
    p.write_text("1,\n")
    with pytest.raises(DataFormatError, match="required"):
        list(CsvDataset(str(p), [0, np.int64]))


def test_gzip_text_and_csv_read_and_resume(tmp_path):
    """TensorFlow's compression_type="GZIP" (the overfitting tutorial's HIGGS.csv.gz):
    refused by name before, and a .gz read as text failed on its bytes."""
    import gzip

    p = tmp_path / "t.csv.gz"
    with gzip.open(p, "wt") as f:
        f.write("".join(f"{i},{i * 0.5}\n" for i in range(20)))
    ds = CsvDataset(str(p), [0, 0.0], compression_type="GZIP")
    rows = [(int(a), float(b)) for a, b in ds]
    assert rows == [(i, i * 0.5) for i in range(20)]
    lines = TextLineDataset(str(p), compression_type="GZIP")
    it = iter(lines)
    head = [next(it) for _ in range(7)]
    state = it.__checkpoint_state__()
    rest = list(it)
    again = iter(lines)
    again.__checkpoint_restore_state__(state)
    assert list(again) == rest and head[0] == "0,0.0" and len(head + rest) == 20
    with pytest.raises(ValueError, match="compression_type must be None, '' or 'GZIP'"):
        CsvDataset(str(p), [0], compression_type="ZLIB")

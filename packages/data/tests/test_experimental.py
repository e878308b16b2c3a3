"""``data.experimental`` (``tf.data.experimental``): ``make_csv_dataset`` against TensorFlow's
definition (readers.py: column names from the header, types inferred from the first rows,
files interleaved, shuffled, repeated, batched), ``Counter``, and CsvDataset's
``na_value``, ``use_quote_delim`` and ``buffer_size``."""

from __future__ import annotations

import collections
import gzip

import numpy as np
import pytest

from ember import data
from ember.data import DataFormatError

X = data.experimental

ROWS = [  # i32, i64, f32, f64, text, late_float, empty, label
    ["1", "3000000000", "1.5", "1e39", "a", "", "", "0"],
    ["-2", "4", "2", "-1e300", "b,c", "7", "", "1"],
    ["3", "", "NA", "0.25", "x y", "2.5", "", "1"],
    ["4", "5", "-0.5", "3", "d", "1", "", "0"],
]
HEADER = ["i32", "i64", "f32", "f64", "text", "late_float", "empty", "label"]


def _write(path, rows, header=HEADER, opener=open):
    with opener(path, "wt", newline="") as f:
        import csv
        w = csv.writer(f)
        if header is not None:
            w.writerow(header)
        w.writerows(rows)
    return str(path)


def _all(ds):
    """Every batch's features and labels, concatenated per column."""
    cols: dict = collections.defaultdict(list)
    for features, label in ds:
        assert isinstance(features, collections.OrderedDict)
        for k, v in features.items():
            cols[k].extend(v.tolist())
        cols["label"].extend(label.tolist())
    return cols


def test_types_inferred_as_tensorflow(tmp_path):
    path = _write(tmp_path / "a.csv", ROWS)
    ds = X.make_csv_dataset(path, batch_size=4, label_name="label", num_epochs=1,
                            shuffle=False, na_value="NA")
    features, label = next(iter(ds))
    assert list(features) == HEADER[:-1]  # the header's order, the label apart
    dtypes = {k: v.dtype for k, v in features.items()}
    assert dtypes == {"i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64,
                      "text": object, "late_float": np.float32, "empty": object}
    assert label.dtype == np.int32
    np.testing.assert_array_equal(features["i32"], [1, -2, 3, 4])
    np.testing.assert_array_equal(features["i64"], [3000000000, 4, 0, 5])  # empty: 0
    np.testing.assert_array_equal(features["f32"], np.float32([1.5, 2, 0, -0.5]))  # NA: 0
    np.testing.assert_array_equal(features["f64"], [1e39, -1e300, 0.25, 3])
    assert features["text"].tolist() == ["a", "b,c", "x y", "d"]
    assert features["empty"].tolist() == ["", "", "", ""]
    np.testing.assert_array_equal(features["late_float"], np.float32([0, 7, 2.5, 1]))
    # only the first num_rows_for_inference rows count: late_float's first field is empty,
    # which says nothing, and a column of no type is read as strings
    ds = X.make_csv_dataset(path, batch_size=4, num_epochs=1, shuffle=False,
                            num_rows_for_inference=1, select_columns=["late_float", "i64"])
    (batch,) = list(ds)
    assert batch["late_float"].tolist() == ["", "7", "2.5", "1"]
    assert batch["i64"].dtype == np.int64  # its first row alone is past int32
    ds = X.make_csv_dataset(path, batch_size=4, num_epochs=1, shuffle=False,
                            num_rows_for_inference=2, select_columns=["i32", "f32"])
    with pytest.raises(DataFormatError, match="a.csv:4: column 1: cannot parse 'NA' as float32"):
        list(ds)  # without na_value, "NA" is no float
    ds = X.make_csv_dataset(path, batch_size=4, num_epochs=1, shuffle=False,
                            num_rows_for_inference=2, select_columns=["f32"])
    with pytest.raises(DataFormatError, match="cannot parse 'NA' as float32"):
        list(ds)  # without na_value, "NA" is no float


def test_select_columns_defaults_and_no_label(tmp_path):
    path = _write(tmp_path / "a.csv", ROWS)
    ds = X.make_csv_dataset(path, batch_size=2, select_columns=[4, "i32"], num_epochs=1,
                            shuffle=False, column_defaults=[np.int64, ""])
    batches = list(ds)
    assert [list(b) for b in batches] == [["i32", "text"]] * 2  # sorted by index
    assert batches[0]["i32"].dtype == np.int64
    assert [b["text"].tolist() for b in batches] == [["a", "b,c"], ["x y", "d"]]
    with pytest.raises(ValueError, match="2 column_defaults for 1 select_columns"):
        X.make_csv_dataset(path, 2, select_columns=["i32"], column_defaults=[0, 0])
    with pytest.raises(ValueError, match="names a column twice"):
        X.make_csv_dataset(path, 2, select_columns=["i32", 0])
    with pytest.raises(ValueError, match="'nope' is not a column index or one of"):
        X.make_csv_dataset(path, 2, select_columns=["nope"])
    with pytest.raises(ValueError, match="label_name 'nope' is not one of the columns"):
        X.make_csv_dataset(path, 2, label_name="nope")


def test_epochs_shuffle_and_files(tmp_path):
    a = _write(tmp_path / "part-0.csv", [[str(i), str(i % 2)] for i in range(0, 5)], ["v", "y"])
    _write(tmp_path / "part-1.csv", [[str(i), str(i % 2)] for i in range(100, 103)], ["v", "y"])
    pattern = str(tmp_path / "part-*.csv")
    # two files read at once, row by row; no shuffle: the files in sorted order
    ds = X.make_csv_dataset(pattern, batch_size=3, label_name="y", num_epochs=1,
                            shuffle=False, num_parallel_reads=2)
    assert _all(ds)["v"] == [0, 100, 1, 101, 2, 102, 3, 4]
    # repeated, shuffled by a seed: every row once per epoch, the same order for the seed
    ds = X.make_csv_dataset(pattern, batch_size=4, label_name="y", num_epochs=2,
                            shuffle_seed=7)
    got = _all(ds)["v"]
    assert sorted(got[:8]) == sorted(got[8:]) == [0, 1, 2, 3, 4, 100, 101, 102]
    assert got == _all(X.make_csv_dataset(pattern, batch_size=4, label_name="y",
                                          num_epochs=2, shuffle_seed=7))["v"]
    assert got[:8] != [0, 1, 2, 3, 4, 100, 101, 102]
    # num_epochs=None: endless, and every batch full
    endless = X.make_csv_dataset(a, batch_size=3, label_name="y", shuffle=False)
    assert [len(y) for _, y in endless.take(5)] == [3] * 5
    with pytest.raises(ValueError, match="no files match"):
        X.make_csv_dataset(str(tmp_path / "none-*.csv"), 2)


def test_header_checks_and_given_names(tmp_path):
    a = _write(tmp_path / "a.csv", [["1", "2"]], ["x", "y"])
    b = _write(tmp_path / "b.csv", [["1", "2"]], ["x", "z"])
    with pytest.raises(ValueError, match="header .* differs"):
        X.make_csv_dataset([a, b], 1)
    with pytest.raises(ValueError, match="column names repeat"):
        X.make_csv_dataset(a, 1, column_names=["x", "x"])
    with pytest.raises(ValueError, match="column_names are needed"):
        X.make_csv_dataset(a, 1, header=False)
    plain = _write(tmp_path / "plain.csv", [["1", "2"], ["3", "4"]], header=None)
    ds = X.make_csv_dataset(plain, 2, column_names=["p", "q"], header=False, num_epochs=1,
                            shuffle=False)
    (batch,) = list(ds)
    assert batch["p"].tolist() == [1, 3] and batch["q"].tolist() == [2, 4]


def test_ignore_errors_leaves_out_bad_rows(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("x,y\n1,2\n3\n5,6\nseven,8\n")
    kw = dict(batch_size=8, num_epochs=1, shuffle=False, column_defaults=[0, 0])
    with pytest.raises(DataFormatError, match="bad.csv:3: 1 fields, expected 2"):
        list(X.make_csv_dataset(str(path), **kw))
    (batch,) = list(X.make_csv_dataset(str(path), ignore_errors=True, **kw))
    assert batch["x"].tolist() == [1, 5] and batch["y"].tolist() == [2, 6]


def test_gzip(tmp_path):
    path = _write(tmp_path / "a.csv.gz", ROWS, opener=gzip.open)
    ds = X.make_csv_dataset(path, batch_size=4, label_name="label", num_epochs=1,
                            shuffle=False, compression_type="GZIP", na_value="NA")
    features, _ = next(iter(ds))
    assert features["i64"].dtype == np.int64 and features["text"][1] == "b,c"
    with pytest.raises(ValueError, match="'ZLIB' cannot be read"):
        X.make_csv_dataset(path, 4, compression_type="ZLIB")


def test_csv_dataset_na_value_quotes_and_buffer(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('a,b\n"1,5",NA\n"2,5",3\n')
    rows = list(data.CsvDataset(str(path), ["", -1], header=True, na_value="NA"))
    assert rows == [("1,5", -1), ("2,5", 3)]
    bare = list(data.CsvDataset(str(path), ["", "", ""], header=True, use_quote_delim=False))
    assert bare == [('"1', '5"', "NA"), ('"2', '5"', "3")]
    for size in (1, 3, 64):  # any read size gives the same rows
        assert list(data.CsvDataset(str(path), ["", -1], header=True, na_value="NA",
                                    buffer_size=size)) == rows
    with pytest.raises(ValueError, match="buffer_size must be a positive number of bytes"):
        data.CsvDataset(str(path), [""], buffer_size=0)
    # TensorFlow's positional order: compression_type, then buffer_size, then header
    assert list(data.CsvDataset(str(path), ["", -1], None, 1024, True, ",", True, "NA")) == rows


def test_counter_and_aliases():
    assert [int(v) for v in X.Counter().take(3)] == [0, 1, 2]
    got = list(X.Counter(start=10, step=-3, dtype=np.int32).take(3))
    assert [int(v) for v in got] == [10, 7, 4] and got[0].dtype == np.int32
    assert X.cardinality(X.Counter()) == X.INFINITE_CARDINALITY
    assert X.AUTOTUNE == data.AUTOTUNE
    picked = X.choose_from_datasets([data.Dataset.range(3), data.Dataset.range(10, 13)],
                                    data.Dataset.from_tensor_slices(np.array([1, 0, 1])))
    assert [int(v) for v in picked] == [10, 0, 11]

"""``data.experimental`` is ``tf.data.experimental``: ``make_csv_dataset``, ``Counter`` and
the names TensorFlow keeps there for functions that moved onto ``Dataset``.

Examples:
    >>> import os, tempfile
    >>> from ember import data
    >>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(p, "w").write("x,name,y\\n1.5,a,0\\n2.5,b,1\\n")
    >>> ds = data.experimental.make_csv_dataset(p, batch_size=2, label_name="y",
    ...                                         num_epochs=1, shuffle=False)
    >>> features, label = next(iter(ds))
    >>> features["x"], features["name"], label
    (array([1.5, 2.5], dtype=float32), array(['a', 'b'], dtype=object), array([0, 1], dtype=int32))
    >>> [int(i) for i in data.experimental.Counter(start=3, step=2).take(3)]
    [3, 5, 7]
"""

from __future__ import annotations

import collections
import csv
import glob
import gzip
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from ._readers.csv import CsvDataset

__all__ = [
    "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Counter", "CsvDataset",
    "cardinality", "choose_from_datasets", "make_csv_dataset", "sample_from_datasets",
]

choose_from_datasets = Dataset.choose_from_datasets
sample_from_datasets = Dataset.sample_from_datasets


def cardinality(dataset: Dataset) -> Any:
    """``dataset.cardinality()`` (``INFINITE_CARDINALITY``, ``UNKNOWN_CARDINALITY`` or a
    count)."""
    return dataset.cardinality()


def Counter(start: int = 0, step: int = 1, dtype: Any = np.int64) -> Dataset:
    """The endless count ``start, start + step, ...`` in ``dtype`` (TensorFlow's class-like
    name; ``Dataset.range(start, None, step)``)."""
    return Dataset.range(start, None, step, dtype=dtype)


# --- make_csv_dataset --------------------------------------------------------------------

_INFERRED = (np.int32, np.int64, np.float32, np.float64, object)  # least permissive first


def _fits(kind: Any, value: str) -> bool:
    """Whether ``value`` parses as ``kind`` (TensorFlow's ``_is_valid_*``)."""
    try:
        if kind is np.int32:  # equal to the int64 reading: no overflow
            return bool(np.int32(value) == np.int64(value))
        if kind is np.int64:
            np.int64(value)
            return True
        if kind is object:
            return True
        with np.errstate(over="ignore"):  # too large for float32: inf, so float64 is tried
            return bool(kind(value) < np.inf)
    except (ValueError, OverflowError):
        return False


def _infer_type(value: str, na_value: str, previous: Any) -> Any:
    """The least permissive type that reads ``value`` and every value seen before."""
    if value in ("", na_value):
        return previous
    start = 0 if previous is None else _INFERRED.index(previous)
    return next(kind for kind in _INFERRED[start:] if _fits(kind, value))


def _opener(compression_type: Any) -> Callable[[str], Any]:
    if compression_type in (None, ""):
        return lambda path: open(path, newline="", encoding="utf-8")
    if compression_type == "GZIP":
        return lambda path: gzip.open(path, "rt", newline="", encoding="utf-8")
    if compression_type == "ZLIB":
        raise ValueError("make_csv_dataset: compression_type 'ZLIB' cannot be read to infer "
                         "column names or types: pass column_names and column_defaults")
    raise ValueError(f"make_csv_dataset: compression_type must be None, '' or 'GZIP', got "
                     f"{compression_type!r}")


def _reader(f: Any, field_delim: str, use_quote_delim: bool) -> Any:
    return csv.reader(f, delimiter=field_delim,
                      quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)


def _file_names(file_pattern: Any) -> list[str]:
    patterns = list(file_pattern) if isinstance(file_pattern, (list, tuple)) else [file_pattern]
    if not patterns:
        raise ValueError("make_csv_dataset: file_pattern is an empty list")
    names = sorted(f for p in patterns for f in glob.glob(os.fsdecode(p)))
    if not names:
        raise ValueError(f"make_csv_dataset: no files match {file_pattern!r}")
    return names


def _column_names(files: list[str], opener: Callable[[str], Any], field_delim: str,
                  use_quote_delim: bool) -> list[str]:
    """The header row of the first file; every file must have the same one."""
    names: list[str] | None = None
    for path in files:
        with opener(path) as f:
            row = next(_reader(f, field_delim, use_quote_delim), None)
        if row is None:
            raise ValueError(f"make_csv_dataset: {path} has no header line (empty file?)")
        if names is None:
            names = row
        elif row != names:
            raise ValueError(f"make_csv_dataset: {path}'s header {row} differs from "
                             f"{files[0]}'s {names}")
    assert names is not None
    return names


def _infer_defaults(files: list[str], opener: Callable[[str], Any], n_cols: int,
                    field_delim: str, use_quote_delim: bool, na_value: str, header: bool,
                    rows: int | None, select: list[int] | None) -> list[Any]:
    """Each selected column's default, 0 of its inferred type or "" (TensorFlow's
    ``_infer_column_defaults``: the first ``rows`` rows, over the files in order)."""
    cols = list(range(n_cols)) if select is None else select
    kinds: list[Any] = [None] * len(cols)
    seen = 0
    for path in files:
        if rows is not None and seen >= rows:
            break
        with opener(path) as f:
            reader = _reader(f, field_delim, use_quote_delim)
            if header:
                next(reader, None)
            for row in reader:
                if rows is not None and seen >= rows:
                    break
                if len(row) != n_cols:
                    raise ValueError(f"make_csv_dataset: inferring column types, {path} line "
                                     f"{reader.line_num} has {len(row)} fields, expected "
                                     f"{n_cols}")
                for j, c in enumerate(cols):
                    kinds[j] = _infer_type(row[c], na_value, kinds[j])
                seen += 1
    return ["" if k in (None, object) else k(0) for k in kinds]


def _selected(select_columns: Any, names: list[str]) -> list[int]:
    """``select_columns`` (indices or names) as sorted indices, each once."""
    index = {n: i for i, n in enumerate(names)}
    out = []
    for v in select_columns:
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            if not 0 <= v < len(names):
                raise ValueError(f"make_csv_dataset: select_columns index {v} is out of "
                                 f"range for {len(names)} columns")
            out.append(int(v))
        elif v in index:
            out.append(index[v])
        else:
            raise ValueError(f"make_csv_dataset: select_columns entry {v!r} is not a column "
                             f"index or one of the names {names}")
    if len(set(out)) != len(out):
        raise ValueError(f"make_csv_dataset: select_columns {list(select_columns)} names a "
                         f"column twice")
    return sorted(out)


def make_csv_dataset(file_pattern: Any, batch_size: int, column_names: Any = None,
                     column_defaults: Any = None, label_name: str | None = None,
                     select_columns: Any = None, field_delim: str = ",",
                     use_quote_delim: bool = True, na_value: str = "", header: bool = True,
                     num_epochs: int | None = None, shuffle: bool = True,
                     shuffle_buffer_size: int = 10000, shuffle_seed: int | None = None,
                     prefetch_buffer_size: int | None = None,
                     num_parallel_reads: int | None = None, sloppy: bool = False,
                     num_rows_for_inference: int | None = 100, compression_type: Any = None,
                     ignore_errors: bool = False) -> Dataset:
    """CSV files as batches of ``(features, label)``: ``features`` an ``OrderedDict`` of
    column name to a ``(batch_size,)`` array, ``label`` the ``label_name`` column (without
    ``label_name``, the elements are the dicts alone). TensorFlow's arguments and defaults.

    Column names come from the first file's header (every file must have the same one),
    unless given. Column types are inferred from the first ``num_rows_for_inference`` rows
    (int32, int64, float32, float64, else ``str``; an empty or ``na_value`` field reads as
    0 or ""), unless ``column_defaults`` gives them (a default value, or a dtype for a
    required column). The files are read ``num_parallel_reads`` at a time, interleaved
    row by row (1 by default), shuffled (files and rows, by ``shuffle_seed``), repeated
    ``num_epochs`` times (None: forever, and then every batch is full) and batched.
    ``ignore_errors`` leaves out malformed rows instead of raising. ``sloppy`` allows
    TensorFlow another order; ember's is always the deterministic one.
    """
    if batch_size is None or int(batch_size) <= 0:
        raise ValueError(f"make_csv_dataset: batch_size must be positive, got {batch_size!r}")
    files = _file_names(file_pattern)
    opener = _opener(compression_type) if column_names is None or column_defaults is None \
        else None
    if column_names is None:
        if not header:
            raise ValueError("make_csv_dataset: column_names are needed when there is no "
                             "header line (header=False)")
        assert opener is not None
        column_names = _column_names(files, opener, field_delim, use_quote_delim)
    names = list(column_names)
    if len(set(names)) != len(names):
        raise ValueError(f"make_csv_dataset: column names repeat: {names}")
    select = None if select_columns is None else _selected(select_columns, names)
    if column_defaults is None:
        assert opener is not None
        column_defaults = _infer_defaults(files, opener, len(names), field_delim,
                                          use_quote_delim, na_value, header,
                                          num_rows_for_inference, select)
    defaults = list(column_defaults)
    if select is not None:
        if len(defaults) != len(select):
            raise ValueError(f"make_csv_dataset: {len(defaults)} column_defaults for "
                             f"{len(select)} select_columns (they must match)")
        names = [names[i] for i in select]
    elif len(defaults) != len(names):
        raise ValueError(f"make_csv_dataset: {len(defaults)} column_defaults for "
                         f"{len(names)} columns {names}")
    if label_name is not None and label_name not in names:
        raise ValueError(f"make_csv_dataset: label_name {label_name!r} is not one of the "
                         f"columns {names}")

    def read(path: Any) -> Dataset:
        ds = CsvDataset(str(path), defaults, compression_type=compression_type,
                        header=header, field_delim=field_delim,
                        use_quote_delim=use_quote_delim, na_value=na_value,
                        select_cols=select)
        ds._ignore_errors = bool(ignore_errors)
        return ds

    def organise(*columns: Any) -> Any:
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    if not isinstance(sloppy, bool):
        raise TypeError(f"make_csv_dataset: sloppy must be a bool, got {sloppy!r}")
    dataset = Dataset.from_tensor_slices(np.array(files, dtype=object))
    if shuffle:
        dataset = dataset.shuffle(len(files), shuffle_seed)
    reads = 1 if num_parallel_reads is None else num_parallel_reads
    if reads == AUTOTUNE:
        dataset = dataset.interleave(read, num_parallel_calls=AUTOTUNE)
    else:
        dataset = dataset.interleave(read, cycle_length=int(reads), block_length=1)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    dataset = dataset.map(organise)
    if prefetch_buffer_size == 0:
        return dataset
    return dataset.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)

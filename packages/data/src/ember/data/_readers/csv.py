"""CSV rows as tuples of numpy scalars, typed by ``record_defaults``."""

from __future__ import annotations

import csv
from typing import Any

import numpy as np

from .._dataset import Dataset
from .._errors import DataFormatError
from .._structure import TensorSpec, to_array
from .text import SKIP, _file_list, _LineIterator, compression, read_buffer


def _column_type(default, k: int = 0):
    """A default value (used for empty fields) or a dtype/type (the field is required).

    As TensorFlow's ``record_defaults``, a default may come in a list (or array) of one
    (``[0]``, ``["NA"]``: its element is the default) or of none (the field is required;
    an empty list is float32, an empty array its dtype)."""
    if isinstance(default, (list, tuple)) or (
            not isinstance(default, (str, bytes, type, np.dtype)) and np.ndim(default) > 0):
        listed = isinstance(default, (list, tuple))
        items = list(default) if listed else list(np.asarray(default).reshape(-1))
        if len(items) > 1:
            raise ValueError(f"CsvDataset: record_defaults[{k}] holds {len(items)} values; a "
                             f"column's default is one value (or a list of one, or none: "
                             f"required)")
        if items:
            return _column_type(items[0], k)
        dt = np.dtype(np.float32) if listed else np.asarray(default).dtype
        return (dt if dt.kind != "U" else np.dtype(object)), None
    if isinstance(default, np.str_):
        return np.dtype(object), str(default)
    if isinstance(default, (type, np.dtype)):
        dt = np.dtype(default)
        return (dt if dt.kind != "U" else np.dtype(object)), None
    if isinstance(default, str):
        return np.dtype(object), default
    return to_array(default).dtype, default  # Python numbers: TF's int32 and float32


_BOOLS = {"true": True, "1": True, "false": False, "0": False}


def _convert(field: str, dtype: np.dtype):
    """One field as a numpy scalar of ``dtype`` (strings stay ``str``)."""
    if dtype.kind == "O":
        return field
    if dtype.kind == "b":  # numpy would read any non-empty string, "False" too, as True
        value = _BOOLS.get(field.strip().lower())
        if value is None:
            raise ValueError("expected true/false/1/0")
        return np.bool_(value)
    return np.array(field, dtype=dtype)[()]


class CsvDataset(Dataset):
    """Rows of CSV files as tuples, one numpy scalar per selected column.

    Args:
        filenames: a path or a list of paths.
        record_defaults: one entry per selected column: a default value (its type sets the
            column's dtype; empty fields take it) or a type such as ``np.float32`` (the field
            is then required).
        header: skip the first line of each file.
        field_delim: the delimiter.
        select_cols: indices of the columns to keep (default: all).
        compression_type: None or "" for plain files, "GZIP" for gzip-compressed ones.
        buffer_size: bytes to read from a file at a time (default: 4 MiB, TensorFlow's).
        use_quote_delim: whether double quotes quote fields (RFC 4180); False reads them
            as ordinary characters.
        na_value: a field equal to it is missing, as an empty one is.

    Examples:
        >>> import os, tempfile
        >>> from ember import data
        >>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
        >>> _ = open(p, "w").write("x,y\\n1.5,2\\n,3\\n")
        >>> [tuple(map(float, r)) for r in data.CsvDataset(p, [0.0, 0], header=True)]
        [(1.5, 2.0), (0.0, 3.0)]
    """

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header: bool = False, field_delim: str = ",", use_quote_delim: bool = True,
                 na_value: str = "", select_cols=None):
        self._files = _file_list(filenames)
        self._buffer = read_buffer("CsvDataset", buffer_size)
        self._quoting: Any = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
        if not isinstance(na_value, str):
            raise TypeError(f"CsvDataset: na_value must be a str, got {na_value!r}")
        self._na = na_value
        self._ignore_errors = False  # make_csv_dataset(ignore_errors=True) skips bad rows
        self._compression = compression("CsvDataset", compression_type)
        self._types = [_column_type(d, k) for k, d in enumerate(record_defaults)]
        self._header, self._delim = bool(header), field_delim
        self._cols = None if select_cols is None else [int(c) for c in select_cols]
        if self._cols is not None and len(self._cols) != len(self._types):
            raise ValueError("CsvDataset: select_cols and record_defaults differ in length")
        if self._cols is not None and any(c < 0 for c in self._cols):
            raise ValueError(f"CsvDataset: select_cols must be non-negative, got {self._cols}")
        if not isinstance(field_delim, str) or len(field_delim) != 1:
            raise ValueError(f"CsvDataset: field_delim must be one character, got "
                             f"{field_delim!r}")

    def _parse(self, path, line_no, text):
        try:
            return self._parse_row(path, line_no, text)
        except DataFormatError:
            if self._ignore_errors:
                return SKIP
            raise

    def _parse_row(self, path, line_no, text):
        try:
            fields = next(csv.reader([text], delimiter=self._delim, quoting=self._quoting), [])
        except csv.Error as exc:
            raise DataFormatError(f"{path}:{line_no}: malformed CSV ({exc})") from None
        if self._cols is not None:
            if max(self._cols) >= len(fields):
                raise DataFormatError(f"{path}:{line_no}: {len(fields)} fields, "
                                      f"select_cols needs column {max(self._cols)}")
            fields = [fields[c] for c in self._cols]
        if len(fields) != len(self._types):
            raise DataFormatError(
                f"{path}:{line_no}: {len(fields)} fields, expected {len(self._types)}")
        out = []
        for k, (field, (dtype, default)) in enumerate(zip(fields, self._types)):
            if field == "" or field == self._na:
                if default is None:
                    raise DataFormatError(f"{path}:{line_no}: column {k} is empty and required")
                out.append(np.array(default, dtype=dtype)[()])
                continue
            try:
                out.append(_convert(field, dtype))
            except (ValueError, OverflowError, TypeError) as exc:
                shown = field if len(field) <= 40 else field[:37] + "..."
                raise DataFormatError(
                    f"{path}:{line_no}: column {k}: cannot parse {shown!r} as {dtype} "
                    f"({type(exc).__name__}: {str(exc)[:80]})") from None
        return tuple(out)

    def _make_iterator(self, epoch):
        return _LineIterator(self._files, int(self._header), self._parse,
                             compression=self._compression, buffer_size=self._buffer)

    def _compute_spec(self):
        return tuple(TensorSpec((), dt) for dt, _ in self._types)

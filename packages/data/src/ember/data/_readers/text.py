"""Text lines: ``str`` elements without their line ending; resumes by byte offset."""

from __future__ import annotations

import gzip
import os
from typing import Any, BinaryIO

import numpy as np

from .._dataset import Dataset
from .._errors import DataFormatError
from .._iterator import _It
from .._state import StateError
from .._structure import TensorSpec


def compression(owner: str, compression_type) -> str | None:
    """TensorFlow's ``compression_type`` of text files: None or "" (plain), or "GZIP"."""
    if compression_type in (None, ""):
        return None
    if compression_type == "GZIP":
        return "GZIP"
    raise ValueError(f"{owner}: compression_type must be None, '' or 'GZIP', got "
                     f"{compression_type!r}")


def read_buffer(owner: str, buffer_size) -> int:
    """TensorFlow's reader ``buffer_size``: bytes read from a file at a time (None: 4 MiB)."""
    if buffer_size is None:
        return 4 << 20
    if isinstance(buffer_size, bool) or not isinstance(buffer_size, (int, np.integer)) \
            or buffer_size <= 0:
        raise ValueError(f"{owner}: buffer_size must be a positive number of bytes, got "
                         f"{buffer_size!r}")
    # (open() reads buffering=1 as line buffering, which binary files refuse: 0, unbuffered)
    return 0 if buffer_size == 1 else int(buffer_size)


class _Gunzip(gzip.GzipFile):
    """A gzip reader of a file object it owns: closing it closes the file too."""

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


SKIP = object()  # what a transform returns for a line to leave out


class _LineIterator(_It):
    def __init__(self, files, skip_header: int, transform=None, compression=None,
                 buffer_size: int = -1):
        self._files, self._skip_header, self._transform = files, skip_header, transform
        self._buffer = buffer_size
        self._compression = compression
        self._file, self._offset, self._line = 0, 0, 0
        self._f: Any = None

    def _next_line(self):
        """(path, line number, text) of the next line, or None at the end."""
        while self._file < len(self._files):
            path = self._files[self._file]
            f = self._f
            if f is None:
                # (a gzip file's offsets count uncompressed bytes; its seek reads up to them)
                fobj = open(path, "rb", buffering=self._buffer)
                f = self._f = _Gunzip(fobj) if self._compression else fobj
                if f.seek(self._offset) != self._offset or f.tell() != self._offset:
                    raise StateError(f"iterator state: offset {self._offset} lies past the "
                                     f"end of {path} (a state saved for another file?)")
                while self._line < self._skip_header and f.readline():
                    self._line += 1
            raw = f.readline()
            if raw:
                self._offset = f.tell()
                self._line += 1
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    start = self._offset - len(raw)
                    raise DataFormatError(
                        f"{path}:{self._line}: invalid UTF-8 at byte {start + e.start} "
                        f"({e.reason})") from None
                # TensorFlow's line: one "\n" ends it, and one "\r" before that goes too;
                # a last line without "\n" that is empty after that is no line
                ended = text.endswith("\n")
                text = text[:-1] if ended else text
                text = text[:-1] if text.endswith("\r") else text
                if ended or text:
                    return path, self._line, text
                continue
            f.close()
            self._f, self._file, self._offset, self._line = None, self._file + 1, 0, 0
        return None

    def __next__(self):
        while True:
            got = self._next_line()
            if got is None:
                raise StopIteration
            if self._transform is None:
                return got[2]
            out = self._transform(*got)
            if out is not SKIP:
                return out

    def __del__(self):
        # an iterator dropped before its end (take(1), next(iter(ds))) closes its file now,
        # not whenever the file object is collected
        f, self._f = getattr(self, "_f", None), None
        if f is not None:
            f.close()

    def get_state(self):
        return {"file": self._file, "offset": self._offset, "line": self._line}

    def set_state(self, state):
        self._file, self._offset, self._line = _file_position(
            state, self._files, check_size=self._compression is None)
        self._line = state.integer("line")


def _file_position(state, files, check_size: bool = True):
    """``(file index, byte offset)`` from a saved state, checked against the files now.

    The offset must lie within the file it points into (a state saved against a longer
    file, or a hostile one, is refused rather than read from a wrong place).
    """
    index = state.integer("file", high=len(files))
    offset = state.integer("offset")
    if index == len(files):  # past the last file: nothing to point into
        if offset:
            state.check_in("offset", offset, 0, 0)
    elif check_size:  # (a compressed file's offset is checked on reading: _LineIterator)
        try:
            size = os.path.getsize(files[index])
        except OSError as e:
            raise StateError(f"iterator state: field {state.path}.file points at "
                             f"{files[index]}, which cannot be read: {e}") from e
        state.check_in("offset", offset, 0, size)
    return index, offset, 0


def _file_list(filenames):
    if isinstance(filenames, (str, os.PathLike)):
        filenames = [filenames]
    return [os.fspath(f) for f in filenames]


class TextLineDataset(Dataset):
    """Lines of one or more text files (UTF-8), as ``str`` without the line ending;
    ``compression_type="GZIP"`` reads gzip-compressed files (TensorFlow's)."""

    def __init__(self, filenames, skip_header_lines: int = 0, compression_type=None):
        self._files = _file_list(filenames)
        self._skip = int(skip_header_lines)
        self._compression = compression("TextLineDataset", compression_type)

    def _make_iterator(self, epoch):
        return _LineIterator(self._files, self._skip, compression=self._compression)

    def _compute_spec(self):
        return TensorSpec((), object)

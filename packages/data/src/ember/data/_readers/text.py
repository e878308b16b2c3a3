"""Text lines: ``str`` elements without their line ending; resumes by byte offset."""

from __future__ import annotations

import gzip
import os
from typing import BinaryIO

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


class _LineIterator(_It):
    def __init__(self, files, skip_header: int, transform=None, compression=None):
        self._files, self._skip_header, self._transform = files, skip_header, transform
        self._compression = compression
        self._file, self._offset, self._line = 0, 0, 0
        self._f: BinaryIO | None = None

    def _next_line(self):
        """(path, line number, text) of the next line, or None at the end."""
        while self._file < len(self._files):
            path = self._files[self._file]
            f = self._f
            if f is None:
                # (a gzip file's offsets count uncompressed bytes; its seek reads up to them)
                f = self._f = gzip.open(path, "rb") if self._compression else open(path, "rb")
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
        got = self._next_line()
        if got is None:
            raise StopIteration
        if self._transform is not None:
            return self._transform(*got)
        return got[2]

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

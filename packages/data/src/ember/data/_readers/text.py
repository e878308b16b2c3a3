"""Text lines: ``str`` elements without their line ending; resumes by byte offset."""

from __future__ import annotations

import os

from .._dataset import Dataset
from .._iterator import _It
from .._structure import TensorSpec


class _LineIterator(_It):
    def __init__(self, files, skip_header: int, transform=None):
        self._files, self._skip_header, self._transform = files, skip_header, transform
        self._file, self._offset, self._line, self._f = 0, 0, 0, None

    def _next_line(self):
        """(path, line number, text) of the next line, or None at the end."""
        while self._file < len(self._files):
            path = self._files[self._file]
            if self._f is None:
                self._f = open(path, "rb")
                self._f.seek(self._offset)
                while self._line < self._skip_header and self._f.readline():
                    self._line += 1
            raw = self._f.readline()
            if raw:
                self._offset = self._f.tell()
                self._line += 1
                text = raw.decode("utf-8").rstrip("\r\n")
                return path, self._line, text
            self._f.close()
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
        self._file, self._offset = int(state["file"]), int(state["offset"])
        self._line = int(state["line"])


def _file_list(filenames):
    if isinstance(filenames, (str, os.PathLike)):
        filenames = [filenames]
    return [os.fspath(f) for f in filenames]


class TextLineDataset(Dataset):
    """Lines of one or more text files (UTF-8), as ``str`` without the line ending."""

    def __init__(self, filenames, skip_header_lines: int = 0):
        self._files = _file_list(filenames)
        self._skip = int(skip_header_lines)

    def _make_iterator(self, epoch):
        return _LineIterator(self._files, self._skip)

    def _compute_spec(self):
        return TensorSpec((), object)

"""``CSVLogger``: one row of logs per epoch in a CSV file."""

from __future__ import annotations

import collections.abc
import csv
import os
from typing import Any

import numpy as np

from ._base import Callback


class CSVLogger(Callback):
    """Write each epoch's logs as a row of a CSV file (Keras's).

    Args:
        filename: the file, e.g. ``"run/log.csv"``.
        separator: the field separator (one character).
        append: True appends to an existing file (no second header if it has one), as
            when training continues; False overwrites it.

    Columns are ``epoch`` and the log keys in sorted order; without validation, Keras's
    ``val_`` columns are there too, holding ``NA``. Each row is flushed when written.

    Examples:
        >>> import numpy as np, os, tempfile
        >>> from ember import nn
        >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,))])
        >>> model.compile("sgd", "mse")
        >>> path = os.path.join(tempfile.mkdtemp(), "log.csv")
        >>> _ = model.fit(np.ones((4, 2), np.float32), np.zeros(4), epochs=2, verbose=0,
        ...               callbacks=[nn.callbacks.CSVLogger(path)])
        >>> open(path).readline().strip()
        'epoch,loss,val_loss'
    """

    def __init__(self, filename: Any, separator: str = ",", append: bool = False) -> None:
        super().__init__()
        if not isinstance(separator, str) or len(separator) != 1:
            raise ValueError(f"CSVLogger: separator must be one character, got {separator!r}")
        if not isinstance(append, bool):
            raise TypeError(f"CSVLogger: append must be a bool, got {append!r}")
        self.filename = os.fspath(filename)
        self.sep, self.append = separator, append
        self.keys: list[str] | None = None
        self.writer: Any = None
        self.csv_file: Any = None
        self.append_header = True

    def on_train_begin(self, logs: Any = None) -> None:
        if self.append and os.path.exists(self.filename):
            with open(self.filename) as f:
                self.append_header = not f.readline()
        else:
            self.append_header = True
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, "a" if self.append else "w", newline="")
        self.keys, self.writer = None, None

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys += [f"val_{k}" for k in self.keys]
        if self.writer is None:
            class Dialect(csv.excel):
                delimiter = self.sep

            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch", *self.keys],
                                         dialect=Dialect)
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch, **{k: _cell(logs.get(k, "NA")) for k in self.keys}}
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs: Any = None) -> None:
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


def _cell(value: Any) -> Any:
    """A number as itself, a sequence (an array of values) as ``"[a, b]"`` (Keras)."""
    if isinstance(value, str) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value
    if isinstance(value, collections.abc.Iterable):
        return f'"[{", ".join(map(str, value))}]"'
    return value

"""``timeseries_dataset_from_array``: Keras 3's sliding windows over a series, as an
``ember.data`` dataset (ember-nn does not depend on ember-data; ember-all installs both).

Keras's steps: the window starts ``0, sequence_stride, ...`` (those whose window fits
between ``start_index`` and ``end_index``, and no more than there are targets), shuffled
once with ``np.random.RandomState(seed)`` when ``shuffle``; window ``i`` holds the rows
``start_index + p + k * sampling_rate`` for ``k < sequence_length``, and its target is
``targets[start_index + p]``; then a shuffle buffer of ``8 * batch_size`` (reshuffled each
pass) and ``batch``. Windows are cut from ``data`` as they are read, not stored.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

import ember.core as em

from ._from_directory import _data


def _int(fn: str, name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{fn}: {name} must be a whole number >= {low}, got {value!r}")
    return int(value)


def timeseries_dataset_from_array(data: Any, targets: Any, sequence_length: int,
                                  sequence_stride: int = 1, sampling_rate: int = 1,
                                  batch_size: int | None = 128, shuffle: bool = False,
                                  seed: int | None = None, start_index: int | None = None,
                                  end_index: int | None = None) -> Any:
    """Windows of ``sequence_length`` rows of ``data`` (with the target of each window's
    first row), batched (``keras.utils.timeseries_dataset_from_array``).

    Args:
        data: the series: an array (or anything numpy takes) whose first axis is time.
        targets: one target per row (the window starting at row ``i`` gets
            ``targets[i]``), or None for windows alone.
        sequence_length: the rows in a window.
        sequence_stride: the rows between one window's start and the next's.
        sampling_rate: the rows between two rows of a window.
        batch_size: windows per batch; None: single windows.
        shuffle: shuffle the windows (once, by ``seed``, then within a buffer of
            ``8 * batch_size`` on each pass).
        seed: the shuffles' seed (None: drawn from numpy's global state, as Keras).
        start_index, end_index: the rows ``[start_index, end_index)`` to take windows
            from (None: all).

    Returns:
        An ``ember.data.Dataset`` of numpy arrays: ``windows`` or ``(windows, targets)``.

    Raises:
        ValueError: an argument out of range, named.
        ImportError: ember-data is not installed.
    """
    fn = "timeseries_dataset_from_array"
    series = _as_array(data)
    n = len(series)
    sequence_length = _int(fn, "sequence_length", sequence_length, 1)
    sequence_stride = _int(fn, "sequence_stride", sequence_stride, 1)
    sampling_rate = _int(fn, "sampling_rate", sampling_rate, 1)
    for name, value in (("sequence_stride", sequence_stride), ("sampling_rate", sampling_rate)):
        if value >= n:
            raise ValueError(f"{fn}: {name} must be below the number of rows of data ({n}), "
                             f"got {value}")
    if batch_size is not None:
        batch_size = _int(fn, "batch_size", batch_size, 1)
    if start_index is not None:
        start_index = _int(fn, "start_index", start_index, 0)
        if start_index >= n:
            raise ValueError(f"{fn}: start_index must be below the number of rows of data "
                             f"({n}), got {start_index}")
    start = start_index or 0
    if end_index is not None:
        end_index = _int(fn, "end_index", end_index, 1)
        if end_index <= start or end_index >= n:
            raise ValueError(f"{fn}: end_index must be in ({start}, {n}), got {end_index}")
    end = n if end_index is None else end_index
    labels = None if targets is None else _as_array(targets)
    windows = end - start - (sequence_length - 1) * sampling_rate
    if labels is not None:
        windows = min(windows, len(labels))
    positions = np.arange(0, max(windows, 0), sequence_stride, dtype=np.int64)
    if shuffle:
        if seed is None:
            seed = int(np.random.randint(1e6))
        np.random.RandomState(seed).shuffle(positions)
    offsets = np.arange(sequence_length, dtype=np.int64) * sampling_rate
    rows = series[start:end]
    picks = rows if labels is None else labels[start:end]

    def window(p: Any) -> Any:
        p = int(p)
        if labels is None:
            return rows[p + offsets]
        return rows[p + offsets], picks[p]

    ds = _data(fn).Dataset.from_tensor_slices(positions).map(window)
    if batch_size is not None:
        if shuffle:
            ds = ds.shuffle(buffer_size=batch_size * 8, seed=seed)
        return ds.batch(batch_size)
    return ds.shuffle(buffer_size=1024, seed=seed) if shuffle else ds


def _as_array(x: Any) -> np.ndarray:
    """``x`` as a numpy array; a Python list or tuple converts as ``em.constant`` converts
    it (Python floats float32, ints int32, as tf.data gives them; numpy would make float64
    and int64), arrays keep their dtype."""
    if isinstance(x, (list, tuple)):
        return np.asarray(em.convert_to_tensor(x).numpy())
    return np.asarray(x)

"""``pad_sequences``, as Keras 3's (``keras.utils.pad_sequences``)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def pad_sequences(sequences: Any, maxlen: int | None = None, dtype: Any = "int32",
                  padding: str = "pre", truncating: str = "pre", value: Any = 0.0) -> Any:
    """Sequences of different lengths as one array ``(len(sequences), maxlen, ...)``.

    Shorter sequences are padded with ``value``, longer ones cut to ``maxlen``; ``padding``
    and ``truncating`` say at which end (``"pre"``, the default, or ``"post"``). Pair it
    with ``Embedding(mask_zero=True)`` (0 the padding id) or ``Masking`` so that the
    padded steps are masked.

    Args:
        sequences: a list (or any sized iterable) of sequences; each a list or array of
            values or of equal-shaped items.
        maxlen: the length of every row; None gives the longest sequence's.
        dtype: the result's dtype (``object`` for strings, as Keras).
        padding: ``"pre"`` or ``"post"``: pad before or after each sequence.
        truncating: ``"pre"`` or ``"post"``: drop values at the start or at the end.
        value: the padding value.

    Returns:
        A numpy array.

    Raises:
        ValueError: ``padding``/``truncating`` not ``"pre"``/``"post"``; a value or
            ``value`` that ``dtype`` cannot hold (1.5 or 2**40 for int32: Keras would
            truncate or wrap it); items of different shapes; a string ``value`` for a
            numeric ``dtype``.

    Examples:
        >>> from ember import nn
        >>> seqs = [[1], [2, 3], [4, 5, 6]]
        >>> nn.utils.pad_sequences(seqs, padding="post").tolist()
        [[1, 0, 0], [2, 3, 0], [4, 5, 6]]
        >>> nn.utils.pad_sequences(seqs, maxlen=2).tolist()
        [[0, 1], [2, 3], [5, 6]]
    """
    for name, side in (("padding", padding), ("truncating", truncating)):
        if side not in ("pre", "post"):
            raise ValueError(f'pad_sequences: {name} must be "pre" or "post", got {side!r}')
    if not hasattr(sequences, "__len__"):
        raise ValueError(f"pad_sequences: sequences must be a list of sequences, got "
                         f"{type(sequences).__name__}")
    lengths, item_shape = _lengths_and_item_shape(sequences)
    if maxlen is None:
        maxlen = max(lengths, default=0)
    elif isinstance(maxlen, bool) or not isinstance(maxlen, numbers.Integral) or maxlen < 0:
        raise ValueError(f"pad_sequences: maxlen must be a whole number >= 0 or None, got "
                         f"{maxlen!r}")
    dt = np.dtype(dtype)
    if isinstance(value, str) and dt.kind not in "OUS":
        raise ValueError(f"pad_sequences: dtype {dt} cannot hold the string value "
                         f"{value!r}; use dtype=object for strings")
    out = np.full((len(sequences), int(maxlen)) + item_shape, _exact(value, dt, f"value={value!r}"),
                  dtype=dt)
    for i, seq in enumerate(sequences):
        n = min(len(seq), int(maxlen))
        if n == 0:
            continue
        kept = seq[len(seq) - n:] if truncating == "pre" else seq[:n]
        arr = _exact(kept, dt, f"the values of sequence {i}")
        if arr.shape[1:] != item_shape:
            raise ValueError(f"pad_sequences: sequence {i} has items of shape "
                             f"{arr.shape[1:]}, the first non-empty one {item_shape}")
        if padding == "post":
            out[i, :n] = arr
        else:
            out[i, int(maxlen) - n:] = arr
    return out


def _lengths_and_item_shape(sequences: Any) -> tuple[list[int], tuple[int, ...]]:
    lengths, item_shape, found = [], (), False
    for i, seq in enumerate(sequences):
        try:
            lengths.append(len(seq))
        except TypeError as e:
            raise ValueError(f"pad_sequences: sequences must be a list of sequences; item "
                             f"{i} is {type(seq).__name__}") from e
        if not found and len(seq):
            item_shape, found = np.asarray(seq).shape[1:], True
    return lengths, item_shape


def _exact(values: Any, dt: np.dtype, what: str) -> np.ndarray:
    """``values`` in ``dt``, refused when an integer or bool ``dt`` would change one (a
    fraction truncated, a large number wrapped)."""
    if dt.kind == "O":
        return np.asarray(values, dtype=object)
    given = np.asarray(values)
    if dt.kind not in "iub" or given.dtype.kind not in "iufb":
        return given.astype(dt)
    with np.errstate(all="ignore"):
        cast = given.astype(dt)
    if not np.array_equal(cast, given):  # compared as numbers: 1 != 1.5, 0 != 2**40
        raise ValueError(f"pad_sequences: dtype {dt} cannot hold {what} exactly; pass a "
                         f"dtype that can (dtype='float32', 'int64' ...)")
    return cast

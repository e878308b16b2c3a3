"""What the preprocessing layers share about data: reading ``adapt``'s batches and
bringing inputs to the host.

``adapt`` takes a numpy array, an ember Tensor, a list, or any iterable of batches: an
``ember.data.Dataset`` is one (ember-nn does not depend on ember-data, so a dataset is
recognised by what it does, never imported). A batch that is a tuple ``(x, y, ...)`` gives
its first item, as Keras does, so a dataset of (features, labels) adapts on the features.

ember tensors hold numbers only. The string layers (``StringLookup``, ``TextVectorization``,
``Hashing`` on strings) read Python strings and numpy string arrays on the host and say so
when handed an ember Tensor.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

import ember.core as em

INFINITE = -1  # ember.data's (and tf.data's) INFINITE_CARDINALITY


def first_item(batch: Any) -> Any:
    """``x`` of an ``(x, y[, sample_weight])`` batch; the batch itself otherwise."""
    return batch[0] if isinstance(batch, tuple) else batch


def is_batch_like(data: Any) -> bool:
    """An array or tensor (one batch), not an iterable of batches."""
    return isinstance(data, (np.ndarray, em.Tensor, np.generic, str, bytes))


def batches(layer: str, data: Any, steps: int | None = None,
            lists_are_batches: bool = True) -> Iterator[Any]:
    """The batches ``adapt`` reads from ``data`` (their first items), at most ``steps``.

    Args:
        layer: the layer's class name, for errors.
        data: an array, tensor or list (one batch), or an iterable of batches.
        steps: read at most this many batches (None: until the data ends).
        lists_are_batches: a list or tuple is one batch (True, as the lookup layers read
            a list of strings) or a sequence of batches (False).
    """
    if steps is not None and (isinstance(steps, bool) or int(steps) < 1):
        raise ValueError(f"{layer}.adapt: steps must be a positive int or None, got {steps!r}")
    if is_batch_like(data) or (lists_are_batches and isinstance(data, (list, tuple))):
        if steps is not None:
            raise ValueError(f"{layer}.adapt: steps= applies to datasets and iterables of "
                             f"batches, not to one array (got steps={steps})")
        return iter([data])
    if not isinstance(data, Iterable):
        raise TypeError(f"{layer}.adapt: expected an array, a tensor, a list or an iterable "
                        f"of batches (such as an ember.data.Dataset), got "
                        f"{type(data).__name__}")
    cardinality = getattr(data, "cardinality", None)
    if steps is None and callable(cardinality) and cardinality() == INFINITE:
        raise ValueError(f"{layer}.adapt: the dataset repeats forever; pass steps= to say "
                         f"how many batches to read")
    out = (first_item(b) for b in data)
    return itertools.islice(out, steps) if steps is not None else out


def rank_of_elements(data: Any) -> int | None:
    """The rank of a dataset's (first) element from its ``element_spec``, if it has one."""
    spec = getattr(data, "element_spec", None)
    spec = first_item(spec)
    shape = getattr(spec, "shape", None)
    return None if shape is None else len(shape)


def reject_activity_regularizer(layer: str, kwargs: dict[str, Any]) -> None:
    """The host layers are outside the trained computation, so a penalty on their output
    could never act: refused by name."""
    if kwargs.get("activity_regularizer") is not None:
        raise ValueError(f"{layer}: activity_regularizer is not supported: the layer runs on "
                         f"the host on data, outside what a model trains")


def to_numpy(x: Any) -> np.ndarray:
    """A host array of ``x`` (an ember Tensor is read with ``.numpy()``: one transfer)."""
    if isinstance(x, em.Tensor):
        return np.asarray(x.numpy())
    return np.asarray(x)


def host_strings(layer: str, x: Any, encoding: str = "utf-8") -> np.ndarray:
    """``x`` (a str, bytes, nested lists of them, or a numpy array of kind U, S or O) as a
    numpy object array of Python ``str``.

    Raises:
        TypeError: ``x`` is an ember Tensor (ember has no string tensors) or holds
            something that is not text.
    """
    if isinstance(x, em.Tensor) or hasattr(x, "_ember_symbolic"):
        raise TypeError(
            f"{layer} works on text on the host (Python str or numpy string arrays) and "
            f"ember tensors hold numbers only (got an ember {type(x).__name__} of dtype "
            f"{getattr(x, 'dtype', '?')}). Apply it in the input pipeline or before fit, "
            f"and hand the model the integer ids it returns")
    arr = np.asarray(x, dtype=object) if not isinstance(x, np.ndarray) else x
    if arr.dtype.kind == "U":
        return arr.astype(object)
    if arr.dtype.kind == "S":
        return np.vectorize(lambda b: b.decode(encoding), otypes=[object])(arr) \
            if arr.size else arr.astype(object)
    if arr.dtype.kind != "O":
        raise TypeError(f"{layer} expects strings, got a numpy array of dtype {arr.dtype}")
    flat = arr.reshape(-1)
    out = np.empty(flat.shape, dtype=object)
    for i, v in enumerate(flat):
        if isinstance(v, bytes):
            out[i] = v.decode(encoding)
        elif isinstance(v, (str, np.str_)):
            out[i] = str(v)
        else:
            raise TypeError(f"{layer} expects strings, got {type(v).__name__} {v!r} in its "
                            f"input")
    return out.reshape(arr.shape)

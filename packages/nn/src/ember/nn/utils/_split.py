"""``split_dataset``, as Keras 3's (``keras.utils.split_dataset``), on arrays and on
``ember.data`` datasets.

ember-nn does not depend on ember-data: a dataset is recognised by its public surface
(``element_spec``, ``cardinality()``, iteration, and its class's ``from_tensor_slices``),
and the two halves are made with that class's ``from_tensor_slices``.
"""

from __future__ import annotations

import numbers
import random
import sys
from typing import Any

import numpy as np

import ember.core as em


def split_dataset(dataset: Any, left_size: Any = None, right_size: Any = None,
                  shuffle: bool = False, seed: int | None = None) -> tuple[Any, Any]:
    """Split examples into a left part and a right part (train / test), as Keras.

    Args:
        dataset: an array (numpy or ember Tensor), a list or tuple of arrays of one length
            (features, labels ...), or an unbatched ``ember.data.Dataset``.
        left_size: a float in (0, 1): the fraction of the examples in the left part; an
            int: their number; None: what ``right_size`` leaves.
        right_size: the same for the right part, taken from the end; when both are
            given, the examples between the two parts are dropped.
        shuffle: shuffle the examples before splitting.
        seed: the shuffle's seed (Python's ``random.Random(seed)``, the order Keras's
            ``random.seed(seed); random.shuffle`` gives, without reseeding ``random``).

    Returns:
        ``(left, right)``: for arrays, arrays in the input's structure (Keras returns
        ``tf.data`` datasets; make ember datasets with ``Dataset.from_tensor_slices``);
        for a dataset, two datasets of its elements.

    Raises:
        ValueError: no size given, a size out of range, a part left empty, arrays of
            different lengths, or a batched or infinite dataset (split before
            ``.batch()``; Keras unbatches and batches again, which needs the dataset's
            private batch size).

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> x, y = np.arange(10).reshape(5, 2), np.arange(5)
        >>> (lx, ly), (rx, ry) = nn.utils.split_dataset((x, y), left_size=0.8)
        >>> lx.shape, ry.tolist()
        ((4, 2), [4])
    """
    if left_size is None and right_size is None:
        raise ValueError("split_dataset: give left_size or right_size (or both)")
    if _is_dataset(dataset):
        return _split_elements(dataset, left_size, right_size, shuffle, seed)
    arrays, pack = _arrays(dataset)
    total = len(arrays[0])
    left, right = _sizes(left_size, right_size, total)
    order = _order(total, shuffle, seed)
    return (pack([_rows(a, order[:left]) for a in arrays]),
            pack([_rows(a, order[total - right:]) for a in arrays]))


def _arrays(dataset: Any) -> tuple[list[Any], Any]:
    """The arrays to split and a function giving back the input's structure."""
    if isinstance(dataset, (np.ndarray, em.Tensor)):
        arrays, pack = [dataset], lambda parts: parts[0]
    elif isinstance(dataset, (list, tuple)) and dataset:
        arrays = [a if isinstance(a, (np.ndarray, em.Tensor)) else np.asarray(a)
                  for a in dataset]
        kind = type(dataset) if type(dataset) in (list, tuple) else tuple
        pack = kind
    else:
        raise TypeError(f"split_dataset: dataset must be an array, a list or tuple of arrays "
                        f"or an ember.data.Dataset, got {type(dataset).__name__}")
    lengths = [len(a) if a.ndim else 0 for a in arrays]
    if len(set(lengths)) > 1:
        raise ValueError(f"split_dataset: the arrays hold different numbers of examples: "
                         f"{lengths}")
    if not lengths[0]:
        raise ValueError("split_dataset: the dataset holds no examples")
    return arrays, pack


def _rows(a: Any, idx: np.ndarray) -> Any:
    if isinstance(a, em.Tensor):  # gathered on its device
        with em.device(a.device):
            return em.gather(a, em.constant(idx.astype(np.int64)))
    return a[idx]


def _order(total: int, shuffle: bool, seed: Any) -> np.ndarray:
    if not shuffle:
        return np.arange(total)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise ValueError(f"split_dataset: seed must be a whole number or None, got {seed!r}")
    order = list(range(total))
    random.Random(None if seed is None else int(seed)).shuffle(order)
    return np.asarray(order, np.int64)


def _sizes(left: Any, right: Any, total: int) -> tuple[int, int]:
    """Keras's rules: an int is a count in (0, total), a float a fraction in (0, 1); the
    part not given is the rest; fractions round half to even (Python's ``round``)."""
    given_left, given_right = _size("left_size", left, total), _size("right_size", right, total)
    n_right = total - (given_left or 0) if given_right is None else given_right
    n_left = total - n_right if given_left is None else given_left
    if n_left + n_right > total:
        raise ValueError(f"split_dataset: left_size and right_size give {n_left} + "
                         f"{n_right} examples, more than the {total} there are")
    for name, n in (("left", n_left), ("right", n_right)):
        if n <= 0:
            raise ValueError(f"split_dataset: with {total} examples, left_size={left!r} and "
                             f"right_size={right!r} leave the {name} part empty")
    return n_left, n_right


def _size(name: str, value: Any, total: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"split_dataset: {name} must be an int, a float or None, got "
                        f"{type(value).__name__}")
    if isinstance(value, numbers.Integral):
        if not 0 < int(value) < total:
            raise ValueError(f"split_dataset: {name}={value} must be a count in (0, {total})")
        return int(value)
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"split_dataset: {name}={value} must be a fraction in (0, 1)")
    return round(float(value) * total)


# --- ember.data datasets, through their public surface -----------------------------------

def _is_dataset(obj: Any) -> bool:
    return hasattr(obj, "element_spec") and hasattr(obj, "cardinality") and \
        callable(getattr(type(obj), "from_tensor_slices", None))


def _split_elements(dataset: Any, left_size: Any, right_size: Any, shuffle: bool,
                    seed: Any) -> tuple[Any, Any]:
    specs = _flatten(dataset.element_spec)
    if specs and all(len(s.shape) and s.shape[0] is None for s in specs):
        raise ValueError("split_dataset: the dataset looks batched (every element's leading "
                         "dimension is None in its element_spec): split it before .batch(), "
                         "or .unbatch() it first")
    data = sys.modules.get("ember.data")
    infinite = getattr(data, "INFINITE_CARDINALITY", -1)
    if dataset.cardinality() == infinite:
        raise ValueError("split_dataset: the dataset is infinite (.repeat()): split it "
                         "before repeating, or .take() a finite part")
    elements = list(dataset.as_numpy_iterator() if hasattr(dataset, "as_numpy_iterator")
                    else dataset)
    if not elements:
        raise ValueError("split_dataset: the dataset holds no examples")
    total = len(elements)
    left, right = _sizes(left_size, right_size, total)
    order = _order(total, shuffle, seed)
    make = type(dataset).from_tensor_slices
    return (make(_stack([elements[i] for i in order[:left]])),
            make(_stack([elements[i] for i in order[total - right:]])))


def _flatten(structure: Any) -> list[Any]:
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for s in structure for leaf in _flatten(s)]
    return [structure]


def _stack(elements: list[Any]) -> Any:
    """Elements of one structure (tuples, dicts, arrays) as that structure of stacked
    arrays, the form ``from_tensor_slices`` takes."""
    first = elements[0]
    if isinstance(first, dict):
        return {k: _stack([e[k] for e in elements]) for k in first}
    if isinstance(first, (list, tuple)):
        return tuple(_stack([e[i] for e in elements]) for i in range(len(first)))
    return np.stack([np.asarray(e) for e in elements])

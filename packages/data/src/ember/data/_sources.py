"""Source datasets: in-memory arrays, generators, ranges, zip and concatenate."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, input_pass
from ._index_stream import IndexedElementIterator, IndexedSource, RangeStream
from ._iterator import _It, skip_n
from ._state import INT64_MAX, StateError
from ._structure import (
    TensorSpec,
    dict_keys,
    flatten,
    flatten_up_to,
    map_structure,
    merge_specs,
    pack_as,
    spec_of,
    specs_compatible,
    to_array,
)


def _as_arrays(tensors):
    """Leaves as numpy arrays (Python numbers in TensorFlow's dtypes: ``to_array``); ember
    tensors come in through ``__array__``."""
    if isinstance(tensors, list):
        tensors = to_array(tensors)
    return map_structure(to_array, tensors)


class FromTensorSlices(Dataset):
    def __init__(self, tensors):
        tensors = _as_arrays(tensors)
        cols = flatten(tensors)
        if any(c.ndim == 0 for c in cols):
            raise ValueError("from_tensor_slices needs arrays with at least one dimension")
        lens = {len(c) for c in cols}
        if len(lens) != 1:
            shapes = [tuple(c.shape) for c in cols]
            raise ValueError(
                f"from_tensor_slices: components differ in their first dimension: {shapes}"
            )
        self._source = IndexedSource(tensors, cols)

    def _indexed(self):
        n = self._source.n
        return self._source, lambda epoch: RangeStream(n)

    def _make_iterator(self, epoch):
        return IndexedElementIterator(self._source, RangeStream(self._source.n))

    def _compute_spec(self):
        return map_structure(lambda c: TensorSpec(tuple(c.shape[1:]), c.dtype),
                             self._source.structure)

    def cardinality(self):
        return self._source.n


class _ListIterator(_It):
    def __init__(self, items):
        self._items, self._pos = items, 0

    def __next__(self):
        if self._pos >= len(self._items):
            raise StopIteration
        self._pos += 1
        return self._items[self._pos - 1]

    def get_state(self):
        return {"pos": self._pos}

    def set_state(self, state):
        self._pos = state.integer("pos", high=len(self._items))


class ListDataset(Dataset):
    """Elements from a Python list (used for ``from_tensors`` and ``window``); ``spec``,
    where given, is their spec (a window's: its input's, known even when it is empty)."""

    def __init__(self, items: list, spec: Any = None):
        self._items = items
        if spec is not None:
            self._spec_cache = spec

    def _make_iterator(self, epoch):
        return _ListIterator(self._items)

    def cardinality(self):
        return len(self._items)


class FromTensors(ListDataset):
    def __init__(self, tensors):
        super().__init__([_as_arrays(tensors)])

    def _compute_spec(self):
        return spec_of(self._items[0])


class _RangeIterator(_It):
    def __init__(self, start, stop, step, dtype):
        self._next, self._stop, self._step, self._dtype = start, stop, step, dtype
        self._start = start

    def __next__(self):
        v = self._next
        if self._stop is not None and (v >= self._stop if self._step > 0 else v <= self._stop):
            raise StopIteration
        self._next = v + self._step
        return self._dtype.type(v)

    def get_state(self):
        return {"next": self._next}

    def set_state(self, state):
        start, stop, step = self._start, self._stop, self._step
        if step > 0:
            low, high = start, INT64_MAX if stop is None else max(start, stop)
        else:
            low, high = -INT64_MAX - 1 if stop is None else min(start, stop), start
        nxt = state.integer("next", low=low, high=high)
        if (nxt - start) % step:
            raise StateError(f"iterator state: field {state.path}.next = {nxt} is not on this "
                             f"range's grid (start {self._start}, step {self._step})")
        self._next = nxt


class RangeDataset(Dataset):
    def __init__(self, *args, dtype=None):
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) in (2, 3):
            start, stop, step = args[0], args[1], args[2] if len(args) == 3 else 1
        else:
            raise TypeError("range takes 1 to 3 arguments (start, stop, step)")
        if step == 0:
            raise ValueError("range: step must not be zero")
        self._args = (int(start), None if stop is None else int(stop), int(step))
        self._dtype = np.dtype(dtype or np.int64)

    def _make_iterator(self, epoch):
        return _RangeIterator(*self._args, self._dtype)

    def _compute_spec(self):
        return TensorSpec((), self._dtype)

    def cardinality(self):
        start, stop, step = self._args
        if stop is None:
            return INFINITE_CARDINALITY
        return len(range(start, stop, step))


class _GeneratorIterator(_It):
    def __init__(self, ds):
        self._ds, self._count, self._gen = ds, 0, None

    def __next__(self):
        if self._gen is None:
            self._gen = iter(self._ds._generator(*self._ds._args))
        value = next(self._gen)
        self._count += 1
        return self._ds._convert(value, self._count - 1)

    def get_state(self):
        return {"count": self._count}

    def set_state(self, state):
        skip_n(self, state.integer("count"))


class FromGenerator(Dataset):
    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        if not callable(generator):
            raise TypeError("from_generator needs a callable that returns an iterable")
        self._generator = generator
        self._args = tuple(_generator_arg(a) for a in (args or ()))
        if output_signature is not None:
            self._spec = output_signature
        elif output_types is not None:
            shapes = output_shapes
            if shapes is None:
                shapes = map_structure(lambda _: None, output_types)
            types_flat = flatten(output_types)
            # each shape is itself a tuple: split the shapes only as deep as the types
            # (a dict of shapes by key, whatever order its keys were written in)
            shapes_flat = flatten_up_to(output_types, shapes, "from_generator: output_shapes")
            specs = [TensorSpec(None if s is None else tuple(s), np.dtype(t))
                     for t, s in zip(types_flat, shapes_flat)]
            self._spec = pack_as(output_types, specs)
        else:
            self._spec = None
        self._flat_spec = None if self._spec is None else flatten(self._spec)

    def _convert(self, value, index):
        if self._flat_spec is None:
            return _as_arrays(value)
        leaves = _flatten_up_to(self._spec, value, index)
        out = []
        for k, (leaf, spec) in enumerate(zip(leaves, self._flat_spec)):
            arr = np.asarray(leaf, dtype=spec.dtype)
            if spec.shape is not None and not spec.is_compatible_with(arr):
                raise ValueError(
                    f"from_generator: element {index}, component {k} has shape "
                    f"{arr.shape}, not the declared {spec.shape}"
                )
            out.append(arr)
        return pack_as(self._spec, out)

    def _make_iterator(self, epoch):
        return _GeneratorIterator(self)

    def _compute_spec(self):
        if self._spec is None:
            return super()._compute_spec()
        return map_structure(
            lambda s: s if s.shape is not None else TensorSpec(None, s.dtype), self._spec
        )


def _generator_arg(a):
    """An ``args`` value as TensorFlow hands it to the generator: a tensor's numpy value
    (a string as bytes, a Python int as int32, a float as float32, a scalar as a numpy
    scalar)."""
    if isinstance(a, str):
        return a.encode()
    if isinstance(a, bytes):
        return a
    arr = to_array(a)
    return arr[()] if arr.ndim == 0 else arr


def _flatten_up_to(spec, value, index):
    """``value``'s components, split only as deep as the declared ``spec`` (TensorFlow's
    ``flatten_up_to``): with one spec, a yielded tuple or list is one component."""
    if isinstance(spec, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(spec):
            got = (f"{len(value)} components" if isinstance(value, (tuple, list))
                   else f"one {type(value).__name__} value")
            raise ValueError(f"from_generator: element {index} has {got}, the declared "
                             f"output has {len(spec)}")
        return [leaf for s, v in zip(spec, value) for leaf in _flatten_up_to(s, v, index)]
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            what = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise ValueError(f"from_generator: element {index} is {what}, the declared "
                             f"output has keys {sorted(spec)}")
        return [leaf for k in dict_keys(spec) for leaf in _flatten_up_to(spec[k], value[k], index)]
    return [value]


class _ZipIterator(_It):
    def __init__(self, structure, its):
        self._structure, self._its = structure, its

    def __next__(self):
        return pack_as(self._structure, [next(it) for it in self._its])

    def get_state(self):
        return {"children": [it.get_state() for it in self._its]}

    def set_state(self, state):
        for i, (it, st) in enumerate(zip(self._its, state.nodes("children", len(self._its)),
                                          strict=True)):
            if st is None:
                raise StateError(f"iterator state: {state.path}.children[{i}] is null")
            it.set_state(st)


class ZipDataset(Dataset):
    def __init__(self, datasets):
        self._structure = datasets
        self._datasets = flatten(datasets)
        if not all(isinstance(d, Dataset) for d in self._datasets):
            raise TypeError("zip takes datasets (or a tuple/dict of datasets)")

    def _make_iterator(self, epoch):
        return _ZipIterator(self._structure, [d._make_iterator(input_pass(epoch, i, self._datasets))
                                              for i, d in enumerate(self._datasets)])

    def _compute_spec(self):
        return pack_as(self._structure, [d.element_spec for d in self._datasets])

    def cardinality(self):
        """TensorFlow's ZipDatasetOp: unknown if any input's is, else the least finite
        one (infinite if none is). An unknown input may end first, so even a finite input
        (``zip(filtered, range(5))``) does not make the length known."""
        result = INFINITE_CARDINALITY
        for d in self._datasets:
            n = d.cardinality()
            if n == UNKNOWN_CARDINALITY:
                return UNKNOWN_CARDINALITY
            if n != INFINITE_CARDINALITY and (result == INFINITE_CARDINALITY or n < result):
                result = n
        return result


class _ConcatIterator(_It):
    def __init__(self, datasets, epoch):
        self._datasets, self._epoch, self._which = datasets, epoch, 0
        self._it = datasets[0]._make_iterator(epoch)

    def __next__(self):
        while True:
            try:
                return next(self._it)
            except StopIteration:
                if self._which + 1 >= len(self._datasets):
                    raise
                self._which += 1
                self._it = self._datasets[self._which]._make_iterator(
                    input_pass(self._epoch, self._which, self._datasets))

    def get_state(self):
        return {"which": self._which, "child": self._it.get_state()}

    def set_state(self, state):
        self._which = state.integer("which", high=len(self._datasets) - 1)
        self._it = self._datasets[self._which]._make_iterator(
            input_pass(self._epoch, self._which, self._datasets))
        self._it.set_state(state.node("child"))


class ConcatenateDataset(Dataset):
    def __init__(self, first: Dataset, second: Dataset):
        if not isinstance(second, Dataset):
            raise TypeError(f"concatenate: expected a Dataset, got {type(second).__name__}")
        self._datasets = (first, second)
        try:  # checked now, as TensorFlow does; an empty input's spec is only known later
            a, b = first.element_spec, second.element_spec
        except ValueError:
            return
        self._spec_cache = self._merged(a, b)

    def _make_iterator(self, epoch):
        return _ConcatIterator(self._datasets, epoch)

    def _compute_spec(self):
        return self._merged(*(d.element_spec for d in self._datasets))

    @staticmethod
    def _merged(a, b):
        """The spec of both inputs' elements (a size they differ in is None), or a
        ``TypeError`` for elements of another structure or dtype (an int64 range followed
        by int32 slices came out int64 then int32)."""
        if not specs_compatible(a, b):
            raise TypeError(f"concatenate: incompatible dataset elements: {a} vs. {b} (the "
                            "datasets must have the same structure and dtypes)")
        return merge_specs(a, b)

    def cardinality(self):
        a, b = (d.cardinality() for d in self._datasets)
        if INFINITE_CARDINALITY in (a, b):
            return INFINITE_CARDINALITY
        if UNKNOWN_CARDINALITY in (a, b):
            return UNKNOWN_CARDINALITY
        return a + b

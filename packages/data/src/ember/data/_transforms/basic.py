"""Element-wise and positional transformations: map, filter, repeat, take, skip, shard."""

from __future__ import annotations

import sys

import numpy as np

from .._dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from .._index_stream import RepeatStream, ShardStream, SkipStream, TakeStream
from .._iterator import _It


def first_elements(dataset: Dataset, n: int) -> list:
    """Up to the first ``n`` elements of ``dataset`` (an epoch of its own), for the specs
    of transformations that run user code on them."""
    elems: list = []
    if n <= 0:
        return elems
    for x in dataset._make_iterator((0,)):
        elems.append(x)
        if len(elems) == n:
            break
    return elems


def call_unpacked(fn, element):
    """tf.data's convention: a tuple element is passed as positional arguments."""
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        return fn(*element)
    return fn(element)


class _UnaryDataset(Dataset):
    """A transformation of one input dataset."""

    def __init__(self, input_ds: Dataset):
        if not isinstance(input_ds, Dataset):
            raise TypeError(f"expected a Dataset, got {type(input_ds).__name__}")
        self._input = input_ds

    def _compute_spec(self):
        return self._input.element_spec

    def cardinality(self):
        return self._input.cardinality()


class _MapIterator(_It):
    def __init__(self, it, fn):
        self._it, self._fn = it, fn

    def __next__(self):
        return call_unpacked(self._fn, next(self._it))

    def get_state(self):
        return self._it.get_state()

    def set_state(self, state):
        self._it.set_state(state)


def _own_random_stream(fn, probe=False):
    """``fn`` drawing its unseeded random numbers from a stream of its own, where
    ember-core is loaded (looked up in ``sys.modules``, never imported): a generator keyed
    by ``ember.core.random.new_seed()`` when the map is made, so its draws repeat after
    ``set_seed`` and never take numbers from the global stream (a map prefetching in a
    background thread made the program's own draws, a model's initial weights, differ
    from run to run). ``probe``: a throwaway stream for the calls that only learn the
    element spec, so that they draw nothing the map's elements would have drawn."""
    random = getattr(sys.modules.get("ember.core"), "random", None)
    scope = getattr(random, "generator_scope", None)
    if random is None or scope is None:
        return fn
    generator = random.Generator(0 if probe else random.new_seed())

    def in_own_stream(*args, **kwargs):
        with scope(generator):
            return fn(*args, **kwargs)

    return in_own_stream


def _packing_lists(fn):
    """``fn`` with a returned ``list`` made a tuple: TensorFlow's ``map`` packs a list
    returned at the top into a tuple of components (``structured_function``'s
    ``_should_pack``), where ember's elements were the list (batched as one array)."""

    def packing(*args):
        out = fn(*args)
        return tuple(out) if type(out) is list else out

    return packing


class MapDataset(_UnaryDataset):
    def __init__(self, input_ds, fn, num_parallel_calls, deterministic):
        super().__init__(input_ds)
        if not callable(fn):
            raise TypeError("map needs a callable")
        fn = _packing_lists(fn)
        self._user_fn = fn
        fn = _own_random_stream(fn)
        self._fn, self._parallel, self._det = fn, num_parallel_calls, deterministic

    def _make_iterator(self, epoch):
        it = self._input._make_iterator(epoch)
        if self._parallel is None or self._parallel == 1:
            return _MapIterator(it, self._fn)
        from .._parallel_map import ParallelMapIterator

        return ParallelMapIterator(it, self._fn, self._parallel, self._det)

    def _compute_spec(self):
        """The spec of ``fn``'s results on the first two elements, with ``None`` for each
        size in which they differ and for each size that varies with a size the input's
        spec leaves unknown (TensorFlow traces ``fn`` on the input's spec: a size that
        depends on the values, ``np.full(x, x)``, is unknown there; the first element
        alone claimed its own sizes as fixed, and a mapped batch of 32 claimed 32 rows
        where the last batch has fewer). To see which sizes follow the input's unknown
        ones, ``fn`` runs once more, on the first element grown by one along each unknown
        axis (its last entry repeated); a size that cannot be told (``fn`` refuses that
        probe) is ``None`` when it equals an unknown input size. An empty input is probed
        with an element made from its spec (``prototype``), as TensorFlow traces."""
        from .._structure import (
            TensorSpec,
            flatten,
            merge_specs,
            pack_as,
            prototype,
            spec_of,
            specs_compatible,
            to_array,
        )

        elems = first_elements(self._input, 2)
        probe_fn = _own_random_stream(self._user_fn, probe=True)
        if elems:
            in_spec_nested = self._input.element_spec
            out = spec_of(call_unpacked(probe_fn, elems[0]))
        else:
            try:
                in_spec_nested = self._input.element_spec
            except ValueError:
                raise ValueError("element_spec of MapDataset is unknown: the dataset is "
                                 "empty") from None
            try:
                elems = [prototype(in_spec_nested)]
                out = spec_of(call_unpacked(probe_fn, elems[0]))
            except Exception as e:
                raise ValueError(f"element_spec of MapDataset is unknown: the dataset is "
                                 f"empty, and map_func on an element made from the input's "
                                 f"spec gave {type(e).__name__}: {e}") from e
        first = elems[0]
        if len(elems) > 1:
            try:
                other = spec_of(call_unpacked(probe_fn, elems[1]))
            except Exception:  # its error is the iteration's to report
                other = None
            if other is not None and specs_compatible(out, other):
                out = merge_specs(out, other)
        in_spec = flatten(in_spec_nested)
        varying = [(i, d) for i, s in enumerate(in_spec) if getattr(s, "shape", None) is not None
                   for d, n in enumerate(s.shape) if n is None]
        if not varying:
            return out
        leaves = flatten(first)
        sizes = {to_array(leaves[i]).shape[d] for i, d in varying}
        probe_leaves = [to_array(x) for x in leaves]
        for i, d in varying:
            a = probe_leaves[i]
            probe_leaves[i] = np.take(a, [*range(a.shape[d]), a.shape[d] - 1], axis=d)
        try:
            probe = spec_of(call_unpacked(probe_fn, pack_as(first, probe_leaves)))
            grown = [getattr(s, "shape", None) for s in flatten(probe)]
        except Exception:
            grown = None
        specs = flatten(out)
        if grown is not None and len(grown) != len(specs):
            grown = None
        merged = []
        for k, s in enumerate(specs):
            g = None if grown is None else grown[k]
            if not isinstance(s, TensorSpec) or s.shape is None:
                merged.append(s)
                continue
            if g is not None and len(g) != len(s.shape):
                merged.append(TensorSpec(None, s.dtype))
                continue
            dims = tuple(None if n is None or (n in sizes if g is None else g[j] != n) else n
                         for j, n in enumerate(s.shape))
            merged.append(TensorSpec(dims, s.dtype))
        return pack_as(out, merged)


class _FilterIterator(_It):
    def __init__(self, it, pred):
        self._it, self._pred = it, pred

    def __next__(self):
        while True:
            x = next(self._it)
            if bool(call_unpacked(self._pred, x)):
                return x

    def get_state(self):
        return self._it.get_state()

    def set_state(self, state):
        self._it.set_state(state)


class FilterDataset(_UnaryDataset):
    def __init__(self, input_ds, predicate):
        super().__init__(input_ds)
        self._pred = predicate

    def _make_iterator(self, epoch):
        return _FilterIterator(self._input._make_iterator(epoch), self._pred)

    def cardinality(self):
        return UNKNOWN_CARDINALITY if self._input.cardinality() != 0 else 0


class _RepeatIterator(_It):
    def __init__(self, ds, epoch, count):
        self._ds, self._epoch, self._count = ds, epoch, count
        self._rep, self._produced = 0, False
        self._it = ds._make_iterator(epoch + (0,)) if count != 0 else None

    def __next__(self):
        while self._it is not None:
            try:
                x = next(self._it)
            except StopIteration:
                if not self._produced:  # an empty input repeats to nothing
                    self._it = None
                    break
                self._rep += 1
                self._produced = False
                if self._count is not None and 0 <= self._count <= self._rep:
                    self._it = None
                    break
                self._it = self._ds._make_iterator(self._epoch + (self._rep,))
            else:
                self._produced = True
                return x
        raise StopIteration

    def get_state(self):
        child = None if self._it is None else self._it.get_state()
        return {"rep": self._rep, "produced": self._produced, "child": child}

    def set_state(self, state):
        self._rep, self._produced = state.integer("rep"), state.boolean("produced")
        child = state.node("child", optional=True)
        if child is None:
            self._it = None
        else:
            self._it = self._ds._make_iterator(self._epoch + (self._rep,))
            self._it.set_state(child)


class RepeatDataset(_UnaryDataset):
    def __init__(self, input_ds, count):
        super().__init__(input_ds)
        self._count = None if count is None or count < 0 else int(count)

    def _indexed(self):
        up = self._input._indexed()
        if up is None:
            return None
        source, factory = up
        return source, lambda epoch: RepeatStream(factory, tuple(epoch), self._count)

    def _make_iterator(self, epoch):
        return _indexed_or(self, epoch, lambda: _RepeatIterator(self._input, tuple(epoch),
                                                                 self._count))

    def cardinality(self):
        n = self._input.cardinality()
        if self._count == 0 or n == 0:
            return 0
        if self._count is None:
            return INFINITE_CARDINALITY if n != UNKNOWN_CARDINALITY else UNKNOWN_CARDINALITY
        return n * self._count if n >= 0 else n


def _indexed_or(ds, epoch, make_generic):
    indexed = ds._indexed()
    if indexed is None:
        return make_generic()
    from .._index_stream import IndexedElementIterator

    source, make = indexed
    return IndexedElementIterator(source, make(epoch))


class _TakeIterator(_It):
    def __init__(self, it, count):
        self._it, self._count, self._taken = it, count, 0

    def __next__(self):
        if self._count is not None and self._taken >= self._count:
            raise StopIteration
        x = next(self._it)
        self._taken += 1
        return x

    def get_state(self):
        return {"taken": self._taken, "input": self._it.get_state()}

    def set_state(self, state):
        self._taken = state.integer(
            "taken", high=self._count if self._count is not None else 2**63 - 1)
        self._it.set_state(state.node("input"))


class TakeDataset(_UnaryDataset):
    def __init__(self, input_ds, count):
        super().__init__(input_ds)
        self._count = None if count < 0 else int(count)

    def _indexed(self):
        up = self._input._indexed()
        if up is None or self._count is None:
            return up
        source, factory = up
        return source, lambda epoch: TakeStream(factory(epoch), self._count)

    def _make_iterator(self, epoch):
        return _indexed_or(self, epoch, lambda: _TakeIterator(
            self._input._make_iterator(epoch), self._count))

    def cardinality(self):
        n = self._input.cardinality()
        if self._count is None:
            return n
        if n == INFINITE_CARDINALITY:
            return self._count
        return min(n, self._count) if n >= 0 else n


class _SkipIterator(_It):
    def __init__(self, it, count):
        self._it, self._count, self._skipped = it, count, False

    def __next__(self):
        if not self._skipped:
            self._skipped = True
            for _ in range(self._count):
                next(self._it)
        return next(self._it)

    def get_state(self):
        return {"skipped": self._skipped, "input": self._it.get_state()}

    def set_state(self, state):
        self._skipped = state.boolean("skipped")
        self._it.set_state(state.node("input"))


class _EmptyIterator(_It):
    def __next__(self):
        raise StopIteration

    def get_state(self):
        return {}

    def set_state(self, state):
        pass


class SkipDataset(_UnaryDataset):
    """``skip(count)``; a negative count skips everything: TensorFlow's SkipDatasetOp makes
    an empty iterator then, reading nothing (ember skipped 2**62 elements, which never
    ended on an endless input: ``range(3).repeat().skip(-1)``)."""

    def __init__(self, input_ds, count):
        super().__init__(input_ds)
        self._count = int(count)

    def _indexed(self):
        up = self._input._indexed()
        if up is None:
            return None
        source, factory = up
        if self._count < 0:
            return source, lambda epoch: TakeStream(factory(epoch), 0)
        return source, lambda epoch: SkipStream(factory(epoch), self._count)

    def _make_iterator(self, epoch):
        if self._count < 0:
            return _EmptyIterator()
        return _indexed_or(self, epoch, lambda: _SkipIterator(
            self._input._make_iterator(epoch), self._count))

    def cardinality(self):
        n = self._input.cardinality()
        if self._count < 0:
            return 0 if n >= 0 else n
        return max(0, n - self._count) if n >= 0 else n


class _ShardIterator(_It):
    def __init__(self, it, num, index):
        self._it, self._num, self._index, self._pos = it, num, index, 0

    def __next__(self):
        while True:
            x = next(self._it)
            self._pos += 1
            if (self._pos - 1) % self._num == self._index:
                return x

    def get_state(self):
        return {"pos": self._pos, "input": self._it.get_state()}

    def set_state(self, state):
        self._pos = state.integer("pos")
        self._it.set_state(state.node("input"))


class ShardDataset(_UnaryDataset):
    def __init__(self, input_ds, num_shards, index):
        super().__init__(input_ds)
        if num_shards < 1 or not 0 <= index < num_shards:
            raise ValueError(f"shard: need 0 <= index < num_shards, got {index}, {num_shards}")
        self._num, self._index = int(num_shards), int(index)

    def _indexed(self):
        up = self._input._indexed()
        if up is None:
            return None
        source, factory = up
        return source, lambda epoch: ShardStream(factory(epoch), self._num, self._index)

    def _make_iterator(self, epoch):
        return _indexed_or(self, epoch, lambda: _ShardIterator(
            self._input._make_iterator(epoch), self._num, self._index))

    def cardinality(self):
        n = self._input.cardinality()
        if n < 0:
            return n
        return len(range(self._index, n, self._num))

"""The lazy, composable ``Dataset``: each method wraps ``self`` in a small dataset class."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from ._iterator import Iterator

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class _Passes:
    """A count of passes (``iter()`` calls) over a pipeline; see ``Dataset._passes``."""

    __slots__ = ("_lock", "_n")

    def __init__(self) -> None:
        self._n = 0
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            n = self._n
            self._n += 1
            return n

    def skip_past(self, epoch: int) -> None:
        with self._lock:
            self._n = max(self._n, epoch + 1)


_INPUT_TAG = 1 << 40  # above any repeat or interleave index in a pass path


def input_pass(epoch: tuple, i: int, inputs: Any) -> tuple:
    """The pass path of input ``i`` of a dataset made of several (zip, concatenate, the
    selection datasets, ``inputs`` its inputs): the dataset's own, unless an earlier input
    shares this one's count of passes (the same shuffle, given twice: ``zip((d, d))``,
    ``zip((d.map(f), d.map(g)))``), which then takes its own extension. As in TensorFlow,
    where each iterator of one shuffle draws its own order, and two shuffles made alike
    (the same data and seed) give the same orders: ``zip((a, b))`` pairs equal elements."""
    if i == 0:
        return epoch
    mine = inputs[i]._passes()
    if any(inputs[j]._passes() is mine for j in range(i)):
        return (*epoch, _INPUT_TAG + i)
    return epoch


class Dataset:
    """A sequence of elements (numpy arrays, or tuples/dicts of them), built lazily.

    Sources are the static methods (``from_tensor_slices``, ``range``, ...); every
    transformation returns a new ``Dataset``. Iterate with a plain ``for`` loop.

    Examples:
        >>> import numpy as np
        >>> from ember import data
        >>> ds = data.Dataset.from_tensor_slices(np.arange(6)).batch(4)
        >>> [b.tolist() for b in ds]
        [[0, 1, 2, 3], [4, 5]]
    """

    _epochs: _Passes | None = None
    _counts_own_passes = False  # (a shuffle's is its own: see _passes)

    # ----------------------------------------------------------------- protocol
    def _make_iterator(self, epoch: tuple):
        """A fresh internal iterator; ``epoch`` seeds reshuffling (a tuple of ints)."""
        raise NotImplementedError

    def _indexed(self):
        """``(IndexedSource, stream_factory)`` when elements are rows of in-memory arrays.

        Such pipelines (``from_tensor_slices`` then shuffle/repeat/take/skip/shard) run as
        index arithmetic, and ``batch`` gathers each batch with one fancy index.
        """
        return None

    def _compute_spec(self):
        """The spec of a dataset whose elements nothing declares (a generator without an
        output signature): that of its first two elements, with ``None`` for each size in
        which they differ (the first alone claimed its sizes as fixed, where TensorFlow's
        traced spec leaves a size it cannot know unknown)."""
        from ._structure import merge_specs, spec_of, specs_compatible

        it = self._make_iterator((0,))
        try:
            first = next(it)
        except StopIteration:
            raise ValueError(
                f"element_spec of {type(self).__name__} is unknown: the dataset is empty"
            ) from None
        spec = spec_of(first)
        try:
            second = spec_of(next(it))
        except StopIteration:
            return spec
        return merge_specs(spec, second) if specs_compatible(spec, second) else spec

    @property
    def element_spec(self) -> Any:
        """Nested ``TensorSpec`` of each element (shape ``None`` where it varies)."""
        spec = self.__dict__.get("_spec_cache")
        if spec is None:
            spec = self._compute_spec()
            self._spec_cache = spec
        return spec

    def cardinality(self) -> int:
        """Number of elements, or ``INFINITE_CARDINALITY`` / ``UNKNOWN_CARDINALITY``."""
        return UNKNOWN_CARDINALITY

    def __len__(self) -> int:
        n = self.cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("the dataset is infinite, so it has no len()")
        if n < 0:
            raise TypeError("the dataset's length is unknown; use cardinality()")
        return n

    def _passes(self) -> _Passes:
        """The count of passes over this pipeline: a dataset built on one input
        (``ds.take(n)``, ``ds.map(f)``, ``ds.batch(b)``) shares its input's, up to the
        nearest shuffle (which counts its own), so every new pass over any of them
        reshuffles, as TensorFlow's shuffle does for every iterator made over what is
        built on it (``ds.take(n)``, a new dataset each time, began at pass 0 every time:
        the same order every epoch)."""
        passes = self.__dict__.get("_epochs")
        if passes is None:
            inp = None if self._counts_own_passes else self.__dict__.get("_input")
            passes = inp._passes() if isinstance(inp, Dataset) else _Passes()
            self._epochs = passes
        return passes

    def _next_epoch(self) -> int:
        return self._passes().next()

    def _note_epoch(self, epoch: int) -> None:
        """After restoring iteration ``epoch``, later ``iter()`` calls continue past it."""
        self._passes().skip_past(epoch)

    def __iter__(self) -> Iterator:
        return Iterator(self, self._next_epoch())

    def as_numpy_iterator(self) -> Iterator:
        return iter(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cardinality={self.cardinality()}>"

    # ----------------------------------------------------------------- sources
    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """Elements are the slices of ``tensors`` along their first axis (``name``,
        TensorFlow's name of the op, is accepted and not used)."""
        from ._sources import FromTensorSlices

        return FromTensorSlices(tensors)

    @staticmethod
    def from_tensors(tensors: Any) -> Dataset:
        """One element: ``tensors`` itself."""
        from ._sources import FromTensors

        return FromTensors(tensors)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None) -> Dataset:
        """Elements yielded by ``generator(*args)``, converted to the declared dtypes.

        Resuming replays the generator (it must be deterministic to resume exactly).
        """
        from ._sources import FromGenerator

        return FromGenerator(generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def range(*args, dtype=None) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])`` as int64 scalars."""
        from ._sources import RangeDataset

        return RangeDataset(*args, dtype=dtype)

    @staticmethod
    def zip(*datasets) -> Dataset:
        """Elements are tuples (or the given nesting) of the inputs' elements."""
        from ._sources import ZipDataset

        if len(datasets) == 1 and isinstance(datasets[0], (tuple, dict)):
            return ZipDataset(datasets[0])
        return ZipDataset(tuple(datasets))

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True) -> Dataset:
        """Element ``k`` is the next element of ``datasets[c]``, where ``c`` is element ``k``
        of ``choice_dataset`` (integer scalars). When a chosen dataset has ended, the result
        ends (``stop_on_empty_dataset=True``, TensorFlow's default) or skips that choice."""
        from ._select import ChooseFromDatasets

        return ChooseFromDatasets(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None) -> Dataset:
        """Each element is the next element of a dataset drawn at random by ``weights``
        (equal by default). With ``stop_on_empty_dataset=False`` (TensorFlow's default) a
        dataset that ends is left out of later draws, until every one has ended; with True
        the result ends with the first. ``seed`` (else one derived from the global seed)
        makes the draws repeat; ``rerandomize_each_iteration=True`` draws anew for each
        pass (TensorFlow's ``None`` or False: every pass draws the same sequence)."""
        from ._select import SampleFromDatasets

        return SampleFromDatasets(datasets, weights, seed, stop_on_empty_dataset,
                                  rerandomize_each_iteration)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None) -> Dataset:
        """The paths matching ``file_pattern`` (a glob, or a list of them), as strings:
        sorted, then shuffled on every pass unless ``shuffle=False`` (TensorFlow's default
        shuffles). A file that several patterns match is listed once for each, as
        TensorFlow lists it. Raises ``ValueError`` when nothing matches, naming the
        pattern."""
        import glob as _glob

        patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) or \
            hasattr(file_pattern, "__fspath__") else list(file_pattern)
        # every pattern's matches, sorted together: a file two patterns match comes twice,
        # as TensorFlow's MatchingFiles gives it
        files = sorted(f for p in patterns for f in _glob.glob(os.fsdecode(p)))
        if not files:
            raise ValueError(f"list_files: no files matched pattern: {file_pattern}")
        ds = Dataset.from_tensor_slices(np.array(files))
        if shuffle is None or shuffle:
            ds = ds.shuffle(len(files), seed=seed)
        return ds

    def reduce(self, initial_state, reduce_func):
        """``reduce_func(state, element)`` folded over the elements from
        ``initial_state``: the final state (numpy values, as the elements are)."""
        from ._structure import flatten, map_structure, to_array

        state = map_structure(to_array, initial_state)
        kinds = [a.dtype for a in flatten(state)]
        for element in self:
            state = map_structure(to_array, reduce_func(state, element))
            got = [a.dtype for a in flatten(state)]
            if got != kinds:
                raise TypeError(f"reduce: reduce_func returned a state of dtypes "
                                f"{[str(d) for d in got]}; the initial state's are "
                                f"{[str(d) for d in kinds]} (as TensorFlow, they must match)")
        return state

    def get_single_element(self, name: str | None = None) -> Any:
        """The one element of a dataset of one element; ``ValueError`` for a dataset that
        is empty or has more (TensorFlow's ``InvalidArgumentError``: "Dataset was empty.",
        "Dataset had more than one element."). ``name`` is accepted and not used.

        Examples:
            >>> from ember import data
            >>> int(data.Dataset.range(5).batch(5).map(lambda b: b.sum()).get_single_element())
            10
        """
        it = iter(self)
        try:
            element = next(it)
        except StopIteration:
            raise ValueError("get_single_element: the dataset was empty; it must have "
                             "exactly one element") from None
        try:
            next(it)
        except StopIteration:
            return element
        raise ValueError("get_single_element: the dataset had more than one element; it "
                         "must have exactly one")

    def concatenate(self, other: Dataset) -> Dataset:
        """The elements of ``self``, then those of ``other``: both of one structure and
        dtypes (``TypeError`` otherwise, as TensorFlow's "Incompatible dataset
        elements")."""
        from ._sources import ConcatenateDataset

        return ConcatenateDataset(self, other)

    # ----------------------------------------------------------------- transforms
    def map(self, map_func, num_parallel_calls=None, deterministic=True) -> Dataset:
        """Apply ``map_func`` to each element (tuples are unpacked into arguments).

        With ``num_parallel_calls`` (an int, or ``AUTOTUNE``) calls run on a thread pool;
        with ``deterministic=True`` (the default) the output order is the input order.
        A list ``map_func`` returns is a tuple of components, as in TensorFlow.
        """
        from ._transforms.basic import MapDataset

        return MapDataset(self, map_func, num_parallel_calls, deterministic)

    def filter(self, predicate) -> Dataset:
        from ._transforms.basic import FilterDataset

        return FilterDataset(self, predicate)

    def batch(self, batch_size: int, drop_remainder: bool = False) -> Dataset:
        from ._transforms.batching import BatchDataset

        return BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size: int, padded_shapes=None, padding_values=None,
                     drop_remainder: bool = False) -> Dataset:
        """``batch``, each component padded to ``padded_shapes`` (a size None or -1: the
        batch's largest; none given: every varying size the batch's largest) with
        ``padding_values`` (0, False, or the empty string by default; one scalar for every
        component, or one per component). Both nest as the elements do, dicts matched by
        key, and a padding value has its component's dtype (a Python int is int32, a float
        float32), as in TensorFlow.

        Examples:
            >>> import numpy as np
            >>> from ember import data
            >>> ds = data.Dataset.range(1, 4).map(lambda n: np.full(n, n))
            >>> [b.tolist() for b in ds.padded_batch(2, padding_values=np.int64(-1))]
            [[[1, -1], [2, 2]], [[3, 3, 3]]]
            >>> ds.padded_batch(2, padded_shapes=[4]).element_spec
            TensorSpec(shape=(None, 4), dtype=int64)
        """
        from ._transforms.batching import PaddedBatchDataset

        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def unbatch(self) -> Dataset:
        from ._transforms.batching import UnbatchDataset

        return UnbatchDataset(self)

    def shuffle(self, buffer_size: int, seed: int | None = None,
                reshuffle_each_iteration: bool | None = None, name: str | None = None
                ) -> Dataset:
        """A true buffer shuffle: each output is drawn uniformly from a buffer of
        ``buffer_size`` elements, refilled from the input.

        Args:
            buffer_size: how many elements the buffer holds (at least 1).
            seed: the shuffle's seed. None derives one from the global seed
                (``data.set_seed``, which ``ember.core.random.set_seed`` also sets) and
                the count of unseeded shuffles built since, as TensorFlow does; with no
                global seed the order is random.
            reshuffle_each_iteration: a new order on each pass (epoch); None (the default)
                is True, as in TensorFlow.
            name: TensorFlow's name of the op; accepted, not used.
        """
        from ._shuffle import ShuffleDataset

        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return ShuffleDataset(self, buffer_size, seed, reshuffle)

    def repeat(self, count: int | None = None) -> Dataset:
        from ._transforms.basic import RepeatDataset

        return RepeatDataset(self, count)

    def take(self, count: int) -> Dataset:
        from ._transforms.basic import TakeDataset

        return TakeDataset(self, count)

    def skip(self, count: int) -> Dataset:
        from ._transforms.basic import SkipDataset

        return SkipDataset(self, count)

    def shard(self, num_shards: int, index: int) -> Dataset:
        from ._transforms.basic import ShardDataset

        return ShardDataset(self, num_shards, index)

    def enumerate(self, start: int = 0) -> Dataset:
        from ._sources import RangeDataset, ZipDataset

        return ZipDataset((RangeDataset(start, None), self))

    def prefetch(self, buffer_size: int = AUTOTUNE) -> Dataset:
        """Produce up to ``buffer_size`` elements ahead on a background thread."""
        from ._prefetch import PrefetchDataset

        return PrefetchDataset(self, buffer_size)

    def prefetch_to_device(self, device: str, buffer_size: int = 1) -> Dataset:
        """Hand out ember tensors already on ``device``, copied on a background thread.

        Needs ember-core (``pip install ember-core``).
        """
        from ._prefetch import prefetch_to_device

        return prefetch_to_device(device, buffer_size)(self)

    def cache(self, filename: str = "") -> Dataset:
        """Keep elements after the first full pass: in memory, or in ``filename``."""
        from ._cache import CacheDataset

        return CacheDataset(self, filename)

    def interleave(self, map_func, cycle_length=None, block_length=1,
                   num_parallel_calls=None, deterministic=True) -> Dataset:
        """Map each element to a dataset and interleave ``cycle_length`` of them
        (default: the cores this process may use), ``block_length`` elements at a time.

        With ``num_parallel_calls`` (an int, or ``AUTOTUNE``) the open datasets are made
        and read ahead on a thread pool, at most that many at once; the order of the
        elements is the sequential one either way (``deterministic`` is accepted for
        TensorFlow and changes nothing: ember's order is always deterministic)."""
        from ._transforms.interleave import InterleaveDataset

        if not isinstance(deterministic, bool) and deterministic is not None:
            raise TypeError(f"interleave: deterministic must be a bool or None, got "
                            f"{deterministic!r}")
        return InterleaveDataset(self, map_func, cycle_length, block_length,
                                 num_parallel_calls)

    def flat_map(self, map_func) -> Dataset:
        from ._transforms.interleave import InterleaveDataset

        return InterleaveDataset(self, map_func, 1, 1)

    def window(self, size: int, shift: int | None = None, stride: int = 1,
               drop_remainder: bool = False) -> Dataset:
        """Elements are small datasets of ``size`` consecutive elements (see ``flat_map``);
        for elements that are tuples or dicts, tuples or dicts of such datasets, one per
        component, as TensorFlow's (``window(2).flat_map(lambda a, b: ...)``)."""
        from ._transforms.window import WindowDataset

        return WindowDataset(self, size, shift, stride, drop_remainder)

    def apply(self, transformation_func) -> Dataset:
        return transformation_func(self)

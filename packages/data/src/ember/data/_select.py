"""Datasets that pick each element from one of several datasets: TensorFlow's
``choose_from_datasets`` (by the indices of a choice dataset) and ``sample_from_datasets``
(at random, by weights).

Both resume exactly: the iterator state holds each input's state, which inputs have ended,
and the choice iterator's state (the number of draws, for sampling: the draws are replayed
from the seed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, input_pass
from ._iterator import _It
from ._seed import op_seed
from ._shuffle import epoch_rng
from ._state import StateError
from ._structure import TensorSpec, merge_specs, specs_compatible


def _check_datasets(what: str, datasets: Any) -> tuple[Dataset, ...]:
    datasets = tuple(datasets)
    if not datasets:
        raise ValueError(f"{what}: give at least one dataset")
    for i, d in enumerate(datasets):
        if not isinstance(d, Dataset):
            raise TypeError(f"{what}: datasets[{i}] is a {type(d).__name__}, not a Dataset")
    return datasets


def _common_spec(what: str, datasets: tuple[Dataset, ...]) -> Any:
    first = datasets[0].element_spec
    merged = first
    for i, d in enumerate(datasets[1:], 1):
        spec = d.element_spec
        if not specs_compatible(first, spec):
            raise TypeError(f"{what}: datasets[{i}]'s elements ({spec}) differ in "
                            f"structure or dtype from datasets[0]'s ({first})")
        merged = merge_specs(merged, spec)  # a size they differ in is None
    return merged


class _SelectIterator(_It):
    """The inputs' elements in the order a chooser gives (``_choice``), skipping or stopping
    at an input that has ended."""

    def __init__(self, datasets: tuple[Dataset, ...], epoch: Any, stop_on_empty: bool) -> None:
        self._datasets, self._epoch, self._stop = datasets, epoch, stop_on_empty
        self._its = [d._make_iterator(input_pass(epoch, i, datasets))
                     for i, d in enumerate(datasets)]
        self._ended = [False] * len(datasets)

    def _choice(self) -> int | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __next__(self) -> Any:
        while True:
            if all(self._ended):
                raise StopIteration
            i = self._choice()
            if i is None:
                raise StopIteration
            try:
                return next(self._its[i])
            except StopIteration:
                self._ended[i] = True
                if self._stop:
                    raise

    def get_state(self) -> Any:
        return {"inputs": [it.get_state() for it in self._its], "ended": list(self._ended)}

    def set_state(self, state: Any) -> None:
        n = len(self._datasets)
        children = state.nodes("inputs", n)
        ended = state["ended"]
        if not isinstance(ended, list) or len(ended) != n or \
                any(type(e) is not bool for e in ended):
            raise StateError(f"iterator state: field 'ended' must be a list of {n} bools")
        its = [d._make_iterator(input_pass(self._epoch, i, self._datasets))
               for i, d in enumerate(self._datasets)]
        for it, child in zip(its, children):
            if child is not None:
                it.set_state(child)
        self._its, self._ended = its, list(ended)


class _ChooseIterator(_SelectIterator):
    def __init__(self, datasets: tuple[Dataset, ...], choices: Dataset, epoch: Any,
                 stop_on_empty: bool) -> None:
        super().__init__(datasets, epoch, stop_on_empty)
        self._choices_ds = choices
        self._choices = choices._make_iterator(epoch)

    def _choice(self) -> int | None:
        while True:
            try:
                c = next(self._choices)
            except StopIteration:
                return None
            i = int(np.asarray(c))
            if not 0 <= i < len(self._datasets):
                raise ValueError(f"choose_from_datasets: the choice dataset gave {i}, outside "
                                 f"[0, {len(self._datasets)}) for {len(self._datasets)} "
                                 "datasets")
            if not self._ended[i] or self._stop:
                return i

    def get_state(self) -> Any:
        return {**super().get_state(), "choices": self._choices.get_state()}

    def set_state(self, state: Any) -> None:
        super().set_state(state)
        it = self._choices_ds._make_iterator(self._epoch)
        it.set_state(state.node("choices"))
        self._choices = it


class _SampleIterator(_SelectIterator):
    def __init__(self, datasets: tuple[Dataset, ...], weights: np.ndarray, seed: int,
                 epoch: Any, stop_on_empty: bool, rerandomize: bool) -> None:
        super().__init__(datasets, epoch, stop_on_empty)
        self._weights, self._seed = weights, seed
        self._key = tuple(epoch) if rerandomize else ()
        self._rng = epoch_rng(seed, self._key)
        self._draws = 0

    def _choice(self) -> int | None:
        w = np.where(self._ended, 0.0, self._weights)
        total = w.sum()
        if total <= 0:
            return None
        u = self._rng.random() * total
        self._draws += 1
        return min(int(np.searchsorted(np.cumsum(w), u, side="right")), len(w) - 1)

    def get_state(self) -> Any:
        return {**super().get_state(), "draws": self._draws}

    def set_state(self, state: Any) -> None:
        draws = state.integer("draws")
        super().set_state(state)
        rng = epoch_rng(self._seed, self._key)
        for start in range(0, draws, 1 << 20):  # the draws made so far, replayed
            rng.random(min(1 << 20, draws - start))
        self._rng, self._draws = rng, draws


class ChooseFromDatasets(Dataset):
    def __init__(self, datasets: Any, choice_dataset: Any, stop_on_empty_dataset: bool):
        self._datasets = _check_datasets("choose_from_datasets", datasets)
        if not isinstance(choice_dataset, Dataset):
            raise TypeError("choose_from_datasets: choice_dataset must be a Dataset, got "
                            f"{type(choice_dataset).__name__}")
        spec = choice_dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.shape != () or \
                np.dtype(spec.dtype).kind not in "iu":
            raise TypeError("choose_from_datasets: choice_dataset's elements must be integer "
                            f"scalars, got {spec}")
        self._choices = choice_dataset
        self._stop = bool(stop_on_empty_dataset)
        self._spec_cache = _common_spec("choose_from_datasets", self._datasets)  # checked now

    def _make_iterator(self, epoch: Any) -> _It:
        return _ChooseIterator(self._datasets, self._choices, epoch, self._stop)

    def _compute_spec(self) -> Any:
        return _common_spec("choose_from_datasets", self._datasets)

    def cardinality(self) -> int:
        return UNKNOWN_CARDINALITY


class SampleFromDatasets(Dataset):
    def __init__(self, datasets: Any, weights: Any, seed: int | None,
                 stop_on_empty_dataset: bool, rerandomize_each_iteration: bool | None):
        self._datasets = _check_datasets("sample_from_datasets", datasets)
        n = len(self._datasets)
        w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, np.float64)
        if w.shape != (n,):
            raise ValueError(f"sample_from_datasets: weights must have one entry per dataset "
                             f"({n}), got shape {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("sample_from_datasets: weights must be finite, non-negative and "
                             f"not all zero, got {w.tolist()}")
        self._weights = w / w.sum()
        self._seed = op_seed(seed)
        self._stop = bool(stop_on_empty_dataset)
        self._rerandomize = bool(rerandomize_each_iteration)
        self._spec_cache = _common_spec("sample_from_datasets", self._datasets)  # checked now

    def _make_iterator(self, epoch: Any) -> _It:
        return _SampleIterator(self._datasets, self._weights, self._seed, epoch, self._stop,
                               self._rerandomize)

    def _compute_spec(self) -> Any:
        return _common_spec("sample_from_datasets", self._datasets)

    def cardinality(self) -> int:
        cards = [d.cardinality() for d in self._datasets]
        live = [c for c, w in zip(cards, self._weights) if w > 0]
        if live and all(c == INFINITE_CARDINALITY for c in live):
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY

"""Shared fixtures: a clean summary context per test, and TensorBoard-side readers."""

from __future__ import annotations

import contextlib
import os
import types
from typing import Any

import numpy as np
import pytest

from ember.summary import _context


@pytest.fixture(autouse=True)
def clean_context():
    """Each test starts with no default writer, no step and the default policy."""
    tokens = [(var, var.set(None)) for var in
              (_context.default_writer, _context.record_condition, _context.default_step)]
    yield
    for var, token in reversed(tokens):
        with contextlib.suppress(ValueError):  # a test may have run in another context
            var.reset(token)


class FakeTensor:
    """A duck-typed tensor: only ``__array__`` (and ``shape``), like an ember tensor."""

    def __init__(self, value: Any) -> None:
        self._value = np.asarray(value)
        self.shape = self._value.shape

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self._value if dtype is None else self._value.astype(dtype)

    def __getitem__(self, index: Any) -> FakeTensor:
        return FakeTensor(self._value[index])


class FakeStep:
    """A duck-typed step variable: read with ``int()`` at write time."""

    def __init__(self, value: int = 0) -> None:
        self.value = value

    def __int__(self) -> int:
        return self.value

    def assign_add(self, n: int) -> None:
        self.value += n


def event_files(logdir: str | os.PathLike[str]) -> list[str]:
    return sorted(os.path.join(logdir, f) for f in os.listdir(logdir)
                  if f.startswith("events.out.tfevents."))


def accumulator(path: str | os.PathLike[str]) -> Any:
    """TensorBoard's own EventAccumulator over ``path``, with nothing sampled away."""
    from tensorboard.backend.event_processing import event_accumulator as ea

    acc = ea.EventAccumulator(
        os.fspath(path),
        size_guidance={ea.SCALARS: 0, ea.TENSORS: 0, ea.IMAGES: 0, ea.AUDIO: 0,
                       ea.HISTOGRAMS: 0, ea.COMPRESSED_HISTOGRAMS: 0})
    acc.Reload()
    return acc


def data_provider(logdir: str | os.PathLike[str]) -> Any:
    """TensorBoard's data provider (what its dashboards read) over a log directory."""
    from tensorboard.backend.event_processing import data_provider as dp
    from tensorboard.backend.event_processing import plugin_event_multiplexer as pem

    mux = pem.EventMultiplexer(tensor_size_guidance={"scalars": 0, "histograms": 0,
                                                     "images": 0, "text": 0, "audio": 0})
    mux.AddRunsFromDirectory(os.fspath(logdir))
    mux.Reload()
    return dp.MultiplexerDataProvider(mux, os.fspath(logdir))


def request_context() -> Any:
    from tensorboard import context

    return context.RequestContext()


@pytest.fixture
def fake_tensor() -> type[FakeTensor]:
    return FakeTensor


@pytest.fixture
def fake_step() -> type[FakeStep]:
    return FakeStep


@pytest.fixture
def tb() -> types.SimpleNamespace:
    """TensorBoard's readers (skips the test if TensorBoard is not installed)."""
    pytest.importorskip("tensorboard")
    return types.SimpleNamespace(accumulator=accumulator, data_provider=data_provider,
                                 ctx=request_context, event_files=event_files)

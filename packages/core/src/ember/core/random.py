"""Random numbers: a seedable global generator and Generator objects with saveable state.

``set_seed(n)`` makes a program repeatable. Numbers are drawn on the host with numpy's
PCG64 and placed on the current device, so a seed gives the same values on CPU and GPU.
An op-level ``seed=`` gives a reproducible sequence of its own (as in TensorFlow).

Examples:
    >>> import ember.core as em
    >>> em.random.set_seed(0)
    >>> a = em.random.normal([2])
    >>> em.random.set_seed(0)
    >>> bool(em.reduce_all(a == em.random.normal([2])))
    True
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

from . import _dtypes, _registry
from ._device import current_device, device
from ._errors import InvalidArgumentError
from ._ops import _args
from ._ops.array import gather
from ._ops.math import add, multiply
from ._ops.random import (
    _CATEGORICAL,
    _NORMAL,
    _PERMUTATION,
    _TRUNCATED,
    _UNIFORM,
    _UNIFORM_INT,
)

__all__ = ["Generator", "categorical", "get_global_generator", "get_global_seed", "normal",
           "set_seed", "shuffle", "truncated_normal", "uniform"]


class Generator:
    """An independent stream of random numbers whose state can be saved and restored.

    Takes part in ember checkpoints through ``__checkpoint_state__``.
    """

    def __init__(self, seed: Any = None) -> None:
        self._rng = np.random.Generator(np.random.PCG64(seed))
        self._lock = threading.Lock()

    @classmethod
    def from_seed(cls, seed: int) -> Generator:
        return cls(seed)

    # --- state -----------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        """The generator's state as plain JSON-able data."""
        return self._rng.bit_generator.state

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        self._rng.bit_generator.state = value

    def __checkpoint_state__(self) -> dict[str, Any]:
        return self.state

    def __checkpoint_restore_state__(self, state: dict[str, Any]) -> None:
        self.state = state

    # --- sampling --------------------------------------------------------------------
    # Each sampler is a registered op with no tensor inputs whose forward draws from this
    # generator: graph mode replays the op, so every call draws new numbers (and a seeded
    # generator still repeats its sequence).
    def _host(self, fn: Any) -> np.ndarray:
        with self._lock:
            return fn(self._rng)

    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = np.float32) -> Any:
        dt = _float("normal", dtype)
        s = _args.shape("normal", shape)
        return _scaled(_sample(_NORMAL, self, shape=s, dtype=dt), mean, stddev, 0.0, 1.0)

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None,
                dtype: Any = np.float32) -> Any:
        dt = _dtypes.as_dtype(dtype)
        s = _args.shape("uniform", shape)
        if dt.kind in "iu":
            if maxval is None:
                raise InvalidArgumentError(f"uniform: maxval is required for integer dtype {dt}")
            if int(maxval) <= int(minval):
                raise InvalidArgumentError(f"uniform: need minval < maxval, got {minval}, {maxval}")
            return _sample(_UNIFORM_INT, self, shape=s, dtype=dt, low=int(minval),
                           high=int(maxval))
        _float("uniform", dt)
        hi = 1.0 if maxval is None else maxval
        if _is_number(minval) and _is_number(hi):
            return _scaled(_sample(_UNIFORM, self, shape=s, dtype=dt), minval, hi - minval,
                           0.0, 1.0)
        return _scaled(_sample(_UNIFORM, self, shape=s, dtype=dt), minval, hi - minval)

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                         dtype: Any = np.float32) -> Any:
        """Normal samples redrawn until they fall within two standard deviations."""
        dt = _float("truncated_normal", dtype)
        s = _args.shape("truncated_normal", shape)
        return _scaled(_sample(_TRUNCATED, self, shape=s, dtype=dt), mean, stddev, 0.0, 1.0)

    def categorical(self, logits: Any, num_samples: int, dtype: Any = np.int64) -> Any:
        """Samples of class indices from unnormalised log-probabilities (batch, classes)."""
        lg = _args.tensor(logits)
        if lg.ndim != 2:
            raise InvalidArgumentError(f"categorical: logits must be (batch, classes), "
                                       f"got shape {lg.shape}")
        return _registry.execute(_CATEGORICAL, (lg,), {
            "generator": self, "num_samples": int(num_samples),
            "dtype": _dtypes.as_dtype(dtype), "index": lg._device.index})

    def shuffle(self, value: Any) -> Any:
        """``value`` with its first axis randomly permuted."""
        t = _args.tensor(value)
        with device(t._device):
            perm = _sample(_PERMUTATION, self, n=t.shape[0])
        return gather(t, perm)


def _is_number(x: Any) -> bool:
    return type(x) in (int, float) or isinstance(x, np.number)


def _scaled(sample: Any, shift: Any, scale: Any, no_shift: Any = None,
            no_scale: Any = None) -> Any:
    """``sample * scale + shift`` with ops (skipping a scale of 1 and a shift of 0), so
    tensor-valued parameters stay part of the computation."""
    if not (_is_number(scale) and scale == no_scale):
        sample = multiply(sample, scale)
    if not (_is_number(shift) and shift == no_shift):
        sample = add(sample, shift)
    return sample


def _sample(op: Any, gen: Generator, **attrs: Any) -> Any:
    attrs["generator"] = gen
    attrs["index"] = current_device().index
    return _registry.execute(op, (), attrs)


def _float(op: str, dtype: Any) -> np.dtype:
    dt = _dtypes.as_dtype(dtype)
    if not _dtypes.is_floating(dt):
        raise InvalidArgumentError(f"{op}: dtype must be floating, got {dt}")
    return dt


class _GlobalState:
    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self.generator = Generator(seed)
        self.op_generators: dict[Any, Generator] = {}


_global = _GlobalState(None)


def set_seed(seed: int) -> None:
    """Seed the global generator (and the op-level seed streams): a repeatable program.

    Also sets ``ember.data``'s global seed (its unseeded shuffles) if ember.data is
    imported; ember.data imported later adopts it through ``get_global_seed``.
    """
    global _global
    _global = _GlobalState(int(seed))
    data_set_seed = getattr(sys.modules.get("ember.data"), "set_seed", None)
    if callable(data_set_seed):
        data_set_seed(int(seed))


def get_global_seed() -> int | None:
    """The seed given to ``set_seed``, or None if it was never called."""
    return _global.seed


def get_global_generator() -> Generator:
    return _global.generator


def _gen(seed: Any) -> Generator:
    if seed is None:
        return _global.generator
    g = _global.op_generators.get(seed)
    if g is None:
        g = _global.op_generators[seed] = Generator([int(_global.seed or 0), int(seed)])
    return g


class _Stream(Generator):
    """The global stream (``seed`` None) or an op-level seeded stream, looked up each time
    it draws: a traced function (ember-graph) replays its random ops through this, so
    ``set_seed`` reseeds it as it reseeds eager code."""

    def __init__(self, seed: Any) -> None:  # no state of its own
        self.seed = seed

    def _host(self, fn: Any) -> np.ndarray:
        return _gen(self.seed)._host(fn)

    @property  # type: ignore[override]
    def state(self) -> dict[str, Any]:
        return _gen(self.seed).state

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        _gen(self.seed).state = value

    def __checkpoint_state__(self) -> dict[str, Any]:
        raise TypeError("the global random stream is not a checkpointable object; save "
                        "em.random.get_global_generator() instead")


_STREAMS: dict[Any, _Stream] = {}


def _stream(seed: Any) -> _Stream:
    s = _STREAMS.get(seed)
    if s is None:
        s = _STREAMS[seed] = _Stream(seed)
    return s


def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = np.float32,
           seed: Any = None, name: str | None = None) -> Any:
    """Samples from a normal distribution."""
    return _stream(seed).normal(shape, mean, stddev, dtype)


def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = np.float32,
            seed: Any = None, name: str | None = None) -> Any:
    """Uniform samples in [minval, maxval) (maxval defaults to 1 for floats)."""
    return _stream(seed).uniform(shape, minval, maxval, dtype)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = np.float32,
                     seed: Any = None, name: str | None = None) -> Any:
    """Normal samples within two standard deviations of the mean."""
    return _stream(seed).truncated_normal(shape, mean, stddev, dtype)


def categorical(logits: Any, num_samples: int, dtype: Any = np.int64, seed: Any = None,
                name: str | None = None) -> Any:
    """Class indices sampled from ``logits`` of shape (batch, classes)."""
    return _stream(seed).categorical(logits, num_samples, dtype)


def shuffle(value: Any, seed: Any = None, name: str | None = None) -> Any:
    """``value`` randomly permuted along its first axis."""
    return _stream(seed).shuffle(value)

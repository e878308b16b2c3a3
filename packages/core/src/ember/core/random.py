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

from . import _dtypes
from ._errors import InvalidArgumentError
from ._ops import _args
from ._ops.creation import convert_to_tensor

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
    def _host(self, fn: Any) -> np.ndarray:
        with self._lock:
            return fn(self._rng)

    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = np.float32) -> Any:
        dt = _float("normal", dtype)
        s = _args.shape("normal", shape)
        a = self._host(lambda g: g.standard_normal(s, dtype=_gen_dtype(dt)))
        return convert_to_tensor((a * stddev + mean).astype(dt, copy=False))

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None,
                dtype: Any = np.float32) -> Any:
        dt = _dtypes.as_dtype(dtype)
        s = _args.shape("uniform", shape)
        if dt.kind in "iu":
            if maxval is None:
                raise InvalidArgumentError(f"uniform: maxval is required for integer dtype {dt}")
            if int(maxval) <= int(minval):
                raise InvalidArgumentError(f"uniform: need minval < maxval, got {minval}, {maxval}")
            a = self._host(lambda g: g.integers(int(minval), int(maxval), s, dtype=dt))
            return convert_to_tensor(a)
        _float("uniform", dt)
        hi = 1.0 if maxval is None else maxval
        a = self._host(lambda g: g.random(s, dtype=_gen_dtype(dt)))
        return convert_to_tensor((a * (hi - minval) + minval).astype(dt, copy=False))

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                         dtype: Any = np.float32) -> Any:
        """Normal samples redrawn until they fall within two standard deviations."""
        dt = _float("truncated_normal", dtype)
        s = _args.shape("truncated_normal", shape)

        def draw(g: np.random.Generator) -> np.ndarray:
            a = g.standard_normal(s)
            bad = np.abs(a) > 2
            while bad.any():
                a[bad] = g.standard_normal(int(bad.sum()))
                bad = np.abs(a) > 2
            return a

        return convert_to_tensor((self._host(draw) * stddev + mean).astype(dt))

    def categorical(self, logits: Any, num_samples: int, dtype: Any = np.int64) -> Any:
        """Samples of class indices from unnormalised log-probabilities (batch, classes)."""
        lg = np.asarray(logits, dtype=np.float64)
        if lg.ndim != 2:
            raise InvalidArgumentError(f"categorical: logits must be (batch, classes), "
                                       f"got shape {lg.shape}")
        p = np.exp(lg - lg.max(axis=1, keepdims=True))
        cdf = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
        u = self._host(lambda g: g.random((lg.shape[0], int(num_samples))))
        idx = np.minimum((u[:, :, None] > cdf[:, None, :]).sum(-1), lg.shape[1] - 1)
        return convert_to_tensor(idx.astype(dtype))

    def shuffle(self, value: Any) -> Any:
        """``value`` with its first axis randomly permuted."""
        t = _args.tensor(value)
        perm = self._host(lambda g: g.permutation(t.shape[0]))
        from ._ops.array import gather

        return gather(t, convert_to_tensor(perm, device=t._device))


def _float(op: str, dtype: Any) -> np.dtype:
    dt = _dtypes.as_dtype(dtype)
    if not _dtypes.is_floating(dt):
        raise InvalidArgumentError(f"{op}: dtype must be floating, got {dt}")
    return dt


def _gen_dtype(dt: np.dtype) -> Any:
    return dt if dt in (np.float32, np.float64) else np.float32


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


def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = np.float32,
           seed: Any = None, name: str | None = None) -> Any:
    """Samples from a normal distribution."""
    return _gen(seed).normal(shape, mean, stddev, dtype)


def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = np.float32,
            seed: Any = None, name: str | None = None) -> Any:
    """Uniform samples in [minval, maxval) (maxval defaults to 1 for floats)."""
    return _gen(seed).uniform(shape, minval, maxval, dtype)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = np.float32,
                     seed: Any = None, name: str | None = None) -> Any:
    """Normal samples within two standard deviations of the mean."""
    return _gen(seed).truncated_normal(shape, mean, stddev, dtype)


def categorical(logits: Any, num_samples: int, dtype: Any = np.int64, seed: Any = None,
                name: str | None = None) -> Any:
    """Class indices sampled from ``logits`` of shape (batch, classes)."""
    return _gen(seed).categorical(logits, num_samples, dtype)


def shuffle(value: Any, seed: Any = None, name: str | None = None) -> Any:
    """``value`` randomly permuted along its first axis."""
    return _gen(seed).shuffle(value)

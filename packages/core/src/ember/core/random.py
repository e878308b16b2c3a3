"""Random numbers: a seedable global generator and Generator objects with saveable state.

``set_seed(n)`` makes a program repeatable. Numbers come from Philox4x32-10 (the
counter-based generator of cuRAND, PyTorch and JAX; ``_philox``), drawn where they are
used: in numpy on the CPU, in one CUDA kernel on a GPU (``_philox_cuda``; no cuRAND, no
host transfer, capturable in a CUDA graph), with the same bits, so a seed gives the same
values on CPU and GPU. A generator's state is its key, stream and next block; on a GPU it
lives there and the draw's kernels advance it. An op-level ``seed=`` gives a reproducible
sequence of its own (as in TensorFlow).

Examples:
    >>> import ember.core as em
    >>> em.random.set_seed(0)
    >>> a = em.random.normal([2])
    >>> em.random.set_seed(0)
    >>> bool(em.reduce_all(a == em.random.normal([2])))
    True
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np

from . import _dtypes, _philox, _philox_cuda, _random_gamma, _registry, recording
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

__all__ = ["STATE_FORMAT", "Generator", "categorical", "checked_state", "fold_in", "gamma",
           "generator_scope", "get_global_generator", "get_global_seed", "new_seed", "normal",
           "set_seed",
           "shuffle", "split", "stateless_categorical", "stateless_normal",
           "stateless_truncated_normal", "stateless_uniform", "truncated_normal", "uniform"]


STATE_FORMAT = "Philox4x32-10"
_OP_KEY_TWEAK = 0x9E3779B97F4A7C15  # op-level streams' keys differ from Generator(seed)'s
_SEEDS_KEY_TWEAK = 0xC2B2AE3D27D4EB4F  # and new_seed's stream differs from both


def _seed_key(seed: Any) -> int:
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InvalidArgumentError(f"random.Generator: seed must be an int or None, got "
                                   f"{type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed < 1 << 64:
        raise InvalidArgumentError(f"random.Generator: seed {seed} is outside the 64-bit key "
                                   "range [-2**63, 2**64)")
    return seed & _philox.MASK64


class Generator:
    """An independent stream of random numbers whose state can be saved and restored.

    Philox4x32-10 keyed by ``seed`` (see the module). Takes part in ember checkpoints
    through ``__checkpoint_state__``.
    """

    def __init__(self, seed: Any = None) -> None:
        self._reset(_seed_key(seed), 0, 0)

    def _reset(self, key: int, stream: int, counter: int) -> None:
        self._lock = threading.Lock()
        self._cpu = np.array([key, counter, stream], np.uint64)  # [key, next block, stream]
        # (backend, index, state) on a GPU. The array is kept for the generator's life
        # there (a host draw or a new state writes into it when the state next goes
        # back): a captured CUDA graph reads and advances it at its fixed address.
        self._dev: tuple[Any, int, Any] | None = None
        self._host_holds = True  # whether _cpu, not the device array, holds the state

    def _set(self, key: int, stream: int, counter: int) -> None:
        """A new state, in place (the device array stays the one a graph reads)."""
        with self._lock:
            self._cpu = np.array([key, counter, stream], np.uint64)
            self._host_holds = True

    @classmethod
    def from_seed(cls, seed: int, alg: Any = None) -> Generator:
        """A generator keyed by ``seed``; ``alg`` (TensorFlow's) may name Philox, ember's
        one algorithm (``"philox"``, ``1``, ``"auto_select"`` or None)."""
        _check_alg("Generator.from_seed", alg)
        return cls(seed)

    @property
    def algorithm(self) -> int:
        """TensorFlow's ``Algorithm.PHILOX`` (1): ember's one algorithm."""
        return 1

    def make_seeds(self, count: int = 1) -> Any:
        """Seeds for the ``stateless_*`` functions, drawn from this generator: an int64
        tensor of shape ``[2, count]`` (TensorFlow's: full-range keys over zeros), each
        column one seed."""
        keys = self.uniform([int(count)], -(1 << 63), 1 << 63, np.int64)
        return _stack_keys(keys)

    def split(self, count: int = 1) -> list[Generator]:
        """``count`` new generators keyed by draws of this one (TensorFlow's ``split``):
        independent of each other and of this one, which advances."""
        keys = self.uniform([int(count)], -(1 << 63), 1 << 63, np.int64).numpy()
        return [Generator(int(k)) for k in keys]

    @classmethod
    def _op_stream(cls, global_seed: int, op_seed: Any) -> Generator:
        g = cls.__new__(cls)
        g._reset(_seed_key(global_seed) ^ _OP_KEY_TWEAK, _seed_key(op_seed), 0)
        return g

    # --- state -----------------------------------------------------------------------
    def _host_state(self) -> np.ndarray:
        """The state on the host (read back from its GPU: one synchronization)."""
        if self._host_holds or self._dev is None:
            return self._cpu
        be, _, arr = self._dev
        return np.asarray(be.to_host(arr), np.uint64)

    def _pull(self) -> np.ndarray:
        if not self._host_holds:
            self._cpu = self._host_state().copy()
            self._host_holds = True
        return self._cpu

    def _on(self, be: Any, index: int) -> Any:
        """The state on GPU ``index`` of ``be`` (moved there if it lives elsewhere; back
        into the same array when it was there before)."""
        dev = self._dev
        if dev is not None and dev[0] is be and dev[1] == index:
            if self._host_holds:
                ctx = be.activate(index)
                with ctx if ctx is not None else _nothing():
                    be.xp.copyto(dev[2], be.from_host(self._cpu.copy(), index))
                self._host_holds = False
            return dev[2]
        host = self._pull()
        self._dev = (be, index, be.from_host(host.copy(), index))
        self._host_holds = False
        return self._dev[2]

    def _target(self) -> Generator:
        """The generator that draws (the global streams look theirs up)."""
        return self

    def _device_state(self, be: Any, index: int) -> Any:
        """The uint64 [key, next block, stream] array on GPU ``index`` of ``be`` that a
        draw there reads and advances (a CUDA graph capturing a draw reads it)."""
        with self._lock:
            return self._on(be, index)

    def _adopt(self, be: Any, index: int, state: Any) -> None:
        """Make ``state`` (on GPU ``index`` of ``be``, holding this generator's state)
        the array its draws there read: a captured graph's, whose address is fixed."""
        with self._lock:
            self._dev = (be, index, state)
            self._host_holds = False

    @property
    def state(self) -> dict[str, Any]:
        """The generator's state as plain JSON-able data: ``bit_generator``
        (``"Philox4x32-10"``), ``key``, ``stream`` and ``counter`` (the next block).

        Python numbers read on the host: a ``graph.function`` that reads them is not
        replayed (a replay would return the traced call's state)."""
        recording.notify_host_input("a random Generator's state")
        with self._lock:
            key, counter, stream = (int(v) for v in self._host_state())
        return {"bit_generator": STATE_FORMAT, "key": key, "stream": stream,
                "counter": counter}

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        key, stream, counter = checked_state(value)
        self._set(key, stream, counter)

    def __checkpoint_state__(self) -> dict[str, Any]:
        return self.state

    def __checkpoint_restore_state__(self, state: dict[str, Any]) -> None:
        self.state = state

    # --- sampling --------------------------------------------------------------------
    # Each sampler is a registered op with no tensor inputs whose forward draws from this
    # generator: graph mode replays the op, so every call draws new numbers (and a seeded
    # generator still repeats its sequence).
    def _draw(self, be: Any, index: int, kind: str, shape: Any, dtype: Any, low: int = 0,
              span: int = 0) -> Any:
        """``kind`` ("uniform", "normal", "truncated", "int") of ``shape`` and ``dtype`` on
        ``be``'s device ``index``: numpy's Philox on the CPU, the kernel on a GPU."""
        dt = np.dtype(dtype)
        shape = tuple(int(d) for d in shape)
        n = math.prod(shape)
        wide = "64" if dt == np.float64 else "32"
        block_kind = "int" if kind == "int" else kind + wide
        gen_dt = dt if dt in (np.float64, np.float32) or kind == "int" else np.dtype(np.float32)
        bits = _philox.float_bits(dt)
        with self._lock:
            if be.name == "numpy":
                st = self._pull()
                key, ctr, stream = (int(v) for v in st)
                if kind == "int":
                    a = _philox.integers(key, stream, ctr, n, low, span, dt)
                elif kind == "uniform":
                    a = _philox.uniform(key, stream, ctr, n, dt)
                elif kind == "normal":
                    a = _philox.normal(key, stream, ctr, n, gen_dt)
                else:
                    a = _philox.truncated_normal(key, stream, ctr, n, gen_dt)
                st[1] = (ctr + _philox.blocks_for(block_kind, n)) & _philox.MASK64
                return a.reshape(shape).astype(dt, copy=False)
            state = self._on(be, index)
            extra: tuple[Any, ...] = ()
            name = block_kind
            if kind == "int":
                name = "int_full" if span == 1 << 64 else "int"
                extra = (np.uint64(span & _philox.MASK64), np.uint64(low & _philox.MASK64))
            elif kind == "truncated":
                extra = (np.uint64(_philox.blocks_for("normal" + wide, n)),)
            ctx = be.activate(index)
            with ctx if ctx is not None else _nothing():
                out = _philox_cuda.draw(be.xp, state, name, shape, gen_dt, *extra, bits=bits)
                return out if out.dtype == dt else out.astype(dt)

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

    def gamma(self, shape: Any, alpha: Any, beta: Any = None, dtype: Any = np.float32) -> Any:
        """Gamma(``alpha``, rate ``beta``) samples of shape ``shape + broadcast(alpha,
        beta).shape`` (see ``em.random.gamma``)."""
        return _random_gamma.gamma(self, shape, alpha, beta, dtype)

    def shuffle(self, value: Any) -> Any:
        """``value`` with its first axis randomly permuted."""
        t = _args.tensor(value)
        with device(t._device):
            perm = _sample(_PERMUTATION, self, n=t.shape[0])
        return gather(t, perm)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def checked_state(value: Any) -> tuple[int, int, int]:
    """(key, stream, counter) of a saved generator state, or ``ValueError`` naming what
    is wrong: numpy's PCG64 state (ember before Philox) cannot continue as Philox."""
    if isinstance(value, dict) and value.get("bit_generator") == "PCG64":
        raise ValueError("random.Generator.state: this state is numpy's PCG64, saved by ember "
                         "before its generator became Philox4x32-10; a PCG64 stream cannot be "
                         "continued by Philox, so reseed (em.random.set_seed or "
                         "Generator(seed)) instead of restoring it")
    ok = (isinstance(value, dict) and value.get("bit_generator") == STATE_FORMAT
          and all(type(value.get(k)) is int and 0 <= value[k] < 1 << 64
                  for k in ("key", "stream", "counter")))
    if not ok:
        raise ValueError(f"random.Generator.state: expected {{'bit_generator': "
                         f"'{STATE_FORMAT}', 'key', 'stream', 'counter': ints in [0, 2**64)}}, "
                         f"got {value!r:.200}")
    return value["key"], value["stream"], value["counter"]


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
        self.seeds_key = _seed_key(seed) ^ _SEEDS_KEY_TWEAK  # new_seed's stream
        self.seeds_drawn = 0
        self.seeds_lock = threading.Lock()

    def reseed(self, seed: int) -> None:
        """Each generator reseeded in place, not replaced: its device state array stays
        the one a captured CUDA graph reads (a new array would leave the graph drawing
        from the old stream)."""
        key = _seed_key(seed)
        self.seed = seed
        self.generator._set(key, 0, 0)
        for op_seed, g in self.op_generators.items():  # as _gen would make them anew
            g._set(key ^ _OP_KEY_TWEAK, _seed_key(op_seed), 0)
        with self.seeds_lock:
            self.seeds_key, self.seeds_drawn = key ^ _SEEDS_KEY_TWEAK, 0


_global = _GlobalState(None)


def set_seed(seed: int) -> None:
    """Seed the global generator (and the op-level seed streams): a repeatable program.

    The global generator is reseeded in place (``get_global_generator()`` is the same
    object before and after), so traced steps captured as CUDA graphs follow the seed.
    Also sets ``ember.data``'s global seed (its unseeded shuffles) if ember.data is
    imported; ember.data imported later adopts it through ``get_global_seed``.
    """
    _seed_key(int(seed))  # out of range: refused before anything changes
    _global.reseed(int(seed))
    data_set_seed = getattr(sys.modules.get("ember.data"), "set_seed", None)
    if callable(data_set_seed):
        data_set_seed(int(seed))


def get_global_seed() -> int | None:
    """The seed given to ``set_seed``, or None if it was never called."""
    return _global.seed


def new_seed() -> int:
    """A seed for a new random stream (an int in ``[0, 2**31 - 1)``), for objects that
    keep a stream of their own, as Keras's layers keep a ``SeedGenerator``.

    The seeds come from a stream of their own, which ``set_seed`` restarts: after the same
    ``set_seed``, objects made in the same order get the same seeds. Drawing one takes
    nothing from the global generator, so making such an object does not change the
    numbers that other code draws. Without ``set_seed`` the seeds differ from run to run.

    Examples:
        >>> import ember.core as em
        >>> em.random.set_seed(3)
        >>> a = [em.random.new_seed(), em.random.new_seed()]
        >>> em.random.set_seed(3)
        >>> a == [em.random.new_seed(), em.random.new_seed()]
        True
    """
    with _global.seeds_lock:
        n = _global.seeds_drawn
        _global.seeds_drawn = n + _philox.blocks_for("int", 1)
        key = _global.seeds_key
    return int(_philox.integers(key, 0, n, 1, 0, 2 ** 31 - 1, np.int64)[0])


def get_global_generator() -> Generator:
    return _global.generator


_SCOPE: ContextVar[Generator | None] = ContextVar("ember_random_generator_scope",
                                                  default=None)


@contextlib.contextmanager
def generator_scope(generator: Generator) -> Iterator[Generator]:
    """Inside the block, draws without a seed (``em.random.uniform(shape)``, dropout, ...)
    come from ``generator`` instead of the global one; seeded draws are unchanged.

    ember.data runs each ``map`` function in a scope of its own, keyed when the map is
    made (``new_seed``): its draws repeat after ``set_seed`` and never take numbers from
    the global stream, which a prefetching map in a background thread did, so that
    ``set_seed`` no longer made the program's own draws (a model's initial weights)
    repeat. In TensorFlow, a dataset function's random ops get their seeds when it is
    traced, to the same effect.

    Examples:
        >>> import ember.core as em
        >>> em.random.set_seed(0)
        >>> first = float(em.random.uniform(()))
        >>> em.random.set_seed(0)
        >>> with em.random.generator_scope(em.random.Generator(5)):
        ...     _ = em.random.uniform((3,))  # from the scope's generator
        >>> float(em.random.uniform(())) == first  # the global stream did not move
        True
    """
    if not isinstance(generator, Generator) or isinstance(generator, _Stream):
        raise TypeError(f"generator_scope: expected an em.random.Generator, got "
                        f"{type(generator).__name__}")
    token = _SCOPE.set(generator)
    try:
        yield generator
    finally:
        _SCOPE.reset(token)


def _gen(seed: Any) -> Generator:
    if seed is None:
        scoped = _SCOPE.get()
        return _global.generator if scoped is None else scoped
    g = _global.op_generators.get(seed)
    if g is None:
        g = _global.op_generators[seed] = Generator._op_stream(int(_global.seed or 0), seed)
    return g


class _Stream(Generator):
    """The global stream (``seed`` None) or an op-level seeded stream, looked up each time
    it draws: a traced function (ember-graph) replays its random ops through this, so
    ``set_seed`` reseeds it as it reseeds eager code."""

    def __init__(self, seed: Any) -> None:  # no state of its own
        self.seed = seed

    def _draw(self, *args: Any, **kwargs: Any) -> Any:
        return _gen(self.seed)._draw(*args, **kwargs)

    def _target(self) -> Generator:
        return _gen(self.seed)

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


def gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = np.float32, seed: Any = None,
          name: str | None = None) -> Any:
    """Samples of Gamma(``alpha``, rate ``beta``) (TensorFlow's ``tf.random.gamma``): the
    shape is ``shape`` followed by the broadcast shape of ``alpha`` and ``beta`` (beta
    None: 1). Marsaglia and Tsang's method on the generator's normal and uniform draws.
    No gradient flows to ``alpha``.

    Examples:
        >>> import ember.core as em
        >>> em.random.set_seed(0)
        >>> g = em.random.gamma([20000], alpha=[0.5, 3.0])
        >>> g.shape
        (20000, 2)
        >>> [round(float(m), 1) for m in em.reduce_mean(g, axis=0)]
        [0.5, 3.0]
    """
    return _stream(seed).gamma(shape, alpha, beta, dtype)


def shuffle(value: Any, seed: Any = None, name: str | None = None) -> Any:
    """``value`` randomly permuted along its first axis."""
    return _stream(seed).shuffle(value)


# --- stateless draws (TensorFlow's tf.random.stateless_*) ----------------------------------
_STATELESS_KEY_TWEAK = 0x94D049BB133111EB  # stateless streams differ from the others
_ALGS = (None, 1, "philox", "auto_select")


def _check_alg(fn: str, alg: Any) -> None:
    name = getattr(alg, "name", alg)  # an enum member: its name
    if isinstance(name, str):
        name = name.lower()
    if name not in _ALGS and alg not in _ALGS:
        raise InvalidArgumentError(f"random.{fn}: alg={alg!r}: ember's one algorithm is "
                                   f"Philox (give 'philox', 'auto_select' or None)")


def _stack_keys(keys: Any) -> Any:
    from ._ops.array import stack
    from ._ops.creation import zeros_like

    return stack([keys, zeros_like(keys)])


def _seed_pair(fn: str, seed: Any) -> tuple[int, int, Any]:
    """The two numbers of a stateless ``seed`` (a shape [2] integer tensor or list), read
    on the host, and its dtype."""
    from ._tensor import Tensor

    if isinstance(seed, (list, tuple)):  # Python ints, tensors: packed as TF packs them
        parts = [v.numpy() if isinstance(v, Tensor) else np.asarray(v) for v in seed]
        s = np.array([int(p) for p in parts]) if all(
            p.shape == () and p.dtype.kind in "iu" for p in parts) else np.asarray(parts)
        typed = [p.dtype for v, p in zip(seed, parts) if isinstance(v, (Tensor, np.ndarray))]
        small = all(-2**31 <= int(v) < 2**31 for v in s.ravel()) if s.dtype.kind in "iu" \
            else True
        dt = typed[0] if typed else np.dtype(np.int32 if small else np.int64)
    else:
        s = seed.numpy() if isinstance(seed, Tensor) else np.asarray(seed)
        dt = s.dtype
    if s.shape != (2,) or s.dtype.kind not in "iu":
        raise InvalidArgumentError(f"random.{fn}: seed must be a shape [2] integer tensor, "
                                   f"got shape {s.shape} dtype {s.dtype}")
    return int(s[0]) & _philox.MASK64, int(s[1]) & _philox.MASK64, dt


class _Stateless(Generator):
    """The generator of one stateless draw: every draw starts at counter 0, so a traced
    function's replay (which draws again from the generator its trace made) gives the same
    numbers as the eager call, as a stateless op must. Never captured in a CUDA graph (a
    launch would advance it): ``stateless`` says so to the graph package."""

    stateless = True

    def __init__(self, key: int, stream: int) -> None:
        self._key0, self._stream0 = key, stream
        self._reset(key, stream, 0)

    def _draw(self, *args: Any, **kwargs: Any) -> Any:
        self._set(self._key0, self._stream0, 0)
        return super()._draw(*args, **kwargs)


def _stateless(fn: str, seed: Any, alg: Any = None) -> Generator:
    """A generator whose numbers are a function of ``seed`` alone (key ``seed[0]``, stream
    ``seed[1]``, tweaked apart from every other stream)."""
    _check_alg(fn, alg)
    key, stream, _ = _seed_pair(fn, seed)
    return _Stateless(key ^ _STATELESS_KEY_TWEAK, stream)


def stateless_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None,
                      dtype: Any = np.float32, name: str | None = None,
                      alg: Any = "auto_select") -> Any:
    """Uniform samples in [minval, maxval) that depend on ``seed`` (shape [2] integers)
    alone: the same seed gives the same numbers (TensorFlow's ``stateless_uniform``; the
    numbers are ember's Philox's, not TensorFlow's). The seed is read on the host.

    Examples:
        >>> import ember.core as em
        >>> a = em.random.stateless_uniform([3], seed=[1, 2])
        >>> bool(em.reduce_all(a == em.random.stateless_uniform([3], seed=[1, 2])))
        True
    """
    dt = _dtypes.as_dtype(dtype)
    if dt.kind in "iu" and minval is None and maxval is None:  # TF's full-range integers
        info = np.iinfo(dt)
        minval, maxval = int(info.min), int(info.max) + 1
    return _stateless("stateless_uniform", seed, alg).uniform(shape, minval, maxval, dtype)


def stateless_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                     dtype: Any = np.float32, name: str | None = None,
                     alg: Any = "auto_select") -> Any:
    """Normal samples that depend on ``seed`` alone (see ``stateless_uniform``)."""
    return _stateless("stateless_normal", seed, alg).normal(shape, mean, stddev, dtype)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = np.float32, name: str | None = None,
                               alg: Any = "auto_select") -> Any:
    """Truncated normal samples that depend on ``seed`` alone."""
    return _stateless("stateless_truncated_normal", seed, alg).truncated_normal(
        shape, mean, stddev, dtype)


def stateless_categorical(logits: Any, num_samples: int, seed: Any, dtype: Any = np.int64,
                          name: str | None = None) -> Any:
    """Class indices from ``logits`` that depend on ``seed`` alone."""
    return _stateless("stateless_categorical", seed).categorical(logits, num_samples, dtype)


def split(seed: Any, num: int = 2, alg: Any = "auto_select") -> Any:
    """``num`` new stateless seeds from ``seed``: shape ``[num, 2]``, ``seed``'s dtype
    (TensorFlow's ``tf.random.split``)."""
    _, _, dt = _seed_pair("split", seed)
    kind = np.dtype(dt)
    info = np.iinfo(kind)
    return _stateless("split", seed, alg).uniform([int(num), 2], int(info.min),
                                                  int(info.max) + 1, kind)


def fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> Any:
    """A new stateless seed from ``seed`` and the integer ``data`` (TensorFlow's
    ``tf.random.fold_in``): a full-range draw keyed by ``seed`` stacked over ``data``, in
    ``data``'s dtype."""
    from ._ops.array import stack
    from ._ops.creation import convert_to_tensor
    from ._tensor import Tensor

    d = data if isinstance(data, Tensor) else convert_to_tensor(data)
    if d.ndim != 0 or d.dtype.kind not in "iu":
        raise InvalidArgumentError(f"random.fold_in: data must be an integer scalar, got "
                                   f"shape {d.shape} dtype {d.dtype}")
    # TensorFlow's: a full-range draw keyed by seed, in data's dtype, stacked over data
    first = stateless_uniform([], seed, None, None, d.dtype, alg=alg)
    return stack([first, d])

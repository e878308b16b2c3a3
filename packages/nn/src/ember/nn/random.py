"""``nn.random`` is ``keras.random``: random draws with Keras 3's names, arguments and
seeds, on ember's Philox generators (``ember.core.random``), on the current device.

A ``seed`` is, as in Keras 3:

- None: the global generator (``em.random.set_seed`` or ``nn.utils.set_random_seed``
  makes its sequence repeatable); each call draws new numbers;
- an int: the same numbers at every call with that seed (Keras's integer seeds are
  stateless);
- a ``SeedGenerator``: the generator's next numbers; it advances at every call.

Examples:
    >>> from ember import nn
    >>> gen = nn.random.SeedGenerator(1337)
    >>> a = nn.random.normal((2,), seed=gen)
    >>> b = nn.random.normal((2,), seed=gen)
    >>> bool((a != b).numpy().all())
    True
    >>> bool((nn.random.uniform((3,), seed=7) == nn.random.uniform((3,), seed=7)).numpy().all())
    True
"""

from __future__ import annotations

from typing import Any

import ember.core as em

__all__ = ["SeedGenerator", "beta", "categorical", "dropout", "gamma", "normal", "randint",
           "shuffle", "truncated_normal", "uniform"]


class SeedGenerator:
    """Keras's ``keras.random.SeedGenerator``: a generator whose state advances at each draw
    it is given to (``seed=generator``).

    ``seed=None`` takes a seed from ``em.random.new_seed()``: after the same
    ``em.random.set_seed``, generators made in the same order repeat their numbers, and
    making one draws nothing from the global generator. The random layers each keep one
    (``layer.seed_generator``, as Keras 3's do), so their draws do not depend on which
    thread calls them or what else draws meanwhile. Its state is checkpointed and saved
    with the model.

    Args:
        seed: an int, or None.
        name: a name (kept as ``name``).
    """

    def __init__(self, seed: int | None = None, name: str | None = None, **kwargs: Any
                 ) -> None:
        unknown = sorted(set(kwargs) - {"backend"})
        if unknown:
            raise TypeError(f"SeedGenerator: unexpected arguments {unknown}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise TypeError(f"SeedGenerator: seed must be an int or None, got {seed!r}")
        if seed is None:
            seed = em.random.new_seed()
        self.name = name or "seed_generator"
        self.seed = seed
        self.generator = em.random.Generator(seed)

    @property
    def state(self) -> dict[str, Any]:
        """The generator's state (``em.random.Generator.state``); settable."""
        return self.generator.state

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        self.generator.state = value

    def __checkpoint_state__(self) -> dict[str, Any]:
        return self.generator.state

    def __checkpoint_restore_state__(self, state: dict[str, Any]) -> None:
        self.generator.state = state

    def __repr__(self) -> str:
        return f"<SeedGenerator {self.name!r} seed={self.seed}>"


def _generator(seed: Any, what: str) -> Any:
    if seed is None:
        return em.random.get_global_generator()
    if isinstance(seed, SeedGenerator):
        return seed.generator
    if isinstance(seed, int) and not isinstance(seed, bool):
        return em.random.Generator(seed)  # stateless: the same numbers for the same seed
    raise TypeError(f"nn.random.{what}: seed must be None, an int or a SeedGenerator, got "
                    f"{type(seed).__name__}")


def _float(dtype: Any) -> Any:
    return em.float32 if dtype is None else em.as_dtype(dtype)


def normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
           seed: Any = None) -> Any:
    """Draws from the normal distribution."""
    return _generator(seed, "normal").normal(shape, mean, stddev, _float(dtype))


def uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
            seed: Any = None) -> Any:
    """Draws from the uniform distribution on ``[minval, maxval)``."""
    dt = _float(dtype)
    if not em.as_dtype(dt).kind == "f":
        raise ValueError(f"nn.random.uniform: dtype must be a float dtype (Keras's; use "
                         f"randint for integers), got {dt}")
    return _generator(seed, "uniform").uniform(shape, minval, maxval, dt)


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: Any = None) -> Any:
    """Draws from the normal distribution, redrawn beyond two standard deviations."""
    return _generator(seed, "truncated_normal").truncated_normal(shape, mean, stddev,
                                                                 _float(dtype))


def randint(shape: Any, minval: int, maxval: int, dtype: Any = "int32", seed: Any = None
            ) -> Any:
    """Integers drawn uniformly from ``[minval, maxval)``."""
    dt = em.as_dtype(dtype)
    if dt.kind not in "iu":
        raise ValueError(f"nn.random.randint: dtype must be an integer dtype, got {dt}")
    return _generator(seed, "randint").uniform(shape, minval, maxval, dt)


def gamma(shape: Any, alpha: float, dtype: Any = None, seed: Any = None) -> Any:
    """Draws from the gamma distribution of concentration ``alpha`` (rate 1)."""
    return _generator(seed, "gamma").gamma(shape, alpha, None, _float(dtype))


def beta(shape: Any, alpha: Any, beta: Any, dtype: Any = None, seed: Any = None) -> Any:
    """Draws from the beta distribution: ``X / (X + Y)`` of gamma draws ``X`` (of
    ``alpha``) and ``Y`` (of ``beta``), as Keras draws it."""
    gen = _generator(seed, "beta")
    dt = _float(dtype)
    x = gen.gamma(shape, alpha, None, dt)
    y = gen.gamma(shape, beta, None, dt)
    return em.divide(x, em.add(x, y))


def categorical(logits: Any, num_samples: int, dtype: Any = "int32", seed: Any = None
                ) -> Any:
    """``num_samples`` class indices per row of ``logits`` (unnormalized log-probabilities)."""
    return _generator(seed, "categorical").categorical(logits, num_samples, em.as_dtype(dtype))


def shuffle(x: Any, axis: int = 0, seed: Any = None) -> Any:
    """``x`` with its slices along ``axis`` in a random order."""
    x = em.convert_to_tensor(x)
    axis = axis + x.ndim if axis < 0 else axis
    if not 0 <= axis < max(x.ndim, 1):
        raise ValueError(f"nn.random.shuffle: axis {axis} is out of range for {x.ndim} "
                         f"dimensions")
    gen = _generator(seed, "shuffle")
    if axis == 0:
        return gen.shuffle(x)
    perm = list(range(x.ndim))
    perm[0], perm[axis] = axis, 0
    return em.transpose(gen.shuffle(em.transpose(x, perm)), perm)


def dropout(inputs: Any, rate: float, noise_shape: Any = None, seed: Any = None) -> Any:
    """``inputs`` with each element (or each ``noise_shape`` slice) zeroed with probability
    ``rate`` and the rest scaled by ``1 / (1 - rate)``."""
    if not 0 <= rate < 1:
        raise ValueError(f"nn.random.dropout: rate must be in [0, 1), got {rate!r}")
    x = em.convert_to_tensor(inputs)
    if rate == 0:
        return x
    shape = tuple(x.shape) if noise_shape is None else tuple(
        x.shape[i] if s is None else s for i, s in enumerate(noise_shape))
    keep = em.greater_equal(_generator(seed, "dropout").uniform(shape, 0.0, 1.0, x.dtype),
                            rate)
    return em.where(keep, em.divide(x, 1.0 - rate), 0.0)


_KERAS_ONLY = ("binomial",)


def __getattr__(name: str) -> Any:
    if name in _KERAS_ONLY:
        raise AttributeError(f"ember.nn.random has no {name} (keras.random.{name})")
    raise AttributeError(f"module 'ember.nn.random' has no attribute {name!r}")

"""Initializers: callables ``(shape, dtype) -> Tensor``, all drawn through ``em.random``.

``seed`` is Keras 3's:

- None: the global generator; ``em.random.set_seed(n)`` (or ``nn.utils.set_random_seed``)
  makes the draws repeatable, and each call draws new numbers;
- an int: the same numbers at every call, and from every initializer given that seed and
  shape (Keras 3's integer seeds are stateless; tf.keras 2's advanced at each call);
- a ``nn.random.SeedGenerator``: its next numbers; it advances at every call.

Examples:
    >>> import ember.core as em
    >>> from ember import nn
    >>> nn.initializers.get("zeros")((2,), dtype="float32").numpy()
    array([0., 0.], dtype=float32)
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

import ember.core as em

from .random import _generator

__all__ = ["Constant", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform", "Initializer",
           "LecunNormal", "LecunUniform", "Ones", "Orthogonal", "RandomNormal", "RandomUniform",
           "TruncatedNormal", "VarianceScaling", "Zeros", "deserialize", "get", "serialize",
           "Identity", "IdentityInitializer", "OrthogonalInitializer", "identity"]


def _fans(shape: tuple[int, ...], input_axes: Any = None,
          output_axes: Any = None) -> tuple[float, float]:
    if input_axes is not None and output_axes is not None:  # Keras 3's EinsumDense form
        return (float(np.prod([shape[a] for a in input_axes])),
                float(np.prod([shape[a] for a in output_axes])))
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))  # conv kernels: (..., in, out)
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Base class: ``init(shape, dtype=float32)`` returns a Tensor."""

    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        """The constructor's arguments, as Keras's (``HeNormal(seed=3)`` -> ``{"seed": 3}``):
        every initializer here keeps each argument under its own name."""
        params = inspect.signature(type(self).__init__).parameters
        return {p: getattr(self, p) for p, v in params.items()
                if p != "self" and v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)


class Zeros(Initializer):
    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        return em.zeros(tuple(shape), dtype=dtype)


class Ones(Initializer):
    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        return em.ones(tuple(shape), dtype=dtype)


class Constant(Initializer):
    def __init__(self, value: Any = 0.0) -> None:
        self.value = value

    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        v = np.broadcast_to(np.asarray(self.value, dtype=em.as_dtype(dtype)), tuple(shape))
        return em.convert_to_tensor(np.array(v))


def _draw(init: Any, kind: str, shape: Any, a: float, b: float, dtype: Any) -> Any:
    """``kind`` ("normal", "truncated_normal", "uniform") draws of ``shape``, with arguments
    ``a``, ``b``, by ``init.seed`` (see the module's docstring)."""
    if init.seed is None:
        return getattr(em.random, kind)(tuple(shape), a, b, dtype=dtype)
    gen = _generator(init.seed, type(init).__name__)  # an int: a new generator each call
    return getattr(gen, kind)(tuple(shape), a, b, dtype)


class RandomNormal(Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Any = None) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        return _draw(self, "normal", shape, self.mean, self.stddev, dtype)


class TruncatedNormal(RandomNormal):
    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        return _draw(self, "truncated_normal", shape, self.mean, self.stddev, dtype)


class RandomUniform(Initializer):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Any = None) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        return _draw(self, "uniform", shape, self.minval, self.maxval, dtype)


class VarianceScaling(Initializer):
    """scale / fan (fan_in, fan_out or their mean), drawn normal, truncated or uniform.

    ``input_axes`` and ``output_axes`` (Keras 3's, both or neither) name the axes of the
    shape whose sizes multiply to fan_in and fan_out; without them a kernel's last axis is
    its outputs, the one before its inputs, and any others its receptive field.
    """

    def __init__(self, scale: float = 1.0, mode: str = "fan_in",
                 distribution: str = "truncated_normal", seed: Any = None,
                 input_axes: Any = None, output_axes: Any = None) -> None:
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"VarianceScaling: unknown mode {mode!r}")
        if not scale > 0.0:
            raise ValueError(f"VarianceScaling: scale must be a positive number, got "
                             f"scale={scale!r}")
        # Keras 3: any case; "normal" is the truncated normal; anything else an error
        given, distribution = distribution, str(distribution).lower()
        distribution = "truncated_normal" if distribution == "normal" else distribution
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"VarianceScaling: unknown distribution {given!r}; use "
                             f"'truncated_normal' (or 'normal'), 'untruncated_normal' or "
                             f"'uniform'")
        if (input_axes is None) != (output_axes is None):
            raise ValueError(f"{type(self).__name__}: give input_axes and output_axes "
                             f"together (got input_axes={input_axes!r}, "
                             f"output_axes={output_axes!r})")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.input_axes = None if input_axes is None else [int(a) for a in input_axes]
        self.output_axes = None if output_axes is None else [int(a) for a in output_axes]

    def get_config(self) -> dict[str, Any]:
        """As the base's, without the axes when they are not set: Keras 3 before 3.15 has
        no such arguments, so a file that names them only where they matter loads there."""
        config = super().get_config()
        if self.input_axes is None:
            del config["input_axes"], config["output_axes"]
        return config

    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        shape = tuple(shape)
        fan_in, fan_out = _fans(shape, self.input_axes, self.output_axes)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        var = self.scale / max(1.0, fan)
        if self.distribution == "uniform":
            lim = math.sqrt(3.0 * var)
            return _draw(self, "uniform", shape, -lim, lim, dtype)
        if self.distribution == "untruncated_normal":
            return _draw(self, "normal", shape, 0.0, math.sqrt(var), dtype)
        # stddev of a unit normal truncated at two standard deviations
        std = math.sqrt(var) / 0.87962566103423978
        return _draw(self, "truncated_normal", shape, 0.0, std, dtype)


class GlorotUniform(VarianceScaling):
    def __init__(self, seed: Any = None, input_axes: Any = None,
                 output_axes: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed, input_axes, output_axes)


class GlorotNormal(VarianceScaling):
    def __init__(self, seed: Any = None, input_axes: Any = None,
                 output_axes: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, input_axes, output_axes)


class HeNormal(VarianceScaling):
    def __init__(self, seed: Any = None, input_axes: Any = None,
                 output_axes: Any = None) -> None:
        super().__init__(2.0, "fan_in", "truncated_normal", seed, input_axes, output_axes)


class HeUniform(VarianceScaling):
    def __init__(self, seed: Any = None, input_axes: Any = None,
                 output_axes: Any = None) -> None:
        super().__init__(2.0, "fan_in", "uniform", seed, input_axes, output_axes)


class LecunNormal(VarianceScaling):
    def __init__(self, seed: Any = None, input_axes: Any = None,
                 output_axes: Any = None) -> None:
        super().__init__(1.0, "fan_in", "truncated_normal", seed, input_axes, output_axes)


class LecunUniform(VarianceScaling):
    def __init__(self, seed: Any = None, input_axes: Any = None,
                 output_axes: Any = None) -> None:
        super().__init__(1.0, "fan_in", "uniform", seed, input_axes, output_axes)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal draw."""

    def __init__(self, gain: float = 1.0, seed: Any = None) -> None:
        self.gain, self.seed = gain, seed

    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: needs a shape of rank >= 2, got {shape}")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        a = _draw(self, "normal", (max(rows, cols), min(rows, cols)), 0.0, 1.0,
                  em.float64).numpy()
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return em.convert_to_tensor((self.gain * q).reshape(shape).astype(em.as_dtype(dtype)))


class Identity(Initializer):
    """``gain`` times the identity matrix (of a 2-D shape only, as Keras 3; a non-square
    one has ones on its main diagonal)."""

    def __init__(self, gain: float = 1.0) -> None:
        self.gain = gain

    def __call__(self, shape: Any, dtype: Any = em.float32) -> Any:
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"Identity: the identity initializer makes 2-D matrices only, "
                             f"got shape={shape} of rank {len(shape)}")
        return em.convert_to_tensor(
            (self.gain * np.eye(*shape)).astype(em.as_dtype(dtype)))


_NAMES: dict[str, Any] = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_normal": HeNormal,
    "he_uniform": HeUniform, "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform,
    "orthogonal": Orthogonal, "variance_scaling": VarianceScaling,
    "xavier_uniform": GlorotUniform, "xavier_normal": GlorotNormal,
    # Keras 3's aliases
    "uniform": RandomUniform, "normal": RandomNormal, "one": Ones, "zero": Zeros,
    "identity": Identity,
}
# Keras 3's class names (exactly as spelled) and its two long aliases
_CLASSES: dict[str, Any] = {c.__name__: c for c in _NAMES.values()}
_CLASSES.update(IdentityInitializer=Identity, OrthogonalInitializer=Orthogonal)


def serialize(initializer: Any) -> dict[str, Any]:
    """``{"class_name": ..., "config": ...}`` for an initializer (Keras's form), which
    ``get`` and ``deserialize`` turn back into an equal one.

    Raises:
        ValueError: ``initializer`` is not an ``Initializer`` (a plain function has no
            config to save).
    """
    if not isinstance(initializer, Initializer):
        raise ValueError(f"initializers.serialize: expected an Initializer, got "
                         f"{initializer!r} (a plain function cannot be serialized; subclass "
                         "Initializer and give it get_config)")
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


def deserialize(config: dict[str, Any], custom_objects: dict[str, Any] | None = None) -> Any:
    """The initializer ``serialize`` described (``custom_objects``: your own classes).

    Raises:
        ValueError: an unknown class name, or a dict without ``class_name``.
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"initializers.deserialize: expected {{'class_name': ..., 'config': "
                         f"...}}, got {config!r}")
    name = config["class_name"]
    known = dict(_CLASSES)
    known.update(custom_objects or {})
    if name not in known:
        raise ValueError(f"initializers.deserialize: unknown initializer {name!r}; known: "
                         f"{sorted(known)}")
    cls = known[name]
    return cls.from_config(config.get("config") or {})


def get(identifier: Any) -> Any:
    """An initializer from a name (``"he_normal"``), a ``serialize`` dict, an instance or a
    callable."""
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier in _CLASSES:  # "GlorotUniform", "IdentityInitializer"
            return _CLASSES[identifier]()
        key = identifier.lower()
        if key not in _NAMES:
            raise ValueError(f"unknown initializer {identifier!r}; known: {sorted(_NAMES)}")
        return _NAMES[key]()
    if isinstance(identifier, (int, float)):
        return Constant(identifier)
    keras_config = getattr(identifier, "keras_config", None)
    if callable(keras_config):  # TF's em.random_uniform_initializer(...): Keras's own class
        return deserialize(keras_config())
    if callable(identifier):
        return identifier
    raise ValueError(f"cannot interpret {identifier!r} as an initializer")


# lower-case function aliases, as in Keras
zeros, ones, constant = Zeros, Ones, Constant
glorot_uniform, glorot_normal, he_normal, he_uniform = GlorotUniform, GlorotNormal, HeNormal, HeUniform
lecun_normal, lecun_uniform, orthogonal = LecunNormal, LecunUniform, Orthogonal
identity = IdentityInitializer = Identity
OrthogonalInitializer = Orthogonal
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal

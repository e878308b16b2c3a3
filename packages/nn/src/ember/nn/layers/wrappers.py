"""Layers that wrap a layer: Bidirectional (a recurrent layer forwards and a copy of it
backwards, merged), TimeDistributed, and Keras 3's Wrapper base class and
SpectralNormalization."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .. import initializers
from .base import InputSpec, Layer
from .masking import call_takes_mask

_MERGE_MODES = ("concat", "sum", "mul", "ave", None)


def _with_dtype(config: Any, dtype: str) -> Any:
    """``config`` with ``dtype`` set in it and in the configs of the cells it holds."""
    if isinstance(config, list):
        return [_with_dtype(c, dtype) for c in config]
    if not isinstance(config, dict):
        return config
    out = {k: _with_dtype(v, dtype) if k in ("cell", "cells", "config") else v
           for k, v in config.items()}
    if "config" not in config and "class_name" not in config:
        out["dtype"] = dtype
    return out


def _fresh_copy(layer: Any, name: str, **overrides: Any) -> Any:
    config = {**_with_dtype(layer.get_config(), overrides.pop("dtype")), "name": name,
              **overrides}
    try:
        return type(layer).from_config(config)
    except (TypeError, KeyError, AttributeError) as e:
        raise ValueError(f"Bidirectional: cannot make a fresh copy of {layer.name!r} "
                         f"({type(layer).__name__}) from its get_config() ({e}); pass "
                         f"backward_layer= explicitly") from e


class Bidirectional(Layer):
    """Run ``layer`` over the sequence forwards and a fresh copy of it backwards.

    As in Keras, both directions get new weights (``forward_layer`` and
    ``backward_layer``); the backward outputs are put back in forward time order before
    merging, and masked steps output zeros when sequences are returned.

    Args:
        layer: a recurrent layer (``LSTM``, ``GRU``, ``SimpleRNN``, ``RNN(cell)``).
        merge_mode: ``"concat"`` (the default), ``"sum"``, ``"mul"``, ``"ave"`` or ``None``
            (a list ``[forward, backward]``).
        backward_layer: the layer for the backward direction (its ``go_backwards`` must
            differ from ``layer``'s; ``return_sequences``, ``return_state`` and
            ``stateful`` must match).
        **kwargs: as ``Layer``.

    Call arguments:
        inputs, mask, training: as the wrapped layer.
        initial_state: the forward layer's states, then the backward layer's.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> bi = nn.layers.Bidirectional(nn.layers.LSTM(4, return_sequences=True))
        >>> bi(em.ones((2, 5, 3))).shape
        (2, 5, 8)
    """

    supports_masking = True

    def __init__(self, layer: Any, merge_mode: str | None = "concat", weights: Any = None,
                 backward_layer: Any = None, **kwargs: Any) -> None:
        layer_: Any = layer
        if not isinstance(layer_, Layer):
            raise ValueError(f"Bidirectional: layer must be a Layer, got {layer!r}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Bidirectional: merge_mode must be one of {_MERGE_MODES}, got "
                             f"{merge_mode!r}")
        if weights is not None:
            raise ValueError("Bidirectional: weights= is not supported; build the layer and "
                             "call set_weights() instead")
        if kwargs.get("dtype") is None:  # compute in the wrapped layer's dtypes
            kwargs["dtype"] = layer.dtype_policy
        super().__init__(**kwargs)
        dt = self.dtype_policy.name  # the fresh copies take the wrapper's policy
        self.forward_layer = _fresh_copy(layer, f"forward_{layer.name}", dtype=dt)
        if backward_layer is None:
            backward_layer = _fresh_copy(layer, f"backward_{layer.name}", dtype=dt,
                                         go_backwards=not layer.go_backwards)
        elif not isinstance(backward_layer, Layer):
            raise ValueError(f"Bidirectional: backward_layer must be a Layer, got "
                             f"{backward_layer!r}")
        elif backward_layer.dtype_policy != self.dtype_policy:
            raise ValueError(f"Bidirectional: dtype={dt!r} differs from backward_layer's "
                             f"{backward_layer.dtype_policy.name!r}")
        self.backward_layer = backward_layer
        self._check_pair()
        for d in (self.forward_layer, self.backward_layer):
            if hasattr(d, "zero_output_for_mask"):
                d.zero_output_for_mask = d.return_sequences
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.stateful = getattr(layer, "stateful", False)

    def _check_pair(self) -> None:
        f, b = self.forward_layer, self.backward_layer
        if f.go_backwards == b.go_backwards:
            raise ValueError(f"Bidirectional: the forward and backward layers need different "
                             f"go_backwards, both have {f.go_backwards}")
        for a in ("stateful", "return_sequences", "return_state"):
            if getattr(f, a, False) != getattr(b, a, False):
                raise ValueError(f"Bidirectional: the forward and backward layers must agree "
                                 f"on {a}: {getattr(f, a, False)} and {getattr(b, a, False)}")

    def build(self, input_shape: Any) -> None:
        self.built = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        out: Any = mask if self.return_sequences else None
        if self.merge_mode is None:
            out = [out, out]
        if self.return_state:
            n = len(self.forward_layer.cell.state_size) if isinstance(
                self.forward_layer.cell.state_size, (list, tuple)) else 1
            return (out if isinstance(out, list) else [out]) + [None] * (2 * n)
        return out

    def _run(self, layer: Any, inputs: Any, state: Any, mask: Any, training: Any) -> Any:
        kw: dict[str, Any] = {"training": training}
        if state is not None:
            kw["initial_state"] = state
        if mask is not None:
            if not call_takes_mask(type(layer)):
                raise ValueError(f"Bidirectional: got a mask but {layer.name!r} "
                                 f"({type(layer).__name__}) takes none")
            kw["mask"] = mask
        return layer(inputs, **kw)

    def call(self, inputs: Any, initial_state: Any = None, mask: Any = None,
             training: Any = None) -> Any:
        fwd_state = bwd_state = None
        if initial_state is not None:
            given = list(initial_state)
            if len(given) % 2:
                raise ValueError(f"layer {self.name!r} (Bidirectional): initial_state needs "
                                 f"the forward states then the backward states, got "
                                 f"{len(given)} tensors")
            fwd_state, bwd_state = given[:len(given) // 2], given[len(given) // 2:]
        y = self._run(self.forward_layer, inputs, fwd_state, mask, training)
        y_rev = self._run(self.backward_layer, inputs, bwd_state, mask, training)
        states: list[Any] = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = em.reverse(y_rev, axis=[1])
        out = self._merge(y, y_rev)
        if self.return_state:
            return (out if isinstance(out, list) else [out]) + states
        return out

    def _merge(self, y: Any, y_rev: Any) -> Any:
        mode = self.merge_mode
        if mode == "concat":
            return em.concat([y, y_rev], axis=-1)
        if mode == "sum":
            return em.add(y, y_rev)
        if mode == "mul":
            return em.multiply(y, y_rev)
        if mode == "ave":
            return em.multiply(em.add(y, y_rev), 0.5)
        return [y, y_rev]

    def reset_states(self, states: Any = None) -> None:
        """Reset both directions of a stateful layer."""
        if not self.stateful:
            raise AttributeError(f"layer {self.name!r} (Bidirectional) is not stateful")
        half = None if states is None else len(states) // 2
        self.forward_layer.reset_states(None if states is None else states[:half])
        self.backward_layer.reset_states(None if states is None else states[half:])

    def get_config(self) -> dict[str, Any]:
        from .recurrent import serialize_cell

        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": serialize_cell(self.forward_layer),
                "backward_layer": serialize_cell(self.backward_layer)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        from .recurrent import deserialize_cell

        config = dict(config)
        config["layer"] = deserialize_cell(config["layer"])
        config["backward_layer"] = deserialize_cell(config["backward_layer"])
        return cls(**config)


class TimeDistributed(Layer):
    """Apply ``layer`` to every step of (batch, steps, ...) inputs independently.

    The steps are folded into the batch, so the wrapped layer sees (batch * steps, ...)
    and shares its weights across steps; a layer that computes across the batch in
    training (a ``BatchNormalization``, or a layer holding one) is called once per step
    instead, as Keras 3 calls it: each step normalized by its own statistics, the moving
    ones updated once per step. A mask passes through unchanged.

    Args:
        layer: the layer to apply per step.
        **kwargs: as ``Layer``.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> td = nn.layers.TimeDistributed(nn.layers.Conv2D(4, 3))
        >>> td(em.ones((2, 5, 8, 8, 1))).shape
        (2, 5, 6, 6, 4)
    """

    supports_masking = True

    def __init__(self, layer: Any, **kwargs: Any) -> None:
        layer_: Any = layer
        if not isinstance(layer_, Layer):
            raise ValueError(f"TimeDistributed: layer must be a Layer, got {layer!r}")
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = layer.dtype_policy
        super().__init__(**kwargs)
        if layer.dtype_policy != self.dtype_policy:  # the wrapped layer owns its variables
            raise ValueError(f"TimeDistributed: dtype={self.dtype_policy.name!r} differs from "
                             f"the wrapped layer's {layer.dtype_policy.name!r}; give the layer "
                             f"that dtype")
        self.layer = layer

    def build(self, input_shape: Any) -> None:
        if isinstance(input_shape, list) or len(input_shape) < 3:
            raise ValueError(f"layer {self.name!r} (TimeDistributed) expects inputs "
                             f"(batch, steps, ...) of rank >= 3, got shape {input_shape}")
        self.built = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask

    def call(self, inputs: Any, training: Any = None) -> Any:
        n, t = inputs.shape[0], inputs.shape[1]
        if training and _batch_dependent(self.layer):
            # Keras 3 calls the layer once per step: a batch normalization in training
            # normalizes each step by that step's statistics and updates its moving ones
            # once per step (folding the steps into the batch would pool them)
            return em.stack([self.layer(inputs[:, i], training=training) for i in range(t)],
                            axis=1)
        y = self.layer(em.reshape(inputs, (n * t,) + tuple(inputs.shape[2:])),
                       training=training)
        return em.reshape(y, (n, t) + tuple(y.shape[1:]))

    def get_config(self) -> dict[str, Any]:
        from .recurrent import serialize_cell

        return {**super().get_config(), "layer": serialize_cell(self.layer)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        from .recurrent import deserialize_cell

        config = dict(config)
        config["layer"] = deserialize_cell(config["layer"])
        return cls(**config)


class Wrapper(Layer):
    """Keras 3's base class of layers that wrap another layer (``self.layer``): it builds
    the wrapped layer with its own input shape, and its config holds the wrapped layer's.
    Subclasses override ``call``; this one calls the wrapped layer (Keras's own class
    has no ``call``).

    Args:
        layer: the layer to wrap.
        **kwargs: the base ``Layer`` arguments; ``dtype`` is the wrapped layer's (another
            one is refused: the wrapped layer owns the variables and computes, so it
            would change nothing, as in :class:`TimeDistributed`).
    """

    def __init__(self, layer: Any, **kwargs: Any) -> None:
        layer_: Any = layer
        who = type(self).__name__
        if not isinstance(layer_, Layer):
            raise ValueError(f"{who}: layer must be a Layer, got {layer!r}")
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = layer.dtype_policy
        super().__init__(**kwargs)
        if layer.dtype_policy != self.dtype_policy:
            raise ValueError(f"{who}: dtype={self.dtype_policy.name!r} differs from the "
                             f"wrapped layer's {layer.dtype_policy.name!r}; give the layer "
                             f"that dtype")
        self.layer = layer

    def build(self, input_shape: Any = None) -> None:
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return self.layer(inputs, *args, **kwargs)

    def get_config(self) -> dict[str, Any]:
        from .recurrent import serialize_cell

        return {**super().get_config(), "layer": serialize_cell(self.layer)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        from .recurrent import deserialize_cell

        config = dict(config)
        config["layer"] = deserialize_cell(config["layer"])
        return cls(**config)


def _unit(x: Any) -> Any:
    """Keras's ``normalize(x, axis=None)``: ``x * min(rsqrt(sum(x ** 2)), 1e7)``."""
    return em.multiply(x, em.rsqrt(em.maximum(em.reduce_sum(em.square(x)), 1e-14)))


class SpectralNormalization(Wrapper):
    """Spectral normalisation of a layer's kernel (Keras's ``SpectralNormalization``):
    in each training call the kernel is divided by its largest singular value, estimated
    by ``power_iterations`` steps of the power method from the non-trainable
    ``vector_u`` (which keeps the estimate between calls), before the wrapped layer runs.
    Outside training the layer runs with the kernel as it is.

    As Keras, the wrapped layer's ``kernel`` is assigned the normalised kernel (and
    gradients are those of the wrapped layer at it); a kernel of zeros is left alone.
    ``weights`` are in Keras's order: the kernel, ``vector_u``, then the wrapped layer's
    others.

    Args:
        layer: a layer with a ``kernel`` (Dense, Conv1D, Conv2D, ...) or ``embeddings``
            (Embedding).
        power_iterations: power-method steps per training call (a positive int).
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> sn = nn.layers.SpectralNormalization(nn.layers.Dense(3))
        >>> sn(em.ones((2, 4)), training=True).shape, sn.vector_u.shape
        ((2, 3), (1, 3))
    """

    def __init__(self, layer: Any, power_iterations: int = 1, **kwargs: Any) -> None:
        super().__init__(layer, **kwargs)
        if isinstance(power_iterations, bool) or not isinstance(power_iterations, int) or \
                power_iterations <= 0:
            raise ValueError(f"SpectralNormalization: power_iterations must be a positive "
                             f"int, got power_iterations={power_iterations!r}")
        self.power_iterations = power_iterations

    def build(self, input_shape: Any = None) -> None:
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        kernel = self.layer.__dict__.get("kernel")
        if not isinstance(kernel, em.Variable):
            kernel = self.layer.__dict__.get("embeddings")
        if not isinstance(kernel, em.Variable):
            raise ValueError(f"SpectralNormalization: {type(self.layer).__name__} has no "
                             f"'kernel' nor 'embeddings' variable to normalise")
        self.kernel = kernel
        self.vector_u = self.add_weight(
            "vector_u", (1, int(kernel.shape[-1])),
            initializer=initializers.TruncatedNormal(stddev=0.02), trainable=False,
            dtype=kernel.dtype)
        layer = self.layer  # listed after kernel and vector_u: Keras's order of weights
        del self.layer
        self.layer = layer

    def call(self, inputs: Any, training: Any = False) -> Any:
        if training:
            self._normalize()
        out = self.layer(inputs)
        return out if out.dtype == inputs.dtype else em.cast(out, inputs.dtype)

    def _normalize(self) -> None:
        with em.recording.paused():
            kernel = self.kernel.value()
            w = em.reshape(kernel, (-1, int(kernel.shape[-1])))
            u = self.vector_u.value()
            v = u
            for _ in range(self.power_iterations):
                v = _unit(em.matmul(u, em.transpose(w)))
                u = _unit(em.matmul(v, w))
            sigma = em.matmul(em.matmul(v, w), em.transpose(u))  # (1, 1)
            zero = em.reduce_all(em.equal(kernel, 0))
            sigma = em.where(zero, em.ones_like(sigma), sigma)
            self.vector_u.assign(em.where(zero, self.vector_u.value(), u))
            self.kernel.assign(em.divide(kernel, em.reshape(sigma, ())))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "power_iterations": self.power_iterations}


def _batch_dependent(layer: Any) -> bool:
    """Whether ``layer`` (or a layer in it) computes across the batch in training: a batch
    normalization, whose output for one example depends on the others'."""
    from .normalization import BatchNormalization

    return any(isinstance(m, BatchNormalization) for m in [layer, *layer.submodules])

"""Adafactor."""

from __future__ import annotations

from typing import Any

import ember.core as em

from ..layers._keras_args import only_default
from . import _shared
from .base import Hyper, Optimizer


def _rms(x: Any) -> Any:
    return em.sqrt(em.reduce_mean(em.square(x)))


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern, 2018) as Keras 3 steps it.

    With ``rho = min(lr, 1 / sqrt(t))``, ``alpha = max(epsilon_2, rms(w)) * rho`` and
    ``beta_2_t = 1 - t**beta_2_decay``, each step averages ``g^2 + epsilon_1`` into the
    second moment ``v``: a variable of rank 2 or more keeps it factored over its last two
    axes, a row mean ``r`` (shape ``w.shape[:-1]``) and a column mean ``c`` (shape
    ``w.shape[:-2] + w.shape[-1:]``), each ``beta_2_t * old + (1 - beta_2_t) * mean``,
    and ``v = (r / mean(r)) c`` (outer product over the last two axes); a variable of rank
    0 or 1 keeps ``v`` itself. Then ``u = g / sqrt(v)`` is clipped to an RMS of at most
    ``clip_threshold`` and ``w -= alpha * u``.

    ``relative_step`` is taken only at its default, True: in Keras 3.15.1 it changes
    nothing (its ``min(lr, 1 / sqrt(t))`` is taken again for ``rho`` whatever it says), so
    False is refused by name rather than accepted and ignored. There is no
    first moment (the paper's ``beta_1``), as in Keras. Slots ``r`` and ``c`` (for rank 2
    or more) and ``v`` (Keras 3's ``velocity``, the variable's shape: Keras keeps the
    product too). ``learning_rate``, ``beta_2_decay``, ``epsilon_1``, ``epsilon_2`` and
    ``clip_threshold`` are read at every step.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> v = em.Variable([[3.0, 4.0]])
        >>> _ = nn.optimizers.Adafactor(0.1).apply_gradients([(em.constant([[1.0, -1.0]]), v)])
        >>> [round(float(x), 5) for x in v.numpy()[0]]
        [2.64645, 4.35355]
    """

    beta_2_decay = Hyper()
    epsilon_1 = Hyper()
    epsilon_2 = Hyper()
    clip_threshold = Hyper()

    def __init__(self, learning_rate: Any = 0.001, beta_2_decay: Any = -0.8,
                 epsilon_1: Any = 1e-30, epsilon_2: Any = 1e-3, clip_threshold: Any = 1.0,
                 relative_step: bool = True, **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = beta_2_decay, epsilon_1, epsilon_2
        self.clip_threshold = clip_threshold
        only_default("Adafactor", relative_step=(
            relative_step, True, "Keras 3's Adafactor steps the same either way"))
        self.relative_step = True

    def init_slots(self, var: Any) -> None:
        shape = tuple(var.shape)
        if len(shape) >= 2:  # factored over the last two axes, as Keras
            self.add_slot(var, "r", shape=shape[:-1])
            self.add_slot(var, "c", shape=shape[:-2] + shape[-1:])
        self.add_slot(var, "v")

    def _schedule(self, dt: Any) -> tuple[Any, Any]:
        """``min(lr, 1 / sqrt(t))``'s second term and ``beta_2_t``, once a step."""
        def make() -> tuple[Any, Any]:
            t = _shared.step(self, dt)
            decay = _shared.hyper(self, "beta_2_decay", dt)
            return em.divide(1.0, em.sqrt(t)), em.subtract(1.0, em.pow(t, decay))

        return _shared.per_step(self, ("adafactor", str(dt)), make)

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        dt = var.dtype
        lr = _shared.like(lr, dt)
        inv_sqrt_t, beta_2_t = self._schedule(dt)
        # (Keras first takes lr = min(lr, 1 / sqrt(t)) when relative_step and the rate is no
        # callable; rho below takes the same minimum again, so that changes nothing)
        rho_t = em.minimum(lr, inv_sqrt_t)
        w = var.value()
        alpha_t = em.multiply(em.maximum(_shared.hyper(self, "epsilon_2", dt), _rms(w)), rho_t)
        grad_sq = em.add(em.square(grad), _shared.hyper(self, "epsilon_1", dt))
        v = self.get_slot(var, "v")
        if len(var.shape) >= 2:
            r, c = self.get_slot(var, "r"), self.get_slot(var, "c")
            r.assign(em.add(em.multiply(beta_2_t, r.value()),
                            em.multiply(1 - beta_2_t, em.reduce_mean(grad_sq, axis=-1))))
            c.assign(em.add(em.multiply(beta_2_t, c.value()),
                            em.multiply(1 - beta_2_t, em.reduce_mean(grad_sq, axis=-2))))
            row = em.divide(r.value(), em.reduce_mean(r.value(), axis=-1, keepdims=True))
            v.assign(em.multiply(em.expand_dims(row, -1), em.expand_dims(c.value(), -2)))
        else:
            v.assign(em.add(em.multiply(beta_2_t, v.value()),
                            em.multiply(1 - beta_2_t, grad_sq)))
        u_t = em.divide(grad, em.sqrt(v.value()))
        clip = _shared.hyper(self, "clip_threshold", dt)
        u_t_hat = em.divide(u_t, em.maximum(1.0, em.divide(_rms(u_t), clip)))
        var.assign_sub(em.multiply(alpha_t, u_t_hat))

"""Nadam."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _shared


class Nadam(_shared.Moments):
    """Nadam (Adam with Nesterov momentum, Dozat 2015) as Keras 3 steps it.

    With ``u_t = beta_1 * (1 - 0.5 * 0.96**t)`` and ``u_product`` the product of
    ``u_1 ... u_t``: ``m += (g - m) * (1 - beta_1); v += (g^2 - v) * (1 - beta_2); m_hat =
    u_{t+1} m / (1 - u_product * u_{t+1}) + (1 - u_t) g / (1 - u_product); w -= lr * m_hat /
    (sqrt(v / (1 - beta_2**t)) + epsilon)``. (PyTorch's ``NAdam`` is this algorithm with
    ``momentum_decay=1.0``; its default 0.004 decays the momentum schedule 250 times
    slower.)

    ``u_product`` is one scalar for the whole optimizer, as Keras's: made with the first
    variable's slots, in its dtype and on its device (Keras builds it from the first
    variable), advanced once a step before any variable is updated. It is kept as a slot of
    that variable (``u_product``, after its ``m`` and ``v``: where Keras lists it, last), so
    what puts a step's slots back puts it back too: a step ``LossScaleOptimizer`` skips, a
    call that only accumulates gradients. Slots ``m`` and ``v`` (Keras 3's ``momentum`` and
    ``velocity``). ``learning_rate``, ``beta_1``, ``beta_2`` and ``epsilon`` are read at every
    step.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> v = em.Variable(1.0)
        >>> _ = nn.optimizers.Nadam(0.1).apply_gradients([(em.constant(2.0), v)])
        >>> round(float(v), 6)
        0.893721
    """

    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.999,
                 epsilon: Any = 1e-7, **kwargs: Any) -> None:
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)
        self._u_product: Any = None

    def init_slots(self, var: Any) -> None:
        super().init_slots(var)
        if self._u_product is None:  # the first variable's, as Keras's build makes it
            self._u_product = self.add_slot(var, "u_product", 1.0, shape=())

    # --- u_product -------------------------------------------------------------------
    def _apply(self, grads: list[Any], pairs: list[tuple[Any, Any]]) -> None:
        # Keras's Nadam advances u_product in ``_backend_update_step``, once a step, before
        # its ``update_step`` reads it for each variable
        self._ensure_slots(pairs[0][1])  # (as the base class makes slots at an update)
        self._advance_u_product()
        super()._apply(grads, pairs)

    def _advance_u_product(self) -> None:
        """``u_product *= beta_1 * (1 - 0.5 * 0.96**t)`` in its dtype, on its device."""
        u = self._u_product
        dt, device = u.dtype, u.device
        b1 = _shared.like(self._on("beta_1", self._hyper("beta_1"), device), dt)
        t = em.add(em.cast(self._on("_iterations", self.iterations.value(), device), dt), 1.0)
        u.assign(em.multiply(em.multiply(u.value(), b1),
                             em.subtract(1.0, em.multiply(0.5, em.pow(0.96, t)))))

    # --- the update ------------------------------------------------------------------
    def _schedule(self, var: Any) -> tuple[Any, Any, Any, Any, Any]:
        """``u_t, u_{t+1}``, ``u_product`` and ``u_product * u_{t+1}``, and ``beta_2**t``
        in ``var``'s dtype on its device, once a step."""
        dt = var.dtype

        def make() -> tuple[Any, Any, Any, Any, Any]:
            b1, b2 = _shared.hyper(self, "beta_1", dt), _shared.hyper(self, "beta_2", dt)
            t = _shared.step(self, dt)
            u_t = em.multiply(b1, em.subtract(1.0, em.multiply(0.5, em.pow(0.96, t))))
            u_next = em.multiply(b1, em.subtract(
                1.0, em.multiply(0.5, em.pow(0.96, em.add(t, 1.0)))))
            product = _shared.like(
                self._on("_u_product", self._u_product.value(), var.device), dt)
            return u_t, u_next, product, em.multiply(product, u_next), em.pow(b2, t)

        return _shared.per_step(self, ("nadam", str(dt)), make)

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        dt = var.dtype
        lr = _shared.like(lr, dt)
        b1, b2 = _shared.hyper(self, "beta_1", dt), _shared.hyper(self, "beta_2", dt)
        u_t, u_next, product, product_next, b2_power = self._schedule(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m.assign_add(em.multiply(em.subtract(grad, m.value()), 1 - b1))
        v.assign_add(em.multiply(em.subtract(em.square(grad), v.value()), 1 - b2))
        m_hat = em.add(em.divide(em.multiply(u_next, m.value()), 1 - product_next),
                       em.divide(em.multiply(1 - u_t, grad), 1 - product))
        v_hat = em.divide(v.value(), 1 - b2_power)
        var.assign_sub(em.divide(em.multiply(m_hat, lr),
                                 em.add(em.sqrt(v_hat), _shared.hyper(self, "epsilon", dt))))

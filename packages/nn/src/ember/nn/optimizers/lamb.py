"""Lamb."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _shared


class Lamb(_shared.Moments):
    """Lamb (layer-wise adaptive moments, You et al. 2019) as Keras 3 steps it: Adam's
    bias-corrected step ``r = (m / (1 - beta_1**t)) / (sqrt(v / (1 - beta_2**t)) +
    epsilon)``, scaled per variable by the trust ratio ``||w|| / ||r||`` (1 when either norm
    is zero): ``w -= ratio * lr * r``.

    ``epsilon`` is added after the square root of the bias-corrected ``v``. Keras 3's Lamb
    has no weight-decay term of its own (the paper's ``r + lambda w``). Slots ``m`` and
    ``v`` (Keras 3's ``momentum`` and ``velocity``). ``learning_rate``, ``beta_1``,
    ``beta_2`` and ``epsilon`` are read at every step.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> v = em.Variable([3.0, 4.0])
        >>> _ = nn.optimizers.Lamb(0.1).apply_gradients([(em.constant([1.0, -1.0]), v)])
        >>> [round(float(x), 5) for x in v.numpy()]
        [2.64645, 4.35355]
    """


    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        dt = var.dtype
        lr = _shared.like(lr, dt)
        b1, b2 = _shared.hyper(self, "beta_1", dt), _shared.hyper(self, "beta_2", dt)

        def powers() -> tuple[Any, Any]:
            t = _shared.step(self, dt)
            return em.pow(b1, t), em.pow(b2, t)

        b1_power, b2_power = _shared.per_step(self, ("lamb", str(dt)), powers)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m.assign_add(em.multiply(em.subtract(grad, m.value()), 1 - b1))
        v.assign_add(em.multiply(em.subtract(em.square(grad), v.value()), 1 - b2))
        m_hat = em.divide(m.value(), 1.0 - b1_power)
        v_sqrt = em.add(em.sqrt(em.divide(v.value(), 1.0 - b2_power)),
                        _shared.hyper(self, "epsilon", dt))
        update = em.divide(m_hat, v_sqrt)
        w_norm = em.sqrt(em.reduce_sum(em.square(var.value())))
        g_norm = em.sqrt(em.reduce_sum(em.square(update)))
        # w_norm / g_norm where both are positive, else 1 (Keras's nested where, without
        # computing 0/0 where it is thrown away)
        both = em.logical_and(em.greater(w_norm, 0.0), em.greater(g_norm, 0.0))
        ratio = em.where(both, em.divide(w_norm, em.where(both, g_norm, 1.0)), 1.0)
        var.assign_sub(em.multiply(em.multiply(ratio, lr), update))

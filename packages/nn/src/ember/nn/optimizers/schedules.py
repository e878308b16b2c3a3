"""Learning-rate schedules: callables ``schedule(step)``.

Called with a Python int, a schedule gives a Python float (for printing and plotting).
Called with a tensor (an optimizer calls it with its ``iterations``' value, as Keras does)
it gives a float32 scalar tensor computed with ops, as Keras 3's schedules compute it: on
the step's device, with no host read, so a step on a GPU does not wait for the device and
a traced step (``graph.function``, ``fit``) replays for every step instead of failing a
guard on the step's value. A schedule of one's own gets the tensor too; one that can only
take an int (it raises on a tensor) is called with the step read to the host.
"""

from __future__ import annotations

import math
from typing import Any

import ember.core as em


def _is_tensor(step: Any) -> bool:
    return isinstance(step, (em.Tensor, em.Variable))


def _float32(step: Any) -> Any:
    return em.cast(step.value() if isinstance(step, em.Variable) else step, em.float32)

__all__ = ["CosineDecay", "ExponentialDecay", "LearningRateSchedule", "PiecewiseConstantDecay"]


class LearningRateSchedule:
    """Base class: ``__call__(step)`` gives the learning rate at a step (an int, or a
    tensor: see the module docstring)."""

    def __call__(self, step: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        """The constructor's arguments by name (Keras's): ``from_config`` makes an equal
        schedule, which ``nn.saving`` saves with its optimizer."""
        raise NotImplementedError(f"{type(self).__name__}: give it get_config() (and a "
                                  f"from_config, unless cls(**config) makes it) to save it")

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """``initial * decay_rate ** (step / decay_steps)`` (floored with ``staircase``).

    Examples:
        >>> ExponentialDecay(0.1, 10, 0.5)(20)
        0.025
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool = False) -> None:
        if decay_steps <= 0:
            raise ValueError(f"ExponentialDecay: decay_steps must be positive, got {decay_steps}")
        self.initial, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase = staircase

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase}

    def __call__(self, step: Any) -> Any:
        if _is_tensor(step):
            p = em.divide(_float32(step), float(self.decay_steps))
            if self.staircase:
                p = em.floor(p)
            return em.multiply(float(self.initial), em.pow(float(self.decay_rate), p))
        p = step / self.decay_steps
        if self.staircase:
            p = math.floor(p)
        return self.initial * self.decay_rate ** p


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[i]`` while ``boundaries[i-1] < step <= boundaries[i]``.

    Examples:
        >>> s = PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
        >>> s(10), s(11), s(25)
        (1.0, 0.5, 0.1)
    """

    def __init__(self, boundaries: Any, values: Any) -> None:
        if len(values) != len(boundaries) + 1:
            raise ValueError("PiecewiseConstantDecay: need one more value than boundaries")
        self.boundaries, self.values = list(boundaries), list(values)

    def get_config(self) -> dict[str, Any]:
        return {"boundaries": list(self.boundaries), "values": list(self.values)}

    def __call__(self, step: Any) -> Any:
        if _is_tensor(step):
            value = step.value() if isinstance(step, em.Variable) else step
            out = em.cast(em.zeros_like(value), em.float32) + float(self.values[-1])
            for b, v in reversed(list(zip(self.boundaries, self.values))):
                out = em.where(em.less_equal(value, b), float(v), out)
            return out
        for b, v in zip(self.boundaries, self.values):
            if step <= b:
                return v
        return self.values[-1]


class CosineDecay(LearningRateSchedule):
    """Optional linear warmup to ``warmup_target``, then cosine decay to ``alpha`` times it.

    Examples:
        >>> s = CosineDecay(0.0, decay_steps=10, warmup_target=1.0, warmup_steps=5)
        >>> s(0), s(5), round(s(15), 6)
        (0.0, 1.0, 0.0)
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, alpha: float = 0.0,
                 warmup_target: float | None = None, warmup_steps: int = 0) -> None:
        self.initial, self.decay_steps, self.alpha = initial_learning_rate, decay_steps, alpha
        self.warmup_target, self.warmup_steps = warmup_target, warmup_steps

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}

    def __call__(self, step: Any) -> Any:
        if _is_tensor(step):
            return self._on_device(_float32(step))
        if self.warmup_target is not None and step < self.warmup_steps:
            frac = step / self.warmup_steps
            return self.initial + (self.warmup_target - self.initial) * frac
        peak = self.initial if self.warmup_target is None else self.warmup_target
        s = min(max(step - self.warmup_steps, 0), self.decay_steps)
        cos = 0.5 * (1 + math.cos(math.pi * s / self.decay_steps))
        return peak * ((1 - self.alpha) * cos + self.alpha)

    def _on_device(self, step: Any) -> Any:
        peak = self.initial if self.warmup_target is None else self.warmup_target
        s = em.minimum(em.maximum(em.subtract(step, float(self.warmup_steps)), 0.0),
                       float(self.decay_steps))
        cos = em.multiply(0.5, em.add(1.0, em.cos(em.multiply(s, math.pi / self.decay_steps))))
        decayed = em.multiply(float(peak), em.add(em.multiply(cos, 1.0 - self.alpha),
                                                  float(self.alpha)))
        if self.warmup_target is None or not self.warmup_steps:
            return decayed
        frac = em.divide(step, float(self.warmup_steps))
        warm = em.add(float(self.initial),
                      em.multiply(frac, float(self.warmup_target - self.initial)))
        return em.where(em.less(step, float(self.warmup_steps)), warm, decayed)

"""Learning-rate schedules: callables ``schedule(step) -> float``."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["CosineDecay", "ExponentialDecay", "LearningRateSchedule", "PiecewiseConstantDecay"]


class LearningRateSchedule:
    """Base class: ``__call__(step)`` gives the learning rate at an (int) step."""

    def __call__(self, step: int) -> float:
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

    def __call__(self, step: int) -> float:
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

    def __call__(self, step: int) -> float:
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

    def __call__(self, step: int) -> float:
        if self.warmup_target is not None and step < self.warmup_steps:
            frac = step / self.warmup_steps
            return self.initial + (self.warmup_target - self.initial) * frac
        peak = self.initial if self.warmup_target is None else self.warmup_target
        s = min(max(step - self.warmup_steps, 0), self.decay_steps)
        cos = 0.5 * (1 + math.cos(math.pi * s / self.decay_steps))
        return peak * ((1 - self.alpha) * cos + self.alpha)

"""Learning-rate schedules: callables ``schedule(step)``, Keras 3's.

Called with a tensor (an optimizer calls it with its ``iterations``' value, as Keras does)
a schedule gives a float32 scalar tensor computed with ops, as Keras 3's schedules compute
it: on the step's device, with no host read, so a step on a GPU does not wait for the device
and a traced step (``graph.function``, ``fit``) replays for every step instead of failing a
guard on the step's value. Called with a Python int, it gives a Python float (for printing
and plotting) computed the same way in float32 on the host, so both calls give the same
number (Keras's, whose schedules compute in float32: a float64 computation floored
``log(2.25) / log(1.5)`` to 2 where float32 gives just under it, and overflowed later).
Each schedule's formula is written once (``_rate``) over ``_DEVICE`` (ops). A schedule of
one's own gets the tensor too; one that can only take an int (it raises on a tensor) is
called with the step read to the host.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

__all__ = ["CosineDecay", "CosineDecayRestarts", "ExponentialDecay", "InverseTimeDecay",
           "LearningRateSchedule", "PiecewiseConstantDecay", "PolynomialDecay"]


class _DEVICE:
    """The same functions as ops, on float32 tensors (Python numbers stay weak)."""

    floor, ceil, cos, log = staticmethod(em.floor), staticmethod(em.ceil), \
        staticmethod(em.cos), staticmethod(em.log)
    minimum, maximum, pow = staticmethod(em.minimum), staticmethod(em.maximum), \
        staticmethod(em.pow)
    where, less, less_equal = staticmethod(em.where), staticmethod(em.less), \
        staticmethod(em.less_equal)


class LearningRateSchedule:
    """Base class: ``__call__(step)`` gives the learning rate at a step (an int, or a
    tensor: see the module docstring). A subclass writes ``__call__`` (as in Keras), or
    ``_rate(o, step)``: the formula once, over ``o`` (``_DEVICE``: ops) and the step as
    a float32 tensor."""

    def __call__(self, step: Any) -> Any:
        step = _steps_array(step)
        if isinstance(step, (em.Tensor, em.Variable)):
            value = step.value() if isinstance(step, em.Variable) else step
            return self._rate(_DEVICE, em.cast(value, em.float32))
        with em.device("/cpu:0"):
            return float(self._rate(_DEVICE, em.constant(float(step), em.float32)))

    def _rate(self, o: Any, step: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: write __call__(step)")

    def get_config(self) -> dict[str, Any]:
        """The constructor's arguments by name (Keras's): ``from_config`` makes an equal
        schedule, which ``nn.saving`` saves with its optimizer."""
        raise NotImplementedError(f"{type(self).__name__}: give it get_config() (and a "
                                  f"from_config, unless cls(**config) makes it) to save it")

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)


def _steps_array(step: Any) -> Any:
    """An array (or list) of steps as a tensor, so a schedule gives the rate at each (as
    Keras's, which plots a schedule over ``np.linspace`` of steps); other steps as they
    are."""
    if isinstance(step, list) or (isinstance(step, np.ndarray) and step.ndim > 0):
        return em.constant(np.asarray(step, np.float32))
    return step


def _positive(owner: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{owner}: {name} must be a positive number, got {value!r}")


class _StepDecay(LearningRateSchedule):
    """A decay by ``decay_rate`` over each ``decay_steps`` (Keras's arguments for
    ``ExponentialDecay`` and ``InverseTimeDecay``): ``_periods`` is the step over
    ``decay_steps``, floored with ``staircase``."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool = False, name: str | None = None) -> None:
        _positive(type(self).__name__, "decay_steps", decay_steps)
        self.initial, self.decay_steps, self.decay_rate = (initial_learning_rate, decay_steps,
                                                           decay_rate)
        self.staircase, self.name = bool(staircase), name or type(self).__name__

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}

    def _periods(self, o: Any, step: Any) -> Any:
        p = step / float(self.decay_steps)
        return o.floor(p) if self.staircase else p


class ExponentialDecay(_StepDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``, the exponent floored
    with ``staircase``.

    Examples:
        >>> round(ExponentialDecay(0.1, 10, 0.5)(20), 6)  # (computed in float32)
        0.025
    """

    def _rate(self, o: Any, step: Any) -> Any:
        return o.pow(float(self.decay_rate), self._periods(o, step)) * float(self.initial)


class InverseTimeDecay(_StepDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``, the ratio floored
    with ``staircase``.

    Examples:
        >>> decay = InverseTimeDecay(0.1, 10, 1.0)
        >>> round(decay(10), 6), round(InverseTimeDecay(0.1, 10, 1.0, staircase=True)(15), 6)
        (0.05, 0.05)
    """

    def _rate(self, o: Any, step: Any) -> Any:
        return float(self.initial) / (self._periods(o, step) * float(self.decay_rate) + 1.0)


class PolynomialDecay(LearningRateSchedule):
    """From ``initial_learning_rate`` to ``end_learning_rate`` over ``decay_steps``:
    ``(initial - end) * (1 - step / decay_steps) ** power + end``, then ``end``; with
    ``cycle``, the decay restarts over the next multiple of ``decay_steps``.

    Examples:
        >>> s = PolynomialDecay(1.0, 10, end_learning_rate=0.0, power=2.0)
        >>> s(5), s(20)
        (0.25, 0.0)
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int,
                 end_learning_rate: float = 0.0001, power: float = 1.0, cycle: bool = False,
                 name: str = "PolynomialDecay") -> None:
        _positive("PolynomialDecay", "decay_steps", decay_steps)
        self.initial, self.decay_steps = initial_learning_rate, decay_steps
        self.end, self.power, self.cycle, self.name = (end_learning_rate, power, bool(cycle),
                                                       name)

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end, "power": self.power, "cycle": self.cycle,
                "name": self.name}

    def _rate(self, o: Any, step: Any) -> Any:
        steps = float(self.decay_steps)
        if self.cycle:  # the first multiple of decay_steps past the step (1 at step 0)
            steps = o.where(o.less_equal(step, 0.0), 1.0, o.ceil(step / steps)) * steps
        else:
            step = o.minimum(step, steps)
        return o.pow(1.0 - step / steps, float(self.power)) * float(
            self.initial - self.end) + float(self.end)


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[i]`` while ``boundaries[i-1] < step <= boundaries[i]`` (the step compared
    as an integer, as Keras compares it).

    Examples:
        >>> s = PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
        >>> s(10), s(11), s(25)
        (1.0, 0.5, 0.1)
    """

    def __init__(self, boundaries: Any, values: Any, name: str = "PiecewiseConstant") -> None:
        if len(values) != len(boundaries) + 1:
            raise ValueError("PiecewiseConstantDecay: need one more value than boundaries")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def get_config(self) -> dict[str, Any]:
        return {"boundaries": list(self.boundaries), "values": list(self.values),
                "name": self.name}

    def __call__(self, step: Any) -> Any:
        step = _steps_array(step)
        if isinstance(step, (em.Tensor, em.Variable)):
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
    """Optional linear warmup from ``initial_learning_rate`` to ``warmup_target`` over
    ``warmup_steps``, then cosine decay over ``decay_steps`` to ``alpha`` times the peak.

    Examples:
        >>> s = CosineDecay(0.0, decay_steps=10, warmup_target=1.0, warmup_steps=5)
        >>> s(0), s(5), round(s(15), 6)
        (0.0, 1.0, 0.0)
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, alpha: float = 0.0,
                 name: str = "CosineDecay", warmup_target: float | None = None,
                 warmup_steps: int = 0) -> None:
        _positive("CosineDecay", "decay_steps", decay_steps)
        if warmup_steps and warmup_target is None:
            raise ValueError(f"CosineDecay: warmup_steps={warmup_steps!r} needs warmup_target "
                             "(the rate to warm up to); Keras ignores warmup_steps without it")
        self.initial, self.decay_steps, self.alpha = initial_learning_rate, decay_steps, alpha
        self.warmup_target, self.warmup_steps, self.name = warmup_target, warmup_steps, name

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}

    def _decay(self, o: Any, step: Any, peak: float) -> Any:
        cos = (o.cos(step / float(self.decay_steps) * math.pi) + 1.0) * 0.5
        return (cos * (1.0 - self.alpha) + float(self.alpha)) * float(peak)

    def _rate(self, o: Any, step: Any) -> Any:
        if self.warmup_target is None:
            return self._decay(o, o.minimum(step, float(self.decay_steps)), self.initial)
        warm = float(self.warmup_steps)
        step = o.minimum(step, float(self.decay_steps) + warm)
        decayed = self._decay(o, o.maximum(step - warm, 0.0), self.warmup_target)
        if not self.warmup_steps:
            return decayed
        warming = step / warm * float(self.warmup_target - self.initial) + float(self.initial)
        return o.where(o.less(step, warm), warming, decayed)


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): the first period lasts
    ``first_decay_steps``, each next one ``t_mul`` times longer, and each restart's peak
    is ``m_mul`` times the last; within a period the rate falls to ``alpha`` times it.

    Examples:
        >>> s = CosineDecayRestarts(1.0, 10, t_mul=2.0, m_mul=0.5)
        >>> s(0), round(s(5), 6), s(10), round(s(20), 6)
        (1.0, 0.5, 0.5, 0.25)
    """

    def __init__(self, initial_learning_rate: float, first_decay_steps: int,
                 t_mul: float = 2.0, m_mul: float = 1.0, alpha: float = 0.0,
                 name: str = "SGDRDecay") -> None:
        _positive("CosineDecayRestarts", "first_decay_steps", first_decay_steps)
        _positive("CosineDecayRestarts", "t_mul", t_mul)
        self.initial, self.first_decay_steps = initial_learning_rate, first_decay_steps
        self.t_mul, self.m_mul, self.alpha, self.name = t_mul, m_mul, alpha, name

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial,
                "first_decay_steps": self.first_decay_steps, "t_mul": self.t_mul,
                "m_mul": self.m_mul, "alpha": self.alpha, "name": self.name}

    def _rate(self, o: Any, step: Any) -> Any:
        t_mul = float(self.t_mul)
        done = step / float(self.first_decay_steps)
        if t_mul == 1.0:  # periods of one length
            restart = o.floor(done)
            done = done - restart
        else:  # the periods' lengths a geometric series
            restart = o.floor(o.log(done * (t_mul - 1.0) + 1.0) / math.log(t_mul))
            before = (1.0 - o.pow(t_mul, restart)) / (1.0 - t_mul)
            done = (done - before) / o.pow(t_mul, restart)
        peak = o.pow(float(self.m_mul), restart)
        cos = (o.cos(done * math.pi) + 1.0) * 0.5 * peak
        return (cos * (1.0 - self.alpha) + float(self.alpha)) * float(self.initial)

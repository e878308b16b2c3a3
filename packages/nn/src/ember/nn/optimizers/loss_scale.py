"""LossScaleOptimizer: dynamic loss scaling for float16 training (Keras 3's).

float16 gradients underflow to zero below about 6e-8. Multiplying the loss by a large
*loss scale* multiplies every gradient by it too; the gradients are divided by it again
before the update. The scale is found as training goes: a step whose gradients hold an
inf or NaN is skipped (the variables, slots and ``iterations`` keep their values) and the
scale halves; after ``dynamic_growth_steps`` steps in a row with finite gradients it doubles.

All of it happens on the device of the variables, with ops: whether the gradients are
finite is a boolean tensor, and the skip is a select (``em.where``) between the updated and
the previous values, never a Python ``if`` on a value. So a step reads nothing back to the
host (no GPU sync) and a traced step (``graph.function``, a captured CUDA graph) replays
the same plan whichever way each step goes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

from .base import Optimizer

_BASE_ARGS = ("learning_rate", "clipnorm", "clipvalue", "global_clipnorm")


class LossScaleOptimizer(Optimizer):
    """Wraps ``inner_optimizer`` with dynamic loss scaling.

    ``fit`` wraps the compiled optimizer in one when the model's dtype policy is
    ``"mixed_float16"`` (``compile(auto_scale_loss=True)``, as Keras 3). A custom training
    loop scales the loss itself and hands the scaled gradients over::

        with tape.GradientTape() as t:
            loss = loss_fn(y, model(x))
            scaled_loss = optimizer.scale_loss(loss)
        grads = t.gradient(scaled_loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))  # unscales them

    Args:
        inner_optimizer: the ember optimizer that makes the updates (its learning rate,
            clipping and slots are its own).
        initial_scale: the first loss scale. High on purpose: a scale too high is lowered
            in a few skipped steps, one too low is raised only every
            ``dynamic_growth_steps``.
        dynamic_growth_steps: after this many steps in a row with finite gradients, the
            scale doubles.
        name: the optimizer's name.
        **kwargs: only ``dynamic=True`` (Keras's; ``False`` is refused: a fixed scale is
            the inner optimizer's business). ``learning_rate`` and the clipping arguments
            are refused by name: set them on ``inner_optimizer``.

    Attributes:
        dynamic_scale: the current loss scale, a float32 variable on the variables' device.
        step_counter: finite steps since the scale last changed, an int64 variable.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> opt = nn.mixed_precision.LossScaleOptimizer(nn.optimizers.SGD(0.5),
        ...                                             initial_scale=4.0)
        >>> v = em.Variable(1.0)
        >>> _ = opt.apply_gradients([(em.constant(8.0), v)])  # 8 / 4 = 2: v = 1 - 0.5 * 2
        >>> float(v), float(opt.dynamic_scale)
        (0.0, 4.0)
        >>> _ = opt.apply_gradients([(em.constant(float("inf")), v)])  # skipped, halved
        >>> float(v), float(opt.dynamic_scale), int(opt.iterations)
        (0.0, 2.0, 1)
    """

    def __init__(self, inner_optimizer: Any, initial_scale: float = 2.0 ** 15,
                 dynamic_growth_steps: int = 2000, name: str | None = None,
                 **kwargs: Any) -> None:
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer: dynamic=False is not supported (Keras 3 "
                             "dropped it); a fixed loss scale is a factor on the loss")
        for arg in _BASE_ARGS:
            if arg in kwargs:
                raise ValueError(f"LossScaleOptimizer does not take {arg}=; set {arg} on the "
                                 f"inner_optimizer")
        if kwargs:
            raise TypeError(f"LossScaleOptimizer: unexpected keyword arguments {sorted(kwargs)}")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"LossScaleOptimizer: inner_optimizer must be an ember.nn "
                            f"optimizer, got {type(inner_optimizer).__name__}")
        if isinstance(inner_optimizer, LossScaleOptimizer):
            raise ValueError("LossScaleOptimizer: inner_optimizer is already a "
                             "LossScaleOptimizer (the loss would be scaled twice)")
        scale = float(initial_scale)
        if not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"LossScaleOptimizer: initial_scale must be a positive finite "
                             f"number, got {initial_scale!r}")
        if int(dynamic_growth_steps) != dynamic_growth_steps or dynamic_growth_steps < 1:
            raise ValueError(f"LossScaleOptimizer: dynamic_growth_steps must be an integer "
                             f">= 1, got {dynamic_growth_steps!r}")
        self.name = name or type(self).__name__
        self.inner_optimizer = inner_optimizer
        self.initial_scale = scale
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self.dynamic_scale = em.Variable(np.float32(scale), name=f"{self.name}/dynamic_scale",
                                         trainable=False)
        self.step_counter = em.Variable(np.int64(0), name=f"{self.name}/step_counter",
                                        trainable=False)

    # --- what the inner optimizer owns -------------------------------------------------
    # The hyperparameter attributes (learning_rate, lr, clipnorm, ...) read and write the
    # inner optimizer's, as Keras's learning_rate property does.
    def _hyper_attr(self, name: str) -> Any:
        return self.inner_optimizer._hyper_attr(name)

    def _set_hyper(self, name: str, value: Any) -> None:
        self.inner_optimizer._set_hyper(name, value)

    @property
    def iterations(self) -> Any:
        """The inner optimizer's step count: skipped steps do not count."""
        return self.inner_optimizer.iterations

    @iterations.setter
    def iterations(self, value: Any) -> None:
        # The wrapper has no step count of its own (an ``Optimizer``'s is a plain attribute):
        # setting it sets the inner optimizer's, as the hyperparameters do.
        self.inner_optimizer.iterations = value

    @property
    def variables(self) -> list[Any]:
        return [self.dynamic_scale, self.step_counter] + self.inner_optimizer.variables

    def add_slot(self, var: Any, slot_name: str, initializer: Any = 0.0,
                 shape: Any = None) -> Any:
        return self.inner_optimizer.add_slot(var, slot_name, initializer, shape)

    def get_slot(self, var: Any, slot_name: str) -> Any:
        return self.inner_optimizer.get_slot(var, slot_name)

    def get_slot_names(self) -> list[str]:
        return self.inner_optimizer.get_slot_names()

    # --- checkpoint protocol ---------------------------------------------------------
    def __checkpoint_children__(self) -> dict[str, Any]:
        return {"inner_optimizer": self.inner_optimizer, "dynamic_scale": self.dynamic_scale,
                "step_counter": self.step_counter}

    def __checkpoint_slots__(self) -> list[tuple[Any, str, Any]]:
        return []  # the inner optimizer's, saved under inner_optimizer/slots/

    # --- scaling ---------------------------------------------------------------------
    def scale_loss(self, loss: Any) -> Any:
        """``loss * dynamic_scale``: differentiate this, and give the gradients to
        ``apply_gradients`` as they come."""
        loss = loss if isinstance(loss, em.Tensor) else em.convert_to_tensor(loss)
        self._place(loss.device)
        return em.multiply(loss, self.dynamic_scale.value())

    def check_finite(self, grads: list[Any]) -> Any:
        """A boolean tensor: no gradient in ``grads`` holds an inf or a NaN (None ones are
        left out). Computed on the gradients' device, without reading it back."""
        flags = [em.reduce_all(em.isfinite(g)) for g in grads if g is not None]
        if not flags:
            return em.constant(True)
        device = flags[0].device
        flags = [f if f.device == device else f.to(device) for f in flags]
        return flags[0] if len(flags) == 1 else em.reduce_all(em.stack(flags))

    def compute_gradients(self, loss: Any, var_list: Any = None) -> list[tuple[Any, Any]]:
        """``[(gradient, variable), ...]`` of the scaled ``loss()`` (a callable): what
        ``apply_gradients`` takes (it unscales them)."""
        from ember import tape

        if not callable(loss):
            raise TypeError(f"{self.name}: minimize/compute_gradients need a callable loss "
                            f"(a tensor has no record of how it was computed)")
        with tape.GradientTape() as t:
            value = loss()
            scaled = self.scale_loss(value)
        vs = list(var_list) if var_list is not None else [
            v for v in t.watched_variables() if v.trainable]
        grads = t.gradient(scaled, vs)
        self._last_loss = value
        return list(zip(grads, vs))

    # --- applying --------------------------------------------------------------------
    def _place(self, device: str) -> None:
        """Move the scale and the counter (made with the optimizer, on the device current
        then) to ``device``, once, as the base class moves ``iterations``."""
        if self.__dict__.get("_placed"):
            return
        self._placed = True
        for var in (self.dynamic_scale, self.step_counter):
            if var.device != device:
                var.to_device(device)
                if em.recording.tracers():
                    em.recording.notify_variable_created(var)

    def apply_gradients(self, grads_and_vars: Any, global_step: Any = None,
                        name: str | None = None) -> Any:
        """Unscale the gradients and update through the inner optimizer when they are all
        finite; otherwise leave every variable, slot and ``iterations`` as they were.
        Then halve the scale (a non-finite step) or count the step, doubling the scale
        every ``dynamic_growth_steps`` finite steps. ``global_step`` counts applied steps.

        Returns:
            ``iterations``.
        """
        gv = list(grads_and_vars)
        pairs = [(g, v) for g, v in gv if g is not None]
        if not pairs:
            raise ValueError(f"{self.name}: no gradients provided for any variable")
        inner = self.inner_optimizer
        device = pairs[0][1].device
        self._place(device)
        inner._place(device)
        with em.recording.paused():
            grads = [g if type(g) is em.Tensor else em.convert_to_tensor(g) for g, _ in pairs]
            finite = self.check_finite(grads)
            scale = self.dynamic_scale.value()
            on = _PerDevice(finite, scale)
            unscaled = iter([em.divide(g, on.scale(g.device)) for g in grads])
            # what the update may write, as it is now: a skipped step puts it back
            before = {v.uid: (v, v.value()) for _, v in pairs}
            before[inner.iterations.uid] = (inner.iterations, inner.iterations.value())
            for slots in inner._slots.values():
                for slot in slots.values():
                    before[slot.uid] = (slot, slot.value())
            listener = _SlotsMade(before)  # slots the update makes, at their initial value
            inner._ember_listeners().append(listener)
            try:
                inner.apply_gradients([(None if g is None else next(unscaled), v)
                                       for g, v in gv])
            finally:
                inner._ember_listeners().remove(listener)
            for var, old in before.values():
                var.assign(em.where(on.finite(var.device), var.value(), old))
            self._update_scale(finite, scale)
            if global_step is not None:
                global_step.assign_add(em.cast(on.finite(global_step.device),
                                               global_step.dtype))
        return self.iterations

    def _update_scale(self, finite: Any, scale: Any) -> None:
        counter = self.step_counter.value()
        doubled = em.multiply(scale, 2.0)
        # grow after dynamic_growth_steps finite steps, unless float32 cannot hold it
        grow = em.logical_and(em.logical_and(finite, em.equal(
            counter, self.dynamic_growth_steps - 1)), em.isfinite(doubled))
        self.step_counter.assign(em.where(em.logical_and(finite, em.logical_not(grow)),
                                          em.add(counter, 1), em.zeros_like(counter)))
        self.dynamic_scale.assign(em.where(grow, doubled, em.where(
            finite, scale, em.multiply(scale, 0.5))))

    def finalize_variable_values(self, var_list: Any) -> None:
        """The inner optimizer's (its ``use_ema`` averages, written at ``fit``'s end)."""
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self) -> dict[str, Any]:
        inner = self.inner_optimizer
        return {"name": self.name,
                "inner_optimizer": {"class_name": type(inner).__name__,
                                    "config": inner.get_config()},
                "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> LossScaleOptimizer:
        """A new LossScaleOptimizer from ``get_config()``'s dict; the inner optimizer is an
        optimizer, or ``{"class_name": ..., "config": ...}`` naming one of
        ``ember.nn.optimizers`` (no other class is looked up)."""
        from .. import optimizers

        config = dict(config)
        inner = config.pop("inner_optimizer")
        if isinstance(inner, dict):
            klass = getattr(optimizers, str(inner.get("class_name")), None)
            if not (isinstance(klass, type) and issubclass(klass, Optimizer)
                    and klass.__name__ in optimizers.__all__ and klass is not cls):
                raise ValueError(f"LossScaleOptimizer.from_config: unknown inner optimizer "
                                 f"class {inner.get('class_name')!r}")
            inner = klass(**inner.get("config", {}))
        return cls(inner, **config)


class _PerDevice:
    """``finite`` and the scale on each device asked for (variables on several devices)."""

    def __init__(self, finite: Any, scale: Any) -> None:
        self._finite = {finite.device: finite}
        self._scale = {scale.device: scale}

    @staticmethod
    def _get(cache: dict[str, Any], device: str) -> Any:
        hit = cache.get(device)
        if hit is None:
            hit = cache[device] = next(iter(cache.values())).to(device)
        return hit

    def finite(self, device: str) -> Any:
        return self._get(self._finite, device)

    def scale(self, device: str) -> Any:
        return self._get(self._scale, device)


class _SlotsMade:
    """Listens to the inner optimizer during an update: a slot it makes is recorded with
    the value it starts from, so a skipped step leaves it there."""

    def __init__(self, before: dict[int, tuple[Any, Any]]) -> None:
        self._before = before

    def slot_created(self, owner: Any, primary: Any, slot_name: str, slot: Any) -> None:
        self._before.setdefault(slot.uid, (slot, slot.value()))

    def child_created(self, owner: Any, name: str, child: Any) -> None:
        pass

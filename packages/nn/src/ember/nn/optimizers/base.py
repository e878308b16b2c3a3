"""Optimizer: per-parameter ``init_slots`` / ``apply_single`` with slots as variables.

Subclasses write the update of one variable from its gradient; the base class handles
``None`` gradients, clipping, hyperparameters, slot creation on the parameter's device, the
``iterations`` counter, ``global_step``, weight constraints and the checkpoint protocol
(``iterations`` and the learning rate as children, slots as slots).

Every hyperparameter (learning rate, momentum, betas, epsilon, rho, weight decay, clipping)
is a float, a ``Variable``, a tensor, a zero-argument callable or a
``LearningRateSchedule`` (called with ``iterations``), read afresh at every step as
TensorFlow does: ``lr.assign(0.01)`` changes the next step.

Hyperparameters live on the device of the variables they update. The optimizer's own
variables (``iterations``, a learning rate given as a number) move there at the first
update, whatever device was current when the optimizer was made (Keras code builds it
before ``with em.device("/gpu:0")``); a tensor-valued hyperparameter elsewhere is copied.
Never a host number instead: a traced step would bake it in, and a later change would be
silently ignored.
"""

from __future__ import annotations

import inspect
import re
import warnings
from typing import Any

import numpy as np

import ember.core as em

from .. import constraints as _constraints
from ..layers._tracking import _Listened
from .schedules import LearningRateSchedule


class Hyper:
    """A hyperparameter attribute: reads give its current value, writes replace its source.

    Sources: a number, a ``Variable`` or tensor (read at each step), a zero-argument
    callable, or a ``LearningRateSchedule`` (called with the step count).
    """

    name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        if not self.name:  # an alias (``lr = learning_rate``) keeps the first name
            self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj._hyper_attr(self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        obj._set_hyper(self.name, value)


def _is_dynamic(value: Any) -> bool:
    return isinstance(value, (em.Variable, em.Tensor, LearningRateSchedule)) or \
        (callable(value) and not isinstance(value, (int, float, np.number)))


class Optimizer(_Listened):
    """Base class of optimizers.

    Args:
        learning_rate: a float, a ``Variable`` or tensor, a ``LearningRateSchedule``
            (called with the step) or a callable with no arguments; read at every step.
        clipnorm: clip each gradient to this L2 norm.
        clipvalue: clip each gradient element to ``[-clipvalue, clipvalue]``.
        global_clipnorm: scale all gradients together so their global norm is at most this.
            A clip of 0 clips nothing, as Keras 3's (``if self.clipnorm and self.clipnorm >
            0``); a negative one is refused by name (Keras ignores it).
        name: the optimizer's name (used in messages).
        weight_decay: decoupled weight decay, Keras 3's for every optimizer: before each
            update ``v -= v * weight_decay * lr`` for every variable not excluded by
            ``exclude_from_weight_decay``.
        use_ema: keep an exponential moving average of each variable (``average`` slots:
            ``average = m * average + (1 - m) * v`` after every step, ``m`` 0 at the first
            step and ``ema_momentum`` after, as Keras 3); ``finalize_variable_values``
            (which ``fit`` calls after its last epoch) writes the averages into the
            variables.
        ema_momentum: the average's momentum, in ``[0, 1]``.
        ema_overwrite_frequency: with ``use_ema``, write the averages into the variables
            every this many steps (an integer >= 1), as Keras 3.
        loss_scale_factor: a fixed loss scale: ``scale_loss`` (which ``fit`` calls)
            multiplies the loss by it and ``apply_gradients`` divides the gradients by it.
        gradient_accumulation_steps: an integer >= 2: the gradients of that many calls are
            averaged into one update, as Keras 3's. ``iterations`` counts updates (Keras's
            ``optimizer.iterations``); a learning-rate schedule is called with the number
            of calls (Keras's ``_iterations``). Computed on the device without a host read
            (a traced step stays one trace): a call that only accumulates runs the update
            and keeps what it wrote only on the update step.
    """

    # Hyperparameters whose being zero or not decides slots or the update's form.
    _STRUCTURAL = frozenset({"momentum", "weight_decay"})
    _CLIPS = ("clipnorm", "clipvalue", "global_clipnorm")

    learning_rate = Hyper()
    clipnorm = Hyper()
    clipvalue = Hyper()
    global_clipnorm = Hyper()
    weight_decay = Hyper()

    def __init__(self, learning_rate: Any = 0.001, clipnorm: Any = None,
                 clipvalue: Any = None, global_clipnorm: Any = None,
                 name: str | None = None, weight_decay: Any = None, use_ema: bool = False,
                 ema_momentum: float = 0.99, ema_overwrite_frequency: Any = None,
                 loss_scale_factor: Any = None,
                 gradient_accumulation_steps: Any = None) -> None:
        who = type(self).__name__
        if clipnorm is not None and global_clipnorm is not None and \
                not (_is_zero(clipnorm) or _is_zero(global_clipnorm)):
            raise ValueError(f"{who}: set at most one of clipnorm and global_clipnorm")
        if gradient_accumulation_steps is not None and (
                isinstance(gradient_accumulation_steps, bool) or
                not isinstance(gradient_accumulation_steps, (int, np.integer)) or
                gradient_accumulation_steps < 2):
            raise ValueError(f"{who}: gradient_accumulation_steps must be an integer >= 2 "
                             f"(or None), got {gradient_accumulation_steps!r}")
        if not isinstance(use_ema, (bool, np.bool_)):
            raise TypeError(f"{who}: use_ema must be a bool, got {use_ema!r}")
        if not use_ema and (ema_momentum != 0.99 or ema_overwrite_frequency is not None):
            raise ValueError(f"{who}: ema_momentum and ema_overwrite_frequency act only with "
                             f"use_ema=True (got ema_momentum={ema_momentum!r}, "
                             f"ema_overwrite_frequency={ema_overwrite_frequency!r})")
        if use_ema and not 0 <= float(ema_momentum) <= 1:
            raise ValueError(f"{who}: ema_momentum must be in [0, 1], got {ema_momentum!r}")
        if ema_overwrite_frequency is not None and (
                isinstance(ema_overwrite_frequency, bool) or
                not isinstance(ema_overwrite_frequency, (int, np.integer)) or
                ema_overwrite_frequency < 1):
            raise ValueError(f"{who}: ema_overwrite_frequency must be an integer >= 1 or "
                             f"None, got {ema_overwrite_frequency!r}")
        if loss_scale_factor is not None:
            factor = _number(self, "loss_scale_factor", loss_scale_factor)
            if not (factor > 0 and np.isfinite(factor)):
                raise ValueError(f"{who}: loss_scale_factor must be a positive number, got "
                                 f"{loss_scale_factor!r}")
            loss_scale_factor = factor
        self.use_ema = bool(use_ema)
        self.ema_momentum = float(ema_momentum)
        self.ema_overwrite_frequency = None if ema_overwrite_frequency is None else \
            int(ema_overwrite_frequency)
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = None if gradient_accumulation_steps is None \
            else int(gradient_accumulation_steps)
        self._wd_excluded: set[int] = set()
        self._wd_pattern: str | None = None
        self.name = name or type(self).__name__
        self._hypers: dict[str, Any] = {}
        self._traced = False  # a graph.function trace has read the hyperparameters
        self.iterations = em.Variable(np.int64(0), name=f"{self.name}/iterations",
                                      trainable=False)
        self.learning_rate = learning_rate
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.weight_decay = weight_decay
        if self.gradient_accumulation_steps:  # calls since the last update (0 .. steps-1)
            self._accumulated = em.Variable(np.int64(0), name=f"{self.name}/accumulated",
                                            trainable=False)
        self._slots: dict[int, dict[str, Any]] = {}
        self._primaries: dict[int, Any] = {}
        self._warned: set[int] = set()
        self._known_step: int | None = None
        self._now: dict[str, Any] | None = None

    # --- hyperparameters -------------------------------------------------------------
    def _set_hyper(self, name: str, value: Any) -> None:
        """A number becomes (or is assigned into) a float32 variable the optimizer owns, as
        TensorFlow's optimizers hold their hyperparameters: a traced step reads it, so
        ``opt.momentum = 0.5`` changes the next replay (a Python float would be baked into
        the trace and the change silently ignored). Its value is mirrored on the host for
        decisions made in Python (is momentum zero?), so those read no device."""
        mirror = self.__dict__.setdefault("_mirror", {})
        old = self._hypers.get(name)
        if name in self._CLIPS and value is not None and not _is_dynamic(value):
            number = _number(self, name, value)
            if number < 0:
                raise ValueError(f"{self.name}: {name} must be positive (or 0 or None: no "
                                 f"clipping), got {value!r}")
            if number == 0:  # Keras 3: ``if self.clipnorm and self.clipnorm > 0``
                value = None
        if value is None or _is_dynamic(value):
            if old is not None and value is not old and self.__dict__.get("_traced"):
                raise ValueError(
                    f"{self.name}: {name} cannot be replaced by "
                    f"{'None' if value is None else type(value).__name__} after a traced step "
                    f"read it: the replays would keep reading the old one. Assign a number "
                    f"(opt.{name} = 0.5), or a new value into the variable you gave")
            mirror.pop(name, None)
            self._hypers[name] = value
            return
        number = _number(self, name, value)
        if isinstance(old, em.Variable) and old.uid in _OWNED or (
                name == "learning_rate" and isinstance(old, em.Variable)):
            before = mirror.get(name)
            if before is not None and (before == 0) != (number == 0) and \
                    self.__dict__.get("_traced") and name in self._STRUCTURAL:
                raise ValueError(
                    f"{self.name}: {name} changed from {before} to {number} after a traced "
                    f"step was made with {name} {'zero' if before == 0 else 'nonzero'}; the "
                    f"trace's slots and update follow that choice, so the replays would "
                    f"ignore the change. Set {name} before the first traced step")
            old.assign(np.asarray(number, dtype=old.dtype))  # what traced steps read
            mirror[name] = number
            return
        var = em.Variable(np.float32(number), name=f"{self.name}/{name}", trainable=False)
        _OWNED.add(var.uid)
        self._hypers[name] = var
        mirror[name] = number

    def _hyper(self, name: str) -> Any:
        """The value of hyperparameter ``name`` for this step's arithmetic: a float, or a
        Tensor when its source is a variable or tensor (None when unset).

        Inside ``apply_gradients`` every source is read once per step (a callable is
        called once, however many variables are updated). A variable's value stays a
        tensor, so graph mode replays it as it changes and a GPU step needs no sync.
        """
        now = self.__dict__.get("_now")
        if now is not None and name in now:
            return now[name]
        return self._read_hyper(name)

    def _read_hyper(self, name: str) -> Any:
        src = self._hypers.get(name)
        if src is None or isinstance(src, float):
            return src
        if isinstance(src, em.Variable):
            return src.value()
        if isinstance(src, em.Tensor):
            return src
        if isinstance(src, LearningRateSchedule):
            return self._scheduled(src)
        return float(src())

    def _scheduled(self, schedule: Any) -> Any:
        """The learning rate of ``schedule`` at this step: called with ``iterations``' value
        (a tensor, as Keras calls it), it computes with ops on that device, so nothing is
        read to the host: no GPU sync a step, and a traced step replays instead of failing
        a guard on the step's value at every call (which sent traced steps and ``fit``
        with a schedule back to eager). A schedule that takes only an int is called with
        the step read to the host, as before."""
        try:
            rate = schedule(self._calls())
        except Exception:  # a schedule of one's own that wants an int
            rate = None
        if isinstance(rate, em.Tensor) and not rate.shape and rate.dtype.kind == "f":
            return rate if rate.dtype == em.float32 else em.cast(rate, em.float32)
        if isinstance(rate, (int, float)) and not isinstance(rate, bool):
            return float(rate)  # a constant
        step = int(self._host_value(self.iterations))
        if self.gradient_accumulation_steps:
            return float(schedule(step * self.gradient_accumulation_steps +
                                  int(self._accumulated.numpy())))
        self._known_step = step + 1
        return float(schedule(step))

    def _calls(self) -> Any:
        """The step a schedule is called with: ``iterations``' value, or with gradient
        accumulation the number of calls (Keras 3 calls its schedule with
        ``_iterations``, which counts calls, where ``iterations`` counts updates)."""
        it = self.iterations.value()
        steps = self.gradient_accumulation_steps
        if not steps:
            return it
        return em.add(em.multiply(it, np.int64(steps)), self._accumulated.value())

    def _host_hyper(self, name: str) -> Any:
        """Hyperparameter ``name`` as a float, for decisions made in Python (is momentum
        zero?) and for ``get_config``."""
        src = self._hypers.get(name)
        mirror = self.__dict__.get("_mirror", {})
        if name in mirror and name != "learning_rate" and isinstance(src, em.Variable) \
                and src.uid in _OWNED:  # (a user may assign into the learning rate's)
            return mirror[name]
        if isinstance(src, (em.Variable, em.Tensor)):
            return self._host_value(src)
        value = self._hyper(name)
        return float(value) if isinstance(value, em.Tensor) else value  # a schedule's

    def _host_value(self, src: Any) -> float:
        """``float(src)``, copied from the device only when its value changed: tensors are
        immutable, so a variable holding the same value tensor holds the same value (no
        host copy, hence no GPU sync, per step). While graph mode traces, the value is
        always read, so the trace guards it."""
        t = src.value() if isinstance(src, em.Variable) else src
        cache = self.__dict__.setdefault("_host_values", {})
        key = src.uid if isinstance(src, em.Variable) else id(src)
        hit = cache.get(key)
        if hit is not None and hit[0] is t and not em.recording.tracers():
            return float(hit[1])
        value = float(t.numpy())
        cache[key] = (t, value)
        return value

    def _user_dynamic(self, name: str) -> bool:
        """Whether the user gave ``name`` as a variable, tensor, callable or schedule (its
        value may change without this optimizer seeing it)."""
        src = self._hypers.get(name)
        return src is not None and _is_dynamic(src) and not (
            isinstance(src, em.Variable) and src.uid in _OWNED)

    def _hyper_attr(self, name: str) -> Any:
        src = self._hypers.get(name)
        if name == "learning_rate" and isinstance(src, em.Variable):
            return src  # so ``opt.learning_rate.assign(...)`` works, as in Keras
        if isinstance(src, em.Variable) and src.uid in _OWNED:
            return self._host_hyper(name)  # ``opt.beta_1`` is a number, as in Keras
        if isinstance(src, em.Variable):
            return src
        return self._hyper(name)

    lr = learning_rate

    # --- checkpoint protocol ---------------------------------------------------------
    def __checkpoint_children__(self) -> dict[str, Any]:
        kids: dict[str, Any] = {"iterations": self.iterations}
        if self.gradient_accumulation_steps:
            kids["accumulated"] = self._accumulated
        for name, src in self._hypers.items():
            # the learning rate, and a user's variable; numbers given to the constructor
            # are its config (what Keras saves), not state
            if isinstance(src, em.Variable) and (name == "learning_rate" or
                                                 src.uid not in _OWNED):
                kids[name] = src
        return kids

    def __checkpoint_slots__(self) -> list[tuple[Any, str, Any]]:
        return [(self._primaries[uid], name, slot) for uid, slots in self._slots.items()
                for name, slot in slots.items()]

    # --- slots -----------------------------------------------------------------------
    def add_slot(self, var: Any, slot_name: str, initializer: Any = 0.0,
                 shape: Any = None) -> Any:
        """Create (or return) the slot ``slot_name`` of ``var`` on ``var``'s device, of
        ``var``'s shape or ``shape`` (Adafactor's row and column means, Nadam's scalar)."""
        slots = self._slots.setdefault(var.uid, {})
        if slot_name in slots:
            return slots[slot_name]
        self._primaries[var.uid] = var
        with em.device(var.device):
            value = np.full(var.shape if shape is None else tuple(shape), initializer,
                            dtype=var.dtype)
            slot = em.Variable(value, name=f"{var.name.split(':')[0]}/{slot_name}",
                               trainable=False)
        slots[slot_name] = slot
        for listener in list(self._ember_listeners()):
            listener.slot_created(self, var, slot_name, slot)
        return slot

    def get_slot(self, var: Any, slot_name: str) -> Any:
        return self._slots[var.uid][slot_name]

    def get_slot_names(self) -> list[str]:
        names: list[str] = []
        for slots in self._slots.values():
            names += [n for n in slots if n not in names]
        return names

    @property
    def variables(self) -> list[Any]:
        out = list(self.__checkpoint_children__().values())
        return out + [s for slots in self._slots.values() for s in slots.values()]

    def init_slots(self, var: Any) -> None:
        """Create the slots ``var`` needs (none by default)."""

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        raise NotImplementedError

    # --- applying --------------------------------------------------------------------
    def _clip(self, grad: Any) -> Any:
        """``grad`` clipped by ``clipvalue`` and ``clipnorm`` (``global_clipnorm`` acts on
        all gradients together, in ``_apply``)."""
        clipvalue, clipnorm = self._hyper("clipvalue"), self._hyper("clipnorm")
        if clipvalue is not None:
            grad = em.clip_by_value(grad, -clipvalue, clipvalue)
        if clipnorm is not None:
            grad = em.clip_by_norm(grad, clipnorm)
        return grad

    def _filter(self, grads_and_vars: Any) -> list[tuple[Any, Any]]:
        pairs = []
        for g, v in grads_and_vars:
            if g is None:
                # Non-trainable variables (batch-norm statistics) have no gradient by
                # design; a trainable one is worth one warning, not one per step.
                if v.trainable and v.uid not in self._warned:
                    self._warned.add(v.uid)
                    warnings.warn(f"{self.name}: no gradient for variable {v.name!r}; "
                                  f"skipping it", stacklevel=3)
                continue
            pairs.append((g, v))
        return pairs

    def apply_gradients(self, grads_and_vars: Any, global_step: Any = None,
                        name: str | None = None) -> Any:
        """Update each variable from its gradient; ``None`` gradients are skipped.

        Increments ``iterations`` and, when given, ``global_step``. Returns ``iterations``.
        """
        pairs = self._filter(grads_and_vars)
        if not pairs:
            raise ValueError(f"{self.name}: no gradients provided for any variable")
        self._place(pairs[0][1].device)
        if not self._traced and em.recording.tracers():
            self._traced = True
        with em.recording.paused():
            grads = [g if type(g) is em.Tensor else em.convert_to_tensor(g) for g, _ in pairs]
            if self.loss_scale_factor is not None:  # Keras 3: g / loss_scale_factor
                grads = [em.divide(g, self.loss_scale_factor) for g in grads]
            # the count before this call's update (the averages'), read only for them
            step = self.iterations.value() if self.use_ema else None
            if self.gradient_accumulation_steps:
                updated = self._apply_accumulating(grads, pairs)
            else:
                self._apply_now(grads, pairs)
                updated = None
            if self.use_ema:
                self._update_averages(pairs, step)
            if self._known_step is not None:  # a schedule read the step: keep it on the host
                self.__dict__.setdefault("_host_values", {})[self.iterations.uid] = (
                    self.iterations.value(), float(self._known_step))
                self._known_step = None
            if global_step is not None:
                global_step.assign_add(1 if updated is None else em.cast(
                    updated.to(global_step.device), global_step.dtype))
        return self.iterations

    def _apply_now(self, grads: list[Any], pairs: list[tuple[Any, Any]]) -> None:
        """One update: the hyperparameters read once, clipping, weight decay, each
        variable's update, constraints, and ``iterations`` counted."""
        self._now = {name: self._read_hyper(name) for name in self._hypers}
        try:
            self._apply(grads, pairs)
        finally:
            self._now = None
        self.iterations.assign_add(1)

    def _ensure_slots(self, var: Any) -> None:
        """``init_slots(var)`` at ``var``'s first update."""
        if var.uid not in self._slots:
            self._slots[var.uid] = {}
            self._primaries[var.uid] = var
            self.init_slots(var)

    def _apply_accumulating(self, grads: list[Any], pairs: list[tuple[Any, Any]]) -> Any:
        """Gradient accumulation, as Keras 3's: the gradients add into
        ``gradient_accumulator`` slots, and every ``gradient_accumulation_steps``-th call
        updates with their mean and zeroes them. Decided on the device (no host read, so a
        traced step stays one trace): every call runs the update on the mean so far, and
        a call that is not an update step puts back what it wrote (variables, slots,
        ``iterations``), as ``LossScaleOptimizer`` skips a step. Returns the bool tensor
        "this call updated"."""
        steps = self.gradient_accumulation_steps
        assert steps is not None  # (only called with accumulation)
        count = self._accumulated
        update = em.equal(count.value(), np.int64(steps - 1))
        on = _OnDevices(update)
        for _, v in pairs:
            self._ensure_slots(v)
        accs = [self.add_slot(v, "gradient_accumulator") for _, v in pairs]
        totals = [em.add(a.value(), g if g.dtype == a.dtype else em.cast(g, a.dtype))
                  for a, g in zip(accs, grads)]
        keep = {a.uid for a in accs}
        before = {v.uid: (v, v.value()) for _, v in pairs}
        before[self.iterations.uid] = (self.iterations, self.iterations.value())
        for slots in self._slots.values():
            for slot in slots.values():
                if slot.uid not in keep:
                    before[slot.uid] = (slot, slot.value())
        listener = _SlotsMade(before)  # slots the update makes, at their initial value
        self._ember_listeners().append(listener)
        try:
            self._apply_now([em.divide(t, float(steps)) for t in totals], pairs)
        finally:
            self._ember_listeners().remove(listener)
        for var, old in before.values():
            var.assign(em.where(on(var.device), var.value(), old))
        for a, t in zip(accs, totals):
            a.assign(em.where(on(a.device), em.zeros_like(t), t))
        count.assign(em.where(update, em.zeros_like(count.value()),
                              em.add(count.value(), np.int64(1))))
        return update

    def _update_averages(self, pairs: list[tuple[Any, Any]], step: Any) -> None:
        """``use_ema``: ``average = m * average + (1 - m) * v`` for every variable this
        optimizer updates, ``m`` 0 at the first step (``step``, the count before this
        call, is 0) and ``ema_momentum`` after; every ``ema_overwrite_frequency`` steps
        the averages are written into the variables. As Keras 3's, on the device."""
        for _, v in pairs:
            self._ensure_slots(v)
            self.add_slot(v, "average")
        first = _OnDevices(em.not_equal(step, np.int64(0)))
        freq = self.ema_overwrite_frequency
        overwrite = None if not freq else _OnDevices(em.equal(
            em.floormod(em.add(step, np.int64(1)), np.int64(freq)), np.int64(0)))
        for uid, slots in self._slots.items():
            avg = slots.get("average")
            if avg is None:
                continue
            v = self._primaries[uid]
            m = em.multiply(em.cast(first(v.device), v.dtype), self.ema_momentum)
            avg.assign(em.add(em.multiply(m, avg.value()),
                              em.multiply(em.subtract(1.0, m), v.value())))
            if overwrite is not None:
                v.assign(em.where(overwrite(v.device), avg.value(), v.value()))

    def finalize_variable_values(self, var_list: Any) -> None:
        """With ``use_ema``, write each variable's moving average into it (``fit`` calls
        this after its last epoch, as Keras 3's); otherwise nothing."""
        if not self.use_ema:
            return
        for v in var_list:
            avg = self._slots.get(v.uid, {}).get("average")
            if avg is not None:
                v.assign(avg.value())

    def exclude_from_weight_decay(self, var_list: Any = None, var_names: Any = None) -> None:
        """Leave ``var_list``'s variables, and every variable whose name contains one of
        ``var_names`` (``re.search``, as Keras 3), out of ``weight_decay``.

        Raises:
            ValueError: called after the first update (Keras: after ``build``).
        """
        if self._slots or self.__dict__.get("_placed"):
            raise ValueError(f"{self.name}: exclude_from_weight_decay() can only be "
                             "configured before the optimizer's first update")
        self._wd_excluded = {v.uid for v in var_list or ()}
        self._wd_pattern = "|".join(sorted(set(var_names))) if var_names else None

    def _use_weight_decay(self, var: Any) -> bool:
        if var.uid in self._wd_excluded:
            return False
        return self._wd_pattern is None or re.search(self._wd_pattern, var.name) is None

    def _place(self, device: str) -> None:
        """Move the optimizer's own variables to ``device`` (where the first variable it
        updates lives), once, at the first update.

        They are made with the optimizer, on the device current then: one built before
        ``with em.device("/gpu:0")`` would keep them on the host and every update would mix
        devices. Moved in place, they stay the objects that ``opt.learning_rate.assign``,
        ``opt.iterations`` and checkpoints hold, and a step uploads nothing. While graph mode
        traces, the move is reported as making variables: that call then runs as traced
        but is not kept, and the next call traces the moved variables.
        """
        if self.__dict__.get("_placed"):
            return
        self._placed = True
        own = [self.iterations, *([self._accumulated] if self.gradient_accumulation_steps
                                  else [])] + [v for v in self._hypers.values()
                                   if isinstance(v, em.Variable) and v.uid in _OWNED]
        for var in own:
            if var.device != device:
                var.to_device(device)
                if em.recording.tracers():
                    em.recording.notify_variable_created(var)

    def _on(self, key: Any, value: Any, device: str) -> Any:
        """``value`` (a float, None or a tensor read this step) on ``device``.

        A tensor elsewhere (a user's variable made on the host, a variable updated on a
        second device) is copied; eagerly, the copy is kept while the value is the same
        tensor (tensors are immutable), so an unchanged variable is not uploaded every
        step. While graph mode traces, the copy is always made, so a replay copies the
        variable's current value.
        """
        if not isinstance(value, em.Tensor) or value.device == device:
            return value
        cache = self.__dict__.setdefault("_copies", {})
        hit = cache.get((key, device))
        if hit is not None and hit[0] is value and not em.recording.tracers():
            return hit[1]
        out = value.to(device)
        cache[(key, device)] = (value, out)
        return out

    @property
    def _step(self) -> Any:
        """This step's number as a float32 tensor (1 on the first step) on the device of
        the variable being updated, for step-dependent terms such as Adam's bias
        correction: computed with ops, never frozen on the host. Made at its first read in
        a step, so an update that never reads it (SGD's, a fused one) launches nothing
        for it (two kernels a step on a GPU)."""
        now = self.__dict__.get("_now")
        if now is None or "_device" not in now:
            return None
        hit = now.get("_step")
        if hit is None:
            step = em.add(em.cast(self.iterations.value(), em.float32), 1.0)
            hit = now["_step"] = self._on("_step", step, now["_device"])
        return hit

    def _apply(self, grads: list[Any], pairs: list[tuple[Any, Any]]) -> None:
        read = self._now or {}
        devices = list(dict.fromkeys(v.device for _, v in pairs))
        per_device = {d: {k: self._on(k, x, d) for k, x in read.items()} for d in devices}
        for d in devices:
            per_device[d]["_device"] = d  # (where ``_step`` goes)
        self._now = per_device[devices[0]]
        clipped = grads  # (unset clips are None on every device)
        if self._hyper("clipvalue") is not None or self._hyper("clipnorm") is not None:
            clipped = []
            for g, (_, v) in zip(grads, pairs):
                self._now = per_device[v.device]
                clipped.append(self._clip(g))
            self._now = per_device[devices[0]]
        global_clipnorm = self._hyper("global_clipnorm")
        if global_clipnorm is not None:
            clipped, _ = em.clip_by_global_norm(clipped, global_clipnorm)
        decay = self._hypers.get("weight_decay") is not None and (
            self._host_hyper("weight_decay") or self._user_dynamic("weight_decay"))
        for g, (_, v) in zip(clipped, pairs):
            self._now = per_device[v.device]
            lr = self._hyper("learning_rate")
            self._ensure_slots(v)
            if g.dtype != v.dtype:
                g = em.cast(g, v.dtype)
            if decay and self._use_weight_decay(v):  # decoupled, before the update
                wd = self._hyper("weight_decay")
                v.assign(em.multiply(v.value(), 1 - lr * wd))
            self.apply_single(g, v, lr)
            constraint = _constraints.of(v)
            if constraint is not None:  # after the update, as Keras
                v.assign(constraint(v.value()))

    def scale_loss(self, loss: Any) -> Any:
        """The loss to differentiate: ``loss`` times ``loss_scale_factor`` when one was
        given, else ``loss`` itself; a ``LossScaleOptimizer`` multiplies it by its loss
        scale (Keras 3's hook, which ``fit``'s step calls)."""
        if self.loss_scale_factor is not None:
            return em.multiply(loss, self.loss_scale_factor)
        return loss

    def compute_gradients(self, loss: Any, var_list: Any = None) -> list[tuple[Any, Any]]:
        """``[(gradient, variable), ...]`` of ``loss()`` (a callable)."""
        from ember import tape

        if not callable(loss):
            raise TypeError(f"{self.name}: minimize/compute_gradients need a callable loss "
                            f"(a tensor has no record of how it was computed)")
        with tape.GradientTape() as t:
            value = loss()
        vs = list(var_list) if var_list is not None else [
            v for v in t.watched_variables() if v.trainable]
        grads = t.gradient(value, vs)
        self._last_loss = value
        return list(zip(grads, vs))

    def minimize(self, loss: Any, var_list: Any = None, global_step: Any = None,
                 name: str | None = None) -> Any:
        """Differentiate ``loss()`` and apply the gradients; returns the loss value.

        Without ``var_list``, the variables are the trainable ones ``loss`` read.
        """
        gv = self.compute_gradients(loss, var_list)
        self.apply_gradients(gv, global_step=global_step)
        return self._last_loss

    def get_config(self) -> dict[str, Any]:
        """The constructor's arguments by name (Keras's): each hyperparameter's current
        value (a ``LearningRateSchedule`` or callable as itself), the other options as
        set; ``from_config`` makes an equal optimizer (without its state)."""
        config: dict[str, Any] = {"name": self.name}
        params = inspect.signature(type(self).__init__).parameters
        for name in ["learning_rate", "clipnorm", "clipvalue", "global_clipnorm",
                     "weight_decay", "use_ema", "ema_momentum", "ema_overwrite_frequency",
                     "loss_scale_factor", "gradient_accumulation_steps", *params]:
            if name in config or name in ("self", "kwargs", "name"):
                continue
            if name in self._hypers:
                src = self._hypers[name]
                config[name] = src if isinstance(src, LearningRateSchedule) or (
                    callable(src) and not isinstance(src, (em.Variable, em.Tensor))) \
                    else self._host_hyper(name)
            elif name in self.__dict__:
                config[name] = self.__dict__[name]
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        """An optimizer from ``get_config()``'s dict: ``cls(**config)``."""
        return cls(**config)


_OWNED: set[int] = set()


def _number(opt: Any, name: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{type(opt).__name__}: {name} must be a number, a Variable, a tensor, "
                        f"a callable or a LearningRateSchedule, got {type(value).__name__}"
                        ) from None


def _is_zero(value: Any) -> bool:
    return not _is_dynamic(value) and float(value) == 0


class _OnDevices:
    """A value computed on one device, copied to each other device asked for once."""

    def __init__(self, value: Any) -> None:
        self._by_device = {value.device: value}

    def __call__(self, device: str) -> Any:
        hit = self._by_device.get(device)
        if hit is None:
            hit = self._by_device[device] = next(iter(self._by_device.values())).to(device)
        return hit


class _SlotsMade:
    """Listens to the optimizer during an update that may be put back: a slot it makes is
    recorded with the value it starts from."""

    def __init__(self, before: dict[int, tuple[Any, Any]]) -> None:
        self._before = before

    def slot_created(self, owner: Any, primary: Any, slot_name: str, slot: Any) -> None:
        self._before.setdefault(slot.uid, (slot, slot.value()))

    def child_created(self, owner: Any, name: str, child: Any) -> None:
        pass

"""The tracer: a recorder that sees every op a function runs and writes down how to redo it.

It is a core *tracer* (``traces_all = True``), so it sees the ops that tapes do not (a
tape's backward pass, an optimizer's update under ``recording.paused()``), variable reads
and writes, host reads of values, and tensors made outside the op table. What it records is
a list of *slots* (one per tensor value) and of *steps* (an op's forward on slots, or a
guard on a slot's value); ``_plan`` turns that into a replay.
"""

from __future__ import annotations

import contextvars
import sys
from typing import Any

import numpy as np

import ember.core as em
from ember.core.extend import array_of, cuda_form, device_of, out_form, read_without_recording

from ._mappings import same_mapping

_Tensor = em.Tensor

# Ops whose forward has an effect beyond its result (random draws advance a generator,
# checks raise, a py_function runs Python): kept by the plan even when nothing reads their result.
STATEFUL_FAMILIES = frozenset({"random", "host"})
STATEFUL_OPS = frozenset({"check_numerics", "check_range"})
# Ops whose result's shape depends on the values of their inputs; later ops were traced
# for the shape they gave, so a replay checks it (and runs eagerly if it changed).
DYNAMIC_SHAPE_OPS = frozenset({"where_indices", "py_function"})


class Untraceable(Exception):
    """The function did something a replay cannot reproduce; the message says what."""


class Step:
    """One recorded op: ``outs = forward(backend, *ins, **attrs)``, or a guard."""

    __slots__ = ("attrs", "backend", "cuda", "forward", "ins", "name", "out_form", "outs",
                 "shapes", "stateful", "where")

    def __init__(self, name: str, forward: Any, backend: Any, ins: tuple[int, ...],
                 outs: tuple[int, ...], attrs: dict[str, Any] | None, stateful: bool,
                 where: str = "", shapes: tuple[tuple[int, ...], ...] | None = None) -> None:
        self.name = name
        self.forward = forward
        self.backend = backend
        self.ins = ins
        self.outs = outs
        self.attrs = attrs
        self.stateful = stateful
        self.where = where
        self.shapes = shapes  # the traced output shapes, where a replay must check them
        self.out_form: Any = None  # the op's ``out=`` form (extend.out_form), if it has one
        self.cuda: str | None = None  # the op's CUDA expression (extend.cuda_form), if any


class Trace:
    """What one traced call did, in slots and steps (see the module docstring)."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.n_slots = 0
        self.inputs: list[int] = []  # slot of each tensor leaf of the arguments
        self.constants: dict[int, Any] = {}  # slot -> backend array (captured values)
        self.var_reads: list[tuple[Any, int]] = []  # (variable, slot of its first read)
        self.var_writes: dict[int, tuple[Any, int]] = {}  # id(var) -> (variable, final slot)
        self.devices: dict[int, Any] = {}  # slot -> Device
        self.shapes: dict[int, tuple[int, ...]] = {}
        self.arrays: dict[int, Any] = {}  # slot -> its traced array (for buffer analysis)
        self.guards = 0
        self.untraceable: str | None = None  # why a replay would be wrong, if it would
        # (fn, values) handed to the host after each call (Tracer.defer_to_host)
        self.host_calls: list[tuple[Any, Any]] = []


class Tracer:
    """Records one call of a function into a ``Trace``."""

    traces_all = True

    def __init__(self, leaves: list[Any], host_calls: bool = True) -> None:
        self.trace = Trace()
        self.entry_context = contextvars.copy_context()  # the context the call began in
        self._host_calls = host_calls
        self._slot: dict[int, int] = {}
        self._alive: list[Any] = []  # keeps traced tensors alive so their ids stay unique
        self._computed: set[int] = set()  # ids of the arrays of non-constant slots
        self._var_slot: dict[int, int] = {}  # id(var) -> slot holding its current value
        for t in leaves:
            self.trace.inputs.append(self._new_slot(t))

    # --- slots -----------------------------------------------------------------------
    def _new_slot(self, t: Any) -> int:
        tr = self.trace
        k = tr.n_slots
        tr.n_slots += 1
        self._slot[id(t)] = k
        self._alive.append(t)
        tr.devices[k] = device_of(t)
        tr.arrays[k] = a = array_of(t)
        tr.shapes[k] = tuple(a.shape)
        self._computed.add(id(a))
        return k

    def slot_of(self, t: Any) -> int:
        """The slot of tensor ``t``; a tensor the trace has not seen is a captured
        constant (a value made before the call, or by a Python computation frozen at
        trace time)."""
        k = self._slot.get(id(t))
        if k is None:
            k = self._new_slot(t)
            self.trace.constants[k] = a = array_of(t)
            self._computed.discard(id(a))
        return k

    def tensors(self) -> list[Any]:
        """The tensor of each slot, in slot order."""
        return list(self._alive)

    # --- the recorder protocol -------------------------------------------------------
    def record_op(self, op: Any, inputs: tuple[Any, ...], attrs: dict[str, Any] | None,
                  outputs: tuple[Any, ...]) -> None:
        slot = self._slot
        if any(id(o) in slot for o in outputs):
            # a second notice of values already computed (custom_gradient's): its other
            # outputs are values made from Python numbers, constants
            for o in outputs:
                self.slot_of(o)
            return
        if attrs:
            self._check_attrs(op.name, attrs)
        ins = tuple(self.slot_of(x) for x in inputs)
        outs = tuple(self._new_slot(o) for o in outputs)
        src = inputs[0] if inputs else outputs[0]
        dynamic = op.name in DYNAMIC_SHAPE_OPS or (attrs is not None and any(
            getattr(k, "kind", None) == "mask" for k in _key_items(attrs.get("key"))))
        step = Step(op.name, op.forward, device_of(src).backend, ins, outs,
                    dict(attrs) if attrs else None,
                    op.family in STATEFUL_FAMILIES or op.name in STATEFUL_OPS,
                    shapes=tuple(self.trace.shapes[o] for o in outs) if dynamic else None)
        step.out_form = out_form(op)
        step.cuda = cuda_form(op)
        self.trace.steps.append(step)

    def _check_attrs(self, name: str, attrs: dict[str, Any]) -> None:
        """An attribute holding a traced value's array (or a view of one) would be frozen
        at its traced value: such a call is not replayed."""
        traced = self._computed
        for key, v in attrs.items():
            for a in _arrays_in(v):
                while a is not None:
                    if id(a) in traced:
                        self._untraceable(f"op {name!r} took a traced value as its "
                                          f"attribute {key!r}, which a replay would freeze")
                        return
                    a = getattr(a, "base", None)

    def variable_read(self, variable: Any, value: Any) -> None:
        vid = id(variable)
        if vid in self._var_slot and self._slot.get(id(value)) == self._var_slot[vid]:
            return
        if id(value) in self._slot:
            # The variable holds a tensor the trace already knows (an argument, or another
            # variable's value): a replay must check that this is still so.
            k = self._slot[id(value)]
            self.trace.var_reads.append((variable, k))
            self.trace.guards += 1
        else:
            k = self._new_slot(value)
            self.trace.var_reads.append((variable, k))
        self._var_slot[vid] = k

    def variable_write(self, variable: Any, value: Any) -> None:
        k = self.slot_of(value)
        self._var_slot[id(variable)] = k
        self.trace.var_writes[id(variable)] = (variable, k)

    def variable_created(self, variable: Any) -> None:
        self._untraceable(f"it created the variable {variable.name!r}; variables are made "
                          "on the first call only")

    def host_read(self, tensor: Any) -> None:
        k = self._slot.get(id(tensor))
        if k is None or k in self.trace.constants:
            return  # a constant's value cannot change
        value = np.array(device_of(tensor).backend.to_host(array_of(tensor)), copy=True)
        tr = self.trace
        tr.guards += 1
        tr.steps.append(Step("guard", _ValueGuard(value, _caller()), device_of(tensor).backend,
                             (k,), (), None, True, _caller()))

    def defer_to_host(self, fn: Any, values: Any) -> bool:
        """Hand ``fn(*values)`` to the host after the call, and after each replay of it,
        with each Tensor in ``values`` (walking lists, tuples and dicts) replaced by the
        Tensor that holds its value at this point of that call, and each Variable by a
        Tensor of the value it holds here; other values are passed as they are.

        This is how a library that needs values on the host (a summary writer) stays out
        of the replay: its values become outputs of the replay instead of host reads,
        which would be guards failing whenever the value changes. ``fn`` runs in the
        caller's context after the function returns (``entry_context`` is the context the
        call began in, to tell what the function set itself).

        Returns:
            False when this tracer takes no host calls (a gradient's): the caller must do
            its work now.
        """
        if not self._host_calls:
            return False
        self.trace.host_calls.append((fn, self._read_variables(values)))
        return True

    def _read_variables(self, x: Any) -> Any:
        if isinstance(x, em.Variable):
            value = read_without_recording(x)
            self.variable_read(x, value)  # the value at this point: a slot of the trace
            return value
        t = type(x)
        if t is list or t is tuple:
            return t(self._read_variables(v) for v in x)
        if isinstance(x, dict):
            return same_mapping(x, ((k, self._read_variables(v)) for k, v in x.items()))
        return x

    def host_input(self, what: str) -> None:
        self._untraceable(f"it took {what} on the host, which a replay would freeze at "
                          "its traced value")

    def cannot_replay(self, why: str) -> None:
        self._untraceable(why)

    def untraced_tensor(self, tensor: Any) -> None:
        self._untraceable("a tensor was made from a backend array outside the op table "
                          f"(extend.tensor_from_array, at {_caller()})")

    def _untraceable(self, why: str) -> None:
        if self.trace.untraceable is None:
            self.trace.untraceable = why

    def lifted(self) -> _Lifted:
        """What stands in for this tracer inside ``em.init_scope`` (see ``_Lifted``)."""
        return _Lifted(self)


class _Lifted:
    """A tracer inside ``em.init_scope``: the block runs once, while tracing, so nothing of
    it is recorded (its results, used later, are constants of the trace), and an op on a
    value the trace computed is refused: a replay could not give the block that value."""

    traces_all = True

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    def record_op(self, op: Any, inputs: tuple[Any, ...], attrs: dict[str, Any] | None,
                  outputs: tuple[Any, ...]) -> None:
        tracer = self._tracer
        for x in inputs:
            k = tracer._slot.get(id(x))
            if k is not None and k not in tracer.trace.constants:
                raise em.InvalidArgumentError(
                    f"em.init_scope: op {op.name!r} took a value that the traced function "
                    f"computed (at {_caller()}); code under init_scope runs once, while "
                    "the function is traced, so it can use only values made outside the "
                    "function or in the block itself (TensorFlow refuses this too)")

    def variable_read(self, variable: Any, value: Any) -> None:
        return None

    def variable_write(self, variable: Any, value: Any) -> None:
        return None

    def variable_created(self, variable: Any) -> None:
        return None

    def host_read(self, tensor: Any) -> None:
        return None

    def host_input(self, what: str) -> None:
        return None

    def cannot_replay(self, why: str) -> None:
        return None

    def untraced_tensor(self, tensor: Any) -> None:
        return None

    def defer_to_host(self, fn: Any, values: Any) -> bool:
        return False

    def lifted(self) -> _Lifted:
        return self


class GuardFailed(Exception):
    """A value the traced call read on the host is different in this call."""


class _ValueGuard:
    """A guard's check: the slot holds the value the traced call read on the host."""

    __slots__ = ("value", "where")

    def __init__(self, value: np.ndarray, where: str) -> None:
        self.value = value
        self.where = where

    def __call__(self, be: Any, x: Any) -> None:
        got = np.asarray(be.to_host(x))
        want = self.value
        if got.shape != want.shape or not np.array_equal(
                got, want, equal_nan=want.dtype.kind in "fc"):
            raise GuardFailed(self.where)


def _key_items(key: Any) -> tuple[Any, ...]:
    return key if type(key) is tuple else ()


def _arrays_in(v: Any) -> list[Any]:
    """The backend arrays in an attribute value (walking tuples, lists and dicts)."""
    if hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, type):
        return [v]
    if isinstance(v, (tuple, list)):
        return [a for x in v for a in _arrays_in(x)]
    if isinstance(v, dict):
        return [a for x in v.values() for a in _arrays_in(x)]
    return []


def _caller() -> str:
    """``file:line`` of the innermost frame outside ember (where user code read a value)."""
    f = sys._getframe(1)
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if not mod.startswith("ember."):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back  # type: ignore[assignment]
    return "<unknown>"

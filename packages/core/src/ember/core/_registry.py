"""The op registry and the one dispatch path every op goes through.

An op is registered once with its forward implementation, ``forward(be, *arrays, **attrs)``
written against the backend's ``xp``. ``execute`` checks devices, converts Python and
numpy operands, runs the forward, wraps the result and tells active recorders
(``notify``: the one place that does, for ``execute`` and for every fast path).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _dtypes, _promote
from ._convert import convert_array, scalar_array
from ._device import Device, current_device, placement
from ._errors import DeviceError, DTypeError, InvalidArgumentError, LeakedTensorError, LeakedValue, TakenOver
from ._tensor import Tensor, is_variable, wrap
from .recording import Recorder, _recorders


class OpDef:
    """A registered op: its name, forward implementation, whether it is differentiable,
    which of its inputs take part in type promotion (see ``ember.core._promote``), its
    optional ``out=`` form (``out(be, *arrays, out=array, **attrs)``, the forward written
    into a given array; graph mode reuses buffers with it), and, for an element-wise op,
    its optional CUDA C expression (``cuda``: ``{0}``, ``{1}`` stand for its operands; graph
    mode fuses chains of such ops into one kernel on a GPU)."""

    __slots__ = ("cuda", "differentiable", "family", "forward", "name", "out", "promote")

    def __init__(self, name: str, forward: Callable[..., Any], differentiable: bool, family: str,
                 promote: str | None = None, out: Callable[..., Any] | None = None,
                 cuda: str | None = None):
        self.name = name
        self.forward = forward
        self.differentiable = differentiable
        self.family = family
        self.promote = promote
        self.out = out
        self.cuda = cuda

    def __repr__(self) -> str:
        return f"OpDef({self.name!r}, family={self.family!r})"


REGISTRY: dict[str, OpDef] = {}


def register(name: str, forward: Callable[..., Any], *, family: str,
             differentiable: bool = True, promote: str | None = None,
             out: Callable[..., Any] | None = None, cuda: str | None = None) -> OpDef:
    """Register a primitive op. Raises on a duplicate name.

    ``promote`` says which inputs are promoted to one dtype before ``forward`` runs
    ("all", "values" or "into_first"); by default the entry of ``PROMOTED_INPUTS``.
    ``out`` is the op's optional ``out=`` form and ``cuda`` its CUDA C expression (see
    ``OpDef``).
    """
    if name in REGISTRY:
        raise KeyError(f"op {name!r} is already registered")
    if promote is None:
        promote = _promote.PROMOTED_INPUTS.get(name)
    op = OpDef(name, forward, differentiable, family, promote, out, cuda)
    REGISTRY[name] = op
    return op


def notify(recorders: tuple[Recorder, ...], op: OpDef, inputs: tuple[Any, ...],
           attrs: dict[str, Any] | None, outputs: tuple[Any, ...]) -> None:
    """Tell ``recorders`` (the active ones: ``recording._recorders()``) that ``op`` ran.

    Callers read the active recorders first and call this only when there are some, so
    an op run with no tape costs one ``ContextVar.get()``.
    """
    for r in recorders:
        r.record_op(op, inputs, attrs, outputs)


# --- dispatch --------------------------------------------------------------------------
_array = operator.attrgetter("_data")  # a Tensor's backend array, read in C
_new = object.__new__


def execute(op: OpDef, inputs: tuple[Any, ...], attrs: dict[str, Any] | None = None) -> Any:
    """Run ``op`` on ``inputs`` (tensors or convertible values) and return Tensor(s)."""
    dev = None
    plain = True
    for a in inputs:
        if type(a) is Tensor:
            d = a._device
            if dev is None:
                dev = d
            elif d is not dev:
                raise _device_mismatch(op, inputs)
        else:
            plain = False
    if not plain:
        try:
            inputs, dev = _convert_inputs(op, inputs, dev)
        except TakenOver as t:  # an input's type computes this call (``__ember_op__``)
            return t.kind.__ember_op__(op, inputs, attrs)  # type: ignore[attr-defined]
    else:
        if dev is None:  # no inputs: a creation op (bfloat16 stays on the host)
            dev = placement(attrs.get("dtype")) if attrs else current_device()
        if op.promote is not None and len(inputs) > 1 and not _one_dtype(
                inputs[:2] if op.promote == "into_first" else inputs):
            inputs, dev = _convert_inputs(op, inputs, dev)
    be = dev.backend
    try:
        if len(inputs) == 1:  # the common arity, without building an argument list
            out = op.forward(be, inputs[0]._data, **attrs) if attrs else \
                op.forward(be, inputs[0]._data)
        elif attrs:
            out = op.forward(be, *map(_array, inputs), **attrs)
        else:
            out = op.forward(be, *map(_array, inputs))
    except (ValueError, TypeError, IndexError, OverflowError) as e:
        raise _op_error(op, inputs, attrs, e) from e
    if type(out) is tuple:
        outputs = tuple([wrap(o, dev) for o in out])
        result: Any = outputs
    else:
        result = _new(Tensor)  # wrap(out, dev), inline: this runs for every op
        result._data = out
        result._device = dev
        outputs = (result,)
    recs = _recorders()
    if recs:
        notify(recs, op, inputs, attrs, outputs)
    return result


def _one_dtype(inputs: tuple[Any, ...]) -> bool:
    dt = inputs[0]._data.dtype
    for a in inputs:
        if a._data.dtype != dt:
            return False
    return True


def _convert_inputs(op: OpDef, inputs: tuple[Any, ...], dev: Device | None
                    ) -> tuple[tuple[Any, ...], Device]:
    """Read variables, find the op's device, convert Python/numpy operands onto it, and
    promote the op's promoted inputs to one dtype (the table in ``_promote``)."""
    vals = list(inputs)
    for i, a in enumerate(vals):
        if is_variable(a):
            vals[i] = a = a._read()
        if type(a) is Tensor:
            if dev is None:
                dev = a._device
            elif a._device is not dev:
                raise _device_mismatch(op, tuple(vals))
    if dev is None:
        dev = current_device()
    mode = op.promote
    first = 1 if mode == "values" else 0
    # "into_first": the updates (input 1) take the tensor's dtype; inputs after them are
    # index tensors (index_add, index_update), never promoted.
    stop = 2 if mode == "into_first" else len(vals)
    promoted = mode is not None and len(vals) > 1
    for i, a in enumerate(vals):  # arrays and lists are strongly typed: convert them first
        if type(a) is not Tensor and not (promoted and first <= i < stop
                                          and type(a) in _promote.PY_SCALARS):
            if getattr(type(a), "__ember_op__", None) is not None:
                raise TakenOver(a)
            vals[i] = wrap(_to_array(op, a, None, dev), dev)
    if promoted:
        target = _target_dtype(op, vals[first:stop])
        for i in range(first, stop):
            a = vals[i]
            if type(a) is not Tensor:
                vals[i] = wrap(_to_array(op, a, target, dev), dev)  # a weak scalar
            elif a._data.dtype != target:
                vals[i] = execute(REGISTRY["cast"], (a,), {"dtype": target})
    return tuple(vals), dev


def _target_dtype(op: OpDef, operands: list[Any]) -> np.dtype:
    """The promoted dtype of ``operands`` (tensors and Python scalars only)."""
    if op.promote != "into_first":
        t0 = operands[0]
        if len(operands) == 2 and type(t0) is Tensor:  # the common case, kept fast
            t1 = operands[1]
            if type(t1) is Tensor:
                if t0._data.dtype == t1._data.dtype:
                    return t0._data.dtype
            else:
                return _promote.with_weak(t0._data.dtype, t1)
    try:
        target = _promote.result_type(*operands)
    except DTypeError as e:
        raise DTypeError(f"{op.name}: {e} (inputs: {describe(tuple(operands))})") from None
    if op.promote == "into_first":
        into = operands[0]._data.dtype
        for w in operands[1:]:
            if _promote.is_weak(w) and np.asarray(w).astype(into) != w:
                raise DTypeError(f"{op.name}: the Python {type(w).__name__} {w!r} does not "
                                 f"fit a tensor of dtype {into}")
        strong = [o for o in operands if not _promote.is_weak(o)]
        target = _promote.result_type(*strong)
        if _promote.kind_rank(target) > _promote.kind_rank(into):
            raise DTypeError(f"{op.name}: cannot write {target} updates into a tensor of dtype "
                             f"{into} without losing values; cast the updates first")
        return into
    return target


def _to_array(op: OpDef, value: Any, dtype: np.dtype | None, dev: Device) -> Any:
    """A backend array for ``value``: a weak scalar converted to ``dtype`` (checked to fit),
    anything else as ``em.constant`` converts it."""
    if dtype is None:
        dtype = _dtypes.infer_dtype(value)
    try:
        if dtype is not None and (type(value) in (bool, int, float, complex)
                                  or isinstance(value, np.generic)):
            if dtype.kind in "iu" and isinstance(value, (int, np.integer)) \
                    and not isinstance(value, (bool, np.bool_)):
                info = np.iinfo(dtype)
                if not info.min <= int(value) <= info.max:
                    raise InvalidArgumentError(
                        f"{op.name}: Python int {value} does not fit the operand dtype {dtype}")
            return scalar_array(np.asarray(value, dtype=dtype), dev)
        return convert_array(value, None, dev, op.name)
    except (ValueError, TypeError, OverflowError) as e:
        if isinstance(e, InvalidArgumentError):
            raise
        raise InvalidArgumentError(f"{op.name}: cannot convert {type(value).__name__} "
                                   f"operand to a tensor: {e}") from e


def describe(inputs: tuple[Any, ...]) -> str:
    parts = []
    for a in inputs:
        if type(a) is Tensor:
            parts.append(f"{a._data.dtype}{list(a._data.shape)}")
        else:
            parts.append(type(a).__name__)
    return ", ".join(parts)


def _op_error(op: OpDef, inputs: tuple[Any, ...], attrs: dict[str, Any] | None,
              e: Exception) -> Exception:
    for x in inputs:  # a leaked tensor (extend.expire): its reason, on every device
        v = getattr(x, "_data", None)
        if type(v) is LeakedValue:
            return LeakedTensorError(f"{op.name}: {v.why}")
    if isinstance(e, InvalidArgumentError):
        return e
    at = ""
    if attrs:
        at = " with " + ", ".join(f"{k}={v!r}" for k, v in attrs.items()
                                  if not hasattr(v, "shape"))
    msg = f"{op.name}: {e} (inputs: {describe(inputs)}{at})"
    if isinstance(e, TypeError):
        return DTypeError(msg)
    if isinstance(e, IndexError):
        return IndexOutOfRangeError(msg)
    return InvalidArgumentError(msg)


class IndexOutOfRangeError(InvalidArgumentError, IndexError):
    """An index was outside the tensor's bounds."""


def _device_mismatch(op: OpDef, inputs: tuple[Any, ...]) -> DeviceError:
    where = ", ".join(f"input {i} on {a._device.name}" for i, a in enumerate(inputs)
                      if type(a) is Tensor)
    return DeviceError(f"{op.name}: operands are on different devices ({where}); "
                       "move one with .cpu() / .gpu() first")

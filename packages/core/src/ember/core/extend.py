"""The public surface for code that extends ember-core (as ``autograd.extend`` does).

Packages built on core (ember-tape, ember-nn, a future graph mode, your own) use only
``ember.core`` and this module, never core's private modules or the private attributes of
its objects. Everything here is a thin, stable wrapper over core's internals:

- ops: ``register_op`` (a forward, an optional ``out=`` form and, for an element-wise
  op, an optional CUDA C expression), ``run_op``, ``out_form``, ``cuda_form``,
  ``REGISTRY``, ``OpDef``;
- tensors and backend arrays: ``tensor_from_array`` (no copy), ``array_of``,
  ``device_of``;
- variables: ``read_without_recording``, ``map_variable_reads``;
- recorders (what a gradient tape is): ``notify_op``, ``recording_to``,
  ``active_recorders``, ``Recorder``;
- dtypes: ``is_differentiable``;
- GPU kernels: ``elementwise_kernel`` (a cupy ``ElementwiseKernel``, made once per
  device's namespace).

A new op takes three steps: register its forward, run it through ``run_op`` from a
public function, and (in ember-tape) register its gradient rule with
``ember.tape.register_gradient``. The guide page "Extending ember" shows one end to end.

Examples:
    >>> import ember.core as em
    >>> from ember.core import extend
    >>> op = extend.register_op("doctest_square", lambda be, x: be.xp.square(x),
    ...                         family="math")
    >>> extend.run_op(op, (em.constant([1.0, 3.0]),))
    ember.Tensor([1. 9.], shape=(2,), dtype=float32)
    >>> t = em.constant([1, 2])
    >>> extend.array_of(t), extend.device_of(t).name
    (array([1, 2], dtype=int32), '/cpu:0')
    >>> v = em.Variable(2.0)
    >>> extend.read_without_recording(v)  # tapes do not see this read
    ember.Tensor(2.0, shape=(), dtype=float32)
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from . import _dtypes, _public_calls, _registry, _variable, recording
from ._device import Device, current_device, get_device
from ._errors import LeakedValue
from ._ops import _fused
from ._ops.host import py_function_log
from ._ops.host import restart_log as restart_py_function_log
from ._registry import REGISTRY, OpDef
from ._tensor import Tensor
from ._variable import Variable
from .recording import Recorder, _active, active_recorders

__all__ = [
    "REGISTRY", "OpDef", "Recorder", "active_recorders", "array_of", "cuda_form", "device_of",
    "elementwise_kernel", "expire", "hand_over_calls", "is_differentiable",
    "public_function", "map_variable_reads", "notify_op", "out_form",
    "py_function_log", "restart_py_function_log",
    "read_without_recording", "recording_to", "register_op", "run_op", "tensor_from_array",
]

_new = object.__new__
_BFLOAT16 = _dtypes.bfloat16
_PROMOTE_MODES = (None, "all", "values", "into_first")


# --- ops ---------------------------------------------------------------------------------
def register_op(name: str, forward: Callable[..., Any], *, family: str,
                differentiable: bool = True, promote: str | None = None,
                out: Callable[..., Any] | None = None, cuda: str | None = None) -> OpDef:
    """Register a primitive op with core's one op table and return its ``OpDef``.

    Args:
        name: The op's unique name (the key of its gradient rule in ember-tape).
        forward: ``forward(be, *arrays, **attrs)``: computes the result from backend
            arrays with ``be.xp`` (numpy on the CPU, cupy on a GPU) and returns a new
            array, or a tuple of arrays for a multi-output op. It must not modify its
            inputs (tensors are immutable).
        family: The op family, e.g. ``"math"``; ops of a family have their forwards in
            ``ember/core/_ops/<family>.py`` and their rules in ``ember/tape/_rules``.
        differentiable: False for ops that no tape records (comparisons, argmax, ...).
        promote: Which inputs are promoted to one dtype before ``forward`` runs: ``"all"``,
            ``"values"`` (all but the first), ``"into_first"`` (into the first input's
            dtype) or None (no promotion; core's default for ``name`` if it has one).
        out: Optional ``out(be, *arrays, out=array, **attrs)``, the same computation
            written into a preallocated ``out`` array of the inputs' device (a cupy
            array on a GPU: never a host array there) for a single-output op, and
            returning it. Eager execution never calls it: graph mode (ember-graph) does,
            to write a result into a buffer that is dead by then; ``out_form`` reads it
            back. Core's element-wise ops written as an ``xp`` function have one.
        cuda: Optional, for an element-wise op on floating-point operands: its result as
            one CUDA C expression in which ``{0}``, ``{1}``, ... stand for the operands
            (e.g. ``"{0} * {1} + 1"``; CUDA's math functions such as ``exp`` and ``tanh``,
            the ternary operator). Graph mode (ember-graph) fuses chains of such ops into
            one generated kernel on a GPU, after checking on the traced values that the
            kernel computes what the forwards did; ``cuda_form`` reads it back.

    Returns:
        The registered op; pass it to ``run_op``.

    Raises:
        KeyError: ``name`` is already registered.
        TypeError: ``forward`` or ``out`` is not callable.
        ValueError: ``promote`` is not one of the modes above.

    Examples:
        >>> import ember.core as em
        >>> from ember.core import extend
        >>> op = extend.register_op(
        ...     "doctest_twice", lambda be, x: x * 2, family="math",
        ...     out=lambda be, x, out: be.xp.multiply(x, 2, out=out))
        >>> extend.out_form(op) is not None, op.differentiable
        (True, True)
    """
    if not callable(forward):
        raise TypeError(f"register_op({name!r}): forward must be callable, "
                        f"got {type(forward).__name__}")
    if out is not None and not callable(out):
        raise TypeError(f"register_op({name!r}): out must be callable or None, "
                        f"got {type(out).__name__}")
    if cuda is not None and not (isinstance(cuda, str) and "{0}" in cuda):
        raise TypeError(f"register_op({name!r}): cuda must be a CUDA C expression in which "
                        f"{{0}} stands for the first operand, got {cuda!r}")
    if promote not in _PROMOTE_MODES:
        raise ValueError(f"register_op({name!r}): promote must be one of {_PROMOTE_MODES}, "
                         f"got {promote!r}")
    if not isinstance(family, str) or not family:
        raise TypeError(f"register_op({name!r}): family must be a non-empty string, "
                        f"got {family!r}")
    return _registry.register(name, forward, family=family,
                              differentiable=bool(differentiable), promote=promote, out=out,
                              cuda=cuda)


def out_form(op: OpDef | str) -> Callable[..., Any] | None:
    """The ``out=`` form given to ``register_op`` for ``op``, or None if it has none.

    Args:
        op: A registered op or its name.

    Returns:
        ``out(be, *arrays, out=array, **attrs)`` or None.

    Raises:
        KeyError: no op of that name is registered.
    """
    return _lookup(op).out


def cuda_form(op: OpDef | str) -> str | None:
    """The CUDA C expression given to ``register_op`` for ``op``, or None if it has none.

    Args:
        op: A registered op or its name.

    Returns:
        An expression in ``{0}``, ``{1}``, ... (the operands), or None.

    Raises:
        KeyError: no op of that name is registered.

    Examples:
        >>> from ember.core import extend
        >>> extend.cuda_form("exp"), extend.cuda_form("matmul")
        ('exp({0})', None)
    """
    return _lookup(op).cuda


def run_op(op: OpDef | str, inputs: Sequence[Any],
           attrs: Mapping[str, Any] | None = None) -> Any:
    """Run a registered op on ``inputs`` as every core op runs, and return its Tensor(s).

    Core checks that tensor inputs share a device, reads variables (active recorders see
    the reads), converts Python and numpy operands, promotes dtypes as the op says, calls
    the forward with backend arrays and ``attrs`` as keyword arguments, wraps the result
    and tells the active recorders (so tapes record the op). Errors from the forward come
    back naming the op and its inputs.

    Args:
        op: A registered op or its name.
        inputs: The op's tensor operands (tensors, variables or convertible values).
        attrs: Non-tensor arguments, passed to the forward as keywords (and kept by tapes
            for the gradient rule as ``op.attrs``).

    Returns:
        A Tensor, or a tuple of Tensors for a multi-output op.

    Raises:
        KeyError: no op of that name is registered.

    Examples:
        >>> import ember.core as em
        >>> from ember.core import extend
        >>> extend.run_op("add", (em.constant(1.0), 2.0))
        ember.Tensor(3.0, shape=(), dtype=float32)
    """
    if type(op) is not OpDef:
        op = _lookup(op)
    if type(inputs) is not tuple:
        inputs = tuple(inputs)
    if attrs is not None and type(attrs) is not dict:
        attrs = dict(attrs)
    return _registry.execute(op, inputs, attrs)


def _lookup(op: OpDef | str) -> OpDef:
    if isinstance(op, OpDef):
        return op
    try:
        return REGISTRY[op]
    except KeyError:
        raise KeyError(f"no op named {op!r} is registered") from None


# --- tensors and backend arrays ----------------------------------------------------------
def tensor_from_array(array: Any, device: Device | str | None = None) -> Tensor:
    """A Tensor holding the backend array ``array`` itself, not a copy.

    Tensors are immutable: the caller hands the array over and must not modify it
    afterwards. Use ``em.constant`` to make a tensor from data you keep using.

    Graph mode (ember-graph) cannot replay a computation done outside the op table: a
    function that makes tensors this way while it is traced runs eagerly instead (with a
    warning). Register the computation as an op (``register_op``) to make it traceable.

    Args:
        array: A numpy array (or numpy scalar) for the CPU, a cupy array for a GPU.
        device: The device it lives on: a ``Device``, a name such as ``"/cpu:0"``, or
            None for the current device.

    Returns:
        The tensor.

    Raises:
        TypeError: ``array`` has no dtype and shape, or its type is not the device's
            array type.

    Examples:
        >>> import numpy as np
        >>> from ember.core import extend
        >>> a = np.arange(3, dtype=np.float32)
        >>> t = extend.tensor_from_array(a, "/cpu:0")
        >>> extend.array_of(t) is a
        True
    """
    if type(device) is Device:
        dev = device
    else:
        dev = current_device() if device is None else get_device(device)
    xp = dev.xp
    if type(array) is not xp.ndarray and not isinstance(
            array, (xp.ndarray, np.generic) if dev.kind == "cpu" else xp.ndarray):
        if not (hasattr(array, "dtype") and hasattr(array, "shape")):
            raise TypeError(f"tensor_from_array: expected a backend array, "
                            f"got {type(array).__name__}")
        raise TypeError(f"tensor_from_array: a {type(array).__module__}."
                        f"{type(array).__name__} cannot live on {dev.name}; expected "
                        f"{xp.ndarray.__module__}.{xp.ndarray.__name__}")
    t = _new(Tensor)  # as _tensor.wrap, inline
    t._data = array
    t._device = dev
    if _active.get():  # graph mode cannot replay how the array was made: say so
        for r in recording.tracers():
            r.untraced_tensor(t)  # type: ignore[attr-defined]
    return t


def hand_over_calls(module: Any, prefix: str, names: Sequence[str]) -> None:
    """Make the public functions ``names`` of ``module`` hand a call over to a foreign
    operand's type, as ``ember.core``'s own functions do.

    A type that defines ``__ember_function__(fn, args, kwargs)`` takes over any call of
    such a function given one of its instances (ember-nn's symbolic tensors make a node of
    a functional model of it); the function's ``__ember_public__`` is ``prefix + name``,
    under which a saved model names it. Types that define ``__ember_op__(op, inputs,
    attrs)`` take over the ops run on them (``run_op`` and the element-wise functions).
    Core raises the hand-over where it would convert the operand to a tensor, so each
    wrapped function costs one more call frame and nothing else.
    """
    _public_calls.wrap_public(module, prefix, list(names))


def public_function(name: str) -> Callable[..., Any] | None:
    """The function that hands calls over (``hand_over_calls``, and every public function
    of ``ember.core``) whose ``__ember_public__`` is ``name``, or None: how a saved model's
    node finds its function, never by importing what a file names."""
    return _public_calls.PUBLIC.get(name)


def expire(tensor: Tensor, why: str) -> None:
    """Make ``tensor`` unusable: from now on anything that needs its value (an op that
    takes it, ``numpy()``, ``float()``, numpy's conversion) raises
    ``em.LeakedTensorError`` with the message ``why``; its shape and dtype stay readable,
    and its repr says it leaked.

    A tracer (ember-graph) calls this on the tensors a traced call made and did not
    return: a replay does not update them, so a reference kept to one (a global, an
    attribute) would go on giving the traced call's value. The array itself is untouched
    (a trace may keep it).
    """
    tensor._data = LeakedValue(tensor._data, why)


# The accessors below are C-level attribute getters, not Python functions: tapes call them
# once per recorded op, so they cost no more than reading the attribute itself.
array_of: Callable[[Tensor], Any] = operator.attrgetter("_data")
"""``array_of(tensor)``: the backend array a Tensor holds (numpy or cupy), not a copy; do
not modify it. Read a Variable first (``value()`` or ``read_without_recording``).

See the module's examples.
"""

device_of: Callable[[Tensor], Device] = operator.attrgetter("_device")
"""``device_of(tensor)``: the ``ember.core.Device`` a Tensor lives on
(``tensor.device`` is its name); ``device_of(t).xp`` is its array module and
``device_of(t).backend`` its backend.

See the module's examples.
"""


# --- variables ---------------------------------------------------------------------------
read_without_recording: Callable[[Variable], Tensor] = operator.attrgetter("_value")
"""``read_without_recording(variable)``: a Variable's current value (an immutable Tensor),
without telling the active recorders of the read.

``variable.value()`` is the read that tapes see (and watch automatically); use this one
where a read must not make a tape watch the variable.

See the module's examples.
"""


@contextlib.contextmanager
def map_variable_reads(fn: Callable[[Variable, Tensor], Tensor] | None) -> Iterator[None]:
    """Inside the block, an op's read of a variable (and ``variable.value()``) gives
    ``fn(variable, value)`` instead of ``value``; ``None`` turns an outer mapping off.

    ember-nn's mixed precision uses it as Keras's autocast: a layer computing in float16
    reads its float32 variables cast to float16. The recorders see the read of the
    variable's own value first, so whatever ``fn`` computes with ops is recorded after it
    (a tape differentiates through the cast back to the variable; graph mode replays it).
    ``read_without_recording`` is never mapped.

    Args:
        fn: ``fn(variable, value) -> Tensor``, or None.

    Examples:
        >>> import ember.core as em
        >>> from ember.core import extend
        >>> v = em.Variable([1.5, 2.5])
        >>> with extend.map_variable_reads(lambda var, t: em.cast(t, em.float16)):
        ...     (v * 2).dtype
        dtype('float16')
        >>> (v * 2).dtype
        dtype('float32')
    """
    token = _variable.read_hook.set(fn)
    try:
        yield
    finally:
        _variable.read_hook.reset(token)


# --- recorders ---------------------------------------------------------------------------
def notify_op(op: OpDef, inputs: tuple[Any, ...], attrs: dict[str, Any] | None,
              outputs: tuple[Any, ...]) -> None:
    """Tell the active recorders that ``op`` ran (code that computes an op's result
    itself instead of through ``run_op`` calls this, as core's fast paths do).

    Args:
        op: The op that ran (recorders look its gradient rule up by ``op.name``).
        inputs: Its input Tensors.
        attrs: Its attributes, or None.
        outputs: Its output Tensors.
    """
    recs = _active.get()
    if recs:
        _registry.notify(recs, op, inputs, attrs, outputs)


@contextlib.contextmanager
def recording_to(*recorders: Recorder) -> Iterator[None]:
    """Run a block with exactly ``recorders`` active (none: nothing records the block).

    The recorders active outside the block do not see its ops; they are active again
    after it. Active tracers (graph mode, see ``ember.core.recording``) stay active: they
    see every op.

    Args:
        *recorders: Objects with ``record_op`` and ``variable_read`` methods
            (``Recorder``).

    Examples:
        >>> import ember.core as em
        >>> from ember.core import extend
        >>> class Names:
        ...     def __init__(self): self.ops = []
        ...     def record_op(self, op, inputs, attrs, outputs): self.ops.append(op.name)
        ...     def variable_read(self, variable, value): pass
        >>> names = Names()
        >>> with extend.recording_to(names):
        ...     _ = em.exp(em.constant(1.0))
        >>> names.ops
        ['exp']
    """
    for r in recorders:
        if not (callable(getattr(r, "record_op", None))
                and callable(getattr(r, "variable_read", None))):
            raise TypeError(f"recording_to: {type(r).__name__} is not a Recorder "
                            "(it needs record_op and variable_read methods)")
    token = recording.only(tuple(recorders))
    try:
        yield
    finally:
        _active.reset(token)


# --- dtypes ------------------------------------------------------------------------------
def is_differentiable(dtype: Any) -> bool:
    """True if gradients flow through ``dtype``: floating and complex dtypes only.

    Args:
        dtype: A dtype or dtype-like (``em.float32``, ``"int32"``, ``np.float16``).

    Returns:
        Whether a tape records and differentiates values of this dtype.

    Examples:
        >>> from ember.core import extend
        >>> extend.is_differentiable("bfloat16"), extend.is_differentiable("int32")
        (True, False)
    """
    if not isinstance(dtype, np.dtype):
        dtype = _dtypes.as_dtype(dtype)
    return dtype.kind in "fc" or dtype == _BFLOAT16  # as _dtypes.is_differentiable, inline


def elementwise_kernel(xp: Any, name: str, in_params: str, out_params: str, operation: str,
                       options: Sequence[str] = ()) -> Any:
    """cupy's ``ElementwiseKernel(in_params, out_params, operation, "ember_" + name)`` for
    the array namespace ``xp`` of a GPU backend (``device_of(t).xp``), compiled on first
    use and kept: one per namespace and ``(name, options)``, so a name must stand for one
    kernel. ``options`` are nvrtc's: ``("--fmad=false",)`` keeps ``a * b + c`` two
    roundings, as the ops round it, where nvcc would fuse them into one.

    On the strict double's namespace it is the double's kernel, which evaluates the same
    C and refuses what nvrtc refuses."""
    return _fused.kernel(xp, name, in_params, out_params, operation, tuple(options))

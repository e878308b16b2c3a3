"""GradientTape: records ops through core's recording interface and walks them backwards.

What a tape keeps: for each recorded op, its input and output tensors and attributes (the
rules read inputs and outputs, e.g. ``exp`` reuses its output, ``multiply`` its inputs).
Where an op's rule reads no input or no output tensor (``_rules.DROPS_INPUTS`` /
``DROPS_OUTPUTS``), a tensor made by such an op is kept as a ``_Freed`` stand-in (its shape
and dtype) unless another recorded op's rule reads it: activations no rule needs die
with the forward's last reference, as in PyTorch. Only ops with at least one watched
input are recorded. A non-persistent tape drops all of it after ``gradient``.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

import ember.core as em
from ember.core import Tensor, Variable, recording
from ember.core.extend import (
    array_of,
    device_of,
    is_differentiable,
    read_without_recording,
    recording_to,
)

from ._nest import flatten, pack_as
from ._rules import DROPS_INPUTS as _DROPS_INPUTS
from ._rules import DROPS_OUTPUTS as _DROPS_OUTPUTS
from ._rules import MISSING_AS_NONE as _MISSING_AS_NONE
from ._rules import RULES as _RULES
from ._rules import OpContext

_ZERO = "zero"
FREE_MIN_BYTES = 1 << 16  # results at least this large may be freed before the backward
_NONE = "none"
# False inside no_auto_watch(): variables read there are not watched automatically.
_auto_watch: contextvars.ContextVar[bool] = contextvars.ContextVar("ember_tape_auto_watch",
                                                                   default=True)


@contextlib.contextmanager
def no_auto_watch() -> Iterator[None]:
    """Variables first read inside this block are not watched automatically, as if they
    were not trainable (frozen layers run their ``call`` inside it). ``watch`` still works.
    """
    token = _auto_watch.set(False)
    try:
        yield
    finally:
        _auto_watch.reset(token)


class GradientTape:
    """Record operations for automatic differentiation.

    Examples:
        >>> import ember.core as em
        >>> from ember import tape
        >>> w = em.Variable(3.0)
        >>> with tape.GradientTape() as t:
        ...     loss = w * w
        >>> t.gradient(loss, w)
        ember.Tensor(6.0, shape=(), dtype=float32)
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        # (op, input keys, attrs, output keys, inputs or None, outputs or None) per recorded
        # op: a key is the tensor itself or its _Freed stand-in (the walk goes by keys); the
        # last two are what the rule reads (None: it reads the keys' shapes only). The walk
        # makes the OpContext a rule sees only for ops a gradient reaches.
        self._records: list[tuple[Any, ...]] = []
        # id -> key: the tensor itself (the ref keeps its id unique) or its _Freed stand-in
        # (which leaves this dict when the tensor dies, so a new tensor with its id is new)
        self._tracked: dict[int, Any] = {}
        self._variables: dict[int, Variable] = {}  # watched variables, in first-read order
        self._var_values: dict[int, dict[int, Tensor]] = {}  # var id -> value tensors read
        self._tokens: list[Any] = []
        self._used = False
        self._exited = False  # True once the tape has left its last ``with`` block

    # --- context manager ---------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        self._tokens.append(recording.push(self))
        self._exited = False
        return self

    def __exit__(self, *exc: object) -> None:
        recording.pop(self._tokens.pop())
        self._exited = not self._tokens

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Ops inside this block are not recorded by this tape."""
        token = recording.exclude(self)
        try:
            yield
        finally:
            recording.pop(token)

    def reset(self) -> None:
        """Forget everything recorded so far (the tape stays active)."""
        self._records.clear()
        self._tracked.clear()
        self._variables.clear()
        self._var_values.clear()
        self._used = False

    # --- the recorder protocol (called by ember-core) -----------------------------------
    def record_op(self, op: Any, inputs: tuple[Any, ...], attrs: Any,
                  outputs: tuple[Any, ...]) -> None:
        if not op.differentiable:
            return
        tracked = self._tracked
        for x in inputs:
            if id(x) in tracked:
                break
        else:
            return
        get = tracked.get
        if len(inputs) == 1:
            x = inputs[0]
            keys: tuple[Any, ...] = (get(id(x), x),)
        elif len(inputs) == 2:
            x, y = inputs
            keys = (get(id(x), x), get(id(y), y))
        else:
            keys = tuple([get(id(x), x) for x in inputs])
        name = op.name
        # a result no rule reads is kept as a stand-in, so that it can die with the
        # forward's last reference; small ones are kept as they are (a stand-in costs
        # about as much as the op itself, and frees next to nothing)
        freed = len(outputs) == 1 and name in _DROPS_OUTPUTS and \
            array_of(outputs[0]).nbytes >= FREE_MIN_BYTES
        out_keys = []
        for o in outputs:
            dt = array_of(o).dtype
            if dt.kind in "fc" or is_differentiable(dt):
                k = _Freed(o, tracked) if freed else o
                tracked[id(o)] = k
                out_keys.append(k)
            else:
                out_keys.append(o)
        outs = tuple(out_keys)
        self._records.append((op, keys, attrs, outs, None if name in _DROPS_INPUTS else inputs,
                              None if freed else outputs))

    def variable_read(self, variable: Variable, value: Tensor) -> None:
        vid = id(variable)
        if vid not in self._variables:
            if not (self._watch_accessed and variable.trainable and _auto_watch.get()):
                return
            if not is_differentiable(value.dtype):
                return
            self._variables[vid] = variable
        self._track_value(vid, value)

    def _track_value(self, vid: int, value: Tensor) -> None:
        self._tracked[id(value)] = value
        self._var_values.setdefault(vid, {})[id(value)] = value

    # --- watching ----------------------------------------------------------------------
    def watch(self, tensor: Any) -> None:
        """Track a tensor, a variable, or a nested structure of them.

        Raises:
            RuntimeError: the tape has exited its ``with`` block (nothing it could record
                would reach the watched tensor any more).
        """
        if self._exited:
            raise RuntimeError(
                "GradientTape.watch: the tape has exited its `with` block, so ops on the "
                "watched tensor would not be recorded; call watch() inside the block")
        for i, t in enumerate([tensor] if type(tensor) is Tensor else flatten(tensor)):
            if isinstance(t, (Variable, Tensor)) and not is_differentiable(t.dtype):
                warnings.warn(
                    f"GradientTape.watch: tensor {i} has dtype {t.dtype}, not floating or "
                    "complex; it is not watched and gets no gradient", stacklevel=2)
                continue
            if isinstance(t, Variable):
                self._variables.setdefault(id(t), t)
                self._track_value(id(t), read_without_recording(t))
            elif isinstance(t, Tensor):
                self._tracked.setdefault(id(t), t)  # a stand-in already there stays
            else:
                raise TypeError(f"GradientTape.watch: expected tensors or variables, "
                                f"got {type(t).__name__}")

    def watched_variables(self) -> list[Variable]:
        """Variables this tape watches, in the order they were first read or watched."""
        return list(self._variables.values())

    # --- gradients ---------------------------------------------------------------------
    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: str = _NONE) -> Any:
        """d(target)/d(sources), shaped like ``sources`` (a tensor, variable or nest).

        ``target`` may be a tensor or a nest of them (their gradients add up).
        Unconnected sources give ``None``, or zeros with ``unconnected_gradients="zero"``.
        """
        if unconnected_gradients not in (_NONE, _ZERO):
            raise ValueError(f"unconnected_gradients must be 'none' or 'zero', "
                             f"got {unconnected_gradients!r}")
        self._use("gradient")
        try:
            return self._gradient(target, sources, output_gradients, unconnected_gradients,
                                  consume=not self._persistent)
        finally:
            if not self._persistent:
                self._release()

    def _use(self, method: str) -> None:
        """Mark the tape used by ``method``; a non-persistent tape is used only once."""
        if self._used and not self._persistent:
            raise RuntimeError(
                f"GradientTape.{method} can only be called once on a non-persistent tape "
                "(gradient, jacobian and batch_jacobian each use it); create the tape with "
                "persistent=True to compute several gradients")
        self._used = True

    def _release(self) -> None:
        self._records = []
        self._tracked = {}
        self._var_values = {}

    def _gradient(self, target: Any, sources: Any, output_gradients: Any,
                  unconnected: str, consume: bool = False) -> Any:
        """The gradient walk; ``consume``: this is the tape's last use, so the walk drops
        each record (and the activations only it kept) as soon as its rule has run."""
        single = isinstance(sources, (Tensor, Variable))
        flat_src = [sources] if single else flatten(sources)
        src_ids: list[list[int]] = []
        src_values: list[Tensor | None] = []  # each differentiable source's value, read once
        for k, s in enumerate(flat_src):
            sv = s if type(s) is Tensor else _read(s) if isinstance(s, Variable) else None
            src_values.append(sv if sv is not None and is_differentiable(array_of(sv).dtype)
                              else None)
            if sv is not None and src_values[-1] is None:
                warnings.warn(
                    f"GradientTape.gradient: source {k} has dtype {s.dtype}; gradients are "
                    "only computed for floating or complex sources, so it gets None",
                    stacklevel=3)
                src_ids.append([])
            elif isinstance(s, Variable):
                src_ids.append(list(self._var_values.get(id(s), {})))
            elif isinstance(s, Tensor):
                place = self._tracked.get(id(s))
                src_ids.append([] if place is None else [id(place)])  # unwatched: None
            else:
                raise TypeError(f"GradientTape.gradient: sources must be tensors or variables, "
                                f"got {type(s).__name__}")
        targets = [target] if type(target) is Tensor else [_read(target)] \
            if isinstance(target, Variable) else [_read(t) for t in flatten(target)]
        key = self._tracked.get
        keys = [key(id(t), t) for t in targets]  # the walk's places of the targets
        # A target that is itself a source (t.gradient(v, v)) has gradient ones through
        # the identity, watched or not, as in TensorFlow: such a source wants its target's
        # seed even when the tape never tracked it (but no gradient through recorded ops).
        seeded = {id(t) for t in keys}
        direct: set[int] = set()
        for sv, ids in zip(src_values, src_ids):
            if sv is not None:
                k = id(key(id(sv), sv))
                if k in seeded and k not in ids:
                    ids.append(k)
                    direct.add(k)
        del key  # a bound method of the tracked dict, which the walk may let go of
        if output_gradients is None:
            ogs: list[Any] = [None] * len(targets)
        elif isinstance(target, (list, tuple, dict)):
            ogs = flatten(output_gradients)
        else:
            ogs = [output_gradients]
        if len(ogs) != len(targets):
            raise ValueError(f"output_gradients has {len(ogs)} entries for {len(targets)} targets")
        ogs = [None if og is None else _output_gradient(og, t, k if len(ogs) > 1 else None)
               for k, (og, t) in enumerate(zip(ogs, targets))]
        token = recording.exclude(self)  # the backward pass is not recorded on this tape
        try:
            grads = self._backward(targets, ogs, {i for ids in src_ids for i in ids} - direct,
                                   direct, consume, keys)
        finally:
            recording.pop(token)
        out = []
        for sv, ids in zip(src_values, src_ids):
            g = None
            for i in ids:
                gi = grads.get(i)
                if gi is not None:
                    g = gi if g is None else em.add(g, gi)
            if g is None and unconnected == _ZERO and sv is not None:
                g = em.zeros_like(sv)
            out.append(g)
        return out[0] if single else pack_as(sources, out)

    def _backward(self, targets: list[Tensor], ogs: list[Any], wanted: set[int],
                  direct: frozenset[int] | set[int] = frozenset(),
                  consume: bool = False, keys: list[Any] | None = None) -> dict[int, Any]:
        # Forward reachability: only ops downstream of a wanted source matter. Integer and
        # bool outputs carry no gradient (as in record_op), so a target of such a dtype
        # (say cast(x, int32)) gets none instead of a seed of ones. ``direct``: untracked
        # sources that are targets; they get their seed and nothing else.
        # Memory: an output's gradient is complete once the walk reaches the op that made
        # it (every consumer came later), so it is dropped there unless it is a source's;
        # with ``consume`` the walk also owns the records and drops each one after its
        # rule, so activations die as the walk passes them, as in PyTorch.
        reach, needed = _reachable(self._records, wanted)
        if consume:  # the tape's own references go; the walk holds the records now
            self._records, self._tracked = [], {}
        grads: dict[int, Any] = {}
        for t, k, og in zip(targets, targets if keys is None else keys, ogs):
            if id(k) not in reach and id(k) not in direct:
                continue
            if og is None:  # the seed gradient: ones, recorded by no tape
                with recording_to():
                    g = em.ones_like(t)
            else:
                g = og
            _accumulate(grads, k, g)
        get, pop = grads.get, grads.pop
        for k in range(len(needed) - 1, -1, -1):
            op, inputs, attrs, outputs, saved_in, saved_out = needed[k]
            if consume:
                needed[k] = None
            if len(outputs) == 1:
                o = id(outputs[0])
                dy: Any = get(o) if o in wanted else pop(o, None)
                if dy is None:
                    continue
            else:
                dys = [get(id(o)) if id(o) in wanted else pop(id(o), None) for o in outputs]
                if all(d is None for d in dys):
                    continue
                dy = dys if op.name in _MISSING_AS_NONE else \
                    [_zeros(o) if d is None else d for o, d in zip(outputs, dys)]
            name = op.name
            rule = _RULES.get(name)
            if rule is None:
                raise LookupError(f"no gradient rule is registered for op {name!r}")
            ctx = OpContext(op, inputs if saved_in is None else saved_in, attrs,
                            outputs if saved_out is None else saved_out)
            ctx._reach = reach
            ctx._keys = inputs
            gin = rule(ctx, dy)
            if type(gin) is not tuple and type(gin) is not list:
                gin = (gin,)
            for i, (x, g) in enumerate(zip(inputs, gin)):
                if g is not None and id(x) in reach:
                    _accumulate(grads, x, g, name, i)
            del ctx, gin, dy, saved_in, saved_out  # the next rule may need the memory
        return grads

    # --- jacobians ---------------------------------------------------------------------
    def jacobian(self, target: Any, sources: Any, unconnected_gradients: str = _NONE) -> Any:
        """d(target[i...])/d(source[j...]) for every element: shape target.shape + source.shape."""
        self._use("jacobian")
        try:
            t = _read(target)
            flat_src = flatten(sources)
            rows: list[list[Any]] = [[] for _ in flat_src]
            n = max(t.size, 1)
            eye = em.reshape(em.eye(n, dtype=t.dtype), (n,) + t.shape) if t.size else em.zeros((0,))
            for i in range(t.size):
                g = self._gradient(t, flat_src, eye[i], unconnected_gradients)
                for k, gk in enumerate(g):
                    rows[k].append(gk)
            out = []
            for s, r in zip(flat_src, rows):
                sv = _read(s)
                if any(g is None for g in r) or not r:
                    out.append(em.zeros(t.shape + sv.shape, dtype=sv.dtype)
                               if unconnected_gradients == _ZERO or not r else None)
                else:
                    out.append(em.reshape(em.stack(r), t.shape + sv.shape))
            return pack_as(sources, out)
        finally:
            if not self._persistent:
                self._release()

    def batch_jacobian(self, target: Any, source: Any) -> Any:
        """Per-example jacobian: for target (B, Y...) and source (B, X...) gives (B, Y..., X...).

        Assumes example b of the target depends only on example b of the source.
        """
        self._use("batch_jacobian")
        try:
            t = _read(target)
            s = _read(source)
            b = t.shape[0]
            inner = t.shape[1:]
            m = 1
            for d in inner:
                m *= d
            cols = []
            eye = em.eye(m, dtype=t.dtype)
            for j in range(m):
                og = em.broadcast_to(em.reshape(eye[j], (1,) + inner), t.shape)
                g = self._gradient(t, source, og, _ZERO)
                cols.append(g)
            jac = em.stack(cols, axis=1)  # (B, m, X...)
            return em.reshape(jac, (b,) + inner + s.shape[1:])
        finally:
            if not self._persistent:
                self._release()


def _reachable(records: list[Any], wanted: set[int]) -> tuple[set[int], list[Any]]:
    """The ids of tensors downstream of ``wanted`` and the records that lead there."""
    reach = set(wanted)
    needed = []
    for rec in records:
        for x in rec[1]:
            if id(x) in reach:
                for o in rec[3]:
                    dt = _meta(o)[1]
                    if dt.kind in "fc" or is_differentiable(dt):
                        reach.add(id(o))
                needed.append(rec)
                break
    return reach, needed


class _Freed:
    """Stands in a tape's records for a tensor no recorded rule reads: its shape and dtype
    (what the walk needs of it) without its values. When the tensor dies, the stand-in
    leaves the tape's table of tracked tensors, so a new tensor with its id is not it."""

    __slots__ = ("__weakref__", "_id", "_ref", "_tracked", "dtype", "shape")

    def __init__(self, t: Tensor, tracked: dict[int, Any]) -> None:
        a = array_of(t)
        self.shape, self.dtype = a.shape, a.dtype  # numpy's and cupy's shapes are tuples
        self._id, self._tracked = id(t), tracked
        self._ref = weakref.ref(t, self._gone)  # the callback keeps the stand-in alive

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def _gone(self, _: Any) -> None:
        if self._tracked.get(self._id) is self:
            del self._tracked[self._id]

    def __repr__(self) -> str:
        return f"<freed tensor, shape={self.shape}, dtype={self.dtype}>"


def _meta(x: Any) -> tuple[tuple[int, ...], Any]:
    """(shape, array dtype) of a tensor or its stand-in."""
    if type(x) is _Freed:
        return x.shape, x.dtype
    a = array_of(x)
    return tuple(a.shape), a.dtype


def _read(x: Any) -> Tensor:
    if isinstance(x, Variable):
        return read_without_recording(x)
    return x if isinstance(x, Tensor) else em.convert_to_tensor(x)


def _output_gradient(og: Any, target: Tensor, k: int | None) -> Tensor:
    """``og`` as a tensor on the target's device, checked to have the target's shape."""
    g = em.convert_to_tensor(og, device=device_of(target))
    if g.shape != target.shape:
        which = "output_gradients" if k is None else f"output_gradients[{k}]"
        raise ValueError(f"GradientTape.gradient: {which} has shape {g.shape} "
                         f"but its target has shape {target.shape}; "
                         "they must be equal")
    return g


def _check_rule_gradient(name: str, i: int, x: Tensor, g: Any) -> None:
    """Raise if rule ``name``'s gradient ``g`` for input ``i`` cannot be ``x``'s gradient:
    it must have ``x``'s shape or one ``x`` broadcasts to (the walker sums it back)."""
    gshape = tuple(g.shape) if isinstance(g, Tensor) else tuple(em.convert_to_tensor(g).shape)
    xshape = _meta(x)[0]
    lead = len(gshape) - len(xshape)
    if lead >= 0 and all(d == 1 or d == gshape[lead + j] for j, d in enumerate(xshape)):
        return
    raise ValueError(
        f"the gradient rule of op {name!r} returned a gradient of shape {gshape} for input "
        f"{i}, of shape {xshape}; it must have the input's shape (or one the input "
        "broadcasts to). Note: a rule receives the gradient of a one-output op, a forward "
        "returning a 1-tuple included, as one Tensor `dy`, and a list only for two or more "
        "outputs")


def _accumulate(grads: dict[int, Any], x: Tensor, g: Any, rule: str | None = None,
                i: int = 0) -> None:
    """Add ``g`` into the gradient of ``x``, undoing broadcasting and promotion first.

    ``rule`` and ``i``: the op whose rule gave ``g`` for its input ``i`` (checked to have a
    shape ``x`` broadcasts to); None for a seed gradient, checked by the caller.
    """
    if type(g) is not Tensor:
        g = em.convert_to_tensor(g)
    ga = array_of(g)
    xshape, xdtype = _meta(x)
    if ga.shape != xshape:
        if rule is not None:
            _check_rule_gradient(rule, i, x, g)
        g = _unbroadcast(g, xshape)
    if ga.dtype != xdtype:
        g = em.cast(g, xdtype)
    k = id(x)
    prev = grads.get(k)
    grads[k] = g if prev is None else em.add(prev, g)


def _unbroadcast(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    lead = g.ndim - len(shape)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(shape)
                                if d == 1 and g.shape[lead + i] != 1]
    if axes:
        g = em.reduce_sum(g, axes, keepdims=False)
    return em.reshape(g, shape) if g.shape != shape else g


def _zeros(t: Tensor) -> Tensor:
    """Zeros for an output that got no gradient, recorded by no tape, as the seed is (an op
    still: graph mode's tracer replays it; the fused recurrent cells skip it altogether,
    see ``MISSING_AS_NONE``)."""
    with recording_to():
        return em.zeros_like(t)

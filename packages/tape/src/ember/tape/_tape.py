"""GradientTape: records ops through core's recording interface and walks them backwards.

What a tape keeps: for each recorded op, its input and output tensors and attributes (the
rules read inputs and outputs, e.g. ``exp`` reuses its output, ``multiply`` its inputs).
Where an op's rule reads no input or no output tensor (``_rules.DROPS_INPUTS`` /
``DROPS_OUTPUTS``), a tensor made by such an op is kept as a ``_Freed`` stand-in (its shape
and dtype) unless another recorded op's rule reads it: activations no rule needs die
with the forward's last reference, as in PyTorch. Only ops with at least one watched
input are recorded. A non-persistent tape drops all of it after ``gradient``.

Complex tensors: the tape notes which of the tensors it tracks are complex (a set that
stays empty, and costs nothing in the walk, while no complex tensor is watched or made).
An op that touches one has its rule applied as ``_rules`` declares (``COMPLEX_OWN``,
``COMPLEX_REAL_ONLY``, else holomorphic: ``conj(rule(conj(dy)))``), so ``dy * f'(z)``
becomes the convention's ``dy * conj(f'(z))`` in one place for every holomorphic rule.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
import weakref
from collections.abc import Iterator
from typing import Any, cast

import ember.core as em
from ember.core import REGISTRY, Tensor, Variable, recording
from ember.core.extend import (
    array_of,
    device_of,
    is_differentiable,
    read_without_recording,
    run_op,
)

from ._nest import flatten, pack_as
from ._rules import COMPLEX_OWN as _COMPLEX_OWN
from ._rules import COMPLEX_REAL_ONLY as _COMPLEX_REAL_ONLY
from ._rules import DROPS_INPUTS as _DROPS_INPUTS
from ._rules import DROPS_OUTPUTS as _DROPS_OUTPUTS
from ._rules import MISSING_AS_NONE as _MISSING_AS_NONE
from ._rules import RULES as _RULES
from ._rules import OpContext

_ZERO = "zero"
_ONES_LIKE = REGISTRY["ones_like"]  # the seed gradient
_ZEROS_LIKE = REGISTRY["zeros_like"]  # an output's gradient where none reached it
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
        # (op, input keys, attrs, output keys, inputs or None, outputs or None, keys of the
        # outputs that carry gradients) per recorded op: a key is the tensor itself or its
        # _Freed stand-in (the walk goes by keys); the 5th and 6th are what the rule reads
        # (None: the keys themselves; a stand-in only has the shape and dtype). The walk
        # makes the OpContext a rule sees only for ops a gradient reaches.
        self._records: list[tuple[Any, ...]] = []
        # id -> key: the tensor itself (the ref keeps its id unique) or its _Freed stand-in
        # (which leaves this dict when the tensor dies, so a new tensor with its id is new)
        self._tracked: dict[int, Any] = {}
        self._variables: dict[int, Variable] = {}  # watched variables, in first-read order
        self._var_values: dict[int, dict[int, Tensor]] = {}  # var id -> value tensors read
        self._tokens: list[Any] = []
        self._stand_ins = False  # whether any tracked tensor has had a stand-in
        self._roots: set[int] = set()  # ids of the watched tensors and variable values
        self._complex: set[int] = set()  # ids of the keys of the complex tensors tracked
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
        """Ops inside this block are not recorded by this tape.

        Raises:
            RuntimeError: the tape is not recording (outside its ``with`` block), as
                TensorFlow's: a block that pauses nothing is a mistake to report.
        """
        if not self._tokens:
            raise RuntimeError("GradientTape.stop_recording: the tape is not recording "
                               "(stop_recording works inside the tape's `with` block)")
        token = recording.exclude(self)
        try:
            yield
        finally:
            recording.pop(token)

    def reset(self) -> None:
        """Forget everything recorded so far (the tape stays active)."""
        self._records.clear()
        self._tracked.clear()
        self._roots.clear()
        self._complex.clear()
        self._variables.clear()
        self._var_values.clear()
        self._used = False

    # --- the recorder protocol (called by ember-core) -----------------------------------
    def record_op(self, op: Any, inputs: tuple[Any, ...], attrs: Any,
                  outputs: tuple[Any, ...]) -> None:
        # Called for every op run under the tape: the per-op overhead of eager training on
        # small tensors (tests/test_tape_overhead.py caps the work). The common case, one
        # output and no stand-in on this tape (so that each input is its own key), is kept
        # short; _record_with_stand_ins does the rest.
        if not op.differentiable:
            return
        tracked = self._tracked
        for x in inputs:
            if id(x) in tracked:
                break
        else:
            return
        if self._stand_ins or len(outputs) != 1:
            return self._record_with_stand_ins(op, inputs, attrs, outputs)
        a = array_of(outputs[0])
        if op.name in _DROPS_OUTPUTS and a.nbytes >= FREE_MIN_BYTES:
            return self._record_with_stand_ins(op, inputs, attrs, outputs)
        dt = a.dtype
        kind = dt.kind
        if kind == "f" or kind == "c" or is_differentiable(dt):
            tracked[id(outputs[0])] = outputs[0]
            self._records.append((op, inputs, attrs, outputs, None, None, outputs))
            if kind == "c":
                self._complex.add(id(outputs[0]))
        else:
            self._records.append((op, inputs, attrs, outputs, None, None, ()))

    def _record_with_stand_ins(self, op: Any, inputs: tuple[Any, ...], attrs: Any,
                               outputs: tuple[Any, ...]) -> None:
        """``record_op`` where an input may have a stand-in, or the output gets one (a
        result no rule reads is kept as a stand-in, so that it can die with the forward's
        last reference; small ones are kept as they are: a stand-in costs about as much as
        the op itself, and frees next to nothing), or the op has several outputs."""
        tracked = self._tracked
        get = tracked.get
        keys = tuple([get(id(x), x) for x in inputs])
        name = op.name
        freed = len(outputs) == 1 and name in _DROPS_OUTPUTS and \
            array_of(outputs[0]).nbytes >= FREE_MIN_BYTES
        out_keys, grads_to = [], []
        for o in outputs:
            dt = array_of(o).dtype
            if dt.kind in "fc" or is_differentiable(dt):
                k = o
                if freed:
                    k = _Freed(o, tracked)
                    self._stand_ins = True
                tracked[id(o)] = k
                out_keys.append(k)
                grads_to.append(k)
                if dt.kind == "c":
                    self._complex.add(id(k))
            else:
                out_keys.append(o)
        self._records.append((op, keys, attrs, tuple(out_keys),
                              None if name in _DROPS_INPUTS else inputs,
                              None if freed else outputs, grads_to))

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
        self._roots.add(id(value))
        if array_of(value).dtype.kind == "c":
            self._complex.add(id(value))
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
            dt = array_of(t).dtype if type(t) is Tensor else t.dtype \
                if isinstance(t, (Variable, Tensor)) else None
            if dt is not None and dt.kind not in "fc" and not is_differentiable(dt):
                warnings.warn(
                    f"GradientTape.watch: tensor {i} has dtype {t.dtype}, not floating or "
                    "complex; it is not watched and gets no gradient", stacklevel=2)
                continue
            if isinstance(t, Variable):
                self._variables.setdefault(id(t), t)
                self._track_value(id(t), read_without_recording(t))
            elif isinstance(t, Tensor):
                # a stand-in already there stays
                k = self._tracked.setdefault(id(t), t)
                self._roots.add(id(k))
                if dt is not None and dt.kind == "c":
                    self._complex.add(id(k))
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
        Unconnected sources give ``None``, or zeros with ``unconnected_gradients="zero"``;
        so do integer and bool sources (warned about; with ``"zero"``, zeros of their own
        dtype, as TensorFlow's).
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
        """Drop what a non-persistent tape kept, once used (the walk may have already)."""
        if self._records:
            self._records = []
        if self._tracked:
            self._tracked = {}
        self._roots = set()
        self._complex = set()
        self._var_values = {}

    def _gradient(self, target: Any, sources: Any, output_gradients: Any,
                  unconnected: str, consume: bool = False) -> Any:
        """The gradient walk; ``consume``: this is the tape's last use, so the walk drops
        each record (and the activations only it kept) as soon as its rule has run."""
        single = type(sources) is Tensor or isinstance(sources, (Tensor, Variable))
        key = self._tracked.get
        if type(target) is Tensor:
            targets = [target]
            keys = [key(id(target), target)]  # the walk's places of the targets
            target_ids: Any = (id(target),)
        else:
            targets = [_read(target)] if isinstance(target, Variable) else \
                [_read(t) for t in flatten(target)]
            keys = [key(id(t), t) for t in targets]
            target_ids = {id(t) for t in targets}
        # A target that is itself a source (t.gradient(v, v)) has gradient ones through
        # the identity, watched or not, as in TensorFlow: such a source wants its target's
        # seed even when the tape never tracked it (but no gradient through recorded ops).
        direct: set[int] = set()
        wanted: set[int] = set()
        found: list[tuple[Tensor | None, list[int]]] = []  # per source: its value, its ids
        for k, s in enumerate([sources] if single else flatten(sources)):
            if isinstance(s, Variable):
                sv = read_without_recording(s)
            elif isinstance(s, Tensor):
                sv = s
            else:
                raise TypeError(f"GradientTape.gradient: sources must be tensors or variables, "
                                f"got {type(s).__name__}")
            dt = array_of(sv).dtype
            if dt.kind not in "fc" and not is_differentiable(dt):
                warnings.warn(
                    f"GradientTape.gradient: source {k} has dtype {s.dtype}; gradients are "
                    "only computed for floating or complex sources, so it gets None (zeros "
                    "of its dtype with unconnected_gradients='zero', as TensorFlow)",
                    stacklevel=3)
                found.append((sv, []))
                continue
            if type(s) is Tensor or not isinstance(s, Variable):
                place = key(id(s))
                ids = [] if place is None else [id(place)]  # unwatched: None
            else:
                ids = list(self._var_values.get(id(s), ()))
            if id(sv) in target_ids:
                i = id(key(id(sv), sv))
                if i not in ids:
                    ids.append(i)
                    direct.add(i)
            wanted.update(ids)
            found.append((sv, ids))
        del key  # a bound method of the tracked dict, which the walk may let go of
        if output_gradients is None:
            ogs: list[Any] = [None] * len(targets)
        else:
            ogs = flatten(output_gradients) if isinstance(target, (list, tuple, dict)) \
                else [output_gradients]
            if len(ogs) != len(targets):
                raise ValueError(f"output_gradients has {len(ogs)} entries for "
                                 f"{len(targets)} targets")
            ogs = [None if og is None else _output_gradient(og, t, k if len(ogs) > 1 else None)
                   for k, (og, t) in enumerate(zip(ogs, targets))]
        wanted = wanted - direct if direct else wanted
        if self not in recording.active_recorders():  # after its ``with`` block, as usual
            grads = self._backward(targets, ogs, wanted, direct, consume, keys)
        else:
            token = recording.exclude(self)  # the backward pass is not recorded on this tape
            try:
                grads = self._backward(targets, ogs, wanted, direct, consume, keys)
            finally:
                recording.pop(token)
        out = []
        for value, ids in found:
            g = None
            for i in ids:
                gi = grads.get(i)
                if gi is not None:
                    g = gi if g is None else em.add(g, gi)
            if g is None and unconnected == _ZERO and value is not None:
                g = em.zeros_like(value)
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
        # Speed: this loop runs once per op of every eager training step, so the common
        # case (a gradient of its input's shape and dtype) is handled inline and ``_fit``
        # is called only for the others; tests/test_tape_overhead.py caps its calls.
        if not self._stand_ins and self._roots <= wanted:
            # Every watched tensor is wanted (the common case), so every record leads to
            # one and everything tracked is reached: no pass over the records. (With no
            # stand-ins each key is its tensor, so the tracked table's keys are their ids;
            # a set of them, since the table holds the tensors, which the walk lets go.)
            reach, needed = set(self._tracked), self._records
        else:
            reach, needed = _reachable(self._records, wanted)
        cplx = self._complex  # empty unless a complex tensor is tracked
        if consume:  # the tape's own references go; the walk holds the records now
            self._records, self._tracked = [], {}
        grads: dict[int, Any] = {}
        get, pop = grads.get, grads.pop
        freed = self._stand_ins  # whether a key may be a stand-in
        for t, k, og in zip(targets, targets if keys is None else keys, ogs):
            i = id(k)
            if i not in reach and i not in direct:
                continue
            # the seed: ones, an op (graph mode's tracer replays it) that no tape records
            g = run_op(_ONES_LIKE, (t,), {"dtype": array_of(t).dtype}) if og is None else og
            prev = get(i)
            grads[i] = g if prev is None else em.add(prev, g)
        # Last record first. Consuming, the walk pops each record (so that it, and the
        # activations only it kept, go once its rule has run): iter(pop, None) pops until
        # the None put first, without a Python frame per step.
        if consume:  # the walk owns the list of records: a None sentinel goes first
            cast("list[tuple[Any, ...] | None]", needed).insert(0, None)
        for rec in iter(needed.pop, None) if consume else reversed(needed):
            op, inputs, attrs, outputs, saved_in, saved_out, _ = rec
            if len(outputs) == 1:
                i = id(outputs[0])
                dy: Any = get(i) if i in wanted else pop(i, None)
                if dy is None:
                    continue
            else:
                dys = [get(id(o)) if id(o) in wanted else pop(id(o), None) for o in outputs]
                if dys.count(None) == len(dys):
                    continue
                dy = dys if op.name in _MISSING_AS_NONE else \
                    [_zeros(o) if d is None else d for o, d in zip(outputs, dys)]
            try:
                rule = _RULES[op.name]
            except KeyError:
                raise LookupError(f"no gradient rule is registered for op {op.name!r}") from None
            ctx = OpContext(op, inputs if saved_in is None else saved_in, attrs,
                            outputs if saved_out is None else saved_out, reach, inputs)
            if cplx and _touches(cplx, inputs, outputs):
                gin = _complex_rule(op.name, rule, ctx, dy)
            else:
                gin = rule(ctx, dy)
            if type(gin) is not tuple and type(gin) is not list:
                gin = (gin,)
            for x, g in zip(inputs, gin):
                if g is None or (i := id(x)) not in reach:
                    continue
                if type(g) is not Tensor:
                    g = _fit(g, x, op.name, inputs, gin)
                else:
                    ga = array_of(g)
                    xa = array_of(x) if not freed or type(x) is not _Freed else x
                    if ga.shape != xa.shape or ga.dtype is not xa.dtype:
                        g = _fit(g, x, op.name, inputs, gin)
                prev = get(i)
                grads[i] = g if prev is None else em.add(prev, g)
            del rec, gin, dy, saved_in, saved_out, ctx  # the next rule may need the memory
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

        Raises:
            InvalidArgumentError: either has rank below 2, or their first dimensions
                differ (as TensorFlow's, which raises ValueError).
        """
        self._use("batch_jacobian")
        try:
            t = _read(target)
            s = _read(source)
            if t.ndim < 2 or s.ndim < 2 or t.shape[0] != s.shape[0]:
                raise em.InvalidArgumentError(
                    f"batch_jacobian: target and source need rank 2 or more and the same "
                    f"first dimension (the batch); got target shape {t.shape} and source "
                    f"shape {s.shape}")
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


def _touches(cplx: set[int], inputs: tuple[Any, ...], outputs: tuple[Any, ...]) -> bool:
    """Whether a record's inputs or outputs (keys) include a complex tensor."""
    for t in outputs:
        if id(t) in cplx:
            return True
    for t in inputs:
        if id(t) in cplx:
            return True
    return False


def _describe(ts: Any) -> str:
    return ", ".join(f"{_meta(t)[1]} {_meta(t)[0]}" for t in ts if t is not None)


def _complex_rule(name: str, rule: Any, ctx: OpContext, dy: Any) -> Any:
    """Op ``name``'s gradients where a complex tensor is among its inputs or outputs:
    as its rule gives them (``COMPLEX_OWN``), refused (``COMPLEX_REAL_ONLY``), or, for a
    holomorphic rule (written as ``dy * f'``), ``conj(rule(conj(dy)))``: ``dy * conj(f')``,
    TensorFlow's and PyTorch's convention (the gradient of a real loss with respect to
    ``z`` is dL/d re(z) + i dL/d im(z)). A real input's gradient is then the real part
    (``_fit``)."""
    if name in _COMPLEX_OWN:
        return rule(ctx, dy)
    if name in _COMPLEX_REAL_ONLY:
        raise TypeError(
            f"GradientTape.gradient: op {name!r} has a gradient for real tensors only, and "
            f"complex ones reached it (inputs: {_describe(ctx.inputs)}; outputs: "
            f"{_describe(ctx.outputs)}); differentiate a real function of the complex "
            "values (em.math.real, em.math.imag, em.abs) before this op instead")
    conj = em.math.conj
    if type(dy) is list:
        dy = [None if d is None else conj(d) for d in dy]
    else:
        dy = conj(dy)
    gin = rule(ctx, dy)
    if type(gin) is not tuple and type(gin) is not list:
        return None if gin is None else conj(gin)
    return tuple([None if g is None else conj(g) for g in gin])


def _reachable(records: list[Any], wanted: set[int]) -> tuple[set[int], list[Any]]:
    """The ids of tensors downstream of ``wanted`` and the records that lead there (only
    when some watched tensor is not wanted: see ``_backward``)."""
    reach = set(wanted)
    needed = []
    for rec in records:
        for x in rec[1]:
            if id(x) in reach:
                for o in rec[6]:  # the outputs that carry gradients
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
    """``og`` as a tensor on the target's device, checked to have the target's shape, in
    the target's dtype (the walk adds it into the target's gradient as it is)."""
    g = em.convert_to_tensor(og, device=device_of(target))
    if g.shape != target.shape:
        which = "output_gradients" if k is None else f"output_gradients[{k}]"
        raise ValueError(f"GradientTape.gradient: {which} has shape {g.shape} "
                         f"but its target has shape {target.shape}; "
                         "they must be equal")
    dt = array_of(target).dtype
    return g if array_of(g).dtype == dt else em.cast(g, dt)


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


def _fit(g: Any, x: Any, rule: str, inputs: tuple[Any, ...], gin: Any) -> Tensor:
    """Rule ``rule``'s gradient ``g`` for its input ``x`` (of ``inputs``; ``gin``: all the
    gradients it gave), made a Tensor of ``x``'s shape and dtype: broadcasting undone once
    here rather than in every rule, and checked to be a shape ``x`` broadcasts to (the walk
    calls this only when ``g`` does not already fit)."""
    i = next(j for j, (xj, gj) in enumerate(zip(inputs, gin)) if xj is x and gj is g)
    if type(g) is not Tensor:
        g = em.convert_to_tensor(g)
    ga = array_of(g)
    xshape, xdtype = _meta(x)
    if ga.shape != xshape:
        _check_rule_gradient(rule, i, x, g)
        g = _unbroadcast(g, xshape)
    if ga.dtype != xdtype:
        if ga.dtype.kind == "c" and xdtype.kind != "c":
            g = em.math.real(g)  # a real input of a complex op: the real part
        if array_of(g).dtype != xdtype:
            g = em.cast(g, xdtype)
    return g


def _unbroadcast(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    lead = g.ndim - len(shape)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(shape)
                                if d == 1 and g.shape[lead + i] != 1]
    if axes:
        g = em.reduce_sum(g, axes, keepdims=False)
    return em.reshape(g, shape) if g.shape != shape else g


def _zeros(t: Any) -> Tensor:
    """Zeros for an output that got no gradient: an op still (graph mode's tracer replays
    it), recorded by no tape since ``zeros_like`` is not differentiable, as the seed's
    ``ones_like`` is not (the fused recurrent cells skip it, see ``MISSING_AS_NONE``)."""
    return run_op(_ZEROS_LIKE, (t,), {"dtype": array_of(t).dtype})

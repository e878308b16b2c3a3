"""TensorFlow 2's functional control flow: ``tf.map_fn``, ``tf.scan``, ``tf.foldl``,
``tf.foldr``, ``tf.while_loop``, ``tf.cond``, ``tf.case``, ``tf.switch_case`` and
``tf.vectorized_map``, with TensorFlow's signatures, defaults and errors.

ember always executes eagerly, so each is a Python function over ember ops: ``cond``
reads its predicate and calls one branch, ``while_loop`` loops in Python, ``map_fn``
slices its elements along axis 0, calls ``fn`` on each and stacks the results. A tape
therefore differentiates through exactly the ops the branches and bodies ran, and
``graph.function`` traces them like any other Python code: a predicate read while
tracing (``cond``'s ``pred``, ``while_loop``'s ``cond``) becomes a guard of the trace,
so a replay never takes the wrong branch or runs the wrong number of iterations.

Nested structures are TensorFlow's (``tf.nest``): lists, tuples, namedtuples and dicts
(taken in sorted key order), with anything else a leaf. ``parallel_iterations`` and
``swap_memory`` are performance hints in TensorFlow; here iterations run one after
another and nothing is swapped, so they are checked (as TensorFlow checks them) and
have no effect on results. ``back_prop=False`` returns results that carry no gradient
(``stop_gradient``), which is what TensorFlow's deprecation note recommends instead.

Predicates (``cond``'s ``pred``, ``case``'s, what ``while_loop``'s ``cond`` returns)
are Python bools or scalar bool tensors; anything else is an error naming the function
and the argument.

Examples:
    >>> import ember.core as em
    >>> em.map_fn(lambda t: em.range(t, t + 3), em.constant([3, 5, 2]))
    ember.Tensor([[3 4 5]
     [5 6 7]
     [2 3 4]], shape=(3, 3), dtype=int32)
    >>> em.scan(lambda a, x: a + x, em.constant([1, 2, 3, 4, 5, 6]))
    ember.Tensor([ 1  3  6 10 15 21], shape=(6,), dtype=int32)
    >>> em.while_loop(lambda i: i < 10, lambda i: (i + 1,), [0])
    [ember.Tensor(10, shape=(), dtype=int32)]
    >>> em.cond(em.constant(2) < 5, lambda: em.constant(14), lambda: em.constant(8))
    ember.Tensor(14, shape=(), dtype=int32)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._device import device
from ._dtypes import as_dtype, bfloat16, bool_
from ._errors import DTypeError, InvalidArgumentError
from ._ops.array import stack, unstack
from ._ops.creation import convert_to_tensor, zeros
from ._ops.math import stop_gradient
from ._tensor import Tensor
from ._tensor_array import TensorArray

__all__ = ["case", "cond", "foldl", "foldr", "map_fn", "scan", "switch_case",
           "vectorized_map", "while_loop"]

Shape = tuple[int | None, ...] | None  # None: any shape; a None size: any size


# --- nested structures (tf.nest's rules) -------------------------------------------------

def _is_nested(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))


def _keys(d: dict[Any, Any]) -> list[Any]:
    try:
        return sorted(d)
    except TypeError:
        raise TypeError(f"dict keys must be sortable (nested structures take a dict's "
                        f"entries in sorted key order, as tf.nest does), got keys "
                        f"{list(d)!r}") from None


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [v for k in _keys(x) for v in _flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in _flatten(e)]
    return [x]


def _paths(x: Any, where: str) -> list[str]:
    """Where each leaf of ``x`` sits (``elems[0]['a']``), in ``_flatten``'s order."""
    if isinstance(x, dict):
        return [p for k in _keys(x) for p in _paths(x[k], f"{where}[{k!r}]")]
    if isinstance(x, (list, tuple)):
        return [p for i, e in enumerate(x) for p in _paths(e, f"{where}[{i}]")]
    return [where]


def _pack(structure: Any, flat: list[Any]) -> Any:
    """``structure`` with its leaves replaced, in order, by ``flat``'s values."""
    return _build(structure, iter(flat))


def _build(s: Any, it: Iterator[Any]) -> Any:
    # (a module-level function, not a closure calling itself: no reference cycle)
    if isinstance(s, dict):
        built = {k: _build(s[k], it) for k in _keys(s)}
        pairs = [(k, built[k]) for k in s]  # the structure's own key order, as tf.nest
        try:
            return type(s)(pairs)
        except TypeError:  # a dict subclass that is not built from pairs
            return dict(pairs)
    if isinstance(s, tuple) and hasattr(s, "_fields"):  # a namedtuple
        return type(s)(*[_build(e, it) for e in s])
    if isinstance(s, list):
        return [_build(e, it) for e in s]
    if isinstance(s, tuple):
        return tuple(_build(e, it) for e in s)
    return next(it)


def _same_kind(a: Any, b: Any) -> bool:
    """Whether two sequences are of one kind for tf.nest's ``check_types``: both lists,
    both plain tuples, or namedtuples of one name and fields."""
    na, nb = hasattr(a, "_fields"), hasattr(b, "_fields")
    if na or nb:
        return na and nb and type(a).__name__ == type(b).__name__ and a._fields == b._fields
    return isinstance(a, list) == isinstance(b, list)


def _structure_problem(a: Any, b: Any, check_types: bool, where: str
                       ) -> tuple[type[Exception], str] | None:
    if _is_nested(a) != _is_nested(b):
        kind = {True: "a nested structure", False: "a single value"}
        return ValueError, (f"at {where}: expected {kind[_is_nested(a)]}, got "
                            f"{kind[_is_nested(b)]}")
    if not _is_nested(a):
        return None
    if isinstance(a, dict) != isinstance(b, dict):
        return TypeError, (f"at {where}: expected a {type(a).__name__}, got a "
                           f"{type(b).__name__}")
    if isinstance(a, dict):
        if set(a) != set(b):
            return ValueError, (f"at {where}: expected the keys {_keys(a)!r}, got "
                                f"{_keys(b)!r}")
        for k in _keys(a):
            p = _structure_problem(a[k], b[k], check_types, f"{where}[{k!r}]")
            if p:
                return p
        return None
    if check_types and not _same_kind(a, b):
        return TypeError, (f"at {where}: expected a {type(a).__name__}, got a "
                           f"{type(b).__name__} (the sequence types must match, as "
                           f"tf.nest.assert_same_structure requires)")
    if len(a) != len(b):
        return ValueError, (f"at {where}: expected {_entries(len(a))}, got {_entries(len(b))}")
    for i, (x, y) in enumerate(zip(a, b)):
        p = _structure_problem(x, y, check_types, f"{where}[{i}]")
        if p:
            return p
    return None


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def _sketch(x: Any) -> str:
    """A structure drawn with its leaves as their kinds: ``(tensor, [tensor, 2])``."""
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_sketch(x[k])}" for k in x) + "}"
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return f"{type(x).__name__}(" + ", ".join(
            f"{f}={_sketch(v)}" for f, v in zip(x._fields, x)) + ")"
    if isinstance(x, list):
        return "[" + ", ".join(_sketch(e) for e in x) + "]"
    if isinstance(x, tuple):
        return "(" + ", ".join(_sketch(e) for e in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, Tensor):
        return "tensor"
    if isinstance(x, (bool, int, float, complex, np.dtype)):
        return repr(x) if not isinstance(x, np.dtype) else x.name
    return type(x).__name__


def _assert_same_structure(fn: str, what: str, expected: Any, expected_what: str, got: Any,
                           check_types: bool) -> None:
    p = _structure_problem(expected, got, check_types, "the top")
    if p is not None:
        kind, detail = p
        raise kind(f"{fn}: {what} must have the same structure as {expected_what}: "
                   f"{detail}.\n  expected: {_sketch(expected)}\n  got:      {_sketch(got)}")


# --- values -------------------------------------------------------------------------------

_PYTHON_KINDS = {bool: "b", int: "iufc", float: "fc", complex: "c"}


def _to_tensor(value: Any, preferred: np.dtype | None = None) -> Tensor:
    """``value`` as a tensor: tensors pass through, variables are read, anything else is
    converted. A Python number takes ``preferred`` where it holds it (TensorFlow's
    ``preferred_dtype``: ``1`` written where float32 is expected is float32)."""
    if isinstance(value, Tensor):
        return value
    kinds = _PYTHON_KINDS.get(type(value))
    if preferred is not None and kinds is not None and (
            preferred.kind in kinds or (preferred == bfloat16 and "f" in kinds)):
        return convert_to_tensor(value, preferred)
    return convert_to_tensor(value)


def _check_callable(fn: str, arg: str, value: Any) -> None:
    if not callable(value):
        raise TypeError(f"{fn}: {arg} must be callable, got {type(value).__name__}")


def _check_flag(fn: str, arg: str, value: Any) -> None:
    if not isinstance(value, (bool, np.bool_, int)):
        raise TypeError(f"{fn}: {arg} must be a bool, got {type(value).__name__}")


def _check_hints(fn: str, parallel_iterations: Any, swap_memory: Any,
                 none_ok: bool = False) -> None:
    """TensorFlow's checks of its performance hints (which change no result here)."""
    if not (parallel_iterations is None and none_ok) and (
            isinstance(parallel_iterations, (bool, np.bool_))
            or not isinstance(parallel_iterations, (int, np.integer))
            or parallel_iterations < 1):
        raise TypeError(f"{fn}: parallel_iterations must be a positive integer, got "
                        f"{parallel_iterations!r}")
    _check_flag(fn, "swap_memory", swap_memory)


def _predicate(fn: str, what: str, pred: Any) -> bool | Tensor:
    """``pred`` checked to be a Python bool or a scalar bool tensor (not yet read)."""
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if pred is None or isinstance(pred, (str, bytes)) or (
            type(pred) in _PYTHON_KINDS):
        raise TypeError(f"{fn}: {what} must be a Python bool or a scalar bool tensor, "
                        f"got {type(pred).__name__} {pred!r}")
    t = _to_tensor(pred)
    if t.dtype != bool_:
        raise DTypeError(f"{fn}: {what} must be a Python bool or a scalar bool tensor, got "
                         f"{'an' if t.dtype.name[0] in 'aeiou' else 'a'} {t.dtype.name} tensor "
                         f"(compare it, e.g. x > 0, to make one)")
    if t.shape != ():
        raise InvalidArgumentError(
            f"{fn}: {what} must be a scalar bool tensor, got one of shape {tuple(t.shape)} "
            f"(reduce it first, e.g. with em.reduce_all or em.reduce_any)")
    return t


def _truth(fn: str, what: str, pred: Any) -> bool:
    """``pred``'s value (read on the host: under ``graph.function``, a guard)."""
    return bool(_predicate(fn, what, pred))


def _dtype_name(dt: Any) -> str:
    return str(getattr(dt, "name", dt))


def _check_dtype(fn: str, where: str, got: Tensor, want: np.dtype, said: str) -> None:
    """``said`` names what fixes the dtype: ``"fn_output_signature says {}"``."""
    if got.dtype != want:
        raise DTypeError(f"{fn}: {where} has dtype {_dtype_name(got.dtype)}, but "
                         + said.format(_dtype_name(want)))


def _fits(shape: Shape, got: tuple[int, ...]) -> bool:
    if shape is None:
        return True
    return len(shape) == len(got) and all(s is None or s == g for s, g in zip(shape, got))


def _shape_text(shape: Shape) -> str:
    if shape is None:
        return "<any shape>"
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _as_shape(fn: str, what: str, value: Any) -> Shape:
    """A shape from ``value``: None (any shape), a TensorShape, a list or tuple of sizes
    and Nones, or a TensorSpec-like object (its ``shape``)."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) and hasattr(value, "shape") \
            and not isinstance(value, Tensor):
        value = value.shape
        if value is None:
            return None
    dims = getattr(value, "dims", value)
    if dims is None:
        return None
    try:
        return tuple(None if d is None else operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"{fn}: {what} must be a shape (a TensorShape, or a list of sizes "
                        f"with None for a size that may vary), got {value!r}") from None


def _sliceable(fn: str, elems: Any) -> tuple[list[Tensor], list[str], int]:
    """``elems``' tensors (flattened), where each sits, and their common length."""
    flat = [_to_tensor(e) for e in _flatten(elems)]
    where = _paths(elems, "elems")
    if not flat:
        raise ValueError(f"{fn}: elems must hold at least one tensor, got {elems!r}")
    for t, w in zip(flat, where):
        if len(t.shape) == 0:
            raise InvalidArgumentError(
                f"{fn}: {w} is a scalar; elems are sliced along axis 0, so each tensor in "
                f"them must have at least one dimension (a Python list is a structure of "
                f"separate tensors, as in TensorFlow: to map over a list's entries, pass "
                f"em.constant(the_list))")
    lengths = [t.shape[0] for t in flat]
    if any(n != lengths[0] for n in lengths):
        raise InvalidArgumentError(
            f"{fn}: every tensor in elems must have the same length along axis 0, got "
            + ", ".join(f"{w}: {n}" for w, n in zip(where, lengths)))
    return flat, where, lengths[0]


def _stacked(fn: str, where: str, column: list[Tensor], dtype: np.dtype, shape: Shape,
             like: Tensor) -> Tensor:
    """The results in ``column`` stacked along a new axis 0; with none, an empty tensor of
    ``dtype`` (of shape ``(0, *shape)`` where ``shape`` is fully known, else ``(0,)``, as
    TensorFlow's eager TensorArray stacks nothing)."""
    if column:
        first = tuple(column[0].shape)
        for k, c in enumerate(column):
            if tuple(c.shape) != first:
                raise InvalidArgumentError(
                    f"{fn}: {where} has shape {_shape_text(first)} for element 0 but "
                    f"{_shape_text(tuple(c.shape))} for element {k}; the results are "
                    f"stacked along a new axis 0, so they must all have one shape")
        return stack(column)
    known = shape is not None and None not in shape
    with device(like.device):
        return zeros((0, *shape) if known else (0,), dtype)  # type: ignore[misc]


def _no_gradient(values: list[Any], back_prop: Any) -> list[Any]:
    if back_prop:
        return values
    return [stop_gradient(v) if isinstance(v, Tensor) else v for v in values]


# --- map_fn and vectorized_map -----------------------------------------------------------

def _output_specs(signature: Any) -> list[tuple[np.dtype, Shape]]:
    specs = []
    for s in _flatten(signature):
        if isinstance(s, Tensor) or s is None:
            raise TypeError(f"map_fn: fn_output_signature (or dtype) must be a dtype or a "
                            f"TensorSpec, or a list, tuple or dict of them, got "
                            f"{type(s).__name__} in {signature!r}")
        if not isinstance(s, np.dtype) and hasattr(s, "dtype") and hasattr(s, "shape"):
            specs.append((as_dtype(s.dtype), _as_shape("map_fn", "a TensorSpec", s.shape)))
            continue
        try:
            specs.append((as_dtype(s), None))
        except TypeError:
            raise TypeError(f"map_fn: fn_output_signature (or dtype) must be a dtype or a "
                            f"TensorSpec, or a list, tuple or dict of them, got {s!r}"
                            ) from None
    return specs


def map_fn(fn: Callable[[Any], Any], elems: Any, dtype: Any = None,
           parallel_iterations: int | None = None, back_prop: bool = True,
           swap_memory: bool = False, infer_shape: bool = True, name: str | None = None,
           fn_output_signature: Any = None) -> Any:
    """Apply ``fn`` to each element of ``elems`` unstacked along axis 0 and stack the
    results (TensorFlow's ``tf.map_fn``).

    For one tensor, ``map_fn(fn, elems)`` is ``em.stack([fn(e) for e in
    em.unstack(elems)])``. For a (nested) list, tuple or dict of tensors, all of one
    length along axis 0, ``fn`` gets the same structure of corresponding slices, and
    may return a (nested) structure of tensors, whose entries are stacked one by one.

    Args:
        fn: A callable taking one element (of ``elems``' structure). Without an output
            signature it must return ``elems``' structure and dtypes; with one, the
            signature's.
        elems: A tensor, or a (nested) list, tuple or dict of tensors, each sliced along
            axis 0 (so each has at least one dimension). Variables are read; numpy
            arrays and Python numbers are converted.
        dtype: TensorFlow's deprecated name for ``fn_output_signature``.
        parallel_iterations: A positive int or None: a performance hint in TensorFlow
            (how many iterations may run at once); checked, no effect on results here
            (iterations run one after another).
        back_prop: If False, the results carry no gradient.
        swap_memory: A bool: TensorFlow's hint to swap GPU memory to the host; checked,
            no effect here.
        infer_shape: If True (TensorFlow's default), each result's shape is checked
            against the first element's as it is made; if False, only when stacking
            (both must agree, as the results are stacked).
        name: Accepted for TensorFlow compatibility.
        fn_output_signature: What ``fn`` returns: a dtype, a ``TensorSpec``-like object
            (``graph.TensorSpec``: its dtype, and its shape, which each result must
            fit), or a (nested) list, tuple or dict of them. Each result must have the
            dtype it gives (Python numbers are converted to it).

    Returns:
        A tensor, or the structure of ``fn_output_signature`` (else of ``elems``) of
        tensors: each stacks ``fn``'s results along a new axis 0. With zero elements
        ``fn`` is never called and each result is empty, of its signature's dtype (or of
        the corresponding ``elems`` tensor's), shaped ``(0, *spec.shape)`` for a
        ``TensorSpec`` of fully known shape and ``(0,)`` otherwise (TensorFlow's eager
        result).

    Raises:
        TypeError: ``fn`` is not callable; ``fn``'s result has another sequence type
            than the signature (or ``elems``); a result has the wrong dtype
            (``DTypeError``).
        ValueError: ``elems`` holds no tensor, a scalar, or tensors of different
            lengths; ``fn``'s result has another structure; results of different shapes
            (``InvalidArgumentError``).

    Examples:
        >>> import ember.core as em
        >>> em.map_fn(lambda x: x * x, em.constant([1, 2, 3, 4, 5, 6]))
        ember.Tensor([ 1  4  9 16 25 36], shape=(6,), dtype=int32)
        >>> em.map_fn(lambda x: x[0] * x[1], (em.constant([1, 2, 3]), em.constant([-1, 1, -1])),
        ...           fn_output_signature=em.int32)
        ember.Tensor([-1  2 -3], shape=(3,), dtype=int32)
        >>> pos, neg = em.map_fn(lambda x: (x, -x), em.constant([1, 2, 3]),
        ...                      fn_output_signature=(em.int32, em.int32))
        >>> neg
        ember.Tensor([-1 -2 -3], shape=(3,), dtype=int32)
    """
    _check_callable("map_fn", "fn", fn)
    _check_hints("map_fn", parallel_iterations, swap_memory, none_ok=True)
    _check_flag("map_fn", "back_prop", back_prop)
    _check_flag("map_fn", "infer_shape", infer_shape)
    signature = dtype if fn_output_signature is None else fn_output_signature
    flat, _, n = _sliceable("map_fn", elems)
    specs: list[tuple[np.dtype, Shape]]
    if signature is None:
        structure, specs = elems, [(t.dtype, None) for t in flat]
        said = ("fn_output_signature is not given, so fn must return elems' dtypes ({}); "
                "give fn_output_signature when fn changes them")
        said_structure = "elems (no fn_output_signature is given)"
    else:
        structure, specs = signature, _output_specs(signature)
        said, said_structure = "fn_output_signature says {}", "fn_output_signature"
    where = _paths(structure, "fn's result")
    rows = [unstack(t) for t in flat]
    columns: list[list[Tensor]] = [[] for _ in specs]
    for i in range(n):
        out = fn(_pack(elems, [r[i] for r in rows]))
        _assert_same_structure("map_fn", f"fn's result (for element {i})", structure,
                               said_structure, out, check_types=True)
        for j, (o, (dt, shape)) in enumerate(zip(_flatten(out), specs)):
            o = _to_tensor(o, dt)
            _check_dtype("map_fn", f"{where[j]} (for element {i})", o, dt, said)
            if not _fits(shape, tuple(o.shape)):
                raise InvalidArgumentError(
                    f"map_fn: {where[j]} (for element {i}) has shape "
                    f"{_shape_text(tuple(o.shape))}, which does not fit the shape "
                    f"{_shape_text(shape)} of fn_output_signature")
            if infer_shape and columns[j] and o.shape != columns[j][0].shape:
                raise InvalidArgumentError(
                    f"map_fn: {where[j]} has shape {_shape_text(tuple(columns[j][0].shape))} "
                    f"for element 0 but {_shape_text(tuple(o.shape))} for element {i}; the "
                    f"results are stacked along a new axis 0, so they must all have one shape")
            columns[j].append(o)
    results = [_stacked("map_fn", w, c, dt, shape, flat[0])
               for w, c, (dt, shape) in zip(where, columns, specs)]
    return _pack(structure, _no_gradient(results, back_prop))


def vectorized_map(fn: Callable[[Any], Any], elems: Any, fallback_to_while_loop: bool = True,
                   warn: bool = True) -> Any:
    """``fn`` applied to each element of ``elems`` along axis 0, results stacked
    (TensorFlow's ``tf.vectorized_map``).

    ember has no ``pfor`` (TensorFlow's vectorizing rewrite of ``fn``): this calls ``fn``
    once per element, as ``map_fn`` does, and gives the results TensorFlow's vectorized
    ``fn`` gives. As in TensorFlow, ``fn`` may return any (nested) structure of tensors
    (no output signature is needed), and a tensor in ``elems`` whose first dimension is
    1 is broadcast against the others' common size ``B``.

    Args:
        fn: A callable taking one element (of ``elems``' structure) and returning a
            tensor or a (nested) list, tuple or dict of tensors, the same structure,
            dtypes and shapes for every element.
        elems: A tensor, or a (nested) list, tuple or dict of tensors, each with a first
            dimension of ``B`` or 1.
        fallback_to_while_loop: A bool: whether TensorFlow may run an op it cannot
            vectorize in a loop. Checked; every op runs per element here, so it changes
            nothing.
        warn: A bool: whether TensorFlow warns about that fallback. Checked; ember
            warns about nothing here.

    Returns:
        ``fn``'s result structure with each tensor stacked along a new axis 0 (``B``
        rows). With ``B = 0``, ``fn`` is called once on zeros of an element's shape,
        as TensorFlow traces it, only to learn its results' structure, dtypes and shapes;
        each result is then empty, of shape ``(0, *shape)``.

    Raises:
        TypeError: ``fn`` is not callable, or its results differ in structure or dtype.
        ValueError: ``elems`` holds no tensor, a scalar, first dimensions that do not
            broadcast, or results of different shapes (``InvalidArgumentError``).

    Examples:
        >>> import ember.core as em
        >>> em.vectorized_map(lambda x: em.tensordot(x, x, 0), em.ones((4, 3))).shape
        (4, 3, 3)
        >>> em.vectorized_map(lambda e: e[0] * e[1],
        ...                   (em.constant([[1., 2.]]), em.constant([[1., 2.], [3., 4.]])))
        ember.Tensor([[1. 4.]
         [3. 8.]], shape=(2, 2), dtype=float32)
    """
    _check_callable("vectorized_map", "fn", fn)
    _check_flag("vectorized_map", "fallback_to_while_loop", fallback_to_while_loop)
    _check_flag("vectorized_map", "warn", warn)
    flat = [_to_tensor(e) for e in _flatten(elems)]
    where = _paths(elems, "elems")
    if not flat:
        raise ValueError(f"vectorized_map: elems must hold at least one tensor, got {elems!r}")
    for t, w in zip(flat, where):
        if len(t.shape) == 0:
            raise InvalidArgumentError(f"vectorized_map: {w} is a scalar; each tensor in "
                                       f"elems must have at least one dimension")
    b = max(t.shape[0] for t in flat)
    if any(t.shape[0] not in (1, b) for t in flat):
        raise InvalidArgumentError(
            "vectorized_map: the first dimensions of the tensors in elems must all be the "
            "same size B, or 1 (broadcast to B), got "
            + ", ".join(f"{w}: {t.shape[0]}" for w, t in zip(where, flat)))
    if b == 0:  # no element: learn the results' form from zeros, as TF's trace does
        probe = []
        for t in flat:
            with device(t.device):
                probe.append(zeros(tuple(t.shape[1:]), t.dtype))
        shown = fn(_pack(elems, probe))
        forms = [_to_tensor(o) for o in _flatten(shown)]
        empty = [_stacked("vectorized_map", "", [], o.dtype, tuple(o.shape), o) for o in forms]
        return _pack(shown, empty)
    rows = [unstack(t) for t in flat]
    structure: Any = None
    columns: list[list[Tensor]] = []
    for i in range(b):
        out = fn(_pack(elems, [r[i] if len(r) == b else r[0] for r in rows]))
        if i == 0:
            structure = out
            columns = [[] for _ in _flatten(out)]
        else:
            _assert_same_structure("vectorized_map", f"fn's result for element {i}", structure,
                                   "its result for element 0", out, check_types=True)
        for j, o in enumerate(_flatten(out)):
            o = _to_tensor(o, columns[j][0].dtype if columns[j] else None)
            if columns[j]:
                _check_dtype("vectorized_map", f"{_paths(structure, 'fn result')[j]} for "
                             f"element {i}", o, columns[j][0].dtype,
                             "for element 0 it had dtype {}; every element's must be the same")
            columns[j].append(o)
    where_out = _paths(structure, "fn's result")
    return _pack(structure, [_stacked("vectorized_map", w, c, c[0].dtype, None, c[0])
                             for w, c in zip(where_out, columns)])


# --- scan, foldl, foldr ----------------------------------------------------------------------

def _start(fn: str, elems: Any, initializer: Any, n: int, rows: list[list[Tensor]],
           first: int) -> tuple[Any, list[Tensor]]:
    """The accumulator's structure and first value: the initializer (converted), or,
    without one, the element at ``first``."""
    if initializer is not None:
        return initializer, [_to_tensor(v) for v in _flatten(initializer)]
    if n == 0:
        raise InvalidArgumentError(
            f"{fn}: elems has no elements and no initializer is given; without an "
            f"initializer an element of elems starts the accumulator, so elems needs at "
            f"least one")
    return elems, [r[first] for r in rows]


def _next_accumulator(fn: str, out: Any, structure: Any, structure_what: str, acc: list[Tensor],
                      step: int, check_types: bool, shapes: list[Shape] | None) -> list[Tensor]:
    _assert_same_structure(fn, f"fn's result (at element {step})", structure, structure_what,
                           out, check_types=check_types)
    where = _paths(structure, "fn's result")
    new = []
    for j, o in enumerate(_flatten(out)):
        o = _to_tensor(o, acc[j].dtype)
        _check_dtype(fn, f"{where[j]} (at element {step})", o, acc[j].dtype,
                     f"the accumulator (from {structure_what}) has dtype {{}}; fn must keep it")
        if shapes is not None and not _fits(shapes[j], tuple(o.shape)):
            raise InvalidArgumentError(
                f"{fn}: {where[j]} (at element {step}) has shape {_shape_text(tuple(o.shape))}, "
                f"but the accumulator started with shape {_shape_text(shapes[j])}; with "
                f"infer_shape=True its shape must stay the same (infer_shape=False lets it "
                f"change, if every result still has one shape)")
        new.append(o)
    return new


def scan(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
         parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
         infer_shape: bool = True, reverse: bool = False, name: str | None = None) -> Any:
    """Accumulate ``fn`` over ``elems`` unstacked along axis 0 and stack every
    accumulator value (TensorFlow's ``tf.scan``).

    ``fn(accumulator, element)`` returns the next accumulator. Without an
    ``initializer``, the first element (the last, with ``reverse=True``) starts the
    accumulator and is also the first result (``elems`` must then have an element, and
    ``fn`` returns ``elems``' structure and dtypes); with one, ``fn`` is called on
    every element and returns the initializer's structure and dtypes.

    Args:
        fn: A callable ``fn(accumulator, element)``; ``element`` has ``elems``'
            structure, ``accumulator`` the initializer's (else ``elems``').
        elems: A tensor, or a (nested) list, tuple or dict of tensors of one length
            along axis 0.
        initializer: Optional: the accumulator's first value, a tensor (or Python
            number or numpy array, converted) or a (nested) structure of them.
        parallel_iterations: A positive int: a performance hint in TensorFlow; checked,
            no effect on results.
        back_prop: If False, the results carry no gradient.
        swap_memory: A bool: TensorFlow's GPU memory hint; checked, no effect.
        infer_shape: If True, every accumulator value must keep the first one's shape;
            if False it may change (the stacked results must still share one shape).
        reverse: If True, scan from the last element to the first; results keep
            ``elems``' order (result ``i`` belongs to element ``i``).
        name: Accepted for TensorFlow compatibility.

    Returns:
        The accumulator's structure of tensors, each stacking its values along a new
        axis 0 (``elems``' length rows). With zero elements and an initializer, each is
        empty, shaped ``(0, *initializer.shape)`` (``(0,)`` with ``infer_shape=False``).

    Raises:
        TypeError: ``fn`` is not callable, its result has another sequence type or a
            different dtype (``DTypeError``) than the accumulator.
        ValueError: ``elems`` holds no tensor, a scalar or tensors of different lengths;
            no element and no initializer; ``fn``'s result has another structure or
            (``infer_shape``) shape (``InvalidArgumentError``).

    Examples:
        >>> import ember.core as em
        >>> elems = em.constant([1, 2, 3, 4, 5, 6])
        >>> em.scan(lambda a, x: a + x, elems, reverse=True)
        ember.Tensor([21 20 18 15 11  6], shape=(6,), dtype=int32)
        >>> em.scan(lambda a, x: x[0] - x[1] + a, (elems + 1, elems), 0)
        ember.Tensor([1 2 3 4 5 6], shape=(6,), dtype=int32)
        >>> fib, _ = em.scan(lambda a, _: (a[1], a[0] + a[1]), em.constant([1, 0, 0, 0, 0, 0]),
        ...                  (0, 1))
        >>> fib
        ember.Tensor([1 1 2 3 5 8], shape=(6,), dtype=int32)
    """
    _check_callable("scan", "fn", fn)
    _check_hints("scan", parallel_iterations, swap_memory)
    _check_flag("scan", "back_prop", back_prop)
    _check_flag("scan", "infer_shape", infer_shape)
    _check_flag("scan", "reverse", reverse)
    flat, _, n = _sliceable("scan", elems)
    rows = [unstack(t) for t in flat]
    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    structure, acc = _start("scan", elems, initializer, n, rows, order[0] if order else 0)
    said = "initializer" if initializer is not None else "elems (no initializer is given)"
    shapes: list[Shape] = [tuple(a.shape) for a in acc]
    columns: list[list[Any]] = [[None] * n for _ in acc]
    if initializer is None:
        for j, a in enumerate(acc):
            columns[j][order[0]] = a
        order = order[1:]
    for i in order:
        out = fn(_pack(structure, acc), _pack(elems, [r[i] for r in rows]))
        acc = _next_accumulator("scan", out, structure, said, acc, i, True,
                                shapes if infer_shape else None)
        for j, a in enumerate(acc):
            columns[j][i] = a
    where = _paths(structure, "fn's result")
    results = [_stacked("scan", w, c, dt, s if infer_shape else None, flat[0])
               for w, c, dt, s in zip(where, columns, [a.dtype for a in acc], shapes)]
    return _pack(structure, _no_gradient(results, back_prop))


def _fold(fn_name: str, fn: Any, elems: Any, initializer: Any, parallel_iterations: Any,
          back_prop: Any, swap_memory: Any, reverse: bool) -> Any:
    _check_callable(fn_name, "fn", fn)
    _check_hints(fn_name, parallel_iterations, swap_memory)
    _check_flag(fn_name, "back_prop", back_prop)
    flat, _, n = _sliceable(fn_name, elems)
    rows = [unstack(t) for t in flat]
    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    structure, acc = _start(fn_name, elems, initializer, n, rows, order[0] if order else 0)
    said = "initializer" if initializer is not None else "elems (no initializer is given)"
    if initializer is None:
        order = order[1:]
    for i in order:
        out = fn(_pack(structure, acc), _pack(elems, [r[i] for r in rows]))
        # (tf.while_loop's rule in a tf.function: lists and tuples are alike)
        acc = _next_accumulator(fn_name, out, structure, said, acc, i, False, None)
    return _pack(structure, _no_gradient(acc, back_prop))


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """Fold ``fn`` over ``elems`` unstacked along axis 0, first to last (TensorFlow's
    ``tf.foldl``).

    ``fn(accumulator, element)`` returns the next accumulator; the last one is the
    result. Without an ``initializer`` the first element starts the accumulator (so
    ``elems`` needs one) and ``fn`` returns ``elems``' structure. The accumulator
    keeps its structure (lists and tuples alike) and dtypes; its shape may change, as
    in eager TensorFlow.

    Args:
        fn: A callable ``fn(accumulator, element)``.
        elems: A tensor, or a (nested) list, tuple or dict of tensors of one length
            along axis 0.
        initializer: Optional: the accumulator's first value (a tensor, Python number
            or numpy array, or a nested structure of them).
        parallel_iterations: A positive int: a performance hint in TensorFlow; checked,
            no effect on results.
        back_prop: If False, the result carries no gradient.
        swap_memory: A bool: TensorFlow's GPU memory hint; checked, no effect.
        name: Accepted for TensorFlow compatibility.

    Returns:
        The last accumulator value: the initializer's structure (else ``elems``') of
        tensors. With zero elements, the initializer, as tensors.

    Raises:
        TypeError: ``fn`` is not callable, or its result changes the accumulator's
            dtype (``DTypeError``).
        ValueError: ``elems`` holds no tensor, a scalar or tensors of different lengths;
            no element and no initializer; ``fn``'s result changes the structure.

    Examples:
        >>> import ember.core as em
        >>> em.foldl(lambda a, x: a + x, em.constant([1, 2, 3, 4, 5, 6]))
        ember.Tensor(21, shape=(), dtype=int32)
        >>> em.foldl(lambda a, x: a * 10 + x, em.constant([1, 2, 3]), 0)
        ember.Tensor(123, shape=(), dtype=int32)
    """
    return _fold("foldl", fn, elems, initializer, parallel_iterations, back_prop,
                 swap_memory, reverse=False)


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """Fold ``fn`` over ``elems`` unstacked along axis 0, last to first (TensorFlow's
    ``tf.foldr``).

    As ``foldl``, from the other end: without an ``initializer`` the last element
    starts the accumulator.

    Args:
        fn: A callable ``fn(accumulator, element)``.
        elems: A tensor, or a (nested) list, tuple or dict of tensors of one length
            along axis 0.
        initializer: Optional: the accumulator's first value.
        parallel_iterations: A positive int: a performance hint in TensorFlow; checked,
            no effect on results.
        back_prop: If False, the result carries no gradient.
        swap_memory: A bool: TensorFlow's GPU memory hint; checked, no effect.
        name: Accepted for TensorFlow compatibility.

    Returns:
        The last accumulator value, of the initializer's structure (else ``elems``').

    Raises:
        TypeError: as ``foldl``.
        ValueError: as ``foldl``.

    Examples:
        >>> import ember.core as em
        >>> em.foldr(lambda a, x: a * 10 + x, em.constant([1, 2, 3]), 0)
        ember.Tensor(321, shape=(), dtype=int32)
    """
    return _fold("foldr", fn, elems, initializer, parallel_iterations, back_prop,
                 swap_memory, reverse=True)


# --- while_loop ------------------------------------------------------------------------------

def _flatten_up_to(structure: Any, value: Any, where: str, out: list[Any]) -> None:
    """``value``'s parts at ``structure``'s leaves (a leaf's part may itself be a list:
    a shape), checking that ``value`` follows ``structure`` down to them."""
    if isinstance(structure, dict):
        if not isinstance(value, dict) or set(value) != set(structure):
            raise ValueError(f"while_loop: shape_invariants must have loop_vars' structure: "
                             f"at {where} expected a dict with keys {_keys(structure)!r}, got "
                             f"{value!r}")
        for k in _keys(structure):
            _flatten_up_to(structure[k], value[k], f"{where}[{k!r}]", out)
    elif isinstance(structure, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(structure):
            raise ValueError(f"while_loop: shape_invariants must have loop_vars' structure: "
                             f"at {where} expected a list or tuple of {len(structure)}, got "
                             f"{value!r}")
        for i, (s, v) in enumerate(zip(structure, value)):
            _flatten_up_to(s, v, f"{where}[{i}]", out)
    else:
        out.append(value)


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any,
               shape_invariants: Any = None, parallel_iterations: int = 10,
               back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: str | None = None) -> Any:
    """Repeat ``body`` while ``cond`` is true (TensorFlow 2's ``tf.while_loop``).

    ``cond(*loop_vars)`` returns a Python bool or a scalar bool tensor;
    ``body(*loop_vars)`` returns the next loop variables, in ``loop_vars``' structure
    (lists and tuples alike; with one loop variable, ``body`` may return it alone).
    Each loop variable keeps its dtype, and its shape unless ``shape_invariants``
    lets it change, as in a TensorFlow ``tf.function``. Python numbers and numpy arrays
    in ``loop_vars`` become tensors first (ints int32, floats float32), variables are
    read, and ``em.TensorArray`` loop variables pass through as they are.

    Args:
        cond: A callable taking the loop variables and returning the predicate.
        body: A callable taking the loop variables and returning the next ones.
        loop_vars: A list or tuple (or namedtuple), possibly nested, of loop variables:
            one argument of ``cond`` and ``body`` per entry.
        shape_invariants: Optional: ``loop_vars``' structure of shapes (a TensorShape,
            a list of sizes with None for a size that may change, or None for any
            shape). Each loop variable's shape must fit its invariant, at the start and
            after every iteration. Without them, every shape must stay as it started.
        parallel_iterations: A positive int: a performance hint in TensorFlow; checked,
            no effect on results.
        back_prop: If False, the results carry no gradient.
        swap_memory: A bool: TensorFlow's GPU memory hint; checked, no effect.
        maximum_iterations: Optional: a non-negative int (or scalar integer tensor):
            the loop stops after this many iterations even if ``cond`` is still true.
        name: Accepted for TensorFlow compatibility.

    Returns:
        The final loop variables, in ``loop_vars``' structure, as tensors (and
        TensorArrays).

    Raises:
        TypeError: ``cond`` or ``body`` is not callable, ``loop_vars`` is not a list or
            tuple, ``parallel_iterations`` is not a positive int, a loop variable's
            dtype changes (``DTypeError``), or ``cond`` returns a non-bool.
        ValueError: ``loop_vars`` is empty, ``body`` returns another structure, a
            shape leaves its invariant (``InvalidArgumentError``), ``cond`` returns a
            non-scalar, or ``maximum_iterations`` is not a scalar.

    Examples:
        >>> import ember.core as em
        >>> em.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i * i), (0, 0))
        (ember.Tensor(10, shape=(), dtype=int32), ember.Tensor(285, shape=(), dtype=int32))
        >>> i, m = em.while_loop(lambda i, m: i < 3, lambda i, m: [i + 1, em.concat([m, m], 0)],
        ...                      [0, em.ones([2, 2])],
        ...                      shape_invariants=[em.TensorShape([]), em.TensorShape([None, 2])])
        >>> m.shape
        (16, 2)
    """
    _check_callable("while_loop", "cond", cond)
    _check_callable("while_loop", "body", body)
    _check_hints("while_loop", parallel_iterations, swap_memory)
    _check_flag("while_loop", "back_prop", back_prop)
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError(f"while_loop: loop_vars must be a list or tuple of loop variables "
                        f"(one argument of cond and body each), got "
                        f"{type(loop_vars).__name__}")
    if not loop_vars:
        raise ValueError("while_loop: loop_vars must hold at least one loop variable")
    limit = None
    if maximum_iterations is not None:
        if isinstance(maximum_iterations, int) and not isinstance(maximum_iterations, bool):
            limit = maximum_iterations
        else:
            m = _to_tensor(maximum_iterations)
            if m.shape != ():
                raise InvalidArgumentError(f"while_loop: maximum_iterations must be a scalar, "
                                           f"got shape {tuple(m.shape)}")
            if m.dtype.kind not in "iu":
                raise DTypeError(f"while_loop: maximum_iterations must be an integer, got "
                                 f"dtype {m.dtype.name}")
            limit = int(m)
    where = _paths(loop_vars, "loop_vars")
    current: list[Any] = [v if isinstance(v, TensorArray) else _to_tensor(v)
                          for v in _flatten(loop_vars)]
    if shape_invariants is None:
        invariants: list[Shape] = [
            None if isinstance(v, TensorArray) else tuple(v.shape) for v in current]
    else:
        parts: list[Any] = []
        _flatten_up_to(loop_vars, shape_invariants, "shape_invariants", parts)
        invariants = [None if isinstance(v, TensorArray) else
                      _as_shape("while_loop", f"the shape invariant of {w}", p)
                      for v, w, p in zip(current, where, parts)]
        for v, w, s in zip(current, where, invariants):
            if not isinstance(v, TensorArray) and not _fits(s, tuple(v.shape)):
                raise InvalidArgumentError(
                    f"while_loop: the shape invariant {_shape_text(s)} given for {w} does "
                    f"not fit its initial shape {_shape_text(tuple(v.shape))}")
    dtypes = [None if isinstance(v, TensorArray) else v.dtype for v in current]
    entered = [None if isinstance(v, TensorArray) else tuple(v.shape) for v in current]
    count = 0
    while limit is None or count < limit:
        args = _pack(loop_vars, current)
        if not _truth("while_loop", "cond's result", cond(*args)):
            break
        out = body(*args)
        count += 1
        if not isinstance(out, (list, tuple)):
            out = [out]  # one loop variable, returned alone (eager TensorFlow's rule)
        _assert_same_structure("while_loop", f"body's result (iteration {count})", loop_vars,
                               "loop_vars", out, check_types=False)
        nxt: list[Any] = []
        for j, o in enumerate(_flatten(out)):
            if dtypes[j] is None:  # a TensorArray
                if not isinstance(o, TensorArray):
                    raise TypeError(f"while_loop: {where[j]} is a TensorArray, but body "
                                    f"returned {type(o).__name__} for it (iteration {count})")
                nxt.append(o)
                continue
            if isinstance(o, TensorArray):
                raise TypeError(f"while_loop: {where[j]} is a tensor, but body returned a "
                                f"TensorArray for it (iteration {count})")
            o = _to_tensor(o, dtypes[j])
            if o.dtype != dtypes[j]:
                raise DTypeError(
                    f"while_loop: loop variable {where[j]} enters the loop with dtype "
                    f"{_dtype_name(dtypes[j])} but has dtype {_dtype_name(o.dtype)} after "
                    f"{count} iteration(s)")
            if not _fits(invariants[j], tuple(o.shape)):
                raise InvalidArgumentError(
                    f"while_loop: loop variable {where[j]} enters the loop with shape "
                    f"{_shape_text(entered[j])}, but has shape "
                    f"{_shape_text(tuple(o.shape))} after {count} iteration(s)"
                    + (f", which does not fit its shape invariant {_shape_text(invariants[j])}"
                       if shape_invariants is not None else
                       "; to let its shape change, give shape_invariants with None for the "
                       "sizes that change (as for TensorFlow's tf.while_loop)"))
            nxt.append(o)
        current = nxt
    return _pack(loop_vars, _no_gradient(current, back_prop))


# --- cond, case, switch_case -----------------------------------------------------------------

def cond(pred: Any, true_fn: Callable[[], Any] | None = None,
         false_fn: Callable[[], Any] | None = None, name: str | None = None) -> Any:
    """``true_fn()`` if ``pred`` is true, else ``false_fn()`` (TensorFlow 2's ``tf.cond``).

    Only the chosen branch runs (as in eager TensorFlow), and its result is returned as
    it is (TensorFlow 2's strict ``cond``: a one-entry list stays a list).

    Args:
        pred: A Python bool or a scalar bool tensor.
        true_fn: The callable to run if ``pred`` is true.
        false_fn: The callable to run if ``pred`` is false.
        name: Accepted for TensorFlow compatibility.

    Returns:
        What the chosen branch returns.

    Raises:
        TypeError: a branch is missing or not callable; ``pred`` is not a bool
            (``DTypeError`` for a tensor of another dtype).
        ValueError: ``pred`` is a tensor that is not a scalar
            (``InvalidArgumentError``).

    Examples:
        >>> import ember.core as em
        >>> x, y = em.constant(2), em.constant(5)
        >>> em.cond(x < y, lambda: x * 7, lambda: y + 3)
        ember.Tensor(14, shape=(), dtype=int32)
        >>> em.cond(False, lambda: [x], lambda: [y])
        [ember.Tensor(5, shape=(), dtype=int32)]
    """
    if true_fn is None:
        raise TypeError("cond: the true_fn argument is required")
    if false_fn is None:
        raise TypeError("cond: the false_fn argument is required")
    _check_callable("cond", "true_fn", true_fn)
    _check_callable("cond", "false_fn", false_fn)
    return true_fn() if _truth("cond", "pred", pred) else false_fn()


def _unpack_singleton(result: Any) -> Any:
    if isinstance(result, (list, tuple)) and len(result) == 1:
        return result[0]
    return result


def case(pred_fn_pairs: Any, default: Callable[[], Any] | None = None, exclusive: bool = False,
         strict: bool = False, name: str = "case") -> Any:
    """The result of the first callable whose predicate is true (TensorFlow 2's
    ``tf.case``): an if / elif / else chain.

    Predicates are read in order up to the first true one (all of them with
    ``exclusive=True``), and only the chosen callable runs.

    Args:
        pred_fn_pairs: A list or tuple of 2-tuples ``(predicate, callable)``; each
            predicate is a scalar bool tensor or a Python bool. (A dict is accepted only
            with ``exclusive=True``, as in eager TensorFlow: its order is then
            irrelevant.)
        default: Optional: the callable to run when no predicate is true.
        exclusive: If True, every predicate is read and more than one true one is an
            error.
        strict: If False (the default), a one-entry list or tuple returned by the
            chosen callable is unpacked to its entry, as TensorFlow's ``case`` does.
        name: Accepted for TensorFlow compatibility.

    Returns:
        What the chosen callable returns.

    Raises:
        TypeError: ``pred_fn_pairs`` is not a list, tuple or dict, an entry is not a
            2-tuple, a callable is not callable, or a predicate is not a bool.
        ValueError: ``pred_fn_pairs`` is empty, a dict without ``exclusive``, a
            predicate is not a scalar; at run time (``InvalidArgumentError``), more than
            one predicate is true with ``exclusive=True``, or none is and there is no
            ``default``.

    Examples:
        >>> import ember.core as em
        >>> x, y = em.constant(1), em.constant(2)
        >>> em.case([(x > y, lambda: em.constant(17))], default=lambda: em.constant(23))
        ember.Tensor(23, shape=(), dtype=int32)
        >>> em.case([(x < y, lambda: em.constant(17)), (x > 0, lambda: em.constant(-1))])
        ember.Tensor(17, shape=(), dtype=int32)
    """
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(f"case: pred_fn_pairs must be a list or tuple of (predicate, "
                        f"callable) pairs, got {type(pred_fn_pairs).__name__}")
    _check_flag("case", "exclusive", exclusive)
    _check_flag("case", "strict", strict)
    if isinstance(pred_fn_pairs, dict):
        if not exclusive:
            raise ValueError("case: a dict of predicates to callables is unordered; with "
                             "exclusive=False pass a list of (predicate, callable) pairs "
                             "(as eager TensorFlow requires)")
        pairs = list(pred_fn_pairs.items())
    else:
        pairs = list(pred_fn_pairs)
    if not pairs:
        raise ValueError("case: pred_fn_pairs must hold at least one (predicate, callable) "
                         "pair")
    if default is not None:
        _check_callable("case", "default", default)
    preds = []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"case: each entry of pred_fn_pairs must be a 2-tuple "
                            f"(predicate, callable), got {pair!r} at index {k}")
        preds.append(_predicate("case", f"the predicate of pred_fn_pairs[{k}]", pair[0]))
        _check_callable("case", f"the callable of pred_fn_pairs[{k}]", pair[1])
    chosen = None
    if exclusive:
        true = [k for k, p in enumerate(preds) if bool(p)]
        if len(true) > 1:
            raise InvalidArgumentError(
                f"case: exclusive=True, but more than one predicate is true (those of "
                f"pred_fn_pairs{true})")
        chosen = true[0] if true else None
    else:
        chosen = next((k for k, p in enumerate(preds) if bool(p)), None)
    if chosen is not None:
        result = pairs[chosen][1]()
    elif default is not None:
        result = default()
    else:
        raise InvalidArgumentError("case: no predicate is true and no default is given")
    return result if strict else _unpack_singleton(result)


def switch_case(branch_index: Any, branch_fns: Any, default: Callable[[], Any] | None = None,
                name: str = "switch_case") -> Any:
    """Run the branch that ``branch_index`` selects (TensorFlow's ``tf.switch_case``):
    a C-style switch.

    Args:
        branch_index: A scalar integer tensor (or Python int) choosing the branch.
        branch_fns: A list of callables (branch ``i`` is entry ``i``), a list of
            ``(int, callable)`` pairs, or a dict from int to callable; the keys must be
            ``0`` to ``len(branch_fns) - 1``.
        default: Optional: the callable to run when no key matches ``branch_index``.
            Without one, an index out of range runs the branch with the largest key, as
            TensorFlow documents.
        name: Accepted for TensorFlow compatibility.

    Returns:
        What the chosen callable returns.

    Raises:
        TypeError: ``branch_index`` is not an integer, ``branch_fns`` is not a list,
            tuple or dict, an entry is not a callable or an ``(int, callable)`` pair.
        ValueError: ``branch_fns`` is empty or its keys are not ``0 .. n-1``, or
            ``branch_index`` is not a scalar (``InvalidArgumentError``).

    Examples:
        >>> import ember.core as em
        >>> fns = {0: lambda: em.constant(17), 1: lambda: em.constant(31)}
        >>> em.switch_case(em.constant(1), fns, default=lambda: em.constant(-1))
        ember.Tensor(31, shape=(), dtype=int32)
        >>> em.switch_case(em.constant(7), fns, default=lambda: em.constant(-1))
        ember.Tensor(-1, shape=(), dtype=int32)
        >>> em.switch_case(em.constant(7), fns)  # no default: the last branch
        ember.Tensor(31, shape=(), dtype=int32)
    """
    if isinstance(branch_index, (bool, np.bool_)):
        raise TypeError("switch_case: branch_index must be an integer (a scalar integer "
                        "tensor), got a bool")
    if isinstance(branch_index, (int, np.integer)):
        index = int(branch_index)
    else:
        t = _to_tensor(branch_index)
        if t.dtype.kind not in "iu":
            raise DTypeError(f"switch_case: branch_index must be an integer tensor, got "
                             f"dtype {t.dtype.name}")
        if t.shape != ():
            raise InvalidArgumentError(f"switch_case: branch_index must be a scalar, got "
                                       f"shape {tuple(t.shape)}")
        index = -1  # read below, after the arguments are checked
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError(f"switch_case: branch_fns must be a list, tuple or dict, got "
                        f"{type(branch_fns).__name__}")
    if not branch_fns:
        raise ValueError("switch_case: branch_fns must hold at least one branch")
    items: list[Any] = list(branch_fns.items()) if isinstance(branch_fns, dict) \
        else list(branch_fns)
    if all(callable(f) for f in items):
        items = list(enumerate(items))
    for entry in items:
        if not isinstance(entry, tuple) or len(entry) != 2:
            raise TypeError(f"switch_case: each entry of branch_fns must be a callable or "
                            f"an (int, callable) pair, got {entry!r}")
        key, fn = entry
        if isinstance(key, bool) or not isinstance(key, int):
            raise TypeError(f"switch_case: branch keys must be Python ints, got {key!r}")
        _check_callable("switch_case", f"the branch for key {key}", fn)
    keys = sorted(k for k, _ in items)
    if keys != list(range(len(keys))):
        raise ValueError(f"switch_case: branch keys must be 0 to {len(keys) - 1}, each once, "
                         f"got {keys}")
    if default is not None:
        _check_callable("switch_case", "default", default)
    actions = [fn for _, fn in sorted(items, key=lambda kf: kf[0])]
    if default is not None:
        actions.append(default)
    if not isinstance(branch_index, (int, np.integer)):
        index = int(t)
    if index < 0 or index >= len(actions):
        index = len(actions) - 1
    return actions[index]()

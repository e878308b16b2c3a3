"""``graph.TensorSpec`` and a function's ``input_signature``: which calls it accepts.

With an input signature, every argument of a call is a tensor described by a spec (or a
nest of them); anything else is refused by name before the function runs, as
TensorFlow's ``tf.function(input_signature=...)`` does. A dimension given as ``None``
takes any size.

What the signature does not change: ember traces by running the Python function on the
call's tensors, so a trace is made at one concrete shape. Python integers the function
(or ember itself) derives from a shape are part of that trace: a reshape's ``-1``
resolved to a size, a mean's count in its gradient, ``loss / x.shape[0]``. Nothing in a
trace tells such a number from a literal, so a trace is replayed only for the shape it
was made at, and each new size of a ``None`` dimension is traced once (see ``Function``).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

import ember.core as em

_Tensor = em.Tensor
_Variable = em.Variable
_NUMBERS = (bool, int, float)


class TensorSpec:
    """The shape and dtype a tensor argument must have (TensorFlow's ``tf.TensorSpec``).

    Args:
        shape: A sequence of sizes, ``None`` for a dimension of any size; or ``None`` for
            any rank.
        dtype: The dtype (default float32).
        name: An optional name (kept for TensorFlow's API; ember does not use it).

    Raises:
        TypeError: ``shape`` is not a sequence of whole numbers and Nones, ``dtype`` is not
            a dtype, or ``name`` is not a string.
        ValueError: a size is negative.

    Examples:
        >>> import ember.core as em
        >>> from ember import graph
        >>> spec = graph.TensorSpec([None, 3], em.float32)
        >>> spec.is_compatible_with(em.zeros([5, 3]))
        True
        >>> spec.is_compatible_with(em.zeros([5, 4]))
        False
    """

    __slots__ = ("_dtype", "_name", "_shape")

    def __init__(self, shape: Any, dtype: Any = em.float32, name: str | None = None) -> None:
        self._shape = _shape_of(shape)
        try:
            self._dtype = em.as_dtype(dtype)
        except TypeError:
            raise TypeError(f"TensorSpec: dtype must be a dtype, got {dtype!r}") from None
        if name is not None and not isinstance(name, str):
            raise TypeError(f"TensorSpec: name must be a string or None, "
                            f"got {type(name).__name__}")
        self._name = name

    @classmethod
    def from_tensor(cls, tensor: Any, name: str | None = None) -> TensorSpec:
        """The spec of ``tensor`` (a Tensor, Variable or numpy array): its shape and dtype."""
        if isinstance(tensor, (_Tensor, _Variable, np.ndarray)):
            return cls(tuple(tensor.shape), tensor.dtype, name)
        raise TypeError(f"TensorSpec.from_tensor: expected a tensor, variable or numpy "
                        f"array, got {type(tensor).__name__}")

    @property
    def shape(self) -> tuple[int | None, ...] | None:
        """The sizes, None where any size fits; None for any rank."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def name(self) -> str | None:
        return self._name

    def is_compatible_with(self, other: Any) -> bool:
        """Whether ``other`` (a tensor, variable, numpy array or TensorSpec) fits: the same
        dtype, and a shape that this spec's ``None`` dimensions and rank allow."""
        if isinstance(other, TensorSpec):
            shape, dtype = other.shape, other.dtype
        elif isinstance(other, (_Tensor, _Variable, np.ndarray)):
            shape, dtype = tuple(other.shape), other.dtype
        else:
            return False
        return dtype == self._dtype and _shape_fits(self._shape, shape)

    def __eq__(self, other: object) -> bool:
        return (type(other) is TensorSpec and self._shape == other._shape
                and self._dtype == other._dtype and self._name == other._name)

    def __hash__(self) -> int:
        return hash((self._shape, self._dtype, self._name))

    def __repr__(self) -> str:
        shape = "None" if self._shape is None else _shape_text(self._shape)
        return f"TensorSpec(shape={shape}, dtype={self._dtype.name}, name={self._name!r})"


def _shape_of(shape: Any) -> tuple[int | None, ...] | None:
    if shape is None:
        return None
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"TensorSpec: shape must be a sequence of sizes (None for any "
                        f"size) or None, got {shape!r}")
    out: list[int | None] = []
    for d in shape:
        if d is None:
            out.append(None)
            continue
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"TensorSpec: each size must be a whole number or None, "
                            f"got {d!r} in shape {shape!r}")
        if d < 0:
            raise ValueError(f"TensorSpec: sizes must be non-negative, got {d} in shape "
                             f"{shape!r}")
        out.append(int(d))
    return tuple(out)


def _shape_fits(spec: tuple[int | None, ...] | None, shape: Any) -> bool:
    if spec is None:
        return True
    if shape is None or len(shape) != len(spec):
        return False
    return all(s is None or s == d for s, d in zip(spec, shape))


def _shape_text(shape: tuple[int | None, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def flat_specs(signature: Any, where: str = "input_signature") -> list[tuple[str, TensorSpec]]:
    """Each spec of a (nested) input signature with its place in it.

    Raises:
        TypeError: something in it is not a TensorSpec, list, tuple or dict.
    """
    if isinstance(signature, TensorSpec):
        return [(where, signature)]
    if isinstance(signature, (list, tuple)):
        return [p for i, s in enumerate(signature) for p in flat_specs(s, f"{where}[{i}]")]
    if isinstance(signature, dict):
        return [p for k, s in signature.items() for p in flat_specs(s, f"{where}[{k!r}]")]
    raise TypeError(f"graph.function: {where} must be a graph.TensorSpec (or a list, tuple "
                    f"or dict of them), got {type(signature).__name__}")


class InputSignature:
    """A function's ``input_signature``: binds a call's arguments to its specs, converts
    them to tensors and checks each one, naming the argument that does not fit."""

    def __init__(self, fn_name: str, fn: Any, specs: Any) -> None:
        if not isinstance(specs, (list, tuple)):
            raise TypeError(f"graph.function: input_signature must be a list or tuple of "
                            f"graph.TensorSpec (one per argument), got "
                            f"{type(specs).__name__}")
        flat_specs(list(specs))  # every leaf a TensorSpec
        self.fn_name = fn_name
        self.specs = tuple(specs)
        self.has_none = any(s.shape is None or None in s.shape
                            for _, s in flat_specs(list(specs)))
        self.names, self.varargs = _parameters(fn_name, fn)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any], bound: bool
             ) -> tuple[Any, ...]:
        """The call's arguments as one tuple of converted values, one per spec (after the
        instance, for a method).

        Raises:
            TypeError: an argument the signature does not describe, a missing one, or a
                value that is not a tensor (nor convertible to one).
            ValueError: a tensor whose shape or dtype does not fit its spec.
        """
        names = self.names[1:] if bound else self.names
        head, args = (args[:1], args[1:]) if bound else ((), args)
        n = len(self.specs)
        if len(args) > n:
            raise TypeError(f"{self.fn_name}: got {len(args)} positional arguments, but its "
                            f"input_signature describes {n}; with an input_signature every "
                            "argument is a tensor the signature describes")
        values: list[Any] = list(args) + [_MISSING] * (n - len(args))
        for key, value in kwargs.items():
            i = names.index(key) if key in names else -1
            if i < 0 or i >= n:
                raise TypeError(f"{self.fn_name}: argument {key!r} is not described by its "
                                "input_signature; with an input_signature every argument "
                                "is a tensor the signature describes (pass Python values "
                                "through a closure or a variable)")
            if values[i] is not _MISSING:
                raise TypeError(f"{self.fn_name}: got multiple values for argument {key!r}")
            values[i] = value
        out = []
        for i, (value, spec) in enumerate(zip(values, self.specs)):
            label = f"argument {names[i]!r}" if i < len(names) else f"argument {i}"
            if value is _MISSING:
                raise TypeError(f"{self.fn_name}: missing {label}, described by "
                                f"input_signature[{i}] as {spec!r}")
            out.append(_convert(self.fn_name, label, value, spec))
        return (*head, *out)


_MISSING = object()


def _parameters(fn_name: str, fn: Any) -> tuple[list[str], bool]:
    """The names of ``fn``'s positional parameters, and whether it takes ``*args``.

    Raises:
        TypeError: ``fn`` takes ``**kwargs``.
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [], True  # a builtin or callable without a signature: positions only
    names, varargs = [], False
    for p in params:
        if p.kind is p.VAR_KEYWORD:
            raise TypeError(f"graph.function: {fn_name} takes **{p.name}; with an "
                            "input_signature the function cannot take keyword arguments "
                            "beyond its parameters (as in TensorFlow)")
        if p.kind is p.VAR_POSITIONAL:
            varargs = True
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
    return names, varargs


class SignatureMismatchError(TypeError, ValueError):
    """An argument does not match its ``input_signature`` (its shape or dtype): a
    ``TypeError`` as TensorFlow raises, and a ``ValueError`` as ember raised before."""


def _convert(fn_name: str, label: str, value: Any, spec: Any, where: str = "") -> Any:
    """``value`` as the spec's nest of tensors, checked against it."""
    if isinstance(spec, TensorSpec):
        if isinstance(value, np.generic):  # a numpy scalar: a 0-d array of its dtype
            value = np.asarray(value)
        t = value if isinstance(value, (_Tensor, _Variable, np.ndarray)) else \
            _as_tensor(fn_name, label + where, value, spec)
        if not spec.is_compatible_with(t):
            raise SignatureMismatchError(
                f"{fn_name}: {label}{where} does not match its input_signature: "
                f"expected {spec!r}, got {_describe(t)}")
        return _as_tensor(fn_name, label + where, t, spec)
    if isinstance(spec, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(spec):
            raise TypeError(f"{fn_name}: {label}{where} must be a list or tuple of "
                            f"{len(spec)} per its input_signature {spec!r}, got "
                            f"{_describe(value)}")
        parts = [_convert(fn_name, label, v, s, f"{where}[{i}]")
                 for i, (v, s) in enumerate(zip(value, spec))]
        return type(value)(parts) if type(value) in (list, tuple) else type(value)(*parts)
    if not isinstance(value, dict) or set(value) != set(spec):
        raise TypeError(f"{fn_name}: {label}{where} must be a dict with keys "
                        f"{sorted(spec, key=repr)} per its input_signature, got "
                        f"{_describe(value)}")
    return {k: _convert(fn_name, label, value[k], spec[k], f"{where}[{k!r}]") for k in value}


def _as_tensor(fn_name: str, label: str, value: Any, spec: TensorSpec) -> Any:
    """A tensor for ``value``: tensors as they are, a variable's value, numpy arrays as
    tensors, and Python numbers (or lists of them) in the spec's dtype when it holds them
    exactly (TensorFlow converts them with the spec's dtype as a hint)."""
    if isinstance(value, _Tensor):
        return value
    if isinstance(value, _Variable):
        return value.value()
    if isinstance(value, np.ndarray):
        return em.constant(value)
    if isinstance(value, _NUMBERS) or (isinstance(value, (list, tuple)) and value):
        try:
            host = np.asarray(value)
        except ValueError:
            host = np.asarray(value, dtype=object)
        if host.dtype.kind in "biuf" and _holds(host, spec.dtype):
            return em.constant(host.astype(spec.dtype))
        if host.dtype.kind in "biuf":
            return em.constant(host)  # refused below, with its dtype named
    raise TypeError(f"{fn_name}: {label} must be a tensor matching its input_signature "
                    f"{spec!r}, got {_describe(value)}; with an input_signature every "
                    "argument is a tensor (or a numpy array, or numbers the spec's dtype "
                    "holds)")


def _holds(host: np.ndarray, dtype: np.dtype) -> bool:
    """Whether Python numbers (``host``) convert to ``dtype``: bools only to bool, whole
    numbers to integer dtypes that hold them, any number to a float dtype (rounded, as a
    Python float written for float32 is)."""
    if (host.dtype.kind == "b") != (dtype.kind == "b"):
        return False
    if dtype.kind == "f":
        return True
    if dtype.kind not in "iu" or host.dtype.kind not in "iu":
        return dtype.kind == "b"
    info = np.iinfo(dtype)
    return bool(host.size == 0 or (host.min() >= info.min and host.max() <= info.max))


def _describe(value: Any) -> str:
    if isinstance(value, (_Tensor, _Variable, np.ndarray)):
        kind = ("a tensor" if isinstance(value, _Tensor) else "a variable"
                if isinstance(value, _Variable) else "a numpy array")
        return f"{kind} of shape {_shape_text(tuple(value.shape))} and dtype {value.dtype}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"

"""The cache key of a call: what must be equal for a recorded trace to be replayed.

Tensors count by shape, dtype and device (and which arguments are the same tensor);
numpy arrays become tensors; Variables and other hashable objects count by identity or
value (``1`` and ``1.0`` differ); lists, tuples and dicts are walked. The active device is
part of the key. Anything else unhashable is an error that names the argument.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em
from ember.core.extend import array_of, device_of

from ._mappings import same_mapping

_Tensor = em.Tensor
_Variable = em.Variable
_SCALARS = (bool, int, float, complex, str, bytes, type(None))


class Signature:
    """A call's key, its tensor leaves in order, a readable name per leaf, and the
    arguments with numpy arrays made tensors (what the traced call receives)."""

    __slots__ = ("_parts", "_paths", "args", "key", "kwargs", "leaves")

    def __init__(self, key: tuple[Any, ...], leaves: list[Any], paths: list[str] | None,
                 parts: dict[str, Any] | None, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self.key = key
        self.leaves = leaves
        self._paths = paths
        self._parts = parts
        self.args = args
        self.kwargs = kwargs

    @property
    def paths(self) -> list[str]:
        """A readable name per tensor leaf."""
        if self._paths is None:
            self._paths = [f"argument {i}" for i in range(len(self.leaves))]
        return self._paths

    @property
    def parts(self) -> dict[str, Any]:
        """Argument name -> its part of the key (for retrace warnings)."""
        if self._parts is None:
            self._parts = {f"argument {i}": p for i, p in enumerate(self.key[1:])}
        return self._parts


def signature(fn_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Signature:
    """The key of calling ``fn_name`` with ``args`` and ``kwargs``.

    Raises:
        TypeError: an argument is neither a tensor, a variable, a nest of them, nor
            hashable; the message names it.
    """
    leaves: list[Any] = []
    paths: list[str] = []
    seen: dict[int, int] = {}
    parts: dict[str, Any] = {}

    def walk(x: Any, path: str) -> tuple[Any, Any]:
        t = type(x)
        if t is _Tensor:
            k = seen.setdefault(id(x), len(leaves))
            if k == len(leaves):
                leaves.append(x)
                paths.append(path)
            a = array_of(x)
            return ("T", a.shape, a.dtype, device_of(x), k), x
        if t is np.ndarray or isinstance(x, np.generic):
            # a numpy array, or scalar (an enumerate()'s step, np.int64), is a tensor, as
            # TensorFlow's function takes NumPy inputs: traced once per shape and dtype,
            # not once per value
            return walk(em.constant(x), path)
        if t in _SCALARS:
            return (t, x), x
        if t is list or t is tuple:
            pairs = [walk(v, f"{path}[{i}]") for i, v in enumerate(x)]
            return (t, tuple(p[0] for p in pairs)), t(p[1] for p in pairs)
        if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple
            pairs = [walk(v, f"{path}.{f}") for v, f in zip(x, x._fields)]
            return (t, tuple(p[0] for p in pairs)), t(*[p[1] for p in pairs])
        if isinstance(x, dict):  # OrderedDict and other dicts too, rebuilt as their type
            keys = list(x)
            try:
                keys.sort()
            except TypeError:
                raise TypeError(f"{fn_name}: argument {path!r} is a dict whose keys cannot "
                                "be sorted; graph.function needs a stable key order") from None
            done = {k: walk(x[k], f"{path}[{k!r}]") for k in keys}
            return ((t, tuple((k, done[k][0]) for k in keys)),
                    same_mapping(x, ((k, done[k][1]) for k in x)))
        if isinstance(x, _Variable):
            return ("V", id(x), x.shape, x.dtype.str, x.device), x
        try:
            hash(x)
        except TypeError:
            raise TypeError(
                f"{fn_name}: argument {path!r} of type {t.__name__} is not hashable, so "
                "graph.function cannot tell whether a recorded trace fits it; pass tensors, "
                "numpy arrays, variables, hashable Python values, or lists/tuples/dicts of "
                "them") from None
        return ("O", t, x), x

    if not kwargs:  # the common call, all tensors: its key without the general walk
        fast = _tensor_key(args)
        if fast is not None:
            return Signature(fast, list(args), None, None, args, {})
    key: list[Any] = [em.current_device().name]
    new_args = []
    for i, a in enumerate(args):
        part, a = walk(a, f"argument {i}")
        parts[f"argument {i}"] = part
        key.append(part)
        new_args.append(a)
    new_kwargs = {}
    for name in sorted(kwargs):
        part, new_kwargs[name] = walk(kwargs[name], name)
        parts[name] = part
        key.append((name, part))
    return Signature(tuple(key), leaves, paths, parts, tuple(new_args), new_kwargs)


def _tensor_key(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The key of a call whose arguments are distinct tensors, or None for any other."""
    parts: list[Any] = [em.current_device().name]
    for x in args:
        if type(x) is not _Tensor:
            return None
        a = array_of(x)
        parts.append(("T", a.shape, a.dtype, device_of(x)))
    if len({id(x) for x in args}) != len(args):
        return None  # the same tensor twice: the general key records it
    return tuple(parts)


def changed_argument(old: dict[str, Any], new: dict[str, Any]) -> str:
    """A readable name for the argument whose key part differs between two calls."""
    for name in new:
        if old.get(name) != new[name]:
            return name
    for name in old:
        if name not in new:
            return name
    return "the active device"

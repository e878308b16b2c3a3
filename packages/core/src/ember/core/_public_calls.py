"""Public functions that hand calls on foreign operands to the operand's type.

A type that defines ``__ember_function__(fn, args, kwargs)`` (ember-nn's symbolic tensors
do) takes over any call of a public function of ``ember.core`` (and its ``nn_ops`` and
``linalg``) that is given one of its instances: core raises ``TakenOver`` where it would
convert the operand, and the function's wrapper here returns what the type makes of the
call (a node of a functional model: tf.keras's ``TFOpLambda``). Ops called on one are
handed over in ``execute`` (``__ember_op__``).

The wrappers cost a ``try`` on the fast path. ``PUBLIC`` names each wrapped function by its
public name (``"squeeze"``, ``"nn_ops.l2_normalize"``): a saved model names a function
this way, and loading looks it up here, never by importing what a file names.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any

from ._errors import TakenOver

PUBLIC: dict[str, Any] = {}

# not computations on tensors (or already handing over through execute: the element-wise
# factory's functions, ``_ops._define``)
_SKIP = frozenset({
    "as_dtype", "constant", "convert_to_tensor", "device", "executing_eagerly", "get_device",
    "init_scope", "list_devices", "num_gpus", "numpy_function", "print", "promote_types",
    "py_function", "result_type", "set_num_threads",
})


def _taking_over(fn: Any, name: str) -> Any:
    """``fn``, handing calls over (see the module docstring). The wrapper takes ``fn``'s
    own parameters, so that a call costs no packing of arguments (with Python 3.11's
    inlined calls, about nothing); a function with ``*args`` or ``**kwargs`` gets a
    generic wrapper."""
    params = list(inspect.signature(fn).parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        call = _generic(fn)
    else:
        call = _exact(fn, params)
    functools.update_wrapper(call, fn)
    call.__ember_public__ = name
    return call


def _generic(fn: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TakenOver as t:
            return _hand_over(t, call, args, kwargs)

    return call


def _exact(fn: Any, params: list[inspect.Parameter]) -> Any:
    """A wrapper with ``fn``'s parameters, written out and compiled once (as dataclasses
    writes its methods): the source holds only the parameters' names."""
    header, forward, required, optional = [], [], [], []
    env: dict[str, Any] = {"_ember_fn_": fn, "_ember_taken_over_": TakenOver,
                           "_ember_hand_over_": _hand_over}
    star = False
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and not star:
            header.append("*")
            star = True
        if p.default is p.empty:
            header.append(p.name)
        else:
            env[f"_ember_default_{i}_"] = p.default
            header.append(f"{p.name}=_ember_default_{i}_")
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or
                                             params[i + 1].kind is not p.POSITIONAL_ONLY):
            header.append("/")
        forward.append(p.name if p.kind is not p.KEYWORD_ONLY else f"{p.name}={p.name}")
        if p.default is p.empty or p.kind is p.POSITIONAL_ONLY:
            required.append(p.name)
        else:
            optional.append(f"({p.name!r}, {p.name}, _ember_default_{i}_)")
    # (names of the wrapper's own all start _ember_: no parameter's can shadow them)
    source = (
        f"def _ember_call_({', '.join(header)}):\n"
        f"    try:\n"
        f"        return _ember_fn_({', '.join(forward)})\n"
        f"    except _ember_taken_over_ as _ember_exc_:\n"
        f"        return _ember_hand_over_(_ember_exc_, _ember_call_, "
        f"({''.join(n + ', ' for n in required)}), "
        f"{{_ember_k_: _ember_v_ for _ember_k_, _ember_v_, _ember_d_ in "
        f"({''.join(o + ', ' for o in optional)}) if _ember_v_ is not _ember_d_}})\n")
    exec(compile(source, f"<ember.core public function {fn.__name__}>", "exec"), env)
    return env["_ember_call_"]


def _hand_over(t: TakenOver, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    hook = getattr(t.kind, "__ember_function__", None)
    if hook is None:
        raise t
    return hook(call, args, kwargs)


_WRAPPED: dict[int, Any] = {}  # id(function) -> its wrapper: one wrapper per function


def wrap_public(module: Any, prefix: str, names: list[str]) -> None:
    """Wrap ``module``'s public functions ``names`` (see the module docstring). A function
    public under several names (``linalg.inv`` and ``linalg.matrix_inverse``,
    ``check_numerics`` and ``debugging.check_numerics``) gets one wrapper, named by the
    first; each name finds it in ``PUBLIC``."""
    for n in names:
        f = module.__dict__.get(n)
        if f is None or n in _SKIP:
            continue
        w = _WRAPPED.get(id(f))
        if w is None and type(f) is types.FunctionType and \
                f.__module__ != "ember.core._ops._define" and \
                getattr(f, "__ember_public__", None) is None:
            w = _WRAPPED[id(f)] = _taking_over(f, prefix + n)
            _WRAPPED[id(w)] = w
        if w is not None:
            PUBLIC.setdefault(prefix + n, w)
            setattr(module, n, w)

"""Dtype policies: the dtype a layer computes in and the dtype of its variables (Keras 3's).

A policy is made from a name: ``"mixed_float16"`` (float16 computations, float32
variables), ``"mixed_bfloat16"`` (bfloat16 computations, float32 variables) or any dtype
name (``"float32"``, ``"float64"``, ...: both dtypes that one). Every layer has one: the
global policy when it was made, or its ``dtype=`` argument (a name or a policy).

A layer whose policy is mixed casts its floating inputs to the compute dtype and, while its
``call`` runs, reads its float variables cast to the compute dtype (Keras's autocast), so
the variables stay float32 and their gradients come back in float32.

The global policy is ambient state in a ``ContextVar`` (as Keras 3 keeps it per thread): a
new thread starts with ``float32``.

Examples:
    >>> from ember import nn
    >>> policy = nn.dtype_policies.DTypePolicy("mixed_float16")
    >>> policy.compute_dtype, policy.variable_dtype
    ('float16', 'float32')
    >>> nn.dtype_policies.dtype_policy()
    <DTypePolicy "float32">
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import numpy as np

import ember.core as em

__all__ = ["DTypePolicy", "FloatDTypePolicy", "dtype_policy", "get", "set_dtype_policy"]

_MIXED = {"mixed_float16": ("float16", "float32"), "mixed_bfloat16": ("bfloat16", "float32")}
_BFLOAT16 = np.dtype(em.bfloat16)


class DTypePolicy:
    """What a layer computes in (``compute_dtype``) and stores its variables in
    (``variable_dtype``).

    Args:
        name: ``"mixed_float16"``, ``"mixed_bfloat16"`` or a dtype name (``"float32"``);
            None means the global policy's name.

    Raises:
        TypeError: ``name`` is not a string.
        ValueError: ``name`` is neither a mixed policy nor a dtype.
    """

    __slots__ = ("_bf16", "_compute", "_compute_dtype", "_name", "_plain", "_variable",
                 "_variable_dtype")

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = dtype_policy().name
        if not isinstance(name, str):
            raise TypeError(f"DTypePolicy: name must be a string such as 'mixed_float16', got "
                            f"{name!r} of type {type(name).__name__}")
        if name in _MIXED:
            compute, variable = _MIXED[name]
        else:
            try:
                compute = variable = np.dtype(em.as_dtype(name)).name
            except (TypeError, ValueError):
                raise ValueError(
                    f"DTypePolicy: cannot make a policy of name={name!r}; valid names are "
                    f"'mixed_float16', 'mixed_bfloat16' and dtype names such as 'float32'"
                ) from None
        self._name = name
        self._compute_dtype, self._variable_dtype = compute, variable
        # numpy dtypes, for the per-call checks in Layer.__call__
        self._compute = np.dtype(em.as_dtype(compute))
        self._variable = np.dtype(em.as_dtype(variable))
        self._plain = self._compute == self._variable  # nothing to autocast
        self._bf16 = self._compute == _BFLOAT16

    @property
    def name(self) -> str:
        """The policy's name, as given."""
        return self._name

    @property
    def compute_dtype(self) -> str:
        """The dtype layers compute in (and cast floating inputs and variables to)."""
        return self._compute_dtype

    @property
    def variable_dtype(self) -> str:
        """The dtype layers make their variables in (regularizers compute in it too)."""
        return self._variable_dtype

    @property
    def quantization_mode(self) -> None:
        """Always None: ember has no quantized policies."""
        return None

    @property
    def is_mixed(self) -> bool:
        """Whether compute and variable dtypes differ (variables are read cast)."""
        return self._compute != self._variable

    def convert_input(self, x: Any, autocast: bool, dtype: Any) -> Any:
        """``x`` as a tensor, cast to ``dtype`` when ``autocast`` and it is floating."""
        t = x if type(x) is em.Tensor else em.convert_to_tensor(x)
        dt = np.dtype(em.as_dtype(dtype))
        if autocast and is_floating(t.dtype) and t.dtype != dt:
            t = em.cast(t, dt)
        return t

    def get_config(self) -> dict[str, Any]:
        return {"name": self._name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> DTypePolicy:
        return cls(**config)

    def __repr__(self) -> str:
        return f'<DTypePolicy "{self._name}">'

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DTypePolicy) and other._name == self._name

    def __hash__(self) -> int:
        return hash(("DTypePolicy", self._name))


FloatDTypePolicy = DTypePolicy  # Keras 3's alias

_FLOAT32 = DTypePolicy("float32")
_global: ContextVar[DTypePolicy] = ContextVar("ember_nn_dtype_policy", default=_FLOAT32)


def is_floating(dtype: np.dtype) -> bool:
    """float16, bfloat16, float32, float64 (bfloat16's numpy kind is "V", not "f")."""
    return dtype.kind == "f" or dtype == _BFLOAT16


def dtype_policy() -> DTypePolicy:
    """The global policy: what layers made without ``dtype=`` take (``float32`` unless
    ``set_dtype_policy`` changed it in this thread)."""
    return _global.get()


def set_dtype_policy(policy: Any) -> None:
    """Set the global policy (a name such as ``"mixed_float16"`` or a ``DTypePolicy``).

    Layers made afterwards take it; layers made before keep theirs. On a GPU use
    ``"mixed_float16"``: bfloat16 runs on the CPU only (cupy has no bfloat16), and a layer
    of a bfloat16 policy refuses GPU inputs by name when called.

    Raises:
        ValueError: ``policy`` is neither a name nor a ``DTypePolicy``.
    """
    if isinstance(policy, str):
        policy = DTypePolicy(policy)
    elif not isinstance(policy, DTypePolicy):
        raise ValueError(f"set_dtype_policy: policy must be a DTypePolicy or the name of one "
                         f"such as 'mixed_float16', got {policy!r}")
    _global.set(policy)


def get(identifier: Any) -> DTypePolicy:
    """A policy from ``identifier``: None (the global policy), a ``DTypePolicy``, a name, a
    dtype (``em.float32``, ``np.float64``) or Keras's serialized form
    ``{"class_name": "DTypePolicy", "config": {"name": ...}}``.

    Raises:
        ValueError: anything else, naming it.
    """
    if identifier is None:
        return dtype_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, str):
        return DTypePolicy(identifier)
    if isinstance(identifier, dict):
        if identifier.get("class_name") in ("DTypePolicy", "FloatDTypePolicy") and \
                isinstance(identifier.get("config"), dict):
            return DTypePolicy.from_config(identifier["config"])
        raise ValueError(f"dtype: cannot read a dtype policy from the dict {identifier!r} "
                         f"(expected {{'class_name': 'DTypePolicy', 'config': {{'name': ...}}}})")
    try:
        return DTypePolicy(np.dtype(em.as_dtype(identifier)).name)
    except (TypeError, ValueError):
        raise ValueError(f"dtype: expected a dtype, a dtype policy or its name (such as "
                         f"'mixed_float16'), got {identifier!r}") from None

"""Weight and activity regularizers: callables ``(tensor) -> scalar penalty``.

A layer's regularization losses appear in ``layer.losses`` (recomputed on each access for
weights; from the last call for activities), and ``Model.fit`` adds them to the loss, as
Keras does.

Examples:
    >>> import ember.core as em
    >>> from ember import nn
    >>> round(float(nn.regularizers.L2(0.1)(em.constant([1.0, 2.0]))), 6)
    0.5
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from ._identifiers import resolve

__all__ = ["L1", "L1L2", "L2", "OrthogonalRegularizer", "Regularizer", "get", "l1", "l1_l2",
           "l2"]


class Regularizer:
    """Base class: ``__call__(x)`` returns a scalar penalty."""

    def __call__(self, x: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {}


def _factor(name: str, value: Any) -> float:
    value = float(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x^2)``."""

    def __init__(self, l1: float | None = 0.0, l2: float | None = 0.0) -> None:
        # None is 0 (Keras 3, for configs that name one factor as None)
        self.l1 = _factor("l1", 0.0 if l1 is None else l1)
        self.l2 = _factor("l2", 0.0 if l2 is None else l2)

    def __call__(self, x: Any) -> Any:
        out = em.constant(0.0, dtype=x.dtype)
        if self.l1:
            out = em.add(out, em.multiply(em.reduce_sum(em.abs(x)), self.l1))
        if self.l2:
            out = em.add(out, em.multiply(em.reduce_sum(em.square(x)), self.l2))
        return out

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """``l1 * sum(|x|)`` (Keras's default factor 0.01)."""

    def __init__(self, l1: float | None = 0.01) -> None:
        super().__init__(l1=0.01 if l1 is None else l1)  # None: the default (Keras 3)

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1}  # Keras's: L1(**config) takes no l2


class L2(L1L2):
    """``l2 * sum(x^2)`` (Keras's default factor 0.01)."""

    def __init__(self, l2: float | None = 0.01) -> None:
        super().__init__(l2=0.01 if l2 is None else l2)  # None: the default (Keras 3)

    def get_config(self) -> dict[str, Any]:
        return {"l2": self.l2}  # Keras's: L2(**config) takes no l1


class OrthogonalRegularizer(Regularizer):
    """``factor * mean(|offdiag(W_n W_n^T)|)`` over unit-normed rows (or columns)."""

    def __init__(self, factor: float = 0.01, mode: str = "rows") -> None:
        if mode not in ("rows", "columns"):
            raise ValueError(f"OrthogonalRegularizer: mode must be 'rows' or 'columns', "
                             f"got {mode!r}")
        self.factor, self.mode = _factor("factor", factor), mode

    def __call__(self, x: Any) -> Any:
        if x.ndim != 2:
            raise ValueError(f"OrthogonalRegularizer needs a rank-2 weight, got shape "
                             f"{tuple(x.shape)}")
        if self.mode == "columns":
            x = em.transpose(x)
        norm = em.sqrt(em.reduce_sum(em.square(x), axis=1, keepdims=True))
        x = em.divide(x, em.maximum(norm, 1e-12))
        prod = em.matmul(x, em.transpose(x))
        n = int(prod.shape[0])
        # the off-diagonal products (Keras's ``product * (1 - eye)``: a zero row, whose
        # diagonal product is 0, adds nothing)
        off = em.multiply(prod, em.subtract(1.0, em.eye(n, dtype=prod.dtype)))
        size = n * n - n
        return em.multiply(em.reduce_sum(em.abs(off)), self.factor / max(size, 1))

    def get_config(self) -> dict[str, Any]:
        return {"factor": self.factor, "mode": self.mode}


l1, l2, l1_l2 = L1, L2, L1L2
_NAMES: dict[str, Any] = {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2,
                          "orthogonal_regularizer": OrthogonalRegularizer}


def get(identifier: Any) -> Any:
    """A regularizer from None, a name (``"l2"``), an instance or a callable."""
    return resolve(identifier, _NAMES, "regularizer", instantiate=True)

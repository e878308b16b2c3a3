"""A dense layer as ops: ``dense`` is ``activation(x @ kernel + bias)`` for a matrix ``x``,
and ``dense_weight_grad`` its kernel's and bias's gradients, ``(x.T @ dz, dz summed over
rows)``; ``activation_grad`` is the pre-activation's gradient from the output.

Why ops of their own: on a GPU a small model's step costs what its kernel launches cost,
and cuBLASLt (through nvmath-python, ``_nvmath_products``) folds a dense layer's bias into
its products: a linear layer's bias is added by the product's ``BIAS`` epilog (no kernel
of its own), and the bias gradient is reduced inside the weight gradient's GEMM by its
``BGRADA`` epilog (no reduction kernel). A relu layer adds bias and relu in one fused
kernel after its product, as ``bias_activation`` does: cuBLASLt's ``RELU_BIAS`` epilog is
not used, as its ReLU (CUTLASS's ``fmax``) would turn a NaN into 0, where ember's relu
keeps it (a NaN must never be hidden).

Where nvmath is missing or refuses a layout, and on the host, each op computes exactly what
the separate ops compute (``matmul``, ``bias_activation`` and their gradients): the same
calls, the same bits.
"""

from __future__ import annotations

from typing import Any

from .._errors import InvalidArgumentError
from .._registry import execute, register
from . import _args, _fused
from .linalg import _matmul_forward
from .nn_fused import ACTIVATIONS, _activation_grad, _bias_act, _floating, _sum_rows

F = "nn"


def _products(be: Any) -> Any:
    """The backend's nvmath products (``Products``) where it routes products through
    nvmath-python, else None (the host, or a GPU without it)."""
    products = getattr(be, "products", None)
    return products if products is not None and products.nvmath is not None else None


def _dense(be: Any, x: Any, w: Any, b: Any, *, activation: str) -> Any:
    products = _products(be)
    if activation == "linear" and products is not None:
        y = products.linear(x, w, b)
        if y is not None:
            return y
    return _bias_act(be, _matmul_forward(be, x, w), b, activation=activation)


def _dense_weight_grad(be: Any, x: Any, dz: Any) -> tuple[Any, Any]:
    products = _products(be)
    if products is not None:
        got = products.weight_grad(x, dz)
        if got is not None:
            return got
    xp = be.xp
    if _fused.fusable(xp):
        return _matmul_forward(be, x.T, dz), dz.sum(0)
    return _matmul_forward(be, x.T, dz), _sum_rows(xp, dz)


_dense_op = register("dense", _dense, family=F, promote="all")
_activation_grad_op = register("activation_grad", _activation_grad, family=F,
                               promote="into_first")
_dense_weight_grad_op = register("dense_weight_grad", _dense_weight_grad, family=F,
                                 promote="all")


def dense(x: Any, kernel: Any, bias: Any, activation: str = "linear") -> Any:
    """``activation(x @ kernel + bias)`` for a matrix ``x`` (batch, in), ``kernel`` (in,
    units) and ``bias`` (units,), as one op (see the module docstring): Dense layers call
    it, and ``nn_ops.xw_plus_b`` and ``nn_ops.relu_layer`` are its TensorFlow names.

    Raises:
        InvalidArgumentError: another activation than "linear" or "relu", shapes that do
            not fit, or a kernel or bias that is not floating (integer ``x`` is promoted
            with them, as ``matmul`` promotes it).
    """
    if activation not in ACTIVATIONS:
        raise InvalidArgumentError(f"dense: activation must be one of {ACTIVATIONS}, got "
                                   f"{activation!r}")
    x, w, b = _args.tensor(x), _args.tensor(kernel), _args.tensor(bias)
    if x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[0]:
        raise InvalidArgumentError(f"dense: x {x.shape} and kernel {w.shape} must be "
                                   "matrices (batch, in) and (in, units)")
    if b.ndim != 1 or b.shape[0] != w.shape[1]:
        raise InvalidArgumentError(f"dense: bias of shape {b.shape} does not match the "
                                   f"kernel's units {w.shape[1]}")
    _floating("dense", kernel=w, bias=b)  # (x may be integers: promoted, as by matmul)
    return execute(_dense_op, (x, w, b), {"activation": activation})


def activation_grad(dy: Any, y: Any, activation: str = "relu") -> Any:
    """The gradient of ``dense``'s (or ``bias_activation``'s) pre-activation from the
    output ``y`` (for its rule and the op table)."""
    return execute(_activation_grad_op, (_args.tensor(dy), _args.tensor(y)),
                   {"activation": activation})


def dense_weight_grad(x: Any, dz: Any) -> tuple[Any, Any]:
    """``(x.T @ dz, dz summed over rows)``: the kernel's and bias's gradients of ``dense``
    from the pre-activation's ``dz`` (for its rule and the op table)."""
    out = execute(_dense_weight_grad_op, (_args.tensor(x), _args.tensor(dz)))
    return out[0], out[1]

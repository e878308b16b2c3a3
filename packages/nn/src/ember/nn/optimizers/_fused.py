"""An optimizer's update of one variable as one kernel on a GPU.

On a GPU a small model's step costs what its kernel launches cost, and an update written
in ops launches one kernel per op: SGD with momentum four per variable, Adam about ten.
Here the whole update of a variable and its slots is one ``ElementwiseKernel`` (cupy's, or
the strict double's, which evaluates the same C), with the ops' arithmetic in the ops'
order, so the numbers are the unfused ones, bit for bit: the kernels are compiled with
``--fmad=false``, since nvcc otherwise contracts ``p - g * lr`` into one fused multiply-add
(an ulp from the ops' result, which the H200 showed in SGD's update).

The kernel runs as an op (``nn_update_sgd``, ``nn_update_momentum``, ``nn_update_adam``,
registered through ``ember.core.extend``), so the recorders see it: graph mode records one
step per variable's update, and its replay (or captured CUDA graph) launches one kernel
for it, bit for bit as the eager step. The op takes the variables themselves (core reads
them, so a trace knows their values) and is not differentiable (updates run outside the
tape). On the host numpy cannot fuse: the optimizers run their ops there, in place where
they can (the ops' forwards below compute the same arithmetic for a caller that runs them
on the CPU anyway). Anything the kernels do not cover (a hyperparameter of another dtype
or device, mixed dtypes) also runs the ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em
from ember.core import extend

_NO_FMA = ("--fmad=false",)  # the ops' roundings (see the module docstring)


def _hyper(h: Any, dt: np.dtype, dev: Any) -> tuple[bool, Any]:
    """(usable, attribute) of a hyperparameter as a kernel argument of dtype ``dt``: a
    number is the op's attribute (cast to ``dt`` as an op casts a Python number), a 0-d
    tensor on ``dev`` of that dtype an input of the op (attribute None); anything else is
    not usable."""
    if type(h) in (float, int):
        return True, float(h)
    if isinstance(h, em.Tensor) and extend.device_of(h) is dev and h.dtype == dt \
            and not h.shape:
        return True, None
    return False, None


class _Spec:
    """One update's kernel (its parameters and C) and the same arithmetic in numpy."""

    __slots__ = ("host", "ins", "operation", "outs", "slots")

    def __init__(self, ins: str, outs: str, operation: str, slots: int, host: Any) -> None:
        self.ins, self.outs, self.operation = ins, outs, operation
        self.slots = slots  # how many slot arrays follow the variable and the gradient
        self.host = host  # host(p, g, *slots, *hypers, *extra) -> the new arrays


def _adam_host(c1_hosted: bool, c2_hosted: bool) -> Any:
    def host(p: Any, g: Any, m: Any, v: Any, b1: Any, c1: Any, b2: Any, c2: Any, eps: Any,
             lr: Any, it: Any) -> tuple[Any, Any, Any]:
        dt = p.dtype
        m2 = m * b1 + g * (c1 if c1_hosted else 1 - b1)
        v2 = v * b2 + np.square(g) * (c2 if c2_hosted else 1 - b2)
        t = dt.type(it + 1)
        corr = np.sqrt(1 - np.power(b2, t)) / (1 - np.power(b1, t))
        return p - m2 / (np.sqrt(v2) + eps) * (lr * corr), m2, v2
    return host


_SPECS: dict[str, _Spec] = {
    "sgd": _Spec("T p, T g, T lr", "T p2", "p2 = p - g * lr", 0,
                 lambda p, g, lr: p - g * lr),
    "sgd_momentum": _Spec(
        "T p, T g, T m, T mom, T lr", "T p2, T m2", "m2 = m * mom - g * lr; p2 = p + m2", 1,
        lambda p, g, m, mom, lr: (p + (m * mom - g * lr), m * mom - g * lr)),
    "sgd_nesterov": _Spec(
        "T p, T g, T m, T mom, T lr", "T p2, T m2",
        "m2 = m * mom - g * lr; p2 = p + (m2 * mom - g * lr)", 1,
        lambda p, g, m, mom, lr: (p + ((m * mom - g * lr) * mom - g * lr),
                                  m * mom - g * lr)),
}
for _h1 in (0, 1):
    for _h2 in (0, 1):
        # ``1 - b`` as the ops compute it: in Python for a number, in the dtype for a tensor
        _c1, _c2 = ("c1" if _h1 else "(1 - b1)"), ("c2" if _h2 else "(1 - b2)")
        _SPECS[f"adam_{_h1}{_h2}"] = _Spec(
            "T p, T g, T m, T v, T b1, T c1, T b2, T c2, T eps, T lr, I it",
            "T p2, T m2, T v2",
            f"m2 = m * b1 + g * {_c1}; v2 = v * b2 + g * g * {_c2}; T t = it + 1; "
            "T corr = sqrt(1 - pow(b2, t)) / (1 - pow(b1, t)); "
            "p2 = p - m2 / (sqrt(v2) + eps) * (lr * corr)", 2, _adam_host(bool(_h1), bool(_h2)))


def _forward(be: Any, *arrays: Any, kind: str, numbers: tuple[float | None, ...]) -> Any:
    """The op's forward: ``arrays`` are the variable's value, the gradient, the slots', the
    tensor hyperparameters (one per None in ``numbers``, in order) then the extra arrays;
    the results are the variable's and the slots' new values."""
    spec = _SPECS[kind]
    dt = arrays[0].dtype
    k = 2 + spec.slots
    rest = iter(arrays[k:])
    hypers = [dt.type(h) if h is not None else next(rest) for h in numbers]
    args = (*arrays[:k], *hypers, *rest)
    xp = be.xp
    if xp is not np and hasattr(xp, "ElementwiseKernel"):
        return extend.elementwise_kernel(xp, kind, spec.ins, spec.outs,
                                         spec.operation, _NO_FMA)(*args)
    return spec.host(*args)


def _registered() -> Any:
    """The op, registered once per process. This file loaded a second time under another
    module name (pytest's doctests import source files by path) finds its own op there;
    another op of the name is a clash, and ``register_op`` says so."""
    known = em.REGISTRY.get("nn_fused_update")
    here = _forward.__code__.co_filename
    if known is not None and getattr(known.forward, "__code__", None) is not None \
            and known.forward.__code__.co_filename == here:
        return known
    return extend.register_op("nn_fused_update", _forward, family="optimizers",
                              differentiable=False)


_OP = _registered()


def update(kind: str, var: Any, grad: Any, slots: tuple[Any, ...], hypers: tuple[Any, ...],
           extra: tuple[Any, ...] = ()) -> bool:
    """Whether ``var`` and its ``slots`` were updated by the op ``nn_fused_update`` with the
    kernel of ``kind`` (``_SPECS``): inputs the variable, the gradient, the slots, the
    ``hypers`` (as ``_hyper``) then ``extra`` (variables or tensors on the variable's
    device); outputs the variable's and the slots' new values, in that order. False (and
    nothing done) where the ops must run instead (see the module)."""
    value = extend.read_without_recording(var)
    dev = extend.device_of(value)
    xp = dev.xp
    if xp is np or not hasattr(xp, "ElementwiseKernel") or type(grad) is not em.Tensor:
        return False
    dt = value.dtype
    if dt.kind != "f" or extend.device_of(grad) is not dev or grad.dtype != dt \
            or grad.shape != value.shape:
        return False
    states = [extend.read_without_recording(s) for s in slots]
    if any(extend.device_of(s) is not dev or s.dtype != dt or s.shape != value.shape
           for s in states):
        return False
    numbers = []
    for h in hypers:
        ok, number = _hyper(h, dt, dev)
        if not ok:
            return False
        numbers.append(number)
    tensors = [h for h, n in zip(hypers, numbers) if n is None]
    new = extend.run_op(_OP, (var, grad, *slots, *tensors, *extra),
                        {"kind": kind, "numbers": tuple(numbers)})
    for target, t in zip((var, *slots), new if type(new) is tuple else (new,)):
        target.assign(t)
    return True


def sgd(var: Any, grad: Any, lr: Any) -> bool:
    """``var -= grad * lr`` (``assign_sub(multiply(grad, lr))``)."""
    return update("sgd", var, grad, (), (lr,))


def momentum(var: Any, grad: Any, m: Any, mom: Any, lr: Any, nesterov: bool) -> bool:
    """Keras 3's: ``m = m * mom - g * lr``, then ``var += m`` (Nesterov: ``var += m * mom -
    g * lr``)."""
    return update("sgd_nesterov" if nesterov else "sgd_momentum", var, grad, (m,),
                  (mom, lr))


def adam(var: Any, grad: Any, m: Any, v: Any, b1: Any, b2: Any, eps: Any, lr: Any,
         iterations: Any) -> bool:
    """Adam's update as ``Adam.apply_single`` writes it in ops, with the bias correction
    ``sqrt(1 - b2**t) / (1 - b1**t)`` (``t`` the step, from 1) computed in the kernel from
    ``iterations`` (an int64 variable on the same device): no separate launches for it."""
    it = extend.read_without_recording(iterations)
    if extend.device_of(it) is not extend.device_of(extend.read_without_recording(var)):
        return False
    hosted = type(b1) in (float, int), type(b2) in (float, int)
    return update(
        f"adam_{int(hosted[0])}{int(hosted[1])}", var, grad, (m, v),
        (b1, 1 - b1 if hosted[0] else 0.0, b2, 1 - b2 if hosted[1] else 0.0, eps, lr),
        (iterations,))

"""An optimizer's update of one variable as one kernel on a GPU.

On a GPU a small model's step costs what its kernel launches cost, and an update written
in ops launches one kernel per op: SGD with momentum four per variable, Adam about ten.
Here the whole update of a variable and its slots is one ``ElementwiseKernel`` (cupy's, or
the strict double's, which evaluates the same C), with the ops' arithmetic in the ops'
order, so the numbers are the unfused ones (a GPU may contract a product and a sum into
one fused multiply-add, within the device's tolerance).

Only eager steps on a GPU take this path: on the host numpy cannot fuse (the ops'
in-place forms are used there), and while a recorder is active (a tape or a graph trace)
the ops run so that they are seen. Anything it does not cover (a hyperparameter of another
dtype or device, mixed dtypes) also runs the ops.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

import ember.core as em
from ember.core import extend

_KERNELS: dict[tuple[int, str], tuple[Any, Any]] = {}
_lock = threading.Lock()


def _kernel(xp: Any, name: str, ins: str, outs: str, operation: str) -> Any:
    hit = _KERNELS.get((id(xp), name))
    if hit is not None and hit[0] is xp:
        return hit[1]
    k = xp.ElementwiseKernel(ins, outs, operation, "ember_" + name)
    with _lock:
        _KERNELS[(id(xp), name)] = (xp, k)
    return k


def _scalar(h: Any, dt: np.dtype, dev: Any) -> Any:
    """A hyperparameter as a kernel argument of dtype ``dt``: a number as a numpy scalar
    (as an op casts a Python number), a 0-d tensor on ``dev`` of that dtype as its array;
    None for anything else."""
    if type(h) in (float, int):
        return dt.type(h)
    if isinstance(h, em.Tensor) and extend.device_of(h) is dev and h.dtype == dt \
            and not h.shape:
        return extend.array_of(h)
    return None


def update(name: str, ins: str, outs: str, operation: str, var: Any, grad: Any,
           slots: tuple[Any, ...], hypers: tuple[Any, ...], extra: tuple[Any, ...] = ()
           ) -> bool:
    """Whether ``var`` and its ``slots`` were updated by the kernel ``operation``: inputs
    the variable, the gradient, the slots, the ``hypers`` (as ``_scalar``) then the
    ``extra`` arrays; outputs the variable's and the slots' new values, in that order.
    False (and nothing done) where the ops must run instead (see the module)."""
    if em.recording.active_recorders():
        return False
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
    args = [_scalar(h, dt, dev) for h in hypers]
    if any(a is None for a in args):
        return False
    arrays = [extend.array_of(t) for t in (value, grad, *states)]
    new = _kernel(xp, name, ins, outs, operation)(*arrays, *args, *extra)
    for target, a in zip((var, *slots), new if isinstance(new, tuple) else (new,)):
        target.assign(extend.tensor_from_array(a, dev))
    return True


def sgd(var: Any, grad: Any, lr: Any) -> bool:
    """``var -= grad * lr`` (``assign_sub(multiply(grad, lr))``)."""
    return update("sgd", "T p, T g, T lr", "T p2", "p2 = p - g * lr", var, grad, (), (lr,))


def momentum(var: Any, grad: Any, m: Any, mom: Any, lr: Any, nesterov: bool) -> bool:
    """``m = m * mom + g``, then ``var -= m * lr`` (Nesterov: ``(g + m * mom) * lr``)."""
    step = "(g + m2 * mom)" if nesterov else "m2"
    return update("sgd_nesterov" if nesterov else "sgd_momentum",
                  "T p, T g, T m, T mom, T lr", "T p2, T m2",
                  f"m2 = m * mom + g; p2 = p - {step} * lr", var, grad, (m,), (mom, lr))


def adam(var: Any, grad: Any, m: Any, v: Any, b1: Any, b2: Any, eps: Any, lr: Any,
         iterations: Any) -> bool:
    """Adam's update as ``Adam.apply_single`` writes it in ops, with the bias correction
    ``sqrt(1 - b2**t) / (1 - b1**t)`` (``t`` the step, from 1) computed in the kernel from
    ``iterations`` (an int64 variable on the same device): no separate launches for it."""
    it = extend.read_without_recording(iterations)
    if extend.device_of(it) is not extend.device_of(extend.read_without_recording(var)):
        return False
    # ``1 - b`` as the ops compute it: in Python for a number, in the dtype for a tensor
    hosted = type(b1) in (float, int), type(b2) in (float, int)
    c1, c2 = ("c1" if hosted[0] else "(1 - b1)"), ("c2" if hosted[1] else "(1 - b2)")
    return update(
        f"adam_{int(hosted[0])}{int(hosted[1])}",
        "T p, T g, T m, T v, T b1, T c1, T b2, T c2, T eps, T lr, I it", "T p2, T m2, T v2",
        f"m2 = m * b1 + g * {c1}; v2 = v * b2 + g * g * {c2}; T t = it + 1; "
        "T corr = sqrt(1 - pow(b2, t)) / (1 - pow(b1, t)); "
        "p2 = p - m2 / (sqrt(v2) + eps) * (lr * corr)",
        var, grad, (m, v),
        (b1, 1 - b1 if hosted[0] else 0.0, b2, 1 - b2 if hosted[1] else 0.0, eps, lr),
        (extend.array_of(it),))

"""DistributedOptimizer and DistributedGradientTape: gradients averaged over the ranks."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from . import _gpu, _world
from ._arrays import describe
from ._broadcast import broadcast_variables
from ._check import agree
from ._collectives import check_op
from ._fusion import Fusion

DEFAULT_FUSION_BYTES = 64 * 1024 * 1024  # Horovod's default fusion threshold
_PROTOCOL = ("__checkpoint_children__", "__checkpoint_slots__", "__checkpoint_state__",
             "__checkpoint_restore_state__", "__checkpoint_listen__")


class GradientReducer:
    """Averages a list of gradients over the ranks, fused, with ``None`` handled the same
    way on every rank: ``None`` everywhere stays ``None``; ``None`` on some ranks counts as
    zeros there (that rank's loss did not depend on the variable)."""

    def __init__(self, op: str, fusion_threshold_bytes: int, what: str) -> None:
        if op not in ("mean", "sum"):
            raise ValueError(f"{what}: op must be 'mean' or 'sum', got {op!r}")
        self.op = op
        self.fusion = Fusion(fusion_threshold_bytes)
        self.what = what

    def reduce(self, grads: list[Any], like: list[Any]) -> list[Any]:
        comm = _world.current()
        if comm.size == 1:
            return list(grads)
        have = np.array([g is not None for g in grads], np.int64)
        desc = f"{self.what} " + " ".join(  # device kinds, not indices: a GPU per rank
            f"{describe(v)}@{str(getattr(v, 'device', 'host')).split(':')[0]}" for v in like)
        counts = agree(comm, self.what, desc, extra=have)
        nccl = self._nccl_for(grads, like, counts)
        if nccl is not None:
            return self._reduce_on_gpus(nccl, grads, like, counts)
        arrays: list[np.ndarray] = []
        where: list[int] = []
        devices: list[str] = []
        for i, (g, v) in enumerate(zip(grads, like)):
            if counts[i] == 0:
                continue
            if g is None:
                a = np.zeros(v.shape, np.dtype(v.dtype))
            else:
                a = np.asarray(g)  # a tensor's read-only view on the CPU: fused, not written
                if a.shape != tuple(v.shape):
                    raise ValueError(f"{self.what}: gradient {i} has shape {list(a.shape)}, its "
                                     f"variable {list(v.shape)}")
            check_op(self.what, self.op, a.dtype)
            arrays.append(a)
            where.append(i)
            devices.append(str(getattr(g, "device", None) or getattr(v, "device", "/cpu:0")))
        reduced = self.fusion.allreduce(comm, arrays, self.op, self.what)
        out: list[Any] = [None] * len(grads)
        for i, r, dev in zip(where, reduced, devices):
            out[i] = em.convert_to_tensor(r, device=dev)  # copies: the buffer is reused
        return out

    def _nccl_for(self, grads: list[Any], like: list[Any], counts: Any) -> Any:
        """NCCL when every gradient to reduce is on a GPU (the same on every rank: the
        variables' devices are part of what the ranks agreed on)."""
        live = [v for v, c in zip(like, counts) if c]
        if not live or not all(_gpu.on_gpu(v) for v in live):
            return None
        nccl = _gpu.gpu_comm()
        if nccl is None or not all(nccl.supports(v.dtype) for v in live):
            return None
        return nccl

    def _reduce_on_gpus(self, nccl: Any, grads: list[Any], like: list[Any],
                        counts: Any) -> list[Any]:
        live = [i for i in range(len(grads)) if counts[i]]
        xp = _gpu.array_module(like[live[0]])
        arrays = []
        for i in live:
            g, v = grads[i], like[i]
            if g is None:  # counted as zeros on this rank
                arrays.append(xp.zeros(tuple(v.shape), np.dtype(v.dtype)))
            else:
                arrays.append(_gpu.device_array(g if _gpu.on_gpu(g) else
                                                em.convert_to_tensor(g, device=v.device)))
        reduced = self.fusion.allreduce(nccl, arrays, self.op, self.what, xp=xp)
        out: list[Any] = [None] * len(grads)
        for i, r in zip(live, reduced):
            out[i] = _gpu.to_tensor(r.copy(), like[i].device)  # the fused buffer is reused
        return out


def DistributedOptimizer(optimizer: Any, *, op: str = "mean",
                         fusion_threshold_bytes: int = DEFAULT_FUSION_BYTES,
                         broadcast_on_first_step: bool = True,
                         backward_passes_per_step: int = 1,
                         average_aggregated_gradients: bool = False) -> Any:
    """Wrap any optimizer so that gradients are averaged over the ranks before they apply.

    The wrapper has the optimizer's methods and attributes, and checkpoints under the same
    paths as the optimizer itself. Gradients are fused into flat buffers of at most
    ``fusion_threshold_bytes`` (one allreduce each). In a world of one it adds nothing.

    Args:
        optimizer: any object with ``apply_gradients(grads_and_vars, ...)``.
        op: ``"mean"`` (gradients of the global batch when each rank averages its own
            part) or ``"sum"``.
        fusion_threshold_bytes: the largest fused buffer (0: one allreduce per gradient).
        broadcast_on_first_step: before the first update, copy rank 0's values into every
            variable being updated, so that ranks that initialised differently agree.
        backward_passes_per_step: Horovod's local gradient accumulation; only 1 (every
            ``apply_gradients`` averages and applies), anything else is refused.
        average_aggregated_gradients: Horovod's; it matters only for accumulated
            gradients, so with ``backward_passes_per_step=1`` either value means the same.

    Examples:
        >>> import ember.core as em
        >>> from ember import distribute
        >>> class SGD:  # any object with apply_gradients, e.g. nn.optimizers.SGD
        ...     learning_rate = 0.1
        ...     def apply_gradients(self, grads_and_vars):
        ...         for g, v in grads_and_vars:
        ...             v.assign_sub(self.learning_rate * g)
        >>> distribute.init()
        >>> opt = distribute.DistributedOptimizer(SGD())
        >>> v = em.Variable(1.0)
        >>> opt.apply_gradients([(em.constant(2.0), v)])
        >>> round(float(v), 6)
        0.8
    """
    if not callable(getattr(optimizer, "apply_gradients", None)):
        raise TypeError("DistributedOptimizer: optimizer must have an apply_gradients method, "
                        f"got {type(optimizer).__name__}")
    if backward_passes_per_step != 1 or isinstance(backward_passes_per_step, bool):
        raise ValueError(f"DistributedOptimizer: backward_passes_per_step="
                         f"{backward_passes_per_step!r} (local gradient accumulation) is not "
                         "supported; only 1")
    if not isinstance(average_aggregated_gradients, bool):
        raise TypeError(f"DistributedOptimizer: average_aggregated_gradients must be a bool, "
                        f"got {average_aggregated_gradients!r}")
    inner_type = type(optimizer)
    ns = {name: _delegate(name) for name in _PROTOCOL if hasattr(inner_type, name)}
    cls = type(f"Distributed{inner_type.__name__}", (_DistributedOptimizer,), ns)
    return cls(optimizer, op, fusion_threshold_bytes, broadcast_on_first_step)


def _delegate(name: str) -> Any:
    if name == "__checkpoint_listen__":
        def listen(self: Any, listener: Any) -> None:
            self._optimizer.__checkpoint_listen__(_AsWrapper(listener, self._optimizer, self))

        return listen

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._optimizer, name)(*args, **kwargs)

    method.__name__ = name
    return method


class _AsWrapper:
    """Reports children and slots the wrapped optimizer creates as the wrapper's own, so a
    checkpoint that reached the optimizer through the wrapper restores them when they
    appear (deferred restore of Adam's slots, for one)."""

    def __init__(self, listener: Any, inner: Any, outer: Any) -> None:
        self._listener, self._inner, self._outer = listener, inner, outer

    def _owner(self, owner: Any) -> Any:
        return self._outer if owner is self._inner else owner

    def child_created(self, owner: Any, name: str, child: Any) -> None:
        self._listener.child_created(self._owner(owner), name, child)

    def slot_created(self, owner: Any, primary: Any, slot_name: str, slot: Any) -> None:
        self._listener.slot_created(self._owner(owner), primary, slot_name, slot)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._listener, name)


class _DistributedOptimizer:
    def __init__(self, optimizer: Any, op: str, fusion_threshold_bytes: int,
                 broadcast_on_first_step: bool) -> None:
        object.__setattr__(self, "_optimizer", optimizer)
        object.__setattr__(self, "_reducer", GradientReducer(
            op, fusion_threshold_bytes, "DistributedOptimizer.apply_gradients"))
        object.__setattr__(self, "_pending_broadcast", bool(broadcast_on_first_step))

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_optimizer"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._optimizer, name, value)

    def __repr__(self) -> str:
        return f"DistributedOptimizer({self._optimizer!r})"

    # The wrapper stands for the optimizer it wraps where code inspects it: Horovod's
    # wrapper is a subclass of the optimizer's class, so code that checks for an optimizer
    # (``Model.compile``) takes it, and code that reads an optimizer's state (ember.nn's
    # saving: a model compiled with the wrapper saves the wrapped optimizer, which loads
    # back as itself) sees the wrapped one's. ``type()`` still tells the wrapper.
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return type(object.__getattribute__(self, "_optimizer"))

    @property  # type: ignore[misc]
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        return object.__getattribute__(self, "_optimizer").__dict__  # type: ignore[no-any-return]

    def apply_gradients(self, grads_and_vars: Any, *args: Any, **kwargs: Any) -> Any:
        """Average the gradients over the ranks, then apply them with the wrapped optimizer."""
        pairs = list(grads_and_vars)
        grads = [g for g, _ in pairs]
        variables = [v for _, v in pairs]
        grads = self._reducer.reduce(grads, variables)
        if self._pending_broadcast:
            object.__setattr__(self, "_pending_broadcast", False)
            broadcast_variables(variables, root=0)
        return self._optimizer.apply_gradients(list(zip(grads, variables)), *args, **kwargs)

    def minimize(self, loss: Any, var_list: Any = None, **kwargs: Any) -> Any:
        """``compute_gradients`` of the wrapped optimizer, averaged, then applied."""
        pairs = self._optimizer.compute_gradients(loss, var_list=var_list)
        return self.apply_gradients(pairs, **kwargs)


class DistributedGradientTape:
    """A gradient tape whose ``gradient()`` is averaged over the ranks (Horovod's
    ``DistributedGradientTape``); everything else is the wrapped tape's.

    Examples:
        >>> import ember.core as em
        >>> from ember import distribute, tape
        >>> distribute.init()
        >>> w = em.Variable(3.0)
        >>> with tape.GradientTape() as t:
        ...     loss = w * w
        >>> distribute.DistributedGradientTape(t).gradient(loss, [w])
        [ember.Tensor(6.0, shape=(), dtype=float32)]
    """

    def __init__(self, gradient_tape: Any, *, op: str = "mean",
                 fusion_threshold_bytes: int = DEFAULT_FUSION_BYTES) -> None:
        if not callable(getattr(gradient_tape, "gradient", None)):
            raise TypeError("DistributedGradientTape: expected a tape with a gradient method, "
                            f"got {type(gradient_tape).__name__}")
        self._tape = gradient_tape
        self._reducer = GradientReducer(op, fusion_threshold_bytes,
                                        "DistributedGradientTape.gradient")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tape, name)

    def __enter__(self) -> DistributedGradientTape:
        self._tape.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._tape.__exit__(*exc)

    def gradient(self, target: Any, sources: Any, *args: Any, **kwargs: Any) -> Any:
        grads = self._tape.gradient(target, sources, *args, **kwargs)
        if isinstance(sources, (list, tuple)):
            return type(grads)(self._reducer.reduce(list(grads), list(sources)))
        if isinstance(sources, dict):
            keys = list(sources)
            red = self._reducer.reduce([grads[k] for k in keys], [sources[k] for k in keys])
            return dict(zip(keys, red))
        return self._reducer.reduce([grads], [sources])[0]

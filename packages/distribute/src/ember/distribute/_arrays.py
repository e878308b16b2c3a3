"""Between user values (tensors, variables, numpy arrays, numbers) and host arrays.

Collectives run on host numpy arrays; GPU tensors are copied to the host and back unless
the world has an NCCL communicator. Results come back as the kind that went in: a numpy
array for a numpy array, otherwise an ember Tensor on the input's device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em
from ember.core import extend

# dtypes MPI cannot reduce natively: reduced in float32 and cast back
_WIDEN = {np.dtype(np.float16), np.dtype(em.bfloat16)}


def describe(a: Any) -> str:
    return f"{np.dtype(a.dtype).name}{list(a.shape)}"


def host_view(x: Any, what: str, arg: str = "x") -> tuple[np.ndarray, Any]:
    """A host array holding ``x`` (may share memory with it) and a function giving results back.

    The returned function turns a host array into the caller's kind: numpy in, numpy out;
    otherwise a Tensor on the device ``x`` lived on.
    """
    if isinstance(x, np.ndarray):
        return x, _same
    if isinstance(x, (list, tuple, int, float, bool, np.generic)):
        x = em.convert_to_tensor(x)
    if isinstance(x, (em.Tensor, em.Variable)):  # (a read-only view on the CPU: no copy)
        return np.asarray(x), _back_to(x.device)
    raise TypeError(f"{what}: {arg} must be a Tensor, Variable, numpy array or number, "
                    f"got {type(x).__name__}")


def _same(a: np.ndarray) -> np.ndarray:
    return a


def _back_to(device: str) -> Any:
    """Results are fresh arrays nobody else holds: a CPU tensor takes one over without a
    copy; a GPU tensor gets it uploaded."""
    if device.startswith("/cpu"):
        return lambda a: extend.tensor_from_array(np.require(a, requirements="C"), device)
    return lambda a: em.convert_to_tensor(a, device=device)


def reduce_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dt in _WIDEN else dt

"""The table of op specs, and the helpers that run a spec against numpy (and PyTorch).

Every public op of ``ember.core``, ``ember.core.nn_ops`` and ``ember.core.random`` has
an ``OpSpec`` in ``OP_SPECS``. Other packages run the same table: ember-tape
checks each differentiable spec's gradients (``grad_args``) against finite differences
and PyTorch.

Examples:
    >>> from ember.core.testing import OP_SPECS, check_spec_forward, get_spec
    >>> check_spec_forward(get_spec("add"), "/cpu:0")
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal

from .._device import Device, device
from .._dtypes import is_floating
from .._ops.creation import convert_to_tensor
from .._tensor import Tensor
from . import (
    _table_array,
    _table_conv3d,
    _table_ctc,
    _table_fft,
    _table_linalg,
    _table_math,
    _table_math_tf,
    _table_nn,
    _table_nn_fused,
    _table_recurrent,
    _table_reduce,
)
from ._spec import LOW, Case, OpSpec, Raw

OP_SPECS: list[OpSpec] = (_table_math.specs() + _table_reduce.specs() + _table_array.specs()
                          + _table_nn.specs() + _table_linalg.specs() + _table_recurrent.specs()
                          + _table_nn_fused.specs() + _table_math_tf.specs()
                          + _table_ctc.specs() + _table_fft.specs() + _table_conv3d.specs())

_BY_NAME = {s.name: s for s in OP_SPECS}
if len(_BY_NAME) != len(OP_SPECS):  # pragma: no cover - a table-editing mistake
    raise RuntimeError("ember.core.testing: two op specs share a name")


def get_spec(name: str) -> OpSpec:
    """The spec called ``name`` (e.g. ``"add"``, ``"nn_ops.conv2d"``)."""
    return _BY_NAME[name]


def iter_cases(specs: list[OpSpec] | None = None) -> Iterator[tuple[OpSpec, Case, np.dtype]]:
    """Every (spec, case, dtype) triple, for ``pytest.mark.parametrize``."""
    for spec in OP_SPECS if specs is None else specs:
        for dt in spec.dtypes:
            for c in spec.cases:
                yield spec, c, np.dtype(dt)


def case_id(spec: OpSpec, case: Case, dtype: Any) -> str:
    return f"{spec.name}-{case.name}-{np.dtype(dtype).name}"


# --- arguments --------------------------------------------------------------------------
def numpy_args(v: Any) -> Any:
    """The arguments as the numpy reference sees them (``Raw`` markers removed)."""
    if isinstance(v, Raw):
        return v.value
    if isinstance(v, list):
        return [numpy_args(x) for x in v]
    if isinstance(v, tuple):
        return tuple(numpy_args(x) for x in v)
    return v


def ember_args(v: Any) -> Any:
    """numpy arrays (also inside lists and tuples) as tensors on the current device."""
    if isinstance(v, Raw):
        return v.value
    if isinstance(v, np.ndarray):
        return convert_to_tensor(v)
    if isinstance(v, list):
        return [ember_args(x) for x in v]
    if isinstance(v, tuple):
        return tuple(ember_args(x) for x in v)
    return v


def _upcast(v: Any) -> Any:
    """Low-precision float arrays as float32, for a reference computed more precisely."""
    if isinstance(v, np.ndarray) and v.dtype in LOW:
        return v.astype(np.float32)
    if isinstance(v, list):
        return [_upcast(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_upcast(x) for x in v)
    return v


def flatten(out: Any) -> list[Any]:
    """Nested tuples/lists (``split``, ``top_k``, ``clip_by_global_norm``) as a flat list."""
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in flatten(o)]
    return [out]


def make_case(spec: OpSpec, case: Case, dtype: Any, seed: int = 0
              ) -> tuple[list[Any], dict[str, Any]]:
    """The case's raw arguments (numpy arrays, ``Raw`` markers) and keyword arguments."""
    rng = np.random.default_rng(seed)
    return case.make(rng, np.dtype(dtype)), {**spec.kwargs, **case.kwargs}


def run_case(spec: OpSpec, case: Case, dtype: Any, backend_device: str | Device = "/cpu:0",
             seed: int = 0) -> tuple[Any, list[Any], dict[str, Any]]:
    """Run ``spec.fn`` on the case inside ``device(backend_device)``.

    Returns (ember output, numpy arguments, keyword arguments).
    """
    raw, kwargs = make_case(spec, case, dtype, seed)
    with device(backend_device):
        out = spec.fn(*ember_args(raw), **kwargs)
    return out, numpy_args(raw), kwargs


# --- checks -----------------------------------------------------------------------------
def check_case_forward(spec: OpSpec, case: Case, dtype: Any,
                       backend_device: str | Device = "/cpu:0", seed: int = 0,
                       tol: Callable[[np.ndarray], tuple[float, float]] | None = None) -> None:
    """Assert that one case matches the numpy reference in value, shape, dtype and device.

    ``tol``, given the reference output, returns the (rtol, atol) to check it with,
    instead of the spec's tolerance for the dtype (for an algorithm whose rounding error
    is bounded relative to the whole output rather than to each element)."""
    dtype = np.dtype(dtype)
    what = case_id(spec, case, dtype)
    with device(backend_device) as dev:
        dev_name = dev.name
    out, np_args, kwargs = run_case(spec, case, dtype, backend_device, seed)
    got = flatten(out)
    for g in got:
        assert type(g) is Tensor, f"{what}: returned {type(g).__name__}, not a Tensor"
        assert g.device == dev_name, f"{what}: result on {g.device}, expected {dev_name}"
    if spec.ref is None:
        assert spec.stat is not None, f"{what}: a spec without a reference needs a stat check"
        spec.stat(got[0].numpy(), np_args, kwargs, dtype)
        return
    want = [np.asarray(w) for w in flatten(spec.ref(*np_args, **kwargs))]
    vals = want
    if dtype in LOW:
        vals = [np.asarray(w) for w in flatten(spec.ref(*_upcast(np_args), **kwargs))]
    assert len(got) == len(want), f"{what}: {len(got)} outputs, reference has {len(want)}"
    for i, (g, w, v) in enumerate(zip(got, want, vals)):
        a = g.numpy()
        where = f"{what} output {i}"
        assert a.shape == w.shape, f"{where}: shape {a.shape}, expected {w.shape}"
        assert a.dtype == w.dtype, f"{where}: dtype {a.dtype}, expected {w.dtype}"
        if is_floating(a.dtype) or a.dtype.kind == "c":
            rtol, atol = spec.tolerance(a.dtype, dev_name) if tol is None else tol(v)
            wide = np.complex128 if a.dtype.kind == "c" else np.float64  # both parts
            assert_allclose(a.astype(wide), v.astype(wide), rtol=rtol, atol=atol,
                            equal_nan=True, err_msg=where)
        else:
            assert_array_equal(a, v, err_msg=where)


def check_spec_forward(spec: OpSpec, backend_device: str | Device = "/cpu:0",
                       dtypes: Any = None) -> None:
    """Run every case of ``spec`` in every dtype (or ``dtypes``) on ``backend_device``."""
    for dt in spec.dtypes if dtypes is None else dtypes:
        for c in spec.cases:
            check_case_forward(spec, c, dt, backend_device)


def torch_args(T: Any, v: Any) -> Any:
    """The numpy arguments as PyTorch CPU tensors (``T`` is the torch module)."""
    if isinstance(v, np.ndarray):
        return T.from_numpy(np.array(v))  # a contiguous copy; keeps 0-d arrays 0-d
    if isinstance(v, list):
        return [torch_args(T, x) for x in v]
    if isinstance(v, tuple):
        return tuple(torch_args(T, x) for x in v)
    return v


def run_torch(spec: OpSpec, case: Case, dtype: Any, seed: int = 0) -> list[np.ndarray] | None:
    """The spec's PyTorch computation on the case, as numpy arrays (None: not expressible)."""
    import torch

    if spec.torch is None:
        return None
    raw, kwargs = make_case(spec, case, dtype, seed)
    out = spec.torch(torch, *torch_args(torch, numpy_args(raw)), **kwargs)
    if out is None:
        return None
    res = []
    for o in flatten(out):
        if hasattr(o, "detach"):
            o = o.detach()
            o = o.float() if o.dtype == torch.bfloat16 else o  # numpy has no torch bfloat16
            res.append(o.numpy())
        else:
            res.append(np.asarray(o))
    return res

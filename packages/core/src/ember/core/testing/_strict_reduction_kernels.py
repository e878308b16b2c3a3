"""``cupy.ReductionKernel`` on the strict GPU double: one kernel that maps each element
(``map_expr``, a C expression over the inputs), reduces the mapped values along ``axis``
(``reduce_expr``, over the reduction's ``a`` and ``b``) and maps each result
(``post_map_expr``, statements over ``a`` that assign the output).

What it keeps of cupy 14 (``cupy/_core/_reduction.pyx``): the constructor's arguments
and ``__call__(*args, out=None, axis=None, keepdims=False, stream=None)``; inputs
broadcast together, a Python number given for an input takes its parameter's type;
``post_map_expr`` runs after the loop over the inputs, where an array input is no longer
in scope but a scalar one (a kernel parameter) is, so reading an array input there is
nvrtc's compile error; one launch, none for an empty result; an empty reduction gives
``identity``. The C is the double's ElementwiseKernel subset (``_strict_kernels``);
``reduce_expr`` is one of ``a + b``, ``max(a, b)``, ``min(a, b)`` (others are not
modelled and raise), and a sum is rounded as a GPU's reduction rounds it (another order).
Not modelled (raise): raw parameters, several outputs, ``preamble``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _strict_launches, _strict_numerics
from ._strict_kernels import (
    KernelSyntaxError,
    StrictElementwiseKernel,
    _compile_error,
    _params,
    _Parser,
    bind_inputs,
)

_REDUCTIONS = {"a+b": np.add, "max(a,b)": np.maximum, "min(a,b)": np.minimum}
_C_NAMES = {"float": "float32", "double": "float64", "int": "int32", "long long": "int64"}


class StrictReductionKernel:
    """``cupy.ReductionKernel(in_params, out_params, map_expr, reduce_expr,
    post_map_expr, identity, name, ...)`` on the strict double (see the module)."""

    def __init__(self, ns: Any, in_params: str, out_params: str, map_expr: str,
                 reduce_expr: str, post_map_expr: str, identity: str,
                 name: str = "reduce_kernel", reduce_type: str | None = None,
                 reduce_dims: bool = True, preamble: str = "",
                 options: tuple[str, ...] = ()) -> None:
        self._ns, self.name, self.identity = ns, name, identity
        self.in_params = _params(in_params, name)
        self.out_params = _params(out_params, name)
        if preamble or len(self.out_params) != 1:
            raise NotImplementedError(f"ReductionKernel {name}: a preamble or several outputs "
                                      "are not modelled by the strict double")
        reduce = _REDUCTIONS.get("".join(reduce_expr.split()))
        if reduce is None:
            raise NotImplementedError(f"ReductionKernel {name}: reduce_expr {reduce_expr!r} is "
                                      f"not modelled by the strict double ({sorted(_REDUCTIONS)})")
        self._reduce: np.ufunc = reduce
        placeholders = frozenset(t for t, _ in self.in_params + self.out_params if len(t) == 1)
        parser = _Parser(map_expr, name, placeholders)
        self._map = parser.parse()
        undefined = sorted(parser.names - {n for _, n in self.in_params})
        if undefined:
            raise KernelSyntaxError(f"ReductionKernel {name}: identifier(s) {undefined} are "
                                    f"undefined in map_expr {map_expr!r}")
        out_type = self.out_params[0][0]
        self._reduce_type = _C_NAMES.get(reduce_type or out_type, reduce_type or out_type)
        # the post map: an element-wise pass over the reduced value ``a`` and the scalar
        # inputs (kernel parameters), evaluated without a launch of its own
        self._post = StrictElementwiseKernel(
            ns, ", ".join([f"{self._reduce_type} a"] + [f"{t} {n}" for t, n in self.in_params]),
            out_params, post_map_expr, name, options=tuple(options))
        self._post_reads = {n for _, n in self.in_params} & _reads(post_map_expr, name,
                                                                  placeholders)

    def __call__(self, *args: Any, out: Any = None, axis: Any = None, keepdims: bool = False,
                 stream: Any = None) -> Any:
        ns, n_in = self._ns, len(self.in_params)
        if len(args) != n_in:
            raise TypeError(f"Wrong number of arguments for {self.name!r}: {len(args)} given, "
                            f"{n_in} expected")
        arrays = [ns._unwrap(a, self.name) for a in args]
        types, env = bind_inputs(self.in_params, arrays, self.name)
        if self._post._error is not None:  # nvrtc's error, at the first call (as cupy's)
            raise self._post._error
        in_arrays = [a for a in arrays if isinstance(a, np.ndarray)]
        if not in_arrays:
            raise ValueError("Loop size is undecided.")
        array_inputs = {n for (_, n), a in zip(self.in_params, arrays)
                        if isinstance(a, np.ndarray)}
        if self._post_reads & array_inputs:
            raise _compile_error(KernelSyntaxError(
                f"ReductionKernel {self.name}: post_map_expr reads the array input(s) "
                f"{sorted(self._post_reads & array_inputs)}, out of scope after the "
                "reduction (only the reduced value `a` and scalar arguments are)"),
                self.name, self._post.operation, self._post.options)
        shape = np.broadcast_shapes(*(np.shape(a) for a in in_arrays))
        ndim = len(shape)
        axes = tuple(range(ndim)) if axis is None else tuple(
            sorted(int(d) % ndim for d in (axis if isinstance(axis, (tuple, list)) else (axis,))))
        out_shape = tuple(1 if d in axes else n for d, n in enumerate(shape)) if keepdims \
            else tuple(n for d, n in enumerate(shape) if d not in axes)
        given = ns._unwrap(out, self.name) if out is not None else None
        if given is not None and given.shape != out_shape:
            raise ValueError(f"ReductionKernel {self.name}: out has shape {given.shape}, the "
                             f"reduction {out_shape}")
        post_types = dict(types)
        reduce_dtype = np.dtype(types.get(self._reduce_type, self._reduce_type))
        post_types[self._reduce_type] = reduce_dtype

        def compute() -> list[Any]:  # the kernel's launch (recorded while capturing)
            local = {k: np.broadcast_to(v, shape) for k, v in env.items()}
            local["@types"] = lambda c: types.get(c, np.dtype(_C_NAMES.get(c, c)))
            with np.errstate(all="ignore"):
                mapped = np.asarray(self._map(local)).astype(reduce_dtype, copy=False)
                mapped = np.broadcast_to(mapped, shape)
                if mapped.size:
                    red = self._reduce.reduce(mapped, axis=axes, keepdims=keepdims)
                else:
                    red = np.full(out_shape, reduce_dtype.type(float(self.identity)))
                red = np.asarray(red, dtype=reduce_dtype)
                if self._reduce is np.add:
                    red = np.asarray(_strict_numerics.as_gpu_computes(
                        "sum", (mapped,), {"axis": axes, "keepdims": keepdims}, red,
                        fn=np.sum), dtype=reduce_dtype)
            post_env = {"a": red, **{n: env[n] for _, n in self.in_params
                                     if n not in array_inputs}}
            for _, n in self.in_params:  # array inputs: out of scope (checked above)
                post_env.setdefault(n, np.zeros((), env[n].dtype))
            return self._post._evaluate(post_env, [given] if given is not None else [],
                                        out_shape, post_types)

        results = ns._backend.run(compute, in_arrays)
        names = ["ReductionKernel"] if results[0].size else []
        for rec in _strict_launches._recorders:
            rec.append(("ReductionKernel", names))
        ns._backend.launched(len(names))
        return out if out is not None else ns._wrap(results[0], self.name)


def _reads(text: str, name: str, placeholders: frozenset[str]) -> set[str]:
    """The identifiers a post map's statements read (their right-hand sides)."""
    names: set[str] = set()
    for stmt in filter(None, (s.strip() for s in text.split(";"))):
        parser = _Parser(stmt.split("=", 1)[-1], name, placeholders)
        parser.parse()
        names |= parser.names
    return names

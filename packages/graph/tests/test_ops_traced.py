"""Every case of core's op table runs traced and replayed, with the eager results; on a GPU
backend, captured as a CUDA Graph too (or not, for the reason the op gives)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph
from ember.core.testing import (
    backend_scope,
    backends_to_test,
    case_id,
    ember_args,
    flatten,
    gpu_skip_reason,
    iter_cases,
    make_case,
)

# Every case on the CPU; on GPU backends (the strict double in CI) the first case of each
# op in each of its dtypes that a GPU holds (not bfloat16: cupy has none).
CASES = [("cpu", *c) for c in iter_cases()] + [
    (b, s, c, dt) for b in backends_to_test() if b != "cpu"
    for s, c, dt in iter_cases() if c is s.cases[0] and dt.name != "bfloat16"]


def _split(args):
    """The tensors among ``args`` (walking lists and tuples), and a function that puts
    other tensors in their places."""
    leaves = []

    def walk(v):
        if isinstance(v, em.Tensor):
            leaves.append(v)
            return ("leaf", len(leaves) - 1)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, tuple):
            return tuple(walk(x) for x in v)
        return ("raw", v)

    shape = [walk(a) for a in args]

    def rebuild(ts, s=None):
        s = shape if s is None else s
        if isinstance(s, list):
            return [rebuild(ts, x) for x in s]
        if isinstance(s, tuple) and s and s[0] == "leaf" and len(s) == 2 and isinstance(s[1], int):
            return ts[s[1]]
        if isinstance(s, tuple) and s and s[0] == "raw" and len(s) == 2:
            return s[1]
        return tuple(rebuild(ts, x) for x in s)

    return leaves, rebuild


# Ops a GPU replay cannot capture as a CUDA Graph, and why (see graph/_cuda_graph.py).
_NO_OP = {"constant", "convert_to_tensor", "rank", "shape", "size",  # nothing to launch
          "signal.hann_window", "signal.hamming_window"}  # (constants, made on the host)
_HOST_CHECKS = {  # they check indices, values or a status on the host on every call (an
    # error, never a silently wrong result, for an index out of range, a NaN)
    "gather", "gather_nd", "take_along_axis", "nn_ops.embedding_lookup", "scatter_nd",
    "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_update", "index_add",
    "index_update",
    "debugging.check_indices", "debugging.check_range", "check_numerics",
    "random.shuffle"}  # (a gather of the permutation it draws)
_VALUE_SHAPES = {"boolean_mask", "where_indices"}
# em.math's segment reductions and bincount read the ids' range on the host (a guard: an
# id out of range is an error, a count sizes the result)
# stateless draws: the same numbers at every call, so never a graph that would advance them
_STATELESS = {"random.stateless_uniform", "random.stateless_normal",
              "random.stateless_truncated_normal", "random.stateless_categorical",
              "random.fold_in"}
_GUARDS = {f"math.{p}segment_{k}" for p in ("", "unsorted_") for k in ("sum", "mean", "max", "min")
           } | {"math.unsorted_segment_sqrt_n", "math.bincount", "math.confusion_matrix",
                "nn_ops.ctc_beam_search_decoder"}  # (the beam search runs on the host)
# Ops whose float forward calls cuBLAS or cuSOLVER, which cupy 14 refuses on a capturing
# stream (cupy issue 6290; the strict double refuses them too, testing/_strict_libraries):
# spec -> (the op that calls it, the library), for float dtypes: integer products are
# cupy's own kernels and capture. The factorizations would read their status back too (the devInfo check), but
# cupy refuses the library call before it: the order the H200 showed. Float matrix
# products (matmul, tensordot, the convolutions' GEMMs, the recurrent cells' gate products,
# a bias gradient's batch sum) go through nvmath-python's cuBLASLt and capture
# (ember.core._nvmath_products); einsum's contractions are cupy's own calls into cuBLAS.
_B, _S = "cuBLAS", "cuSOLVER"
_LIBRARY_CALLS = {
    "einsum": ("einsum", _B), "einsum.ellipsis": ("einsum", _B),
    "einsum.implicit": ("einsum", _B),
    # LU of small matrices: cuBLAS getrfBatched; the rest cuSOLVER
    "linalg.det": ("matrix_determinant", _B), "linalg.slogdet": ("log_matrix_determinant", _B),
    "linalg.slogdet.log_abs_determinant": ("log_matrix_determinant", _B),
    "linalg.inv": ("matrix_inverse", _S), "linalg.solve": ("matrix_solve", _S),
    "linalg.cholesky": ("cholesky", _S), "linalg.triangular_solve": ("matrix_solve", _S),
    "linalg.qr": ("qr", _S), "linalg.svd": ("svd", _S), "linalg.eigh": ("self_adjoint_eig", _S),
}


def _check_cuda_graph(spec, dtype, status):
    (line,) = set(status)
    if spec.name in _NO_OP:
        assert line == "call: not captured: it runs no op"
    elif spec.name in _HOST_CHECKS:
        assert line == ("call: not captured: the capture failed: RuntimeError: the current "
                        "stream is capturing, so D2H transfers are disallowed")
    elif spec.name in _VALUE_SHAPES:
        assert line == "call: not captured: an op's result shape depends on values"
    elif spec.name in _GUARDS:
        assert line == "call: not captured: it reads device values on the host (guards)"
    elif spec.name in _STATELESS:
        assert line.startswith("call: not captured: ") and "is a stateless draw" in line, line
    elif spec.ref is None:  # drawn on the GPU by the Philox kernel: captured
        assert line == "call: captured (launched 2 times)", (spec.name, line)
    elif spec.name in _LIBRARY_CALLS and np.dtype(dtype).kind in "fc" and not (
            spec.name == "bias_activation_grad" and dtype == np.float16):
        op, library = _LIBRARY_CALLS[spec.name]
        assert line == (f"call: not captured: {op} calls {library}, which cupy refuses "
                        "during stream capture"), (spec.name, line)
    else:  # replays 2 (the capture) and 3
        assert line == "call: captured (launched 2 times)", (spec.name, line)


def _host(out):
    return [o.numpy() for o in flatten(out)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("backend", "spec", "case", "dtype"), CASES,
                         ids=[f"{c[0]}-{case_id(*c[1:])}" for c in CASES])
def test_case_replays_like_eager(backend, spec, case, dtype):
    if backend == "gpu" and gpu_skip_reason():
        pytest.skip(gpu_skip_reason() or "no GPU")
    with backend_scope(backend):
        raw0, kwargs = make_case(spec, case, dtype, seed=0)
        raw1, _ = make_case(spec, case, dtype, seed=1)
        leaves0, rebuild = _split(ember_args(raw0))
        leaves1, _ = _split(ember_args(raw1))

        @graph.function
        def f(*ts):
            return spec.fn(*rebuild(list(ts)), **kwargs)

        traced = f(*leaves0)
        replayed = f(*leaves1)
        again = f(*leaves1)  # on a GPU: captured as a CUDA Graph, and launched
        back = f(*leaves0)  # a launch on the first arguments again
        eager = spec.fn(*rebuild(leaves1), **kwargs)
        status = f.cuda_graph_status()
    assert f.experimental_get_tracing_count() >= 1
    if backend != "cpu":
        _check_cuda_graph(spec, dtype, status)
    if spec.name in _STATELESS:  # the same numbers at every call, replays included
        for b, c, d in zip(_host(replayed), _host(again), _host(eager)):
            assert_array_equal(b, d)
            assert_array_equal(c, d)
        return
    if spec.ref is None:  # random: same shapes and dtypes, new numbers on every call
        for a, b, c in zip(_host(traced), _host(replayed), _host(again)):
            assert a.shape == b.shape == c.shape and a.dtype == b.dtype
            if a.size > 4 and a.dtype.kind == "f":
                assert not np.array_equal(b, c), f"{spec.name}: a replay repeated its draws"
        return
    for got, want in ((_host(replayed), _host(eager)), (_host(again), _host(eager)),
                      (_host(back), _host(traced))):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            assert_array_equal(g, w)


"""The op table: every public op's forward against numpy, on every backend."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember.core import nn_ops, random
from ember.core.testing import (
    OP_SPECS,
    case_id,
    check_case_forward,
    device_bits,
    iter_cases,
    make_case,
    recorded_op_names,
    run_case,
    run_torch,
    simulated_gpus,
)

CASES = list(iter_cases())


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize(("spec", "case", "dtype"), CASES,
                         ids=[case_id(*c) for c in CASES])
def test_forward_matches_numpy(spec, case, dtype, device):
    check_case_forward(spec, case, dtype, device)


# Public names that are not ops (nothing to compute, or not a function of tensors).
EXEMPT = {
    # types, registries, errors
    "REGISTRY", "DType", "Device", "DeviceError", "DTypeError", "IndexOutOfRangeError",
    "InvalidArgumentError", "LeakedTensorError", "OpDef", "Tensor", "Variable",
    # dtypes and dtype lookup
    "as_dtype", "bfloat16", "bool", "bool_", "complex64", "complex128", "float16", "float32",
    "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "promote_types", "result_type",  # the promotion table: tests/test_promotion.py
    # devices, submodules, ambient state
    "current_device", "device", "get_device", "list_devices", "num_gpus", "nn_ops", "random",
    "linalg", "debugging", "config", "math", "image", "dtypes", "signal",
    "recording", "name_scope", "executing_eagerly", "set_num_threads",
    "print",  # host output, not a function of tensors: tests/test_print.py
    "newaxis",  # None, for indexing
    "l2_normalize",  # tf.math's name for nn_ops.l2_normalize, the same function (its spec)
    "TensorArray",  # a list of tensors over stack/concat/unstack: tests/test_tensor_array.py
    "TensorShape",  # what Tensor.shape returns: tests/test_tensor_shape.py
    "init_scope",  # a recording scope: graph's tests/test_py_function_init_scope.py
    "py_function",  # calls Python: graph's tests/test_py_function_init_scope.py
    "numpy_function",  # calls Python: integration_tests/test_graph_py_function_taped.py
    # TF's initializer objects (draws and fills): tests/test_initializers.py
    "constant_initializer", "ones_initializer", "random_normal_initializer",
    "random_uniform_initializer", "zeros_initializer",
    # random: state, not samplers
    "Generator", "get_global_generator", "get_global_seed", "set_seed", "STATE_FORMAT",
    "checked_state", "new_seed",
    "generator_scope",  # which generator unseeded draws use: tests/test_random.py
    "gamma",  # random.gamma: a rejection sampler over normal and uniform draws: tests/test_random.py
    # functional control flow: Python functions that call other functions (fn, cond,
    # body, branches) over ops, not ops: tests/test_control_flow.py
    "case", "cond", "foldl", "foldr", "map_fn", "scan", "switch_case", "vectorized_map",
    "while_loop",
}
# Registered ops that the table reaches only through other paths.
REGISTRY_EXEMPT = {
    "copy_to_device",  # Tensor.cpu()/gpu()/to(); covered by test_devices and test_recording
    "py_function",  # calls Python: graph's tests/test_py_function_init_scope.py
}


def _public_ops():
    for mod, prefix in ((em, ""), (nn_ops, "nn_ops."), (random, "random."),
                        (em.linalg, "linalg."), (em.debugging, "debugging."),
                        (em.signal, "signal.")):
        for name in mod.__all__:
            if name not in EXEMPT:
                yield prefix + name, getattr(mod, name)


def test_table_covers_public_ops():
    def raw(f):  # a public function's wrapper (hand-over, _public_calls) is the function
        return getattr(f, "__wrapped__", f)

    fns = {id(raw(s.fn)) for s in OP_SPECS}
    names = {s.name for s in OP_SPECS}
    missing = [n for n, f in _public_ops() if id(raw(f)) not in fns and n not in names
               and n.split(".")[-1] not in names]
    assert missing == [], f"public ops without an OpSpec: {missing}"


def test_exemptions_are_real_names():
    public = set(em.__all__) | set(nn_ops.__all__) | set(random.__all__) | {
        "linalg." + n for n in em.linalg.__all__}
    assert EXEMPT - public == set()
    assert REGISTRY_EXEMPT - set(em.REGISTRY) == set()


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_table_exercises_every_registered_op():
    with recorded_op_names() as seen:
        for spec, case, dtype in iter_cases():
            if dtype == np.float32 or dtype == spec.dtypes[0]:
                run_case(spec, case, dtype)
    core_ops = {n for n, op in em.REGISTRY.items()  # not those of other packages (tape)
                if getattr(op.forward, "__module__", "").startswith("ember.core.")}
    missing = sorted(core_ops - set(seen) - REGISTRY_EXEMPT)
    assert missing == [], f"registered ops no spec runs: {missing}"


@pytest.mark.parametrize("spec", [s for s in OP_SPECS if s.fn in
                                  [getattr(em, n, None) for n in em.REGISTRY]],
                         ids=lambda s: s.name)
def test_differentiable_flag_matches_registry(spec):
    assert spec.differentiable == em.REGISTRY[spec.name.split(".")[0]].differentiable


def test_specs_are_well_formed():
    for s in OP_SPECS:
        assert s.cases and s.dtypes, s.name
        assert (s.ref is None) == (s.stat is not None), s.name
        if s.differentiable:
            n_args = min(len(make_case(s, c, s.dtypes[0])[0]) for c in s.cases)
            assert all(i < n_args for i in s.grad_args), s.name
        else:
            assert s.grad_args == (), s.name
        assert callable(s.fn) and (s.ref is None or inspect.isroutine(s.ref)
                                   or callable(s.ref)), s.name


FLOOR_CASES = [c for c in CASES if c[0].name in ("floordiv", "floormod")]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's own, for x // 0 and x % 0
@pytest.mark.parametrize(("spec", "case", "dtype"), FLOOR_CASES,
                         ids=[case_id(*c) for c in FLOOR_CASES])
def test_floor_division_gives_numpys_bits(spec, case, dtype, device):
    """floordiv and floormod are defined by ember, the same on every device: the table's
    reference bits (floormod numpy's, floordiv TensorFlow's floor(x / y)), signs of zero
    included (a GPU's own kernels differ at exact multiples), NaN where the reference has
    NaN (on a GPU, the GPU's NaN: ``device_bits``)."""
    out, np_args, kwargs = run_case(spec, case, dtype, device)
    want = np.asarray(spec.ref(*np_args, **kwargs))
    got = out.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert device_bits(got, device) == device_bits(want, device), (np_args, got, want)


def test_results_do_not_alias_inputs():
    """An op's result never shares memory with a numpy array the user passed in."""
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    t = em.identity(a)
    a[0, 0] = 100.0
    assert float(t[0, 0]) == 0.0


# --- PyTorch, where it has the same op ----------------------------------------------------
TORCH_CASES = [(s, c, dt) for s, c, dt in CASES if s.torch is not None
               and dt in (np.float64, np.int32, np.bool_)]


@pytest.mark.parametrize(("spec", "case", "dtype"), TORCH_CASES,
                         ids=[case_id(*c) for c in TORCH_CASES])
def test_forward_matches_torch(spec, case, dtype):
    pytest.importorskip("torch", reason="PyTorch not installed: comparisons against it skip")
    want = run_torch(spec, case, dtype)
    if want is None:
        pytest.skip(f"{spec.name}: PyTorch cannot express case {case.name}")
    out, _, _ = run_case(spec, case, dtype)
    got = [o.numpy() for o in (out if isinstance(out, (tuple, list)) else [out])]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        if g.dtype.kind == "f":
            assert_allclose(g, w.astype(g.dtype), rtol=1e-6, atol=1e-7)
        else:
            assert_array_equal(g, w.astype(g.dtype))


# --- placement: every op keeps its result on the device of its inputs ------------------------
FIRST_CASES = [(s, s.cases[0], np.dtype(s.dtypes[0])) for s in OP_SPECS]


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize(("spec", "case", "dtype"), FIRST_CASES,
                         ids=[case_id(*c) for c in FIRST_CASES])
def test_forward_on_simulated_gpu(spec, case, dtype):
    with simulated_gpus(2):
        check_case_forward(spec, case, dtype, "/gpu:1")

"""Test helpers shipped with ember-core: the op-spec table and device simulation.

Other ember packages (the tape's gradient checks, nn's layer tests) import these so the
whole framework is tested over one table of ops and one set of backends.
"""

from ._spec import BACKEND_TOL, DEFAULT_TOL, Case, OpSpec, Raw, backend_tolerance, device_bits, sample
from ._strict import CUPY_LACKS, StrictArray, TransferCounters
from ._strict_nvmath import without_nvmath
from .devices import (
    TEST_BACKENDS,
    available_backends,
    backend_for_test,
    backend_scope,
    backends_to_test,
    gpu_skip_reason,
    install_present_gpu,
    present_gpu,
    real_gpu_available,
    simulated_gpus,
)
from .op_specs import (
    OP_SPECS,
    case_id,
    check_case_forward,
    check_spec_forward,
    ember_args,
    flatten,
    get_spec,
    iter_cases,
    make_case,
    numpy_args,
    run_case,
    run_torch,
    torch_args,
)
from .recorders import OpLog, OpNames, recorded_op_names

__all__ = [
    "CUPY_LACKS", "TEST_BACKENDS", "OpLog", "OpNames", "StrictArray", "TransferCounters",
    "backend_for_test", "recorded_op_names",
    "backend_scope", "backends_to_test",
    "BACKEND_TOL", "backend_tolerance", "device_bits",
    "DEFAULT_TOL", "OP_SPECS", "Case", "OpSpec", "Raw", "available_backends", "case_id",
    "check_case_forward", "check_spec_forward", "ember_args", "flatten", "get_spec",
    "gpu_skip_reason", "install_present_gpu", "iter_cases", "make_case", "numpy_args",
    "present_gpu", "real_gpu_available",
    "run_case", "run_torch", "sample", "simulated_gpus", "torch_args", "without_nvmath",
]

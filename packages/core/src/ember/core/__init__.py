"""ember.core: tensors, dtypes, devices, ops, variables and random numbers.

Always eager: every op runs immediately and returns a concrete Tensor.

Examples:
    >>> import ember.core as em
    >>> x = em.constant([[2.]])
    >>> em.matmul(x, x)
    ember.Tensor([[4.]], shape=(1, 1), dtype=float32)
"""

import contextlib
import sys as _sys

from . import _public_calls, debugging, dtypes, image, linalg, math, nn_ops, random, recording
from . import extend as extend  # the public seam for packages that extend core
from . import signal as signal  # tf.signal: Fourier transforms, frames, windows, stft
from ._config import config
from ._device import Device, current_device, device, get_device, list_devices, num_gpus
from ._dtypes import (
    DType,
    as_dtype,
    bfloat16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._errors import DeviceError, DTypeError, InvalidArgumentError, LeakedTensorError
from ._initializers import (
    constant_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    zeros_initializer,
)
from ._ops.array import (
    argsort,
    boolean_mask,
    broadcast_to,
    concat,
    expand_dims,
    gather,
    gather_nd,
    getitem,
    index_add,
    index_update,
    meshgrid,
    one_hot,
    pad,
    rank,
    repeat,
    reshape,
    reverse,
    roll,
    shape,
    size,
    slice,
    sort,
    split,
    squeeze,
    stack,
    take_along_axis,
    tensor_scatter_nd_add,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
    tile,
    top_k,
    transpose,
    unstack,
)
from ._ops.conv import extract_patches, patches_to_image
from ._ops.creation import (
    constant,
    convert_to_tensor,
    eye,
    fill,
    linspace,
    ones,
    ones_like,
    range,
    scatter_nd,
    zeros,
    zeros_like,
)
from ._ops.define_nn import relu
from ._ops.host import numpy_function, py_function
from ._ops.linalg import (
    clip_by_global_norm,
    clip_by_norm,
    einsum,
    global_norm,
    matmul,
    norm,
    tensordot,
)
from ._ops.math import (
    abs,
    acos,
    acosh,
    add,
    add_n,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    cast,
    ceil,
    check_numerics,
    clip_by_value,
    cos,
    cosh,
    divide,
    equal,
    erf,
    exp,
    expm1,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    identity,
    invert,
    isfinite,
    isinf,
    isnan,
    left_shift,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,
    reciprocal,
    right_shift,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    softplus,
    sqrt,
    square,
    squared_difference,
    stop_gradient,
    subtract,
    tan,
    tanh,
    truediv,
    where,
)
from ._ops.math_complex import complex
from ._ops.reduce import (
    argmax,
    argmin,
    count_nonzero,
    cumsum,
    logsumexp,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_std,
    reduce_sum,
    reduce_variance,
    std,
    variance,
)
from ._print import print
from ._promote import promote_types, result_type
from ._registry import REGISTRY, IndexOutOfRangeError, OpDef
from ._shape import TensorShape
from ._tensor import Tensor
from ._tensor_array import TensorArray
from ._threads import set_num_threads
from ._variable import Variable
from ._version import __version__ as __version__  # tf.__version__, keras.__version__
from .control_flow import (
    case,
    cond,
    foldl,
    foldr,
    map_fn,
    scan,
    switch_case,
    vectorized_map,
    while_loop,
)
from .nn_ops import l2_normalize  # tf.math.l2_normalize (also tf.nn's: nn_ops)

bool = bool_
newaxis = None  # TensorFlow's tf.newaxis (numpy's): indexing with it adds an axis


def init_scope() -> contextlib.AbstractContextManager[None]:
    """TensorFlow's ``tf.init_scope``: a block that runs as if outside ``graph.function``
    and every gradient tape.

    Inside a traced function, the block runs once, while the function is traced, and
    replays skip it: what it computes is a constant of the trace, and variables it makes
    or assigns are made or assigned once (Keras's lazy variable creation). It may not use
    a value the function computed (that raises ``InvalidArgumentError``: a replay could
    not give it one). Tapes do not record it. Outside a traced function it only pauses
    tapes.

    Examples:
        >>> import ember.core as em
        >>> with em.init_scope():
        ...     v = em.Variable(1.0)
    """
    return recording.lifted()


def executing_eagerly() -> bool_.type:
    """Always True: ember has no graph mode."""
    return True


class name_scope:
    """Accepted for TensorFlow compatibility; names do not matter in eager mode.

    ``with em.name_scope("block") as scope:`` gives the scope's name (``default_name``
    when ``name`` is None, as TF 1.x); ``values`` (TF 1.x graph inputs) is ignored, as
    TensorFlow ignores it in eager mode.
    """

    def __init__(self, name: str | None, default_name: str | None = None,
                 values: object = None) -> None:
        if name is None and default_name is None:
            raise ValueError("name_scope: give name or default_name")
        self.name: str = name if name is not None else str(default_name)

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, *exc: object) -> None:
        return None


__all__ = [
    "REGISTRY", "DType", "Device", "DeviceError", "DTypeError", "IndexOutOfRangeError",
    "InvalidArgumentError", "LeakedTensorError", "OpDef", "Tensor", "TensorArray", "TensorShape",
    "Variable", "print",
    "promote_types", "numpy_function", "py_function", "constant_initializer",
    "ones_initializer", "random_normal_initializer", "random_uniform_initializer",
    "zeros_initializer", "result_type", "check_numerics", "debugging",
    "abs", "acos", "acosh", "add", "argmax", "argmin", "argsort", "as_dtype", "asin", "asinh",
    "atan", "atan2", "atanh", "bfloat16", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bool", "bool_", "boolean_mask", "broadcast_to", "cast", "ceil",
    "clip_by_global_norm", "clip_by_norm", "clip_by_value", "complex", "complex64", "complex128",
    "concat", "signal",
    "config", "dtypes",
    "constant", "convert_to_tensor", "cos", "cosh", "count_nonzero", "cumsum", "current_device",
    "device", "divide", "einsum", "equal", "erf", "executing_eagerly", "exp", "expand_dims",
    "expm1", "extract_patches", "eye", "fill", "float16", "float32", "float64", "floor",
    "floordiv", "floormod", "gather", "gather_nd", "get_device", "getitem", "global_norm",
    "greater", "greater_equal", "identity", "image", "index_add", "index_update", "init_scope", "int8",
    "int16",
    "int32", "int64", "invert", "isfinite", "isinf", "isnan", "left_shift", "less", "less_equal",
    "l2_normalize", "linalg", "linspace", "list_devices", "log", "log1p", "logical_and", "logical_not",
    "logical_or", "logical_xor", "logsumexp", "math", "matmul", "maximum", "meshgrid", "minimum", "mod",
    "multiply",
    "name_scope", "negative", "newaxis", "nn_ops", "norm", "not_equal", "num_gpus", "one_hot", "ones",
    "ones_like", "pad", "patches_to_image", "pow", "random", "range", "rank", "reciprocal",
    "recording", "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean",
    "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance", "relu",
    "repeat", "reshape", "reverse", "right_shift", "roll", "round", "rsqrt", "scatter_nd", "set_num_threads",
    "shape", "sigmoid", "sign", "sin", "sinh", "size", "slice", "softplus", "sort", "split", "sqrt",
    "add_n", "square", "squared_difference", "squeeze", "stack", "std", "stop_gradient", "subtract",
    "take_along_axis", "tan", "tanh", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "tensordot", "tile", "top_k", "transpose", "truediv", "uint8", "uint16", "uint32", "uint64",
    "unstack", "variance", "where", "zeros", "zeros_like",
    # functional control flow (tf.map_fn, tf.while_loop, tf.cond, ...): control_flow
    "case", "cond", "foldl", "foldr", "map_fn", "scan", "switch_case", "vectorized_map",
    "while_loop",
]

# every public function hands a call on a foreign operand (a functional model's symbolic
# tensor) to its type: see _public_calls
_public_calls.wrap_public(_sys.modules[__name__], "", __all__)
_public_calls.wrap_public(nn_ops, "nn_ops.", [*nn_ops.__all__, "l2_normalize"])
_public_calls.wrap_public(linalg, "linalg.", linalg.__all__)
_public_calls.wrap_public(debugging, "debugging.", debugging.__all__)
_public_calls.wrap_public(math, "math.", math.__all__)
_public_calls.wrap_public(image, "image.", image.__all__)
_public_calls.wrap_public(signal, "signal.", signal.__all__)

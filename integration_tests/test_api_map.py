"""Every public name in ../shared/api-map.md resolves (the contract users rely on)."""

from __future__ import annotations

import importlib

import pytest

NAMES = {
    "ember.core": [
        "executing_eagerly", "constant", "convert_to_tensor", "Tensor", "Variable", "device",
        "num_gpus", "list_devices", "stop_gradient", "name_scope",
        "add", "subtract", "multiply", "divide", "matmul", "square", "sqrt", "exp", "log",
        "log1p", "abs", "negative", "maximum", "minimum", "pow", "tanh", "sigmoid", "equal",
        "less", "greater", "cast", "reshape", "transpose", "concat", "stack", "expand_dims",
        "squeeze", "identity", "zeros", "ones", "zeros_like", "ones_like", "fill", "range",
        "argmax", "argmin", "one_hot", "where", "clip_by_value", "clip_by_norm",
        "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
        "reduce_logsumexp", "float16", "bfloat16", "float32", "float64", "int8", "int16",
        "int32", "int64", "uint8", "bool",
    ],
    "ember.core.random": ["normal", "uniform", "set_seed"],
    "ember.core.nn_ops": [
        "relu", "softmax", "log_softmax", "conv2d", "max_pool",
        "softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits",
    ],
    "ember.tape": [
        "GradientTape", "gradients_function", "value_and_gradients_function",
        "implicit_gradients", "implicit_value_and_gradients", "custom_gradient",
    ],
    "ember.nn": ["Model", "Sequential", "get_or_create_global_step"],
    "ember.nn.layers": ["Layer", "Dense", "Conv2D", "MaxPool2D", "Reshape", "LSTM"],
    "ember.nn.optimizers": ["SGD", "Adam"],
    "ember.nn.losses": ["sparse_softmax_cross_entropy", "softmax_cross_entropy",
                        "mean_squared_error"],
    "ember.nn.metrics": ["Mean", "Accuracy"],
    "ember.checkpoint": ["Checkpoint", "latest_checkpoint"],
    "ember.summary": ["create_file_writer", "record_summaries_every_n_global_steps",
                      "always_record_summaries", "never_record_summaries", "scalar",
                      "histogram", "image", "text"],
    "ember.data": ["Dataset"],
    "ember.data.datasets": ["mnist"],
    "ember.distribute": ["init", "rank", "size", "local_rank", "is_chief", "allreduce",
                         "allgather", "broadcast", "broadcast_variables",
                         "DistributedOptimizer", "DistributedGradientTape"],
    "ember.core.testing": ["simulated_gpus"],
    "ember.graph": ["function", "run_functions_eagerly"],
}
METHODS = {
    ("ember.core", "Tensor"): ["numpy", "__array__", "gpu", "cpu", "device"],
    ("ember.core", "Variable"): ["assign", "assign_add", "assign_sub", "numpy", "read_value"],
    ("ember.tape", "GradientTape"): ["watch", "gradient", "stop_recording", "jacobian",
                                     "batch_jacobian"],
    ("ember.nn.layers", "Layer"): ["build", "call", "add_weight", "add_variable"],
    ("ember.nn.optimizers", "SGD"): ["apply_gradients", "minimize"],
    ("ember.checkpoint", "Checkpoint"): ["save", "restore"],
    ("ember.data", "Dataset"): ["from_tensor_slices", "shuffle", "repeat", "batch", "map",
                                "prefetch", "shard"],
}


@pytest.mark.parametrize("module,name", [(m, n) for m, ns in NAMES.items() for n in ns])
def test_name_resolves(module, name):
    assert hasattr(importlib.import_module(module), name), f"{module}.{name} is missing"


@pytest.mark.parametrize("owner,method", [(o, m) for o, ms in METHODS.items() for m in ms])
def test_method_resolves(owner, method):
    cls = getattr(importlib.import_module(owner[0]), owner[1])
    assert hasattr(cls, method), f"{owner[0]}.{owner[1]}.{method} is missing"


def test_writer_default_methods():
    import tempfile

    from ember import summary

    w = summary.create_file_writer(tempfile.mkdtemp())
    assert callable(w.as_default) and callable(w.set_as_default)
    w.close()

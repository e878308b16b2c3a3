"""ember.nn.mixed_precision: Keras 3's ``keras.mixed_precision`` names.

Mixed precision computes in float16 or bfloat16 while the variables stay float32:
``set_global_policy("mixed_float16")`` before building a model makes its layers cast their
inputs and, inside ``call``, their variables to float16; ``fit`` then scales the loss with
a ``LossScaleOptimizer`` (``compile`` wraps the optimizer, as Keras 3). Keep the model's
last layer in float32 (``dtype="float32"``): a float16 softmax and loss lose precision.

Where each runs: float16 on GPUs (and on the CPU, slowly: numpy has no fast float16
kernels); bfloat16 on the CPU only, through ml_dtypes (cupy has no bfloat16, so a layer of
a ``mixed_bfloat16`` policy refuses GPU inputs by name). On the CPU both are slower than
float32; see the guide page "Mixed precision" for measurements.

Examples:
    >>> from ember import nn
    >>> nn.mixed_precision.set_global_policy("mixed_float16")
    >>> layer = nn.layers.Dense(4)
    >>> layer.compute_dtype, layer.variable_dtype
    ('float16', 'float32')
    >>> nn.mixed_precision.set_global_policy("float32")
"""

from .dtype_policies import DTypePolicy
from .dtype_policies import dtype_policy as dtype_policy
from .dtype_policies import dtype_policy as global_policy
from .dtype_policies import set_dtype_policy as set_dtype_policy
from .dtype_policies import set_dtype_policy as set_global_policy
from .optimizers.loss_scale import LossScaleOptimizer

Policy = DTypePolicy

__all__ = ["DTypePolicy", "LossScaleOptimizer", "Policy", "dtype_policy", "global_policy",
           "set_dtype_policy", "set_global_policy"]

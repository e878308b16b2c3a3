"""The gradient of core's CTC loss (``_ops/ctc``): its op computes it with the loss."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import MISSING_AS_NONE, Gradients, OpContext
from . import register_gradient as reg


@reg("ctc_loss", complex="real")  # real logits only
def _ctc_loss(op: OpContext, dy: Any) -> Gradients:
    """d(logits) = dloss * the op's own gradient output (softmax - occupancy), as
    TensorFlow's CTCLoss; that output has no gradient, so a second order raises."""
    dloss, dgrad = dy
    if dgrad is not None:
        raise LookupError("ctc_loss has no second-order gradient: its gradient is computed "
                          "with the loss (as TensorFlow's CTCLoss) and is not differentiable")
    if dloss is None:
        return None, None, None, None
    return em.multiply(op.outputs[1], em.reshape(dloss, (1, -1, 1))), None, None, None


MISSING_AS_NONE.add("ctc_loss")

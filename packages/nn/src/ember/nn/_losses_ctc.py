"""Keras 3's CTC loss: ``nn.losses.CTC`` and ``nn.losses.ctc``, over ``nn.ops.ctc_loss``."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .keras_losses import Loss
from .ops import _ctc


def ctc(y_true: Any, y_pred: Any) -> Any:
    """Per-sequence CTC loss, as ``keras.losses.ctc``: ``y_true`` (batch, max_length)
    integer labels, padded with 0 after each sequence's labels (class 0 is the blank: each
    row's label length is its count of nonzero entries, as Keras 3 counts it; a 0 before a
    row's last label is an error); ``y_pred`` (batch, frames, classes) logits, all frames
    used.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> round(float(nn.losses.ctc([[1]], em.zeros((1, 2, 3)))[0]), 4)
        1.0986
    """
    y, p = em.convert_to_tensor(y_true), em.convert_to_tensor(y_pred)
    if y.ndim != 2:
        raise ValueError(f"ctc: y_true must be (batch_size, max_length) integer labels, got "
                         f"shape {tuple(y.shape)}")
    if p.ndim != 3:
        raise ValueError(f"ctc: y_pred must be (batch_size, max_length, num_classes) logits, "
                         f"got shape {tuple(p.shape)}")
    batch = y.shape[0]
    label_length = em.reduce_sum(em.cast(em.not_equal(y, 0), em.int32), axis=-1)
    with em.device(p.device):
        logit_length = em.fill([batch], p.shape[1])
    return _ctc.ctc_loss(y, p, label_length, logit_length, mask_index=0)


class CTC(Loss):
    """The CTC loss of ``ctc``, reduced over the batch (Keras's ``keras.losses.CTC``)."""

    def __init__(self, reduction: str | None = "sum_over_batch_size", name: str = "ctc",
                 dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return ctc(y_true, y_pred)

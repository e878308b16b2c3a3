"""``keras.ops.ctc_loss`` and ``keras.ops.ctc_decode`` over ember.core's CTC functions
(``em.nn_ops.ctc_loss``, whose op computes the loss and its gradient together).

As Keras 3: logits are batch-major (batch, frames, classes) and unnormalized, the blank
(``mask_index``) is class 0 by default, and decoded labels come back dense, (top_paths,
batch, frames) int32, padded with -1.
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from ._core import reject, tensor

_STRATEGIES = ("greedy", "beam_search")


def _float_logits(x: Any) -> em.Tensor:
    """Keras's ``result_type(dtype, "float32")``: integer and 16-bit logits compute in
    float32, float64 stays float64."""
    t = tensor(x)
    return t if t.dtype in (em.float32, em.float64) else em.cast(t, em.float32)


def ctc_loss(target: Any, output: Any, target_length: Any, output_length: Any,
             mask_index: int = 0) -> em.Tensor:
    """Per-sequence CTC loss (batch,) of integer ``target`` (batch, max_length) against
    logits ``output`` (batch, frames, classes), with each sequence's label and frame
    counts; ``mask_index``: the blank class."""
    return em.nn_ops.ctc_loss(em.cast(tensor(target), em.int32), _float_logits(output),
                              tensor(target_length), tensor(output_length),
                              logits_time_major=False, blank_index=mask_index)


def ctc_decode(inputs: Any, sequence_lengths: Any, strategy: str = "greedy",
               beam_width: int = 100, top_paths: int = 1, merge_repeated: bool = True,
               mask_index: int = 0) -> tuple[em.Tensor, em.Tensor]:
    """Decode logits ``inputs`` (batch, frames, classes): ``(decoded, scores)``,
    ``decoded`` int32 (top_paths, batch, frames) padded with -1.

    ``"greedy"``: each frame's best class, repeats merged (``merge_repeated``), blanks
    dropped; ``scores`` (batch, 1), minus the sum of each frame's largest logit.
    ``"beam_search"``: prefix beam search of ``beam_width``, on the host; ``scores``
    (batch, top_paths), each labelling's log-probability. ``merge_repeated`` applies to
    greedy decoding only (as in Keras, whose beam search always merges).
    """
    if strategy not in _STRATEGIES:
        raise reject("ctc_decode", "strategy", strategy, f"use one of {_STRATEGIES}")
    x = _float_logits(inputs)
    n = tensor(sequence_lengths)
    if strategy == "greedy":
        if top_paths != 1:
            raise reject("ctc_decode", "top_paths", top_paths,
                         "greedy decoding finds one path")
        (decoded,), scores = em.nn_ops.ctc_greedy_decoder(
            em.transpose(x, (1, 0, 2)), n, merge_repeated=merge_repeated,
            blank_index=mask_index)
        return em.cast(em.expand_dims(decoded, 0), em.int32), scores
    paths, scores = em.nn_ops.ctc_beam_search_decoder(
        em.transpose(x, (1, 0, 2)), n, beam_width, top_paths, blank_index=mask_index)
    return em.cast(em.stack(paths), em.int32), scores

"""TensorFlow's CTC functions (``tf.nn.ctc_loss``, ``ctc_greedy_decoder``,
``ctc_beam_search_decoder``), in ``em.nn_ops``; the op and the decoders are in
``_ops/ctc.py``.

ember has no sparse tensors: labels are dense (batch, max_label_length) with a length per
sequence, as ``tf.nn.ctc_loss`` takes them, and the decoders return dense labels padded
with -1 where TensorFlow returns a ``SparseTensor``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._device import device
from ._dtypes import is_floating
from ._errors import InvalidArgumentError
from ._ops import _args
from ._ops import ctc as _ctc
from ._ops.array import transpose
from ._ops.creation import constant
from ._tensor import Tensor


def _ints(fn: str, what: str, t: Tensor, shape: tuple[int, ...]) -> None:
    if t.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{fn}: {what} must be integers, got {t.dtype}")
    if t.shape != shape:
        raise InvalidArgumentError(f"{fn}: {what} must have shape {shape}, got {t.shape}")


def _logits(fn: str, logits: Any) -> Tensor:
    x = _args.tensor(logits)
    if x.ndim != 3:
        raise InvalidArgumentError(f"{fn}: logits must be 3-D (frames, batch, classes) or "
                                   f"(batch, frames, classes), got shape {x.shape}")
    if not is_floating(x.dtype):
        raise InvalidArgumentError(f"{fn}: logits must be floating, got {x.dtype}")
    return x


def _blank(fn: str, blank_index: Any, classes: int, default: int) -> int:
    if blank_index is None:
        return default
    b = int(blank_index)
    if not -classes <= b < classes:
        raise InvalidArgumentError(f"{fn}: blank_index {b} is out of range for {classes} "
                                   "classes")
    return b % classes


def ctc_loss(labels: Any, logits: Any, label_length: Any, logit_length: Any,
             logits_time_major: bool = True, unique: Any = None, blank_index: Any = None,
             name: str | None = None) -> Any:
    """The connectionist temporal classification loss: ``-log p(labels | logits)`` per
    sequence, summed over every alignment of the labels to the frames (TensorFlow 2's
    ``tf.nn.ctc_loss`` with dense labels).

    Args:
        labels: integers (batch, max_label_length); entries past ``label_length`` are
            ignored.
        logits: unnormalized log-probabilities, (frames, batch, classes), or (batch,
            frames, classes) with ``logits_time_major=False``; float16 and bfloat16
            compute in float32.
        label_length: integers (batch,): each sequence's number of labels.
        logit_length: integers (batch,): each sequence's number of frames.
        logits_time_major: the logits' layout.
        unique: TensorFlow's precomputed unique labels, an optimization ember does not
            need: only None is accepted.
        blank_index: the blank's class, 0 by default (as TensorFlow 2); negative counts
            from the end (-1: the last class, TensorFlow 1's blank).
        name: unused (TensorFlow compatibility).

    Returns:
        The loss, (batch,), in the logits' dtype (float32 for 16-bit logits). A sequence
        no alignment can produce has loss ``inf`` and gradient zeros. Its gradient with
        respect to the logits is exact; it has no second-order gradient (as in
        TensorFlow, a second derivative raises).

    Raises:
        InvalidArgumentError: shapes or dtypes that do not fit, lengths out of range, or
            a label within its length that is out of range or the blank. On a GPU the
            values are checked there and the error raised at the next read (as
            ``sparse_softmax_cross_entropy_with_logits``).

    Examples:
        >>> import ember.core as em
        >>> logits = em.zeros((2, 1, 3))        # 2 frames, 1 sequence, 3 classes
        >>> loss = em.nn_ops.ctc_loss([[1]], logits, [1], [2])
        >>> round(float(loss[0]), 4)            # 3 alignments of 9: -log(3/9)
        1.0986
    """
    fn = "ctc_loss"
    if unique is not None:
        raise InvalidArgumentError(f"{fn}: unique= is not supported (it is an optimization "
                                   "of TensorFlow's; pass None)")
    x = _logits(fn, logits)
    if not logits_time_major:
        x = transpose(x, (1, 0, 2))
    frames, batch, classes = x.shape
    y = _args.tensor(labels)
    if y.ndim != 2 or y.shape[0] != batch:
        raise InvalidArgumentError(f"{fn}: labels must be (batch, max_label_length) with "
                                   f"batch {batch} (the logits'), got shape {y.shape}")
    _ints(fn, "labels", y, y.shape)
    ll, xl = _args.tensor(label_length), _args.tensor(logit_length)
    _ints(fn, "label_length", ll, (batch,))
    _ints(fn, "logit_length", xl, (batch,))
    blank = _blank(fn, blank_index, classes, 0)
    return _ctc.ctc_loss_op(x, y, ll, xl, blank)[0]


def _decoder_args(fn: str, inputs: Any, sequence_length: Any) -> tuple[Tensor, Tensor]:
    x = _logits(fn, inputs)
    n = _args.tensor(sequence_length)
    _ints(fn, "sequence_length", n, (x.shape[1],))
    return transpose(x, (1, 0, 2)), n


def ctc_greedy_decoder(inputs: Any, sequence_length: Any, merge_repeated: bool = True,
                       blank_index: Any = None) -> tuple[list[Any], Any]:
    """Best-path decoding (``tf.nn.ctc_greedy_decoder``): each frame's most probable
    class, repeats merged (with ``merge_repeated``), blanks dropped.

    Args:
        inputs: logits (frames, batch, classes).
        sequence_length: integers (batch,).
        merge_repeated: merge a class repeated in consecutive frames into one label.
        blank_index: the blank's class; the last class by default (as TensorFlow's
            decoder, unlike its loss).

    Returns:
        ``([decoded], neg_sum_logits)``: ``decoded`` int64 (batch, frames), each row's
        labels then -1 (TensorFlow returns a ``SparseTensor``, which ember does not
        have); ``neg_sum_logits`` (batch, 1), minus the sum of each frame's largest logit.
    """
    fn = "ctc_greedy_decoder"
    x, n = _decoder_args(fn, inputs, sequence_length)
    blank = _blank(fn, blank_index, x.shape[2], x.shape[2] - 1)
    decoded, score = _ctc.ctc_greedy_op(x, n, blank, merge_repeated)
    return [decoded], score


def ctc_beam_search_decoder(inputs: Any, sequence_length: Any, beam_width: int = 100,
                            top_paths: int = 1, blank_index: Any = None
                            ) -> tuple[list[Any], Any]:
    """Prefix beam search (``tf.nn.ctc_beam_search_decoder``): the ``top_paths`` most
    probable labellings found, each scored by the probability of all its alignments.
    The blank is the last class, as TensorFlow's, unless ``blank_index`` (ember's
    addition, which Keras's ``ctc_decode`` uses) names another. It runs on the host (a
    GPU's logits are copied there).

    Returns:
        ``(decoded, log_probability)``: ``decoded`` a list of ``top_paths`` int64
        tensors (batch, frames), labels then -1 (TensorFlow returns ``SparseTensor``\\ s);
        ``log_probability`` (batch, top_paths).
    """
    fn = "ctc_beam_search_decoder"
    x, n = _decoder_args(fn, inputs, sequence_length)
    blank = _blank(fn, blank_index, x.shape[2], x.shape[2] - 1)
    return beam_search(fn, x, n, blank, beam_width, top_paths)


def beam_search(fn: str, x: Tensor, n: Tensor, blank: int, beam_width: int,
                top_paths: int) -> tuple[list[Any], Any]:
    """The decoder behind ``ctc_beam_search_decoder`` and Keras's ``ctc_decode``, for
    batch-major logits ``x``: (list of top_paths (batch, frames) int64, (batch,
    top_paths) log-probabilities), on ``x``'s device."""
    if isinstance(beam_width, bool) or int(beam_width) < 1:
        raise InvalidArgumentError(f"{fn}: beam_width must be a positive int, got "
                                   f"{beam_width!r}")
    if isinstance(top_paths, bool) or not 1 <= int(top_paths) <= int(beam_width):
        raise InvalidArgumentError(f"{fn}: top_paths must lie in [1, beam_width], got "
                                   f"{top_paths!r}")
    a = x.numpy().astype(np.float64)
    lengths = n.numpy()
    batch, frames, _ = a.shape
    if ((lengths < 0) | (lengths > frames)).any():
        raise InvalidArgumentError(f"{fn}: sequence_length must lie in [0, {frames}], got "
                                   f"{lengths.tolist()}")
    shifted = a - a.max(-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    out = np.full((int(top_paths), batch, frames), -1, dtype=np.int64)
    scores = np.full((batch, int(top_paths)), -np.inf)
    for b in range(batch):
        found = _ctc.beam_search_host(logp[b], int(lengths[b]), blank, int(beam_width),
                                      int(top_paths))
        for k, (labels, score) in enumerate(found):
            out[k, b, :len(labels)] = labels
            scores[b, k] = score
    with device(x.device):
        return ([constant(p) for p in out],
                constant(scores.astype(x.dtype if x.dtype.itemsize >= 4 else np.float32)))

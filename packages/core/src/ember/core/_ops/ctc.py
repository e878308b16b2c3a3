"""Connectionist temporal classification: the loss as one op, and greedy and beam decoding.

``ctc_loss`` runs the forward-backward recursions of Graves et al. (2006) in log space over
time (one pass of a few array operations per frame, vectorized over the batch and the
extended label sequence ``blank l1 blank l2 ... blank``). Like TensorFlow's CTCLoss it
returns, besides each sequence's negative log-likelihood, the gradient of that loss with
respect to the logits (``softmax - posterior occupancy``), which its rule in ember-tape
scales by the incoming gradient. As in TensorFlow, that fused gradient has no gradient of
its own: a second-order gradient through ``ctc_loss`` raises (ember-tape's rule).

A sequence that no alignment can produce (more labels, counting a blank between repeats,
than frames) has probability 0: its loss is ``inf`` and its gradient zeros, so one such
example shows in the loss and does not turn the weights into NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._device_errors import check_range
from .._errors import InvalidArgumentError
from .._registry import execute, register
from ._define import to_float

_OP = "ctc_loss"


def _check_host(labels: Any, label_length: Any, logit_length: Any, frames: int,
                classes: int, blank: int) -> None:
    """The arguments' values, where they are in host memory (they are read there)."""
    width = labels.shape[1]
    bad = (label_length < 0) | (label_length > width)
    if bad.any():
        raise InvalidArgumentError(
            f"{_OP}: label_length must lie in [0, {width}] (the labels' width), got "
            f"{label_length[bad][0]} for sequence {int(np.argmax(bad))}")
    bad = (logit_length < 0) | (logit_length > frames)
    if bad.any():
        raise InvalidArgumentError(
            f"{_OP}: logit_length must lie in [0, {frames}] (the logits' frames), got "
            f"{logit_length[bad][0]} for sequence {int(np.argmax(bad))}")
    used = np.arange(width) < label_length[:, None]
    lab = labels[used]
    bad_value = (lab < 0) | (lab >= classes) | (lab == blank)
    if bad_value.any():
        raise InvalidArgumentError(
            f"{_OP}: labels within label_length must be classes in [0, {classes}) other "
            f"than the blank ({blank}), got {lab[bad_value][0]}")


def _check_device(be: Any, labels: Any, label_length: Any, logit_length: Any,
                  frames: int, classes: int, blank: int) -> None:
    """The same checks on a GPU, recorded there without a sync (``_device_errors``): a
    blank label is caught there only when the blank is the first or last class."""
    xp = be.xp
    width = labels.shape[1]
    check_range(be, label_length, 0, width + 1, _OP, "label_length")
    check_range(be, logit_length, 0, frames + 1, _OP, "logit_length")
    low, high = (1, classes) if blank == 0 else (0, classes - 1) if blank == classes - 1 \
        else (0, classes)
    used = xp.arange(width)[None, :] < label_length[:, None]
    check_range(be, xp.where(used, labels, labels.dtype.type(low)), low, high, _OP, "labels")


def _ctc_loss(be: Any, logits: Any, labels: Any, label_length: Any, logit_length: Any, *,
              blank: int) -> tuple[Any, Any]:
    """(loss (batch,), d loss / d logits (frames, batch, classes)) for time-major logits."""
    xp = be.xp
    frames, batch, classes = logits.shape
    if xp is np:
        _check_host(labels, label_length, logit_length, frames, classes, blank)
    else:
        _check_device(be, labels, label_length, logit_length, frames, classes, blank)
    x = to_float(logits)
    if x.dtype.itemsize < 4:  # float16/bfloat16 compute in float32, as TensorFlow's
        x = x.astype(np.float32)
    dt = x.dtype
    neg = dt.type(-np.inf)
    width = labels.shape[1]
    states = 2 * width + 1
    lab_len = label_length.astype(np.int64)
    seq_len = logit_length.astype(np.int64)

    shifted = x - x.max(-1, keepdims=True)
    logp = shifted - xp.log(xp.exp(shifted).sum(-1, keepdims=True))  # (T, B, K)
    # the extended labels: blank, l1, blank, l2, ..., blank; unused labels read the blank
    used = xp.arange(width)[None, :] < lab_len[:, None]
    lab = xp.where(used, labels.astype(np.int64), blank)
    ext = xp.full((batch, states), blank, dtype=np.int64)
    ext[:, 1::2] = lab
    # a label state may be entered from two states back unless it repeats that label
    skip = xp.zeros((batch, states), dtype=bool)
    if width > 1:
        skip[:, 3::2] = lab[:, 1:] != lab[:, :-1]
    emit = xp.take_along_axis(logp, xp.broadcast_to(ext[None], (frames, batch, states)), 2)
    state = xp.arange(states)[None, :]
    last = (state == 2 * lab_len[:, None]) | (state == 2 * lab_len[:, None] - 1)

    def shift(a: Any, k: int) -> Any:  # a[:, s - k] (k > 0) or a[:, s + |k|], -inf outside
        out = xp.full_like(a, neg)
        if k > 0:
            out[:, k:] = a[:, :-k]
        else:
            out[:, :k] = a[:, -k:]
        return out

    alphas = xp.full((frames, batch, states), neg, dtype=dt)
    if frames:
        alpha = xp.where(state < 2, emit[0], neg)
        alpha = xp.where((state == 1) & (lab_len[:, None] == 0), neg, alpha)
        alphas[0] = alpha
        for t in range(1, frames):
            a = xp.logaddexp(alpha, shift(alpha, 1))
            a = xp.logaddexp(a, xp.where(skip, shift(alpha, 2), neg)) + emit[t]
            alpha = xp.where((t < seq_len)[:, None], a, alpha)  # frozen past the end
            alphas[t] = a
        end = xp.where(last, alpha, neg)
        top = end.max(-1)
        reached = xp.isfinite(top)
        total = xp.exp(end - xp.where(reached, top, dt.type(0))[:, None]).sum(-1)
        loglik = xp.where(reached, xp.log(xp.where(reached, total, dt.type(1))) + top, neg)
    else:
        loglik = xp.full((batch,), neg, dtype=dt)
    # no frames: the empty labelling has probability 1, any other 0
    loglik = xp.where(seq_len == 0, xp.where(lab_len == 0, dt.type(0), neg), loglik)
    loss = -loglik

    grad = xp.zeros((frames, batch, classes), dtype=dt)
    if frames:
        skip_next = xp.zeros_like(skip)  # skip_next[:, s]: state s + 2 may be entered from s
        skip_next[:, :-2] = skip[:, 2:]
        beta = xp.full((batch, states), neg, dtype=dt)
        occupancy = xp.empty((frames, batch, states), dtype=dt)
        finite = xp.isfinite(loglik)[:, None]
        for t in range(frames - 1, -1, -1):
            b = xp.logaddexp(beta, shift(beta, -1))
            b = xp.logaddexp(b, xp.where(skip_next, shift(beta, -2), neg)) + emit[t]
            start = xp.where(last, emit[t], neg)
            beta = xp.where((t == seq_len - 1)[:, None], start,
                            xp.where((t < seq_len - 1)[:, None], b, neg))
            # alpha + beta counts frame t's emission twice; -inf where either is
            g = alphas[t] + beta - emit[t]
            g = xp.where(xp.isfinite(g) & finite, g, neg)
            occupancy[t] = xp.exp(g + xp.where(finite, loss[:, None], dt.type(0)))
        onehot = (ext[:, :, None] == xp.arange(classes)[None, None, :]).astype(dt)
        occ = xp.matmul(occupancy.transpose(1, 0, 2), onehot).transpose(1, 0, 2)
        live = (xp.arange(frames)[:, None] < seq_len[None, :]) & xp.isfinite(loglik)[None, :]
        grad = xp.where(live[:, :, None], xp.exp(logp) - occ, dt.type(0))
    return loss, grad


_ctc_op = register(_OP, _ctc_loss, family="ctc")


def ctc_loss_op(logits: Any, labels: Any, label_length: Any, logit_length: Any,
                blank: int) -> tuple[Any, Any]:
    """(loss, gradient): the op behind ``nn_ops.ctc_loss``, which checks the arguments'
    shapes and dtypes and makes the logits time-major."""
    return execute(_ctc_op, (logits, labels, label_length, logit_length),  # type: ignore[no-any-return]
                   {"blank": int(blank)})


def _ctc_greedy(be: Any, logits: Any, sequence_length: Any, *, blank: int,
                merge_repeated: bool) -> tuple[Any, Any]:
    """(labels (batch, frames) padded with -1, -sum of each frame's largest logit (batch,
    1)) for batch-major logits: the best class of each frame, repeats merged, blanks
    dropped. Fixed shapes, no host read: it runs in a trace and stays on a GPU."""
    xp = be.xp
    batch, frames, _ = logits.shape
    best = logits.argmax(-1)
    inside = xp.arange(frames)[None, :] < sequence_length[:, None].astype(np.int64)
    keep = inside & (best != blank)
    if merge_repeated and frames > 1:
        keep[:, 1:] &= best[:, 1:] != best[:, :-1]
    # each kept label goes to its rank among the kept; the rest to a column cut off after
    target = xp.where(keep, xp.cumsum(keep, axis=1) - 1, frames)
    out = xp.full((batch, frames + 1), -1, dtype=np.int64)
    rows = xp.broadcast_to(xp.arange(batch)[:, None], (batch, frames))
    out[rows, target] = xp.where(keep, best, -1)
    score = logits.dtype.type(0) - xp.where(inside, logits.max(-1), logits.dtype.type(0)).sum(
        1, keepdims=True)  # (0 - sum: an empty sequence scores 0, not -0)
    return out[:, :frames], score


_greedy_op = register("ctc_greedy_decode", _ctc_greedy, family="ctc", differentiable=False)


def ctc_greedy_op(logits: Any, sequence_length: Any, blank: int,
                  merge_repeated: bool) -> tuple[Any, Any]:
    """The op behind the greedy decoders (batch-major logits, checked by the caller)."""
    return execute(_greedy_op, (logits, sequence_length),  # type: ignore[no-any-return]
                   {"blank": int(blank), "merge_repeated": bool(merge_repeated)})


def _add(beams: dict[tuple[int, ...], list[float]], prefix: tuple[int, ...], which: int,
         value: float) -> None:
    """Add probability ``value`` (a log) to ``prefix``'s alignments ending in a blank
    (``which`` 0) or in its last label (1)."""
    entry = beams.setdefault(prefix, [-np.inf, -np.inf])
    entry[which] = np.logaddexp(entry[which], value)


def beam_search_host(logp: np.ndarray, length: int, blank: int, beam_width: int,
                     top_paths: int) -> list[tuple[tuple[int, ...], float]]:
    """The ``top_paths`` most probable labellings of one sequence's log-probabilities
    (frames, classes) and their log-probabilities, by prefix beam search: each prefix keeps
    the probability of its alignments ending in a blank and in its last label, every frame
    extends the ``beam_width`` most probable prefixes by each class, and a repeated label
    extends a prefix only after a blank."""
    neg = -np.inf
    beams: dict[tuple[int, ...], tuple[float, float]] = {(): (0.0, neg)}  # (blank, label)
    classes = logp.shape[1]
    others = np.array([c for c in range(classes) if c != blank], dtype=np.int64)
    for t in range(length):
        lp = logp[t]
        nxt: dict[tuple[int, ...], list[float]] = {}
        for prefix, (pb, pl) in beams.items():
            total = np.logaddexp(pb, pl)
            _add(nxt, prefix, 0, total + lp[blank])
            end = prefix[-1] if prefix else -1
            ext = total + lp[others]
            for c, v in zip(others.tolist(), ext.tolist()):
                if c == end:  # the same label with no blank between merges into prefix
                    _add(nxt, prefix, 1, pl + lp[c])
                    _add(nxt, prefix + (c,), 1, pb + lp[c])
                else:
                    _add(nxt, prefix + (c,), 1, v)
        ranked = sorted(nxt.items(), key=lambda kv: -np.logaddexp(*kv[1]))[:beam_width]
        beams = {k: (v[0], v[1]) for k, v in ranked}
    ranked_final = sorted(beams.items(), key=lambda kv: -np.logaddexp(*kv[1]))[:top_paths]
    return [(k, float(np.logaddexp(*v))) for k, v in ranked_final]

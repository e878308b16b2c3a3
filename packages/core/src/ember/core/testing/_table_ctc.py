"""Specs for the CTC functions of ember.core.nn_ops, against a reference that enumerates
every path through the frames (tiny sizes only: classes ** frames paths)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .. import nn_ops as nn
from ._spec import FLOATS, OpSpec, args, arr, case


def _collapse(path: tuple[int, ...], blank: int, merge: bool = True) -> tuple[int, ...]:
    """A path's labelling: repeats merged (``merge``), then blanks dropped."""
    out = []
    prev = None
    for c in path:
        if c != blank and not (merge and c == prev):
            out.append(c)
        prev = c
    return tuple(out)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    s = x - x.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def ctc_loss_ref(labels: Any, logits: Any, label_length: Any, logit_length: Any,
                 logits_time_major: bool = True, blank_index: Any = None) -> np.ndarray:
    """-log of the summed probability of every path that collapses to the labels."""
    x = np.asarray(logits, np.float64)
    if not logits_time_major:
        x = x.transpose(1, 0, 2)
    frames, batch, classes = x.shape
    blank = (0 if blank_index is None else blank_index) % classes
    logp = _log_softmax(x)
    out = np.empty(batch)
    for b in range(batch):
        target = tuple(int(v) for v in np.asarray(labels)[b, :int(label_length[b])])
        n = int(logit_length[b])
        total = 0.0
        for path in itertools.product(range(classes), repeat=n):
            if _collapse(path, blank) == target:
                total += np.exp(sum(logp[t, b, c] for t, c in enumerate(path)))
        out[b] = -np.log(total) if total > 0 else np.inf
    return out.astype(np.asarray(logits).dtype)


def _greedy_ref(inputs: Any, sequence_length: Any, merge_repeated: bool = True,
                blank_index: Any = None) -> list[Any]:
    x = np.asarray(inputs)
    frames, batch, classes = x.shape
    blank = classes - 1 if blank_index is None else blank_index % classes
    decoded = np.full((batch, frames), -1, np.int64)
    score = np.zeros((batch, 1), x.dtype)
    for b in range(batch):
        n = int(sequence_length[b])
        best = tuple(int(c) for c in x[:n, b].argmax(-1))
        labels = _collapse(best, blank, merge_repeated)
        decoded[b, :len(labels)] = labels
        score[b, 0] = -x[:n, b].max(-1).sum()
    return [[decoded], score]


def _beam_ref(inputs: Any, sequence_length: Any, beam_width: int = 100,
              top_paths: int = 1) -> list[Any]:
    """The exact ``top_paths`` labellings (a beam as wide as these cases' need finds them)."""
    x = np.asarray(inputs, np.float64)
    frames, batch, classes = x.shape
    logp = _log_softmax(x)
    out = np.full((top_paths, batch, frames), -1, np.int64)
    scores = np.zeros((batch, top_paths))
    for b in range(batch):
        n = int(sequence_length[b])
        prob: dict[tuple[int, ...], float] = {}
        for path in itertools.product(range(classes), repeat=n):
            key = _collapse(path, classes - 1)
            prob[key] = prob.get(key, 0.0) + np.exp(sum(logp[t, b, c]
                                                        for t, c in enumerate(path)))
        ranked = sorted(prob.items(), key=lambda kv: -kv[1])[:top_paths]
        for k, (labels, p) in enumerate(ranked):
            out[k, b, :len(labels)] = labels
            scores[b, k] = np.log(p)
    dt = np.asarray(inputs).dtype
    return [list(out), scores.astype(dt if dt.itemsize >= 4 else np.float32)]


def _ints(*values: Any) -> Any:
    return lambda rng, dt: np.array(values, np.int32)


def _labels(rows: list[list[int]]) -> Any:
    return lambda rng, dt: np.array(rows, np.int64)


def _distinct(*shape: int) -> Any:
    """Logits whose per-frame maxima are unique (greedy and beam rankings have no ties)."""
    def make(rng: np.random.Generator, dt: np.dtype) -> np.ndarray:
        return (rng.permutation(int(np.prod(shape))).reshape(shape) * 0.37 / np.prod(shape)
                * 8).astype(dt)
    return make


def specs() -> list[OpSpec]:
    return [
        OpSpec("nn_ops.ctc_loss", nn.ctc_loss, ctc_loss_ref, (
            # a repeat (needs a blank between), an empty labelling, a shorter sequence
            case("time_major", args(_labels([[1, 1], [2, 0], [1, 2]]), arr(5, 3, 3),
                                    _ints(2, 0, 2), _ints(5, 4, 3))),
            case("batch_major", args(_labels([[2, 1], [1, 1]]), arr(2, 4, 3),
                                     _ints(2, 1), _ints(4, 4)), logits_time_major=False),
            case("blank_last", args(_labels([[0, 1], [1, 0]]), arr(4, 2, 3),
                                    _ints(2, 2), _ints(4, 3)), blank_index=-1),
        ), FLOATS, True, (1,),
            lambda T, y, x, ll, xl, logits_time_major=True, blank_index=None: (
                T.nn.functional.ctc_loss(
                    (x if logits_time_major else x.permute(1, 0, 2)).log_softmax(-1),
                    y.long(), xl.long(), ll.long(), reduction="none",
                    blank=(blank_index or 0) % x.shape[-1]))),
        OpSpec("nn_ops.ctc_greedy_decoder", nn.ctc_greedy_decoder, _greedy_ref, (
            case("merged", args(_distinct(6, 2, 4), _ints(6, 4))),
            case("unmerged", args(_distinct(5, 2, 3), _ints(5, 5)), merge_repeated=False),
            case("blank_first", args(_distinct(5, 3, 4), _ints(5, 2, 0)), blank_index=0),
        ), FLOATS, False, ()),
        OpSpec("nn_ops.ctc_beam_search_decoder", nn.ctc_beam_search_decoder, _beam_ref, (
            case("top1", args(arr(4, 2, 3), _ints(4, 3))),
            case("top3", args(arr(5, 2, 3), _ints(5, 4)), beam_width=50, top_paths=3),
        ), FLOATS, False, ()),
    ]



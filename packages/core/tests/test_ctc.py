"""em.nn_ops.ctc_loss and the CTC decoders: what the op table's cases do not cover (errors,
unreachable labellings, 16-bit logits, decoding by hand). Values and gradients against an
exhaustive reference and PyTorch are in the op table (testing/_table_ctc.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember.core.testing._table_ctc import ctc_loss_ref

nn = em.nn_ops


@pytest.fixture(autouse=True)
def _on_the_host():
    """These tests check the host's argument checks (raised at the call, not at the next
    read as on a GPU) and bfloat16 (the CPU's); the op's GPU path is the op table's
    strict-GPU cases, and a GPU's deferred label check is in ember-nn's test_ctc_keras."""
    with em.device("/cpu:0"):
        yield


def _logits(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_uniform_logits_count_the_alignments():
    # 3 frames, classes {blank, a}: labelling "a" is produced by 6 of the 8 paths
    # (a--, -a-, --a, aa-, -aa, aaa), "aa" by 1 (a-a)
    x = em.zeros((3, 2, 2))
    loss = nn.ctc_loss([[1, 0], [1, 1]], x, [1, 2], [3, 3]).numpy()
    np.testing.assert_allclose(loss, [-np.log(6 / 8), -np.log(1 / 8)], rtol=1e-6)


def test_a_labelling_no_alignment_reaches_has_infinite_loss():
    # "aa" needs a blank between: 3 frames; with 2 it is unreachable, as 3 labels in 2
    x = _logits(2, 2, 3)
    loss = nn.ctc_loss([[1, 1, 0], [1, 2, 1]], x, [2, 3], [2, 2]).numpy()
    assert np.isinf(loss).all() and (loss > 0).all()


def test_no_frames_gives_the_empty_labelling_probability_one():
    x = _logits(3, 2, 3)
    loss = nn.ctc_loss([[1], [0]], x, [1, 0], [0, 0]).numpy()
    assert np.isinf(loss[0]) and loss[1] == 0.0


def test_long_sequences_stay_finite_in_log_space():
    # 400 frames of confident logits: probabilities of 1e-300 and below, never 0
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((400, 2, 6)) * 8).astype(np.float32)
    loss = nn.ctc_loss(rng.integers(1, 6, (2, 50)), x, [50, 17], [400, 233]).numpy()
    assert np.isfinite(loss).all() and (loss > 0).all()


@pytest.mark.parametrize("dtype", [em.float16, em.bfloat16])
def test_16_bit_logits_compute_in_float32(dtype):
    x = _logits(5, 2, 4)
    lab, ll, xl = np.array([[1, 2], [3, 3]]), [2, 2], [5, 5]
    got = nn.ctc_loss(lab, em.cast(em.constant(x), dtype), ll, xl)
    assert got.dtype == em.float32
    want = ctc_loss_ref(lab, em.cast(em.cast(em.constant(x), dtype), em.float32).numpy(),
                        ll, xl)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("kwargs,message", [
    (dict(label_length=[3, 1]), r"label_length must lie in \[0, 2\].*got 3 for sequence 0"),
    (dict(label_length=[-1, 1]), r"label_length must lie in \[0, 2\]"),
    (dict(logit_length=[4, 5]), r"logit_length must lie in \[0, 4\].*got 5 for sequence 1"),
    (dict(labels=[[1, 0], [2, 2]], label_length=[2, 2]),
     r"labels within label_length must be classes in \[0, 3\) other than the blank \(0\), "
     r"got 0"),
    (dict(labels=[[1, 3], [2, 2]]), r"labels within label_length .* got 3"),
    (dict(labels=[[1, 2]]), r"labels must be \(batch, max_label_length\) with batch 2"),
    (dict(label_length=[[1, 1]]), r"label_length must have shape \(2,\), got \(1, 2\)"),
    (dict(labels=[[1.0, 2.0], [1.0, 1.0]]), r"labels must be integers, got float32"),
    (dict(unique=([1], [0])), r"unique= is not supported"),
    (dict(blank_index=3), r"blank_index 3 is out of range for 3 classes"),
])
def test_bad_arguments_name_what_is_wrong(kwargs, message):
    args = dict(labels=[[1, 2], [2, 2]], logits=_logits(4, 2, 3), label_length=[2, 1],
                logit_length=[4, 4])
    args.update(kwargs)
    with pytest.raises(em.InvalidArgumentError, match="ctc_loss: " + message):
        nn.ctc_loss(**args)


def test_labels_past_their_length_may_hold_anything():
    x = _logits(4, 2, 3)
    a = nn.ctc_loss([[1, -1], [2, 7]], x, [1, 1], [4, 4]).numpy()
    b = nn.ctc_loss([[1, 0], [2, 0]], x, [1, 1], [4, 4]).numpy()
    np.testing.assert_array_equal(a, b)


def test_blank_index_minus_one_is_the_last_class():
    x = _logits(4, 1, 3)
    a = nn.ctc_loss([[0, 1]], x, [2], [4], blank_index=-1).numpy()
    b = nn.ctc_loss([[0, 1]], x, [2], [4], blank_index=2).numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, ctc_loss_ref([[0, 1]], x, [2], [4], blank_index=2),
                               rtol=1e-5)


def _one_hot_logits(path, classes):
    """Logits whose best class at frame t is path[t] (time-major, one sequence)."""
    x = np.zeros((len(path), 1, classes), np.float32)
    x[np.arange(len(path)), 0, path] = 5.0
    return x


def test_greedy_merges_repeats_then_drops_blanks():
    # TensorFlow's example: A B B * B B with merge_repeated gives A B B; without, A B B B B
    a, b, blank = 0, 1, 2
    x = _one_hot_logits([a, b, b, blank, b, b], 3)
    (merged,), score = nn.ctc_greedy_decoder(x, [6])
    (kept,), _ = nn.ctc_greedy_decoder(x, [6], merge_repeated=False)
    assert merged.numpy().tolist() == [[0, 1, 1, -1, -1, -1]]
    assert kept.numpy().tolist() == [[0, 1, 1, 1, 1, -1]]
    assert merged.dtype == em.int64
    np.testing.assert_allclose(score.numpy(), [[-30.0]])


def test_greedy_stops_at_each_sequence_length():
    x = np.concatenate([_one_hot_logits([1, 0, 1, 0], 3)] * 2, axis=1)
    (decoded,), score = nn.ctc_greedy_decoder(x, [2, 0], blank_index=0)
    assert decoded.numpy().tolist() == [[1, -1, -1, -1], [-1, -1, -1, -1]]
    np.testing.assert_allclose(score.numpy(), [[-10.0], [0.0]])


def test_beam_search_finds_what_greedy_misses():
    # two frames, classes {a, blank}: the best path is "--" (0.6^2 = 0.36), but "a" has
    # three alignments (a-, -a, aa) worth 0.4*0.6*2 + 0.16 = 0.64
    p = np.array([[0.4, 0.6], [0.4, 0.6]])
    x = np.log(p)[:, None, :].astype(np.float64)
    (greedy,), _ = nn.ctc_greedy_decoder(x, [2])
    (best,), logp = nn.ctc_beam_search_decoder(x, [2], beam_width=4)
    assert greedy.numpy().tolist() == [[-1, -1]]
    assert best.numpy().tolist() == [[0, -1]]
    np.testing.assert_allclose(logp.numpy(), [[np.log(0.64)]], rtol=1e-12)


def test_beam_search_arguments():
    x = _logits(3, 1, 3)
    with pytest.raises(em.InvalidArgumentError, match="top_paths must lie in"):
        nn.ctc_beam_search_decoder(x, [3], beam_width=2, top_paths=3)
    with pytest.raises(em.InvalidArgumentError, match="beam_width must be a positive int"):
        nn.ctc_beam_search_decoder(x, [3], beam_width=0)
    with pytest.raises(em.InvalidArgumentError, match=r"sequence_length must lie in \[0, 3\]"):
        nn.ctc_beam_search_decoder(x, [4])

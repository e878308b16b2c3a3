"""Keras 3's other losses (``ember.nn.keras_losses_more``, re-exported by ``nn.losses``):
each function and class against a numpy implementation of Keras 3's formula written
here, hand-computed cases where a formula branches, PyTorch where it has the same loss,
finite-difference gradients, configs, compile strings and refused arguments."""

import math

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape

L = nn.losses
EPS = 1e-7
REDUCTIONS = ["sum_over_batch_size", "auto", "mean", "mean_with_sample_weight", "sum", "none",
              None]


def _rng(seed=0):
    return np.random.default_rng(seed)


# --- numpy references: Keras 3's formulas (keras/src/losses/losses.py) ---------------------
def np_hinge_labels(y):
    return 2.0 * y - 1.0 if np.all((y == 0) | (y == 1)) else y


def np_hinge(y, p):
    return np.maximum(1.0 - np_hinge_labels(y) * p, 0.0).mean(-1)


def np_squared_hinge(y, p):
    return (np.maximum(1.0 - np_hinge_labels(y) * p, 0.0) ** 2).mean(-1)


def np_categorical_hinge(y, p):
    pos = (y * p).sum(-1)
    neg = ((1.0 - y) * p).max(-1)
    return np.maximum(neg - pos + 1.0, 0.0)


def np_mape(y, p):
    return 100.0 * np.abs((y - p) / np.maximum(np.abs(y), EPS)).mean(-1)


def np_msle(y, p):
    return ((np.log(np.maximum(p, EPS) + 1.0) - np.log(np.maximum(y, EPS) + 1.0)) ** 2).mean(-1)


def np_log_cosh(y, p):
    return np.log(np.cosh(p - y)).mean(-1)


def np_poisson(y, p):
    return (p - y * np.log(p + EPS)).mean(-1)


def np_cosine(y, p, axis=-1):
    def unit(v):
        return v / np.sqrt(np.maximum((v * v).sum(axis, keepdims=True), EPS * EPS))
    return -(unit(y) * unit(p)).sum(axis)


def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_binary_focal(y, p, apply_class_balancing=False, alpha=0.25, gamma=2.0,
                    from_logits=False, label_smoothing=0.0, axis=-1):
    if label_smoothing:
        y = y * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        p = np_sigmoid(p)
    q = np.clip(p, EPS, 1.0 - EPS)
    bce = -(y * np.log(q) + (1.0 - y) * np.log(1.0 - q))
    p_t = y * p + (1.0 - y) * (1.0 - p)
    focal = (1.0 - p_t) ** gamma * bce
    if apply_class_balancing:
        focal = (y * alpha + (1.0 - y) * (1.0 - alpha)) * focal
    return focal.mean(axis)


def np_softmax(x, axis=-1):
    z = np.exp(x - x.max(axis, keepdims=True))
    return z / z.sum(axis, keepdims=True)


def np_categorical_focal(y, p, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                         axis=-1):
    if label_smoothing:
        y = y * (1.0 - label_smoothing) + label_smoothing / p.shape[axis]
    if from_logits:
        p = np_softmax(p, axis)
    out = np.clip(p / p.sum(axis, keepdims=True), EPS, 1.0 - EPS)
    return (np.asarray(alpha) * (1.0 - out) ** gamma * -y * np.log(out)).sum(axis)


def np_dice(y, p, axis=None):
    axis = tuple(axis) if isinstance(axis, list) else axis
    return 1.0 - 2.0 * (y * p).sum(axis) / (y.sum(axis) + p.sum(axis) + EPS)


def np_tversky(y, p, alpha=0.5, beta=0.5, axis=None):
    """Keras 3.15's code (losses.py, ``tversky``): its ``fp`` (weighed by alpha) is
    ``sum((1 - y_pred) y_true)`` and its ``fn`` (beta) ``sum(y_pred (1 - y_true))``."""
    tp = (p * y).sum(axis)
    keras_fp = ((1.0 - p) * y).sum(axis)
    keras_fn = (p * (1.0 - y)).sum(axis)
    return 1.0 - tp / (tp + alpha * keras_fp + beta * keras_fn + EPS)


def np_circle(labels, emb, ref_labels=None, ref=None, remove_diagonal=True, gamma=80.0,
              margin=0.4):
    """Row by row, with python loops: the positives' and negatives' logsumexp of the
    Circle loss (an empty set: -inf, and softplus(-inf) = 0)."""
    labels = np.asarray(labels).reshape(-1)
    ref = emb if ref is None else ref
    ref_labels = labels if ref_labels is None else np.asarray(ref_labels).reshape(-1)
    out = np.zeros(len(labels))
    for i in range(len(labels)):
        pos, neg = [], []
        for j in range(len(ref_labels)):
            d = max(1.0 - float(emb[i] @ ref[j]), 0.0)
            if labels[i] == ref_labels[j]:
                if remove_diagonal and i == j:
                    continue
                pos.append(-gamma * max(margin + d, 0.0) * (margin - d))
            else:
                neg.append(gamma * max(1.0 + margin - d, 0.0) * (1.0 - margin - d))

        def lse(v):
            if not v:
                return -np.inf
            m = max(v)
            return m + math.log(sum(math.exp(x - m) for x in v))
        z = lse(pos) + lse(neg)
        out[i] = 0.0 if z == -np.inf else math.log1p(math.exp(-abs(z))) + max(z, 0.0)
    return out


def np_gce(labels, probs, q):
    labels = np.asarray(labels).reshape(-1).astype(int)
    return (1.0 - probs[np.arange(len(labels)), labels] ** q) / q


def _unit_rows(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


# --- random data for each loss -------------------------------------------------------------
def _data(name, seed=0):
    r = _rng(seed)
    n, c = 6, 4
    if name in ("hinge", "squared_hinge"):
        return (r.random((n, c)) > 0.5).astype(np.float64), r.normal(size=(n, c))
    if name == "categorical_hinge":
        return np.eye(c)[r.integers(0, c, n)], r.normal(size=(n, c))
    if name in ("mape", "log_cosh", "cosine"):
        return r.normal(size=(n, c)), r.normal(size=(n, c))
    if name in ("msle", "poisson"):
        return r.uniform(0.0, 3.0, (n, c)), r.uniform(0.05, 3.0, (n, c))
    if name == "binary_focal":
        return (r.random((n, c)) > 0.5).astype(np.float64), r.uniform(0.02, 0.98, (n, c))
    if name == "categorical_focal":
        return np.eye(c)[r.integers(0, c, n)], np_softmax(r.normal(size=(n, c)))
    if name in ("dice", "tversky"):
        return (r.random((n, 3, 3, 1)) > 0.5).astype(np.float64), r.uniform(0, 1, (n, 3, 3, 1))
    if name == "circle":
        return np.array([0, 1, 0, 2, 1, 0]), _unit_rows(r.normal(size=(n, 3)))
    if name == "gce":
        return r.integers(0, c, n), np_softmax(r.normal(size=(n, c)))
    raise KeyError(name)


# name: (ember function, ember class, numpy reference, data, the class's kwargs (also the
# function's))
CASES = {
    "hinge": (L.hinge, L.Hinge, np_hinge, {}),
    "squared_hinge": (L.squared_hinge, L.SquaredHinge, np_squared_hinge, {}),
    "categorical_hinge": (L.categorical_hinge, L.CategoricalHinge, np_categorical_hinge, {}),
    "mape": (L.mean_absolute_percentage_error, L.MeanAbsolutePercentageError, np_mape, {}),
    "msle": (L.mean_squared_logarithmic_error, L.MeanSquaredLogarithmicError, np_msle, {}),
    "log_cosh": (L.log_cosh, L.LogCosh, np_log_cosh, {}),
    "poisson": (L.poisson, L.Poisson, np_poisson, {}),
    "cosine": (L.cosine_similarity, L.CosineSimilarity, np_cosine, {}),
    "binary_focal": (L.binary_focal_crossentropy, L.BinaryFocalCrossentropy, np_binary_focal,
                     {"apply_class_balancing": True, "alpha": 0.4, "gamma": 1.5}),
    "categorical_focal": (L.categorical_focal_crossentropy, L.CategoricalFocalCrossentropy,
                          np_categorical_focal, {"alpha": 0.5, "gamma": 3.0}),
    "dice": (L.dice, L.Dice, np_dice, {"axis": (1, 2, 3)}),
    "tversky": (L.tversky, L.Tversky, np_tversky, {"alpha": 0.3, "beta": 0.7,
                                                   "axis": (1, 2, 3)}),
    "circle": (L.circle, L.Circle, np_circle, {"gamma": 4.0, "margin": 0.25}),
    "gce": (lambda y, p, q=0.5: L.categorical_generalized_cross_entropy(y, p, q),
            L.CategoricalGeneralizedCrossEntropy, np_gce, {"q": 0.7}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_matches_keras_formula(name):
    fn, _, ref, kw = CASES[name]
    for seed in (0, 1):
        y, p = _data(name, seed)
        got = fn(y, p, **kw).numpy()
        want = ref(y, p, **kw)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        default = fn(y, p).numpy()  # Keras's defaults
        np.testing.assert_allclose(default, ref(y, p) if name != "gce" else np_gce(y, p, 0.5),
                                   rtol=1e-9, atol=1e-12)


def _weighted(per, sw, reduction):
    w = per * sw
    return {"sum_over_batch_size": w.sum() / per.size, "auto": w.sum() / per.size,
            "mean": w.sum() / per.size, "mean_with_sample_weight": w.sum() / sw.sum(),
            "sum": w.sum(), "none": w, None: w}[reduction]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_class_reductions_match_keras(name, reduction):
    _, cls, ref, kw = CASES[name]
    y, p = _data(name, 2)
    per = ref(y, p, **kw)
    loss = cls(reduction=reduction, **kw)
    got = loss(y, p).numpy()
    assert got.dtype == np.float32  # computed in the loss's dtype, as Keras 3
    if name == "circle":  # rows without a positive or negative are masked out of means
        valid = per > 0
        want = {"sum_over_batch_size": per[valid].mean(), "auto": per[valid].mean(),
                "mean": per[valid].mean(), "mean_with_sample_weight": per[valid].mean(),
                "sum": per.sum(), "none": per, None: per}[reduction]
    else:
        want = _weighted(per, np.ones_like(per), reduction)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_class_sample_weight(name):
    _, cls, ref, kw = CASES[name]
    y, p = _data(name, 3)
    per = ref(y, p, **kw)
    sw = np.array([1.0, 0.0, 2.0, 0.5, 1.5, 3.0])
    loss = cls(**kw)
    if name == "circle":
        valid = (per > 0).astype(np.float64)
        want = (per * sw * valid).sum() / valid.sum()
    else:
        want = (per * sw).sum() / per.size
    np.testing.assert_allclose(float(loss(y, p, sample_weight=sw)), want, rtol=2e-5)
    np.testing.assert_allclose(
        float(cls(reduction="mean_with_sample_weight", **kw)(y, p, sample_weight=sw)),
        (per * sw * (per > 0 if name == "circle" else 1)).sum()
        / (sw * (per > 0 if name == "circle" else 1)).sum(), rtol=2e-5)


# --- hand-computed branches ----------------------------------------------------------------
def test_hinge_converts_binary_labels_per_batch():
    p = [[0.6, 0.4]]
    # 0/1 labels are -1/1: max(1 + 0.6, 0), max(1 - 0.4, 0)
    np.testing.assert_allclose(L.hinge([[0.0, 1.0]], p).numpy(), [1.1], rtol=1e-6)
    np.testing.assert_allclose(L.hinge([[-1.0, 1.0]], p).numpy(), [1.1], rtol=1e-6)
    np.testing.assert_allclose(L.squared_hinge([[0.0, 1.0]], p).numpy(), [(1.6 ** 2 + 0.36) / 2],
                               rtol=1e-6)
    # a batch that is not all 0/1 keeps its labels: the 0 stays 0 (max(1 - 0, 0) = 1)
    np.testing.assert_allclose(L.hinge([[0.0, 1.0], [-1.0, 1.0]], [[0.6, 0.4], [0.6, 0.4]])
                               .numpy(), [0.8, 1.1], rtol=1e-6)
    # integer labels, (N,) against (N, 1) predictions, as a Keras class takes them
    np.testing.assert_allclose(float(L.Hinge()(np.array([0, 1]), [[0.5], [2.0]])),
                               (1.5 + 0.0) / 2, rtol=1e-6)
    np.testing.assert_allclose(L.categorical_hinge([[0.0, 1.0, 0.0]], [[0.2, 0.5, 0.9]])
                               .numpy(), [0.9 - 0.5 + 1.0], rtol=1e-6)


def test_binary_focal_class_balancing_by_hand():
    y, p = [[1.0, 0.0]], [[0.8, 0.3]]
    one = 0.2 ** 2 * -math.log(0.8)   # label 1: p_t = 0.8
    zero = 0.3 ** 2 * -math.log(0.7)  # label 0: p_t = 0.7
    np.testing.assert_allclose(L.binary_focal_crossentropy(y, p).numpy(), [(one + zero) / 2],
                               rtol=1e-6)
    np.testing.assert_allclose(
        L.binary_focal_crossentropy(y, p, apply_class_balancing=True).numpy(),
        [(0.25 * one + 0.75 * zero) / 2], rtol=1e-6)
    np.testing.assert_allclose(
        L.binary_focal_crossentropy(y, p, apply_class_balancing=True, alpha=0.9).numpy(),
        [(0.9 * one + 0.1 * zero) / 2], rtol=1e-6)
    # gamma = 0: the binary crossentropy
    np.testing.assert_allclose(L.binary_focal_crossentropy(y, p, gamma=0.0).numpy(),
                               L.binary_crossentropy(y, p).numpy(), rtol=1e-6)


def test_binary_focal_keras_documented_values():
    # keras.losses.BinaryFocalCrossentropy's docstring (Keras 3)
    y1, x1 = np.array([0, 1, 0, 0]), np.array([-18.6, 0.51, 2.94, -12.8])
    bf = L.BinaryFocalCrossentropy
    assert round(float(bf(gamma=2, from_logits=True)(y1, x1)), 3) == 0.691
    assert round(float(bf(apply_class_balancing=True, gamma=2, from_logits=True)(y1, x1)),
                 2) == 0.51
    y2, x2 = np.array([[0, 1], [0, 0]]), np.array([[-18.6, 0.51], [2.94, -12.8]])
    assert round(float(bf(gamma=3, from_logits=True)(y2, x2)), 3) == 0.647
    assert round(float(bf(apply_class_balancing=True, gamma=3, from_logits=True)(y2, x2)),
                 3) == 0.482
    assert round(float(bf(gamma=3, from_logits=True)(y2, x2, sample_weight=[0.8, 0.2])),
                 3) == 0.133
    assert round(float(bf(apply_class_balancing=True, gamma=3, from_logits=True)(
        y2, x2, sample_weight=[0.8, 0.2])), 3) == 0.097
    assert round(float(bf(gamma=4, from_logits=True, reduction="sum")(y2, x2)), 3) == 1.222
    assert round(float(bf(apply_class_balancing=True, gamma=4, from_logits=True,
                          reduction="sum")(y2, x2)), 3) == 0.914
    np.testing.assert_allclose(bf(gamma=5, from_logits=True, reduction=None)(y2, x2).numpy(),
                               [0.0017, 1.1561], atol=5e-5)
    np.testing.assert_allclose(bf(apply_class_balancing=True, gamma=5, from_logits=True,
                                  reduction=None)(y2, x2).numpy(), [0.0004, 0.8670], atol=1e-4)


def test_categorical_focal_keras_documented_values():
    y = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    p = [[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]]
    cf = L.CategoricalFocalCrossentropy
    np.testing.assert_allclose(float(cf()(y, p)), 0.23315276, rtol=1e-5)
    assert round(float(cf()(y, p, sample_weight=np.array([0.3, 0.7]))), 4) == 0.1632
    np.testing.assert_allclose(float(cf(reduction="sum")(y, p)), 0.46631, rtol=1e-4)
    np.testing.assert_allclose(cf(reduction=None)(y, p).numpy(), [3.2058331e-05, 4.6627346e-01],
                               rtol=1e-4)


def test_label_smoothing_and_from_logits_both_ways():
    r = _rng(5)
    logits = r.normal(size=(5, 3))
    y = (r.random((5, 3)) > 0.5).astype(np.float64)
    probs = np_sigmoid(logits)
    for ls in (0.0, 0.2):
        a = L.binary_focal_crossentropy(y, logits, from_logits=True, label_smoothing=ls)
        b = L.binary_focal_crossentropy(y, probs, label_smoothing=ls)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9)
        np.testing.assert_allclose(b.numpy(), np_binary_focal(y, probs, label_smoothing=ls),
                                   rtol=1e-9)
    # smoothing 0.2 by hand: a label of 1 is 0.9, of 0 is 0.1 (towards 0.5)
    got = L.binary_focal_crossentropy([[1.0, 0.0]], [[0.5, 0.5]], label_smoothing=0.2,
                                      gamma=0.0)
    np.testing.assert_allclose(got.numpy(), [math.log(2.0)], rtol=1e-6)
    onehot = np.eye(3)[[0, 2, 1, 1, 0]]
    soft = np_softmax(logits)
    for ls in (0.0, 0.3):
        a = L.categorical_focal_crossentropy(onehot, logits, from_logits=True,
                                             label_smoothing=ls)
        b = L.categorical_focal_crossentropy(onehot, soft, label_smoothing=ls)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9)
        np.testing.assert_allclose(b.numpy(), np_categorical_focal(onehot, soft,
                                                                   label_smoothing=ls),
                                   rtol=1e-9)
    # categorical smoothing 0.3 of 3 classes: 0.8 and 0.1 each, gamma 0, alpha 1: the CE
    got = L.categorical_focal_crossentropy([[1.0, 0.0, 0.0]], [[0.5, 0.25, 0.25]], alpha=1.0,
                                           gamma=0.0, label_smoothing=0.3)
    np.testing.assert_allclose(got.numpy(), [-(0.8 * math.log(0.5) + 0.2 * math.log(0.25))],
                               rtol=1e-6)
    # logits given where probabilities are expected: refused, naming from_logits
    with pytest.raises(ValueError, match="from_logits"):
        L.BinaryFocalCrossentropy()(y, logits * 3)
    with pytest.raises(ValueError, match="from_logits"):
        L.categorical_focal_crossentropy(onehot, logits * 3)


def test_categorical_focal_alpha_per_class_and_axis():
    r = _rng(6)
    y = np.eye(3)[[0, 2, 1, 1]]
    p = np_softmax(r.normal(size=(4, 3)))
    alpha = [0.2, 0.3, 0.5]
    loss = L.CategoricalFocalCrossentropy(alpha=alpha)
    np.testing.assert_allclose(float(loss(y, p)), np_categorical_focal(y, p, alpha=alpha).mean(),
                               rtol=1e-5)
    assert loss.get_config()["alpha"] == alpha
    # classes on the first axis
    np.testing.assert_allclose(L.categorical_focal_crossentropy(y.T, p.T, axis=0).numpy(),
                               np_categorical_focal(y.T, p.T, axis=0), rtol=1e-9)
    with pytest.raises(ValueError, match="alpha has 2 weights for 3 classes"):
        L.categorical_focal_crossentropy(y, p, alpha=[0.5, 0.5])
    with pytest.raises(ValueError, match="alpha.*axis"):
        L.categorical_focal_crossentropy(y.T, p.T, alpha=alpha, axis=0)
    with pytest.warns(SyntaxWarning, match="num_classes > 1"):
        L.categorical_focal_crossentropy(np.ones((2, 1)), np.ones((2, 1)))


def test_dice_and_tversky_axis():
    # keras.losses.Dice's docstring
    y = [[[[1.0], [1.0]], [[0.0], [0.0]]], [[[1.0], [1.0]], [[0.0], [0.0]]]]
    p = [[[[0.0], [1.0]], [[0.0], [1.0]]], [[[0.4], [0.0]], [[0.0], [0.9]]]]
    np.testing.assert_allclose(L.Dice(axis=(1, 2, 3), reduction=None)(y, p).numpy(),
                               [0.5, 0.75757575], rtol=1e-6)
    got = L.Dice()(y, p)
    assert got.shape == ()
    np.testing.assert_allclose(float(got), 0.6164384, rtol=1e-6)
    np.testing.assert_allclose(L.dice(y, p, axis=[1, 2, 3]).numpy(), [0.5, 0.75757575],
                               rtol=1e-6)
    # Tversky by hand (alpha 0.3, beta 0.7), as Keras 3 computes it: alpha weighs the
    # missed positives sum((1 - p) y), beta the extra ones sum(p (1 - y)). Row 0: TP .5,
    # missed .5, extra .5; row 1: TP 1, missed 1, extra 0
    y2, p2 = [[1.0, 0.0], [1.0, 1.0]], [[0.5, 0.5], [1.0, 0.0]]
    np.testing.assert_allclose(L.tversky(y2, p2, alpha=0.3, beta=0.7, axis=1).numpy(),
                               [1 - 0.5 / (1.0 + 1e-7), 1 - 1 / (1.3 + 1e-7)], rtol=1e-6)
    np.testing.assert_allclose(float(L.tversky(y2, p2, alpha=0.3, beta=0.7)),
                               1 - 1.5 / 2.3, rtol=1e-6)
    # keras.losses.tversky([[1., 1., 0., 0.]], [[.9, .2, .6, .1]], alpha=0.3, beta=0.7) in
    # Keras 3.15.1 (torch backend): 0.40860 (the docstring's reading gives 0.43299)
    np.testing.assert_allclose(float(L.tversky([[1.0, 1.0, 0.0, 0.0]], [[0.9, 0.2, 0.6, 0.1]],
                                               alpha=0.3, beta=0.7)), 0.40860, rtol=2e-5)
    # alpha = beta = 0.5 is Dice (up to the epsilon)
    r = _rng(8)
    y3, p3 = (r.random((4, 5)) > 0.5).astype(np.float64), r.random((4, 5))
    np.testing.assert_allclose(L.tversky(y3, p3, axis=-1).numpy(), L.dice(y3, p3, axis=-1)
                               .numpy(), rtol=1e-5)
    # a per-example weight cannot weigh the batch's one value: refused
    with pytest.raises(ValueError, match="sample_weight"):
        L.Dice()(y, p, sample_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="dice: y_pred holds probabilities"):
        L.dice(y3, p3 * 4 - 2)
    with pytest.raises(ValueError, match="axis 4 is out of range"):
        L.Tversky(axis=(1, 4))(y, p)


def test_cosine_similarity_keras_documented_values_and_axis():
    y = [[0.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    p = [[1.0, 0.0], [1.0, 1.0], [-1.0, -1.0]]
    np.testing.assert_allclose(L.cosine_similarity(y, p).numpy(), [0.0, -1.0, 1.0], atol=1e-6)
    r = _rng(9)
    a, b = r.normal(size=(3, 4, 5)), r.normal(size=(3, 4, 5))
    np.testing.assert_allclose(L.cosine_similarity(a, b, axis=1).numpy(), np_cosine(a, b, 1),
                               rtol=1e-9)
    np.testing.assert_allclose(float(L.CosineSimilarity(axis=1)(a, b)),
                               np_cosine(a, b, 1).mean(), rtol=1e-5)
    # the metric is the cosine itself; the loss its negative
    np.testing.assert_allclose(L.cosine_similarity(a, b).numpy(),
                               -nn.metrics.cosine_similarity(a, b).numpy(), rtol=1e-9)
    # a zero vector: 0, with a finite gradient (Keras 3 clamps the squared norm)
    x = em.constant(np.array([[0.0, 0.0], [1.0, 2.0]]))
    with tape.GradientTape() as t:
        t.watch(x)
        v = em.reduce_sum(L.cosine_similarity([[1.0, 0.0], [1.0, 1.0]], x))
    g = t.gradient(v, x).numpy()
    assert np.all(np.isfinite(g)), g
    assert float(L.cosine_similarity([[1.0, 0.0]], [[0.0, 0.0]])[0]) == 0.0


def test_regression_keras_documented_values():
    assert round(float(L.MeanAbsolutePercentageError()([100.0, 200.0, 300.0],
                                                       [90.0, 210.0, 310.0])), 5) == 6.11111
    # a zero label divides by 1e-7, as Keras
    np.testing.assert_allclose(L.mape([[0.0, 1.0]], [[1.0, 1.0]]).numpy(), [0.5e9], rtol=1e-6)
    assert round(float(L.log_cosh([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]]).numpy()
                       .mean()), 3) == 0.108
    # log_cosh stays finite far out (softplus form)
    np.testing.assert_allclose(L.log_cosh(np.array([[0.0]]), np.array([[1000.0]])).numpy(),
                               [1000 - math.log(2)], rtol=1e-9)
    # msle clips negatives to 1e-7
    np.testing.assert_allclose(L.msle([[-5.0]], [[1.0]]).numpy(),
                               [(math.log(2.0) - math.log1p(1e-7)) ** 2], rtol=1e-6)


def test_circle_masks_rows_without_a_positive():
    emb = _unit_rows(np.array([[1.0, 0.2], [0.9, 0.5], [-0.3, 1.0], [0.1, -1.0]]))
    labels = np.array([0, 0, 1, 2])  # rows 2 and 3: no positive once the diagonal is removed
    per = np_circle(labels, emb, gamma=2.0, margin=0.4)
    assert per[2] == 0.0 and per[3] == 0.0 and per[0] > 0
    got = L.circle(labels, emb, gamma=2.0, margin=0.4)
    np.testing.assert_allclose(got.numpy(), per, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(float(L.Circle(gamma=2.0)(labels, emb)), per[:2].mean(),
                               rtol=1e-5)
    np.testing.assert_allclose(float(L.Circle(gamma=2.0, reduction="sum")(labels, emb)),
                               per.sum(), rtol=1e-5)
    # with the diagonal, every row is its own positive
    keep = np_circle(labels, emb, remove_diagonal=False, gamma=2.0)
    assert np.all(keep > 0)
    np.testing.assert_allclose(float(L.Circle(gamma=2.0, remove_diagonal=False)(labels, emb)),
                               keep.mean(), rtol=1e-5)
    # labels (N, 1), reference embeddings and labels of their own
    ref = _unit_rows(_rng(4).normal(size=(5, 2)))
    ref_labels = np.array([0, 1, 2, 0, 1])
    np.testing.assert_allclose(
        L.circle(labels[:, None], emb, ref_labels=ref_labels, ref_embeddings=ref,
                 gamma=3.0).numpy(),
        np_circle(labels, emb, ref_labels, ref, gamma=3.0), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="embeddings of shape"):
        L.circle(labels, emb[None])
    with pytest.raises(ValueError, match="4 labels for 3 embeddings"):
        L.circle(labels, emb[:3])


def test_generalized_cross_entropy_labels():
    p = np.array([[0.25, 0.75], [0.36, 0.64]])
    np.testing.assert_allclose(L.categorical_generalized_cross_entropy([0, 1], p, 0.5)
                               .numpy(), [1.0, 0.4], rtol=1e-9)
    # labels (N, 1) are (N,) (Keras's one_hot would broadcast them against the classes)
    np.testing.assert_allclose(L.categorical_generalized_cross_entropy([[0], [1]], p, 0.5)
                               .numpy(), [1.0, 0.4], rtol=1e-9)
    np.testing.assert_allclose(float(L.CategoricalGeneralizedCrossEntropy()([0, 1], p)), 0.7,
                               rtol=1e-6)
    # towards q -> 0, the crossentropy
    np.testing.assert_allclose(L.categorical_generalized_cross_entropy([0, 1], p, 1e-6)
                               .numpy(), -np.log([0.25, 0.64]), rtol=1e-5)
    with pytest.raises(ValueError, match="class indices of 2 classes"):
        L.categorical_generalized_cross_entropy([0, 2], p, 0.5)
    with pytest.raises(ValueError, match="probabilities"):
        L.categorical_generalized_cross_entropy([0, 1], p * 3, 0.5)


# --- PyTorch's losses of the same formula --------------------------------------------------
def test_against_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    r = _rng(11)
    y, p = r.uniform(0, 4, (5, 6)), r.uniform(0.01, 4, (5, 6))
    want = F.poisson_nll_loss(torch.tensor(p), torch.tensor(y), log_input=False, full=False,
                              eps=1e-7, reduction="none").mean(-1).numpy()
    np.testing.assert_allclose(L.poisson(y, p).numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(float(L.Poisson()(y, p)), want.mean(), rtol=1e-5)
    a, b = r.normal(size=(5, 6)), r.normal(size=(5, 6))
    want = -F.cosine_similarity(torch.tensor(a), torch.tensor(b), dim=-1).numpy()
    np.testing.assert_allclose(L.cosine_similarity(a, b).numpy(), want, rtol=1e-10)
    want = -F.cosine_similarity(torch.tensor(a), torch.tensor(b), dim=0).numpy()
    np.testing.assert_allclose(L.cosine_similarity(a, b, axis=0).numpy(), want, rtol=1e-10)
    signs = np.where(r.random((5, 6)) > 0.5, 1.0, -1.0)
    margins = torch.clamp(1 - torch.tensor(signs) * torch.tensor(a), min=0)
    np.testing.assert_allclose(L.hinge(signs, a).numpy(), margins.mean(-1).numpy(), rtol=1e-10)
    np.testing.assert_allclose(L.hinge((signs + 1) / 2, a).numpy(), margins.mean(-1).numpy(),
                               rtol=1e-10)
    np.testing.assert_allclose(L.squared_hinge(signs, a).numpy(),
                               (margins ** 2).mean(-1).numpy(), rtol=1e-10)
    np.testing.assert_allclose(L.log_cosh(a, b).numpy(),
                               torch.log(torch.cosh(torch.tensor(b - a))).mean(-1).numpy(),
                               rtol=1e-10)
    want = F.mse_loss(torch.log1p(torch.tensor(p).clamp(min=1e-7)),
                      torch.log1p(torch.tensor(y).clamp(min=1e-7)), reduction="none").mean(-1)
    np.testing.assert_allclose(L.msle(y, p).numpy(), want.numpy(), rtol=1e-10)
    # binary focal from logits: torchvision's sigmoid_focal_loss, written out (moderate
    # logits, where Keras's clipping of the sigmoid changes nothing)
    x, t = torch.tensor(a), torch.tensor((signs + 1) / 2)
    prob = torch.sigmoid(x)
    ce = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    p_t = prob * t + (1 - prob) * (1 - t)
    focal = ce * (1 - p_t) ** 2
    np.testing.assert_allclose(L.binary_focal_crossentropy(t.numpy(), a, from_logits=True)
                               .numpy(), focal.mean(-1).numpy(), rtol=1e-8)
    alpha_t = 0.3 * t + 0.7 * (1 - t)
    np.testing.assert_allclose(
        L.binary_focal_crossentropy(t.numpy(), a, apply_class_balancing=True, alpha=0.3,
                                    from_logits=True).numpy(),
        (alpha_t * focal).mean(-1).numpy(), rtol=1e-8)
    # generalized cross entropy: gather the true class's probability
    probs = torch.softmax(torch.tensor(a), -1)
    labels = torch.tensor(r.integers(0, 6, 5))
    want = (1 - probs.gather(1, labels[:, None])[:, 0] ** 0.3) / 0.3
    np.testing.assert_allclose(L.categorical_generalized_cross_entropy(
        labels.numpy(), probs.numpy(), 0.3).numpy(), want.numpy(), rtol=1e-10)


# --- gradients -----------------------------------------------------------------------------
def test_gradients_by_finite_differences():
    r = _rng(12)
    a, b = r.normal(size=(3, 4)), r.normal(size=(3, 4))
    tape.check_gradients(lambda x: L.cosine_similarity(a, x), [b], order=1)
    tape.check_gradients(lambda x: L.log_cosh(a, x), [b], order=1)
    y = (r.random((3, 4)) > 0.5).astype(np.float64)
    tape.check_gradients(lambda x: L.binary_focal_crossentropy(
        y, x, apply_class_balancing=True, alpha=0.3, gamma=1.5, from_logits=True), [a], order=1)
    onehot = np.eye(4)[[0, 3, 1]]
    tape.check_gradients(lambda x: L.categorical_focal_crossentropy(
        onehot, x, from_logits=True, label_smoothing=0.1), [a], order=1)
    masks = (r.random((2, 3, 3)) > 0.5).astype(np.float64)
    probs = r.uniform(0.1, 0.9, (2, 3, 3))
    tape.check_gradients(lambda x: L.dice(masks, x, axis=(1, 2)), [probs], order=1)
    tape.check_gradients(lambda x: L.tversky(masks, x, alpha=0.3, beta=0.7), [probs], order=1)
    tape.check_gradients(lambda x: L.categorical_generalized_cross_entropy(
        [0, 3, 1], em.nn_ops.softmax(x), 0.6), [a], order=1)
    labels = np.array([0, 1, 0, 1, 2])
    emb = _unit_rows(r.normal(size=(5, 3)))
    tape.check_gradients(lambda x: L.circle(labels, x, gamma=2.0, margin=0.25), [emb],
                         order=1)


def test_circle_gradient_is_finite_with_empty_rows():
    emb = em.constant(_unit_rows(_rng(13).normal(size=(3, 2))))
    with tape.GradientTape() as t:
        t.watch(emb)
        v = L.Circle(gamma=8.0)(np.array([0, 0, 1]), emb)
    g = t.gradient(v, emb).numpy()
    assert np.all(np.isfinite(g)) and np.any(g != 0), g


# --- configs, names, strings, compile ------------------------------------------------------
CONFIGS = [
    (L.BinaryFocalCrossentropy, dict(apply_class_balancing=True, alpha=0.4, gamma=1.5,
                                     from_logits=True, label_smoothing=0.1, axis=-1)),
    (L.CategoricalFocalCrossentropy, dict(alpha=[0.2, 0.8], gamma=1.0, from_logits=True,
                                          label_smoothing=0.2, axis=-1)),
    (L.CategoricalHinge, {}), (L.Hinge, {}), (L.SquaredHinge, {}), (L.LogCosh, {}),
    (L.MeanAbsolutePercentageError, {}), (L.MeanSquaredLogarithmicError, {}), (L.Poisson, {}),
    (L.CosineSimilarity, dict(axis=0)), (L.Dice, dict(axis=[1, 2])),
    (L.Tversky, dict(alpha=0.2, beta=0.8, axis=1)),
    (L.Circle, dict(gamma=16.0, margin=0.3, remove_diagonal=False)),
    (L.CategoricalGeneralizedCrossEntropy, dict(q=0.3)),
]
KERAS_NAMES = {
    L.BinaryFocalCrossentropy: "binary_focal_crossentropy",
    L.CategoricalFocalCrossentropy: "categorical_focal_crossentropy",
    L.CategoricalHinge: "categorical_hinge", L.Hinge: "hinge", L.SquaredHinge: "squared_hinge",
    L.LogCosh: "log_cosh", L.MeanAbsolutePercentageError: "mean_absolute_percentage_error",
    L.MeanSquaredLogarithmicError: "mean_squared_logarithmic_error", L.Poisson: "poisson",
    L.CosineSimilarity: "cosine_similarity", L.Dice: "dice", L.Tversky: "tversky",
    L.Circle: "circle",
    L.CategoricalGeneralizedCrossEntropy: "categorical_generalized_cross_entropy",
}


@pytest.mark.parametrize("cls,kw", CONFIGS, ids=lambda c: getattr(c, "__name__", ""))
def test_config_round_trip(cls, kw):
    assert cls().name == KERAS_NAMES[cls]
    loss = cls(reduction="sum", name="mine", dtype="float64", **kw)
    config = loss.get_config()
    assert config == {"reduction": "sum", "name": "mine", "dtype": "float64", **kw}
    again = cls.from_config(config)
    assert again.get_config() == config and again.dtype == "float64"
    restored = nn.saving.deserialize_keras_object(nn.saving.serialize_keras_object(loss))
    assert type(restored) is cls and restored.get_config() == config
    default = cls().get_config()
    assert default["reduction"] == "sum_over_batch_size" and "dtype" not in default


# Keras 3's keras.losses.ALL_OBJECTS_DICT names of these losses
STRINGS = {
    "BinaryFocalCrossentropy": L.BinaryFocalCrossentropy,
    "binary_focal_crossentropy": L.BinaryFocalCrossentropy,
    "CategoricalFocalCrossentropy": L.CategoricalFocalCrossentropy,
    "categorical_focal_crossentropy": L.CategoricalFocalCrossentropy,
    "CategoricalHinge": L.CategoricalHinge, "categorical_hinge": L.CategoricalHinge,
    "Circle": L.Circle, "circle": L.Circle,
    "CosineSimilarity": L.CosineSimilarity, "cosine_similarity": L.CosineSimilarity,
    "Dice": L.Dice, "dice": L.Dice, "Hinge": L.Hinge, "hinge": L.Hinge,
    "LogCosh": L.LogCosh, "log_cosh": L.LogCosh,
    "MeanAbsolutePercentageError": L.MeanAbsolutePercentageError,
    "mean_absolute_percentage_error": L.MeanAbsolutePercentageError,
    "mape": L.MeanAbsolutePercentageError, "MAPE": L.MeanAbsolutePercentageError,
    "MeanSquaredLogarithmicError": L.MeanSquaredLogarithmicError,
    "mean_squared_logarithmic_error": L.MeanSquaredLogarithmicError,
    "msle": L.MeanSquaredLogarithmicError, "MSLE": L.MeanSquaredLogarithmicError,
    "Poisson": L.Poisson, "poisson": L.Poisson,
    "SquaredHinge": L.SquaredHinge, "squared_hinge": L.SquaredHinge,
    "Tversky": L.Tversky, "tversky": L.Tversky,
    "bce": L.BinaryCrossentropy, "BCE": L.BinaryCrossentropy, "KLD": L.KLDivergence,
    "MAE": L.MeanAbsoluteError, "MSE": L.MeanSquaredError,
    "MeanSquaredError": L.MeanSquaredError, "CTC": L.CTC,
}


def test_get_strings():
    for name, cls in STRINGS.items():
        got = L._for_compile(name)  # compile's object
        assert type(got) is cls, name
        assert got.get_config() == cls().get_config()
        # keras.losses.get: a class name gives an instance, a function name the function
        got = L.get(name)
        function = name[0].islower() or name in ("MAPE", "MSLE", "BCE", "KLD", "MSE", "MAE")
        assert (not isinstance(got, L.Loss)) if function else type(got) is cls, name
    # exported by keras.losses but not in its ALL_OBJECTS_DICT: no string, as Keras
    with pytest.raises(ValueError, match="unknown loss"):
        L.get("categorical_generalized_cross_entropy")
    # tf.keras's short names of the functions
    assert L.MAPE is L.mape is L.mean_absolute_percentage_error
    assert L.MSLE is L.msle is L.mean_squared_logarithmic_error
    assert L.KLD is L.kld is L.kullback_leibler_divergence is L.kl_divergence
    assert L.logcosh is L.log_cosh
    for name in ("Hinge", "hinge", "Dice", "tversky", "circle", "MAPE", "logcosh"):
        assert name in L.__all__


@pytest.mark.parametrize("loss,activation,units,labels", [
    ("hinge", None, 3, "binary"), ("squared_hinge", None, 3, "binary"),
    ("categorical_hinge", None, 3, "onehot"), ("poisson", "softplus", 3, "counts"),
    ("mape", None, 3, "counts"), ("msle", "softplus", 3, "counts"),
    ("log_cosh", None, 3, "counts"), ("cosine_similarity", None, 3, "counts"),
    ("binary_focal_crossentropy", "sigmoid", 3, "binary"),
    ("categorical_focal_crossentropy", "softmax", 3, "onehot"),
    ("tversky", "sigmoid", 3, "binary"),
])
def test_compile_string(loss, activation, units, labels):
    r = _rng(14)
    x = r.normal(size=(8, 4)).astype(np.float32)
    y = {"binary": (r.random((8, units)) > 0.5), "onehot": np.eye(units)[r.integers(0, units, 8)],
         "counts": r.integers(1, 5, (8, units))}[labels].astype(np.float32)
    # a sample weight per example; tversky's one value for the batch takes none (see
    # test_dice_and_tversky_axis)
    sw = r.uniform(0.5, 2.0, 8).astype(np.float32) if loss != "tversky" else None
    model = nn.Sequential([nn.layers.Dense(units, activation=activation, input_shape=(4,))])
    model.compile(nn.optimizers.SGD(0.0), loss=loss)
    logs = model.train_step(x, y, sw)
    pred = model(em.constant(x)).numpy().astype(np.float64)
    ref = {"hinge": np_hinge, "squared_hinge": np_squared_hinge,
           "categorical_hinge": np_categorical_hinge, "poisson": np_poisson, "mape": np_mape,
           "msle": np_msle, "log_cosh": np_log_cosh, "cosine_similarity": np_cosine,
           "binary_focal_crossentropy": np_binary_focal,
           "categorical_focal_crossentropy": np_categorical_focal,
           "tversky": np_tversky}[loss]
    per = ref(y.astype(np.float64), pred)
    want = (per * sw).sum() / per.size if sw is not None else per
    np.testing.assert_allclose(logs["loss"], want, rtol=1e-4)


def test_compile_fit_learns_with_hinge():
    r = _rng(15)
    x = r.normal(size=(64, 2)).astype(np.float32)
    y = (x[:, :1] + x[:, 1:] > 0).astype(np.float32)  # 0/1 labels, taken as -1/1
    model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,))])
    model.compile(nn.optimizers.SGD(0.1), loss="hinge")
    hist = model.fit(x, y, epochs=20, batch_size=16, verbose=0)
    assert hist.history["loss"][-1] < hist.history["loss"][0]
    assert np.mean((model(em.constant(x)).numpy() > 0) == (y > 0.5)) > 0.9


# --- refused arguments ---------------------------------------------------------------------
@pytest.mark.parametrize("make,match", [
    (lambda: L.Hinge(reduction="average"), "unknown reduction"),
    (lambda: L.Poisson(dtype="int32"), "floating dtype"),
    (lambda: L.BinaryFocalCrossentropy(alpha=0.5), "alpha=0.5 weighs the classes only"),
    (lambda: L.binary_focal_crossentropy([[1.0]], [[0.5]], alpha=0.9), "alpha=0.9"),
    (lambda: L.BinaryFocalCrossentropy(apply_class_balancing=True, alpha=1.5),
     r"alpha must be in \[0.0, 1.0\]"),
    (lambda: L.BinaryFocalCrossentropy(gamma="2"), "gamma must be a real number"),
    (lambda: L.BinaryFocalCrossentropy(gamma=-1.0), "gamma must be >= 0.0"),
    (lambda: L.BinaryFocalCrossentropy(from_logits="yes"), "from_logits must be True or False"),
    (lambda: L.BinaryFocalCrossentropy(apply_class_balancing=1),
     "apply_class_balancing must be True or False"),
    (lambda: L.CategoricalFocalCrossentropy(label_smoothing=1.5), "label_smoothing must be in"),
    (lambda: L.CategoricalFocalCrossentropy(axis=True), "axis must be an integer"),
    (lambda: L.CategoricalFocalCrossentropy(alpha=["a"]), "alpha must be a real number"),
    (lambda: L.CosineSimilarity(axis=1.0), "axis must be an integer"),
    (lambda: L.Dice(axis=(1, 2.5)), "axis must be an integer"),
    (lambda: L.Tversky(alpha=None), "alpha must be a real number"),
    (lambda: L.Circle(remove_diagonal="no"), "remove_diagonal must be True or False"),
    (lambda: L.Circle(margin=float("nan")), "margin must be a real number"),
    (lambda: L.CategoricalGeneralizedCrossEntropy(q=1.0), r"q must be in the interval \(0, 1\)"),
    (lambda: L.CategoricalGeneralizedCrossEntropy(q=0.0), r"q must be in the interval \(0, 1\)"),
    (lambda: L.categorical_generalized_cross_entropy([0], [[1.0, 0.0]], 0.0), "q must be > 0"),
    (lambda: L.hinge(np.ones((4, 2)), np.ones((4, 3))), "shape"),
    (lambda: L.Poisson()(np.ones((4, 2)), np.ones((4, 3))), "shape"),
    (lambda: L.cosine_similarity(np.ones((4, 2)), np.ones((4, 2)), axis=2), "axis 2 is out"),
])
def test_bad_arguments_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()

"""The confusion-matrix metrics (``TruePositives`` ... ``Precision``, ``Recall``) against a
numpy reference of Keras 3's definition (labels positive when nonzero, predictions
positive strictly above a threshold, counts weighted by ``sample_weight``), on every test
backend; their arguments are honoured or refused by name, their state is checkpointed, and
a compiled model logs them from a traced ``fit`` that reads nothing back on a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import nn

M = nn.metrics
COUNTS = {"TruePositives": "tp", "FalsePositives": "fp", "TrueNegatives": "tn",
          "FalseNegatives": "fn"}
NAMES = [*COUNTS, "Precision", "Recall"]
rng = np.random.default_rng(5)
Y = (rng.random(60) < 0.3).astype(np.float32)
Y[:3] = [0.25, 2.0, -1.0]  # nonzero labels are positive, whatever their value
P = rng.random(60).astype(np.float32)
P[3:6] = [0.5, 0.3, 1.0]  # on a threshold: not above it
W = rng.random(60).astype(np.float32)


def _reference(name, y, p, thresholds, w=None):
    """Keras 3's counts (and ratios) per threshold: predictions against float32 thresholds,
    counts in float64."""
    w = np.ones_like(p, np.float64) if w is None else np.broadcast_to(w, p.shape)
    pos, out = (y != 0).ravel(), []
    for t in thresholds:
        above = (p > np.float32(t)).ravel()
        c = {"tp": pos & above, "fp": ~pos & above, "tn": ~pos & ~above, "fn": pos & ~above}
        n = {k: float((v * w.ravel()).sum()) for k, v in c.items()}
        if name in COUNTS:
            out.append(n[COUNTS[name]])
        else:
            den = n["tp"] + (n["fp"] if name == "Precision" else n["fn"])
            out.append(n["tp"] / den if den else 0.0)
    return np.array(out)


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
@pytest.mark.parametrize("thresholds", [None, 0.3, [0.0, 0.3, 0.5, 1.0], [0.7]],
                         ids=["default", "one", "several", "list_of_one"])
@pytest.mark.parametrize("name", NAMES)
def test_counts_and_ratios_are_keras_definition(name, thresholds, weighted):
    m = getattr(M, name)(thresholds=thresholds)
    for lo, hi in ((0, 40), (40, 60)):  # two updates accumulate
        m.update_state(em.constant(Y[lo:hi]), em.constant(P[lo:hi]),
                       sample_weight=em.constant(W[lo:hi]) if weighted else None)
    ts = [0.5] if thresholds is None else np.atleast_1d(thresholds).tolist()
    want = _reference(name, Y, P, ts, W if weighted else None)
    got = m.result()
    assert got.dtype == np.float32
    assert got.shape == (() if len(ts) == 1 else (len(ts),))  # Keras: scalar for one
    np.testing.assert_allclose(np.atleast_1d(got.numpy()), want, rtol=1e-6)
    m.reset_state()
    assert not np.any(m.result().numpy())  # 0 before any update, ratios too


@pytest.mark.parametrize("name", ["Precision", "Recall"])
def test_top_k_and_class_id_count_as_keras_does(name):
    y = (rng.random((12, 5)) < 0.4).astype(np.float32)
    p = rng.random((12, 5)).astype(np.float32)
    top2 = p >= np.sort(p, -1)[:, -2:-1]  # each row's two largest
    for kw, pred, lab in (
            ({"top_k": 2}, top2, y),  # no thresholds: every top-k prediction is positive
            ({"top_k": 2, "thresholds": 0.5}, top2 & (p > 0.5), y),
            ({"class_id": 3}, p[:, 3] > 0.5, y[:, 3]),
            ({"top_k": 1, "class_id": 2}, (p >= p.max(-1, keepdims=True))[:, 2], y[:, 2])):
        m = getattr(M, name)(**kw)
        m.update_state(em.constant(y), em.constant(p))
        tp = float((pred & (lab != 0)).sum())
        den = float(pred.sum()) if name == "Precision" else float((lab != 0).sum())
        np.testing.assert_allclose(float(m.result()), tp / den if den else 0.0, rtol=1e-6,
                                   err_msg=str(kw))


def test_labels_of_one_column_and_per_example_weights_line_up():
    m = M.TruePositives()
    m.update_state(em.constant(Y[:, None]), em.constant(P), sample_weight=em.constant(W[:, None]))
    np.testing.assert_allclose(float(m.result()), _reference("TruePositives", Y, P, [0.5], W)[0],
                               rtol=1e-6)
    y2 = np.stack([Y, Y[::-1]], 1)
    p2 = np.stack([P, P[::-1]], 1)
    m = M.FalsePositives()
    m.update_state(em.constant(y2), em.constant(p2), sample_weight=em.constant(W))
    want = _reference("FalsePositives", y2, p2, [0.5], np.repeat(W[:, None], 2, 1))
    np.testing.assert_allclose(float(m.result()), want[0], rtol=1e-6)


def test_bad_arguments_are_refused_by_name():
    for kw, match in (({"thresholds": 1.5}, "thresholds must be"),
                      ({"thresholds": [0.2, -0.1]}, "thresholds must be"),
                      ({"thresholds": []}, "thresholds must be"),
                      ({"thresholds": "0.5"}, "thresholds must be"),
                      ({"top_k": 0}, "top_k must be a positive"),
                      ({"class_id": -1}, "class_id must be a non-negative")):
        with pytest.raises(ValueError, match=match):
            M.Precision(**kw)
    with pytest.raises(TypeError):
        M.TruePositives(top_k=2)  # the counts take no top_k, as Keras's
    m = M.Recall(class_id=7)
    with pytest.raises(ValueError, match="class_id 7 is not a column"):
        m.update_state(em.constant(np.ones((2, 3))), em.constant(np.ones((2, 3))))
    with pytest.raises(ValueError, match="must have one shape"):
        M.Precision().update_state(em.constant(np.ones(4)), em.constant(np.ones(5)))


def test_names_configs_and_checkpoints():
    for name in NAMES:
        snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
        for key in (name, snake):
            m = M.get(key)
            assert type(m) is getattr(M, name) and m.name == snake  # Keras's default name
    m = M.Precision(thresholds=[0.2, 0.6], class_id=1, name="p")
    assert m.get_config() == {"name": "p", "dtype": "float32", "thresholds": [0.2, 0.6],
                              "top_k": None, "class_id": 1}
    again = M.Precision.from_config(m.get_config())
    assert again.get_config() == m.get_config()
    y, p = em.constant(np.stack([Y, Y], 1)), em.constant(np.stack([P, P], 1))
    m.update_state(y, p)
    assert sorted(m.__checkpoint_children__()) == ["false_positives", "true_positives"]
    for mine, theirs in zip(m.variables, again.variables):
        theirs.assign(mine.value())
    np.testing.assert_array_equal(again.result().numpy(), m.result().numpy())


def test_a_compiled_model_logs_them_from_a_traced_fit_reading_nothing_back(backend):
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = (x[:, :1] > 0.3).astype(np.float32)
    model = nn.Sequential([nn.layers.Dense(1, activation="sigmoid", input_shape=(4,))])
    model.compile(nn.optimizers.Adam(0.05), "binary_crossentropy",
                  metrics=["precision", M.Recall(name="r"), M.FalseNegatives(name="fn"),
                           "auc"])
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0)
    for key in ("precision", "r", "fn", "auc"):
        assert len(history.history[key]) == 3
    p = model.predict(x, verbose=0)
    logs = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
    pred, pos = p[:, 0] > 0.5, y[:, 0] != 0
    np.testing.assert_allclose(logs["fn"], float((pos & ~pred).sum()))
    np.testing.assert_allclose(logs["r"], (pos & pred).sum() / pos.sum(), rtol=1e-6)
    counters = getattr(em.get_device(backend).backend, "counters", None)
    if counters is None:
        return  # (the transfer counters are the strict GPU double's)
    plain = nn.Sequential([nn.layers.Dense(1, activation="sigmoid", input_shape=(4,))])
    plain.compile(nn.optimizers.Adam(0.05), "binary_crossentropy", metrics=["accuracy"])
    xs, ys = em.constant(x), em.constant(y)
    syncs = []
    for m in (plain, model):
        m.fit(xs, ys, batch_size=16, epochs=1, verbose=0)  # (traced already for model)
        counters.reset()
        m.fit(xs, ys, batch_size=16, epochs=3, verbose=0)
        syncs.append((counters.syncs, counters.to_host))
    # the epoch logs are read once an epoch either way: the counts add no read a step
    assert syncs[1] == syncs[0], syncs


def _mann_whitney(y, p, w=None):
    """The exact ROC AUC: the (weighted) chance that a positive scores above a negative,
    ties counting half."""
    w = np.ones_like(p, np.float64) if w is None else w.astype(np.float64)
    pos, neg = y != 0, y == 0
    above = (p[pos][:, None] > p[neg][None, :]) + 0.5 * (p[pos][:, None] == p[neg][None, :])
    pair = w[pos][:, None] * w[neg][None, :]
    return float((above * pair).sum() / pair.sum())


def test_auc_approaches_the_exact_roc_auc_and_bounds_its_sums():
    y = (rng.random(400) < 0.3).astype(np.float32)
    p = np.clip(rng.random(400) * 0.7 + y * 0.25, 0, 1).astype(np.float32)
    w = rng.random(400).astype(np.float32)
    for sw in (None, w):
        m = M.AUC(num_thresholds=4001)
        m.update_state(em.constant(y), em.constant(p),
                       sample_weight=None if sw is None else em.constant(sw))
        np.testing.assert_allclose(float(m.result()), _mann_whitney(y, p, sw), atol=2e-3)
    sums = {}
    for method in ("minoring", "interpolation", "majoring"):
        for curve in ("ROC", "PR"):
            m = M.AUC(num_thresholds=20, curve=curve, summation_method=method)
            m.update_state(em.constant(y), em.constant(p))
            sums[curve, method] = float(m.result())
    for curve in ("ROC", "PR"):
        assert sums[curve, "minoring"] <= sums[curve, "interpolation"] <= \
            sums[curve, "majoring"], sums
    perfect = M.AUC(curve="PR")
    perfect.update_state(em.constant(y), em.constant(y * 0.9 + 0.05))
    np.testing.assert_allclose(float(perfect.result()), 1.0, atol=1e-6)
    inverted = M.AUC()
    inverted.update_state(em.constant(y), em.constant(0.95 - y * 0.9))
    np.testing.assert_allclose(float(inverted.result()), 0.0, atol=1e-6)


def test_auc_takes_logits_label_weights_and_thresholds_as_keras():
    y = (rng.random((40, 3)) < 0.4).astype(np.float32)
    logits = rng.standard_normal((40, 3)).astype(np.float32) * 3
    a, b = M.AUC(from_logits=True), M.AUC()
    a.update_state(em.constant(y), em.constant(logits))
    b.update_state(em.constant(y), em.constant(1 / (1 + np.exp(-logits))))
    np.testing.assert_allclose(float(a.result()), float(b.result()), rtol=1e-6)
    # a label weighted 0 counts nowhere: as if its column were not there
    c, d = M.AUC(label_weights=[1.0, 0.0, 2.0]), M.AUC()
    c.update_state(em.constant(y), em.constant(b_p := 1 / (1 + np.exp(-logits))))
    keep = [0, 2, 2]  # column 2 weighs 2: counted twice
    d.update_state(em.constant(y[:, keep]), em.constant(b_p[:, keep]))
    np.testing.assert_allclose(float(c.result()), float(d.result()), rtol=1e-6)
    e = M.AUC(thresholds=[0.7, 0.2])
    assert e.num_thresholds == 4 and e.thresholds == [-1e-7, 0.2, 0.7, 1.0 + 1e-7]
    assert e.get_config()["thresholds"] == [0.2, 0.7]
    assert M.AUC.from_config(e.get_config()).get_config() == e.get_config()
    assert M.get("auc").name == "auc" and M.get("AUC").name == "auc"  # Keras's name
    for kw, match in (({"curve": "XY"}, "curve must be"),
                      ({"summation_method": "midpoint"}, "summation_method must be"),
                      ({"num_thresholds": 1}, "num_thresholds must be"),
                      ({"num_labels": 3}, "num_labels is needed only"),
                      ({"label_weights": [1.0, -1.0]}, "label_weights must be")):
        with pytest.raises(ValueError, match=match):
            M.AUC(**kw)
    with pytest.raises(NotImplementedError, match="multi_label"):
        M.AUC(multi_label=True)
    with pytest.raises(ValueError, match="label_weights for y_pred"):
        M.AUC(label_weights=[1.0, 2.0]).update_state(em.constant(y), em.constant(b_p))


def test_top_k_keeps_exactly_k_of_tied_scores():
    """Keras's ``_filter_top_k`` keeps the k indices ``top_k`` returns (of ties, the first):
    Keras 3.15.1 gives Precision(top_k=1) = 1.0 here; a ``>=`` the k-th value kept both
    0.9s (0.5). Found by a parity sweep against Keras."""
    m = nn.metrics.Precision(top_k=1)
    m.update_state([[1.0, 0.0, 0.0]], [[0.9, 0.9, 0.1]])
    assert float(m.result()) == 1.0
    r = nn.metrics.Recall(top_k=2)  # row 0 keeps columns 0, 1; row 1 keeps 1, 2
    r.update_state([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], [[0.5, 0.5, 0.5], [0.2, 0.9, 0.9]])
    assert float(r.result()) == pytest.approx(1 / 3)

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
                  metrics=["precision", M.Recall(name="r"), M.FalseNegatives(name="fn")])
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0)
    for key in ("precision", "r", "fn"):
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

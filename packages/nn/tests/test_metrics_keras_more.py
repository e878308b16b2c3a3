"""Keras 3's metrics that ``ember.nn.metrics`` gained (top-k accuracies, MAPE, MSLE, RMSE,
the crossentropies, cosine similarity, log-cosh, the hinges, KL divergence, Poisson,
``MeanMetricWrapper``, R2, the F-scores, the IoU family, the correlations, the metrics at
an operating point, and Keras's metric functions) against Keras 3's own results.

The expected numbers are Keras 3.15.1's (``KERAS_BACKEND=torch``, on the CPU), pasted as
literals: each metric got the batches ``data(kind, 1)`` and ``data(kind, 2)`` below, the
first unweighted and the second with its weights, and, afresh, the first with its
weights; each function got ``data(kind, 1)``. IoU's weights are integers (Keras's IoU
counts in int32 by default, cutting fractional weights; ember counts them as they are).
``SparseCategoricalCrossentropy(ignore_class)`` unweighted is Keras's result with weights
of 1 (Keras 3.15 counts an ignored example as a 0 when no weights are given; ember leaves
it out, as Keras does with weights).

Every test runs on each test backend (``cpu`` and the strict GPU double, where an update
must read nothing back).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ember.core as em
from ember import nn
from ember.nn.layers._masks import set_mask

M = nn.metrics


def data(kind, seed):
    """Inputs ``(y_true, y_pred, sample_weight)`` of one batch of ``kind`` (numpy, seeded:
    the same arrays went to Keras)."""
    rng = np.random.default_rng(seed)
    n = 6 if seed % 2 else 5
    w = np.round(rng.uniform(0.0, 2.0, n), 1).astype(np.float32)
    f32 = np.float32

    def probs(shape):
        z = rng.normal(0, 1.5, shape)
        return (np.exp(z) / np.exp(z).sum(-1, keepdims=True)).astype(f32)

    if kind == "reg":
        return (np.round(rng.uniform(0.1, 2.0, (n, 3)), 2).astype(f32),
                np.round(rng.uniform(0.0, 2.5, (n, 3)), 2).astype(f32), w)
    if kind == "prob_bin":
        return ((rng.random((n, 3)) < 0.5).astype(f32),
                np.round(rng.uniform(0.02, 0.98, (n, 3)), 2).astype(f32), w)
    if kind == "logits_bin":
        return ((rng.random((n, 3)) < 0.5).astype(f32),
                np.round(rng.normal(0, 2, (n, 3)), 2).astype(f32), w)
    if kind in ("onehot", "onehot_logits", "sparse", "sparse_logits", "sorted_ids"):
        ids = rng.integers(0, 6, n)
        if kind.endswith("logits"):
            p = np.round(rng.normal(0, 2, (n, 6)), 2).astype(f32)
        else:
            p = np.round(probs((n, 6)), 2).astype(f32)  # (zeros among them)
        if kind == "sorted_ids":
            p = np.argsort(-p, -1, kind="stable").astype(np.int32)
        if kind.startswith("onehot"):
            return np.eye(6, dtype=f32)[ids], p, w
        return ids.astype(np.int32), p, w
    if kind == "dist":
        return probs((n, 4)), probs((n, 4)), w
    if kind == "hinge01":
        return ((rng.random((n, 3)) < 0.5).astype(f32),
                np.round(rng.uniform(-1.5, 1.5, (n, 3)), 2).astype(f32), w)
    if kind == "hinge_pm":
        return (np.where(rng.random((n, 3)) < 0.5, -1.0, 1.0).astype(f32),
                np.round(rng.uniform(-1.5, 1.5, (n, 3)), 2).astype(f32), w)
    if kind == "counts":
        return (rng.integers(0, 5, (n, 3)).astype(f32),
                np.round(rng.uniform(0.1, 4.0, (n, 3)), 2).astype(f32), w)
    if kind == "r2":
        y = np.round(rng.normal(0, 1, (n, 2)), 2).astype(f32)
        return y, np.round(y + rng.normal(0, 0.5, (n, 2)), 2).astype(f32), w
    if kind == "corr":
        y = np.round(rng.normal(0, 1, (n, 4)), 2).astype(f32)
        return y, np.round(y * 0.5 + rng.normal(0, 0.7, (n, 4)), 2).astype(f32), w
    if kind == "multilabel":
        return ((rng.random((2 * n, 4)) < 0.4).astype(f32),
                np.round(rng.random((2 * n, 4)), 2).astype(f32),
                np.round(rng.uniform(0.0, 2.0, 2 * n), 1).astype(f32))
    if kind in ("binary1d", "binary_iou"):
        y = (rng.random(4 * n) < 0.4).astype(f32)
        p = np.round(np.clip(rng.random(4 * n) * 0.8 + y * 0.25, 0, 1), 3).astype(f32)
        if kind == "binary_iou":  # integers: Keras's IoU counts in int32
            return y, p, rng.integers(0, 4, 4 * n).astype(f32)
        return y, p, np.round(rng.uniform(0.0, 2.0, 4 * n), 1).astype(f32)
    if kind in ("seg", "seg_onehot"):
        y = rng.integers(0, 4, (n, 3))
        p = np.where(rng.random((n, 3)) < 0.6, y, rng.integers(0, 4, (n, 3)))
        wi = rng.integers(0, 4, (n, 3)).astype(f32)  # integers: Keras's IoU counts in int32
        if kind == "seg_onehot":
            return np.eye(4, dtype=f32)[y], np.eye(4, dtype=f32)[p] * 0.8 + 0.05, wi
        return y.astype(np.int32), p.astype(np.int32), wi
    raise ValueError(kind)


# (class, constructor arguments, inputs, Keras 3.15.1's results: one batch, then a
# second weighted one, and the first weighted); MeanMetricWrapper's fn is named
CASES = [
    ("TopKCategoricalAccuracy", {}, "onehot", (1.0, 1.0, 1.0)),
    ("TopKCategoricalAccuracy", {"k": 2}, "onehot", (0.5, 0.5742574334144592, 0.4615384340286255)),
    ("SparseTopKCategoricalAccuracy", {}, "sparse", (1.0, 1.0, 1.0)),
    ("SparseTopKCategoricalAccuracy", {"k": 2}, "sparse", (0.5, 0.5742574334144592,
     0.4615384340286255)),
    ("SparseTopKCategoricalAccuracy", {"k": 2, "from_sorted_ids": True}, "sorted_ids",
     (0.3333333432674408, 0.4752475321292877, 0.16923075914382935)),
    ("MeanAbsolutePercentageError", {}, "reg", (109.59747314453125, 129.77896118164062,
     137.97389221191406)),
    ("MeanSquaredLogarithmicError", {}, "reg", (0.1677962988615036, 0.19759245216846466,
     0.195011168718338)),
    ("RootMeanSquaredError", {}, "reg", (0.8587717413902283, 0.9216904640197754, 0.9536343216896057)),
    ("BinaryCrossentropy", {}, "prob_bin", (1.0744277238845825, 0.8833686709403992,
     1.0572303533554077)),
    ("BinaryCrossentropy", {"from_logits": True, "label_smoothing": 0.1}, "logits_bin",
     (1.0226380825042725, 1.041704773902893, 0.9213040471076965)),
    ("CategoricalCrossentropy", {}, "onehot", (2.1634607315063477, 2.211075782775879,
     2.367051839828491)),
    ("CategoricalCrossentropy", {"from_logits": True, "label_smoothing": 0.2}, "onehot_logits",
     (2.6578691005706787, 2.3801400661468506, 2.839942693710327)),
    ("SparseCategoricalCrossentropy", {}, "sparse", (2.1634607315063477, 2.211075782775879,
     2.367051839828491)),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, "sparse_logits", (2.557257890701294,
     2.279179573059082, 2.811373233795166)),
    ("SparseCategoricalCrossentropy", {"ignore_class": 2}, "sparse", (1.99501633644104,
     2.1237564086914062, 2.103269338607788)),
    ("CosineSimilarity", {}, "reg", (0.8547296524047852, 0.8186926245689392, 0.8695663213729858)),
    ("LogCoshError", {}, "reg", (0.31272104382514954, 0.35452523827552795, 0.38008585572242737)),
    ("Hinge", {}, "hinge01", (1.0800000429153442, 0.9164026379585266, 1.030512809753418)),
    ("Hinge", {}, "hinge_pm", (1.0288889408111572, 1.170164942741394, 1.0844101905822754)),
    ("SquaredHinge", {}, "hinge01", (1.9206444025039673, 1.509028673171997, 1.8937121629714966)),
    ("CategoricalHinge", {}, "onehot", (1.3183332681655884, 1.2527722120285034, 1.4192306995391846)),
    ("KLDivergence", {}, "dist", (0.8707625865936279, 0.9893341660499573, 0.7370628118515015)),
    ("Poisson", {}, "counts", (0.7276363968849182, 0.8440179824829102, 0.6181508302688599)),
    ("MeanMetricWrapper", {"fn": "hinge"}, "hinge01", (1.0800000429153442, 0.9164026379585266,
     1.030512809753418)),
    ("MeanMetricWrapper", {"fn": "top_k_categorical_accuracy", "k": 2}, "onehot", (0.5,
     0.5742574334144592, 0.4615384340286255)),
    ("R2Score", {}, "r2", (-1.1318888664245605, 0.0003803670406341553, -1.6622051000595093)),
    ("R2Score", {"class_aggregation": "variance_weighted_average"}, "r2", (-1.173598051071167,
     0.009164631366729736, -1.699504017829895)),
    ("R2Score", {"class_aggregation": None}, "r2", ([-1.6953849792480469, -0.5683927536010742],
     [0.035906851291656494, -0.035146117210388184], [-1.7838637828826904, -1.5405464172363281])),
    ("R2Score", {"num_regressors": 2}, "r2", (-1.6056418418884277, -0.10484278202056885,
     -2.2538063526153564)),
    ("F1Score", {}, "multilabel", ([0.0, 0.2857142388820648, 0.3999999463558197, 0.6666666269302368],
     [0.0, 0.3106795847415924, 0.2985073924064636, 0.42105257511138916], [0.0, 0.5555554628372192,
     0.39252331852912903, 0.8421051502227783])),
    ("F1Score", {"average": "macro", "threshold": 0.5}, "multilabel", (0.4761904180049896,
     0.3513313829898834, 0.5753044486045837)),
    ("F1Score", {"average": "micro"}, "multilabel", (0.3571428060531616, 0.27118638157844543,
     0.46762582659721375)),
    ("F1Score", {"average": "weighted", "threshold": 0.4}, "multilabel", (0.4359787702560425,
     0.4072481095790863, 0.4843590259552002)),
    ("FBetaScore", {"beta": 2.0, "threshold": 0.5}, "multilabel", ([0.3333333134651184,
     0.4166666269302368, 0.625, 0.8333333730697632], [0.395833283662796, 0.39393937587738037,
     0.5089057683944702, 0.3731342852115631], [0.5128205418586731, 0.6553398370742798,
     0.6116207838058472, 0.9302325248718262])),
    ("IoU", {"num_classes": 4, "target_class_ids": [0, 2]}, "seg", (0.699999988079071,
     0.5833333730697632, 0.6818181872367859)),
    ("MeanIoU", {"num_classes": 4}, "seg", (0.6833333373069763, 0.5011904835700989,
     0.6460561752319336)),
    ("MeanIoU", {"num_classes": 4, "ignore_class": 1}, "seg", (0.6571428775787354, 0.38374125957489014,
     0.6323232650756836)),
    ("BinaryIoU", {}, "binary_iou", (0.4097222089767456, 0.46468251943588257, 0.35426265001296997)),
    ("BinaryIoU", {"target_class_ids": [1], "threshold": 0.3}, "binary_iou", (0.3809523284435272,
     0.4285713732242584, 0.3611110746860504)),
    ("OneHotIoU", {"num_classes": 4, "target_class_ids": [1, 3]}, "seg_onehot", (0.6666666269302368,
     0.41904765367507935, 0.6102941036224365)),
    ("OneHotMeanIoU", {"num_classes": 4}, "seg_onehot", (0.6833333373069763, 0.5011904835700989,
     0.6460561752319336)),
    ("PearsonCorrelation", {}, "corr", (0.43189501762390137, 0.4484356939792633, 0.4153808057308197)),
    ("ConcordanceCorrelation", {}, "corr", (0.3439713418483734, 0.32560405135154724,
     0.35585924983024597)),
    ("SensitivityAtSpecificity", {"specificity": 0.6}, "binary1d", (0.6666666865348816,
     0.7538461685180664, 0.693069338798523)),
    ("SensitivityAtSpecificity", {"specificity": 0.75, "num_thresholds": 7}, "binary1d",
     (0.4444444477558136, 0.4923076927661896, 0.3762376606464386)),
    ("SpecificityAtSensitivity", {"sensitivity": 0.7}, "binary1d", (0.4000000059604645,
     0.6917562484741211, 0.2645162045955658)),
    ("PrecisionAtRecall", {"recall": 0.5}, "binary1d", (0.5555555820465088, 0.5222222208976746,
     0.59375)),
    ("PrecisionAtRecall", {"recall": 0.5, "class_id": 2}, "multilabel", (0.5, 0.35789474844932556,
     0.4873949885368347)),
    ("RecallAtPrecision", {"precision": 0.7}, "binary1d", (0.4444444477558136, 0.4923076927661896,
     0.3762376606464386)),
    ("RecallAtPrecision", {"precision": 0.6, "num_thresholds": 1}, "binary1d", (0.0, 0.0, 0.0)),
]

# (function, its arguments, inputs, Keras 3.15.1's values on data(kind, 1))
FUNCTION_CASES = [
    ("binary_accuracy", {}, "prob_bin", [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0,
     1.0], [0.0, 1.0, 1.0], [0.0, 1.0, 0.0]]),
    ("binary_accuracy", {"threshold": 0.3}, "prob_bin", [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0,
     1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]),
    ("categorical_accuracy", {}, "onehot", [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
    ("sparse_categorical_accuracy", {}, "sparse", [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
    ("top_k_categorical_accuracy", {"k": 2}, "onehot", [0.0, 0.0, 1.0, 1.0, 0.0, 1.0]),
    ("sparse_top_k_categorical_accuracy", {"k": 3}, "sparse", [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]),
    ("sparse_top_k_categorical_accuracy", {"k": 2, "from_sorted_ids": True}, "sorted_ids", [0.0, 0.0,
     1.0, 0.0, 0.0, 1.0]),
    ("binary_crossentropy", {}, "prob_bin", [1.3061479330062866, 1.4733120203018188,
     0.4237414598464966, 0.28700724244117737, 1.3548250198364258, 1.6015323400497437]),
    ("binary_crossentropy", {"from_logits": True, "label_smoothing": 0.2}, "logits_bin",
     [1.5131220817565918, 0.9636791348457336, 0.6103615164756775, 0.3884725570678711,
     1.6923998594284058, 1.0874601602554321]),
    ("binary_focal_crossentropy", {}, "prob_bin", [0.9127067923545837, 1.1110152006149292,
     0.0740155279636383, 0.030020756646990776, 0.9188531041145325, 1.1628950834274292]),
    ("binary_focal_crossentropy",
     {"apply_class_balancing": True, "alpha": 0.3, "gamma": 1.5, "label_smoothing": 0.1},
     "prob_bin",
     [0.5894179940223694, 0.634166955947876, 0.0402643047273159, 0.019668735563755035,
     0.3090321123600006, 0.5094946026802063]),
    ("binary_focal_crossentropy", {"from_logits": True}, "logits_bin", [1.2419699430465698,
     0.422814279794693, 0.17731159925460815, 0.007199874613434076, 1.3744109869003296,
     0.7574799656867981]),
    ("categorical_crossentropy", {}, "onehot", [1.8325815200805664, 2.1972246170043945,
     0.6161860823631287, 3.0056827068328857, 3.901972770690918, 1.4271163940429688]),
    ("categorical_focal_crossentropy", {}, "onehot", [0.32326740026474, 0.43401968479156494,
     0.03259624168276787, 0.6788641810417175, 0.9364774227142334, 0.20607560873031616]),
    ("categorical_focal_crossentropy",
     {"from_logits": True, "alpha": 0.5, "gamma": 1.0, "label_smoothing": 0.1},
     "onehot_logits",
     [0.8268802165985107, 1.090162992477417, 0.28355228900909424, 1.9056105613708496,
     2.5406887531280518, 0.5582807660102844]),
    ("sparse_categorical_crossentropy", {}, "sparse", [1.8325815200805664, 2.1972246170043945,
     0.6161860823631287, 3.0056827068328857, 3.901972770690918, 1.4271163940429688]),
    ("sparse_categorical_crossentropy", {"ignore_class": 2}, "sparse", [1.8325815200805664,
     2.1972246170043945, 0.6161860823631287, 0.0, 3.901972770690918, 1.4271163940429688]),
    ("kl_divergence", {}, "dist", [2.369544506072998, 0.34591013193130493, 0.3579418659210205,
     0.23211437463760376, 1.5975844860076904, 0.3214804530143738]),
    ("poisson", {}, "counts", [1.6444600820541382, 0.905318558216095, 0.5452110767364502,
     -0.31340476870536804, 0.9103274345397949, 0.673905611038208]),
    ("hinge", {}, "hinge01", [1.2766666412353516, 1.3600000143051147, 0.5266666412353516,
     0.27666667103767395, 1.3899999856948853, 1.649999976158142]),
    ("squared_hinge", {}, "hinge_pm", [1.187766671180725, 1.3964333534240723, 2.5339667797088623,
     3.4023332595825195, 0.8141667246818542, 0.6721332669258118]),
    ("categorical_hinge", {}, "onehot", [1.190000057220459, 1.2899999618530273, 0.809999942779541,
     1.809999942779541, 1.7300000190734863, 1.0800000429153442]),
    ("mean_absolute_error", {}, "reg", [0.6233333945274353, 0.9900000095367432, 0.9166666865348816,
     1.1933332681655884, 0.49666666984558105, 0.40666672587394714]),
    ("mean_squared_error", {}, "reg", [0.48063337802886963, 1.0861667394638062, 0.9347000122070312,
     1.456399917602539, 0.2716333568096161, 0.19540004432201385]),
    ("mean_absolute_percentage_error", {}, "reg", [55.93848419189453, 183.3092041015625,
     95.99968719482422, 200.81484985351562, 74.80948638916016, 46.713134765625]),
    ("mean_squared_logarithmic_error", {}, "reg", [0.07623801380395889, 0.24235421419143677,
     0.2490931749343872, 0.2926992177963257, 0.08554636687040329, 0.060846712440252304]),
    ("log_cosh", {}, "reg", [0.21636955440044403, 0.4512760639190674, 0.3939870297908783,
     0.5931155681610107, 0.1280689835548401, 0.09350892156362534]),
    ("huber", {"delta": 0.5}, "reg", [0.2006833553314209, 0.3700000047683716, 0.3333333432674408,
     0.4716666638851166, 0.12775000929832458, 0.09663334488868713]),
    ("pearson_correlation", {}, "corr", [-0.6106767654418945, 0.7279856204986572, 0.5083059668540955,
     0.3551248013973236, 0.9412699937820435, 0.6693606376647949]),
    ("concordance_correlation", {}, "corr", [-0.4194487929344177, 0.6150268912315369,
     0.42536142468452454, 0.35425397753715515, 0.5380777716636658, 0.5505566596984863]),
]

# Keras's default names (its auto_name numbers a second instance; ember does not)
KERAS_NAMES = {
    "TopKCategoricalAccuracy": "top_k_categorical_accuracy",
    "SparseTopKCategoricalAccuracy": "sparse_top_k_categorical_accuracy",
    "MeanAbsolutePercentageError": "mean_absolute_percentage_error",
    "MeanSquaredLogarithmicError": "mean_squared_logarithmic_error",
    "RootMeanSquaredError": "root_mean_squared_error", "BinaryCrossentropy": "binary_crossentropy",
    "CategoricalCrossentropy": "categorical_crossentropy",
    "SparseCategoricalCrossentropy": "sparse_categorical_crossentropy",
    "CosineSimilarity": "cosine_similarity", "LogCoshError": "logcosh", "Hinge": "hinge",
    "SquaredHinge": "squared_hinge", "CategoricalHinge": "categorical_hinge",
    "KLDivergence": "kl_divergence", "Poisson": "poisson",
    "MeanMetricWrapper": "mean_metric_wrapper", "R2Score": "r2_score", "F1Score": "f1_score",
    "FBetaScore": "fbeta_score", "IoU": "io_u", "MeanIoU": "mean_io_u",
    "BinaryIoU": "binary_io_u", "OneHotIoU": "one_hot_io_u",
    "OneHotMeanIoU": "one_hot_mean_io_u", "PearsonCorrelation": "pearson_correlation",
    "ConcordanceCorrelation": "concordance_correlation",
    "SensitivityAtSpecificity": "sensitivity_at_specificity",
    "SpecificityAtSensitivity": "specificity_at_sensitivity",
    "PrecisionAtRecall": "precision_at_recall", "RecallAtPrecision": "recall_at_precision"}

# the crossentropies of probabilities (and KL divergence) are nn.losses' functions, whose
# check that the predictions are probabilities reads two numbers back on a GPU
READS_BACK = {("BinaryCrossentropy", False), ("CategoricalCrossentropy", False),
              ("SparseCategoricalCrossentropy", False), ("KLDivergence", False)}


def _make(cls, kw):
    kw = dict(kw)
    if "fn" in kw:
        kw["fn"] = getattr(M, kw["fn"])
    return getattr(M, cls)(**kw)


def _batch(kind, seed, weighted):
    y, p, w = data(kind, seed)
    return em.constant(y), em.constant(p), em.constant(w) if weighted else None


def _check(got, want, what):
    got = got.numpy()
    assert got.dtype == np.float32, what
    assert got.shape == np.shape(want), what
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{'-'.join(map(str, c[1].values()))}")
def test_results_are_keras_results(case):
    cls, kw, kind, (first, both, weighted) = case
    m = _make(cls, kw)
    y, p, _ = _batch(kind, 1, False)
    m.update_state(y, p)
    _check(m.result(), first, "one batch")
    y2, p2, w2 = _batch(kind, 2, True)
    m.update_state(y2, p2, sample_weight=w2)  # a second update adds to the first
    _check(m.result(), both, "two batches, the second weighted")
    m.reset_state()
    assert not np.any(m.result().numpy()), "reset_state leaves counts"
    m.update_state(y, p)
    _check(m.result(), first, "one batch after reset_state")
    fresh = _make(cls, kw)
    fresh.update_state(*_batch(kind, 1, True))
    _check(fresh.result(), weighted, "one weighted batch")
    # the config makes an equal metric, which counts alike
    config = m.get_config()
    again = type(m).from_config(config)
    assert again.get_config() == config and again.name == m.name
    again.update_state(y, p)
    _check(again.result(), first, "from_config")


@pytest.mark.parametrize("case", FUNCTION_CASES,
                         ids=lambda c: f"{c[0]}-{'-'.join(map(str, c[1].values()))}")
def test_functions_are_keras_functions(case):
    name, kw, kind, want = case
    y, p, _ = _batch(kind, 1, False)
    got = getattr(M, name)(y, p, **kw)
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-6, atol=1e-6)
    assert list(inspect.signature(getattr(M, name)).parameters)[:2] == ["y_true", "y_pred"]


def test_default_names_dtypes_and_signatures_are_keras():
    required = {"MeanMetricWrapper": {"fn": M.hinge},
                "IoU": {"num_classes": 3, "target_class_ids": [0]},
                "MeanIoU": {"num_classes": 3},
                "OneHotIoU": {"num_classes": 3, "target_class_ids": [0]},
                "OneHotMeanIoU": {"num_classes": 3}, "SensitivityAtSpecificity": {"specificity": 0.5},
                "SpecificityAtSensitivity": {"sensitivity": 0.5},
                "PrecisionAtRecall": {"recall": 0.5}, "RecallAtPrecision": {"precision": 0.5}}
    for cls, name in KERAS_NAMES.items():
        m = getattr(M, cls)(**required.get(cls, {}))
        assert m.name == name, cls
        assert m.result().dtype == np.float32, cls
        assert cls in M.__all__
        assert getattr(M, cls)(**required.get(cls, {}), dtype="float64").result().dtype \
            == np.float64, cls
    # Keras's argument order, so positional calls mean the same
    assert list(inspect.signature(M.TopKCategoricalAccuracy).parameters) == ["k", "name", "dtype"]
    assert list(inspect.signature(M.SparseTopKCategoricalAccuracy).parameters) == [
        "k", "name", "dtype", "from_sorted_ids"]
    assert list(inspect.signature(M.FBetaScore).parameters) == [
        "average", "beta", "threshold", "name", "dtype"]
    assert list(inspect.signature(M.IoU).parameters) == [
        "num_classes", "target_class_ids", "name", "dtype", "ignore_class", "sparse_y_true",
        "sparse_y_pred", "axis"]
    assert list(inspect.signature(M.PrecisionAtRecall).parameters) == [
        "recall", "num_thresholds", "class_id", "name", "dtype"]
    assert list(inspect.signature(M.R2Score).parameters) == [
        "class_aggregation", "num_regressors", "name", "dtype"]


def test_updates_read_nothing_back_and_state_stays_on_the_device(backend):
    counters = getattr(em.get_device(backend).backend, "counters", None)
    for cls, kw, kind, _ in CASES:
        m = _make(cls, kw)
        y, p, w = _batch(kind, 1, True)
        m.update_state(y, p, sample_weight=w)  # (R2Score and the F-scores build here)
        assert all(v.device == em.get_device(backend).name or backend in v.device
                   for v in m.variables), cls
        if counters is None:
            continue  # (the transfer counters are the strict GPU double's)
        counters.reset()
        m.update_state(y, p, sample_weight=w)
        r = m.result()
        reads = (counters.syncs, counters.to_host)
        if (cls, kw.get("from_logits", False)) in READS_BACK:
            assert reads[1] == 0, (cls, kw, reads)  # (a sync, never a copy)
        else:
            assert reads == (0, 0), (cls, kw, reads)
        assert backend in r.device


# names as compile(metrics=[...]) takes them: Keras's metrics.ALL_OBJECTS_DICT
COMPILE_NAMES = {
    "top_k_categorical_accuracy": "TopKCategoricalAccuracy",
    "TopKCategoricalAccuracy": "TopKCategoricalAccuracy",
    "sparse_top_k_categorical_accuracy": "SparseTopKCategoricalAccuracy",
    "mape": "MeanAbsolutePercentageError", "MAPE": "MeanAbsolutePercentageError",
    "mean_absolute_percentage_error": "MeanAbsolutePercentageError",
    "msle": "MeanSquaredLogarithmicError", "MSLE": "MeanSquaredLogarithmicError",
    "mean_squared_logarithmic_error": "MeanSquaredLogarithmicError",
    "root_mean_squared_error": "RootMeanSquaredError", "cosine_similarity": "CosineSimilarity",
    "log_cosh_error": "LogCoshError", "kl_divergence": "KLDivergence", "poisson": "Poisson",
    "bce": "BinaryCrossentropy", "BCE": "BinaryCrossentropy",
    "binary_crossentropy": "BinaryCrossentropy",
    "categorical_crossentropy": "CategoricalCrossentropy",
    "sparse_categorical_crossentropy": "SparseCategoricalCrossentropy",
    "hinge": "Hinge", "squared_hinge": "SquaredHinge", "categorical_hinge": "CategoricalHinge",
    "r2_score": "R2Score", "f1_score": "F1Score", "f_beta_score": "FBetaScore",
    "binary_io_u": "BinaryIoU", "pearson_correlation": "PearsonCorrelation",
    "concordance_correlation": "ConcordanceCorrelation", "MSE": "MeanSquaredError",
    "MAE": "MeanAbsoluteError", "Mean": "Mean", "sum": "Sum"}


def test_names_resolve_as_keras_compile_resolves_them():
    for key, cls in COMPILE_NAMES.items():
        m = M.get(key)
        assert type(m) is getattr(M, cls), key
        assert m.name == key, key  # compile names a metric by the string given
    assert type(M.get("Accuracy")).__name__ == "_KerasAccuracy"  # any casing follows shapes
    # Keras has no metric of these names (or needs arguments to make it)
    for key in ("huber", "logcosh", "log_cosh", "io_u", "mean_io_u", "precision_at_recall"):
        with pytest.raises(ValueError, match="cannot interpret"):
            M.get(key)
    assert type(M.get(M.R2Score)) is M.R2Score
    wrapped = M.get(M.top_k_categorical_accuracy)  # a function: its mean, named after it
    assert type(wrapped) is M.MeanMetricWrapper
    assert wrapped.name == "top_k_categorical_accuracy"
    made = M.get({"module": "keras.metrics", "class_name": "SparseTopKCategoricalAccuracy",
                  "config": {"name": "top-3", "dtype": "float32", "k": 3}})
    assert type(made) is M.SparseTopKCategoricalAccuracy and made.k == 3
    assert made.name == "top-3"


def test_serialize_and_deserialize_round_trip_and_read_keras_configs():
    for m in (M.TopKCategoricalAccuracy(k=3), M.MeanIoU(4, ignore_class=0),
              M.MeanMetricWrapper(M.sparse_top_k_categorical_accuracy, name="top2", k=2),
              M.F1Score(average="weighted", threshold=0.4), M.PrecisionAtRecall(0.6, class_id=1)):
        config = M.serialize(m)
        assert config["module"] == "keras.metrics"
        assert config["class_name"] == type(m).__name__
        again = M.deserialize(config)
        assert type(again) is type(m) and again.get_config() == m.get_config()
    fn = M.serialize(M.log_cosh)
    assert M.deserialize(fn) is M.log_cosh
    # configs Keras 3.15 wrote (metrics.serialize)
    wrapper = M.deserialize({
        "module": "keras.metrics", "class_name": "MeanMetricWrapper",
        "config": {"name": "mean_metric_wrapper", "dtype": "float32",
                   "fn": {"module": "builtins", "class_name": "function", "config": "hinge",
                          "registered_name": "function"}}, "registered_name": None})
    assert type(wrapper) is M.MeanMetricWrapper and wrapper._fn is M.hinge
    iou = M.deserialize({
        "module": "keras.metrics", "class_name": "MeanIoU",
        "config": {"num_classes": 3, "name": "mean_io_u", "dtype": "int32",
                   "ignore_class": None, "sparse_y_true": True, "sparse_y_pred": True,
                   "axis": -1}, "registered_name": None})
    assert type(iou) is M.MeanIoU and iou.get_config()["dtype"] == "int32"
    assert iou.result().dtype == np.float32
    # Keras's integer dtype cuts fractional weights, as Keras's matrix does
    y, p = em.constant(np.array([0, 1, 1, 2])), em.constant(np.array([0, 1, 2, 2]))
    iou.update_state(y, p, sample_weight=em.constant(np.array([1.5, 1.0, 0.9, 1.0])))
    exact = M.MeanIoU(3)
    exact.update_state(y, p, sample_weight=em.constant(np.array([1.0, 1.0, 0.0, 1.0])))
    np.testing.assert_allclose(iou.result().numpy(), exact.result().numpy())
    assert M.deserialize("TopKCategoricalAccuracy") is M.TopKCategoricalAccuracy


def test_bad_arguments_are_refused_by_name():
    for make, match in (
            (lambda: M.TopKCategoricalAccuracy(k=0), "k must be"),
            (lambda: M.SparseTopKCategoricalAccuracy(k=2.5), "k must be"),
            (lambda: M.SparseTopKCategoricalAccuracy(from_sorted_ids=1), "from_sorted_ids"),
            (lambda: M.CosineSimilarity(axis="last"), "axis"),
            (lambda: M.SparseCategoricalCrossentropy(ignore_class=1.5), "ignore_class"),
            (lambda: M.R2Score(class_aggregation="median"), "class_aggregation"),
            (lambda: M.R2Score(num_regressors=-1), "num_regressors"),
            (lambda: M.FBetaScore(average="samples"), "average"),
            (lambda: M.FBetaScore(beta=0.0), "beta"),
            (lambda: M.F1Score(threshold=1.5), "threshold"),
            (lambda: M.IoU(0, [0]), "num_classes"),
            (lambda: M.IoU(3, [3]), "target_class_ids"),
            (lambda: M.IoU(3, [0], axis=1), "axis"),
            (lambda: M.MeanIoU(3, sparse_y_pred="no"), "sparse_y_pred"),
            (lambda: M.BinaryIoU(threshold="half"), "threshold"),
            (lambda: M.PrecisionAtRecall(1.5), "recall"),
            (lambda: M.RecallAtPrecision(-0.1), "precision"),
            (lambda: M.SensitivityAtSpecificity(0.5, num_thresholds=0), "num_thresholds"),
            (lambda: M.SpecificityAtSensitivity(0.5, class_id=-1), "class_id"),
            (lambda: M.pearson_correlation(np.ones((2, 3)), np.ones((2, 4))), "shape")):
        with pytest.raises(ValueError, match=match):
            make()
    with pytest.raises(TypeError, match="not_an_argument"):
        M.MeanMetricWrapper(M.hinge, not_an_argument=1)
    with pytest.raises(TypeError, match="fn must be"):
        M.MeanMetricWrapper("hinge")
    with pytest.raises(ValueError, match="axis"):
        M.CategoricalCrossentropy(axis=0).update_state(np.eye(3), np.full((3, 3), 1 / 3))
    with pytest.raises(ValueError, match="from_logits"):
        M.BinaryCrossentropy().update_state(np.ones((2, 2)), np.full((2, 2), 3.0))
    with pytest.raises(ValueError, match="2-D"):
        M.R2Score().update_state(np.ones((2, 2, 2)), np.ones((2, 2, 2)))


def test_top_k_counts_ties_and_edges_as_keras_in_top_k():
    p = em.constant(np.array([[0.2, 0.5, 0.5, 0.1], [0.1, 0.2, 0.3, 0.4],
                              [np.nan, 0.1, 0.2, 0.3]], np.float32))
    # a tie at the k-th score counts for the label; k past the classes counts every valid
    # label; a class id out of range, and a NaN score of the label, never count
    assert M.sparse_top_k_categorical_accuracy([2, 0, 1], p, k=1).numpy().tolist() == \
        [1.0, 0.0, 0.0]
    assert M.sparse_top_k_categorical_accuracy([2, 0, 0], p, k=9).numpy().tolist() == \
        [1.0, 1.0, 0.0]
    assert M.sparse_top_k_categorical_accuracy([7, -1, 3], p, k=2).numpy().tolist() == \
        [0.0, 0.0, 1.0]
    # labels of shape (N, 1) give matches of that shape, as Keras's
    assert M.sparse_top_k_categorical_accuracy([[1], [3], [3]], p, k=1).shape == (3, 1)
    m = M.SparseTopKCategoricalAccuracy(k=2)
    m.update_state(em.constant(np.array([[1], [3], [0]])), p,
                   sample_weight=em.constant(np.array([[1.0], [3.0], [0.0]], np.float32)))
    assert float(m.result()) == 1.0


def test_mean_metric_wrapper_takes_functions_keyword_arguments_and_masks():
    def scaled_error(y_true, y_pred, scale=1.0):
        return em.multiply(em.abs(em.subtract(y_pred, y_true)), scale)

    y = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]], np.float32)
    p = np.array([[1.0, 1.0, 0.0], [4.0, 1.0, 3.0]], np.float32)
    m = M.MeanMetricWrapper(scaled_error, name="err", scale=2.0)
    m.update_state(em.constant(y), em.constant(p))
    np.testing.assert_allclose(float(m.result()), 2 * np.abs(p - y).mean(), rtol=1e-6)
    assert m.get_config() == {"name": "err", "dtype": "float32", "fn": scaled_error,
                              "scale": 2.0}
    # predictions that carry a mask weigh 0 where masked (a sequence's padding)
    masked = em.constant(p)
    set_mask(masked, em.constant(np.array([[True, True, False], [True, False, False]])))
    m = M.MeanMetricWrapper(scaled_error)
    m.update_state(em.constant(y), masked)
    np.testing.assert_allclose(float(m.result()), (1.0 + 0.0 + 3.0) / 3, rtol=1e-6)
    # and the mask ignore_class puts on its values: those examples are left out
    m = M.MeanMetricWrapper(M.sparse_categorical_crossentropy, ignore_class=0)
    m.update_state(em.constant(np.array([0, 1, 1])),
                   em.constant(np.array([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8]], np.float32)))
    np.testing.assert_allclose(float(m.result()), -np.log([0.5, 0.8]).mean(), rtol=1e-6)


def test_state_is_checkpointed_by_keras_names():
    cases = {M.MeanIoU(3): ["total_confusion_matrix"],
             M.PrecisionAtRecall(0.5): ["false_negatives", "false_positives", "true_negatives",
                                        "true_positives"],
             M.TopKCategoricalAccuracy(): ["count", "total"]}
    for m, names in cases.items():
        assert sorted(m.__checkpoint_children__()) == names
    f1 = M.F1Score()
    assert f1.variables == []  # made on the first update, as Keras's
    f1.update_state(em.constant(np.eye(3, dtype=np.float32)),
                    em.constant(np.eye(3, dtype=np.float32)))
    assert sorted(f1.__checkpoint_children__()) == ["false_negatives", "false_positives",
                                                   "intermediate_weights", "true_positives"]
    assert f1.result().numpy().shape == (3,)
    assert repr(f1) == "<F1Score 'f1_score' result=[1. 1. 1.]>"  # (a score per class)
    r2 = M.R2Score()
    r2.update_state(em.constant(np.ones((2, 2), np.float32)), em.constant(np.ones((2, 2))))
    assert sorted(r2.__checkpoint_children__()) == ["count", "num_samples", "residual", "squared_sum",
                                                   "sum"]


def test_a_compiled_model_logs_them_from_a_traced_fit(backend):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((96, 6)).astype(np.float32)
    labels = np.argmax(x[:, :5] + 0.5 * rng.standard_normal((96, 5)), -1)
    model = nn.Sequential([nn.layers.Dense(5, activation="softmax", input_shape=(6,))])
    model.compile(nn.optimizers.Adam(0.05), "sparse_categorical_crossentropy",
                  metrics=["sparse_top_k_categorical_accuracy",
                           M.SparseTopKCategoricalAccuracy(2, name="top-2-accuracy"),
                           M.MeanIoU(5, sparse_y_pred=False, name="miou")])
    history = model.fit(x, labels, batch_size=32, epochs=2, verbose=0)
    assert len(history.history["top-2-accuracy"]) == 2
    logs = model.evaluate(x, labels, batch_size=32, verbose=0, return_dict=True)
    p = em.constant(model.predict(x, verbose=0))
    y = em.constant(labels)
    for key, m in (("top-2-accuracy", M.SparseTopKCategoricalAccuracy(2)),
                   ("sparse_top_k_categorical_accuracy", M.SparseTopKCategoricalAccuracy()),
                   ("miou", M.MeanIoU(5, sparse_y_pred=False))):
        m.update_state(y, p)
        np.testing.assert_allclose(logs[key], float(m.result()), rtol=1e-5, err_msg=key)
    # one-hot labels: the F-score and R2 make their variables in the first (eager) step
    onehot = np.eye(5, dtype=np.float32)[labels]
    model.compile(nn.optimizers.Adam(0.05), "categorical_crossentropy",
                  metrics=[M.F1Score(average="macro"), "top_k_categorical_accuracy",
                           M.R2Score(), "mape"])
    model.fit(x, onehot, batch_size=32, epochs=2, verbose=0)
    logs = model.evaluate(x, onehot, batch_size=32, verbose=0, return_dict=True)
    p = em.constant(model.predict(x, verbose=0))
    for key, m in (("f1_score", M.F1Score(average="macro")), ("r2_score", M.R2Score()),
                   ("mape", M.MeanAbsolutePercentageError())):
        m.update_state(em.constant(onehot), p)
        np.testing.assert_allclose(logs[key], float(m.result()), rtol=1e-5, err_msg=key)
    counters = getattr(em.get_device(backend).backend, "counters", None)
    if counters is None:
        return  # (the transfer counters are the strict GPU double's)
    xs, ys = em.constant(x), em.constant(onehot)
    reads = []
    for metrics in (["accuracy"], ["top_k_categorical_accuracy", M.R2Score(), "mape",
                                   M.F1Score(average="micro"), M.OneHotMeanIoU(5),
                                   M.PrecisionAtRecall(0.5),
                                   "cosine_similarity", "hinge", "poisson"]):
        plain = nn.Sequential([nn.layers.Dense(5, activation="softmax", input_shape=(6,))])
        plain.compile(nn.optimizers.Adam(0.05), "categorical_crossentropy", metrics=metrics)
        plain.fit(xs, ys, batch_size=32, epochs=1, verbose=0)  # (traces; builds)
        counters.reset()
        plain.fit(xs, ys, batch_size=32, epochs=3, verbose=0)
        reads.append((counters.syncs, counters.to_host))
    assert reads[1] == reads[0], reads  # the new metrics add no read a step

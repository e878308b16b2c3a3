"""Confusion-matrix metrics, as Keras 3's: ``TruePositives``, ``FalsePositives``,
``TrueNegatives``, ``FalseNegatives``, ``Precision`` and ``Recall`` (``nn.metrics`` holds
them).

What they count, as Keras's ``update_confusion_matrix_variables`` does:

- A label is positive when it is nonzero (Keras casts ``y_true`` to bool). A prediction
  is positive when it is strictly above the threshold, both in float32 (a float32 0.3 is
  not above the threshold 0.3).
- ``thresholds`` is one number or a list of numbers in [0, 1], 0.5 by default. With a
  list, each count and each result is a vector with one entry per threshold.
- ``sample_weight`` weighs each prediction; one weight per example covers its columns.
- ``top_k`` (``Precision`` and ``Recall``) counts only each row's ``k`` largest
  predictions: the others are taken as below every threshold. Without ``thresholds``,
  that leaves every top-``k`` prediction positive. ``class_id`` then counts one column of
  the last axis.
- ``Precision`` is ``tp / (tp + fp)`` and ``Recall`` is ``tp / (tp + fn)``, 0 where
  nothing was counted.

The counts stay on the device of the predictions: a traced ``fit`` step updates them
without reading anything back. A list of thresholds is one constant per device, made once.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

from .metrics import _STATE_DTYPE, Metric, _tensor, _weights_like
from .metrics import _divide_no_nan as _ratio

_NEG_INF = -1e10  # Keras's NEG_INF: below every threshold


def _thresholds(name: str, thresholds: Any) -> list[float]:
    """``thresholds`` (a number or a sequence of them) as a list of floats in [0, 1],
    refused by name otherwise."""
    values = [thresholds] if isinstance(thresholds, (int, float)) else list(thresholds)
    if not values or any(isinstance(t, bool) or not isinstance(t, (int, float, np.floating))
                         or not 0 <= float(t) <= 1 or math.isnan(float(t)) for t in values):
        raise ValueError(f"{name}: thresholds must be a number or a list of numbers in "
                         f"[0, 1], got {thresholds!r}")
    return [float(t) for t in values]


class _ConfusionCounts(Metric):
    """The shared machinery: count variables named by ``_COUNTS`` (``"tp"``, ``"fp"``,
    ``"tn"``, ``"fn"``), one entry per threshold."""

    _COUNTS: tuple[str, ...] = ()
    _VARIABLES = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives",
                  "fn": "false_negatives"}

    def __init__(self, thresholds: Any = None, top_k: int | None = None,
                 class_id: int | None = None, name: str | None = None,
                 dtype: Any = None) -> None:
        self._named(name, dtype)
        for arg, value in (("top_k", top_k), ("class_id", class_id)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < (1 if arg == "top_k" else 0)):
                raise ValueError(f"{self.name}: {arg} must be a "
                                 f"{'positive' if arg == 'top_k' else 'non-negative'} "
                                 f"integer or None, got {value!r}")
        self.thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        default = _NEG_INF if top_k is not None else 0.5
        self._keep([default] if thresholds is None else _thresholds(self.name, thresholds))

    def _keep(self, values: list[float]) -> None:
        """Count at the thresholds ``values``: one variable of ``len(values)`` per count."""
        self._values = values
        self._single = len(values) == 1  # a scalar result (Keras: also for [t])
        self._constants: dict[Any, Any] = {}
        self._counts = {c: em.Variable(np.zeros(len(values), _STATE_DTYPE),
                                       name=f"{self.name}/{self._VARIABLES[c]}",
                                       trainable=False) for c in self._COUNTS}

    def __checkpoint_children__(self) -> dict[str, Any]:
        return {self._VARIABLES[c]: v for c, v in self._counts.items()}

    @property
    def variables(self) -> list[Any]:
        return list(self._counts.values())

    def _constant(self, key: str, values: list[float], dtype: Any, device: str,
                  shape: tuple[int, ...] = (-1,)) -> Any:
        """``values`` as a constant of ``shape`` on ``device``, made once there: a step
        uploads nothing."""
        hit = self._constants.get((key, device))
        if hit is None:
            with em.device(device):
                hit = self._constants[key, device] = em.constant(
                    np.asarray(values, dtype).reshape(shape))
        return hit

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y, p = _tensor(y_true), _tensor(y_pred)
        p = em.cast(p, em.float32)  # compared in float32, as Keras's thresholds are
        if y.shape != p.shape:
            if y.ndim == p.ndim - 1 and p.shape[-1] == 1:
                y = em.expand_dims(y, -1)
            elif p.ndim == y.ndim - 1 and y.shape[-1] == 1:
                y = em.squeeze(y, -1)
        if tuple(y.shape) != tuple(p.shape):
            raise ValueError(f"{self.name}: y_true {tuple(y.shape)} and y_pred "
                             f"{tuple(p.shape)} must have one shape")
        if self.top_k is not None:  # over every class, then the class_id's column
            p = self._top_k(p)
        if self.class_id is not None:
            if not p.ndim or self.class_id >= p.shape[-1]:
                raise ValueError(f"{self.name}: class_id {self.class_id} is not a column of "
                                 f"y_pred of shape {tuple(p.shape)}")
            y, p = y[..., self.class_id], p[..., self.class_id]
        positive = em.reshape(em.not_equal(y, 0), (1, -1))
        p = em.reshape(p, (1, -1))
        if len(self._values) == 1:
            above = em.greater(p, self._values[0])
        else:
            above = em.greater(p, self._constant("thresholds", self._values, np.float32,
                                                 p.device, (-1, 1)))
        w = None
        if sample_weight is not None:  # one weight per example covers its columns
            w = em.reshape(_weights_like(sample_weight, tuple(y.shape)), (1, -1))
        cases = {"tp": (positive, above), "fp": (em.logical_not(positive), above),
                 "tn": (em.logical_not(positive), em.logical_not(above)),
                 "fn": (positive, em.logical_not(above))}
        for c, var in self._counts.items():
            label, pred = cases[c]
            hit = em.cast(em.logical_and(label, pred), _STATE_DTYPE)
            if w is not None:
                hit = em.multiply(hit, w)
            total = em.reduce_sum(hit, axis=1)
            if total.device != var.device:
                total = total.to(var.device)
            var.assign_add(total)

    def _top_k(self, p: Any) -> Any:
        """``p`` with all but each row's ``top_k`` largest entries set below every
        threshold (Keras's ``_filter_top_k``): exactly ``top_k`` entries are kept, those
        ``top_k`` returns, so of tied scores the first ones (a ``>=`` the k-th value kept
        every tie: Precision(top_k=1) of [.9, .9, .1] counted two predictions)."""
        k = self.top_k
        assert k is not None  # (update_state calls this only with one)
        if not p.ndim or p.shape[-1] <= k:
            return p
        kept = em.reduce_max(em.one_hot(em.top_k(p, k=k).indices, p.shape[-1], dtype=em.int8),
                             axis=-2)
        return em.where(em.cast(kept, em.bool), p, _NEG_INF)

    def _out(self, value: Any) -> Any:
        value = em.cast(value, self.dtype)
        return value[0] if self._single else value


class _CountMetric(_ConfusionCounts):
    """One count (``_COUNTS`` of one) as the result; Keras names its variable
    ``accumulator``."""

    _VARIABLES = {c: "accumulator" for c in ("tp", "fp", "tn", "fn")}

    def __init__(self, thresholds: Any = None, name: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(thresholds, name=name, dtype=dtype)

    def result(self) -> Any:
        (var,) = self._counts.values()
        return self._out(var.value())


class TruePositives(_CountMetric):
    """The (weighted) count of positive labels predicted above the threshold."""

    _COUNTS = ("tp",)


class FalsePositives(_CountMetric):
    """The (weighted) count of negative labels predicted above the threshold."""

    _COUNTS = ("fp",)


class TrueNegatives(_CountMetric):
    """The (weighted) count of negative labels predicted at or below the threshold."""

    _COUNTS = ("tn",)


class FalseNegatives(_CountMetric):
    """The (weighted) count of positive labels predicted at or below the threshold."""

    _COUNTS = ("fn",)


class Precision(_ConfusionCounts):
    """``tp / (tp + fp)``: of the predictions above the threshold, the fraction whose
    label is positive (0 before any)."""

    _COUNTS = ("tp", "fp")

    def result(self) -> Any:
        tp, fp = (self._counts[c].value() for c in ("tp", "fp"))
        return self._out(_ratio(tp, em.add(tp, fp)))


class Recall(_ConfusionCounts):
    """``tp / (tp + fn)``: of the positive labels, the fraction predicted above the
    threshold (0 before any)."""

    _COUNTS = ("tp", "fn")

    def result(self) -> Any:
        tp, fn = (self._counts[c].value() for c in ("tp", "fn"))
        return self._out(_ratio(tp, em.add(tp, fn)))


_EPSILON = 1e-7  # Keras's backend.epsilon(): the end thresholds lie this far outside [0, 1]
_CURVES = {"roc": "ROC", "pr": "PR", "prgain": "PRGAIN"}
_SUMMATIONS = ("interpolation", "minoring", "majoring")


class AUC(_ConfusionCounts):
    """The area under the ROC curve (``curve="ROC"``, the default) or the precision-recall
    curve (``"PR"``; ``"PRGAIN"`` too), as Keras 3 approximates it: the four counts at
    ``num_thresholds`` thresholds evenly spaced in [0, 1] (or at ``thresholds``, with 0 and
    1 added; each end moved out by 1e-7), summed by ``summation_method``
    (``"interpolation"``: trapezoids, and Davis & Goadrich's interpolation for PR;
    ``"minoring"``, ``"majoring"``). ``from_logits`` applies a sigmoid to the predictions;
    ``label_weights`` weighs the columns of the last axis. ``multi_label`` (one curve per
    label) is not implemented and is refused by name, as is ``num_labels``, which only
    goes with it."""

    _COUNTS = ("tp", "fp", "tn", "fn")

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC",
                 summation_method: str = "interpolation", name: str | None = None,
                 dtype: Any = None, thresholds: Any = None, multi_label: bool = False,
                 num_labels: int | None = None, label_weights: Any = None,
                 from_logits: bool = False) -> None:
        self._named(name, dtype)
        key = curve.lower() if isinstance(curve, str) else None
        if key not in _CURVES:
            raise ValueError(f"{self.name}: curve must be one of 'ROC', 'PR', 'PRGAIN', got "
                             f"{curve!r}")
        method = summation_method.lower() if isinstance(summation_method, str) else None
        if method not in _SUMMATIONS:
            raise ValueError(f"{self.name}: summation_method must be one of {_SUMMATIONS}, "
                             f"got {summation_method!r}")
        if multi_label is not False:
            raise NotImplementedError(f"{self.name}: multi_label=True (one curve per label) "
                                      "is not implemented in ember")
        if num_labels is not None:
            raise ValueError(f"{self.name}: num_labels is needed only when multi_label is "
                             "True (as Keras)")
        if thresholds is not None:
            inner = sorted(_thresholds(self.name, thresholds))
        else:
            if isinstance(num_thresholds, bool) or not isinstance(num_thresholds, int) \
                    or num_thresholds <= 1:
                raise ValueError(f"{self.name}: num_thresholds must be an integer > 1, got "
                                 f"{num_thresholds!r}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.num_thresholds = len(inner) + 2
        self.curve, self.summation_method = _CURVES[key], method
        self.multi_label, self.num_labels, self.from_logits = False, None, bool(from_logits)
        self.label_weights = None if label_weights is None else \
            [float(v) for v in np.asarray(label_weights, np.float64).ravel()]
        if self.label_weights is not None and any(not v >= 0 for v in self.label_weights):
            raise ValueError(f"{self.name}: label_weights must be >= 0, got {label_weights!r}")
        self._given_thresholds = None if thresholds is None else inner
        self.top_k, self.class_id = None, None
        self._keep([0.0 - _EPSILON, *inner, 1.0 + _EPSILON])

    @property
    def thresholds(self) -> list[float]:
        """The thresholds the counts are kept at, the two end ones included (Keras's)."""
        return list(self._values)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        p = _tensor(y_pred)
        if self.from_logits:
            p = em.sigmoid(p)
        if self.label_weights is not None:
            lw = self._constant("label_weights", self.label_weights, np.float64, p.device)
            if not p.ndim or p.shape[-1] != lw.shape[0]:
                raise ValueError(f"{self.name}: {lw.shape[0]} label_weights for y_pred of "
                                 f"shape {tuple(p.shape)} (one per column of the last axis)")
            w = em.broadcast_to(lw, tuple(p.shape))
            if sample_weight is not None:
                w = em.multiply(w, _weights_like(sample_weight, tuple(p.shape)))
            sample_weight = w
        super().update_state(y_true, p, sample_weight)

    def result(self) -> Any:
        tp, fp, tn, fn = (self._counts[c].value() for c in ("tp", "fp", "tn", "fn"))
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            return em.cast(self._interpolated_pr(tp, fp, fn), self.dtype)
        recall = _ratio(tp, em.add(tp, fn))
        if self.curve == "ROC":
            x, y = _ratio(fp, em.add(fp, tn)), recall
        elif self.curve == "PR":
            x, y = recall, _ratio(tp, em.add(tp, fp))
        else:  # PRGAIN (Keras's handling of its degenerate cases)
            scale = _ratio(em.add(tp, fn), em.add(tn, fp))
            no_tp = em.equal(tp, 0.0)
            x = em.maximum(em.where(no_tp, 0.0, em.subtract(
                1.0, em.multiply(scale, _ratio(fn, tp)))), 0.0)
            y = em.where(no_tp, 1.0, em.subtract(1.0, em.multiply(scale, _ratio(fp, tp))))
        a, b = y[: n - 1], y[1:]
        if self.summation_method == "interpolation":
            heights = em.divide(em.add(a, b), 2.0)
        elif self.summation_method == "minoring":
            heights = em.minimum(a, b)
        else:
            heights = em.maximum(a, b)
        area = em.reduce_sum(em.multiply(em.subtract(x[: n - 1], x[1:]), heights))
        return em.cast(area, self.dtype)

    def _interpolated_pr(self, tp: Any, fp: Any, fn: Any) -> Any:
        """Keras's ``interpolate_pr_auc`` (Davis & Goadrich's interpolation, closed form)."""
        n = self.num_thresholds
        dtp = em.subtract(tp[: n - 1], tp[1:])
        p = em.add(tp, fp)
        dp = em.subtract(p[: n - 1], p[1:])
        slope = _ratio(dtp, em.maximum(dp, 0.0))
        intercept = em.subtract(tp[1:], em.multiply(slope, p[1:]))
        both = em.logical_and(em.greater(p[: n - 1], 0.0), em.greater(p[1:], 0.0))
        ratio = em.where(both, _ratio(p[: n - 1], em.maximum(p[1:], 0.0)), 1.0)
        increment = _ratio(em.multiply(slope, em.add(dtp, em.multiply(intercept,
                                                                     em.log(ratio)))),
                           em.maximum(em.add(tp[1:], fn[1:]), 0.0))
        return em.reduce_sum(increment)

    def get_config(self) -> dict[str, Any]:
        config = {"name": self.name, "dtype": str(self.dtype),
                  "num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": False,
                  "num_labels": None, "label_weights": self.label_weights,
                  "from_logits": self.from_logits}
        if self._given_thresholds is not None:
            config["thresholds"] = list(self._given_thresholds)
        return config


CLASSES: tuple[type[Metric], ...] = (TruePositives, FalsePositives, TrueNegatives,
                                     FalseNegatives, Precision, Recall, AUC)

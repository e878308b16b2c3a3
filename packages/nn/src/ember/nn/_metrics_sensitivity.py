"""Keras 3's metrics at a fixed operating point: ``SensitivityAtSpecificity``,
``SpecificityAtSensitivity``, ``PrecisionAtRecall`` and ``RecallAtPrecision``
(``nn.metrics`` holds them).

Each keeps the four confusion counts (as ``AUC`` does, with its machinery) at
``num_thresholds`` thresholds evenly spaced in [0, 1], 0 and 1 included (one threshold:
0.5), and gives the best value of one ratio over the thresholds where the other reaches
the value asked for (0 when none does), as Keras's ``_find_max_under_constraint``:
sensitivity is ``tp / (tp + fn)`` (recall), specificity ``tn / (tn + fp)``, precision
``tp / (tp + fp)``, each 0 where nothing was counted. ``class_id`` counts one column of the
last axis. The counts stay on the device of the predictions.
"""

from __future__ import annotations

import math
from typing import Any

import ember.core as em

from ._metrics_confusion import _ConfusionCounts
from .metrics import _divide_no_nan as _ratio


class _AtOperatingPoint(_ConfusionCounts):
    """The shared base: the four counts at ``num_thresholds`` thresholds, and the best of
    ``_best`` where ``_given`` reaches ``value``."""

    _COUNTS = ("tp", "fp", "tn", "fn")
    _VALUE = ""  # the constructor argument ``value`` comes as ("recall", ...)

    def __init__(self, value: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None) -> None:
        label = name or type(self).__name__
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or math.isnan(value) or not 0 <= value <= 1:
            raise ValueError(f"{label}: {self._VALUE} must be a number in [0, 1], got "
                             f"{value!r}")
        if isinstance(num_thresholds, bool) or not isinstance(num_thresholds, int) \
                or num_thresholds < 1:
            raise ValueError(f"{label}: num_thresholds must be an integer > 0, got "
                             f"{num_thresholds!r}")
        if num_thresholds == 1:
            thresholds = [0.5]
        else:
            thresholds = [0.0, *[(i + 1) / (num_thresholds - 1)
                                 for i in range(num_thresholds - 2)], 1.0]
        super().__init__(thresholds=thresholds, class_id=class_id, name=name, dtype=dtype)
        self.value, self.num_thresholds = float(value), num_thresholds
        setattr(self, self._VALUE, value)

    def _rates(self) -> dict[str, Any]:
        tp, fp, tn, fn = (self._counts[c].value() for c in ("tp", "fp", "tn", "fn"))
        return {"sensitivity": _ratio(tp, em.add(tp, fn)),
                "specificity": _ratio(tn, em.add(tn, fp)),
                "precision": _ratio(tp, em.add(tp, fp))}

    _GIVEN = ""  # the ratio held at ``value`` or above
    _BEST = ""  # the ratio maximized there

    def result(self) -> Any:
        rates = self._rates()
        feasible = em.greater_equal(rates[self._GIVEN], self.value)
        best = em.reduce_max(em.where(feasible, rates[self._BEST],
                                      em.zeros_like(rates[self._BEST])))
        return em.cast(em.maximum(best, 0.0), self.dtype)


class SensitivityAtSpecificity(_AtOperatingPoint):
    """The best sensitivity (recall) at a threshold whose specificity is at least
    ``specificity``.

    Args:
        specificity: the specificity to reach, in [0, 1].
        num_thresholds: how many thresholds, evenly spaced in [0, 1] (200 by default).
        class_id: count only this column of the last axis.
        name: the metric's name.
        dtype: the result's dtype (float32 by default).

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.SensitivityAtSpecificity(0.5)
        >>> m.update_state([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])
        >>> float(m.result())
        0.5
    """

    _VALUE, _GIVEN, _BEST = "specificity", "specificity", "sensitivity"

    def __init__(self, specificity: float, num_thresholds: int = 200,
                 class_id: int | None = None, name: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(specificity, num_thresholds, class_id, name, dtype)


class SpecificityAtSensitivity(_AtOperatingPoint):
    """The best specificity at a threshold whose sensitivity (recall) is at least
    ``sensitivity``.

    Args:
        sensitivity: the sensitivity to reach, in [0, 1].
        num_thresholds: how many thresholds, evenly spaced in [0, 1] (200 by default).
        class_id: count only this column of the last axis.
        name: the metric's name.
        dtype: the result's dtype (float32 by default).

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.SpecificityAtSensitivity(0.5)
        >>> m.update_state([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])
        >>> round(float(m.result()), 6)
        0.666667
    """

    _VALUE, _GIVEN, _BEST = "sensitivity", "sensitivity", "specificity"

    def __init__(self, sensitivity: float, num_thresholds: int = 200,
                 class_id: int | None = None, name: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)


class PrecisionAtRecall(_AtOperatingPoint):
    """The best precision at a threshold whose recall is at least ``recall``.

    Args:
        recall: the recall to reach, in [0, 1].
        num_thresholds: how many thresholds, evenly spaced in [0, 1] (200 by default).
        class_id: count only this column of the last axis.
        name: the metric's name.
        dtype: the result's dtype (float32 by default).

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.PrecisionAtRecall(0.5)
        >>> m.update_state([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])
        >>> float(m.result())
        0.5
    """

    _VALUE, _GIVEN, _BEST = "recall", "sensitivity", "precision"

    def __init__(self, recall: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None) -> None:
        super().__init__(recall, num_thresholds, class_id, name, dtype)


class RecallAtPrecision(_AtOperatingPoint):
    """The best recall at a threshold whose precision is at least ``precision``.

    Args:
        precision: the precision to reach, in [0, 1].
        num_thresholds: how many thresholds, evenly spaced in [0, 1] (200 by default).
        class_id: count only this column of the last axis.
        name: the metric's name.
        dtype: the result's dtype (float32 by default).

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.RecallAtPrecision(0.8)
        >>> m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
        >>> float(m.result())
        0.5
    """

    _VALUE, _GIVEN, _BEST = "precision", "precision", "sensitivity"

    def __init__(self, precision: float, num_thresholds: int = 200,
                 class_id: int | None = None, name: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(precision, num_thresholds, class_id, name, dtype)


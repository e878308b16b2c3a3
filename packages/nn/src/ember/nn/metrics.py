"""Streaming metrics: ``m(values)`` / ``update_state``, ``result()``, ``reset_state()``.

State lives in variables (``total``, ``count``), so a checkpoint saves a metric as it
saves a layer. Updates and results stay on the device of the values (no host copy, so no
GPU sync per step); read a result with ``float(m.result())`` when you need it.

Examples:
    >>> from ember import nn
    >>> m = nn.metrics.Mean("loss")
    >>> _ = m(0); _ = m(5); float(m.result())
    2.5
    >>> _ = m([8, 9]); float(m.result())
    5.5
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

import ember.core as em

__all__ = ["AUC", "Accuracy", "BinaryAccuracy", "BinaryCrossentropy", "BinaryIoU",
           "CategoricalAccuracy", "CategoricalCrossentropy", "CategoricalHinge",
           "ConcordanceCorrelation", "CosineSimilarity", "F1Score", "FBetaScore",
           "FalseNegatives", "FalsePositives", "Hinge", "IoU", "KLDivergence", "LogCoshError",
           "Mean", "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanIoU",
           "MeanMetricWrapper", "MeanSquaredError", "MeanSquaredLogarithmicError", "Metric",
           "OneHotIoU", "OneHotMeanIoU", "PearsonCorrelation", "Poisson", "Precision",
           "PrecisionAtRecall", "R2Score", "Recall", "RecallAtPrecision",
           "RootMeanSquaredError", "SensitivityAtSpecificity", "SparseCategoricalAccuracy",
           "SparseCategoricalCrossentropy", "SparseTopKCategoricalAccuracy",
           "SpecificityAtSensitivity", "SquaredHinge", "Sum", "TopKCategoricalAccuracy",
           "TrueNegatives", "TruePositives", "binary_accuracy", "binary_crossentropy",
           "binary_focal_crossentropy", "categorical_accuracy", "categorical_crossentropy",
           "categorical_focal_crossentropy", "categorical_hinge", "concordance_correlation",
           "deserialize", "get", "hinge", "huber", "kl_divergence", "log_cosh",
           "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error",
           "mean_squared_logarithmic_error", "pearson_correlation", "poisson", "serialize",
           "sparse_categorical_accuracy", "sparse_categorical_crossentropy",
           "sparse_top_k_categorical_accuracy", "squared_hinge", "top_k_categorical_accuracy"]


def _tensor(x: Any) -> Any:
    if isinstance(x, em.Variable):
        return x.value()
    return x if isinstance(x, em.Tensor) else em.convert_to_tensor(x)


# The state accumulates in float64 (a float32 count stops counting at 2**24 examples, and
# float32 sums drift over long epochs); ``result()`` is cast to the metric's ``dtype``,
# float32 unless asked otherwise, as Keras returns.
_STATE_DTYPE = np.dtype(np.float64)


def _weights_like(sample_weight: Any, shape: tuple[int, ...]) -> Any:
    """``sample_weight`` (float64) broadcast to values of ``shape``, as Keras takes weights:
    ``(N, 1)`` as ``(N,)``, and a weight per example (or step) covering its values."""
    w = em.cast(_tensor(sample_weight), _STATE_DTYPE)
    while w.ndim > len(shape) and w.shape[-1] == 1:
        w = em.squeeze(w, -1)
    while w.ndim < len(shape):
        w = em.expand_dims(w, -1)
    return em.broadcast_to(w, shape)


def _divide_no_nan(num: Any, den: Any) -> Any:
    """``num / den``, 0 where ``den`` is 0 (Keras's ``divide_no_nan``)."""
    return em.where(em.greater(den, 0), em.divide(num, em.maximum(den, 1e-300)), 0.0)


def _snake(name: str) -> str:
    """Keras's default metric name (its ``to_snake_case``): ``SparseCategoricalAccuracy``
    -> ``sparse_categorical_accuracy``, ``AUC`` -> ``auc``."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", re.sub(r"\W+", "", name))
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


class Metric:
    """Base class: keeps ``total`` and ``count`` variables (float64, non-trainable); results
    have the metric's ``dtype`` (float32 by default, as Keras)."""

    def __init__(self, name: str | None = None, dtype: Any = None) -> None:
        self._named(name, dtype)
        self.total = em.Variable(np.zeros((), _STATE_DTYPE), name=f"{self.name}/total",
                                 trainable=False)
        self.count = em.Variable(np.zeros((), _STATE_DTYPE), name=f"{self.name}/count",
                                 trainable=False)

    def _named(self, name: str | None, dtype: Any) -> None:
        self.name = name or _snake(type(self).__name__)
        self.dtype = np.dtype(em.as_dtype(dtype or em.float32))
        if self.dtype.kind != "f":
            raise ValueError(f"{self.name}: dtype must be a floating dtype, got {self.dtype}")

    def __checkpoint_children__(self) -> dict[str, Any]:
        return {"total": self.total, "count": self.count, **self._added_by_name()}

    def _added_by_name(self) -> dict[str, Any]:
        return dict(self.__dict__.get("_added_names", {}))

    def add_variable(self, shape: Any, initializer: Any, dtype: Any = None,
                     aggregation: str = "sum", name: str | None = None) -> Any:
        """A state variable of this metric (Keras's): non-trainable, in ``variables``, set
        to zeros by ``reset_state`` and saved and restored with the metric.

        Args:
            shape: its shape.
            initializer: an initializer or its name (``"zeros"``).
            dtype: its dtype; None takes the metric's (float32 unless asked otherwise).
            aggregation: ``"sum"``, how ember.distribute combines it across workers (the
                only one ember has; any other is refused by name).
            name: its name (``"<metric name>/<name>"``).
        """
        from . import initializers

        if aggregation != "sum":
            raise ValueError(f"{self.name}: add_variable(aggregation={aggregation!r}) is not "
                             f"supported; ember sums metric variables across workers "
                             f"(aggregation='sum')")
        init = initializers.get(initializer)
        dt = em.as_dtype(dtype or self.dtype)
        added = self.__dict__.setdefault("_added", [])
        names = self.__dict__.setdefault("_added_names", {})
        key = name or "variable"
        if key in names or key in ("total", "count"):  # unique in checkpoints
            key = f"{key}_{len(added)}"
        var = em.Variable(init(tuple(shape), dtype=dt), name=f"{self.name}/{name or key}",
                          trainable=False)
        added.append(var)
        names[key] = var
        return var

    def add_weight(self, shape: Any = (), initializer: Any = None, dtype: Any = None,
                   name: str | None = None) -> Any:
        """``add_variable`` with Keras's ``add_weight`` defaults (zeros, a scalar)."""
        return self.add_variable(shape, "zeros" if initializer is None else initializer,
                                 dtype, name=name)

    def _accumulate(self, values: Any, sample_weight: Any = None) -> None:
        v = em.cast(values, _STATE_DTYPE)
        if sample_weight is None:
            total, count = em.reduce_sum(v), em.constant(v.size, dtype=_STATE_DTYPE)
        elif isinstance(sample_weight, (int, float)) and not isinstance(sample_weight, bool):
            # one weight for every value (the loss tracker's batch size): no host tensor
            total = em.multiply(em.reduce_sum(v), float(sample_weight))
            count = em.constant(v.size * float(sample_weight), dtype=_STATE_DTYPE)
        else:
            w = _weights_like(sample_weight, tuple(v.shape))
            total, count = em.reduce_sum(em.multiply(v, w)), em.reduce_sum(w)
        if total.device != self.total.device:  # values elsewhere than the metric's state
            total, count = total.to(self.total.device), count.to(self.total.device)
        self.total.assign_add(total)
        self.count.assign_add(count)

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Update with new values and return the running result."""
        self.update_state(*args, **kwargs)
        return self.result()

    def result(self) -> Any:
        """total / count (0 before any update), a 0-d tensor of ``dtype`` on the metric's
        device."""
        return em.cast(_divide_no_nan(self.total.value(), self.count.value()), self.dtype)

    def reset_state(self) -> None:
        """Every state variable back to zeros (Keras's); ``fit`` and ``evaluate`` call it
        at the start of each epoch and evaluation, so a subclass's own override runs."""
        for v in self.variables:
            v.assign(em.zeros_like(v.value()))

    def reset_states(self) -> None:
        """TensorFlow 2's name: calls ``reset_state``."""
        self.reset_state()

    def get_config(self) -> dict[str, Any]:
        """``name``, ``dtype`` and the other constructor arguments (kept as attributes of
        their names), so that ``cls(**config)`` makes an equal metric (``nn.saving``
        saves a compiled model's metrics so)."""
        import inspect

        params = inspect.signature(type(self).__init__).parameters
        return {"name": self.name, "dtype": str(self.dtype),
                **{p: self.__dict__[p] for p in params
                   if p not in ("name", "dtype") and p in self.__dict__}}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)

    @property
    def variables(self) -> list[Any]:
        return [self.total, self.count, *self.__dict__.get("_added", [])]

    def __repr__(self) -> str:
        r = self.result()  # a vector for several thresholds, or a score per class
        shown = f"{float(r):.6g}" if r.ndim == 0 else np.array2string(r.numpy(), precision=6)
        return f"<{type(self).__name__} {self.name!r} result={shown}>"


class Mean(Metric):
    """The (weighted) mean of every value seen."""

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        self._accumulate(_tensor(values), sample_weight)


class Sum(Metric):
    """The (weighted) sum of every value seen."""

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        self._accumulate(_tensor(values), sample_weight)

    def result(self) -> Any:
        return em.cast(self.total.value(), self.dtype)


class Accuracy(Metric):
    """The fraction of ``predictions`` equal to ``labels``."""

    def update_state(self, labels: Any, predictions: Any, sample_weight: Any = None) -> None:
        y, p = _tensor(labels), _tensor(predictions)
        if y.shape != p.shape:
            raise ValueError(f"{self.name}: labels {y.shape} and predictions {p.shape} differ "
                             f"in shape")
        self._accumulate(em.equal(y, p), sample_weight)


class SparseCategoricalAccuracy(Metric):
    """Integer ``labels`` against ``argmax(predictions, -1)`` (logits or probabilities)."""

    def update_state(self, labels: Any, predictions: Any, sample_weight: Any = None) -> None:
        y, p = _tensor(labels), _tensor(predictions)
        self._accumulate(_same_class(em.argmax(p, -1), _class_ids(self.name, y, p)),
                         sample_weight)


class CategoricalAccuracy(Metric):
    """``argmax(labels, -1)`` (one-hot) against ``argmax(predictions, -1)``."""

    def update_state(self, labels: Any, predictions: Any, sample_weight: Any = None) -> None:
        y, p = _tensor(labels), _tensor(predictions)
        self._accumulate(em.equal(em.argmax(p, -1), em.argmax(y, -1)), sample_weight)


class BinaryAccuracy(Metric):
    """The share of ``labels`` equal to ``predictions > threshold`` (taken in the labels'
    dtype, as Keras: a label of 0.7 matches neither 0 nor 1; ``binary_accuracy``)."""

    def __init__(self, name: str | None = None, dtype: Any = None, threshold: float = 0.5):
        super().__init__(name, dtype)
        self.threshold = threshold

    def update_state(self, labels: Any, predictions: Any, sample_weight: Any = None) -> None:
        self._accumulate(binary_accuracy(labels, predictions, self.threshold), sample_weight)


class _ErrorMean(Metric):
    """Shared by the regression metrics: the mean of ``_error(p - y)`` (per example when
    weighted, as Keras)."""

    def _error(self, diff: Any) -> Any:
        raise NotImplementedError

    def update_state(self, labels: Any, predictions: Any, sample_weight: Any = None) -> None:
        y, p = _tensor(labels), _tensor(predictions)
        if y.ndim == p.ndim - 1 and p.shape[-1] == 1:
            y = em.expand_dims(y, -1)
        if tuple(y.shape) != tuple(p.shape):
            raise ValueError(f"{self.name}: labels {tuple(y.shape)} and predictions "
                             f"{tuple(p.shape)} differ in shape")
        err = self._error(em.subtract(em.cast(p, _STATE_DTYPE), em.cast(y, _STATE_DTYPE)))
        if sample_weight is not None and err.ndim > 1:  # one weight per example
            err = em.reduce_mean(err, axis=-1)
        self._accumulate(err, sample_weight)


class MeanAbsoluteError(_ErrorMean):
    """The mean of ``|predictions - labels|`` over every value seen."""

    def _error(self, diff: Any) -> Any:
        return em.abs(diff)


class MeanSquaredError(_ErrorMean):
    """The mean of ``(predictions - labels)^2`` over every value seen."""

    def _error(self, diff: Any) -> Any:
        return em.square(diff)


class _KerasAccuracy(Metric):
    """``"accuracy"`` in ``compile``: binary, sparse or categorical by the shapes, as Keras
    decides (predictions with one column: binary, ``BinaryAccuracy``'s numbers, so soft
    labels such as 0.9 match no prediction; labels with fewer axes or one column:
    sparse categorical; else one-hot categorical)."""

    def update_state(self, labels: Any, predictions: Any, sample_weight: Any = None) -> None:
        y, p = _tensor(labels), _tensor(predictions)
        if p.ndim and p.shape[-1] == 1:  # BinaryAccuracy's: labels compared as they are
            hits = binary_accuracy(em.reshape(y, p.shape), p)
        elif y.ndim < p.ndim or (y.ndim and y.shape[-1] == 1):
            hits = _same_class(em.argmax(p, -1), em.reshape(y, p.shape[:-1]))
        else:
            hits = em.equal(em.argmax(p, -1), em.argmax(y, -1))
        self._accumulate(hits, sample_weight)


def _class_ids(name: str, y: Any, p: Any) -> Any:
    """Sparse labels as ``p.shape[:-1]``: class ids of shape ``(N,)`` or ``(N, 1)`` (Keras);
    anything else (one-hot labels above all) is an error, never a broadcast."""
    want = tuple(p.shape[:-1])
    if y.ndim == p.ndim and y.ndim and y.shape[-1] == 1:
        y = em.squeeze(y, -1)
    if tuple(y.shape) != want:
        raise ValueError(f"{name}: y_true must hold one class id per example, shape {want} "
                         f"or {want + (1,)} for predictions of shape {tuple(p.shape)}; got "
                         f"y_true of shape {tuple(y.shape)} (one-hot labels take "
                         f"CategoricalAccuracy)")
    return y


def _same_class(predicted: Any, labels: Any) -> Any:
    """argmax indices == labels, comparing integer labels as integers and float labels
    (class ids stored as floats) as floats."""
    if labels.dtype.kind in "iu":
        return em.equal(em.cast(predicted, em.int64), em.cast(labels, em.int64))
    return em.equal(em.cast(predicted, labels.dtype), labels)


_NAMES = {"accuracy": _KerasAccuracy, "acc": _KerasAccuracy,
          "sparse_categorical_accuracy": SparseCategoricalAccuracy,
          "categorical_accuracy": CategoricalAccuracy, "binary_accuracy": BinaryAccuracy,
          "mean": Mean, "sum": Sum, "mae": MeanAbsoluteError,
          "mean_absolute_error": MeanAbsoluteError, "mse": MeanSquaredError,
          "mean_squared_error": MeanSquaredError}


# the confusion-matrix metrics and Keras's other metrics live in their own modules, which
# build on ``Metric`` above
from ._metrics_accuracy import (  # noqa: E402
    SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy,
    binary_accuracy,
    categorical_accuracy,
    sparse_categorical_accuracy,
    sparse_top_k_categorical_accuracy,
    top_k_categorical_accuracy,
)
from ._metrics_confusion import (  # noqa: E402
    AUC,
    FalseNegatives,
    FalsePositives,
    Precision,
    Recall,
    TrueNegatives,
    TruePositives,
)
from ._metrics_confusion import (  # noqa: E402
    CLASSES as _CONFUSION,
)
from ._metrics_correlation import (  # noqa: E402
    ConcordanceCorrelation,
    PearsonCorrelation,
    concordance_correlation,
    pearson_correlation,
)
from ._metrics_fscore import F1Score, FBetaScore  # noqa: E402
from ._metrics_hinge import (  # noqa: E402
    CategoricalHinge,
    Hinge,
    SquaredHinge,
    categorical_hinge,
    hinge,
    squared_hinge,
)
from ._metrics_iou import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU  # noqa: E402
from ._metrics_probabilistic import (  # noqa: E402
    BinaryCrossentropy,
    CategoricalCrossentropy,
    KLDivergence,
    Poisson,
    SparseCategoricalCrossentropy,
    binary_crossentropy,
    binary_focal_crossentropy,
    categorical_crossentropy,
    categorical_focal_crossentropy,
    kl_divergence,
    poisson,
    sparse_categorical_crossentropy,
)
from ._metrics_regression import (  # noqa: E402
    CosineSimilarity,
    LogCoshError,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    R2Score,
    RootMeanSquaredError,
    cosine_similarity,
    huber,
    log_cosh,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
)
from ._metrics_sensitivity import (  # noqa: E402
    PrecisionAtRecall,
    RecallAtPrecision,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
)
from ._metrics_wrapper import MeanMetricWrapper  # noqa: E402

# Keras 3 takes each metric class by its name and by its snake-case name
_NAMES.update({n: c for cls in _CONFUSION for n, c in ((cls.__name__, cls),
                                                        (_snake(cls.__name__), cls))})

# Keras 3's other names (its ``metrics.ALL_OBJECTS_DICT``): the classes that can be made
# without arguments, by name and snake-case name, and its short names. (Keras's dict also
# holds the classes that need arguments, IoU's and PrecisionAtRecall's families and
# MeanMetricWrapper; ``get`` of those fails in Keras too, for the missing arguments.)
_NAMELESS_ARGUMENTS: tuple[type[Metric], ...] = (
    Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy, Mean, Sum,
    MeanAbsoluteError, MeanSquaredError, TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy, MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
    RootMeanSquaredError, CosineSimilarity, LogCoshError, R2Score, BinaryCrossentropy,
    CategoricalCrossentropy, SparseCategoricalCrossentropy, KLDivergence, Poisson, Hinge,
    SquaredHinge, CategoricalHinge, PearsonCorrelation, ConcordanceCorrelation, F1Score,
    FBetaScore, BinaryIoU)
for _cls in _NAMELESS_ARGUMENTS:
    for _key in (_cls.__name__, _snake(_cls.__name__)):
        _NAMES.setdefault(_key, _cls)  # ("accuracy" stays the shape-following one)
_NAMES.update({"bce": BinaryCrossentropy, "BCE": BinaryCrossentropy, "MSE": MeanSquaredError,
               "MAE": MeanAbsoluteError, "mape": MeanAbsolutePercentageError,
               "MAPE": MeanAbsolutePercentageError, "msle": MeanSquaredLogarithmicError,
               "MSLE": MeanSquaredLogarithmicError})

# Keras's metric functions by name (what a saved ``MeanMetricWrapper`` names its ``fn``
# by)
_FUNCTIONS: dict[str, Any] = {f.__name__: f for f in (
    binary_accuracy, binary_crossentropy, binary_focal_crossentropy, categorical_accuracy,
    categorical_crossentropy, categorical_focal_crossentropy, categorical_hinge,
    concordance_correlation, cosine_similarity, hinge, huber, kl_divergence, log_cosh,
    mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
    mean_squared_logarithmic_error, pearson_correlation, poisson, sparse_categorical_accuracy,
    sparse_categorical_crossentropy, sparse_top_k_categorical_accuracy, squared_hinge,
    top_k_categorical_accuracy)}


def _classes() -> dict[str, Any]:
    """Every public metric class by its name and snake-case name (Keras's
    ``ALL_OBJECTS_DICT``, for ``deserialize``)."""
    table = {}
    for n in __all__:
        obj = globals()[n]
        if isinstance(obj, type) and issubclass(obj, Metric):
            table[n] = table[_snake(n)] = obj
    return table


def get(identifier: Any) -> Metric:
    """A metric instance, as Keras's ``compile(metrics=[...])`` makes one.

    Args:
        identifier: a ``Metric`` (returned as it is); a name (``"accuracy"`` follows
            the shapes of the labels and predictions, as Keras; ``"mape"``,
            ``"top_k_categorical_accuracy"``, ``"TopKCategoricalAccuracy"``... make that
            metric named so, as ``compile`` names it); a ``Metric`` class (made with its
            defaults); a function of ``(y_true, y_pred)`` (its mean, a
            ``MeanMetricWrapper`` named after it); or a config dict (see ``deserialize``).

    Raises:
        ValueError: anything else, naming the known names.
    """
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in ("accuracy", "acc"):
        return _KerasAccuracy(name=identifier)  # (Keras's compile takes any casing)
    if isinstance(identifier, str) and identifier in _NAMES:
        cls = _NAMES[identifier]
        if cls in _CONFUSION:  # Keras's default name, whichever of its names was given
            return cls()
        return cls(name=identifier)
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, dict):
        found = deserialize(identifier)
        if isinstance(found, Metric):
            return found
        identifier = found
    if callable(identifier) and not isinstance(identifier, type):
        name = getattr(identifier, "__name__", None)
        return MeanMetricWrapper(identifier, name=name if name != "<lambda>" else None)
    raise ValueError(f"cannot interpret {identifier!r} as a metric; known: {sorted(_NAMES)}")


def serialize(metric: Any) -> Any:
    """A metric (or metric function) as Keras 3's config dict, which ``deserialize`` (and
    Keras's) turns back into it.

    Examples:
        >>> from ember import nn
        >>> config = nn.metrics.serialize(nn.metrics.TopKCategoricalAccuracy(k=3))
        >>> config["class_name"], config["config"]["k"]
        ('TopKCategoricalAccuracy', 3)
    """
    from .saving import serialize_keras_object

    return serialize_keras_object(metric)


def deserialize(config: Any, custom_objects: dict[str, Any] | None = None) -> Any:
    """The metric (or metric function) a config from ``serialize`` (or Keras's) describes;
    a class's name alone gives the class, a function's name the function."""
    from .saving import deserialize_keras_object

    if isinstance(config, dict) and config.get("class_name") == "function":
        return _function_from_config(config, custom_objects)
    return deserialize_keras_object(config, custom_objects, module_objects=_classes())


def _function_from_config(config: Any, custom_objects: dict[str, Any] | None = None) -> Any:
    """A metric function from its saved form (its name, or ``{"class_name": "function",
    "config": name, ...}``)."""
    from .saving import deserialize_keras_object

    return deserialize_keras_object(config, custom_objects, module_objects=_FUNCTIONS)

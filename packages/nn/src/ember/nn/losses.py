"""Losses with ``weights`` and ``reduction`` as TensorFlow's ``tf.losses``.

Each loss computes per-element values, multiplies by ``weights`` (broadcast) and reduces;
the default reduction, ``SUM_BY_NONZERO_WEIGHTS``, is the plain mean when ``weights=1``.
Cross entropies work from logits through log-sum-exp, so large logits never overflow.

Examples:
    >>> import ember.core as em
    >>> from ember import nn
    >>> float(nn.losses.mean_squared_error([1., 2.], [1., 4.]))
    2.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from ._losses_ctc import CTC, ctc
from .keras_losses import (  # Keras-style names: (y_true, y_pred), probabilities by default
    BinaryCrossentropy,
    CategoricalCrossentropy,
    Huber,
    KLDivergence,
    Loss,
    MeanAbsoluteError,
    MeanSquaredError,
    SparseCategoricalCrossentropy,
    _mae,
    _mse,
    _ShapedCrossentropy,
    binary_crossentropy,
    categorical_crossentropy,
    huber,
    kl_divergence,
    match_ranks,
    sparse_categorical_crossentropy,
)
from .keras_losses_more import (  # Keras 3's other losses
    BinaryFocalCrossentropy,
    CategoricalFocalCrossentropy,
    CategoricalGeneralizedCrossEntropy,
    CategoricalHinge,
    Circle,
    CosineSimilarity,
    Dice,
    Hinge,
    LogCosh,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    Poisson,
    SquaredHinge,
    Tversky,
    binary_focal_crossentropy,
    categorical_focal_crossentropy,
    categorical_generalized_cross_entropy,
    categorical_hinge,
    circle,
    cosine_similarity,
    dice,
    hinge,
    log_cosh,
    mean_absolute_percentage_error,
    mean_squared_logarithmic_error,
    poisson,
    squared_hinge,
    tversky,
)

__all__ = ["BinaryCrossentropy", "CTC", "CategoricalCrossentropy", "Huber", "KLDivergence", "Loss",
           "MeanAbsoluteError", "MeanSquaredError", "Reduction",
           "SparseCategoricalCrossentropy", "absolute_difference", "binary_crossentropy",
           "categorical_crossentropy", "compute_weighted_loss", "ctc", "get", "huber", "huber_loss",
           "MAE", "MSE", "mae", "mean_absolute_error", "mean_squared_error", "mse",
           "sigmoid_cross_entropy",
           "softmax_cross_entropy", "sparse_categorical_crossentropy",
           "sparse_softmax_cross_entropy", "kl_divergence"]
__all__ += ["BinaryFocalCrossentropy", "CategoricalFocalCrossentropy",
            "CategoricalGeneralizedCrossEntropy", "CategoricalHinge", "Circle",
            "CosineSimilarity", "Dice", "Hinge", "LogCosh", "MeanAbsolutePercentageError",
            "MeanSquaredLogarithmicError", "Poisson", "SquaredHinge", "Tversky",
            "binary_focal_crossentropy", "categorical_focal_crossentropy",
            "categorical_generalized_cross_entropy", "categorical_hinge", "circle",
            "cosine_similarity", "dice", "hinge", "log_cosh", "mean_absolute_percentage_error",
            "mean_squared_logarithmic_error", "poisson", "squared_hinge", "tversky",
            "KLD", "kld", "kullback_leibler_divergence", "logcosh", "MAPE", "mape", "MSLE",
            "msle"]


class Reduction:
    """How per-element losses become the returned value: ``tf.losses.Reduction`` (TF 1),
    whose values the ``tf.losses``-style functions here take. A Keras loss object takes
    them too, as the Keras reduction each means (``SUM`` is ``"sum"``,
    ``SUM_OVER_BATCH_SIZE`` ``"sum_over_batch_size"``, ``MEAN`` ``"mean_with_sample_weight"``;
    ``AUTO`` is Keras's ``"auto"``), so ``tf.keras.losses.Reduction.SUM`` code runs."""

    AUTO = "auto"
    NONE = "none"
    SUM = "weighted_sum"
    MEAN = "weighted_mean"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_BY_NONZERO_WEIGHTS)


def _float(x: Any, like: Any = None) -> Any:
    t = em.convert_to_tensor(x)
    dt = like.dtype if like is not None else (t.dtype if t.dtype.kind == "f" else em.float32)
    return t if t.dtype == dt else em.cast(t, dt)


def compute_weighted_loss(losses: Any, weights: Any = 1.0,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Multiply ``losses`` by ``weights`` (broadcast) and reduce as ``reduction`` says."""
    if reduction not in Reduction.all():
        raise ValueError(f"unknown reduction {reduction!r}; use one of {Reduction.all()}")
    scalar_w = isinstance(weights, (int, float))
    if scalar_w and weights == 1.0:
        if reduction == Reduction.NONE:
            return losses
        if reduction == Reduction.SUM:
            return em.reduce_sum(losses)
        return em.reduce_mean(losses)
    w = _float(weights, losses)
    try:
        fits = np.broadcast_shapes(tuple(w.shape), tuple(losses.shape)) == tuple(losses.shape)
    except ValueError:
        fits = False
    if not fits:  # weights must not enlarge the losses (a (N, 1) against (N,) would)
        raise ValueError(f"weights of shape {tuple(w.shape)} do not broadcast to the losses' "
                         f"shape {tuple(losses.shape)}")
    weighted = em.multiply(losses, w)
    if reduction == Reduction.NONE:
        return weighted
    total = em.reduce_sum(weighted)
    if reduction == Reduction.SUM:
        return total
    if reduction == Reduction.SUM_OVER_BATCH_SIZE:
        return em.multiply(total, 1.0 / max(losses.size, 1))
    # The denominator is computed with ops from the weights (never read on the host), so a
    # GPU step needs no sync and graph mode replays it with each batch's weights.
    wb = em.broadcast_to(w, losses.shape)
    if reduction == Reduction.MEAN:
        denom = em.reduce_sum(wb)
    else:
        denom = em.cast(em.count_nonzero(wb), total.dtype)
    zero = em.equal(denom, 0)
    return em.where(zero, em.zeros_like(total),
                    em.divide(total, em.where(zero, em.ones_like(denom), denom)))


def mean_squared_error(labels: Any, predictions: Any, weights: Any = 1.0,
                       reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """(predictions - labels)^2, weighted and reduced."""
    p = _float(predictions)
    y = match_ranks("mean_squared_error", _float(labels, p), p)
    return compute_weighted_loss(em.squared_difference(p, y), weights, reduction)


def absolute_difference(labels: Any, predictions: Any, weights: Any = 1.0,
                        reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """|predictions - labels|, weighted and reduced."""
    p = _float(predictions)
    y = match_ranks("absolute_difference", _float(labels, p), p)
    return compute_weighted_loss(em.abs(em.subtract(p, y)), weights, reduction)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Any:
    """Keras's ``keras.losses.mean_absolute_error`` (``tf.keras.losses.mae``): the mean of
    ``|y_true - y_pred|`` over the last axis, one value per example (TF 1's reduced form
    is ``absolute_difference``)."""
    return _mae(y_true, y_pred)


def mse(y_true: Any, y_pred: Any) -> Any:
    """``tf.keras.losses.mse``: the mean of ``(y_true - y_pred) ** 2`` over the last axis,
    one value per example (``mean_squared_error`` here is TF 1's weighted, reduced form,
    as the guides use it)."""
    return _mse(y_true, y_pred)


mae = MAE = mean_absolute_error
MSE = mse
# tf.keras's short names of Keras's per-example functions (keras.losses exports them too)
KLD = kld = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh
MAPE = mape = mean_absolute_percentage_error
MSLE = msle = mean_squared_logarithmic_error


def huber_loss(labels: Any, predictions: Any, weights: Any = 1.0, delta: float = 1.0,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """0.5 e^2 where |e| <= delta, else delta (|e| - 0.5 delta)."""
    p = _float(predictions)
    y = match_ranks("huber_loss", _float(labels, p), p)
    err = em.abs(em.subtract(p, y))
    quad = em.minimum(err, delta)
    lin = em.subtract(err, quad)
    loss = em.add(em.multiply(em.square(quad), 0.5), em.multiply(lin, delta))
    return compute_weighted_loss(loss, weights, reduction)


def _smooth(labels: Any, smoothing: float, classes: int) -> Any:
    if not smoothing:
        return labels
    return em.add(em.multiply(labels, 1.0 - smoothing), smoothing / classes)


def softmax_cross_entropy(onehot_labels: Any, logits: Any, weights: Any = 1.0,
                          label_smoothing: float = 0.0,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Cross entropy between one-hot (or soft) labels and ``softmax(logits)``, per example."""
    x = _float(logits)
    y = match_ranks("softmax_cross_entropy", _float(onehot_labels, x), x)
    y = _smooth(y, label_smoothing, x.shape[-1])
    losses = em.nn_ops.softmax_cross_entropy_with_logits(labels=y, logits=x)
    return compute_weighted_loss(losses, weights, reduction)


def sparse_softmax_cross_entropy(labels: Any, logits: Any, weights: Any = 1.0,
                                 reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Cross entropy for integer class ``labels`` against ``logits``, per example."""
    x = _float(logits)
    y = em.convert_to_tensor(labels)
    if y.dtype.kind not in "iu":
        y = em.cast(y, em.int64)
    losses = em.nn_ops.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x)
    return compute_weighted_loss(losses, weights, reduction)


def sigmoid_cross_entropy(multi_class_labels: Any, logits: Any, weights: Any = 1.0,
                          label_smoothing: float = 0.0,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Binary cross entropy from logits, element-wise, stable for any logit size."""
    x = _float(logits)
    z = match_ranks("sigmoid_cross_entropy", _float(multi_class_labels, x), x)
    if label_smoothing:
        z = em.add(em.multiply(z, 1.0 - label_smoothing), 0.5 * label_smoothing)
    losses = em.nn_ops.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    return compute_weighted_loss(losses, weights, reduction)


# A string in compile() means what it means in Keras (probabilities for the Keras names,
# logits for the tf.losses names).
_NAMES: dict[str, Any] = {
    "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
    "huber": Huber, "huber_loss": huber_loss, "absolute_difference": absolute_difference,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
    "kl_divergence": KLDivergence, "kld": KLDivergence,
    "kullback_leibler_divergence": KLDivergence,
    "softmax_cross_entropy": softmax_cross_entropy,
    "sparse_softmax_cross_entropy": sparse_softmax_cross_entropy,
    "sigmoid_cross_entropy": sigmoid_cross_entropy,
    "ctc": CTC,
}
# Keras 3's other names (keras.losses.ALL_OBJECTS_DICT): each class's own, each function's,
# and the short ones
_NAMES.update({
    "BinaryCrossentropy": BinaryCrossentropy, "bce": BinaryCrossentropy,
    "BCE": BinaryCrossentropy, "CategoricalCrossentropy": CategoricalCrossentropy,
    "SparseCategoricalCrossentropy": SparseCategoricalCrossentropy, "CTC": CTC,
    "Huber": Huber, "KLDivergence": KLDivergence, "KLD": KLDivergence,
    "MeanAbsoluteError": MeanAbsoluteError, "MAE": MeanAbsoluteError,
    "MeanSquaredError": MeanSquaredError, "MSE": MeanSquaredError,
    "BinaryFocalCrossentropy": BinaryFocalCrossentropy,
    "binary_focal_crossentropy": BinaryFocalCrossentropy,
    "CategoricalFocalCrossentropy": CategoricalFocalCrossentropy,
    "categorical_focal_crossentropy": CategoricalFocalCrossentropy,
    "CategoricalHinge": CategoricalHinge, "categorical_hinge": CategoricalHinge,
    "Circle": Circle, "circle": Circle,
    "CosineSimilarity": CosineSimilarity, "cosine_similarity": CosineSimilarity,
    "Dice": Dice, "dice": Dice, "Hinge": Hinge, "hinge": Hinge,
    "LogCosh": LogCosh, "log_cosh": LogCosh,
    "MeanAbsolutePercentageError": MeanAbsolutePercentageError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError, "MAPE": MeanAbsolutePercentageError,
    "MeanSquaredLogarithmicError": MeanSquaredLogarithmicError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "msle": MeanSquaredLogarithmicError, "MSLE": MeanSquaredLogarithmicError,
    "Poisson": Poisson, "poisson": Poisson,
    "SquaredHinge": SquaredHinge, "squared_hinge": SquaredHinge,
    "Tversky": Tversky, "tversky": Tversky,
})


# Keras 3's ``losses.get`` gives these names' per-example functions (``get("mse")(y, p)`` is
# of shape ``(batch,)``, as ``keras.losses.get``); compile() takes each as the loss object of
# the same name, which is what Keras's compile wraps the function into.
_FUNCTIONS: dict[str, Any] = {
    "mse": mse, "MSE": mse, "mean_squared_error": mse,
    "mae": mae, "MAE": mae, "mean_absolute_error": mae,
    "mape": mean_absolute_percentage_error, "MAPE": mean_absolute_percentage_error,
    "mean_absolute_percentage_error": mean_absolute_percentage_error,
    "msle": mean_squared_logarithmic_error, "MSLE": mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error": mean_squared_logarithmic_error,
    "bce": binary_crossentropy, "BCE": binary_crossentropy,
    "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "binary_focal_crossentropy": binary_focal_crossentropy,
    "categorical_focal_crossentropy": categorical_focal_crossentropy,
    "kld": kl_divergence, "KLD": kl_divergence, "kl_divergence": kl_divergence,
    "kullback_leibler_divergence": kl_divergence,
    "huber": huber, "log_cosh": log_cosh, "poisson": poisson, "hinge": hinge,
    "squared_hinge": squared_hinge, "categorical_hinge": categorical_hinge,
    "cosine_similarity": cosine_similarity, "circle": circle, "ctc": ctc, "dice": dice,
    "tversky": tversky,
}


def get(identifier: Any) -> Any:
    """``keras.losses.get``: a Keras function name gives its per-example function
    (``get("mse")`` is ``mse``), a class name an instance with the defaults
    (``get("MeanSquaredError")``), a ``tf.losses`` name its function; a callable is
    returned as it is.

    Examples:
        >>> from ember import nn
        >>> nn.losses.get("mse")([[0.0, 0.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 3.0]]).shape
        (2,)
    """
    if isinstance(identifier, str) and identifier in _FUNCTIONS:
        return _FUNCTIONS[identifier]
    return _resolve(identifier)


def _for_compile(identifier: Any) -> Any:
    """What ``compile(loss=...)`` makes of a name: the loss object of the same name with
    its defaults (a ``tf.losses`` name: its function), or the callable given;
    ``"crossentropy"`` and ``"ce"`` (any case) pick the cross entropy by the shapes."""
    if isinstance(identifier, str) and identifier.lower() in ("crossentropy", "ce"):
        return _ShapedCrossentropy(name=identifier)  # (Keras 3's compile only)
    return _resolve(identifier)


def _resolve(identifier: Any) -> Any:
    if isinstance(identifier, str):
        if identifier not in _NAMES:
            raise ValueError(f"unknown loss {identifier!r}; known: {sorted(_NAMES)}")
        found = _NAMES[identifier]
        return found() if isinstance(found, type) else found
    if callable(identifier):
        return identifier
    raise ValueError(f"cannot interpret {identifier!r} as a loss")

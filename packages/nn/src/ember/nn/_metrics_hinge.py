"""Keras 3's hinge metrics: ``Hinge``, ``SquaredHinge`` and ``CategoricalHinge``, the means
of the functions ``hinge``, ``squared_hinge`` and ``categorical_hinge`` (``nn.metrics``
holds them all).

As Keras, labels that are all 0 or 1 in a batch are taken as -1 and 1 (``2y - 1``);
labels already in {-1, 1} (or anything else) are taken as they are. That choice is made
on the device, per batch, without reading the labels back.
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from ._metrics_wrapper import MeanMetricWrapper, float_pair


def _signed_labels(y: Any) -> Any:
    """Keras's ``convert_binary_labels_to_hinge``: ``2y - 1`` when every label is 0 or 1."""
    binary = em.reduce_all(em.logical_or(em.equal(y, 0.0), em.equal(y, 1.0)))
    return em.where(binary, em.subtract(em.multiply(y, 2.0), 1.0), y)


def _margins(fn: str, y_true: Any, y_pred: Any) -> Any:
    y, p = float_pair(fn, y_true, y_pred)
    return em.maximum(em.subtract(1.0, em.multiply(_signed_labels(y), p)), 0.0)


def hinge(y_true: Any, y_pred: Any) -> Any:
    """``mean(max(1 - y_true * y_pred, 0))`` over the last axis (labels in {-1, 1}, or in
    {0, 1}: see the module).

    Examples:
        >>> from ember import nn
        >>> nn.metrics.hinge([[0.0, 1.0]], [[0.6, 0.4]]).numpy()
        array([1.1], dtype=float32)
    """
    return em.reduce_mean(_margins("hinge", y_true, y_pred), axis=-1)


def squared_hinge(y_true: Any, y_pred: Any) -> Any:
    """``mean(max(1 - y_true * y_pred, 0)^2)`` over the last axis."""
    return em.reduce_mean(em.square(_margins("squared_hinge", y_true, y_pred)), axis=-1)


def categorical_hinge(y_true: Any, y_pred: Any) -> Any:
    """``max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)`` over the last axis
    (one-hot labels)."""
    y, p = float_pair("categorical_hinge", y_true, y_pred)
    pos = em.reduce_sum(em.multiply(y, p), axis=-1)
    neg = em.reduce_max(em.multiply(em.subtract(1.0, y), p), axis=-1)
    return em.maximum(em.add(em.subtract(neg, pos), 1.0), 0.0)


class Hinge(MeanMetricWrapper):
    """The mean of ``hinge``."""

    def __init__(self, name: str | None = "hinge", dtype: Any = None) -> None:
        super().__init__(hinge, name, dtype)


class SquaredHinge(MeanMetricWrapper):
    """The mean of ``squared_hinge``."""

    def __init__(self, name: str | None = "squared_hinge", dtype: Any = None) -> None:
        super().__init__(squared_hinge, name, dtype)


class CategoricalHinge(MeanMetricWrapper):
    """The mean of ``categorical_hinge``."""

    def __init__(self, name: str | None = "categorical_hinge", dtype: Any = None) -> None:
        super().__init__(categorical_hinge, name, dtype)

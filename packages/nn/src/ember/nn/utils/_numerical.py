"""``to_categorical`` and ``normalize``, as Keras 3's: numpy in, numpy out; an ember Tensor
in, a Tensor out on its device."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

import ember.core as em


def to_categorical(x: Any, num_classes: int | None = None, dtype: Any = "float32") -> Any:
    """Class ids as one-hot rows, the class axis last (``keras.utils.to_categorical``).

    Args:
        x: class ids, integers in ``[0, num_classes)`` (a trailing axis of one is
            dropped, as Keras: ``(N, 1)`` gives ``(N, num_classes)``).
        num_classes: the number of classes; None infers ``max(x) + 1`` (for a Tensor, one
            read of its maximum from the device).
        dtype: the result's dtype: float32 by default, as tf.keras's argument. (Keras 3
            dropped the argument, and its numpy path gives float64, a promotion nobody asked
            for: targets twice the size, and float64 wherever they are used.)

    Returns:
        A numpy array, or for an ember Tensor a Tensor on its device.

    Raises:
        ValueError: an id that is negative, not a whole number, or ``>= num_classes``
            (Keras's numpy path would wrap a negative id, or fail with an IndexError).

    Examples:
        >>> from ember import nn
        >>> nn.utils.to_categorical([0, 1, 2, 3], num_classes=4).tolist()[1]
        [0.0, 1.0, 0.0, 0.0]
    """
    _check_classes(num_classes)
    if isinstance(x, em.Tensor):
        out_t = _tensor_categorical(x, num_classes)
        return out_t if em.as_dtype(dtype) == out_t.dtype else em.cast(out_t, em.as_dtype(dtype))
    raw = np.asarray(x)
    if raw.dtype.kind == "f" and not np.all(np.isfinite(raw) & (raw == np.round(raw))):
        raise ValueError("to_categorical: x holds class ids, whole numbers; got non-integer "
                         "values")
    if raw.dtype.kind not in "iufb":
        raise ValueError(f"to_categorical: x holds class ids, whole numbers; got dtype "
                         f"{raw.dtype}")
    ids = raw.astype(np.int64)
    if ids.ndim > 1 and ids.shape[-1] == 1:
        ids = ids[..., 0]
    if num_classes is None:
        if ids.size == 0:
            raise ValueError("to_categorical: cannot infer num_classes from an empty x")
        num_classes = int(ids.max()) + 1
    if ids.size and (ids.min() < 0 or ids.max() >= num_classes):
        raise ValueError(f"to_categorical: class ids must be in [0, {num_classes}); got "
                         f"values from {ids.min()} to {ids.max()}")
    out = np.zeros((ids.size, num_classes), em.as_dtype(dtype))
    out[np.arange(ids.size), ids.reshape(-1)] = 1
    return out.reshape(ids.shape + (num_classes,))


def _check_classes(num_classes: Any) -> None:
    if num_classes is None:
        return
    if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral) or \
            num_classes < 1:
        raise ValueError(f"to_categorical: num_classes must be a whole number >= 1 or None, "
                         f"got {num_classes!r}")


def _tensor_categorical(x: Any, num_classes: int | None) -> Any:
    with em.device(x.device):
        if x.ndim > 1 and x.shape[-1] == 1:
            x = em.squeeze(x, -1)
        if x.dtype.kind == "f":  # whole numbers stored as floats: checked on the device
            whole = em.round(x)
            x = em.add(whole, em.debugging.check_range(
                em.subtract(x, whole), 0.0, 0.0,
                "to_categorical: x holds whole class ids, so x - round(x)"))
        if num_classes is None:
            if x.size == 0:
                raise ValueError("to_categorical: cannot infer num_classes from an empty x")
            num_classes = int(em.reduce_max(x).numpy()) + 1
        x = em.debugging.check_range(x, 0, num_classes - 1, "to_categorical: class ids")
        return em.one_hot(em.cast(x, em.int64), int(num_classes), dtype=em.float32)


def normalize(x: Any, axis: int = -1, order: Any = 2) -> Any:
    """``x`` divided by its ``order``-norm along ``axis`` (``keras.utils.normalize``);
    a zero norm leaves its values as they are (divided by 1, as Keras's numpy path).

    Args:
        x: an array (numpy out) or an ember Tensor (a Tensor out, on its device).
        axis: the axis along which the norm is taken (an int).
        order: the vector norm's order, as ``numpy.linalg.norm``'s ``ord``: a positive
            number, ``inf`` (largest magnitude), ``-inf`` (smallest) or 0 (the count of
            non-zero values).

    Returns:
        The normalized copy: numpy's dtype of ``x / norm`` for arrays (float64 for
        integers), ``x``'s float dtype for a Tensor.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> nn.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
        [[0.6, 0.8], [0.0, 0.0]]
    """
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise ValueError(f"normalize: axis must be an int (the axis the norm runs along), "
                         f"got {axis!r}")
    if isinstance(order, bool) or not isinstance(order, numbers.Real) or \
            (order < 0 and order != -np.inf):
        raise ValueError(f"normalize: order must be a number >= 0, inf or -inf (a vector "
                         f"norm's order), got {order!r}")
    if isinstance(x, em.Tensor):
        return _tensor_normalize(x, int(axis), float(order))
    x = np.asarray(x)
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"normalize: axis {axis} is out of range for x of shape {x.shape}")
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


def _tensor_normalize(x: Any, axis: int, order: float) -> Any:
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"normalize: axis {axis} is out of range for x of shape "
                         f"{tuple(x.shape)}")
    with em.device(x.device):
        if x.dtype.kind != "f":
            x = em.cast(x, em.float32)
        a = em.abs(x)
        if order == np.inf:
            norm = em.reduce_max(a, axis=axis, keepdims=True)
        elif order == -np.inf:
            norm = em.reduce_min(a, axis=axis, keepdims=True)
        elif order == 0:
            norm = em.reduce_sum(em.cast(em.not_equal(x, 0), x.dtype), axis=axis,
                                 keepdims=True)
        elif order == 2:
            norm = em.sqrt(em.reduce_sum(em.square(x), axis=axis, keepdims=True))
        else:
            norm = em.pow(em.reduce_sum(em.pow(a, order), axis=axis, keepdims=True),
                          1.0 / order)
        return em.divide(x, em.where(em.equal(norm, 0), em.ones_like(norm), norm))

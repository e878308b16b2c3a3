"""``MeanMetricWrapper``, Keras 3's: the (weighted) mean of a function ``fn(y_true, y_pred,
**kwargs)`` of each batch, and the shared base of the metrics that are such a mean
(``TopKCategoricalAccuracy``, ``MeanAbsolutePercentageError``, the crossentropies ...;
``nn.metrics`` holds them all).

What a mean counts, as Keras's ``Mean``: each value ``fn`` returns (one per example, or
per example and step) weighs ``sample_weight`` (one weight per example covers its
values), and the result is the weighted sum over the weights' sum, 0 before any update.
Predictions that carry a mask (``Masking``, ``Embedding(mask_zero=True)``, an RNN's
sequences) weigh 0 where masked, as Keras's ``MeanMetricWrapper`` takes them.

The values are computed in the predictions' float dtype and summed in float64 on their
device: an update reads nothing back.
"""

from __future__ import annotations

import inspect
from typing import Any

from .keras_losses import _float, _mask_of, apply_mask, match_ranks
from .metrics import Mean, Metric, _tensor

_EPSILON = 1e-7  # Keras's backend.epsilon()


def float_pair(fn: str, y_true: Any, y_pred: Any) -> tuple[Any, Any]:
    """``(y_true, y_pred)`` as tensors of ``y_pred``'s float dtype (float32 for integers),
    ``y_true`` made to ``y_pred``'s shape for a trailing axis of one; any other difference
    in shape is an error naming ``fn``, never a silent broadcast."""
    p = _float(_tensor(y_pred))
    return match_ranks(fn, _float(_tensor(y_true), p), p), p


class MeanMetricWrapper(Mean):
    """The (weighted) mean of ``fn(y_true, y_pred, **kwargs)`` over every batch seen.

    Args:
        fn: the function, taking ``(y_true, y_pred)`` and the keyword arguments given
            here, returning one value per example (or per example and step).
        name: the metric's name (``"mean_metric_wrapper"`` by default, as Keras; a
            compiled model names it after ``fn``).
        dtype: the result's dtype (float32 by default).
        **kwargs: passed on to ``fn``; one ``fn`` does not take is refused by name here.

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.MeanMetricWrapper(nn.metrics.hinge)
        >>> m.update_state([[0.0, 1.0]], [[0.6, 0.4]])
        >>> round(float(m.result()), 6)
        1.1
    """

    _ember_raw_config = True  # (nn.saving: ``from_config`` resolves ``fn`` by its name)

    def __init__(self, fn: Any, name: str | None = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(name, dtype)
        if not callable(fn):
            raise TypeError(f"{self.name}: fn must be a function of (y_true, y_pred), got "
                            f"{fn!r}")
        try:
            inspect.signature(fn).bind(None, None, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}: fn {getattr(fn, '__name__', fn)!r} does not take "
                            f"the arguments {sorted(kwargs)}: {e}") from e
        except ValueError:  # (a builtin without a signature: its call will tell)
            pass
        self._fn, self._fn_kwargs = fn, dict(kwargs)

    def _values(self, y_true: Any, y_pred: Any) -> Any:
        return _tensor(self._fn(y_true, y_pred, **self._fn_kwargs))

    def update_state(self, y_true: Any, y_pred: Any,  # type: ignore[override]
                     sample_weight: Any = None) -> None:  # (Keras's: a Mean of fn's values)
        """Add the batch's values, weighed by ``sample_weight`` and by the masks the
        predictions and the values carry (a masked value weighs 0)."""
        mask = _mask_of(y_pred)
        values = self._values(y_true, y_pred)
        for m in (mask, _mask_of(values)):  # ("sum": the mask taken as 0/1, as Keras)
            if m is not None:
                sample_weight = apply_mask(sample_weight, m, "sum", values)
        self._accumulate(values, sample_weight)

    def get_config(self) -> dict[str, Any]:
        """``name``, ``dtype``, ``fn`` and ``fn``'s keyword arguments (Keras's). One of
        Keras's metric functions is given in Keras's saved form (by its name, so that
        Keras loads it too); another function as itself (``nn.saving`` saves it by its
        registered name). A subclass that fixes its function gives its own constructor's
        arguments instead."""
        if "fn" not in inspect.signature(type(self).__init__).parameters:
            return Metric.get_config(self)
        from .metrics import _FUNCTIONS

        fn = self._fn
        name = getattr(fn, "__name__", None)
        if name in _FUNCTIONS and _FUNCTIONS[name] is fn:  # Keras's form of its own
            fn = {"module": "builtins", "class_name": "function", "config": name,
                  "registered_name": "function"}
        return {"name": self.name, "dtype": str(self.dtype), "fn": fn, **self._fn_kwargs}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        config = dict(config)
        if isinstance(config.get("fn"), (dict, str)):  # a saved function: by its name
            from .metrics import _function_from_config

            config["fn"] = _function_from_config(config["fn"])
        return cls(**config)

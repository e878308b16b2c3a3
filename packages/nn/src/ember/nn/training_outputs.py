"""``compile``'s losses, loss weights and metrics for a functional model of several
outputs, in Keras's forms, resolved once per output.

- ``loss``: one loss for every output; a list (one per output, ``None`` for none); or a
  dict by output name (outputs not in it have no loss).
- ``loss_weights``: a list or a dict by output name (1.0 for the others). The loss fit
  minimises is the weighted sum, plus regularization and ``add_loss`` losses.
- ``metrics``: a list of names, each computed for every output; a list of lists (one per
  output); or a dict by output name of a metric or a list of them. A metric object is
  one output's: the same object for two outputs is refused.

Targets come as a list (one per output; None for an output without a loss) or a dict by
output name, or, as Keras 3, a list of one per output that has a loss. ``sample_weight``
is one array for every output, or a list or dict by output name in the targets' forms.
The logs hold ``loss``, ``<output>_loss`` for each output with a loss when more than one
has one, and ``<output>_<metric>``, as Keras 3.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from . import losses as _losses
from . import metrics as _metrics


@dataclasses.dataclass
class Outputs:
    """What ``compile`` gave each output, in the model's output order."""

    names: list[str]
    losses: list[Any]  # a loss, or None
    weights: list[float]
    trackers: list[Any]  # a Mean named "<output>_loss", or None where no loss
    metrics: list[tuple[int, Any]]  # (output index, metric named "<output>_<metric>")
    weighted: list[tuple[int, Any]] = dataclasses.field(default_factory=list)  # (the same,
    # for weighted_metrics: they see the sample weights, the others do not, as Keras 3's)

    def with_loss(self) -> list[int]:
        """The indices of the outputs that have a loss."""
        return [i for i, fn in enumerate(self.losses) if fn is not None]

    def targets(self, model: Any, y: Any) -> list[Any]:
        """``y`` as one target per output (None where a dict leaves one out, or where the
        list gives None: an output without a loss). As Keras 3, the targets may also name
        only the outputs that have a loss: a list of those, in output order, or one array
        when one output has a loss."""
        return self._per_output(model, y, "targets")

    def sample_weights(self, model: Any, sample_weight: Any) -> list[Any]:
        """``sample_weight`` as one weight array (or None) per output: one array for
        every output (Keras), or a list or dict by output name like the targets."""
        if sample_weight is None:
            return [None] * len(self.names)
        if not isinstance(sample_weight, (list, tuple, dict)):
            return [sample_weight] * len(self.names)
        return self._per_output(model, sample_weight, "sample_weight")

    def _per_output(self, model: Any, y: Any, what: str) -> list[Any]:
        n = len(self.names)
        if isinstance(y, dict):
            unknown = sorted(set(y) - set(self.names))
            if unknown:
                raise ValueError(f"{model.name}: {what} for {unknown}, which are not among "
                                 f"its outputs {self.names}")
            return [y.get(name) for name in self.names]
        if isinstance(y, (list, tuple)) and len(y) == n:
            return list(y)
        lossy = self.with_loss()
        partial = isinstance(y, (list, tuple)) and 0 < len(y) == len(lossy) < n
        if partial or (not isinstance(y, (list, tuple)) and len(lossy) == 1 < n):
            out: list[Any] = [None] * n
            for i, v in zip(lossy, y if partial else [y]):
                out[i] = v
            return out
        got = f"a {type(y).__name__} of {len(y)}" if isinstance(y, (list, tuple)) else \
            f"one {type(y).__name__}"
        with_loss = [self.names[i] for i in lossy]
        raise ValueError(f"{model.name}: has {n} outputs {self.names}, so its {what} are a "
                         f"list of {n} (None for an output without a loss) or a dict by "
                         f"output name, or a list of one per output with a loss "
                         f"{with_loss}; got {got}")

    def predictions(self, model: Any, y_pred: Any) -> list[Any]:
        if not isinstance(y_pred, (list, tuple)) or len(y_pred) != len(self.names):
            raise ValueError(f"{model.name}: expected its {len(self.names)} outputs "
                             f"{self.names} as a list, got {type(y_pred).__name__}")
        return list(y_pred)


def resolve(model: Any, loss: Any, loss_weights: Any, metrics: Any,
            weighted_metrics: Any = None) -> Outputs | None:
    """The per-output form of ``compile``'s arguments for a model of several outputs;
    None for a model of one output (whose arguments must then be of the one-output form,
    else an error naming the argument)."""
    names = _output_names(model)
    if names is None:
        _check_single(model, loss, loss_weights, metrics)
        _check_single(model, None, None, weighted_metrics)
        return None
    losses = _per_output(model, names, "loss", loss, _losses._for_compile)
    weights = _per_output(model, names, "loss_weights",
                          1.0 if loss_weights is None else loss_weights, _weight)
    weights = [1.0 if w is None else w for w in weights]
    lossy = sum(fn is not None for fn in losses)  # Keras 3 logs <output>_loss only for
    trackers = [_metrics.Mean(f"{n}_loss") if fn is not None and lossy > 1 else None
                for n, fn in zip(names, losses)]  # several losses: one loss is `loss`
    return Outputs(names, losses, weights, trackers, _metrics_per_output(model, names, metrics),
                   _metrics_per_output(model, names, weighted_metrics))


def one_output_loss(model: Any, loss: Any) -> Any:
    """A one-output model's loss given as Keras 3 also takes it: a list of one loss, or a
    dict holding one by the output's name; anything else is returned as it is."""
    if _output_names(model) is not None:
        return loss
    return _the_one(model, loss, "the dict of losses", tuples=False)


def _the_one(model: Any, value: Any, what: str, tuples: bool) -> Any:
    """A one-output model's argument given per output: a list (or, with ``tuples``, a
    tuple) of one, or a dict of one by the output's name, unwrapped; anything else as it
    is."""
    if (isinstance(value, list) or (tuples and isinstance(value, tuple))) and len(value) == 1:
        return value[0]
    if isinstance(value, dict) and len(value) == 1:
        names = getattr(model, "output_names", None) or []
        (key, one), = value.items()
        if key not in names:
            raise ValueError(f"{model.name}: {what} has key {key!r}, which names no output "
                             f"of the model (its output: {names})")
        return one
    return value


def _output_names(model: Any) -> list[str] | None:
    names = getattr(model, "output_names", None)
    if not isinstance(names, list) or len(names) < 2:
        return None
    return names


def _check_single(model: Any, loss: Any, loss_weights: Any, metrics: Any) -> None:
    if isinstance(loss, (list, tuple, dict)):
        raise ValueError(f"{model.name}: a {type(loss).__name__} of losses (one per output) "
                         f"needs a functional model with several outputs; got {loss!r}")
    if isinstance(metrics, dict) or (isinstance(metrics, (list, tuple))
                                     and any(isinstance(m, (list, tuple)) for m in metrics)):
        raise ValueError(f"{model.name}: metrics per output (a dict, or a list of lists) "
                         f"need a functional model with several outputs; got {metrics!r}")


def one_output_weight(model: Any, loss_weights: Any) -> float:
    """A one-output model's ``loss_weights`` as Keras 3 takes them (a number, a list of one,
    or a dict of one by the output's name): the factor on its compiled loss."""
    if loss_weights is None:
        return 1.0
    value = _the_one(model, loss_weights, "loss_weights", tuples=True)
    if isinstance(value, (list, tuple, dict)):
        raise ValueError(f"{model.name}: loss_weights has {len(value)} entries, but the "
                         f"model has one output")
    return _weight(value)


def _weight(value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"a loss weight must be a number, got {value!r}")
    return float(value)


def _per_output(model: Any, names: list[str], what: str, value: Any, make: Any) -> list[Any]:
    """One ``make(v)`` (or None) per output from one value, a list or a dict by name."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise ValueError(f"{model.name}: {what} for {unknown}, which are not among its "
                             f"outputs {names}")
        return [None if value.get(n) is None else make(value[n]) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(f"{model.name}: {what} is a list of {len(value)}, but the model "
                             f"has {len(names)} outputs {names}")
        return [None if v is None else make(v) for v in value]
    return [None if value is None else make(value) for _ in names]


def _metrics_per_output(model: Any, names: list[str], metrics: Any) -> list[tuple[int, Any]]:
    if metrics is None:
        return []
    if isinstance(metrics, dict):
        per = _per_output(model, names, "metrics", metrics, lambda v: v)
    elif isinstance(metrics, (list, tuple)) and any(isinstance(m, (list, tuple))
                                                    for m in metrics) and all(
            m is None or isinstance(m, (list, tuple)) for m in metrics):  # None: no metrics
        per = _per_output(model, names, "metrics", list(metrics), lambda v: v)
    elif isinstance(metrics, (list, tuple)):  # each one for every output (Keras)
        per = [list(metrics) for _ in names]
    else:
        raise ValueError(f"{model.name}: metrics must be a list, a list of lists or a dict "
                         f"by output name; got {metrics!r}")
    given_per = [[] if g is None else list(g) if isinstance(g, (list, tuple)) else [g]
                 for g in per]
    owner: dict[int, str] = {}  # a metric object's one output: checked before any renaming
    for name, given in zip(names, given_per):
        for m in given:
            if isinstance(m, str):
                continue
            if id(m) in owner:
                raise ValueError(f"{model.name}: the metric object "
                                 f"{getattr(m, 'name', m)!r} is given for outputs "
                                 f"{owner[id(m)]!r} and {name!r}; a metric object keeps one "
                                 f"output's state: give one object per output, or the "
                                 f"metric's name")
            owner[id(m)] = name
    made = [(i, name, m, _metrics.get(m)) for i, (name, given) in enumerate(zip(names,
                                                                                given_per))
            for m in given]  # unknown names fail here, before any object is renamed
    out: list[tuple[int, Any]] = []
    for i, name, m, metric in made:
        base = m if isinstance(m, str) else metric.name
        if not base.startswith(f"{name}_"):  # a metric object compiled again keeps its name
            metric.name = f"{name}_{base}"  # Keras's log name
        out.append((i, metric))
    return out

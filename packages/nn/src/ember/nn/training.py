"""The Keras-style loop behind ``Model.compile/fit/evaluate/predict``.

Data is an iterable of batches: ``(x, y)`` or ``(x, y, sample_weight)`` tuples (an
``ember.data`` Dataset, a list, a generator function's result), or arrays ``x``, ``y``
with ``batch_size``. A progress bar (tqdm) shows running loss and metrics.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

import ember.core as em
from ember import graph

from . import class_weights as _class_weights
from . import dtype_policies as _dtype_policies
from . import losses as _losses
from . import metrics as _metrics
from . import optimizers as _optimizers
from . import training_outputs
from .callbacks import CallbackList, History, ProgbarLogger
from .keras_losses import Loss as _KerasLoss
from .keras_losses import apply_mask, reduce_weighted
from .layers._masks import get_mask
from .utils._py_dataset import Epochs, PyDataset


def compile_model(model: Any, optimizer: Any, loss: Any, metrics: Any,
                  loss_weights: Any = None, auto_scale_loss: bool = True,
                  weighted_metrics: Any = None) -> None:
    extra = model._ember.extra
    object.__setattr__(model, "loss", loss)  # as given, as Keras 3's ``Model.loss``
    loss = training_outputs.one_output_loss(model, loss)
    outputs = training_outputs.resolve(model, loss, loss_weights, metrics, weighted_metrics)
    opt = _optimizers.get(optimizer)
    if (auto_scale_loss and model.dtype_policy.name == "mixed_float16"
            and not isinstance(opt, _optimizers.LossScaleOptimizer)):
        # float16 gradients underflow without loss scaling (Keras 3 wraps it too)
        opt = _optimizers.LossScaleOptimizer(opt, name="loss_scale_optimizer")
    object.__setattr__(model, "optimizer", opt)
    extra["outputs"] = outputs  # per-output losses and metrics, or None (one output)
    extra["loss_fn"] = None if loss is None or outputs else _losses._for_compile(loss)
    extra["loss_weight"] = 1.0 if outputs else training_outputs.one_output_weight(
        model, loss_weights)
    extra["loss_tracker"] = _metrics.Mean("loss")
    extra["loss_tracked"] = loss is not None  # else once compiled_loss runs (Keras)
    extra["compiled_loss"] = CompiledLoss(model)
    if outputs:
        plain, weighted = [m for _, m in outputs.metrics], [m for _, m in outputs.weighted]
    else:
        plain = [_compiled_metric(m) for m in metrics or []]
        weighted = [_compiled_metric(m) for m in weighted_metrics or []]
    taken = {m.name for m in plain}
    owners = [outputs.names[i] + "_" for i, _ in outputs.weighted] if outputs else \
        [""] * len(weighted)
    for prefix, m in zip(owners, weighted):  # Keras 3's log name for a weighted twin
        if m.name in taken:  # of an unweighted metric: <output>_weighted_<metric>
            m.name = f"{prefix}weighted_{m.name[len(prefix):]}"
    extra["compiled_metrics"] = CompiledMetrics(model, plain + weighted, weighted)
    extra.pop("traced_steps", None)  # a new optimizer, loss or metrics: trace again


def _compiled_metric(identifier: Any) -> Any:
    """A metric of ``compile``: a name gives the metric named as given (Keras 3's
    ``get_metric``: ``"AUC"`` logs ``AUC``, where ``metrics.get("AUC")`` is named ``auc``)."""
    metric = _metrics.get(identifier)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


class CompiledLoss:
    """``model.compiled_loss(y, y_pred, sample_weight=None, regularization_losses=None)``:
    the compiled loss plus the given extra losses, recorded in the ``loss`` metric (Keras)."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None,
                 regularization_losses: Any = None) -> Any:
        model = self._model
        parts = []
        outputs = model._ember.extra.get("outputs")
        if outputs is not None:
            if any(fn is not None for fn in outputs.losses):  # else add_loss's losses only
                parts += _output_losses(model, outputs, y_true, y_pred, sample_weight)
        elif model._ember.extra.get("loss_fn") is not None:
            y_true, y_pred = _single(y_true), _single(y_pred)
            _one_output(model, y_pred, "the compiled loss")
            if isinstance(y_true, (list, tuple, dict)) and _is_arrays(y_true):
                raise ValueError(f"{model.name}: y is a {type(y_true).__name__} of "
                                 f"{len(y_true)} arrays, one per output, but the model has "
                                 f"one output")
            value = _loss(model, model._ember.extra["loss_fn"], y_true, y_pred,
                          _one_weight(model, sample_weight))
            w = model._ember.extra["loss_weight"]
            parts.append(value if w == 1.0 else em.multiply(value, w))
        # each extra loss (add_loss, regularizers) counts as its sum, as Keras 3's
        # _aggregate_additional_loss: a per-example (batch, 1) add_loss is trained on and
        # logged as one number (the mean over its elements was logged, the sum trained on)
        parts += [_summed(v) for v in regularization_losses or []]
        if not parts:
            raise ValueError(f"{model.name}: nothing to minimise: compile(loss=...) or call "
                             f"add_loss() in call()")
        total = functools.reduce(em.add, parts)
        model._ember.extra["loss_tracked"] = True
        # weighted by the batch's size, as Keras: the epoch's loss is the mean over examples,
        # not over batches (a short last batch counts for its examples only)
        model._ember.extra["loss_tracker"].update_state(
            total, sample_weight=_batch_size(y_true, y_pred))
        return total


def _summed(loss: Any) -> Any:
    t = loss if isinstance(loss, em.Tensor) else em.convert_to_tensor(loss)
    if t.ndim:
        t = em.reduce_sum(t)
    return t if t.dtype.kind == "f" else em.cast(t, em.float32)


def _output_losses(model: Any, outputs: Any, y_true: Any, y_pred: Any,
                   sample_weight: Any) -> list[Any]:
    """Each output's loss times its weight, each recorded in its ``<output>_loss``."""
    ys, preds = outputs.targets(model, y_true), outputs.predictions(model, y_pred)
    sws = outputs.sample_weights(model, sample_weight)
    parts = []
    for name, fn, w, tracker, y, p, sw in zip(outputs.names, outputs.losses, outputs.weights,
                                             outputs.trackers, ys, preds, sws):
        if fn is None:
            continue
        if y is None:
            raise ValueError(f"{model.name}: output {name!r} has a loss but no target (None "
                             f"or left out): give its target, or compile it without a loss "
                             f"(None in the list of losses, or leave it out of the dict)")
        value = _loss(model, fn, y, p, sw)
        if tracker is not None:
            tracker.update_state(value, sample_weight=_batch_size(y, p))
        parts.append(value if w == 1.0 else em.multiply(value, w))
    return parts


def _single(y: Any) -> Any:
    """A one-element list or tuple (``Model(x, [y])``) as its element, as Keras."""
    return y[0] if isinstance(y, (list, tuple)) and len(y) == 1 else y


def _one_weight(model: Any, sample_weight: Any) -> Any:
    """The sample weight of a model of one output: one array (a list of one, as its
    targets), never a list or dict of them, which weigh several outputs."""
    sample_weight = _single(sample_weight)
    if isinstance(sample_weight, dict) or (isinstance(sample_weight, (list, tuple))
                                           and _is_arrays(sample_weight, none=True)):
        raise ValueError(f"{model.name}: sample_weight is a {type(sample_weight).__name__} "
                         f"of {len(sample_weight)} (one per output), but the model has one "
                         f"output")
    return sample_weight


def _one_output(model: Any, y_pred: Any, what: str) -> None:
    """Refuse predictions of several outputs (a list, tuple or dict): a loss or metric
    applied to them as one tensor would stack them and broadcast the targets against the
    stack, a wrong number with no error."""
    if isinstance(y_pred, (list, tuple, dict)):
        raise ValueError(
            f"{model.name}: {what} got {len(y_pred)} outputs ({type(y_pred).__name__}) "
            f"from a model that does not name them; compile's losses and metrics per "
            f"output need a functional model (nn.Model(inputs, [out1, out2])), whose "
            f"outputs have names. Otherwise write the step with a GradientTape (a loss per "
            f"output), or give the model one output")


def _batch_size(y_true: Any, y_pred: Any) -> int:
    """The number of examples in a batch: the leading dimension of the predictions (a
    model's output, so a tensor; the first of several outputs), else of the labels; 1 for
    scalars."""
    for y in (y_pred, y_true):
        first = _leaves(y)[0] if isinstance(y, (list, tuple, dict)) and y else y
        shape = getattr(first, "shape", None)
        if shape is not None and len(shape):
            return int(shape[0])
    return 1


class CompiledMetrics(list):  # type: ignore[type-arg]
    """``model.compiled_metrics``: the metrics given to ``compile``, updated together."""

    def __init__(self, model: Any, metrics: Any, weighted: Any = ()) -> None:
        super().__init__(metrics)
        self._model = model
        self._weighted = {id(m) for m in weighted}  # compile's weighted_metrics

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if not self:
            return
        model = self._model
        outputs = model._ember.extra.get("outputs")
        if outputs is None:
            y_true, y_pred = _single(y_true), _single(y_pred)
            _one_output(model, y_pred, "the compiled metrics")
            sw = _one_weight(model, sample_weight)
            pairs = [(m, y_true, y_pred, sw) for m in self]
        else:  # each metric on its output's target and prediction
            ys, preds = outputs.targets(model, y_true), outputs.predictions(model, y_pred)
            each = outputs.metrics + outputs.weighted
            for i, m in each:
                if ys[i] is None:
                    raise ValueError(f"{model.name}: output {outputs.names[i]!r} has the "
                                     f"metric {m.name!r} but no target")
            sws = outputs.sample_weights(model, sample_weight)
            pairs = [(m, ys[i], preds[i], sws[i]) for i, m in each]
        for m, y, p, sw in pairs:
            # Keras 3: compile's metrics count every example (the mask aside); only its
            # weighted_metrics take the sample weights (class_weight's too)
            sw = _metric_weight(sw if id(m) in self._weighted else None, p)
            if sw is None:
                m.update_state(y, p)
            else:
                m.update_state(y, p, sample_weight=sw)

    def reset_state(self) -> None:
        for m in self:
            m.reset_state()


def _metric_weight(sample_weight: Any, pred: Any) -> Any:
    """A metric's weights: the sample weights times the predictions' mask as 0/1 (Keras
    3's metrics count the real steps only)."""
    mask = get_mask(pred) if isinstance(pred, em.Tensor) else None
    if mask is None:
        return sample_weight
    return apply_mask(sample_weight, mask, "sum", em.cast(mask, em.float32))


def _require_compiled(model: Any) -> None:
    if "loss_tracker" not in model._ember.extra:
        raise RuntimeError(f"{model.name}: call compile(optimizer, loss) before fit/evaluate")


def _rows(a: Any) -> Any:
    """An array argument as rows to batch: a Tensor stays where it is (a GPU tensor is
    batched on its device, never copied to the host); anything else becomes a numpy array.
    A list or tuple of arrays (one per input or output) or a dict of them by name stays a
    list or dict, of rows each."""
    if a is None:  # an output's target or weights left out (no loss, no weighting)
        return None
    if isinstance(a, dict):
        return {k: _rows(v) for k, v in a.items()}
    if isinstance(a, (list, tuple)) and _is_arrays(a, none=True):
        return [_rows(v) for v in a]
    if _is_pandas_series(a):  # Keras 3: a Series is one column, (n, 1)
        return _floatx(np.expand_dims(np.asarray(a), -1))
    return a if isinstance(a, em.Tensor) else _floatx(np.asarray(a))


def _floatx(a: np.ndarray) -> np.ndarray:
    """float64 arrays (numpy's default, and Python floats') as float32, as Keras feeds
    floating arrays in ``floatx``: a float64 model input, target or weight nobody asked
    for (kept where the global dtype policy computes in float64)."""
    if a.dtype == np.float64 and _dtype_policies.dtype_policy().compute_dtype != "float64":
        return a.astype(np.float32)
    return a


def _is_pandas_series(a: Any) -> bool:
    t = type(a)
    return t.__name__ == "Series" and t.__module__.split(".")[0] == "pandas"


def _is_arrays(x: Any, none: bool = False) -> bool:
    """An array or tensor, or a list or tuple of them (a model with several inputs, as
    Keras's ``fit([x1, x2], y)``), or a dict of them by input name; anything else is an
    iterable of batches. ``none``: entries may be None (targets and sample weights per
    output: ``[y, None]``), but not all of them."""
    if isinstance(x, (list, tuple, dict)):
        parts = list(x.values()) if isinstance(x, dict) else list(x)
        arrays = [a for a in parts if not (none and a is None)]
        return bool(arrays) and all(_array_like(a) for a in arrays)
    return _array_like(x)


def _array_like(a: Any) -> bool:
    """An array, a tensor, or what numpy converts by its ``__array__`` (a pandas DataFrame
    or Series, as Keras takes them; iterating one would give its column names)."""
    return isinstance(a, (np.ndarray, em.Tensor)) or (
        hasattr(type(a), "__array__") and not isinstance(a, PyDataset))


def _inputs(x: Any, what: str = "inputs") -> Any:
    """``x`` as rows to batch: one array, or a list or dict of arrays with one row count."""
    if x is None:
        raise ValueError(f"no {what} given")
    rows = _rows(x)
    counts = [len(a) for a in _leaves(rows) if a is not None]
    if len(set(counts)) > 1:
        raise ValueError(f"the {what} hold different numbers of examples: {counts}")
    return rows


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return list(x.values())
    return list(x) if isinstance(x, list) else [x]


def _take(x: Any, j: Any) -> Any:
    if isinstance(x, dict):
        return {k: None if a is None else a[j] for k, a in x.items()}
    return [None if a is None else a[j] for a in x] if isinstance(x, list) else x[j]


def _count(x: Any) -> int:
    return len(next(a for a in _leaves(x) if a is not None))


class _ArrayBatches:
    """Re-iterable batches of arrays or tensors (optionally shuffled each pass); ``x`` may
    be a list of arrays (several inputs), batched alike and handed over as a list."""

    def __init__(self, x: Any, y: Any, batch_size: int, shuffle: bool,
                 sample_weight: Any = None) -> None:
        self.x = _inputs(x)
        # y: one array, or a list or dict of them (one target per output, as Keras)
        self.y = None if y is None else _inputs(y, "targets")
        # sample_weight: one array, or a list or dict of them (one per output)
        self.sw = None if sample_weight is None else _inputs(sample_weight, "sample weights")
        n = _count(self.x)
        if self.y is not None and _count(self.y) != n:
            raise ValueError(f"x holds {n} examples but y holds {_count(self.y)}")
        if self.sw is not None and (self.y is None or _count(self.sw) != n):
            shapes = [None if a is None else tuple(a.shape) for a in _leaves(self.sw)]
            raise ValueError(f"sample_weight needs y and one weight per example: got "
                             f"{shapes[0] if len(shapes) == 1 else shapes} for {n} examples")
        self.batch_size, self.shuffle = batch_size, shuffle

    def __len__(self) -> int:
        return math.ceil(_count(self.x) / self.batch_size)

    def __iter__(self) -> Any:
        n = _count(self.x)
        idx = None
        if self.shuffle:  # the row indices live on the host: shuffle them there
            with em.device("/cpu:0"):
                idx = em.random.shuffle(em.constant(np.arange(n))).numpy()
        for i in range(0, n, self.batch_size):
            # in order: a slice (a view on a device); shuffled: host indices (one upload)
            j = slice(i, i + self.batch_size) if idx is None else idx[i:i + self.batch_size]
            if self.y is None:  # x alone, as Keras packs it (a train_step's data is x)
                xb = _take(self.x, j)
                yield (xb,) if isinstance(xb, (list, tuple)) else xb
            elif self.sw is None:
                yield (_take(self.x, j), _take(self.y, j))
            else:
                yield (_take(self.x, j), _take(self.y, j), _take(self.sw, j))


def _batches(x: Any, y: Any, batch_size: int | None,
             shuffle: bool | None = False, sample_weight: Any = None) -> Iterable[Any]:
    """Batches of arrays (shuffled each pass unless ``shuffle`` is False; None: True), or
    an iterable of batches as given. A ``PyDataset`` takes a new batch order each pass
    unless ``shuffle`` is False, as Keras's ``fit``."""
    if _is_arrays(x) or y is not None:
        return _ArrayBatches(x, y, batch_size or 32,
                             True if shuffle is None else bool(shuffle), sample_weight)
    if x is None:
        raise ValueError("no data given")
    if isinstance(x, PyDataset) and batch_size is None and sample_weight is None:
        # each pass an epoch (its hooks called), shuffled unless shuffle is False (only
        # fit passes None, Keras's default there: True)
        return Epochs(x, shuffle is not False)
    if sample_weight is not None:
        raise ValueError(f"sample_weight applies to arrays; the data given is an iterable of "
                         f"batches ({type(x).__name__}): put the weights in its batches")
    # An iterable of batches is already batched and ordered: say so rather than ignore.
    if batch_size is not None:
        raise ValueError(f"batch_size={batch_size} applies to arrays; the data given is an "
                         f"iterable of batches ({type(x).__name__}), batch it there")
    if shuffle:
        raise ValueError(f"shuffle=True applies to arrays; the data given is an iterable of "
                         f"batches ({type(x).__name__}), shuffle it there")
    return x


def _unpack(batch: Any) -> tuple[Any, Any, Any]:
    if isinstance(batch, (tuple, list)):
        if len(batch) == 1:
            return batch[0], None, None
        if len(batch) == 2:
            return batch[0], batch[1], None
        if len(batch) == 3:
            return batch[0], batch[1], batch[2]
    if isinstance(batch, dict) and "x" in batch:
        return batch["x"], batch.get("y"), batch.get("sample_weight")
    return batch, None, None


def _weight_kwarg(fn: Any) -> str | None:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    for kw in ("sample_weight", "weights"):
        if kw in params:
            return kw
    return None


def _labels_like(y: Any, pred: Any) -> Any:
    """Labels ``(N,)`` for predictions ``(N, 1)`` as ``(N, 1)``, as Keras hands them to any
    compiled loss (its ``match_dtype_and_rank``): a loss written for ``(N, 1)`` never
    broadcasts ``(N,)`` against ``(N, 1)`` into ``(N, N)``. (Keras also expands labels
    for ``(N, k)`` predictions; ember keeps those ``(N,)``, the class ids that the
    ``tf.losses``-style sparse losses take.)"""
    if y is None or tuple(getattr(pred, "shape", ()))[1:] != (1,):
        return y
    y = y if isinstance(y, em.Tensor) else em.convert_to_tensor(y)
    return em.expand_dims(y, -1) if y.ndim == 1 else y


def _loss(model: Any, loss_fn: Any, y: Any, pred: Any, sample_weight: Any) -> Any:
    """The scalar loss: per-example values are averaged, weighted by ``sample_weight`` as
    Keras does (``sum(loss * w) / n``) when the loss does not take weights itself.

    Predictions that carry a mask (padded steps) weigh only their real steps, as Keras 3
    masks a compiled loss: a Keras-style ``Loss`` applies the mask itself; per-example
    values are reduced here to ``sum(loss * w * mask) / valid``; a ``tf.losses``-style
    function (taking ``weights``) gets the 0/1 mask times the sample weights and reduces
    them its own way (by default over the non-zero weights: the same masked mean)."""
    y = _labels_like(y, pred)
    mask = None if isinstance(loss_fn, _KerasLoss) or not isinstance(pred, em.Tensor) \
        else get_mask(pred)
    kw = None if sample_weight is None and mask is None else _weight_kwarg(loss_fn)
    if kw is not None:
        if mask is not None:
            like = em.cast(mask, pred.dtype if pred.dtype.kind == "f" else em.float32)
            sample_weight = apply_mask(sample_weight, mask,
                                       "sum" if kw == "weights" else "sum_over_batch_size",
                                       like)
        value = loss_fn(y, pred, **{kw: sample_weight})
    else:
        value = loss_fn(y, pred)
        if sample_weight is not None or mask is not None:
            if value.ndim == 0:  # never drop the weights or the mask silently
                what = "a sample_weight" if mask is None else "a mask (padded steps)"
                raise TypeError(
                    f"{model.name}: the batch has {what} but the loss "
                    f"{getattr(loss_fn, '__name__', loss_fn)!r} returns a scalar "
                    f"and takes no 'weights' or 'sample_weight' argument")
            sample_weight = apply_mask(sample_weight, mask, "sum_over_batch_size", value)
            return reduce_weighted(value, sample_weight, "sum_over_batch_size")
    if value.ndim:
        value = em.reduce_mean(value)
    return value


# fit's progress bar reads the running loss and metrics back every this many steps (each
# read is one device-to-host copy: a GPU sync); callbacks get them as device tensors.
BAR_EVERY_STEPS = 10


def _logs(model: Any) -> dict[str, Any]:
    return {m.name: m.result() for m in model.metrics}


def _sorted(logs: dict[str, Any]) -> dict[str, Any]:
    """Logs by name, as Keras 3 hands them to callbacks, the bar and History (its
    ``_pythonify_logs``): every key in one order, ``accuracy`` before ``loss`` before
    ``val_loss`` before ``weighted_mae``."""
    return dict(sorted(logs.items()))


def host_logs(logs: Any) -> dict[str, Any]:
    """Logs as Python floats (read once an epoch, or when a bar or callback needs them), with
    one device-to-host copy for all the one-element tensors among them (stacked on their
    device first): reading the logs costs one GPU sync, not one per value. A metric of
    several results (``Precision(thresholds=[...])``, ``F1Score()``) logs a numpy array,
    as Keras logs it."""
    logs = dict(logs)
    tensors = [k for k, v in logs.items() if isinstance(v, em.Tensor) and v.size == 1]
    out = {k: _host_value(v) for k, v in logs.items() if k not in tensors}
    if len({logs[k].device for k in tensors}) == 1:
        stacked = em.stack([em.cast(em.reshape(logs[k], []), em.float64) for k in tensors])
        out.update(zip(tensors, (float(v) for v in stacked.numpy())))
    else:
        out.update({k: float(logs[k]) for k in tensors})
    return {k: out[k] for k in logs}


def _host_value(v: Any) -> Any:
    a = v.numpy() if isinstance(v, em.Tensor) else np.asarray(v)
    return float(a) if a.size == 1 else np.array(a)


def _reset(model: Any) -> None:
    for m in model.metrics:
        m.reset_state()


def train_step(model: Any, x: Any, y: Any, sample_weight: Any = None) -> dict[str, Any]:
    from ember import tape

    with tape.GradientTape() as t:
        pred = model(x, training=True)
        # regularizers and add_loss join the compiled loss, as Keras adds them
        loss = model.compiled_loss(y, pred, sample_weight, regularization_losses=model.losses)
        scaled = model.optimizer.scale_loss(loss)  # a LossScaleOptimizer's loss scale
    variables = model.trainable_variables
    if variables:  # a model with nothing to train still runs (and tracks its loss)
        grads = t.gradient(scaled, variables)
        model.optimizer.apply_gradients(zip(grads, variables))
    model.compiled_metrics.update_state(y, pred, sample_weight)
    return _logs(model)


def test_step(model: Any, x: Any, y: Any, sample_weight: Any = None) -> dict[str, Any]:
    pred = model(x, training=False)
    model.compiled_loss(y, pred, sample_weight, regularization_losses=model.losses)
    model.compiled_metrics.update_state(y, pred, sample_weight)
    return _logs(model)


def _takes_data(method: Any) -> bool:
    """True for a Keras-style ``train_step(self, data)`` override."""
    params = [p for p in inspect.signature(method).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(params) == 1


def _step(model: Any, name: str, batch: Any) -> dict[str, Any]:
    method = getattr(model, name)
    args = (batch,) if _takes_data(method) else _unpack(batch)
    try:
        if model.run_eagerly:  # tensors, as a traced step's arguments are (and TF's)
            return dict(method(*_as_tensors(args)))
        return dict(_traced(model, name, method)(_fingerprint(model), *args))
    except em.DTypeError:
        _refuse_string_batch(model, batch)
        raise


def _refuse_string_batch(model: Any, batch: Any) -> None:
    """A batch of text for a model: say where strings go in ember (the pipeline)."""
    from .layers.base import _refuse_strings

    leaves = [batch]
    while leaves:
        x = leaves.pop()
        if isinstance(x, (list, tuple)) and x and not isinstance(x[0], (str, bytes)):
            leaves.extend(x)
        elif isinstance(x, dict):
            leaves.extend(x.values())
        else:
            _refuse_strings(model, x)


def _as_tensors(x: Any) -> Any:
    """``x`` with each numpy array (in lists, tuples and dicts) as a Tensor."""
    if isinstance(x, np.ndarray):
        return em.convert_to_tensor(x)
    if type(x) in (list, tuple):
        return type(x)(_as_tensors(v) for v in x)
    if type(x) is dict:
        return {k: _as_tensors(v) for k, v in x.items()}
    return x


def _traced(model: Any, name: str, method: Any) -> Any:
    """``method`` as a ``graph.function``, made once per model and step method (as Keras
    makes its train function); its first argument is ``_fingerprint``, so a trace is used
    only for the optimizer and trainable variables it was made for."""
    cache = model._ember.extra.setdefault("traced_steps", {})
    func = getattr(method, "__func__", method)
    hit = cache.get(name)
    if hit is None or hit[0] is not func:
        def step(fingerprint: Any, *args: Any) -> Any:
            return method(*args)

        step.__qualname__ = f"{type(model).__name__}.{name}"
        # reduce_retracing, as Keras's train function: a short last batch is traced
        # once; a third batch size (evaluate on another set) runs eagerly, not retraced
        hit = cache[name] = (func, graph.function(step, reduce_retracing=True))
    return hit[1]


def _fingerprint(model: Any) -> tuple[Any, ...]:
    """What a traced step bakes in beyond its arguments: which optimizer, and which
    variables are trainable (freezing a layer between fits retraces, never trains it)."""
    return (id(getattr(model, "optimizer", None)),
            tuple(v.uid for v in model.trainable_variables))


def _total(data: Any, steps: int | None) -> int | None:
    if steps is not None:
        return steps
    try:
        return len(data)
    except TypeError:
        return None


def _split(x: Any, y: Any, validation_split: float) -> tuple[Any, Any, Any]:
    """The last ``validation_split`` of the arrays (before any shuffling), as Keras."""
    if not 0.0 <= validation_split < 1.0:
        raise ValueError(f"validation_split must be in [0, 1), got {validation_split}")
    if not _is_arrays(x):
        raise ValueError(f"validation_split applies to arrays; the data given is "
                         f"{type(x).__name__}: pass validation_data instead")
    x = _inputs(x)
    n = _count(x)
    at = int(math.floor(n * (1.0 - validation_split)))  # Keras rounds down
    if at == n or at == 0:
        raise ValueError(f"validation_split={validation_split} leaves an empty part of "
                         f"{n} examples")
    y_arr = None if y is None else _inputs(y, "targets")
    tail, head = _take(x, slice(at, None)), _take(x, slice(None, at))
    val = (tail,) if y_arr is None else (tail, _take(y_arr, slice(at, None)))
    return head, None if y_arr is None else _take(y_arr, slice(None, at)), val


def fit(model: Any, x: Any, y: Any, batch_size: int | None, epochs: int, verbose: int,
        callbacks: Any, validation_data: Any, steps_per_epoch: int | None,
        shuffle: bool | None, validation_split: float = 0.0,
        sample_weight: Any = None, initial_epoch: int = 0, class_weight: Any = None,
        validation_steps: int | None = None, validation_batch_size: int | None = None,
        validation_freq: Any = 1) -> History:
    _require_compiled(model)
    _check_verbose(verbose)
    _check_steps("steps_per_epoch", steps_per_epoch)
    _check_steps("validation_steps", validation_steps)
    _check_steps("validation_batch_size", validation_batch_size)
    if isinstance(validation_freq, bool) or not (
            (isinstance(validation_freq, int) and validation_freq >= 1)
            or (isinstance(validation_freq, (list, tuple)) and all(
                isinstance(e, int) and not isinstance(e, bool) for e in validation_freq))):
        raise ValueError(f"validation_freq must be a whole number >= 1 or a list of epochs "
                         f"(counted from 1), got {validation_freq!r}")
    verbose = 1 if verbose == "auto" else int(verbose)
    cw_table = None if class_weight is None else _class_weights.table(class_weight)
    if cw_table is not None:  # Keras's refusals, before anything runs
        _class_weights.check_one_target(y, model)
        if sample_weight is not None:
            raise ValueError("cannot use class_weight and sample_weight at the same time "
                             "(as Keras): fold the class weights into sample_weight")
    if isinstance(validation_data, list) and len(validation_data) in (2, 3):
        validation_data = tuple(validation_data)  # Keras 3 unpacks a list as the tuple
    if validation_split and validation_data is None:  # else validation_data wins, whole
        # training data kept (Keras 3: ``if validation_split and validation_data is None``)
        x, y, split_val = _split(x, y, validation_split)
        if sample_weight is not None:  # the held-out part keeps its weights (Keras)
            at = _count(x)
            weights = _inputs(sample_weight, "sample weights")
            sample_weight = _take(weights, slice(None, at))
            split_val = (*split_val, _take(weights, slice(at, None))) \
                if len(split_val) == 2 else split_val
        validation_data = split_val
    if cw_table is not None and (_is_arrays(x) or y is not None):
        if y is None:
            raise ValueError("class_weight reads the classes from the targets: give y")
        # the training part only (validation is not class-weighted, as Keras)
        one = list(y.values()) if isinstance(y, dict) else y  # {name: y} of one output
        sample_weight = _class_weights.sample_weights(_single(one), cw_table)
    data = _batches(x, y, batch_size, shuffle, sample_weight)
    if cw_table is not None and sample_weight is None:  # an iterable of batches
        data = _class_weights.Weighted(data, cw_table)
    val_batch = None
    if validation_data is not None:
        val_batch = _val_batch_size(validation_data, validation_batch_size or batch_size)
        if validation_batch_size is not None and val_batch is None:
            raise ValueError("validation_batch_size applies to validation arrays; the "
                             "validation data given is already batched (as Keras: give "
                             "no validation_batch_size with a dataset)")
    history = History()
    cbs = CallbackList(_with_progbar(callbacks, verbose, [history]), model,
                       {"epochs": epochs, "steps": _total(data, steps_per_epoch),
                        "verbose": verbose})
    object.__setattr__(model, "stop_training", False)
    if isinstance(initial_epoch, bool) or not isinstance(initial_epoch, (int, np.integer)) \
            or initial_epoch < 0:
        raise ValueError(f"initial_epoch must be a whole number >= 0, got {initial_epoch!r}")
    model._ember.extra.pop("resume", None)  # only this fit's callbacks may set it
    cbs.on_train_begin({})
    # a callback resuming an interrupted fit (BackupAndRestore) says where it left off
    start, skip, resumed = model._ember.extra.pop("resume", (int(initial_epoch), 0, None))
    epoch_logs: dict[str, float] = {}  # the last epoch's, handed to on_train_end (Keras)
    source = _Passes(data, steps_per_epoch)
    for epoch in range(start, epochs):
        _reset(model)
        cbs.on_epoch_begin(epoch, {})
        logs: dict[str, float] = {}
        for step, batch in source.epoch():
            if step < skip:  # trained before the interruption: drawn (as shuffled), not run
                continue
            if resumed is not None:
                hook, resumed = resumed, None
                hook()
            cbs.on_train_batch_begin(step, {})
            logs = _sorted(_step(model, "train_step", batch))
            cbs.on_train_batch_end(step, dict(logs))
            if model.stop_training:
                break
        if resumed is not None:  # the interruption came after the epoch's last step
            hook, resumed = resumed, None
            hook()
            logs = _sorted(_logs(model))
        logs = _metrics_or_logs(model, logs)
        skip = 0
        val: dict[str, Any] = {}
        validates = validation_data is not None and (
            (epoch + 1) % validation_freq == 0 if isinstance(validation_freq, int)
            else epoch + 1 in validation_freq)  # (Keras's epochs counted from 1)
        if validates:  # device tensors (Variable.assign never mutates a value already
            # read, so the training logs survive the metrics' reset); the callbacks see the
            # test hooks, as Keras's fit runs evaluate with its callbacks
            vx, vy, vsw = _validation_parts(validation_data)
            val, _ = _test_logs(model, vx, vy, val_batch, 0, cbs, vsw, validation_steps)
            logs = _sorted({**logs, **{f"val_{k}": v for k, v in val.items()}})
        # once per epoch, validation included: one copy for callbacks, history and the bar
        logs = host_logs(logs)
        if validates:
            cbs.on_test_end({k: logs[f"val_{k}"] for k in sorted(val)})
        cbs.on_epoch_end(epoch, logs)
        epoch_logs = logs
        if model.stop_training:
            break
    finalize = getattr(model.optimizer, "finalize_variable_values", None)
    if finalize is not None and epochs > initial_epoch:  # use_ema: the averages (Keras 3)
        finalize(model.trainable_weights)
    cbs.on_train_end(dict(epoch_logs))
    return history


class _Passes:
    """fit's batches, epoch by epoch. Without ``steps_per_epoch`` each epoch is one pass
    over the data. With it, an epoch takes that many batches and the next epoch goes on
    where it stopped, as Keras's: 10 batches at 3 steps an epoch are batches 0-2, 3-5, 6-8,
    then 9 alone (with a warning that the data ran out), then a new pass. (ember started
    a new pass every epoch, so such a fit trained on the first batches only.)"""

    def __init__(self, data: Any, steps: int | None) -> None:
        self.data, self.steps = data, steps
        self.it: Iterator[Any] | None = None

    def epoch(self) -> Iterator[tuple[int, Any]]:
        if self.steps is None:
            yield from enumerate(self.data)
            return
        step = 0
        while step < self.steps:
            fresh = self.it is None
            if fresh:
                self.it = iter(self.data)
            try:
                batch = next(self.it)  # type: ignore[arg-type]
            except StopIteration:
                self.it = None
                if step == 0 and not fresh:  # the last epoch ended the pass: a new one
                    continue
                if step == 0:
                    raise ValueError("fit: the training data gave no batches") from None
                warnings.warn(f"fit: the training data ran out after {step} of this epoch's "
                              f"steps_per_epoch={self.steps} steps; the epoch ends there "
                              "and the next starts a new pass. Give data that can make "
                              "steps_per_epoch * epochs batches (Dataset.repeat()), as "
                              "Keras asks", stacklevel=4)
                return
            yield step, batch
            step += 1


def _with_progbar(callbacks: Any, verbose: Any, extra: list[Any]) -> list[Any]:
    """The callbacks given, then ``extra`` (fit's History), then a ``ProgbarLogger`` when
    ``verbose`` asks for one and none was given (Keras's order). ``callbacks`` may be one
    callback or nested lists of them, flattened as Keras 3's ``CallbackList`` flattens."""
    given = _flat_callbacks(callbacks)
    bar = [] if not verbose or any(isinstance(c, ProgbarLogger) for c in given) else \
        [ProgbarLogger()]
    return given + extra + bar


def _flat_callbacks(callbacks: Any) -> list[Any]:
    """Lists and tuples flattened; anything else is one callback (duck-typed: ember.
    distribute's callbacks do not subclass ``Callback``, so as not to depend on ember-nn);
    a string, a common slip, is refused."""
    if callbacks is None:
        return []
    if isinstance(callbacks, (str, bytes)):
        raise TypeError(f"callbacks must be a Callback or a list of them, got "
                        f"{type(callbacks).__name__} {callbacks!r}")
    if not isinstance(callbacks, (list, tuple)):
        return [callbacks]
    return [c for item in callbacks for c in _flat_callbacks(item)]


def _validation_parts(data: Any) -> tuple[Any, Any, Any]:
    """``validation_data`` as (x, y, sample_weight): Keras's ``(x, y)`` or
    ``(x, y, sample_weight)`` tuple of arrays, or an iterable of batches (x, None, None)."""
    if isinstance(data, tuple) and len(data) in (2, 3) and _is_arrays(data[0]):
        return data[0], data[1], data[2] if len(data) == 3 else None
    return data, None, None


def _val_batch_size(data: Any, batch_size: int | None) -> int | None:
    arrays = isinstance(data, tuple) and len(data) in (2, 3) and _is_arrays(data[0])
    return batch_size if arrays else None


def _check_steps(name: str, steps: Any) -> None:
    if steps is not None and (isinstance(steps, bool) or not isinstance(
            steps, (int, np.integer)) or steps < 1):
        raise ValueError(f"{name} must be a whole number >= 1 or None, got {steps!r}")


def _check_verbose(verbose: Any) -> None:
    if verbose not in (0, 1, 2, True, False, "auto"):
        raise ValueError(f"verbose must be 0, 1, 2 or 'auto', got {verbose!r}")


def evaluate(model: Any, x: Any, y: Any, batch_size: int | None, verbose: int, callbacks: Any,
             return_dict: bool, sample_weight: Any = None, steps: int | None = None) -> Any:
    _check_steps("steps", steps)
    logs, cbs = _test_logs(model, x, y, batch_size, verbose, callbacks, sample_weight, steps)
    logs = host_logs(logs)
    cbs.on_test_end(_sorted(logs))
    if return_dict:
        return _sorted(logs)
    values = list(logs.values())  # (the metrics' order: the loss first, as Keras)
    return values[0] if len(values) == 1 else values  # Keras: a scalar when only the loss


def _test_logs(model: Any, x: Any, y: Any, batch_size: int | None, verbose: int,
               callbacks: Any, sample_weight: Any = None,
               steps: int | None = None) -> tuple[dict[str, Any], Any]:
    """Run the test steps (at most ``steps`` batches): the logs as device tensors (not read
    back) and the callbacks (``callbacks`` a list, or fit's ``CallbackList`` during
    validation); the caller calls ``on_test_end`` once it has the logs on the host."""
    _require_compiled(model)
    if isinstance(x, tuple) and y is None and len(x) == 2 and _is_arrays(x[0]):
        x, y = x
    data = _batches(x, y, batch_size, False, sample_weight)
    cbs = callbacks if isinstance(callbacks, CallbackList) else \
        CallbackList(_with_progbar(callbacks, verbose, []), model,
                     {"verbose": verbose, "epochs": 1, "steps": _total(data, steps)})
    _reset(model)
    cbs.on_test_begin({})
    logs: dict[str, float] = _logs(model)
    for step, batch in enumerate(data):
        if steps is not None and step >= steps:
            break
        cbs.on_test_batch_begin(step, {})
        logs = _step(model, "test_step", batch)
        cbs.on_test_batch_end(step, _sorted(logs))
    return _metrics_or_logs(model, logs), cbs


def _metrics_or_logs(model: Any, logs: dict[str, Any]) -> dict[str, Any]:
    """An epoch's (or evaluation's) logs: the model's metrics' results when the step's
    logs name exactly those metrics, else the last step's logs, as Keras 3's
    ``_get_metrics_result_or_logs`` (a custom ``train_step`` returning ``{"loss": loss}``
    of ``compiled_loss`` logs the epoch's mean, not its last batch)."""
    results = _logs(model)
    if set(logs) == set(results):
        return {k: results[k] for k in logs}  # (in the logs' order: evaluate's list keeps it)
    return logs


def _predict_step(model: Any) -> Any:
    """``x -> outputs`` for one batch: the model called in inference, or an overridden
    ``predict_step`` given the batch packed as Keras packs it; traced unless
    ``run_eagerly``."""
    method = getattr(model, "predict_step", None)
    func = getattr(method, "__func__", method)
    custom = method is not None and not getattr(func, "_ember_default", False)
    if custom:
        def predict_step(x: Any) -> Any:
            return method(_pack(x))  # type: ignore[misc]
    else:
        def predict_step(x: Any) -> Any:
            return model(x, training=False)
    if model.run_eagerly:
        return predict_step
    cache = model._ember.extra.setdefault("traced_steps", {})
    hit = cache.get("predict")
    if hit is None or hit[0] is not func:
        predict_step.__qualname__ = f"{type(model).__name__}.predict_step"
        hit = cache["predict"] = (func, graph.function(predict_step, reduce_retracing=True))
    return hit[1]


def _pack(x: Any) -> Any:
    """The inputs as Keras hands them to a step (``pack_x_y_sample_weight`` without
    targets): one array as it is, a list or tuple of them inside a tuple."""
    return (x,) if isinstance(x, (list, tuple)) else x


def _one_batch(x: Any, y: Any, sample_weight: Any) -> Any:
    """Arrays (or tensors) of one batch as ``fit`` would batch them, all rows at once."""
    if not (_is_arrays(x) or y is not None):
        raise ValueError("train_on_batch/test_on_batch take the batch's arrays (x, y), not a "
                         "dataset or generator")
    return next(iter(_batches(x, y, max(_count(x), 1), False, sample_weight)))


def _on_batch_result(logs: dict[str, Any], return_dict: bool) -> Any:
    logs = host_logs(logs)
    if return_dict:
        return _sorted(logs)
    values = list(logs.values())  # the metrics' order, the loss first (Keras's)
    return values[0] if len(values) == 1 else values


def train_on_batch(model: Any, x: Any, y: Any, sample_weight: Any, class_weight: Any,
                   return_dict: bool) -> Any:
    """One training step on one batch (Keras's ``train_on_batch``): the metrics are reset
    first, so each call reports its own batch (as Keras 3.15's, and tf.keras's default)."""
    _require_compiled(model)
    if class_weight is not None:
        table = _class_weights.table(class_weight)
        _class_weights.check_one_target(y, model)
        if sample_weight is not None:
            raise ValueError("cannot use class_weight and sample_weight at the same time "
                             "(as Keras): fold the class weights into sample_weight")
        if y is None:
            raise ValueError("class_weight reads the classes from the targets: give y")
        one = list(y.values()) if isinstance(y, dict) else y
        sample_weight = _class_weights.sample_weights(_single(one), table)
    batch = _one_batch(x, y, sample_weight)
    model.reset_metrics()
    return _on_batch_result(_step(model, "train_step", batch), return_dict)


def test_on_batch(model: Any, x: Any, y: Any, sample_weight: Any, return_dict: bool) -> Any:
    """One test step on one batch (Keras's ``test_on_batch``), the metrics reset first as
    ``train_on_batch``'s."""
    _require_compiled(model)
    batch = _one_batch(x, y, sample_weight)
    model.reset_metrics()
    return _on_batch_result(_step(model, "test_step", batch), return_dict)


def predict_on_batch(model: Any, x: Any) -> Any:
    """``model``'s outputs for the one batch ``x``, copied to the host (see ``predict``)."""
    if isinstance(x, (list, tuple)):
        x = [v if isinstance(v, em.Tensor) else em.convert_to_tensor(v) for v in x]
    elif isinstance(x, dict):  # by input name
        x = {k: v if isinstance(v, em.Tensor) else em.convert_to_tensor(v) for k, v in x.items()}
    elif not isinstance(x, em.Tensor):
        x = em.convert_to_tensor(x)
    return _join_nested([_predict_step(model)(x)])  # arrays of their own, writable


def predict(model: Any, x: Any, batch_size: int | None, verbose: int, callbacks: Any,
            steps: int | None = None) -> Any:
    _check_verbose(verbose)
    _check_steps("steps", steps)
    data = _batches(x, None, batch_size)
    cbs = CallbackList(_with_progbar(callbacks, verbose, []), model,
                       {"verbose": verbose, "epochs": 1, "steps": _total(data, steps)})
    cbs.on_predict_begin({})
    outs = []
    for step, batch in enumerate(data):
        if steps is not None and step >= steps:
            break
        bx, _, _ = _unpack(batch)
        cbs.on_predict_batch_begin(step, {})
        try:
            outs.append(_predict_step(model)(bx))  # stays on the device, as in Keras 3
        except em.DTypeError:
            _refuse_string_batch(model, bx)
            raise
        cbs.on_predict_batch_end(step, {"outputs": outs[-1]})
    cbs.on_predict_end({})
    if not outs:
        raise ValueError("predict: the input has no batches")
    return _join_nested(outs)


def _join_nested(outs: list[Any]) -> Any:
    """Each output's batches joined (``_joined``), in the outputs' structure: lists,
    tuples and dicts, nested as the model returns them (Keras's ``map_structure``)."""
    first = outs[0]
    if isinstance(first, dict):
        return {k: _join_nested([o[k] for o in outs]) for k in first}
    if type(first) in (list, tuple):
        return type(first)(_join_nested([o[i] for o in outs]) for i in range(len(first)))
    return _joined(outs)


def _joined(parts: list[Any]) -> np.ndarray:
    """One output's batches as one host array of its own (writable, as Keras's: upstream
    programs scale ``predict``'s result in place): a GPU's tensors joined on their device
    first (one copy to the host, at the end), a CPU's joined by one copy on the host."""
    if len(parts) == 1:
        return np.array(parts[0])  # a copy: a tensor's buffer is never handed out writable
    if all(type(o) is em.Tensor for o in parts) and not parts[0].device.startswith("/cpu"):
        return em.concat(parts, axis=0).numpy()  # type: ignore[no-any-return]
    return np.concatenate([np.asarray(o) for o in parts], axis=0)

"""Model (a Layer with training conveniences), Sequential, and summary()."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from . import training as _training
from .layers import _tracking
from .layers.base import Layer


class Model(Layer):
    """A layer that groups layers: subclass it and write ``call``.

    Models nest (a model is a layer) and add ``compile``/``fit``/``evaluate``/``predict``
    and ``summary``.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> class MNISTModel(nn.Model):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.dense1 = nn.layers.Dense(units=10)
        ...         self.dense2 = nn.layers.Dense(units=10)
        ...     def call(self, x):
        ...         return self.dense2(self.dense2(self.dense1(x)))  # dense2 reused
        >>> m = MNISTModel()
        >>> m(em.zeros((1, 784))).shape
        (1, 10)
        >>> list(m.variables_by_path())
        ['dense1/kernel', 'dense1/bias', 'dense2/kernel', 'dense2/bias']
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # what Keras takes for a functional model (its is_functional_model_init_params)
        if len(args) == 2 or ("outputs" in kwargs and (len(args) == 1 or "inputs" in kwargs)):
            raise TypeError(
                f"{type(self).__name__}(inputs, outputs) is Keras's functional API, which "
                f"ember does not have: put the layers in an nn.Sequential, or subclass "
                f"nn.Model and apply them in call()")
        super().__init__(*args, **kwargs)

    def compile(self, optimizer: Any = "sgd", loss: Any = None, metrics: Any = None,
                run_eagerly: bool | None = None) -> None:
        """Choose the optimizer, the loss ``(labels, predictions)`` and the metrics.

        With no ``loss``, ``fit`` minimises what ``add_loss`` contributed (as Keras).
        ``fit``, ``evaluate`` and ``predict`` trace their step with ``graph.function``
        (ember-graph) and replay it, as Keras does with ``tf.function``;
        ``run_eagerly=True`` runs every step eagerly instead (for debugging, or for a
        step with Python side effects). None keeps the current setting (False at first).
        """
        _training.compile_model(self, optimizer, loss, metrics)
        if run_eagerly is not None:
            self.run_eagerly = run_eagerly

    @property
    def run_eagerly(self) -> bool:
        """Whether ``fit``/``evaluate``/``predict`` run their steps eagerly (not traced)."""
        return bool(self._ember.extra.get("run_eagerly", False))

    @run_eagerly.setter
    def run_eagerly(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"{self.name}: run_eagerly must be a bool, "
                            f"got {type(value).__name__}")
        self._ember.extra["run_eagerly"] = value

    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1,
            verbose: Any = 1, callbacks: Any = None, validation_data: Any = None,
            steps_per_epoch: int | None = None, shuffle: bool | None = None,
            validation_split: float = 0.0, sample_weight: Any = None) -> Any:
        """Train over an iterable of ``(x, y)`` batches (or arrays with ``batch_size``).

        Arrays are shuffled each epoch unless ``shuffle=False`` (as Keras); an iterable of
        batches is used as it comes, and ``batch_size``/``shuffle=True`` with one are errors.
        ``verbose``: 0 silent, 1 a progress bar, 2 one line per epoch.
        ``validation_split`` holds out the last fraction of the arrays (Keras);
        ``sample_weight`` gives one weight per example of the arrays.
        """
        return _training.fit(self, x, y, batch_size, epochs, verbose, callbacks,
                             validation_data, steps_per_epoch, shuffle, validation_split,
                             sample_weight)

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None,
                 verbose: int = 0, callbacks: Any = None, return_dict: bool = False,
                 sample_weight: Any = None) -> Any:
        """Loss and metrics over the batches: the loss alone, a list ``[loss, *metrics]``,
        or with ``return_dict=True`` a dict (as Keras)."""
        return _training.evaluate(self, x, y, batch_size, verbose, callbacks, return_dict,
                                  sample_weight)

    def predict(self, x: Any, batch_size: int | None = None, verbose: int = 0,
                callbacks: Any = None) -> np.ndarray:
        """Outputs for every batch, concatenated as a numpy array."""
        return _training.predict(self, x, batch_size, verbose, callbacks)

    def train_step(self, x: Any, y: Any = None, sample_weight: Any = None) -> Any:
        """One optimisation step on a batch; returns the logs (used by ``fit``).

        Override it Keras's way, ``def train_step(self, data)`` (``fit`` then hands over
        the batch as it comes), with ``self.compiled_loss``, ``self.compiled_metrics`` and
        ``self.metrics``; or as ``train_step(self, x, y, sample_weight=None)``.
        """
        return _training.train_step(self, x, y, sample_weight)

    def test_step(self, x: Any, y: Any = None, sample_weight: Any = None) -> Any:
        """One evaluation step (used by ``evaluate``); overridable like ``train_step``."""
        return _training.test_step(self, x, y, sample_weight)

    @property
    def compiled_loss(self) -> Any:
        """``compiled_loss(y, y_pred, sample_weight=None, regularization_losses=None)``."""
        self._ember_compiled()
        return self._ember.extra["compiled_loss"]

    @property
    def compiled_metrics(self) -> Any:
        """The metrics given to ``compile`` (``update_state(y, y_pred, sample_weight)``)."""
        self._ember_compiled()
        return self._ember.extra["compiled_metrics"]

    @property
    def metrics(self) -> list[Any]:
        """The ``loss`` tracker and the compiled metrics (empty before ``compile``).

        As Keras, the tracker is listed when ``compile`` got a loss or once
        ``compiled_loss`` has run: a ``train_step`` that computes its own losses reports
        no ``loss`` it never computed."""
        extra = self._ember.extra
        if "loss_tracker" not in extra:
            return []
        tracker = [extra["loss_tracker"]] if extra.get("loss_tracked") else []
        return [*tracker, *extra["compiled_metrics"]]

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None,
                     sample_weight: Any = None) -> Any:
        """The compiled loss plus ``self.losses`` (Keras 3's hook for ``train_step``)."""
        return self.compiled_loss(y, y_pred, sample_weight, regularization_losses=self.losses)

    def _ember_compiled(self) -> None:
        if "loss_tracker" not in self._ember.extra:
            raise RuntimeError(f"{self.name}: call compile(optimizer, loss) first")

    def summary(self, print_fn: Any = print, line_length: int = 72) -> None:
        """Print each layer's name, type, output shape and parameter count."""
        print_fn(summary_text(self, line_length))


class Sequential(Model):
    """A linear stack of layers: ``Sequential([Dense(10, input_shape=(784,)), Dense(10)])``.

    With ``input_shape`` on the first layer it builds at once; otherwise on the first call.
    """

    def __init__(self, layers: Any = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        stack = _tracking.TrackedList()
        self._ember.children["layers"] = stack  # checkpoint paths: layers/0/kernel, ...
        self._ember.stack = stack
        for layer in layers or ():
            self.add(layer)

    @property
    def layers(self) -> list[Layer]:  # type: ignore[override]
        return list(self._ember.stack)

    def add(self, layer: Layer) -> None:
        """Append a layer (building the model when the first layer knows its input shape)."""
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential.add: expected a Layer, got {type(layer).__name__}")
        self._ember.stack.append(layer)
        first = self._ember.stack[0]._ember.batch_input_shape
        if first is not None and (self.built or len(self._ember.stack) == 1):
            self.build((None,) + tuple(first[1:]))

    def build(self, input_shape: Any) -> None:
        shape = tuple(1 if s is None else int(s) for s in input_shape)
        with em.recording.paused():
            out = self.call(em.zeros(shape, dtype=self.dtype))
        self._ember.batch_input_shape = (None,) + tuple(shape[1:])
        self._ember.output_shape = tuple(out.shape) if hasattr(out, "shape") else None
        self.built = True

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = inputs
        for layer in self._ember.stack:
            x = layer(x, training=training)
        return x

    def get_config(self) -> dict[str, Any]:
        """The model's name, trainable and dtype, and each layer's class and config."""
        from .layers.recurrent import serialize_cell

        config = super().get_config()
        config["layers"] = [serialize_cell(layer) for layer in self.layers]
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        """A new Sequential of new layers (fresh weights) from ``get_config()``'s dict."""
        from .layers.recurrent import deserialize_cell

        config = dict(config)
        layers = [deserialize_cell(spec) for spec in config.pop("layers", [])]
        return cls(layers, **config)


def _fmt_shape(shape: Any) -> str:
    if shape is None:
        return "?"
    if isinstance(shape, list):
        return ", ".join(_fmt_shape(s) for s in shape)
    return str((None,) + tuple(shape[1:]))


def summary_text(model: Layer, line_length: int = 72) -> str:
    cols = (int(line_length * 0.45), int(line_length * 0.33))
    sep = "=" * line_length
    lines = [f'Model: "{model.name}"', "_" * line_length,
             f"{'Layer (type)':<{cols[0]}}{'Output Shape':<{cols[1]}}Param #", sep]
    for layer in model.layers:
        label = f"{layer.name} ({type(layer).__name__})"
        lines.append(f"{label:<{cols[0]}}{_fmt_shape(layer._ember.output_shape):<{cols[1]}}"
                     f"{layer.count_params():,}")
    n_train = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    n_all = model.count_params()
    lines += [sep, f"Total params: {n_all:,}", f"Trainable params: {n_train:,}",
              f"Non-trainable params: {n_all - n_train:,}", "_" * line_length]
    return "\n".join(lines)

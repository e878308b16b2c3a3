"""Model (a Layer with training conveniences), Sequential, and summary()."""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np

import ember.core as em

from . import training as _training
from .layers import _symbolic, _tracking
from .layers.base import Layer, _held_metrics
from .layers.input_layer import InputLayer

_LAYERS_RESERVED = ("the attribute 'layers' is reserved for the model's layers (as Keras's "
                    "Model.layers); use another name")


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

    _ember_init_when_missing = False  # a Model calls super().__init__(), as in Keras
    _ember_layers_reserved = True  # Keras's Model.layers cannot be assigned either

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # Model(inputs, outputs) is a functional model, as Keras makes one (a subclass's
        # own arguments are its own: Model.__init__ decides for it)
        if cls is Model and _functional_args(args, kwargs):
            cls = Functional
        return super().__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # a subclass whose __init__ hands (inputs, outputs) to Model's becomes a functional
        # model that keeps its own methods (train_step ...), as Keras injects Functional
        if _functional_args(args, kwargs) and not isinstance(self, Functional):
            object.__setattr__(self, "__class__", _functional_class(type(self)))
            Functional.__init__(self, *args, **kwargs)  # type: ignore[arg-type]
            return
        super().__init__(*args, **kwargs)

    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, loss_weights: Any = None,
                metrics: Any = None, weighted_metrics: Any = None, run_eagerly: bool = False,
                steps_per_execution: int = 1, jit_compile: Any = "auto",
                auto_scale_loss: bool = True) -> None:
        """Choose the optimizer, the loss ``(labels, predictions)`` and the metrics: Keras
        3's arguments, in its order, with its defaults.

        With no ``loss``, ``fit`` minimises what ``add_loss`` contributed (as Keras).
        A functional model of several outputs takes Keras's per-output forms: ``loss``
        one for all, a list, or a dict by output name; ``loss_weights`` a list or a dict;
        ``metrics`` and ``weighted_metrics`` a list (each for every output), a list of
        lists or a dict; its targets a list or a dict by output name (see
        ``ember.nn.training_outputs``). As in Keras 3, ``metrics`` count every example
        (a mask aside) and ``weighted_metrics`` weigh them by the sample weights (and
        ``class_weight``'s); a weighted metric named as an unweighted one is logged as
        ``weighted_<name>``.
        ``fit``, ``evaluate`` and ``predict`` trace their step with ``graph.function``
        (ember-graph) and replay it, as Keras does with ``tf.function``;
        ``run_eagerly=True`` runs every step eagerly instead (for debugging, or for a
        step with Python side effects).
        ``steps_per_execution``: 1 (one step per call; others are refused by name).
        ``jit_compile``: ``"auto"`` or False; ember's steps are traced already and there
        is no further compiler, so True is refused by name.
        ``auto_scale_loss``: with the model's dtype policy ``"mixed_float16"``, wrap the
        optimizer in a ``LossScaleOptimizer`` (Keras 3's; float16 gradients underflow).
        """
        if steps_per_execution != 1 or isinstance(steps_per_execution, bool):
            raise ValueError(f"{self.name}: compile(steps_per_execution="
                             f"{steps_per_execution!r}) is not supported: ember runs one "
                             f"step per call (give 1)")
        if jit_compile not in ("auto", False, None):
            raise ValueError(f"{self.name}: compile(jit_compile={jit_compile!r}) is not "
                             f"supported: ember traces each step with graph.function and "
                             f"has no further compiler (give 'auto' or False)")
        _training.compile_model(self, optimizer, loss, metrics, loss_weights,
                                auto_scale_loss=auto_scale_loss,
                                weighted_metrics=weighted_metrics)
        self.run_eagerly = run_eagerly
        # what get_compile_config saves (the optimizer made, with its hyperparameters)
        self._ember.extra["compile_config"] = {
            "optimizer": self.__dict__["optimizer"], "loss": loss, "metrics": metrics,
            "loss_weights": loss_weights, "weighted_metrics": weighted_metrics,
            "run_eagerly": run_eagerly}

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
            verbose: Any = "auto", callbacks: Any = None, validation_split: float = 0.0,
            validation_data: Any = None, shuffle: bool | None = None,
            class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0,
            steps_per_epoch: int | None = None, validation_steps: int | None = None,
            validation_batch_size: int | None = None, validation_freq: Any = 1) -> Any:
        """Train over an iterable of ``(x, y)`` batches (or arrays with ``batch_size``).

        Arrays are shuffled each epoch unless ``shuffle=False`` (as Keras); an iterable of
        batches is used as it comes, and ``batch_size``/``shuffle=True`` with one are errors.
        The arguments are Keras 3's, in its order. ``verbose``: 0 silent, 1 or ``"auto"`` a
        progress bar, 2 one line per epoch.
        ``validation_split`` holds out the last fraction of the arrays (Keras: the split
        index rounded down), unless ``validation_data`` is given, which then is the
        validation data and every array is trained on (as Keras 3); ``validation_freq``
        validates every that many epochs, or at the epochs listed (counted from 1);
        ``validation_batch_size`` batches validation arrays
        (``batch_size`` by default); ``validation_steps`` takes at most that many
        validation batches;
        ``sample_weight`` gives one weight per example of the arrays (per output: a list or
        a dict by output name); ``class_weight`` a weight per class index, applied as
        sample weights read from the targets (one output only, as Keras).
        ``initial_epoch``: the epoch to start at (epochs before it count as done, as Keras:
        ``epochs`` is the index of the last epoch plus one, not how many to run).
        """
        return _training.fit(self, x, y, batch_size, epochs, verbose, callbacks,
                             validation_data, steps_per_epoch, shuffle, validation_split,
                             sample_weight, initial_epoch=initial_epoch,
                             class_weight=class_weight, validation_steps=validation_steps,
                             validation_batch_size=validation_batch_size,
                             validation_freq=validation_freq)

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None,
                 verbose: Any = "auto", sample_weight: Any = None, steps: int | None = None,
                 callbacks: Any = None, return_dict: bool = False) -> Any:
        """Loss and metrics over the batches: the loss alone, a list ``[loss, *metrics]``,
        or with ``return_dict=True`` a dict (as Keras). ``verbose``: ``"auto"`` (Keras's
        default) and 1 show a progress bar, 2 one line, 0 nothing. ``steps``: at most this
        many batches (all by default)."""
        return _training.evaluate(self, x, y, batch_size, verbose, callbacks, return_dict,
                                  sample_weight, steps)

    def predict(self, x: Any, batch_size: int | None = None, verbose: Any = "auto",
                steps: int | None = None, callbacks: Any = None) -> np.ndarray:
        """Outputs for every batch, concatenated as a numpy array. ``verbose``: ``"auto"``
        (Keras's default) and 1 show a progress bar, 0 nothing. ``steps``: at most this
        many batches (all by default)."""
        return _training.predict(self, x, batch_size, verbose, callbacks, steps)

    def train_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                       class_weight: Any = None, return_dict: bool = False) -> Any:
        """One training step on the batch ``(x, y)`` (Keras's): the loss, or the loss and
        the metrics as a list in ``metrics_names``' order (a dict with ``return_dict``).
        The metrics are reset first: each call reports its own batch, as Keras 3.15's.

        Examples:
            >>> import numpy as np
            >>> from ember import nn
            >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(3,))])
            >>> model.compile("sgd", "mse")
            >>> loss = model.train_on_batch(np.ones((4, 3), np.float32), np.zeros((4, 1)))
            >>> isinstance(loss, float)
            True
        """
        return _training.train_on_batch(self, x, y, sample_weight, class_weight, return_dict)

    def test_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                      return_dict: bool = False) -> Any:
        """The loss and metrics on the batch ``(x, y)``, without training (Keras's);
        returned as ``train_on_batch``'s."""
        return _training.test_on_batch(self, x, y, sample_weight, return_dict)

    def predict_on_batch(self, x: Any) -> Any:
        """The outputs for one batch ``x`` as numpy arrays (Keras's): the model called in
        inference mode through the same traced step as ``predict``, without batching.

        Examples:
            >>> import numpy as np
            >>> from ember import nn
            >>> model = nn.Sequential([nn.layers.Dense(2, input_shape=(3,))])
            >>> model.predict_on_batch(np.ones((4, 3), np.float32)).shape
            (4, 2)
        """
        return _training.predict_on_batch(self, x)

    def train_step(self, x: Any, y: Any = None, sample_weight: Any = None) -> Any:
        """One optimisation step on a batch; returns the logs (used by ``fit``).

        Override it Keras's way, ``def train_step(self, data)`` (``fit`` then hands over
        the batch as it comes), with ``self.compiled_loss``, ``self.compiled_metrics`` and
        ``self.metrics``; or as ``train_step(self, x, y, sample_weight=None)``. Called
        with one tuple, ``super().train_step(data)``, it unpacks ``(x, y[, weights])`` as
        Keras's does.
        """
        if y is None and sample_weight is None and type(x) is tuple:
            x, y, sample_weight = _training._unpack(x)  # super().train_step(data), Keras's
        return _training.train_step(self, x, y, sample_weight)

    def predict_step(self, data: Any) -> Any:
        """One prediction step on a batch (used by ``predict`` and ``predict_on_batch``):
        ``self(x, training=False)``. Override it Keras's way: ``data`` is the batch's
        inputs, one array as it is, several as a tuple holding their list (Keras's
        ``pack_x_y_sample_weight``); what it returns is what ``predict`` joins."""
        x, _, _ = _training._unpack(data) if type(data) is tuple else (data, None, None)
        return self(x, training=False)

    predict_step._ember_default = True  # type: ignore[attr-defined]

    def test_step(self, x: Any, y: Any = None, sample_weight: Any = None) -> Any:
        """One evaluation step (used by ``evaluate``); overridable like ``train_step``."""
        if y is None and sample_weight is None and type(x) is tuple:
            x, y, sample_weight = _training._unpack(x)  # super().test_step(data), Keras's
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
        """The ``loss`` tracker and the compiled metrics (none before ``compile``), then
        the metrics held in attributes of the model and of its layers (Keras 3's order).

        As Keras, the tracker is listed when ``compile`` got a loss or once
        ``compiled_loss`` has run: a ``train_step`` that computes its own losses reports
        no ``loss`` it never computed."""
        extra = self._ember.extra
        compiled: list[Any] = []
        if "loss_tracker" in extra:
            tracker = [extra["loss_tracker"]] if extra.get("loss_tracked") else []
            outputs = extra.get("outputs")
            per_output = [t for t in outputs.trackers if t is not None] if outputs else []
            compiled = [*tracker, *per_output, *extra["compiled_metrics"]]
        # then, as Keras 3, metrics held in attributes: the model's own, and its layers'
        # (not those of a nested Model, which has its own); found by a walk of the layer
        # tree, kept until an attribute or container in it changes (fit reads this list
        # on every step)
        cached = extra.get("held_metrics")
        if cached is None or cached[0] != _tracking.VERSION[0] or any(
                len(c) != n for c, n in cached[2]):
            containers: list[tuple[Any, int]] = []
            held = _held_metrics(self, containers)
            for layer in self.submodules:
                if not isinstance(layer, Model):
                    held += _held_metrics(layer, containers)
            cached = extra["held_metrics"] = (_tracking.VERSION[0], held, containers)
        held = cached[1]
        if not held:
            return compiled
        return compiled + [m for i, m in enumerate(held)
                           if all(m is not o for o in compiled + held[:i])]

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        """``reset_state()`` of every metric in ``metrics`` (Keras's)."""
        for m in self.metrics:
            m.reset_state()

    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None,
                     sample_weight: Any = None) -> Any:
        """The compiled loss plus ``self.losses`` (Keras 3's hook for ``train_step``)."""
        return self.compiled_loss(y, y_pred, sample_weight, regularization_losses=self.losses)

    def _ember_compiled(self) -> None:
        if "loss_tracker" not in self._ember.extra:
            raise RuntimeError(f"{self.name}: call compile(optimizer, loss) first")

    # --- saving (see ember.nn.saving) ------------------------------------------------
    def save(self, filepath: Any, overwrite: bool = True, zipped: Any = None,
             **kwargs: Any) -> None:
        """Save the model as a Keras 3 ``.keras`` file: its config, weights, optimizer
        state and ember's random state, written atomically (``nn.models.load_model``
        reads it back, ready to train on exactly).

        Examples:
            >>> import os, tempfile
            >>> import numpy as np
            >>> from ember import nn
            >>> model = nn.Sequential([nn.layers.Dense(2, input_shape=(3,))])
            >>> path = os.path.join(tempfile.mkdtemp(), "m.keras")
            >>> model.save(path)
            >>> again = nn.models.load_model(path)
            >>> x = np.ones((1, 3), np.float32)
            >>> bool((again(x).numpy() == model(x).numpy()).all())
            True
        """
        from . import saving

        saving.save_model(self, filepath, overwrite, zipped, **kwargs)

    def save_weights(self, filepath: Any, overwrite: bool = True,
                     max_shard_size: Any = None) -> None:
        """Save the weights (and a compiled model's optimizer variables) as Keras 3's
        ``.weights.h5`` or as ``.safetensors``, atomically."""
        from . import saving

        saving.save_weights(self, filepath, overwrite, max_shard_size)

    def load_weights(self, filepath: Any, skip_mismatch: bool = False, **kwargs: Any) -> None:
        """Load weights from ``.weights.h5``, ``.safetensors`` or ``.keras`` (every value
        is checked before any is assigned; see ``nn.saving.load_weights``)."""
        from . import saving

        saving.load_weights(self, filepath, skip_mismatch, **kwargs)

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: Any = None) -> Any:
        """A model from its config: a functional model's (``layers``, ``input_layers``,
        ``output_layers``) rebuilds the graph, as Keras; otherwise ``cls(**config)``."""
        from .saving import _registry

        if isinstance(config, dict) and {"layers", "input_layers", "output_layers"} <= set(
                config):
            from . import _model_config

            with _registry.scope(custom_objects):
                return _model_config.functional_from_config(
                    Functional if cls is Model else cls, config)
        with _registry.scope(custom_objects):
            return cls(**config)

    def to_json(self, **kwargs: Any) -> str:
        """The model's config as JSON (Keras's; ``json.dumps`` takes ``kwargs``):
        ``nn.models.model_from_json`` makes the model again, with fresh weights."""
        import json

        from . import saving

        return json.dumps(saving.serialize_keras_object(self), **kwargs)

    def get_compile_config(self) -> dict[str, Any] | None:
        """The arguments ``compile`` got (Keras's names), or None before ``compile``."""
        given = self._ember.extra.get("compile_config")
        if given is None:
            return None
        return {**given, "steps_per_execution": 1, "jit_compile": False}

    def compile_from_config(self, config: dict[str, Any]) -> None:
        """``compile`` with ``get_compile_config``'s arguments (Keras's; options ember has
        no use for must keep their defaults)."""
        config = dict(config)
        for key, ok in (("steps_per_execution", (1,)),
                        ("jit_compile", (False, None, "auto", True)),
                        ("auto_scale_loss", (True, False, None))):
            value = config.pop(key, ok[0])
            if value not in ok:
                raise ValueError(f"{self.name}: compile_config has {key}={value!r}, which "
                                 f"ember does not support")
        unknown = set(config) - {"optimizer", "loss", "metrics", "loss_weights", "run_eagerly",
                                 "weighted_metrics"}
        if unknown:
            raise ValueError(f"{self.name}: compile_config has unknown keys {sorted(unknown)}")
        if config.get("run_eagerly") is None:
            config.pop("run_eagerly", None)
        self.compile(**config)

    def get_build_config(self) -> dict[str, Any] | None:
        """What ``build_from_config`` needs to make the variables again: the input
        shape (and dtype) of the first call (Keras's ``{"input_shape": ...}``)."""
        spec = self._ember.extra.get("build_input")
        if not self.built or spec is None:
            return None
        shapes, dtypes = spec
        config: dict[str, Any] = {"input_shape": shapes}
        if any(d != "float32" for d in (dtypes if isinstance(dtypes, list) else [dtypes])):
            config["input_dtype"] = dtypes
        return config

    def build_from_config(self, config: dict[str, Any]) -> None:
        """Build as ``get_build_config`` recorded: one call on zeros of that shape."""
        if self.built and self.variables:
            return
        from .saving import _serialization

        _serialization.build_by_calling(self, config, f"{self.name}.build_from_config")

    def _ember_maybe_build(self, inputs: Any) -> None:
        def spec(x: Any) -> Any:
            if isinstance(x, (list, tuple)):
                parts = [spec(v) for v in x]
                return [p[0] for p in parts], [p[1] for p in parts]
            shape = [None, *[int(s) for s in x.shape[1:]]] if x.ndim else []
            return shape, str(x.dtype)

        if not isinstance(inputs, dict):
            self._ember.extra["build_input"] = spec(inputs)
        super()._ember_maybe_build(inputs)

    def summary(self, print_fn: Any = print, line_length: int = 72) -> None:
        """Print each layer's name, type, output shape and parameter count."""
        print_fn(summary_text(self, line_length))

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """The layer named ``name``, or at position ``index`` of ``layers`` (Keras's).

        Raises:
            ValueError: no such layer (the message lists the names there are), or neither
                or both of ``name`` and ``index`` given.
        """
        layers = self.layers
        if (name is None) == (index is None):
            raise ValueError(f"{self.name}.get_layer: give a layer name or an index (not "
                             f"both); got name={name!r}, index={index!r}")
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(f"{self.name}.get_layer: index {index} is out of range: the "
                                 f"model has {len(layers)} layers")
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"{self.name}.get_layer: no layer named {name!r}; the layers are "
                         f"{[layer.name for layer in layers]}")


def _functional_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """What Keras takes for a functional model (its ``is_functional_model_init_params``)."""
    return len(args) == 2 or ("outputs" in kwargs and (len(args) == 1 or "inputs" in kwargs))


_FUNCTIONAL_CLASSES: dict[type, type] = {}


def _functional_like(cls: type[Model]) -> bool:
    """Whether ``cls(inputs, outputs, name=..., trainable=...)`` makes one (Keras's
    ``functional_like_constructor``): its ``__init__`` takes those, or ``*args, **kw``."""
    import inspect

    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if names[:2] == ["inputs", "outputs"]:
        return True
    kinds = {p.kind for p in params}
    return inspect.Parameter.VAR_POSITIONAL in kinds and inspect.Parameter.VAR_KEYWORD in kinds


def _functional_class(cls: type) -> type:
    if cls is Model:
        return Functional
    if cls not in _FUNCTIONAL_CLASSES:
        _FUNCTIONAL_CLASSES[cls] = type(cls.__name__, (cls, Functional),
                                        {"__module__": cls.__module__,
                                         "__qualname__": cls.__qualname__,
                                         "_ember_functional_of": cls})
    return _FUNCTIONAL_CLASSES[cls]


class Functional(Model):
    """A model made by Keras's functional API: ``nn.Model(inputs, outputs)``, where
    ``inputs`` are ``nn.Input`` placeholders and ``outputs`` came from calling layers on
    them. Calling the model replays those layer calls on real tensors.

    Args:
        inputs: an ``nn.Input``, or a list or tuple of them (then the model takes a list).
        outputs: a symbolic tensor, or a list or tuple of them.
        name: the model's name.
        trainable: whether its variables are trained.

    Raises:
        TypeError: ``inputs`` are not ``nn.Input`` placeholders, or ``outputs`` are not
            symbolic tensors.
        ValueError: an output depends on an input that is not in ``inputs``.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> a, b = nn.Input(shape=(3,)), nn.Input(shape=(3,))
        >>> shared = nn.layers.Dense(2)
        >>> out = nn.layers.Lambda(lambda ab: ab[0] - ab[1])([shared(a), shared(b)])
        >>> model = nn.Model([a, b], out)
        >>> x = np.ones((4, 3), np.float32)
        >>> float(np.abs(model([x, x]).numpy()).max()), len(model.trainable_variables)
        (0.0, 2)
    """

    # no autocast to the model's compute dtype (a float32 first layer of a mixed_float16
    # model gets its inputs unrounded); each input is converted to its Input's dtype in
    # call, as Keras 3's Functional does (_convert_inputs_to_tensors)
    _autocast = False

    def __init__(self, inputs: Any, outputs: Any, name: str | None = None,
                 trainable: bool = True, **kwargs: Any) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        flat_in = _symbolic.leaves(inputs)
        by_key = isinstance(inputs, dict)
        if (by_key and not all(isinstance(k, str) and isinstance(v, _symbolic.SymbolicTensor)
                               for k, v in inputs.items())) or not all(
                isinstance(t, _symbolic.SymbolicTensor) and t.node is None for t in flat_in):
            raise TypeError(f"{self.name}: inputs must be nn.Input placeholders (one, or a "
                            f"list or tuple of them, or a dict of them by name); got "
                            f"{inputs!r}")
        named = [t.name for t in flat_in if t.name is not None]
        if len(set(named)) < len(named):
            raise ValueError(f"{self.name}: inputs named {named}: each name must be unique "
                             f"(a dict of inputs is read by name)")
        if isinstance(outputs, dict) or not all(
                isinstance(t, _symbolic.SymbolicTensor) for t in _symbolic.leaves(outputs)):
            raise TypeError(f"{self.name}: outputs must be what layers returned when called "
                            f"on the inputs (one, or a list or tuple); got {outputs!r}")
        nodes = _topological_nodes(self.name, outputs, {id(t) for t in flat_in})
        stack = _tracking.TrackedList()
        self._ember.children["layers"] = stack  # checkpoint paths: layers/0/kernel, ...
        for node in nodes:
            if all(node.layer is not seen for seen in stack):
                stack.append(node.layer)
        self._ember.extra["functional"] = (inputs, outputs, nodes)
        if len(flat_in) == 1:
            self._ember.batch_input_shape = flat_in[0].shape
        self.built = True

    @property
    def layers(self) -> list[Layer]:
        """The layers, in Keras's order (by depth from the outputs, deepest first; see
        ``keras_layer_order``), an ``InputLayer`` for each input among them as in Keras,
        so that ``model.layers[i]`` is the layer Keras's ``model.layers[i]`` is. The
        weights (``weights``, ``get_weights``) follow the same order, so that
        ``set_weights(keras_model.get_weights())`` puts each array where Keras had it.
        Operation nodes (``x + y``) are not listed, as Keras lists none."""
        from .layers.operations import _Operation

        return [layer for layer in keras_layer_order(self, with_inputs=True)
                if not isinstance(layer, _Operation)]

    @layers.setter
    def layers(self, value: Any) -> None:
        raise AttributeError(_LAYERS_RESERVED)

    _ember_orders_variables = True  # (see _tracking.walk_variables)

    def _ember_variables_by_path(self) -> dict[str, tuple[Any, bool]]:
        # the paths stay those of the calls' order (checkpoints use them); the order of
        # the entries is Keras's, layer by layer
        out = super()._ember_variables_by_path()
        keys = tuple(out)
        cached = self._ember.extra.get("keras_paths")  # (the paths, them in Keras's order)
        if cached is None or cached[0] != keys:
            stack = self._ember.children["layers"]
            rank = {id(layer): r for r, layer in enumerate(keras_layer_order(self))}
            by_index = {str(i): rank.get(id(layer), len(rank))
                        for i, layer in enumerate(stack)}

            def key(path: str) -> tuple[int, int]:
                head, _, rest = path.partition("/")
                index = rest.partition("/")[0]
                return (0, by_index[index]) if head == "layers" and index in by_index \
                    else (1, 0)

            order = sorted(keys, key=key)
            cached = self._ember.extra["keras_paths"] = (keys, None if order == list(keys)
                                                         else order)
        if cached[1] is None:  # a chain, and most graphs: the calls' order is Keras's
            return out
        return {path: out[path] for path in cached[1]}

    @property
    def inputs(self) -> list[Any]:
        """The model's ``nn.Input`` placeholders."""
        return _symbolic.leaves(self._ember.extra["functional"][0])

    @property
    def input(self) -> Any:
        """The model's inputs as it was given them (one placeholder, or a list), as
        Keras's ``model.input`` (keras-io's ``lstm_seq2seq`` takes ``model.input[0]``); a
        list of one is its placeholder, as in Keras."""
        return _singleton(self._ember.extra["functional"][0])

    @property
    def output(self) -> Any:
        """The model's outputs as it was given them (one symbolic tensor, or a list); a
        list of one is its tensor, as in Keras."""
        return _singleton(self._ember.extra["functional"][1])

    @property
    def outputs(self) -> list[Any]:
        """The model's symbolic outputs."""
        return _symbolic.leaves(self._ember.extra["functional"][1])

    @property
    def input_shape(self) -> Any:
        """Keras's: each input's shape (batch axis ``None``); one tuple for one input."""
        return _symbolic_shapes(self.inputs)

    @property  # type: ignore[misc]  # read-only, as a Keras model's
    def output_shape(self) -> Any:
        """Keras's: each output's shape (batch axis ``None``); one tuple for one output."""
        return _symbolic_shapes(self.outputs)

    @property
    def input_names(self) -> list[str]:
        """Each input's name: the keys of a dict of inputs (Keras 3 reads a dict given to
        the model by them), else ``nn.Input(name=...)``, else ``input_1``, ``input_2``,
        ... (skipping names taken)."""
        spec = self._ember.extra["functional"][0]
        if isinstance(spec, dict):
            return list(spec)
        return self._input_layer_names()

    def _input_layer_names(self) -> list[str]:
        """The names of the model's InputLayers (Keras's ``model.layers``, its config):
        ``nn.Input(name=...)``, else ``input_1``, ... (a dict's keys name only the
        inputs' places in a call)."""
        return _unique([t.name for t in self.inputs], "input")

    @property
    def output_names(self) -> list[str]:
        """Each output's name, that of the layer that made it (Keras), made unique with
        ``_1``, ``_2``, ... where a layer makes several: the keys of a dict of targets and
        of per-output losses, metrics and loss weights, and the prefix of their logs
        (``<name>_loss``)."""
        names = [t.node.layer.name for t in self.outputs]
        return _unique([n if names.count(n) == 1 else None for n in names], names)

    def _warn_unused_inputs(self, unknown: list[str]) -> None:
        """Once per model and set of keys: a dict of inputs holds keys no input has."""
        seen = self._ember.extra.setdefault("unused_input_keys", set())
        if tuple(unknown) not in seen:
            seen.add(tuple(unknown))
            warnings.warn(f"{self.name}: the dict of inputs holds keys {unknown} that match "
                          f"no input of the model (its inputs are {self.input_names}); they "
                          f"are left out", stacklevel=4)

    def call(self, inputs: Any, training: Any = None) -> Any:
        spec, outputs, nodes = self._ember.extra["functional"]
        flat_spec = _symbolic.leaves(spec)
        if isinstance(inputs, dict):  # by input name, as Keras takes them
            names = self.input_names
            missing = [n for n in names if n not in inputs]
            if missing:
                raise ValueError(f"{self.name}: a dict of inputs needs the inputs' names "
                                 f"{names}; missing {missing} (got {sorted(map(str, inputs))})")
            if len(inputs) > len(names):  # as Keras: the others are left out, with a warning
                self._warn_unused_inputs(sorted(set(map(str, inputs)) - set(names)))
            inputs = [inputs[n] for n in names]
        given = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(given) != len(flat_spec):
            raise ValueError(f"{self.name}: expects {len(flat_spec)} input(s) (as a list), "
                             f"got {len(given)}")
        values: dict[int, Any] = {}
        for ref, x in zip(flat_spec, given):
            x = x if isinstance(x, em.Tensor) else em.convert_to_tensor(x)
            if x.dtype != ref.dtype:  # as Keras: a float64 array into a float32 Input is
                x = em.cast(x, ref.dtype)  # float32, not a float64 model from there on
            if x.ndim + 1 == len(ref.shape) and ref.shape[-1] == 1:
                x = em.expand_dims(x, -1)  # as Keras: an input one axis short of a last 1
            values[id(ref)] = x
        for node in nodes:
            def value(t: Any) -> Any:
                return values[id(t)]

            args = _symbolic.substitute(value, node.inputs)  # an operation's numbers kept
            kwargs = _symbolic.substitute(value, dict(node.kwargs))
            recorded = kwargs.get("training")
            if recorded is not False and (training is not None or "training" not in kwargs):
                # A call recorded with training=False stays in inference (the transfer-
                # learning guide's frozen BatchNormalization, as tf.keras; Keras 3.15 lets
                # fit's training=True override it, keras-team/keras#20285). Otherwise the
                # model's flag wins over a recorded True (Keras writes "training": true into
                # its random image layers' nodes; predict must not augment), and a recorded
                # value stands where the model is given none.
                kwargs["training"] = training
            out = node.layer(args, *_symbolic.substitute(value, list(node.args)), **kwargs)
            for sym, value in zip(_symbolic.leaves(node.outputs), _symbolic.leaves(out)):
                values[id(sym)] = value
        return _singleton(_symbolic.map_structure(lambda t: values[id(t)], outputs))

    _ember_raw_config = True  # from_config reads its layers' configs itself

    def get_config(self) -> dict[str, Any]:
        """The graph in Keras 3's form: each layer's config with the calls the model
        makes of it, and the inputs and outputs (see ``ember.nn._model_config``). A
        subclass whose ``__init__`` builds its own graph (and so takes other arguments
        than ``inputs, outputs``) gives those arguments instead, as Keras."""
        from . import _model_config

        user = type(self).__dict__.get("_ember_functional_of")
        if user is not None and not _functional_like(user):
            return Layer.get_config(self)
        return _model_config.functional_config(self)

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: Any = None) -> Any:
        """A new functional model (fresh weights) from ``get_config()``'s dict."""
        from . import _model_config
        from .saving import _registry

        with _registry.scope(custom_objects):
            return _model_config.functional_from_config(cls, config)


def _singleton(structure: Any) -> Any:
    """A list or tuple of one as its element (Keras's ``unpack_singleton``): a model made
    with ``outputs=[y]`` returns ``y``'s value, not a list holding it, so that
    ``predict(x)[0]`` is the first example, as in Keras."""
    if isinstance(structure, (list, tuple)) and len(structure) == 1:
        return structure[0]
    return structure


def _unique(given: list[Any], base: Any) -> list[str]:
    """``given`` names with each None replaced by ``<base>_<k>`` (``base`` a string, or the
    list of default bases) for the smallest k that no other name takes."""
    taken = {n for n in given if n is not None}
    out = []
    for i, name in enumerate(given):
        if name is None:
            stem = base if isinstance(base, str) else base[i]
            k = i + 1 if isinstance(base, str) else 1
            while f"{stem}_{k}" in taken:
                k += 1
            name = f"{stem}_{k}"
            taken.add(name)
        out.append(name)
    return out


def keras_layer_order(model: Any, with_inputs: bool = False) -> list[Layer]:
    """A functional model's layers in the order Keras 3 lists them (its ``operations``):
    by depth, the number of calls between a layer and the outputs, deepest first; ties in
    the order a depth-first walk from the outputs first meets them. Keras names the
    layers' weights by this order (``layers/dense``, ``layers/dense_1``, ...) and writes
    its configs in it; ember's checkpoint paths keep the order the calls run in, which
    this matches on chains and most branches, not on all. ``with_inputs``: an
    ``InputLayer`` for each input too, at its depth (``model.layers``)."""
    cached = model._ember.extra.get("keras_order")
    if cached is None:
        cached = model._ember.extra["keras_order"] = tuple(_keras_order(model))
    return [lay for lay in cached if with_inputs or not isinstance(lay, InputLayer)]


def _keras_order(model: Any) -> list[Layer]:
    spec, outputs, nodes = model._ember.extra["functional"]
    flat_in = _symbolic.leaves(spec)
    input_layers = {id(t): InputLayer(input_tensor=t, name=name)
                    for t, name in zip(flat_in, model._input_layer_names())}
    first_seen: dict[int, int] = {}  # id(layer) -> index of the walk's first visit
    post: list[Any] = []  # nodes, inputs first
    done: set[int] = set()
    layer_depth: dict[int, int] = {}
    layers: dict[int, Layer] = {}

    def visit(t: Any) -> None:
        node = t.node
        if id(t) in input_layers:  # an InputLayer: met here, its depth set below
            first_seen.setdefault(id(input_layers[id(t)]), len(first_seen))
            return
        if node is None or id(node) in done:
            return
        first_seen.setdefault(id(node.layer), len(first_seen))
        for leaf in _symbolic.symbolic_leaves(node):
            visit(leaf)
        done.add(id(node))
        post.append(node)

    for t in _symbolic.leaves(outputs):
        visit(t)
    in_graph = {id(n) for n in post}
    node_depth: dict[int, int] = {}
    for node in reversed(post):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = depth
        layers[id(node.layer)] = node.layer
        for leaf in _symbolic.symbolic_leaves(node):
            parent = leaf.node
            if parent is not None and id(parent) in in_graph:
                node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
            elif id(leaf) in input_layers:
                inp = input_layers[id(leaf)]
                layers[id(inp)] = inp
                layer_depth[id(inp)] = max(depth + 1, layer_depth.get(id(inp), 0))
    for t in flat_in:  # an input no output reads: depth 0, as Keras
        inp = input_layers[id(t)]
        if id(inp) not in layers:
            layers[id(inp)] = inp
            layer_depth[id(inp)] = 0
            first_seen.setdefault(id(inp), len(first_seen))
    return sorted(layers.values(), key=lambda lay: (-layer_depth[id(lay)], first_seen[id(lay)]))


def _topological_nodes(name: str, outputs: Any, inputs: set[int]) -> list[Any]:
    """The layer calls that make ``outputs`` from ``inputs``, each after what it reads."""
    order: list[Any] = []
    state: dict[int, bool] = {}  # id(node) -> done

    def visit(t: Any) -> None:
        if t.node is None:
            if id(t) not in inputs:
                raise ValueError(f"{name}: the outputs depend on {t!r}, which is not among "
                                 f"the model's inputs (the graph is disconnected)")
            return
        node = t.node
        if state.get(id(node)):
            return
        for leaf in _symbolic.symbolic_leaves(node):
            visit(leaf)
        state[id(node)] = True
        order.append(node)

    for t in _symbolic.leaves(outputs):
        visit(t)
    return order


class Sequential(Model):
    """A linear stack of layers: ``Sequential([Dense(10, input_shape=(784,)), Dense(10)])``
    or, as in Keras, ``Sequential([nn.Input(shape=(784,)), Dense(10), Dense(10)])``.

    With ``input_shape`` on the first layer, or an ``nn.Input`` before it, it builds at
    once; otherwise on the first call.
    """

    _autocast = False  # each layer casts its own inputs, as in a functional model

    def __init__(self, layers: Any = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        stack = _tracking.TrackedList()
        self._ember.children["layers"] = stack  # checkpoint paths: layers/0/kernel, ...
        self._ember.stack = stack
        self._input: Any = None  # an nn.Input given first: (batch shape, dtype)
        self._input_tensor: Any = None  # and that nn.Input itself
        for layer in layers or ():
            self.add(layer)

    @property
    def layers(self) -> list[Layer]:  # type: ignore[override]
        return list(self._ember.stack)

    @layers.setter
    def layers(self, value: Any) -> None:
        raise AttributeError(_LAYERS_RESERVED)

    def add(self, layer: Layer) -> None:
        """Append a layer (building the model when its input shape is known: from an
        ``nn.Input`` or an ``InputLayer`` added first, or from the first layer's
        ``input_shape``).

        Raises:
            TypeError: ``layer`` is neither a Layer nor an ``nn.Input``.
            ValueError: an ``nn.Input`` after the first layer.
        """
        if isinstance(layer, InputLayer):  # (Keras's: a functional model's layers[0])
            layer = layer.output
        if isinstance(layer, _symbolic.SymbolicTensor):
            if layer.node is not None:
                raise TypeError("Sequential.add: expected a Layer or an nn.Input, got the "
                                "output of a layer (for a graph of layers, use "
                                "nn.Model(inputs, outputs))")
            if self._ember.stack or self._input is not None:
                raise ValueError("Sequential.add: an nn.Input must come first, before any "
                                 "layer")
            self._input = (tuple(layer.shape), layer.dtype)
            self._input_tensor = layer
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential.add: expected a Layer or an nn.Input, got "
                            f"{type(layer).__name__}")
        self._ember.stack.append(layer)
        layer._ember.extra["sequential"] = weakref.ref(self)  # see Layer._first_node
        first = self._ember.stack[0]._ember.batch_input_shape
        if first is None and self._input is not None:
            first = self._input[0]
        if first is not None and (self.built or len(self._ember.stack) == 1):
            self.build((None,) + tuple(first[1:]))

    def build(self, input_shape: Any) -> None:
        shape = tuple(1 if s is None else int(s) for s in input_shape)
        dtype = self.dtype if self._input is None else self._input[1]
        with em.recording.paused(), _symbolic.losses_kept_out(self):
            out = _symbolic.run_probe(self.call, shape, dtype)
        self._ember.batch_input_shape = (None,) + tuple(shape[1:])
        self._ember.output_shape = tuple(out.shape) if hasattr(out, "shape") else None
        self.built = True
        self._ember.extra.pop("symbolic_outputs", None)  # the layers changed: redo on demand

    def _symbolic_outputs(self) -> Any:
        """The stack called on its ``nn.Input`` (made from the input shape when none was
        given), as Keras's Sequential is a functional graph once its input is known: the
        layers get their ``input``/``output``, the model its ``inputs``/``outputs``."""
        extra = self._ember.extra
        if "symbolic_outputs" not in extra:
            if not self.built or self._ember.batch_input_shape is None:
                raise ValueError(f"{self.name}: the model is not built yet, so it has no "
                                 f"inputs or outputs: give it an nn.Input first, an "
                                 f"input_shape to its first layer, or call it on data")
            if self._input_tensor is None:
                dtype = self.dtype if self._input is None else self._input[1]
                shape = self._ember.batch_input_shape
                self._input_tensor = _symbolic.Input(shape=shape[1:], batch_size=shape[0],
                                                     dtype=dtype)
            x = self._input_tensor
            for layer in self._ember.stack:
                x = layer(x)
            extra["symbolic_outputs"] = x
        return extra["symbolic_outputs"]

    @property
    def inputs(self) -> list[Any]:
        """The model's input, an ``nn.Input`` (as a list, as Keras's)."""
        self._symbolic_outputs()
        return [self._input_tensor]

    @property
    def outputs(self) -> list[Any]:
        """The last layer's symbolic output (as a list, as Keras's)."""
        return _symbolic.leaves(self._symbolic_outputs())

    @property
    def input_shape(self) -> Any:
        """Keras's: the input's shape (batch axis ``None``), once the model is built."""
        return _symbolic_shapes(self.inputs)

    @property  # type: ignore[misc]  # read-only, as a Keras model's
    def output_shape(self) -> Any:
        """Keras's: the output's shape (batch axis ``None``), once the model is built."""
        return _symbolic_shapes(self.outputs)

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        layer = super().get_layer(name, index)
        if self.built and self._ember.batch_input_shape is not None:
            self._symbolic_outputs()  # so that its input and output are defined
        return layer

    def pop(self) -> Layer:
        """Remove the last layer and return it (Keras's).

        Raises:
            TypeError: the model has no layers.
        """
        if not self._ember.stack:
            raise TypeError(f"{self.name}.pop: there are no layers in the model")
        layer = self._ember.stack.pop()
        self._ember.extra.pop("symbolic_outputs", None)
        if not self._ember.stack:  # as a new Sequential: built by its next layer
            self.built = False
            self._ember.output_shape = None
        elif self.built and self._ember.batch_input_shape is not None:
            self.build(self._ember.batch_input_shape)
        return layer

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = inputs
        want = self._ember.batch_input_shape
        if want is not None and len(want) > 1 and want[-1] == 1 and \
                getattr(x, "ndim", None) == len(want) - 1:
            x = em.expand_dims(x, -1)  # as Keras: an input one axis short of a last 1
        for layer in self._ember.stack:
            x = layer(x, training=training)
        return x

    _ember_raw_config = True  # from_config reads its layers' configs itself

    def get_config(self) -> dict[str, Any]:
        """The model's name, trainable and dtype, its input (Keras's ``InputLayer``) and
        each layer's config, in Keras 3's form."""
        from . import _model_config

        base = {"name": self.name, "trainable": self.trainable,
                "dtype": self._ember.policy.name}
        return _model_config.sequential_config(self, base)

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: Any = None) -> Any:
        """A new Sequential of new layers (fresh weights) from ``get_config()``'s dict."""
        from . import _model_config
        from .saving import _registry

        with _registry.scope(custom_objects):
            return _model_config.sequential_from_config(cls, config)


def _fmt_shape(shape: Any) -> str:
    if shape is None:
        return "?"
    if isinstance(shape, list):
        return ", ".join(_fmt_shape(s) for s in shape)
    return str((None,) + tuple(shape[1:]))


def _summary_shape(layer: Layer) -> Any:
    """A layer's output shape as a summary shows it: its symbolic output's in a functional
    model (``None`` for an axis of unknown size, as Keras), else its last call's."""
    extra = layer._ember.extra
    if "input_tensor" in extra:  # an InputLayer
        return tuple(extra["input_tensor"].shape)
    nodes = extra.get("inbound_nodes")
    if nodes:
        shapes = [tuple(t.shape) for t in _symbolic.leaves(nodes[0].outputs)]
        return shapes[0] if len(shapes) == 1 else shapes
    return layer._ember.output_shape


def summary_text(model: Layer, line_length: int = 72) -> str:
    connected = _connections(model)
    cols: tuple[int, ...]
    if connected is None:
        cols = (int(line_length * 0.45), int(line_length * 0.33))
        head = f"{'Layer (type)':<{cols[0]}}{'Output Shape':<{cols[1]}}Param #"
    else:  # a graph that is not a chain: Keras's fourth column, on a wider line
        line_length = max(line_length, 98)
        cols = (int(line_length * 0.33), int(line_length * 0.22), int(line_length * 0.12))
        head = (f"{'Layer (type)':<{cols[0]}}{'Output Shape':<{cols[1]}}"
                f"{'Param #':<{cols[2]}}Connected to")
    sep = "=" * line_length
    lines = [f'Model: "{model.name}"', "_" * line_length, head, sep]
    for layer in model.layers:
        label = _fit(f"{layer.name} ({type(layer).__name__})", cols[0])
        params = f"{layer.count_params():,}"
        row = f"{label:<{cols[0]}}{_fit(_fmt_shape(_summary_shape(layer)), cols[1]):<{cols[1]}}"
        if connected is None:
            row += params
        else:  # each cell padded from where the last ended: a long one shifts, never joins
            width = cols[-1]  # the Param # column's
            row += f"{_fit(params, width):<{width}}{', '.join(connected.get(id(layer), []))}"
        lines.append(row.rstrip())
    n_train = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    n_all = model.count_params()
    lines += [sep, f"Total params: {n_all:,}", f"Trainable params: {n_train:,}",
              f"Non-trainable params: {n_all - n_train:,}", "_" * line_length]
    return "\n".join(lines)


def _fit(text: str, width: int) -> str:
    """``text`` with a space after it where it fills its column: a long name pushes the
    row's next columns right, never runs into them (nor is it cut: its type stays)."""
    return text if len(text) < width else text + " "


def _connections(model: Any) -> dict[int, list[str]] | None:
    """Keras's "Connected to" column of a functional model whose graph is not a chain:
    for each layer, the tensors its calls read, as ``layer[node][tensor]``; None for a
    chain (a Sequential, or one input through one call after another)."""
    functional = model._ember.extra.get("functional")
    if functional is None:
        return None
    spec, outputs, nodes = functional
    flat_in = _symbolic.leaves(spec)
    inputs = {id(t): name for t, name in zip(flat_in, model._input_layer_names())}
    chain, last = len(flat_in) == 1 and len(_symbolic.leaves(outputs)) == 1, flat_in[0]
    out: dict[int, list[str]] = {}
    for node in nodes:
        reads = _symbolic.symbolic_leaves(node)
        if len(reads) != 1 or reads[0] is not last or len(_symbolic.leaves(node.outputs)) != 1:
            chain = False
        last = _symbolic.leaves(node.outputs)[0]
        names = []
        for t in reads:
            if id(t) in inputs:
                names.append(f"{inputs[id(t)]}[0][0]")
            elif t.node is not None:
                producer = t.node.layer
                index = producer._ember.extra.get("inbound_nodes", [t.node]).index(t.node)
                names.append(f"{producer.name}[{index}][{t.index}]")
        out.setdefault(id(node.layer), []).extend(names)
    return None if chain else out


def _symbolic_shapes(tensors: list[Any]) -> Any:
    shapes = [tuple(t.shape) for t in tensors]
    return shapes[0] if len(shapes) == 1 else shapes

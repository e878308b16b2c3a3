"""Layer: the base class of every layer and model.

Variables and sub-layers are tracked when assigned to attributes (any name, ``_private``
ones included; also inside lists, tuples and dicts, nested) and named by attribute path
(``dense1/kernel``). ``build(input_shape)`` runs on the first call; ``call(inputs,
training=None)`` does the work. ember's own state on a layer sits in one namespaced object
(see ``_tracking.LayerState``), so a user's attribute names never collide with it.

Examples:
    >>> import ember.core as em
    >>> from ember import nn
    >>> class Scale(nn.layers.Layer):
    ...     def build(self, input_shape):
    ...         self.w = self.add_weight("w", [input_shape[-1]], initializer="ones")
    ...     def call(self, x):
    ...         return x * self.w
    >>> Scale()(em.ones((2, 3))).shape
    (2, 3)
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import itertools
import math
import re
import weakref
from collections import defaultdict
from typing import Any

import numpy as np

import ember.core as em
from ember import tape

from .. import constraints as _constraints
from .. import dtype_policies as _policies
from .. import initializers as _init
from .. import regularizers as _regularizers
from . import _autocast, _masks, _symbolic, _tracking

_TRAINING: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "ember_nn_training", default=None)
# The layers holding losses of their last call (add_loss, activity regularizers), by id: an
# outermost call clears those of its own tree, and walks the tree only when there are any.
_CALL_LOSSES: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_IN_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar("ember_nn_in_call",
                                                               default=False)
_name_counters: defaultdict[str, itertools.count] = defaultdict(itertools.count)
_accepts: dict[tuple[type, str], bool] = {}


def _snake(name: str) -> str:
    """Keras 3's layer names (its ``to_snake_case``): ``Conv2D`` -> ``conv2d``,
    ``GlobalAveragePooling2D`` -> ``global_average_pooling2d``, ``LSTMCell`` ->
    ``lstm_cell``, ``ConvLSTM2D`` -> ``conv_lstm2d`` (tf.keras 2's rule, which counted
    digits as lowercase, gave ``conv_lst_m2d``)."""
    s = re.sub(r"\W+", "", name)
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", s)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


_NO_INPUTS: Any = object()  # __call__ without a positional first argument


def _first_by_name(layer: Any, kwargs: dict[str, Any]) -> Any:
    """The first argument of ``layer(...)`` given by its name in ``call``'s signature
    (``layer(logits=x, targets=t)``), taken out of ``kwargs``."""
    params = [p for p in inspect.signature(type(layer).call).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][1:]
    name = params[0].name if params else None
    if name is None or name not in kwargs or params[0].kind is params[0].POSITIONAL_ONLY:
        raise TypeError(f"{layer.name}: called without inputs (give them first, or by the "
                        f"name call() gives them{f', {name!r}' if name else ''})")
    return kwargs.pop(name)


def _unique_name(cls_name: str) -> str:
    base = _snake(cls_name)
    n = next(_name_counters[base])
    return base if n == 0 else f"{base}_{n}"


def accepts_kwarg(cls: type, fn_name: str, kw: str) -> bool:
    key = (cls, fn_name + ":" + kw)
    hit = _accepts.get(key)
    if hit is None:
        params = inspect.signature(getattr(cls, fn_name)).parameters
        hit = kw in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
        _accepts[key] = hit
    return hit


def _training_required(cls: Any, n_args: int) -> bool:
    """Whether ``cls.call`` names ``training`` without a default (``def call(self, x,
    training)``) and the ``n_args`` positional arguments after the inputs do not reach it:
    such a layer called with no training flag anywhere gets False, as tf.keras and Keras 3
    document it (the layer runs in inference)."""
    at = _training_at.get(cls)
    if at is None:
        params = list(inspect.signature(cls.call).parameters.values())
        p = next((q for q in params if q.name == "training"), None)
        at = -1 if p is None or p.default is not p.empty else (
            10 ** 6 if p.kind is p.KEYWORD_ONLY else params.index(p) - 2)  # (self, inputs)
        _training_at[cls] = at
    return at >= 0 and n_args < at + 1


_training_at: dict[type, int] = {}  # per class: where call's required training is, or -1


def current_training() -> bool | None:
    """The ``training`` flag of the innermost enclosing layer call (None outside one)."""
    return _TRAINING.get()


class InputSpec:
    """What a built layer accepts: a rank (exact or minimum) and fixed sizes of some axes."""

    def __init__(self, ndim: int | None = None, min_ndim: int | None = None,
                 axes: dict[int, int] | None = None) -> None:
        self.ndim = ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})

    def check(self, layer: Layer, shape: tuple[int, ...]) -> None:
        rank = len(shape)
        if self.ndim is not None and rank != self.ndim:
            raise ValueError(f"layer {layer.name!r} ({type(layer).__name__}) expects inputs "
                             f"of rank {self.ndim}, got shape {shape}")
        if self.min_ndim is not None and rank < self.min_ndim:
            raise ValueError(f"layer {layer.name!r} ({type(layer).__name__}) expects inputs "
                             f"of rank >= {self.min_ndim}, got shape {shape}")
        for axis, size in self.axes.items():
            if shape[axis] != size:
                raise ValueError(
                    f"layer {layer.name!r} ({type(layer).__name__}) was built for inputs with "
                    f"{size} at axis {axis}, got shape {shape}")


def _refuse_strings(layer: Any, x: Any) -> None:
    """Strings given to a layer that holds tensors: say where strings go in ember."""
    if isinstance(x, (str, bytes)) or (isinstance(x, np.ndarray) and x.dtype.kind in "USO") \
            or (isinstance(x, (list, tuple)) and x and isinstance(x[0], (str, bytes))):
        raise TypeError(
            f"layer {layer.name!r} ({type(layer).__name__}) was given strings: ember tensors "
            f"hold numbers, so a model cannot take text. StringLookup, TextVectorization and "
            f"Hashing take strings when called on their own: map the data through them in "
            f"the input pipeline (dataset.map(lambda x, y: (vectorize(x), y))) and give the "
            f"model their integer output") from None


def _shape_of(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return [_shape_of(v) for v in x]
    if isinstance(x, dict):
        return [_shape_of(v) for v in x.values()]
    return tuple(x.shape)


class Layer(_tracking._Listened):
    """Base class of layers: tracked state, lazy build, ``call``.

    Args:
        trainable: whether the layer's variables are trained (``False`` freezes them).
        name: a display name (checkpoint paths use attribute names, not this).
        dtype: the layer's dtype policy (``dtype_policy``): a dtype (``"float32"``), a
            policy name (``"mixed_float16"``, ``"mixed_bfloat16"``) or an
            ``nn.mixed_precision.Policy``; None takes the global policy (float32 unless
            ``nn.mixed_precision.set_global_policy`` changed it). Variables are made in its
            ``variable_dtype``; floating inputs are cast to its ``compute_dtype``, and so
            are float variables while ``call`` runs (Keras's autocast).
        input_shape: the shape of one example, without the batch axis; lets a
            ``Sequential`` build before the first call (``input_dim=n`` means ``(n,)``).
        batch_input_shape: the same with the batch axis.
        activity_regularizer: a regularizer of the layer's output; its value (divided by
            the batch size, as tf.keras) joins ``losses`` after each call.
        autocast: cast floating inputs and variables to the compute dtype (default True).
        dynamic: ember always runs eagerly, so only ``True`` (or the default) is accepted.
    """

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 input_shape: Any = None, batch_input_shape: Any = None,
                 activity_regularizer: Any = None, **kwargs: Any) -> None:
        unknown = set(kwargs) - {"input_dim", "autocast", "dynamic"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unexpected keyword arguments "
                            f"{sorted(unknown)}")
        if kwargs.get("dynamic", None) is False:
            raise ValueError(f"{type(self).__name__}: dynamic=False (a graph-compiled layer) "
                             f"is not supported: ember always runs eagerly")
        st = _tracking.state_of(self) or _tracking.LayerState()
        object.__setattr__(self, _tracking.STATE, st)
        pending = _INIT_ARGS.get()
        if pending is not None and pending[0] is self and pending[1] is not None:
            st.extra["init_args"] = pending[1]
        st.autocast = bool(kwargs.get("autocast", True))
        st.activity_regularizer = _regularizers.get(activity_regularizer)
        self.trainable = trainable
        self.name = name or _unique_name(type(self).__name__)
        st.policy = _policies.get(dtype)
        self.built = False
        self.input_spec: InputSpec | None = None
        if input_shape is None and "input_dim" in kwargs:
            input_shape = (kwargs["input_dim"],)
        if batch_input_shape is not None:
            st.batch_input_shape = tuple(batch_input_shape)
        elif input_shape is not None:
            st.batch_input_shape = (None,) + tuple(input_shape)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "_ember_wrapped", False):
            cls.build = _announcing_build(build)  # type: ignore[method-assign]
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_ember_wrapped", False):
            cls.__init__ = _recording_init(init)  # type: ignore[method-assign]

    # A subclass that never calls super().__init__() (as tf.Module subclasses need not,
    # which nn.Layer stands for) is initialized with the defaults when it first needs its
    # state; a Model must call it (as in Keras: its constructor's arguments matter).
    _ember_init_when_missing = True
    _ember_layers_reserved = False  # a Model's ``layers`` are its layers, as in Keras

    def _ember_state_or_init(self) -> _tracking.LayerState | None:
        st = _tracking.state_of(self)
        if st is None and type(self)._ember_init_when_missing:
            Layer.__init__(self)
            st = _tracking.state_of(self)
        return st

    @property
    def _ember(self) -> _tracking.LayerState:
        st = self._ember_state_or_init()
        if st is None:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() first")
        return st

    @property
    def activity_regularizer(self) -> Any:
        return self._ember.activity_regularizer

    @activity_regularizer.setter
    def activity_regularizer(self, value: Any) -> None:
        self._ember.activity_regularizer = _regularizers.get(value)

    # --- dtypes ----------------------------------------------------------------------
    @property
    def dtype_policy(self) -> Any:
        """The layer's ``DTypePolicy`` (settable with a policy, its name or a dtype)."""
        return self._ember.policy

    @dtype_policy.setter
    def dtype_policy(self, value: Any) -> None:
        self._ember.policy = _policies.get(value)

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the layer's variables (``variable_dtype`` as a numpy dtype; Keras 3's
        ``layer.dtype`` is this alias too). Setting it sets the policy."""
        return self._ember.policy._variable

    @dtype.setter
    def dtype(self, value: Any) -> None:
        self._ember.policy = _policies.get(value)

    @property
    def compute_dtype(self) -> str:
        """The dtype the layer computes in: its inputs and float variables are cast to it."""
        return self._ember.policy.compute_dtype

    @property
    def variable_dtype(self) -> str:
        """The dtype the layer makes its variables in."""
        return self._ember.policy.variable_dtype

    @property
    def input_dtype(self) -> str:
        """The dtype floating inputs are cast to (the compute dtype, as Keras 3)."""
        return self._ember.policy.compute_dtype

    # --- tracking --------------------------------------------------------------------
    def _first_node(self, what: str) -> Any:
        nodes = self._ember.extra.get("inbound_nodes")
        owner = self._ember.extra.get("sequential")
        if not nodes and owner is not None and owner() is not None and owner().built:
            # a layer of a built Sequential: the stack is a functional graph (Keras builds
            # it when the model is made); it is called on its nn.Input now
            try:
                owner()._symbolic_outputs()
            except ValueError:
                pass
            nodes = self._ember.extra.get("inbound_nodes")
        if not nodes:
            raise AttributeError(f"layer {self.name!r} has never been called on symbolic "
                                 f"inputs (nn.Input), so it has no defined {what}")
        return nodes[0]

    @property
    def input(self) -> Any:
        """The symbolic input of this layer's first call in a functional graph (an
        ``nn.Model``, or a ``Sequential`` with a known input shape), as in Keras."""
        return self._first_node("input").inputs

    @property
    def output(self) -> Any:
        """The symbolic output of this layer's first call in a functional graph, as in
        Keras: ``nn.Model(model.inputs, model.get_layer("conv2d").output)`` extracts an
        intermediate feature map."""
        return self._first_node("output").outputs

    @property
    def trainable(self) -> bool:
        """Whether this layer's variables are trained. Setting it sets it on every
        sub-layer too, as Keras does: a frozen model's BatchNormalization layers run in
        inference mode, and ``model.trainable = True`` unfreezes everything in it."""
        return bool(self.__dict__.get("_trainable", True))

    @trainable.setter
    def trainable(self, value: bool) -> None:
        value = bool(value)
        object.__setattr__(self, "_trainable", value)
        if _tracking.state_of(self) is not None:
            for layer in self.submodules:
                object.__setattr__(layer, "_trainable", value)

    def __setattr__(self, name: str, value: Any) -> None:
        _tracking.VERSION[0] += 1
        if name.startswith("_ember"):
            raise AttributeError(f"{type(self).__name__}: attribute names starting with "
                                 f"'_ember' are reserved for ember's own state ({name!r})")
        if name == "layers" and type(self)._ember_layers_reserved:
            raise AttributeError(f"{type(self).__name__}: the attribute 'layers' is reserved "
                                 "for the model's layers (as Keras's Model.layers); use "
                                 "another name")
        st = _tracking.state_of(self)
        if st is None:
            # a layer without super().__init__() starts tracking at its first variable,
            # layer or container (an empty list filled later, as a tf.Module's)
            container = type(value) in (list, dict) and type(self)._ember_init_when_missing
            if not container and not _tracking.is_trackable(value):
                object.__setattr__(self, name, value)
                return
            st = self._ember_state_or_init()
            if st is None:
                raise AttributeError(f"{type(self).__name__}: call super().__init__() before "
                                     f"assigning layers or variables (attribute {name!r})")
        value = _tracking.wrap(value)
        if not _tracking.is_trackable(value):
            st.children.pop(name, None)
            object.__setattr__(self, name, value)
            return
        for wname in list(st.weight_names):  # add_weight's name gives way to the attribute
            if st.children.get(wname) is value and wname != name:
                del st.children[wname]
                st.weight_names.discard(wname)
        unannounced = st.unannounced.pop(id(value), None) is not None
        is_new = unannounced or st.children.get(name) is not value
        st.children[name] = value
        object.__setattr__(self, name, value)
        if is_new:
            self._ember_notify(name, value)
        if not st.building:
            self._ember_announce()

    def __delattr__(self, name: str) -> None:
        _tracking.VERSION[0] += 1
        st = _tracking.state_of(self)
        if st is not None:
            st.children.pop(name, None)
        object.__delattr__(self, name)

    def __checkpoint_children__(self) -> dict[str, Any]:
        return dict(self._ember.children)

    def _ember_announce(self) -> None:
        """Tell checkpoint listeners about variables add_weight made that no attribute took.

        add_weight does not announce at once: ``self.w = self.add_weight("w_kernel")``
        names the variable ``w`` (its attribute), and a deferred restore must look it up
        under that path, never under the display name.
        """
        st = self._ember
        pending, st.unannounced = st.unannounced, {}
        for wname in pending.values():
            if wname in st.children:
                self._ember_notify(wname, st.children[wname])

    # --- weights ---------------------------------------------------------------------
    def add_weight(self, name: str | None = None, shape: Any = (), dtype: Any = None,
                   initializer: Any = None, trainable: bool = True, *,
                   regularizer: Any = None, constraint: Any = None,
                   autocast: bool = True) -> Any:
        """Create a variable owned by this layer.

        It is tracked under ``name`` until an attribute takes it (``self.w =
        self.add_weight(...)``); then the attribute name is its path.

        Args:
            name: the child name (and, prefixed with the layer's name, the display name).
            shape: the variable's shape.
            dtype: its dtype (the layer's by default).
            initializer: a name (``"glorot_uniform"``, the default for floats), an
                initializer object, or a callable ``(shape, dtype) -> array``.
            trainable: whether optimizers train it.
            regularizer: a penalty of the variable that joins ``losses``.
            constraint: a projection every ember optimizer applies after updating it.
            autocast: False keeps the variable in its own dtype when read inside a call
                of a mixed policy (Keras's; BatchNormalization's statistics).

        Returns:
            The new ``Variable``.
        """
        st = self._ember
        if not st.building:
            self._ember_announce()
        name = name or f"weight_{len(st.children)}"
        dt = np.dtype(em.as_dtype(dtype)) if dtype is not None else self.dtype
        init = _init.get(initializer if initializer is not None else (
            "glorot_uniform" if dt.kind == "f" else "zeros"))
        shape = tuple(int(s) for s in shape)
        _charge_weight_budget(self, name, shape, dt)
        value = init(shape, dtype=dt)
        var = em.Variable(value, name=f"{self.name}/{name}", trainable=trainable, dtype=dt)
        st.children[name] = var
        st.weight_names.add(name)
        st.unannounced[id(var)] = name
        reg = _regularizers.get(regularizer)
        if reg is not None:
            st.regularized.append((var, reg))
        _constraints.attach(var, constraint)
        if not autocast:
            _autocast.exclude(var)
        return var

    def add_variable(self, name: str | None = None, shape: Any = (), dtype: Any = None,
                     initializer: Any = None, trainable: bool = True, **kwargs: Any) -> Any:
        """Alias of ``add_weight`` (the TensorFlow 1.x name)."""
        return self.add_weight(name, shape, dtype, initializer, trainable, **kwargs)

    def add_loss(self, loss: Any) -> None:
        """Add a loss to ``losses``: a tensor (from inside ``call``; it is dropped at the
        next outermost call) or a zero-argument callable (kept, evaluated on each access)."""
        st = self._ember
        if callable(loss):
            st.loss_fns.append(loss)
        else:
            st.call_losses.append(em.convert_to_tensor(loss))
            _CALL_LOSSES[id(self)] = self

    @property
    def losses(self) -> list[Any]:
        """The ``add_loss`` losses of this layer and its sub-layers, then the weight
        regularizers' penalties of its *trainable* weights (Keras 3: a frozen layer's, or a
        ``trainable=False`` weight's, regularizer adds nothing to the loss)."""
        out: list[Any] = []
        regularized: dict[int, Any] = {}
        for layer in [self, *self.submodules]:
            st = layer._ember
            out += list(st.call_losses) + [fn() for fn in st.loss_fns]
            regularized.update((id(v), reg) for v, reg in st.regularized)
        if regularized:  # in trainable_weights' order, as Keras's _get_regularization_losses
            out += [regularized[id(v)](v.value()) for v in self.trainable_variables
                    if id(v) in regularized]
        return out

    def _ember_variables_by_path(self) -> dict[str, tuple[Any, bool]]:
        out: dict[str, tuple[Any, bool]] = {}
        _tracking.walk_variables(self._ember.children, "", set(), out, not self.trainable)
        return out

    def variables_by_path(self) -> dict[str, Any]:
        """``{"dense1/kernel": variable, ...}`` in attribute order."""
        return {p: v for p, (v, _) in self._ember_variables_by_path().items()}

    @property
    def variables(self) -> list[Any]:
        return [v for v, _ in self._ember_variables_by_path().values()]

    weights = variables

    @property
    def trainable_variables(self) -> list[Any]:
        return [v for v, frozen in self._ember_variables_by_path().values()
                if v.trainable and not frozen]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list[Any]:
        return [v for v, frozen in self._ember_variables_by_path().values()
                if frozen or not v.trainable]

    non_trainable_weights = non_trainable_variables

    @property
    def layers(self) -> list[Layer]:
        """Direct sub-layers in attribute order, unless the layer assigned its own
        ``self.layers`` (a Keras 3 layer, or a tf.Module, may: neither reserves the name)."""
        own = self.__dict__.get("layers")
        if own is not None:
            return own  # type: ignore[no-any-return]
        return _tracking.direct_layers(self._ember.children)

    @layers.setter
    def layers(self, value: Any) -> None:
        self.__dict__["layers"] = value  # (tracked by __setattr__ first)

    @property
    def metrics(self) -> list[Any]:
        """The metrics this layer holds in its attributes (directly, or in lists, tuples
        and dicts), then its sub-layers' (Keras 3's ``layer.metrics``: a model's
        ``metrics``, which ``fit`` logs and resets each epoch, include them)."""
        out = _held_metrics(self)
        for layer in self.submodules:
            out += [m for m in _held_metrics(layer) if all(m is not o for o in out)]
        return out

    @property
    def submodules(self) -> list[Layer]:
        out: list[Layer] = []
        _tracking.walk_layers(self._ember.children, {id(self)}, out)
        return out

    def count_params(self) -> int:
        return int(sum(int(np.prod(v.shape)) for v in self.variables))

    def get_weights(self) -> list[np.ndarray]:
        return [v.numpy() for v in self.variables]

    def set_weights(self, weights: list[Any]) -> None:
        vs = self.variables
        if len(vs) != len(weights):
            raise ValueError(f"{self.name}: set_weights got {len(weights)} arrays for "
                             f"{len(vs)} variables")
        for v, w in zip(vs, weights):
            v.assign(np.asarray(w))

    # --- calling ---------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        """Create the variables; ``input_shape`` includes the batch axis."""
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """The computation (the identity here); subclasses override it."""
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.call takes only inputs; got extra "
                            f"arguments {list(args) + sorted(kwargs)}")
        return inputs

    def _ember_convert(self, x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return type(x)(self._ember_convert(v) for v in x)
        if isinstance(x, dict):  # inputs by name (a functional model's)
            return {k: self._ember_convert(v) for k, v in x.items()}
        if x is None:
            return x
        if type(x) is not em.Tensor:
            try:
                x = em.convert_to_tensor(x)
            except (em.DTypeError, TypeError, ValueError):
                _refuse_strings(self, x)
                raise
        dt = x.dtype
        st = self.__dict__[_tracking.STATE]
        policy = st.policy
        if dt is policy._compute or not (dt.kind == "f" or dt == _BFLOAT16):
            return x  # the common case first: numpy's builtin dtypes are singletons
        if dt != policy._compute and st.autocast and getattr(type(self), "_autocast", True):
            if policy._bf16:
                _refuse_gpu_bfloat16(self, x)
            x = em.cast(x, policy._compute)
        return x

    _convert = _ember_convert  # the name layer files used before

    def _ember_maybe_build(self, inputs: Any) -> None:
        shape = _shape_of(inputs)
        self.build(shape)
        self.built = True
        st = self._ember
        if st.batch_input_shape is None and not isinstance(shape, list):
            st.batch_input_shape = (None,) + tuple(shape[1:])

    supports_masking = False  # True: the output keeps the input's mask (Keras's flag)
    compute_mask = _masks.default_compute_mask

    def __call__(self, inputs: Any = _NO_INPUTS, *args: Any, training: bool | None = None,
                 **kwargs: Any) -> Any:
        if inputs is _NO_INPUTS:  # the first argument by its name in call (Keras's)
            inputs = _first_by_name(self, kwargs)
        if _symbolic.is_symbolic(inputs):  # the functional API: record the call
            return _symbolic.call_symbolic(self, inputs, args,
                                           {**kwargs, **({} if training is None else
                                                         {"training": training})})
        st = self._ember
        outermost = not _IN_CALL.get()
        if outermost and _CALL_LOSSES:  # add_loss/activity losses belong to one call
            for layer in [self, *self.submodules]:
                layer._ember.call_losses.clear()
                _CALL_LOSSES.pop(id(layer), None)
        mask = _masks.mask_for_call(self, inputs, kwargs)  # explicit, or on the inputs
        inputs = self._ember_convert(inputs)
        policy = st.policy
        if policy._bf16:  # an integer input (ids) on a GPU
            _refuse_gpu_bfloat16(self, inputs)
        if not self.built:
            self._ember_maybe_build(inputs)
        elif self.input_spec is not None and not isinstance(inputs, (list, tuple)):
            self.input_spec.check(self, tuple(inputs.shape))
        if training is None:
            training = _TRAINING.get()
        token = _TRAINING.set(training) if training is not None else None
        call_token = _IN_CALL.set(True)
        # A frozen layer's variables are not watched by tapes (so minimize() without a
        # var_list leaves them alone); gradients still flow through them to the inputs.
        frozen = tape.no_auto_watch() if not self.trainable else _NULL
        cast: contextlib.AbstractContextManager[None] = _NULL
        if not policy._plain or _autocast.current() is not None:  # Keras's autocast scope
            scope = _autocast.scope_for(policy, st.autocast and getattr(
                type(self), "_autocast", True))
            if scope is not _autocast.KEEP:
                cast = _autocast.casting(scope)
        try:
            with frozen, cast:
                if training is not None and accepts_kwarg(type(self), "call", "training"):
                    out = self.call(inputs, *args, training=training, **kwargs)
                elif training is None and _training_required(type(self), len(args)):
                    out = self.call(inputs, *args, training=False, **kwargs)
                else:
                    out = self.call(inputs, *args, **kwargs)
        finally:
            _IN_CALL.reset(call_token)
            if token is not None:
                _TRAINING.reset(token)
        st.output_shape = _shape_of(out)
        _masks.attach_output_mask(self, inputs, out, mask)
        if st.unannounced:
            self._ember_announce()
        if st.activity_regularizer is not None:
            self._ember_activity_loss(out)
        return out

    def _ember_activity_loss(self, out: Any) -> None:
        for y in out if isinstance(out, (list, tuple)) else [out]:
            if isinstance(y, em.Tensor) and y.dtype.kind == "f":
                batch = int(y.shape[0]) if y.ndim else 1
                penalty = self._ember.activity_regularizer(y)
                self._ember.call_losses.append(em.divide(penalty, float(max(batch, 1))))
                _CALL_LOSSES[id(self)] = self

    def compute_output_shape(self, input_shape: Any) -> Any:
        """The output shape for ``input_shape`` (one shape, or a list or dict of them for a
        layer of several inputs), ``None`` where a size is unknown, as Keras's: found as
        the functional API finds it, by calling the layer on zeros (at two sizes for each
        unknown axis; it keeps no record of these calls). A batch size given in every
        input shape is kept."""
        def shapes(x: Any) -> bool:
            return isinstance(x, (list, tuple)) and all(
                d is None or isinstance(d, (int, np.integer)) for d in x)

        def placeholder(shape: Any) -> Any:
            if not shapes(shape):
                raise ValueError(f"{self.name}.compute_output_shape: {shape!r} is not a shape "
                                 "(a tuple of sizes, None where unknown)")
            if not shape:
                raise ValueError(f"{self.name}.compute_output_shape: a shape needs a batch "
                                 "axis")
            return _symbolic.SymbolicTensor((None,) + tuple(shape[1:]), self.dtype)

        if isinstance(input_shape, dict):
            inputs: Any = {k: placeholder(v) for k, v in input_shape.items()}
            given = list(input_shape.values())
        elif shapes(input_shape):
            inputs, given = placeholder(input_shape), [input_shape]
        else:
            inputs = [placeholder(v) for v in input_shape]
            given = list(input_shape)
        batches = {tuple(s)[0] for s in given if len(s)}
        nodes = self._ember.extra.get("inbound_nodes")
        kept = list(nodes) if nodes is not None else None
        try:
            out = _symbolic.call_symbolic(self, inputs, (), {})
        finally:  # no node of the functional API is left behind
            if kept is None:
                self._ember.extra.pop("inbound_nodes", None)
            else:
                self._ember.extra["inbound_nodes"] = kept
        batch = batches.pop() if len(batches) == 1 else None
        return _symbolic.map_structure(lambda t: (batch,) + tuple(t.shape[1:]), out)

    @property
    def output_shape(self) -> Any:
        """The shape of the layer's symbolic output in a functional graph (its first call
        on ``nn.Input``s: ``None`` where a size varies, as tf.keras's), else of its last
        output, batch axis ``None``; an error before any call or build that ran it."""
        st = self._ember
        if "output_shape" in st.extra:
            return st.extra["output_shape"]
        nodes = st.extra.get("inbound_nodes")
        if nodes:  # not the last call's sizes (a probe's, or a real batch's)
            out = nodes[0].outputs
            return [tuple(t.shape) for t in out] if isinstance(out, (list, tuple)) \
                else tuple(out.shape)
        shape = st.output_shape
        if shape is None:
            raise AttributeError(f"layer {self.name!r} has not been called yet, so its output "
                                 f"shape is unknown")
        return _keras_shape(shape)

    @output_shape.setter
    def output_shape(self, value: Any) -> None:  # a subclass may keep its own
        self._ember.extra["output_shape"] = value

    def get_config(self) -> dict[str, Any]:
        """The arguments that made this layer (as given to its class), with its ``name``,
        ``trainable`` and ``dtype``; ``from_config`` makes the same layer from them."""
        init_args = self._ember.extra.get("init_args") or {}
        return {**init_args, "name": self.name, "trainable": self.trainable,
                "dtype": self._ember.policy.name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        """A new layer from ``get_config()``'s dict: ``cls(**config)``."""
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r} built={self.built}>"


_BFLOAT16 = np.dtype(em.bfloat16)
_NULL = contextlib.nullcontext()  # reusable: entering it does nothing


def _refuse_gpu_bfloat16(layer: Layer, inputs: Any) -> None:
    """A bfloat16 policy on a GPU is refused by name (cupy has no bfloat16): the cast of
    a GPU input or variable would fail deep inside an op instead."""
    for x in inputs if isinstance(inputs, (list, tuple)) else [inputs]:
        if isinstance(x, em.Tensor) and x.device.startswith("/gpu"):
            policy = layer._ember.policy.name
            raise em.DeviceError(
                f"layer {layer.name!r} ({type(layer).__name__}): its dtype policy "
                f"{policy!r} computes in bfloat16, which a GPU cannot (cupy has no bfloat16), "
                f"and its input is on {x.device}; use 'mixed_float16' on a GPU, or run the "
                f"layer on '/cpu:0'")


def _keras_shape(shape: Any) -> Any:
    if isinstance(shape, list):
        return [_keras_shape(s) for s in shape]
    return (None,) + tuple(shape[1:]) if len(shape) else ()


# Bytes that variables made now may still take, while nn.models.load_model builds a model
# from a file's config: the weights file holds every variable, so a config asking for
# more than it holds is damaged or hostile, refused before the memory is taken. None: no
# limit (anywhere else).
WEIGHT_BUDGET: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar(
    "ember_weight_budget", default=None)


def _charge_weight_budget(layer: Layer, name: str, shape: tuple[int, ...], dt: Any) -> None:
    budget = WEIGHT_BUDGET.get()
    if budget is None:
        return
    cost = math.prod(shape) * dt.itemsize  # exact: a hostile size may not fit a float
    if cost > budget[0]:
        raise ValueError(f"layer {layer.name!r}: the variable {name!r} of shape {shape} "
                         f"makes the model's variables larger than the weights file being "
                         f"loaded holds: the config is damaged or hostile")
    budget[0] -= cost


# (layer, its __init__ arguments) while the outermost __init__ of that layer runs;
# Layer.__init__ keeps them in the layer's state for get_config
_INIT_ARGS: contextvars.ContextVar[Any] = contextvars.ContextVar("ember_init_args",
                                                                default=None)


@functools.cache
def _signature(init: Any) -> inspect.Signature:
    return inspect.signature(init)


def _recording_init(init: Any) -> Any:
    """Wrap a subclass's ``__init__`` so the outermost call records its arguments (what
    ``get_config`` returns, so ``from_config`` never falls back to defaults silently)."""

    @functools.wraps(init)
    def wrapped(self: Layer, *args: Any, **kwargs: Any) -> None:
        pending = _INIT_ARGS.get()
        if pending is not None and pending[0] is self:  # a super().__init__ inside
            init(self, *args, **kwargs)
            return
        token = _INIT_ARGS.set((self, _bound_arguments(init, self, args, kwargs)))
        try:
            init(self, *args, **kwargs)
        finally:
            _INIT_ARGS.reset(token)

    wrapped._ember_wrapped = True  # type: ignore[attr-defined]
    return wrapped


def _bound_arguments(init: Any, layer: Any, args: Any, kwargs: Any) -> dict[str, Any] | None:
    """The call's arguments by name (``**kwargs`` flattened); None when they cannot be
    named (``*args``) or do not bind (``__init__`` then raises its own error)."""
    try:
        bound = _signature(init).bind(layer, *args, **kwargs)
    except TypeError:
        return None
    out: dict[str, Any] = {}
    for i, (name, value) in enumerate(bound.arguments.items()):
        kind = _signature(init).parameters[name].kind
        if i == 0:
            continue  # self
        if kind is inspect.Parameter.VAR_POSITIONAL:
            if value:
                return None
        elif kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        else:
            out[name] = value
    return out


def _announcing_build(build: Any) -> Any:
    """Wrap a subclass's ``build`` so the variables it made are announced when it ends, and
    the layer is built once it returns (Keras 3's wrapper: ``layer.build(shape)`` called
    directly leaves ``built`` True, so the first call keeps the weights it made, and any
    change made to them since, instead of building new ones)."""

    @functools.wraps(build)
    def wrapped(self: Layer, *args: Any, **kwargs: Any) -> Any:
        st = self._ember
        st.building += 1
        try:
            result = build(self, *args, **kwargs)
        finally:
            st.building -= 1
            if not st.building and st.unannounced:
                self._ember_announce()
        self.built = True
        return result

    wrapped._ember_wrapped = True  # type: ignore[attr-defined]
    return wrapped


def _held_metrics(layer: Any, containers: list[tuple[Any, int]] | None = None) -> list[Any]:
    """The metrics among ``layer``'s own attributes, in attribute order; ``containers``
    collects each list and dict walked, with its length (a change there, which sets no
    attribute, is seen by comparing them)."""
    from ..metrics import Metric

    out: list[Any] = []

    def walk(value: Any, depth: int) -> None:
        if isinstance(value, Metric):
            if all(value is not m for m in out):
                out.append(value)
        elif depth < 3 and isinstance(value, (list, tuple, dict)):
            if containers is not None and not isinstance(value, tuple):
                containers.append((value, len(value)))
            for v in (value.values() if isinstance(value, dict) else value):
                walk(v, depth + 1)

    for name, value in vars(layer).items():
        if not name.startswith("_ember"):
            walk(value, 0)
    return out

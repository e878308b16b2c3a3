"""Layer: the base class of every layer and model.

Variables and sub-layers are tracked when assigned to attributes (also inside lists and
dicts) and named by attribute path (``dense1/kernel``). ``build(input_shape)`` runs on the
first call; ``call(inputs, training=None)`` does the work.

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
import inspect
import itertools
import re
from collections import defaultdict
from typing import Any

import numpy as np

import ember.core as em
from ember import tape

from .. import initializers as _init
from . import _tracking

_TRAINING: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "ember_nn_training", default=None)
_name_counters: defaultdict[str, itertools.count] = defaultdict(itertools.count)
_accepts: dict[tuple[type, str], bool] = {}


def _snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


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


def _shape_of(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return [_shape_of(v) for v in x]
    return tuple(x.shape)


class Layer(_tracking._Listened):
    """Base class of layers: tracked state, lazy build, ``call``.

    Args:
        trainable: whether the layer's variables are trained (``False`` freezes them).
        name: a display name (checkpoint paths use attribute names, not this).
        dtype: the dtype of the variables and of floating inputs (float32).
        input_shape: the shape of one example, without the batch axis; lets a
            ``Sequential`` build before the first call.
    """

    # set with object.__setattr__ in __init__ (before tracking starts)
    _children: dict[str, Any]
    _weight_names: set[str]

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 input_shape: Any = None, batch_input_shape: Any = None,
                 **kwargs: Any) -> None:
        unknown = set(kwargs) - {"input_dim", "autocast", "dynamic"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unexpected keyword arguments "
                            f"{sorted(unknown)}")
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_weight_names", set())
        self.trainable = trainable
        self.name = name or _unique_name(type(self).__name__)
        self.dtype = np.dtype(em.as_dtype(dtype or em.float32))
        self.built = False
        self.input_spec: InputSpec | None = None
        if input_shape is None and "input_dim" in kwargs:
            input_shape = (kwargs["input_dim"],)
        if batch_input_shape is not None:
            self._batch_input_shape: tuple[Any, ...] | None = tuple(batch_input_shape)
        elif input_shape is not None:
            self._batch_input_shape = (None,) + tuple(input_shape)
        else:
            self._batch_input_shape = None
        self._output_shape: Any = None

    # --- tracking --------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        children = self.__dict__.get("_children")
        if children is None:
            if _tracking.is_trackable(value):
                raise AttributeError(f"{type(self).__name__}: call super().__init__() before "
                                     f"assigning layers or variables (attribute {name!r})")
            object.__setattr__(self, name, value)
            return
        if name.startswith("_") or not _tracking.is_trackable(value):
            children.pop(name, None)
            object.__setattr__(self, name, value)
            return
        value = _tracking.wrap(value, self, name)
        for wname in list(self._weight_names):  # add_weight's name gives way to the attribute
            if children.get(wname) is value and wname != name:
                del children[wname]
                self._weight_names.discard(wname)
        is_new = children.get(name) is not value
        children[name] = value
        object.__setattr__(self, name, value)
        if is_new:
            self._notify(name, value)

    def __delattr__(self, name: str) -> None:
        self._children.pop(name, None)
        object.__delattr__(self, name)

    def __checkpoint_children__(self) -> dict[str, Any]:
        return dict(self._children)

    # --- weights ---------------------------------------------------------------------
    def add_weight(self, name: str | None = None, shape: Any = (), dtype: Any = None,
                   initializer: Any = None, trainable: bool = True, **kwargs: Any) -> Any:
        """Create a variable owned by this layer (tracked under ``name``).

        ``initializer`` is a name (``"glorot_uniform"``, the default for floats), an
        initializer object, or a callable ``(shape, dtype) -> array``.
        """
        name = name or f"weight_{len(self._children)}"
        dt = np.dtype(em.as_dtype(dtype)) if dtype is not None else self.dtype
        init = _init.get(initializer if initializer is not None else (
            "glorot_uniform" if dt.kind == "f" else "zeros"))
        shape = tuple(int(s) for s in shape)
        value = init(shape, dtype=dt)
        var = em.Variable(value, name=f"{self.name}/{name}", trainable=trainable, dtype=dt)
        self._children[name] = var
        self._weight_names.add(name)
        self._notify(name, var)
        return var

    def add_variable(self, name: str | None = None, shape: Any = (), dtype: Any = None,
                     initializer: Any = None, trainable: bool = True, **kwargs: Any) -> Any:
        """Alias of :meth:`add_weight` (the TensorFlow 1.x name)."""
        return self.add_weight(name, shape, dtype, initializer, trainable, **kwargs)

    def _variables_by_path(self) -> dict[str, tuple[Any, bool]]:
        out: dict[str, tuple[Any, bool]] = {}
        _tracking.walk_variables(self._children, "", set(), out, not self.trainable)
        return out

    def variables_by_path(self) -> dict[str, Any]:
        """``{"dense1/kernel": variable, ...}`` in attribute order."""
        return {p: v for p, (v, _) in self._variables_by_path().items()}

    @property
    def variables(self) -> list[Any]:
        return [v for v, _ in self._variables_by_path().values()]

    weights = variables

    @property
    def trainable_variables(self) -> list[Any]:
        return [v for v, frozen in self._variables_by_path().values()
                if v.trainable and not frozen]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list[Any]:
        return [v for v, frozen in self._variables_by_path().values()
                if frozen or not v.trainable]

    non_trainable_weights = non_trainable_variables

    @property
    def layers(self) -> list[Layer]:
        """Direct sub-layers in attribute order."""
        return _tracking.direct_layers(self._children)

    @property
    def submodules(self) -> list[Layer]:
        out: list[Layer] = []
        _tracking.walk_layers(self._children, set(), out)
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
        return inputs

    def _convert(self, x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return type(x)(self._convert(v) for v in x)
        if x is None:
            return x
        if type(x) is not em.Tensor:
            x = em.convert_to_tensor(x)
        if x.dtype.kind == "f" and x.dtype != self.dtype and self._autocast:
            x = em.cast(x, self.dtype)
        return x

    _autocast = True

    def _maybe_build(self, inputs: Any) -> None:
        shape = _shape_of(inputs)
        self.build(shape)
        self.built = True
        if self._batch_input_shape is None and not isinstance(shape, list):
            self._batch_input_shape = (None,) + tuple(shape[1:])

    def __call__(self, inputs: Any, *args: Any, training: bool | None = None,
                 **kwargs: Any) -> Any:
        inputs = self._convert(inputs)
        if not self.built:
            self._maybe_build(inputs)
        elif self.input_spec is not None and not isinstance(inputs, (list, tuple)):
            self.input_spec.check(self, tuple(inputs.shape))
        if training is None:
            training = _TRAINING.get()
        token = _TRAINING.set(training) if training is not None else None
        # A frozen layer's variables are not watched by tapes (so minimize() without a
        # var_list leaves them alone); gradients still flow through them to the inputs.
        frozen = tape.no_auto_watch() if not self.trainable else contextlib.nullcontext()
        try:
            with frozen:
                if training is not None and accepts_kwarg(type(self), "call", "training"):
                    out = self.call(inputs, *args, training=training, **kwargs)
                else:
                    out = self.call(inputs, *args, **kwargs)
        finally:
            if token is not None:
                _TRAINING.reset(token)
        self._output_shape = _shape_of(out)
        return out

    def compute_output_shape(self, input_shape: Any) -> Any:
        """The output shape for ``input_shape`` (found by calling on zeros)."""
        shape = tuple(1 if s is None else s for s in input_shape)
        with em.recording.paused():
            out = self(em.zeros(shape, dtype=self.dtype))
        return _shape_of(out)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "trainable": self.trainable, "dtype": str(self.dtype)}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r} built={self.built}>"

"""Recurrent cells: one time step of SimpleRNN, LSTM and GRU, and a stack of cells.

A cell maps ``(inputs_t, states)`` to ``(output_t, new_states)`` as in Keras; the ``RNN``
layer runs it over a sequence. Weight layouts follow Keras: ``kernel`` (features,
gates * units), ``recurrent_kernel`` (units, gates * units), gate order LSTM ``i, f, c, o``
and GRU ``z, r, h``. ``GRUCell(reset_after=True)`` (the default, as Keras 2+) is PyTorch's
GRU, with a bias of shape (2, 3 * units) (input bias, recurrent bias).

The built-in cells also expose a split step (``project`` the inputs of every step at once,
then ``step`` per time step), which ``RNN`` uses to do one input matmul per sequence.
With the default activations (tanh, sigmoid) an LSTM or GRU step is one fused op,
``em.nn_ops.lstm_cell`` / ``gru_cell`` (one recurrent matmul for all gates, one
element-wise pass, a gradient rule that reuses the gate activations); other activations,
and a GRU with ``recurrent_dropout``, compose the step from element-wise ops. An
``LSTMCell`` also runs a whole sequence as one op (``sequence``, which ``RNN`` tries
first: ``em.nn_ops.lstm_sequence``).

Examples:
    >>> import ember.core as em
    >>> from ember import nn
    >>> cell = nn.layers.LSTMCell(4)
    >>> h, c = cell.get_initial_state(batch_size=2)
    >>> out, (h, c) = cell(em.ones((2, 3)), [h, c])
    >>> out.shape, c.shape
    ((2, 4), (2, 4))
"""

from __future__ import annotations

import inspect
from typing import Any

import ember.core as em

from .. import activations, constraints, initializers, regularizers
from . import _autocast
from .base import Layer


def as_state_list(states: Any) -> list[Any]:
    """``states`` as a list (a single tensor becomes a one-element list)."""
    if isinstance(states, (list, tuple)):
        return list(states)
    return [states]


def _rate(name: str, value: Any) -> float:
    v = float(value)
    if not 0.0 <= v < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return v


def weight_extras(kernel_regularizer: Any, recurrent_regularizer: Any, bias_regularizer: Any,
                  kernel_constraint: Any, recurrent_constraint: Any,
                  bias_constraint: Any) -> dict[str, tuple[Any, Any]]:
    """``{weight name: (regularizer, constraint)}`` of a cell's ``kernel``,
    ``recurrent_kernel`` and ``bias`` (what ``add_cell_weights`` gives each)."""
    return {
        "kernel": (regularizers.get(kernel_regularizer), constraints.get(kernel_constraint)),
        "recurrent_kernel": (regularizers.get(recurrent_regularizer),
                             constraints.get(recurrent_constraint)),
        "bias": (regularizers.get(bias_regularizer), constraints.get(bias_constraint))}


def add_cell_weights(cell: Any, owner: Layer,
                     specs: list[tuple[str, tuple[int, ...], Any]]) -> None:
    """``owner.add_weight`` for each ``(name, shape, initializer)``, with the regularizer
    and constraint ``cell._extras`` holds for that name; ``owner`` and the cell both hold
    the variable as attribute ``name`` (a layer that owns its cell's weights passes
    itself as ``owner``: see ``_GatedCell.make_weights``)."""
    for name, shape, init in specs:
        reg, con = cell._extras[name]
        var = owner.add_weight(name, shape, initializer=init, regularizer=reg,
                               constraint=con)
        setattr(owner, name, var)
        if owner is not cell:
            setattr(cell, name, var)


def forget_bias_init(bias_initializer: Any, units: int) -> Any:
    """An LSTM bias initializer (gates i, f, c, o of ``units`` each): ``bias_initializer``
    with the forget gate's ``units`` set to 1 (``unit_forget_bias``)."""
    base = initializers.get(bias_initializer)

    def init(shape: Any, dtype: Any = em.float32) -> Any:
        b = base((units * 4,), dtype=dtype).numpy().copy()
        b[units:2 * units] = 1.0
        return em.convert_to_tensor(b)

    return init


class _GatedCell(Layer):
    """Shared machinery: weights, input projection, dropout masks, initial state."""

    gates = 1
    n_states = 1
    kernel: Any  # created by make_weights
    recurrent_kernel: Any
    bias: Any

    def __init__(self, units: int, activation: Any = "tanh", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, seed: Any = None,
                 kernel_regularizer: Any = None, recurrent_regularizer: Any = None,
                 bias_regularizer: Any = None, kernel_constraint: Any = None,
                 recurrent_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._extras = weight_extras(kernel_regularizer, recurrent_regularizer,
                                     bias_regularizer, kernel_constraint,
                                     recurrent_constraint, bias_constraint)
        if int(units) < 1:
            raise ValueError(f"{type(self).__name__}: units must be a positive int, "
                             f"got {units!r}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.dropout = _rate("dropout", dropout)
        self.recurrent_dropout = _rate("recurrent_dropout", recurrent_dropout)
        self.seed = seed
        self._config = {"units": self.units, "activation": activation, "use_bias": use_bias,
                        "kernel_initializer": kernel_initializer,
                        "recurrent_initializer": recurrent_initializer,
                        "bias_initializer": bias_initializer, "dropout": dropout,
                        "recurrent_dropout": recurrent_dropout, "seed": seed,
                        "kernel_regularizer": kernel_regularizer,
                        "recurrent_regularizer": recurrent_regularizer,
                        "bias_regularizer": bias_regularizer,
                        "kernel_constraint": kernel_constraint,
                        "recurrent_constraint": recurrent_constraint,
                        "bias_constraint": bias_constraint}

    @property
    def state_size(self) -> Any:
        return self.units if self.n_states == 1 else [self.units] * self.n_states

    @property
    def output_size(self) -> int:
        return self.units

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self._config}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)

    # --- weights -------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        if len(input_shape) != 2:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects inputs "
                             f"(batch, features) per step, got shape {tuple(input_shape)}")
        self.make_weights(int(input_shape[-1]), owner=self)
        self.built = True

    def make_weights(self, features: int, owner: Layer) -> None:
        """Create ``kernel``, ``recurrent_kernel`` and ``bias`` with ``owner.add_weight``.

        ``LSTM``/``GRU``/``SimpleRNN`` pass themselves as ``owner``, so the variables are
        created (and restored, when a checkpoint waits for them) at their old paths
        ``lstm/kernel``; the cell then holds the same variables.
        """
        n = self.gates * self.units
        specs: list[tuple[str, tuple[int, ...], Any]] = [
            ("kernel", (features, n), self.kernel_initializer),
            ("recurrent_kernel", (self.units, n), self.recurrent_initializer)]
        if self.use_bias:
            specs.append(("bias", self._bias_shape(), self._bias_init()))
        add_cell_weights(self, owner, specs)

    def _bias_shape(self) -> tuple[int, ...]:
        return (self.gates * self.units,)

    def _bias_init(self) -> Any:
        return self.bias_initializer

    def _input_bias(self) -> Any:
        return self.bias.value() if self.use_bias else None

    def _sequence_operands(self, inputs: Any, states: list[Any], training: Any) -> list[Any]:
        """The inputs (input dropout applied) and the states, in the kernel's dtype: the
        operands of a whole-sequence op (``lstm_sequence``, ``gru_sequence``)."""
        self._check_features(inputs)
        in_mask, _ = self.dropout_masks(inputs.shape[0], inputs.shape[2], training,
                                        inputs.dtype)
        if in_mask is not None:
            inputs = em.multiply(inputs, em.expand_dims(in_mask, 1))
        dt = _autocast.current() or self.kernel.dtype  # what reading the kernel gives
        return [v if v.dtype == dt else em.cast(v, dt) for v in (inputs, *states)]

    def _check_features(self, inputs: Any) -> None:
        f = self.kernel.shape[0]
        if inputs.shape[-1] != f:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) was built for "
                             f"{f} input features, got shape {tuple(inputs.shape)}")

    # --- the split step ---------------------------------------------------------------
    def project(self, inputs: Any) -> Any:
        """``inputs @ kernel + input bias`` for inputs of shape (..., features)."""
        self._check_features(inputs)
        lead = tuple(inputs.shape[:-1])
        x2 = em.reshape(inputs, (-1, inputs.shape[-1])) if len(lead) != 1 else inputs
        w = self.kernel.value()
        b = self._input_bias()
        if b is not None:
            # [x, 1] @ [kernel; bias]: the bias rides in the matmul, so no second
            # (steps * batch, gates) array is made (and kept by a tape) for the sum
            ones = em.ones((x2.shape[0], 1), dtype=x2.dtype)
            x2 = em.concat([x2, ones], 1)
            w = em.concat([w, em.reshape(b, (1, -1))], 0)
        xw = em.matmul(x2, w)
        return em.reshape(xw, lead + (self.gates * self.units,)) if len(lead) != 1 else xw

    def step_weights(self) -> Any:
        """What ``step`` needs from the recurrent weights (read once per sequence)."""
        return self.recurrent_kernel.value()

    def step(self, xw: Any, states: list[Any], weights: Any,
             rec_mask: Any = None) -> tuple[Any, list[Any]]:
        """One step from this step's projected input; returns ``(output, new_states)``."""
        raise NotImplementedError

    # --- dropout ---------------------------------------------------------------------
    def dropout_masks(self, batch: int, features: int, training: Any,
                      dtype: Any) -> tuple[Any, Any]:
        """Scaled keep-masks for the inputs (batch, features) and the state (batch, units).

        ``None`` where no dropout applies (not training, or a rate of 0); one mask serves
        every step of a sequence, as in Keras.
        """
        if not training:
            return None, None
        in_mask = rec_mask = None
        if self.dropout:
            in_mask = em.nn_ops.dropout(em.ones((batch, features), dtype=dtype),
                                        self.dropout, seed=self.seed)
        if self.recurrent_dropout:
            rec_mask = em.nn_ops.dropout(em.ones((batch, self.units), dtype=dtype),
                                         self.recurrent_dropout, seed=self.seed)
        return in_mask, rec_mask

    # --- the Keras cell interface ----------------------------------------------------
    def get_initial_state(self, inputs: Any = None, batch_size: Any = None,
                          dtype: Any = None) -> list[Any]:
        """Zero states, one ``(batch_size, units)`` tensor per state.

        Args:
            inputs: optional; its first axis gives ``batch_size`` and its dtype ``dtype``.
            batch_size: the number of sequences.
            dtype: the state dtype (the layer's dtype by default).

        Returns:
            A list of zero tensors (``[h]`` or ``[h, c]``).
        """
        if inputs is not None:
            batch_size = inputs.shape[0] if batch_size is None else batch_size
            dtype = inputs.dtype if dtype is None else dtype
        if batch_size is None:
            raise ValueError(f"{type(self).__name__}.get_initial_state: give batch_size "
                             f"or inputs")
        dt = self.dtype if dtype is None else dtype
        return [zero_state((int(batch_size), self.units), dt, i)
                for i in range(self.n_states)]

    def zero_state(self, batch_size: int, dtype: Any = None) -> list[Any]:
        """Alias of ``get_initial_state`` (the TensorFlow 1.x name)."""
        return self.get_initial_state(batch_size=batch_size, dtype=dtype)

    def call(self, inputs: Any, states: Any, training: Any = None) -> Any:
        nested = isinstance(states, (list, tuple))
        states = [em.convert_to_tensor(s) for s in as_state_list(states)]
        if len(states) != self.n_states:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) takes "
                             f"{self.n_states} state tensor(s), got {len(states)}")
        want = tuple(inputs.shape[:-1]) + (self.units,)
        for i, st in enumerate(states):
            if tuple(st.shape) != want:
                raise ValueError(
                    f"layer {self.name!r} ({type(self).__name__}): states[{i}] has shape "
                    f"{tuple(st.shape)}; every state must have shape {want} (the inputs' "
                    f"batch {tuple(inputs.shape[:-1])} by units={self.units}); got states of "
                    f"shapes {[tuple(x.shape) for x in states]} for inputs of shape "
                    f"{tuple(inputs.shape)}")
        in_mask, rec_mask = self.dropout_masks(inputs.shape[0], inputs.shape[-1], training,
                                               inputs.dtype)
        if in_mask is not None:
            inputs = em.multiply(inputs, in_mask)
        out, new = self.step(self.project(inputs), states, self.step_weights(), rec_mask)
        return out, (new if nested or self.n_states > 1 else new[0])


class SimpleRNNCell(_GatedCell):
    """``h_t = activation(x_t W + h_{t-1} U + b)``; the state is the output.

    Args:
        units: the state size.
        activation: the nonlinearity (``"tanh"``).
        use_bias: add a bias.
        kernel_initializer, recurrent_initializer, bias_initializer: initializers.
        dropout: fraction of the inputs dropped in training (one mask per sequence).
        recurrent_dropout: fraction of the state dropped before the recurrent matmul.
        seed: seed of the dropout masks.
        kernel_regularizer, recurrent_regularizer, bias_regularizer: penalties that join
            ``losses``.
        kernel_constraint, recurrent_constraint, bias_constraint: projections optimizers
            apply after each update.
    """

    def step(self, xw: Any, states: list[Any], weights: Any,
             rec_mask: Any = None) -> tuple[Any, list[Any]]:
        h = states[0] if rec_mask is None else em.multiply(states[0], rec_mask)
        h = self.activation(em.add(xw, em.matmul(h, weights)))
        return h, [h]


class LSTMCell(_GatedCell):
    """Long short-term memory cell; states ``[h, c]``; forget-gate bias starts at 1.

    Args:
        units: the state size.
        activation: the candidate and output nonlinearity (``"tanh"``).
        recurrent_activation: the gate nonlinearity (``"sigmoid"``).
        unit_forget_bias: initialise the forget-gate bias to 1.
        **kwargs: as ``SimpleRNNCell``.
    """

    gates = 4
    n_states = 2

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", unit_forget_bias: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self._config.update(recurrent_activation=recurrent_activation,
                            unit_forget_bias=unit_forget_bias)

    def _bias_init(self) -> Any:
        if not self.unit_forget_bias:
            return self.bias_initializer
        return forget_bias_init(self.bias_initializer, self.units)

    def sequence(self, inputs: Any, states: list[Any], mask: Any,
                 training: Any) -> tuple[Any, list[Any]] | None:
        """Every step at once as one op, ``em.nn_ops.lstm_sequence``: ``(outputs,
        [h, c])`` for (batch, steps, features) inputs and a bool (batch, steps) mask (or
        None); None where the op does not compute this cell (other activations, or
        recurrent dropout, which masks the matmul's h at every step)."""
        if not _default_activations(self) or (training and self.recurrent_dropout):
            return None
        x, h, c = self._sequence_operands(inputs, states, training)
        out, h, c = em.nn_ops.lstm_sequence(x, h, c, self.kernel.value(),
                                            self.recurrent_kernel.value(),
                                            self._input_bias(), mask=mask)
        return out, [h, c]

    def step(self, xw: Any, states: list[Any], weights: Any,
             rec_mask: Any = None) -> tuple[Any, list[Any]]:
        h, c = states
        hd = h if rec_mask is None else em.multiply(h, rec_mask)
        if _default_activations(self):  # one fused op: em.nn_ops.lstm_cell
            h, c = em.nn_ops.lstm_cell(xw, hd, c, weights)
            return h, [h, c]
        z = em.add(xw, em.matmul(hd, weights))
        i, f, g, o = em.split(z, 4, axis=1)
        ra = self.recurrent_activation
        c = em.add(em.multiply(ra(f), c), em.multiply(ra(i), self.activation(g)))
        h = em.multiply(ra(o), self.activation(c))
        return h, [h, c]


class GRUCell(_GatedCell):
    """Gated recurrent unit cell.

    Args:
        units: the state size.
        activation: the candidate nonlinearity (``"tanh"``).
        recurrent_activation: the gate nonlinearity (``"sigmoid"``).
        reset_after: apply the reset gate after the recurrent matmul (``True``, the
            Keras 2+ default and PyTorch's GRU; bias of shape (2, 3 * units)) or before it
            (``False``, the original GRU; bias of shape (3 * units,)).
        **kwargs: as ``SimpleRNNCell``.
    """

    gates = 3

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", reset_after: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)
        self._config.update(recurrent_activation=recurrent_activation,
                            reset_after=reset_after)

    def _bias_shape(self) -> tuple[int, ...]:
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _input_bias(self) -> Any:
        if not self.use_bias:
            return None
        return self.bias.value()[0] if self.reset_after else self.bias.value()

    def _fused(self) -> bool:
        # the fused op reads h once, so a dropout mask on h alone (not on the carried
        # state) needs the composed step
        return _default_activations(self) and not self.recurrent_dropout

    def sequence(self, inputs: Any, states: list[Any], mask: Any,
                 training: Any) -> tuple[Any, list[Any]] | None:
        """Every step at once as one op, ``em.nn_ops.gru_sequence``: ``(outputs, [h])``
        for (batch, steps, features) inputs and a bool (batch, steps) mask (or None);
        None where the op does not compute this cell (``reset_after=False``, other
        activations, or recurrent dropout, which masks the matmul's h at every step)."""
        if not self.reset_after or not _default_activations(self) or (
                training and self.recurrent_dropout):
            return None
        x, h = self._sequence_operands(inputs, states, training)
        out, h = em.nn_ops.gru_sequence(x, h, self.kernel.value(), self.recurrent_kernel.value(),
                                        self.bias.value() if self.use_bias else None,
                                        mask=mask)
        return out, [h]

    def step_weights(self) -> Any:
        u = self.recurrent_kernel.value()
        if self.reset_after or self._fused():
            rb = self.bias.value()[1] if self.use_bias and self.reset_after else None
            return u, rb
        n = self.units
        return u[:, :2 * n], u[:, 2 * n:]

    def step(self, xw: Any, states: list[Any], weights: Any,
             rec_mask: Any = None) -> tuple[Any, list[Any]]:
        h = states[0]
        if rec_mask is None and self._fused():  # one fused op: em.nn_ops.gru_cell
            h = em.nn_ops.gru_cell(xw, h, weights[0], weights[1], reset_after=self.reset_after)
            return h, [h]
        hd = h if rec_mask is None else em.multiply(h, rec_mask)
        ra = self.recurrent_activation
        xz, xr, xh = em.split(xw, 3, axis=1)
        if self.reset_after:
            u, rb = weights
            hu = em.matmul(hd, u)
            if rb is not None:
                hu = em.add(hu, rb)
            hz, hr, hh = em.split(hu, 3, axis=1)
            z, r = ra(em.add(xz, hz)), ra(em.add(xr, hr))
            cand = self.activation(em.add(xh, em.multiply(r, hh)))
        else:
            u_zr, u_h = weights
            hz, hr = em.split(em.matmul(hd, u_zr), 2, axis=1)
            z, r = ra(em.add(xz, hz)), ra(em.add(xr, hr))
            cand = self.activation(em.add(xh, em.matmul(em.multiply(r, hd), u_h)))
        h = em.add(cand, em.multiply(z, em.subtract(h, cand)))
        return h, [h]


def _default_activations(cell: Any) -> bool:
    """tanh and sigmoid, the activations the fused cell ops compute."""
    return cell.activation is em.tanh and cell.recurrent_activation is activations.sigmoid


class StackedRNNCells(Layer):
    """Cells applied one after another at each step (a deep RNN in one ``RNN`` layer).

    The states are nested: one entry per cell, each that cell's states.

    Args:
        cells: the cells, first applied first.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> cells = nn.layers.StackedRNNCells([nn.layers.GRUCell(3), nn.layers.LSTMCell(2)])
        >>> nn.layers.RNN(cells)(em.ones((4, 5, 6))).shape
        (4, 2)
    """

    def __init__(self, cells: Any, **kwargs: Any) -> None:
        cells = list(cells)
        if not cells:
            raise ValueError("StackedRNNCells: cells must not be empty")
        for c in cells:
            if not hasattr(c, "state_size") or not callable(getattr(c, "call", None)):
                raise ValueError(f"StackedRNNCells: {c!r} is not a cell (it needs call() "
                                 f"and state_size)")
        dtypes = {c.dtype_policy.name for c in cells if isinstance(c, Layer)}
        if kwargs.get("dtype") is None and len(dtypes) == 1:
            kwargs["dtype"] = dtypes.pop()  # compute in the cells' dtypes
        super().__init__(**kwargs)
        wrong = [c.name for c in cells
                 if isinstance(c, Layer) and c.dtype_policy != self.dtype_policy]
        if wrong:  # the cells own their variables: a different dtype here cannot reach them
            raise ValueError(f"StackedRNNCells: dtype={self.dtype_policy.name!r} differs from "
                             f"the dtype of cells {wrong}; give the cells that dtype instead")
        self.cells = cells

    @property
    def state_size(self) -> list[Any]:
        return [c.state_size for c in self.cells]

    @property
    def output_size(self) -> Any:
        last = self.cells[-1]
        return getattr(last, "output_size", None) or as_state_list(last.state_size)[0]

    def get_initial_state(self, inputs: Any = None, batch_size: Any = None,
                          dtype: Any = None) -> list[Any]:
        """One entry per cell: that cell's zero states."""
        return [initial_state_of(c, inputs, batch_size, dtype or self.dtype)
                for c in self.cells]

    def zero_state(self, batch_size: int, dtype: Any = None) -> list[Any]:
        """Alias of ``get_initial_state``."""
        return self.get_initial_state(batch_size=batch_size, dtype=dtype)

    def build(self, input_shape: Any) -> None:
        shape = tuple(input_shape)
        for c in self.cells:
            if isinstance(c, Layer) and not c.built:
                c.build(shape)
                c.built = True
            size = getattr(c, "output_size", None) or as_state_list(c.state_size)[0]
            shape = shape[:-1] + (int(size),)
        self.built = True

    def call(self, inputs: Any, states: Any, training: Any = None) -> Any:
        states = list(states)
        if len(states) != len(self.cells):
            raise ValueError(f"layer {self.name!r} (StackedRNNCells) takes one state entry "
                             f"per cell ({len(self.cells)}), got {len(states)}")
        new_states = []
        x = inputs
        for c, s in zip(self.cells, states):
            x, ns = c(x, s, training=training) if isinstance(c, Layer) else c.call(x, s)
            new_states.append(ns)
        return x, new_states

    def get_config(self) -> dict[str, Any]:
        from .recurrent import serialize_cell

        return {**super().get_config(), "cells": [serialize_cell(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        from .recurrent import deserialize_cell

        config = dict(config)
        config["cells"] = [deserialize_cell(c) for c in config["cells"]]
        return cls(**config)


_ZERO_STATES: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def zero_state(shape: tuple[int, ...], dtype: Any, index: int) -> Any:
    """``em.zeros(shape, dtype)``. On a GPU, outside a graph trace, the tensor is kept and
    given again for the same shape, dtype, device and state ``index`` (tensors are
    immutable): a training step launches no memset for its initial states (two of a
    small LSTM's step). The host makes them afresh (a calloc costs nothing there)."""
    dev = em.current_device()
    if dev.kind == "cpu" or em.recording.tracers():
        return em.zeros(shape, dtype=dtype)
    key = (shape, em.as_dtype(dtype) if dtype is not None else None, id(dev), index)
    hit = _ZERO_STATES.get(key)
    if hit is None or hit[0] is not dev:  # (a device of the same name made anew)
        hit = _ZERO_STATES[key] = (dev, em.zeros(shape, dtype=dtype))
    return hit[1]


def initial_state_of(cell: Any, inputs: Any, batch_size: Any, dtype: Any) -> Any:
    """A cell's initial state: its ``get_initial_state`` or zeros of ``state_size``."""
    if inputs is None and batch_size is None:
        raise ValueError("get_initial_state: give batch_size or inputs")
    n = inputs.shape[0] if batch_size is None else batch_size
    fn = getattr(cell, "get_initial_state", None)
    if fn is not None:
        params = inspect.signature(fn).parameters
        kw = {"inputs": inputs, "batch_size": n, "dtype": dtype}
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            kw = {k: v for k, v in kw.items() if k in params}
        return fn(**kw)
    return [em.zeros((int(n), int(s)), dtype=dtype) for s in as_state_list(cell.state_size)]

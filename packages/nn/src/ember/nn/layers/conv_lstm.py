"""Convolutional LSTMs: ConvLSTM1D, ConvLSTM2D and ConvLSTM3D (Keras 3's), over
(batch, steps, *spatial, channels) sequences (or (batch, steps, channels, *spatial) with
``data_format="channels_first"``).

An LSTM whose input and recurrent transformations are convolutions: at each step,

    z = conv(x_t, kernel, strides, padding, dilation_rate) + bias
        + conv(h_{t-1}, recurrent_kernel, 1, "same")
    i, f, g, o = split(z, 4, channels)
    c_t = recurrent_activation(f) * c_{t-1} + recurrent_activation(i) * activation(g)
    h_t = recurrent_activation(o) * activation(c_t)

with Keras's weights: ``kernel`` (*kernel_size, channels, 4 * filters), ``recurrent_kernel``
(*kernel_size, filters, 4 * filters), ``bias`` (4 * filters,), gates in the order i, f, c,
o. The layers are ``RNN`` over a ``ConvLSTMCell``: masks, ``return_sequences``,
``return_state``, ``go_backwards``, ``stateful`` and ``initial_state`` behave as for
``LSTM``; the states ``[h, c]`` have the output's layout. As ``LSTM``, the layer holds the
cell's variables as its own ``kernel``, ``recurrent_kernel`` and ``bias``; a Keras weights
file keeps them at ``conv_lstm2d/cell/vars/0..2``, as Keras writes them.

The input convolution of every step is one convolution over all steps (the steps stacked
on the batch axis); each step then does one recurrent convolution. Dropout (``dropout``
on the inputs, ``recurrent_dropout`` on ``h``) draws one mask per gate for the whole
sequence, each of the shape of a step's inputs (or state), as Keras's cell does.
"""

from __future__ import annotations

import math
from typing import Any

import ember.core as em

from .. import activations
from .base import InputSpec, Layer
from .conv import _padding, _tuple, check_data_format, to_channels_first, to_channels_last
from .recurrent import _OwnWeights
from .rnn_cells import _rate, add_cell_weights, as_state_list, forget_bias_init, weight_extras
from .rnn_cells import zero_state as _zero_state

_CONV = {1: "conv1d", 2: "conv2d", 3: "conv3d"}


def _conv(x: Any, w: Any, strides: tuple[int, ...], padding: str,
          dilations: tuple[int, ...]) -> Any:
    """``em.nn_ops.conv{1,2,3}d`` of channels-last ``x`` with ``w``."""
    rank = len(strides)
    if rank == 1:
        return em.nn_ops.conv1d(x, w, stride=strides[0], padding=padding,
                                dilations=dilations[0])
    return getattr(em.nn_ops, _CONV[rank])(x, w, strides=strides, padding=padding,
                                           dilations=dilations)


class ConvLSTMCell(Layer):
    """One step of a convolutional LSTM (Keras's ``ConvLSTMCell``); states ``[h, c]``.

    Args:
        rank: the number of spatial axes (1, 2 or 3).
        filters: the output (and state) channels.
        kernel_size, strides, dilation_rate: an int or ``rank`` ints; strides > 1 and
            dilation_rate > 1 together are refused (as Keras).
        padding: ``"valid"`` or ``"same"`` of the input convolution (the recurrent one
            is always ``"same"`` with stride 1, so the state keeps its size).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        activation, recurrent_activation: ``"tanh"`` and ``"sigmoid"`` by default.
        use_bias, unit_forget_bias: as ``LSTMCell``.
        kernel_initializer, recurrent_initializer, bias_initializer: initializers
            (``"glorot_uniform"``, ``"orthogonal"``, ``"zeros"``).
        kernel_regularizer, recurrent_regularizer, bias_regularizer: penalties.
        kernel_constraint, recurrent_constraint, bias_constraint: constraints.
        dropout, recurrent_dropout: fractions of the inputs and of ``h`` dropped in
            training (one mask per gate and sequence).
        seed: seed of the dropout masks.

    Examples:
        >>> import ember.core as em
        >>> from ember.nn.layers.conv_lstm import ConvLSTMCell
        >>> cell = ConvLSTMCell(2, filters=3, kernel_size=3, padding="same")
        >>> x = em.ones((2, 5, 5, 1))
        >>> h, c = cell.get_initial_state(x)
        >>> out, (h, c) = cell(x, [h, c])
        >>> out.shape, c.shape
        ((2, 5, 5, 3), (2, 5, 5, 3))
    """

    kernel: Any  # created by make_weights
    recurrent_kernel: Any
    bias: Any

    def __init__(self, rank: int, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: str | None = None,
                 dilation_rate: Any = 1, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 unit_forget_bias: bool = True, kernel_regularizer: Any = None,
                 recurrent_regularizer: Any = None, bias_regularizer: Any = None,
                 kernel_constraint: Any = None, recurrent_constraint: Any = None,
                 bias_constraint: Any = None, dropout: float = 0.0,
                 recurrent_dropout: float = 0.0, seed: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        who = type(self).__name__
        if rank not in (1, 2, 3):
            raise ValueError(f"{who}: rank must be 1, 2 or 3, got {rank!r}")
        if isinstance(filters, bool) or not isinstance(filters, int) or filters < 1:
            raise ValueError(f"{who}: filters must be a positive int, got {filters!r}")
        self.rank, self.filters = rank, filters
        self.kernel_size = _tuple(kernel_size, rank, f"{who}: kernel_size")
        self.strides = _tuple(strides, rank, f"{who}: strides")
        self.dilation_rate = _tuple(dilation_rate, rank, f"{who}: dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"{who}: strides > 1 together with dilation_rate > 1 is not "
                             f"supported (as Keras); got strides={self.strides}, "
                             f"dilation_rate={self.dilation_rate}")
        try:
            self.padding = _padding(padding)
        except ValueError as e:
            raise ValueError(f"{who}: {e}") from None
        self.data_format = check_data_format(data_format, who)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.unit_forget_bias = bool(unit_forget_bias)
        self._extras = weight_extras(kernel_regularizer, recurrent_regularizer,
                                     bias_regularizer, kernel_constraint,
                                     recurrent_constraint, bias_constraint)
        (self.kernel_regularizer, self.kernel_constraint) = self._extras["kernel"]
        (self.recurrent_regularizer,
         self.recurrent_constraint) = self._extras["recurrent_kernel"]
        (self.bias_regularizer, self.bias_constraint) = self._extras["bias"]
        self.dropout = _rate("dropout", dropout)
        self.recurrent_dropout = _rate("recurrent_dropout", recurrent_dropout)
        self.seed = seed
        self.spatial_dims: tuple[int, ...] | None = None  # a step's, once built
        self._config = {
            "rank": rank, "filters": filters, "kernel_size": self.kernel_size,
            "strides": self.strides, "padding": self.padding,
            "data_format": self.data_format, "dilation_rate": self.dilation_rate,
            "activation": activation, "recurrent_activation": recurrent_activation,
            "use_bias": use_bias, "kernel_initializer": kernel_initializer,
            "recurrent_initializer": recurrent_initializer,
            "bias_initializer": bias_initializer, "unit_forget_bias": unit_forget_bias,
            "kernel_regularizer": kernel_regularizer,
            "recurrent_regularizer": recurrent_regularizer,
            "bias_regularizer": bias_regularizer, "kernel_constraint": kernel_constraint,
            "recurrent_constraint": recurrent_constraint, "bias_constraint": bias_constraint,
            "dropout": dropout, "recurrent_dropout": recurrent_dropout, "seed": seed}

    @property
    def state_size(self) -> tuple[int, int]:
        return (self.filters, self.filters)  # [h, c], each of `filters` channels

    @property
    def output_size(self) -> int:
        return self.filters

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self._config}

    # --- weights -------------------------------------------------------------------
    def _first(self) -> bool:
        return self.data_format == "channels_first"

    def _split_step_shape(self, shape: Any) -> tuple[tuple[int, ...], int]:
        """(spatial dims, channels) of a step's shape (batch, ...)."""
        shape = tuple(shape)
        if self._first():
            return tuple(shape[2:]), shape[1]
        return tuple(shape[1:-1]), shape[-1]

    def build(self, input_shape: Any) -> None:
        if len(input_shape) != self.rank + 2:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects a step of "
                             f"rank {self.rank + 2} ({self.data_format.replace('_', ' ')}), "
                             f"got shape {tuple(input_shape)}")
        spatial, channels = self._split_step_shape(input_shape)
        self.spatial_dims = spatial
        self.make_weights(int(channels), owner=self)
        self.built = True

    def make_weights(self, channels: int, owner: Layer) -> None:
        """Create ``kernel``, ``recurrent_kernel`` and ``bias`` with ``owner.add_weight``
        (the ConvLSTM layers pass themselves, as ``LSTM`` does)."""
        f, k = self.filters, self.kernel_size
        specs: list[tuple[str, tuple[int, ...], Any]] = [
            ("kernel", k + (channels, 4 * f), self.kernel_initializer),
            ("recurrent_kernel", k + (f, 4 * f), self.recurrent_initializer)]
        if self.use_bias:
            specs.append(("bias", (4 * f,), forget_bias_init(self.bias_initializer, f)
                          if self.unit_forget_bias else self.bias_initializer))
        add_cell_weights(self, owner, specs)

    # --- shapes and states ------------------------------------------------------------
    def _out_spatial(self, spatial: tuple[int, ...]) -> tuple[int, ...]:
        out = []
        for n, k, s, d in zip(spatial, self.kernel_size, self.strides, self.dilation_rate):
            if self.padding == "same":
                out.append(math.ceil(n / s))
            else:
                out.append(max(0, math.ceil((n - (k - 1) * d) / s)))
        return tuple(out)

    def get_initial_state(self, inputs: Any = None, batch_size: Any = None,
                          dtype: Any = None) -> list[Any]:
        """Zero states ``[h, c]``, each of the output's shape for one step.

        Args:
            inputs: optional; a step (batch, ...) or a whole sequence (batch, steps,
                ...): its batch size, spatial sizes and dtype are taken.
            batch_size: the number of sequences.
            dtype: the state dtype (the layer's by default).
        """
        spatial = self.spatial_dims
        if inputs is not None:
            shape = tuple(inputs.shape)
            if len(shape) == self.rank + 3:  # a sequence: drop the steps
                shape = shape[:1] + shape[2:]
            spatial = self._split_step_shape(shape)[0]
            batch_size = shape[0] if batch_size is None else batch_size
            dtype = inputs.dtype if dtype is None else dtype
        if batch_size is None:
            raise ValueError(f"{type(self).__name__}.get_initial_state: give batch_size "
                             f"or inputs")
        if spatial is None:
            raise ValueError(f"{type(self).__name__}.get_initial_state: the spatial sizes "
                             f"are unknown before the cell is built; give inputs")
        out = self._out_spatial(tuple(int(s) for s in spatial))
        shape = ((int(batch_size), self.filters) + out if self._first()
                 else (int(batch_size),) + out + (self.filters,))
        dt = self.dtype if dtype is None else dtype
        return [_zero_state(shape, dt, i) for i in range(2)]

    # --- the computation (channels last) ------------------------------------------------
    def _check_channels(self, x: Any) -> None:
        want = self.kernel.shape[-2]
        if x.shape[-1] != want:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) was built for "
                             f"{want} input channels, got a step of shape {tuple(x.shape)} "
                             f"(channels last)")

    def _dropout_masks(self, rate: float, shape: tuple[int, ...], training: Any,
                       dtype: Any) -> list[Any] | None:
        """Four scaled keep-masks of ``shape`` (one per gate), or None."""
        if not training or not rate:
            return None
        m = em.nn_ops.dropout(em.ones((4,) + tuple(shape), dtype=dtype), rate, seed=self.seed)
        return em.unstack(m, axis=0)

    def project(self, x: Any, masks: Any = None) -> Any:
        """The input convolution of channels-last ``x`` (…, *spatial, channels), plus the
        bias: (…, *out_spatial, 4 * filters). ``masks``: the gates' input dropout masks,
        which broadcast against ``x``'s last axes."""
        lead = tuple(x.shape[:-self.rank - 1])
        flat = len(lead) != 1
        step = tuple(x.shape[len(lead):])

        def conv(v: Any, w: Any) -> Any:
            v = em.reshape(v, (-1,) + step) if flat else v
            return _conv(v, w, self.strides, self.padding, self.dilation_rate)

        w = self.kernel.value()
        if masks is None:
            xw = conv(x, w)
        else:
            xw = em.concat([conv(em.multiply(x, m), wg)
                            for m, wg in zip(masks, em.split(w, 4, axis=-1))], -1)
        if self.use_bias:
            xw = em.add(xw, self.bias.value())
        return em.reshape(xw, lead + tuple(xw.shape[1:])) if flat else xw

    def _recurrent(self, h: Any, rk: Any, masks: Any) -> Any:
        """The recurrent convolution ("same", stride 1) of channels-last ``h``."""
        one = (1,) * self.rank

        def conv(v: Any, w: Any) -> Any:
            return _conv(v, w, one, "same", one)
        if masks is None:
            return conv(h, rk)
        return em.concat([conv(em.multiply(h, m), rg)
                          for m, rg in zip(masks, em.split(rk, 4, axis=-1))], -1)

    def _step(self, xw: Any, h: Any, c: Any, rk: Any, rec_masks: Any) -> tuple[Any, Any]:
        z = em.add(xw, self._recurrent(h, rk, rec_masks))
        i, f, g, o = em.split(z, 4, axis=-1)
        ra, act = self.recurrent_activation, self.activation
        c = em.add(em.multiply(ra(f), c), em.multiply(ra(i), act(g)))
        h = em.multiply(ra(o), act(c))
        return h, c

    def _check_states(self, states: list[Any], want: tuple[int, ...]) -> None:
        if len(states) != 2:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) takes 2 state "
                             f"tensors [h, c], got {len(states)}")
        for i, st in enumerate(states):
            if tuple(st.shape) != want:
                raise ValueError(
                    f"layer {self.name!r} ({type(self).__name__}): states[{i}] has shape "
                    f"{tuple(st.shape)}; every state must have shape {want} (the "
                    f"convolution's output for these inputs, {self.data_format})")

    def call(self, inputs: Any, states: Any, training: Any = None) -> Any:
        states = [em.convert_to_tensor(s) for s in as_state_list(states)]
        first = self._first()
        x = to_channels_last(inputs) if first else inputs
        if x.ndim != self.rank + 2:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects a step of "
                             f"rank {self.rank + 2}, got shape {tuple(inputs.shape)}")
        self._check_channels(x)
        xw = self.project(x, self._dropout_masks(self.dropout, tuple(x.shape), training,
                                                 x.dtype))
        out_shape = tuple(xw.shape[:-1]) + (self.filters,)
        self._check_states(states, to_first_shape(out_shape) if first else out_shape)
        h, c = (to_channels_last(s) if first else s for s in states)
        rec = self._dropout_masks(self.recurrent_dropout, out_shape, training, x.dtype)
        h, c = self._step(xw, h, c, self.recurrent_kernel.value(), rec)
        if first:
            h, c = to_channels_first(h), to_channels_first(c)
        return h, [h, c]

    def sequence_stepper(self, inputs: Any, training: Any) -> Any:
        """``step(t, states) -> (output, new_states)`` over (batch, steps, ...) inputs, for
        ``RNN``: the input convolution of every step done here at once (the steps stacked
        time-major on the batch axis, split back into steps: the gradient is one concat)."""
        r = self.rank
        first = self._first()
        # (steps, batch, *spatial, channels): one transpose makes it time-major and, for
        # channels_first, channels-last
        perm = (1, 0, *range(3, 3 + r), 2) if first else (1, 0, *range(2, 3 + r))
        x = em.transpose(inputs, perm)
        self._check_channels(x)
        steps = x.shape[0]
        masks = self._dropout_masks(self.dropout, tuple(x.shape[1:]), training, x.dtype)
        xw = self.project(x, masks)  # (steps, batch, *out_spatial, 4 * filters)
        xs = em.split(em.reshape(xw, (-1,) + tuple(xw.shape[2:])), steps, axis=0)
        out_shape = tuple(xw.shape[1:-1]) + (self.filters,)
        rec = self._dropout_masks(self.recurrent_dropout, out_shape, training, x.dtype)
        rk = self.recurrent_kernel.value()
        want = to_first_shape(out_shape) if first else out_shape

        def step(t: int, states: list[Any]) -> Any:
            if t == 0 or t == steps - 1:  # (the first step of either direction)
                self._check_states(list(states), want)
            h, c = (to_channels_last(s) if first else s for s in states)
            h, c = self._step(xs[t], h, c, rk, rec)
            if first:
                h, c = to_channels_first(h), to_channels_first(c)
            return h, [h, c]

        return step


def to_first_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """(N, *spatial, C) -> (N, C, *spatial), of a shape."""
    return (shape[0], shape[-1]) + tuple(shape[1:-1])


_CONV_CELL_ATTRS = frozenset({
    "filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
    "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
    "recurrent_constraint", "bias_constraint"})


class _ConvLSTM(_OwnWeights):
    """What ConvLSTM1D, ConvLSTM2D and ConvLSTM3D share (Keras's ``ConvLSTM``): an ``RNN``
    over a ``ConvLSTMCell`` of ``rank`` spatial axes, with Keras's arguments in its
    order (see :class:`ConvLSTM2D`)."""

    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: str | None = None,
                 dilation_rate: Any = 1, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 unit_forget_bias: bool = True, kernel_regularizer: Any = None,
                 recurrent_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 recurrent_constraint: Any = None, bias_constraint: Any = None,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, seed: Any = None,
                 return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, **kwargs: Any) -> None:
        kwargs.pop("rank", None)  # (a cell's config read back)
        cell = ConvLSTMCell(
            self.rank, filters, kernel_size, strides=strides, padding=padding,
            data_format=data_format, dilation_rate=dilation_rate, activation=activation,
            recurrent_activation=recurrent_activation, use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
            unit_forget_bias=unit_forget_bias, kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint, dropout=dropout,
            recurrent_dropout=recurrent_dropout, seed=seed, dtype=kwargs.get("dtype"))
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful,
                         activity_regularizer=activity_regularizer, **kwargs)

    def build(self, input_shape: Any) -> None:
        r = self.rank
        if isinstance(input_shape, list) or len(input_shape) != r + 3:
            layout = ("(batch, steps, channels, *spatial)"
                      if self.cell.data_format == "channels_first"
                      else "(batch, steps, *spatial, channels)")
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects inputs of "
                             f"rank {r + 3} {layout}, got shape {tuple(input_shape)}")
        step = (input_shape[0],) + tuple(input_shape[2:])
        spatial, channels = self.cell._split_step_shape(step)
        self.cell.spatial_dims = tuple(int(s) for s in spatial)
        self._own_cell_weights(int(channels))
        axis = 2 if self.cell.data_format == "channels_first" else -1
        self.input_spec = InputSpec(ndim=r + 3, axes={axis: int(channels)})
        self.built = True

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.pop("rank", None)
        return config

    def __getattr__(self, name: str) -> Any:
        # filters, kernel_size, ... read through to the cell (Keras's properties)
        if name in _CONV_CELL_ATTRS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        return super().__getattr__(name)


class ConvLSTM1D(_ConvLSTM):
    """1-D convolutional LSTM over (batch, steps, width, channels) sequences (or
    (batch, steps, channels, width) with ``data_format="channels_first"``).

    Keras 3's ``ConvLSTM1D``: the arguments of :class:`ConvLSTM2D`, one int each.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.ConvLSTM1D(4, 3, padding="same")(em.ones((2, 5, 8, 3))).shape
        (2, 8, 4)
    """

    rank = 1


class ConvLSTM2D(_ConvLSTM):
    """2-D convolutional LSTM over (batch, steps, rows, cols, channels) sequences (or
    (batch, steps, channels, rows, cols) with ``data_format="channels_first"``).

    Keras 3's ``ConvLSTM2D``, its arguments in its order. Each step's gates are
    ``conv(x_t, kernel) + bias + conv(h, recurrent_kernel)`` (the input convolution with
    the layer's ``strides``, ``padding`` and ``dilation_rate``, the recurrent one
    ``"same"`` with stride 1), split into i, f, c, o as ``LSTM``'s.

    Args:
        filters: the output (and state) channels.
        kernel_size, strides, dilation_rate: an int or two; strides > 1 and
            dilation_rate > 1 together are refused (as Keras).
        padding: ``"valid"`` or ``"same"`` (of the input convolution).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        activation: the candidate and output nonlinearity (``"tanh"``).
        recurrent_activation: the gate nonlinearity (``"sigmoid"``).
        use_bias: add a bias.
        kernel_initializer, recurrent_initializer, bias_initializer: initializers
            (``"glorot_uniform"``, ``"orthogonal"``, ``"zeros"``).
        unit_forget_bias: initialise the forget gate's bias to 1.
        kernel_regularizer, recurrent_regularizer, bias_regularizer, activity_regularizer:
            penalties that join ``losses``.
        kernel_constraint, recurrent_constraint, bias_constraint: projections optimizers
            apply after each update.
        dropout, recurrent_dropout: fractions of the inputs and of the state ``h`` dropped
            in training (one mask per gate for the whole sequence).
        seed: seed of the dropout masks.
        return_sequences, return_state, go_backwards, stateful: as ``LSTM``.
        **kwargs: as ``RNN`` (``unroll``, ``zero_output_for_mask``) and ``Layer``.

    Call arguments:
        inputs: (batch, steps, rows, cols, channels), or channels first.
        initial_state: ``[h, c]``, each of the output's shape for one step.
        mask: (batch, steps), ``True`` at real steps.
        training: whether dropout applies.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> layer = nn.layers.ConvLSTM2D(4, 3, padding="same", return_sequences=True)
        >>> layer(em.ones((2, 5, 8, 8, 1))).shape
        (2, 5, 8, 8, 4)
        >>> [tuple(w.shape) for w in layer.weights]
        [(3, 3, 1, 16), (3, 3, 4, 16), (16,)]
        >>> nn.layers.ConvLSTM2D(2, 3, data_format="channels_first")(
        ...     em.ones((1, 4, 3, 6, 6))).shape
        (1, 2, 4, 4)
    """

    rank = 2


class ConvLSTM3D(_ConvLSTM):
    """3-D convolutional LSTM over (batch, steps, depth, rows, cols, channels) sequences
    (or (batch, steps, channels, depth, rows, cols) with ``data_format="channels_first"``).

    Keras 3's ``ConvLSTM3D``: the arguments of :class:`ConvLSTM2D`, three ints each.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.ConvLSTM3D(2, 3, padding="same")(em.ones((1, 3, 4, 5, 5, 2))).shape
        (1, 4, 5, 5, 2)
    """

    rank = 3

"""Recurrent layers over (batch, steps, features): RNN(cell), SimpleRNN, LSTM, GRU.

``RNN`` runs any cell (see ``rnn_cells``) over the steps. With a built-in cell the input
projection of every step is one matmul over all steps; each step then does one recurrent
matmul and its gate arithmetic. An ``LSTMCell`` with its default activations runs the
whole sequence as one op instead (``em.nn_ops.lstm_sequence``, masks included), unless
recurrent dropout applies.

Masks follow Keras: at a masked step the states keep their previous values and the output
repeats the previous output (zeros before the first real step; zeros at every masked step
with ``zero_output_for_mask=True``, which ``Bidirectional`` sets for sequences).

``LSTM``, ``GRU`` and ``SimpleRNN`` are ``RNN`` over their cell; they own the cell's
weights as ``kernel``, ``recurrent_kernel`` and ``bias`` (``layer.cell.kernel`` is the same
variable), so variable and checkpoint paths stay ``lstm/kernel`` as before cells existed.
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from .base import InputSpec, Layer
from .masking import step_mask
from .rnn_cells import (
    GRUCell,
    LSTMCell,
    SimpleRNNCell,
    StackedRNNCells,
    _GatedCell,
    as_state_list,
    initial_state_of,
)


def serialize_cell(cell: Any) -> dict[str, Any]:
    """A cell's (or wrapped layer's) config in Keras 3's form, ``{"module", "class_name",
    "config", "registered_name"}`` (for ``get_config``)."""
    from ..saving import serialize_keras_object

    return serialize_keras_object(cell)


def deserialize_cell(spec: Any) -> Any:
    """A fresh cell from ``serialize_cell``'s dict (with a new name); an object is
    returned as it is.

    The class is found as ``nn.saving.deserialize_keras_object`` finds one: ember's own
    classes, registered ones and ``custom_objects`` in scope. The module a config names
    is never imported (a cell class of your own must be registered).
    """
    if not isinstance(spec, dict):
        return spec
    from ..saving import deserialize_keras_object

    inner = spec.get("config")
    if isinstance(inner, dict):
        spec = {**spec, "config": {k: v for k, v in inner.items() if k != "name"}}
    return deserialize_keras_object(spec)


def _where(m: Any, new: Any, old: Any) -> Any:
    """``new`` where the step mask ``m`` (batch, 1) is true, else ``old``; the mask takes
    the rank of states of more axes (a ConvLSTM's (batch, rows, cols, filters))."""
    if isinstance(new, (list, tuple)):
        return [_where(m, n, o) for n, o in zip(new, old)]
    if new.ndim > m.ndim:
        m = em.reshape(m, tuple(m.shape) + (1,) * (new.ndim - m.ndim))
    return em.where(m, new, old)


def _detach(states: Any) -> Any:
    if isinstance(states, (list, tuple)):
        return [_detach(s) for s in states]
    return em.stop_gradient(states)


def _shapes(states: Any) -> Any:
    if isinstance(states, (list, tuple)):
        return [_shapes(s) for s in states]
    return tuple(states.shape)


class RNN(Layer):
    """Run a cell over the steps of (batch, steps, features) inputs.

    Args:
        cell: a cell (``call(inputs_t, states) -> (output_t, new_states)`` and
            ``state_size``), or a list of cells (stacked with ``StackedRNNCells``).
        return_sequences: return every step's output (batch, steps, units), not the last.
        return_state: also return the final states: ``[output, *states]``.
        go_backwards: run the steps in reverse; with ``return_sequences`` the outputs come
            in the order they were computed (reversed), as Keras.
        stateful: start each call from the final states of the previous call (which must
            have the same batch size); ``reset_states()`` sets them back to zero. No
            gradient flows from one call into the next.
        unroll: accepted for Keras compatibility: ember runs eagerly, so the loop is
            always unrolled in Python; both values compute the same thing.
        zero_output_for_mask: with a mask, output zeros (not the previous output) at
            masked steps.
        **kwargs: as ``Layer``.

    Call arguments:
        inputs: (batch, steps, features).
        initial_state: a tensor or list of tensors (the cell's states); zeros by default.
        mask: (batch, steps), ``True`` at real steps; taken from the inputs when a layer
            upstream (``Embedding(mask_zero=True)``, ``Masking``) made one.
        training: passed to the cell (dropout).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> rnn = nn.layers.RNN(nn.layers.GRUCell(4), return_sequences=True)
        >>> rnn(em.ones((2, 5, 3))).shape
        (2, 5, 4)
    """

    supports_masking = True

    def __init__(self, cell: Any, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 zero_output_for_mask: bool = False, **kwargs: Any) -> None:
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if kwargs.get("dtype") is None and isinstance(cell, Layer):
            kwargs["dtype"] = cell.dtype_policy  # compute in the cell's dtypes
        super().__init__(**kwargs)
        if isinstance(cell, Layer) and cell.dtype_policy != self.dtype_policy:
            raise ValueError(f"{type(self).__name__}: dtype={self.dtype_policy.name!r} differs "
                             f"from the cell's {cell.dtype_policy.name!r}; give the cell that "
                             f"dtype")
        if not callable(getattr(cell, "call", None)) or not hasattr(cell, "state_size"):
            raise ValueError(f"{type(self).__name__}: cell must have a call() method and a "
                             f"state_size attribute, got {cell!r}")
        for arg, v in (("return_sequences", return_sequences), ("return_state", return_state),
                       ("go_backwards", go_backwards), ("stateful", stateful),
                       ("unroll", unroll), ("zero_output_for_mask", zero_output_for_mask)):
            if not isinstance(v, bool):
                raise TypeError(f"{type(self).__name__}: {arg} must be a bool, got {v!r}")
        self.cell = cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.stateful, self.unroll = go_backwards, stateful, unroll
        self.zero_output_for_mask = zero_output_for_mask
        self.states: Any = None

    @property
    def state_size(self) -> Any:
        return self.cell.state_size

    # --- config ----------------------------------------------------------------------
    def _rnn_config(self) -> dict[str, Any]:
        return {"return_sequences": self.return_sequences, "return_state": self.return_state,
                "go_backwards": self.go_backwards, "stateful": self.stateful,
                "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask,
                "activity_regularizer": self.activity_regularizer}

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self._rnn_config(),
                "cell": serialize_cell(self.cell)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        config = dict(config)
        config["cell"] = deserialize_cell(config["cell"])
        return cls(**config)

    # --- building --------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        if isinstance(input_shape, list) or len(input_shape) != 3:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects inputs "
                             f"(batch, steps, features), got shape {input_shape}")
        f = int(input_shape[-1])
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build((input_shape[0], f))
            self.cell.built = True
        self.input_spec = InputSpec(ndim=3, axes={-1: f})
        self.built = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        out = mask if self.return_sequences else None
        if self.return_state:
            return [out] + [None] * len(as_state_list(self.state_size))
        return out

    # --- state -----------------------------------------------------------------------
    def get_initial_state(self, inputs: Any = None, batch_size: Any = None,
                          dtype: Any = None) -> list[Any]:
        """The cell's zero states for ``batch_size`` sequences (or those of ``inputs``)."""
        dt = dtype or (inputs.dtype if inputs is not None else self.dtype)
        return as_state_list(initial_state_of(self.cell, inputs, batch_size, dt))

    def reset_states(self, states: Any = None) -> None:
        """Zero the carried states of a stateful layer (or set them to ``states``)."""
        if not self.stateful:
            raise AttributeError(f"layer {self.name!r} ({type(self).__name__}) is not "
                                 f"stateful; reset_states needs stateful=True")
        if states is None:
            self.states = None
            return
        new = [em.convert_to_tensor(s) for s in as_state_list(states)]
        if self.states is not None and _shapes(new) != _shapes(self.states):
            raise ValueError(f"layer {self.name!r}: reset_states got shapes {_shapes(new)}, "
                             f"expected {_shapes(self.states)}")
        self.states = new

    reset_state = reset_states

    def _initial(self, inputs: Any, initial_state: Any) -> list[Any]:
        n = inputs.shape[0]
        if initial_state is not None:
            states = as_state_list(initial_state)
            want = len(as_state_list(self.state_size))
            if len(states) != want:
                raise ValueError(f"layer {self.name!r} ({type(self).__name__}) takes {want} "
                                 f"initial state tensor(s), got {len(states)}")
            return [s if isinstance(s, (list, tuple)) else em.convert_to_tensor(s)
                    for s in states]
        if self.stateful and self.states is not None:
            first = self.states[0]
            while isinstance(first, (list, tuple)):
                first = first[0]
            if first.shape[0] != n:
                raise ValueError(f"layer {self.name!r} ({type(self).__name__}) is stateful "
                                 f"with batch size {first.shape[0]}; got a batch of {n} "
                                 f"(call reset_states() to start over)")
            return list(self.states)
        return self.get_initial_state(inputs)

    # --- running ---------------------------------------------------------------------
    def _stepper(self, inputs: Any, training: Any) -> Any:
        """``step(t, states) -> (output, new_states)`` for step index ``t``."""
        cell = self.cell
        if isinstance(cell, _GatedCell):
            in_mask, rec_mask = cell.dropout_masks(inputs.shape[0], inputs.shape[2],
                                                   training, inputs.dtype)
            if in_mask is not None:
                inputs = em.multiply(inputs, em.expand_dims(in_mask, 1))
            # time-major projection of every step in one matmul, as (steps * batch, gates)
            # rows split once into the steps' (batch, gates) blocks: its gradient is one
            # concat, where xw[t] per step would scatter into a sequence-sized zero tensor
            # at every step (and unstack would add a squeeze per step).
            n, steps, f = inputs.shape
            flat = em.reshape(em.transpose(inputs, (1, 0, 2)), (steps * n, f))
            xs = em.split(cell.project(flat), steps, axis=0)
            weights = cell.step_weights()
            return lambda t, states: cell.step(xs[t], states, weights, rec_mask)
        stepper = getattr(cell, "sequence_stepper", None)
        if stepper is not None:  # a cell that runs a sequence its own way (ConvLSTMCell)
            return stepper(inputs, training)
        xs = em.unstack(inputs, axis=1)
        kw = {"training": training} if isinstance(cell, Layer) else {}

        def step(t: int, states: list[Any]) -> Any:
            out, new = (cell if isinstance(cell, Layer) else cell.call)(xs[t], states, **kw)
            return out, as_state_list(new)

        return step

    def _whole_sequence(self, inputs: Any, states: list[Any], mask: Any,
                        training: Any) -> Any:
        """The layer's result from a cell that runs every step in one op (``sequence``:
        the LSTM), or None where the cell has no such op for this call."""
        run = getattr(self.cell, "sequence", None)
        if run is None:
            return None
        if self.go_backwards:  # the outputs come in the order they are computed
            inputs = em.reverse(inputs, [1])
            mask = None if mask is None else em.reverse(mask, [1])
        got = run(inputs, states, mask, training)
        if got is None:
            return None
        outputs, states = got
        if self.stateful:
            self.states = _detach(states)
        if mask is not None and self.zero_output_for_mask:
            outputs = em.where(em.expand_dims(mask, -1), outputs, em.zeros_like(outputs))
        if self.return_sequences:
            result = outputs
        elif mask is not None and self.zero_output_for_mask:
            result = em.where(mask[:, -1:], states[0], em.zeros_like(states[0]))
        else:
            result = states[0]
        return [result, *states] if self.return_state else result

    def call(self, inputs: Any, initial_state: Any = None, mask: Any = None,
             training: Any = None) -> Any:
        n, steps = inputs.shape[0], inputs.shape[1]
        if steps == 0:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) needs at least "
                             f"one step, got inputs of shape {tuple(inputs.shape)}")
        states = self._initial(inputs, initial_state)
        masks = m = None
        if mask is not None:
            m = step_mask(mask, n, steps, f"layer {self.name!r} ({type(self).__name__})")
        whole = self._whole_sequence(inputs, states, m, training)
        if whole is not None:
            return whole
        if m is not None:
            masks = em.unstack(em.expand_dims(m, -1), axis=1)
        step = self._stepper(inputs, training)
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        outputs: list[Any] = []
        prev = None
        for t in order:
            out, new = step(t, states)
            if masks is not None:
                if prev is None or self.zero_output_for_mask:
                    prev = em.zeros_like(out)
                new = _where(masks[t], new, states)
                out = _where(masks[t], out, prev)
            states, prev = new, out
            if self.return_sequences:
                outputs.append(out)
        if self.stateful:
            self.states = _detach(states)
        result = em.stack(outputs, axis=1) if self.return_sequences else prev
        if self.return_state:
            return [result] + list(states)
        return result


class _OwnWeights(RNN):
    """An RNN over a built-in cell that shows the cell's weights as its own attributes."""

    def build(self, input_shape: Any) -> None:
        self._own_cell_weights(int(input_shape[-1]))
        super().build(input_shape)

    def _own_cell_weights(self, features: int) -> None:
        """Make the cell's weights for inputs of ``features`` (channels), unless built."""
        cell = self.cell
        if cell.built:
            return
        # The layer creates the cell's variables (as lstm/kernel, the paths from before
        # cells existed, where a pending checkpoint restore finds them), then re-adds the
        # cell so those short paths come first in variables_by_path.
        del self.cell
        cell.make_weights(features, owner=self)
        cell.built = True
        self.cell = cell

    def __checkpoint_children__(self) -> dict[str, Any]:
        # The cell holds only this layer's own variables: leaving it out keeps the
        # checkpoint exactly as before cells existed (lstm/kernel, no lstm/cell/...).
        kids = dict(super().__checkpoint_children__())
        if kids.get("cell") is self.__dict__.get("cell"):
            kids.pop("cell", None)
        return kids

    def get_config(self) -> dict[str, Any]:
        cell_cfg = {k: v for k, v in self.cell.get_config().items()
                    if k not in ("name", "trainable", "dtype")}
        return {**Layer.get_config(self), **self._rnn_config(), **cell_cfg}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)

    def __getattr__(self, name: str) -> Any:
        # units, activation, dropout, ... read through to the cell (as Keras's properties)
        if name in _CELL_ATTRS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


_CELL_ATTRS = frozenset({
    "units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
    "recurrent_initializer", "bias_initializer", "unit_forget_bias", "reset_after",
    "dropout", "recurrent_dropout", "seed"})

_RNN_ARGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
             "zero_output_for_mask")
_LAYER_ARGS = ("trainable", "name", "dtype", "input_shape", "batch_input_shape",
               "input_dim", "autocast", "dynamic", "activity_regularizer")


def _split_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(cell kwargs, layer kwargs); the cell takes the layer's dtype too."""
    layer = {k: kwargs.pop(k) for k in list(kwargs) if k in _RNN_ARGS + _LAYER_ARGS}
    cell = dict(kwargs)
    if "dtype" in layer:
        cell["dtype"] = layer["dtype"]
    return cell, layer


class SimpleRNN(_OwnWeights):
    """``h_t = activation(x_t W + h_{t-1} U + b)`` over the steps.

    Args:
        units: the state size.
        **kwargs: the arguments of ``SimpleRNNCell`` and ``RNN``.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.SimpleRNN(8, return_sequences=True)(em.ones((2, 5, 3))).shape
        (2, 5, 8)
    """

    def __init__(self, units: int, **kwargs: Any) -> None:
        cell_kw, layer_kw = _split_kwargs(kwargs)
        super().__init__(SimpleRNNCell(units, **cell_kw), **layer_kw)


class LSTM(_OwnWeights):
    """Long short-term memory over the steps; states ``[h, c]``.

    Args:
        units: the state size.
        **kwargs: the arguments of ``LSTMCell`` (``activation``,
            ``recurrent_activation``, ``unit_forget_bias``, ``dropout``, ...) and of
            ``RNN`` (``return_sequences``, ``return_state``, ``go_backwards``, ...).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.LSTM(8)(em.ones((2, 5, 3))).shape
        (2, 8)
    """

    def __init__(self, units: int, **kwargs: Any) -> None:
        implementation = kwargs.pop("implementation", 2)
        if implementation not in (1, 2):  # Keras's kernel layout choice: same maths
            raise ValueError(f"LSTM: implementation must be 1 or 2, got {implementation!r}")
        cell_kw, layer_kw = _split_kwargs(kwargs)
        super().__init__(LSTMCell(units, **cell_kw), **layer_kw)


class GRU(_OwnWeights):
    """Gated recurrent unit over the steps (``reset_after=True`` as Keras 2+ and PyTorch).

    Args:
        units: the state size.
        **kwargs: the arguments of ``GRUCell`` (``reset_after``, ...) and of
            ``RNN``.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.GRU(8, reset_after=False)(em.ones((2, 5, 3))).shape
        (2, 8)
    """

    def __init__(self, units: int, **kwargs: Any) -> None:
        implementation = kwargs.pop("implementation", 2)
        if implementation not in (1, 2):
            raise ValueError(f"GRU: implementation must be 1 or 2, got {implementation!r}")
        cell_kw, layer_kw = _split_kwargs(kwargs)
        super().__init__(GRUCell(units, **cell_kw), **layer_kw)

"""Recurrent layers over (batch, steps, features): SimpleRNN, LSTM, GRU.

The input projection of every step is one matmul over all steps; each step then does one
recurrent matmul and its gate arithmetic. Weight layouts follow Keras: ``kernel``
(features, gates * units), ``recurrent_kernel`` (units, gates * units), gate order
LSTM ``i, f, c, o`` and GRU ``z, r, h`` (``reset_after=True``, bias of shape (2, 3 * units)).
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from .. import activations
from .base import InputSpec, Layer


class _RNN(Layer):
    gates = 1
    n_states = 1

    def __init__(self, units: int, activation: Any = "tanh", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards = go_backwards

    def build(self, input_shape: Any) -> None:
        if len(input_shape) != 3:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) expects inputs "
                             f"(batch, steps, features), got shape {tuple(input_shape)}")
        f, n = input_shape[-1], self.gates * self.units
        self.kernel = self.add_weight("kernel", (f, n), initializer=self.kernel_initializer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, n),
                                                initializer=self.recurrent_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(),
                                        initializer=self._bias_init())
        self.input_spec = InputSpec(ndim=3, axes={-1: f})

    def _bias_shape(self) -> tuple[int, ...]:
        return (self.gates * self.units,)

    def _bias_init(self) -> Any:
        return self.bias_initializer

    def _input_bias(self) -> Any:
        return self.bias.value() if self.use_bias else None

    def _project(self, inputs: Any) -> Any:
        """inputs (N, T, F) -> time-major projections (T, N, gates * units)."""
        n, t, f = inputs.shape
        xt = em.reshape(em.transpose(inputs, (1, 0, 2)), (t * n, f))
        xw = em.matmul(xt, self.kernel.value())
        b = self._input_bias()
        if b is not None:
            xw = em.add(xw, b)
        return em.reshape(xw, (t, n, self.gates * self.units))

    def _step(self, xw: Any, states: list[Any], u: Any) -> list[Any]:
        """One time step: the new states from this step's input projection."""
        raise NotImplementedError

    def _initial(self, inputs: Any, initial_state: Any) -> list[Any]:
        if initial_state is None:
            z = em.zeros((inputs.shape[0], self.units), dtype=inputs.dtype)
            return [z] * self.n_states
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [
            initial_state]
        if len(states) != self.n_states:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) takes "
                             f"{self.n_states} initial state tensor(s), got {len(states)}")
        return [em.convert_to_tensor(s) for s in states]

    def call(self, inputs: Any, initial_state: Any = None, training: Any = None,
             mask: Any = None) -> Any:
        states = self._initial(inputs, initial_state)
        xw = self._project(inputs)
        u = self.recurrent_kernel.value()
        steps = range(inputs.shape[1] - 1, -1, -1) if self.go_backwards else range(inputs.shape[1])
        # unstack once: its gradient is one concat, where xw[t] per step would scatter
        # into a sequence-sized zero tensor at every step (quadratic in the length).
        xs = em.unstack(xw, axis=0)
        outputs = []
        for t in steps:
            states = self._step(xs[t], states, u)
            if self.return_sequences:
                outputs.append(states[0])
        out = em.stack(outputs, axis=1) if self.return_sequences else states[0]
        if self.return_state:
            return [out] + list(states)
        return out


class SimpleRNN(_RNN):
    """h_t = activation(x_t W + h_{t-1} U + b)."""

    def _step(self, xw: Any, states: list[Any], u: Any) -> list[Any]:
        return [self.activation(em.add(xw, em.matmul(states[0], u)))]


class LSTM(_RNN):
    """Long short-term memory; states ``[h, c]``; forget-gate bias starts at 1.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.LSTM(8)(em.ones((2, 5, 3))).shape
        (2, 8)
    """

    gates = 4
    n_states = 2

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", unit_forget_bias: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias

    def _bias_init(self) -> Any:
        if not self.unit_forget_bias:
            return self.bias_initializer
        from .. import initializers

        base = initializers.get(self.bias_initializer)
        units = self.units

        def init(shape: Any, dtype: Any = em.float32) -> Any:
            b = base((units * 4,), dtype=dtype).numpy().copy()
            b[units:2 * units] = 1.0
            return em.convert_to_tensor(b)

        return init

    def _step(self, xw: Any, states: list[Any], u: Any) -> list[Any]:
        h, c = states
        z = em.add(xw, em.matmul(h, u))
        i, f, g, o = em.split(z, 4, axis=1)
        ra = self.recurrent_activation
        c = em.add(em.multiply(ra(f), c), em.multiply(ra(i), self.activation(g)))
        h = em.multiply(ra(o), self.activation(c))
        return [h, c]


class GRU(_RNN):
    """Gated recurrent unit (``reset_after=True``, as Keras 2+ and PyTorch)."""

    gates = 3

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", **kwargs: Any) -> None:
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)

    def _bias_shape(self) -> tuple[int, ...]:
        return (2, 3 * self.units)

    def _input_bias(self) -> Any:
        return self.bias.value()[0] if self.use_bias else None

    def _step(self, xw: Any, states: list[Any], u: Any) -> list[Any]:
        h = states[0]
        hu = em.matmul(h, u)
        if self.use_bias:
            hu = em.add(hu, self.bias.value()[1])
        xz, xr, xh = em.split(xw, 3, axis=1)
        hz, hr, hh = em.split(hu, 3, axis=1)
        ra = self.recurrent_activation
        z = ra(em.add(xz, hz))
        r = ra(em.add(xr, hr))
        cand = self.activation(em.add(xh, em.multiply(r, hh)))
        return [em.add(cand, em.multiply(z, em.subtract(h, cand)))]

"""numpy-only stand-ins for ember variables, lazily built layers and an optimizer.

They implement the object-graph protocol exactly as ember.core / ember.nn are meant to,
without importing anything from ember.
"""

from __future__ import annotations

import numpy as np


class Variable:
    """A variable on a pretend device: numpy() reads, assign() writes in place."""

    def __init__(self, value, dtype=None, device="cpu:0"):
        self._value = np.array(value, dtype=dtype)
        self.device = device
        self.assigned_devices = []

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._value.dtype

    def numpy(self):
        return self._value.copy()

    def assign(self, value):
        value = np.asarray(value)
        if value.shape != self._value.shape:
            raise ValueError(f"shape {value.shape} != {self._value.shape}")
        self._value = value.astype(self._value.dtype, copy=True)
        self.assigned_devices.append(self.device)


class _Listened:
    """Mixin: keeps listeners and tells them about children created later."""

    def __checkpoint_listen__(self, listener):
        self.__dict__.setdefault("_listeners", []).append(listener)

    def _notify(self, name, child):
        for listener in self.__dict__.get("_listeners", []):
            listener.child_created(self, name, child)


class Dense(_Listened):
    """A layer whose kernel and bias are created at the first call (input size known)."""

    def __init__(self, units, seed=0, reverse_build=False):
        self.units = units
        self.seed = seed
        self.reverse_build = reverse_build
        self._vars = {}

    def __checkpoint_children__(self):
        return dict(self._vars)

    def build(self, in_dim):
        rng = np.random.default_rng(self.seed)
        made = {"kernel": Variable(rng.standard_normal((in_dim, self.units)), np.float32),
                "bias": Variable(np.zeros(self.units), np.float32)}
        names = sorted(made, reverse=self.reverse_build)
        for name in names:
            self._vars[name] = made[name]
            self._notify(name, made[name])

    @property
    def kernel(self):
        return self._vars["kernel"]

    @property
    def bias(self):
        return self._vars["bias"]

    @property
    def variables(self):
        return [self._vars[k] for k in sorted(self._vars)]

    def __call__(self, x):
        if not self._vars:
            self.build(x.shape[-1])
        return x @ self.kernel.numpy() + self.bias.numpy()


class MLP(_Listened):
    """Two Dense layers; variables exist only after the first call."""

    def __init__(self, hidden=4, out=2, reverse_build=False):
        self.dense1 = Dense(hidden, seed=1, reverse_build=reverse_build)
        self.dense2 = Dense(out, seed=2, reverse_build=reverse_build)

    def __checkpoint_children__(self):
        return {"dense1": self.dense1, "dense2": self.dense2}

    @property
    def variables(self):
        return self.dense1.variables + self.dense2.variables

    def __call__(self, x):
        h = np.tanh(self.dense1(x))
        return self.dense2(h), h

    def grads(self, x, y):
        """Gradients of the mean squared error, in the order of ``variables``."""
        out, h = self(x)
        d_out = 2.0 * (out - y) / out.size
        g_b2 = d_out.sum(0)
        g_k2 = h.T @ d_out
        d_h = (d_out @ self.dense2.kernel.numpy().T) * (1 - h**2)
        g_b1 = d_h.sum(0)
        g_k1 = x.T @ d_h
        return [g_b1, g_k1, g_b2, g_k2]


class Adam(_Listened):
    """Adam with slots m and v created at the first apply_gradients."""

    def __init__(self, lr=0.01, b1=0.9, b2=0.999, eps=1e-7):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.iterations = Variable(0, np.int64)
        self._slots = {}  # id(var) -> (var, {"m": Variable, "v": Variable})

    def __checkpoint_children__(self):
        return {"iterations": self.iterations}

    def __checkpoint_slots__(self):
        for var, slots in self._slots.values():
            for name in sorted(slots):
                yield var, name, slots[name]

    def _slots_for(self, var):
        if id(var) not in self._slots:
            slots = {}
            self._slots[id(var)] = (var, slots)
            for name in ("m", "v"):
                slots[name] = Variable(np.zeros(var.shape), var.dtype)
                for listener in self.__dict__.get("_listeners", []):
                    listener.slot_created(self, var, name, slots[name])
        return self._slots[id(var)][1]

    def apply_gradients(self, pairs):
        t = int(self.iterations.numpy()) + 1
        self.iterations.assign(np.int64(t))
        for grad, var in pairs:
            s = self._slots_for(var)
            m = self.b1 * s["m"].numpy() + (1 - self.b1) * grad
            v = self.b2 * s["v"].numpy() + (1 - self.b2) * grad**2
            s["m"].assign(m)
            s["v"].assign(v)
            m_hat = m / (1 - self.b1**t)
            v_hat = v / (1 - self.b2**t)
            var.assign(var.numpy() - self.lr * m_hat / (np.sqrt(v_hat) + self.eps))


class DataPosition:
    """Opaque state: where a data iterator is."""

    def __init__(self):
        self.epoch, self.index = 0, 0

    def __checkpoint_state__(self):
        return {"epoch": self.epoch, "index": self.index}

    def __checkpoint_restore_state__(self, state):
        self.epoch, self.index = state["epoch"], state["index"]


def batch(step, n=8, d=3, out=2):
    rng = np.random.default_rng(100 + step)
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x, rng.standard_normal((n, out)).astype(np.float32)


def train_step(model, opt, step):
    x, y = batch(step)
    grads = model.grads(x, y)
    opt.apply_gradients(zip(grads, model.variables))

"""Keras 3's Adamax, Adadelta, Nadam, Ftrl, Lion, Lamb and Adafactor, each stepping as Keras
3.15.1's ``update_step`` does.

Checked four ways on the same inputs (a matrix, a vector and a rank-3 tensor starting at
zero; five gradients whose signs change, with an element that is always zero, a zero row
and a whole zero gradient):

* a numpy reference of each update, written from the algorithms' formulas (not Keras's
  code), computed in the variables' dtype: float32 within ``rtol=1e-6``, float64 within
  ``1e-12``;
* Keras 3.15.1's own numbers (``data/keras_optimizer_steps.json``, written by
  ``keras_optimizer_reference.py`` with Keras's interpreter), through its ``update_step``
  and, for the optimizers its torch backend replaces by a ``torch._foreach`` version, that
  version too;
* ``torch.optim`` where it has the same algorithm: ``Adamax``, ``Adadelta``, ``NAdam`` (with
  ``momentum_decay=1.0``) and ``Adafactor``; PyTorch has no Ftrl, Lion or Lamb;
* a traced step (``graph.function``) equals the eager one, ``get_config`` and
  ``from_config`` round-trip (and name Keras's arguments with Keras's defaults), the slots
  (Nadam's ``u_product`` among them) are in a checkpoint and training resumes from it, and
  ``compile(optimizer="nadam")``-style names work.

Every test runs on each test backend (``cpu`` and the strict GPU double).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
import pytest

import ember.core as em
from ember import checkpoint, graph, nn

O = nn.optimizers
REF = json.loads((pathlib.Path(__file__).parent / "data" / "keras_optimizer_steps.json")
                 .read_text())
NAMES = list(REF["variables"])  # matrix, vector, tensor
CLASSES = sorted(REF["configs"])
# (rtol, and the atol as a fraction of the variable's largest element)
TOL = {"float32": (1e-6, 1e-6), "float64": (1e-12, 1e-12)}


def _kwargs(case: dict, dtype: str) -> dict:
    kwargs = dict(case["kwargs"] if dtype == "float32" else case["kwargs64"])
    # Keras's Adafactor steps the same with relative_step=False (its min(lr, 1/sqrt(t)) is
    # taken for rho either way), which ember refuses by name: Keras's numbers for it are
    # checked against ember's default step
    if kwargs.get("relative_step") is False:
        del kwargs["relative_step"]
    return kwargs


def _initial(dtype: str) -> dict[str, np.ndarray]:
    return {n: np.array(REF["variables"][n], dtype) for n in NAMES}


def _grads(dtype: str) -> list[dict[str, np.ndarray]]:
    return [{n: np.array(g[n], dtype) for n in NAMES} for g in REF["grads"]]


def _ember(cls_name: str, kwargs: dict, dtype: str, traced: bool = False,
           steps: int | None = None) -> tuple[list[dict[str, np.ndarray]], Any, list[Any]]:
    """The variables after each step of ``cls_name(**kwargs)`` on the file's inputs."""
    opt = getattr(O, cls_name)(**kwargs)
    variables = [em.Variable(w, name=n) for n, w in _initial(dtype).items()]

    def step(*grads: Any) -> None:
        opt.apply_gradients(zip(grads, variables))

    run = graph.function(step) if traced else step
    out = []
    for g in _grads(dtype)[:steps]:
        run(*[em.constant(g[n]) for n in NAMES])
        out.append({v.name.split(":")[0]: v.numpy() for v in variables})
    return out, opt, variables


def _same(got: list[dict], want: list[dict], dtype: str, what: str, rtol: float | None = None,
          scale: float | None = None) -> int:
    """Each variable at each step within ``rtol``, or within ``scale`` times the variable's
    largest element (where a step nearly cancels a weight, the rounding of the step's
    size is what is left). Returns the number of steps compared (the same number of steps
    on both sides, and every variable at each, or it fails)."""
    rtol = TOL[dtype][0] if rtol is None else rtol
    scale = TOL[dtype][1] if scale is None else scale
    assert len(got) == len(want) > 0, (what, len(got), len(want))
    for k, (g, w) in enumerate(zip(got, want)):
        assert set(g) >= set(NAMES) and set(w) >= set(NAMES), (what, sorted(g), sorted(w))
        for n in NAMES:
            w_n = np.asarray(w[n], dtype).reshape(g[n].shape)
            np.testing.assert_allclose(g[n], w_n, rtol=rtol,
                                       atol=scale * float(np.max(np.abs(w_n), initial=0)),
                                       err_msg=f"{what}, step {k + 1}: {n}")
    return len(got)


# --- a numpy reference, from the algorithms' formulas ---------------------------------
class _Reference:
    """One optimizer's update in numpy, in the variables' dtype ``dt``. Hyperparameters are
    float32 values (ember holds them as float32 variables), cast to ``dt``."""

    DEFAULTS: dict[str, Any] = {}
    EXACT: tuple[str, ...] = ()  # arguments kept as given (not hyperparameter variables)

    def __init__(self, dt: type, **kwargs: Any) -> None:
        self.dt = dt
        for k, v in {**self.DEFAULTS, **kwargs}.items():
            if isinstance(v, bool):
                setattr(self, k, v)
            else:
                setattr(self, k, dt(v) if k in self.EXACT else dt(np.float32(v)))
        self.state: dict[str, dict[str, np.ndarray]] = {}

    def slots(self, name: str, w: np.ndarray, *names: str) -> list[np.ndarray]:
        own = self.state.setdefault(name, {})
        return [own.setdefault(s, np.zeros_like(w)) for s in names]

    def begin(self, t: Any) -> None:
        """Before the first variable of update ``t``."""

    def update(self, name: str, w: np.ndarray, g: np.ndarray, t: Any) -> np.ndarray:
        raise NotImplementedError


class _Adamax(_Reference):
    DEFAULTS = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}

    def update(self, name, w, g, t):
        m, u = self.slots(name, w, "m", "u")
        m[...] = self.beta_1 * m + (1 - self.beta_1) * g
        u[...] = np.maximum(self.beta_2 * u, np.abs(g))  # the infinity norm
        return w - self.learning_rate / (1 - self.beta_1 ** t) * m / (u + self.epsilon)


class _Adadelta(_Reference):
    DEFAULTS = {"learning_rate": 0.001, "rho": 0.95, "epsilon": 1e-7}

    def update(self, name, w, g, t):
        eg, edx = self.slots(name, w, "eg", "edx")
        eg[...] = self.rho * eg + (1 - self.rho) * g * g
        dx = -np.sqrt(edx + self.epsilon) / np.sqrt(eg + self.epsilon) * g
        edx[...] = self.rho * edx + (1 - self.rho) * dx * dx
        return w + self.learning_rate * dx


class _Nadam(_Reference):
    DEFAULTS = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}

    def _mu(self, t):
        return self.beta_1 * (1 - self.dt(0.5) * self.dt(0.96) ** t)

    def begin(self, t):
        self.product = getattr(self, "product", self.dt(1)) * self._mu(t)

    def update(self, name, w, g, t):
        m, v = self.slots(name, w, "m", "v")
        m[...] = self.beta_1 * m + (1 - self.beta_1) * g
        v[...] = self.beta_2 * v + (1 - self.beta_2) * g * g
        mu, mu_next = self._mu(t), self._mu(t + 1)
        m_bar = mu_next * m / (1 - self.product * mu_next) + (1 - mu) * g / (1 - self.product)
        v_hat = v / (1 - self.beta_2 ** t)
        return w - self.learning_rate * m_bar / (np.sqrt(v_hat) + self.epsilon)


class _Ftrl(_Reference):
    DEFAULTS = {"learning_rate": 0.001, "learning_rate_power": -0.5,
                "initial_accumulator_value": 0.1, "l1_regularization_strength": 0.0,
                "l2_regularization_strength": 0.0, "l2_shrinkage_regularization_strength": 0.0,
                "beta": 0.0}
    EXACT = ("initial_accumulator_value",)

    def update(self, name, w, g, t):
        own = self.state.setdefault(name, {})
        n = own.setdefault("n", np.full_like(w, self.initial_accumulator_value))
        z = own.setdefault("z", np.zeros_like(w))
        p, lr = -self.learning_rate_power, self.learning_rate
        l1, l2 = self.l1_regularization_strength, self.l2_regularization_strength
        n_new = n + g * g
        sigma = (n_new ** p - n ** p) / lr
        z[...] = z + g + 2 * self.l2_shrinkage_regularization_strength * w - sigma * w
        n[...] = n_new
        # McMahan et al.'s closed form: 0 where |z| <= l1
        solved = (np.sign(z) * l1 - z) / ((self.beta + n_new ** p) / lr + 2 * l2)
        return np.where(np.abs(z) <= l1, self.dt(0), solved).astype(self.dt)


class _Lion(_Reference):
    DEFAULTS = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.99}

    def update(self, name, w, g, t):
        (m,) = self.slots(name, w, "m")
        c = self.beta_1 * m + (1 - self.beta_1) * g
        m[...] = self.beta_2 * m + (1 - self.beta_2) * g
        return w - self.learning_rate * np.sign(c)


class _Lamb(_Reference):
    DEFAULTS = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}

    def update(self, name, w, g, t):
        m, v = self.slots(name, w, "m", "v")
        m[...] = self.beta_1 * m + (1 - self.beta_1) * g
        v[...] = self.beta_2 * v + (1 - self.beta_2) * g * g
        r = (m / (1 - self.beta_1 ** t)) / (np.sqrt(v / (1 - self.beta_2 ** t)) + self.epsilon)
        w_norm, r_norm = np.linalg.norm(w), np.linalg.norm(r)
        trust = w_norm / r_norm if w_norm > 0 and r_norm > 0 else self.dt(1)
        return w - self.learning_rate * trust * r


class _Adafactor(_Reference):
    DEFAULTS = {"learning_rate": 0.001, "beta_2_decay": -0.8, "epsilon_1": 1e-30,
                "epsilon_2": 1e-3, "clip_threshold": 1.0, "relative_step": True}

    def update(self, name, w, g, t):
        rms = lambda x: np.sqrt(np.mean(x * x))  # noqa: E731
        rho = min(self.learning_rate, 1 / np.sqrt(t))
        alpha = max(self.epsilon_2, rms(w)) * rho
        decay = 1 - t ** self.beta_2_decay
        g2 = g * g + self.epsilon_1
        own = self.state.setdefault(name, {})
        if w.ndim >= 2:  # Shazeer and Stern's factored second moment, over the last two axes
            r = own.setdefault("r", np.zeros(w.shape[:-1], self.dt))
            c = own.setdefault("c", np.zeros(w.shape[:-2] + w.shape[-1:], self.dt))
            r[...] = decay * r + (1 - decay) * g2.mean(axis=-1)
            c[...] = decay * c + (1 - decay) * g2.mean(axis=-2)
            v = np.einsum("...i,...j->...ij", r / r.mean(axis=-1, keepdims=True), c)
        else:
            v = own.setdefault("v", np.zeros_like(w))
            v[...] = decay * v + (1 - decay) * g2
        u = g / np.sqrt(v)
        u = u / max(self.dt(1), rms(u) / self.clip_threshold)
        return w - alpha * u


REFERENCES = {"Adamax": _Adamax, "Adadelta": _Adadelta, "Nadam": _Nadam, "Ftrl": _Ftrl,
              "Lion": _Lion, "Lamb": _Lamb, "Adafactor": _Adafactor}


def _numpy(cls_name: str, kwargs: dict, dtype: str) -> list[dict[str, np.ndarray]]:
    """The reference's steps, with Keras's decoupled weight decay (``w *= 1 - lr * wd``
    before each update) and gradient accumulation (the mean of every ``k`` calls' gradients
    updates at the ``k``-th call) around it."""
    dt = np.dtype(dtype).type
    kw = dict(kwargs)
    wd = kw.pop("weight_decay", None)
    k = kw.pop("gradient_accumulation_steps", None) or 1
    ref = REFERENCES[cls_name](dt, **kw)
    ws, acc, t, out = _initial(dtype), None, 0, []
    for call, g in enumerate(_grads(dtype), 1):
        acc = g if acc is None else {n: acc[n] + g[n] for n in NAMES}
        if call % k == 0:
            grads = {n: acc[n] / dt(k) for n in NAMES} if k > 1 else acc
            acc, t = None, t + 1
            ref.begin(dt(t))
            for n in NAMES:
                w = ws[n]
                if wd:
                    w = w * (1 - ref.learning_rate * dt(np.float32(wd)))
                ws[n] = ref.update(n, w, grads[n], dt(t)).astype(dt)
        out.append({n: w.copy() for n, w in ws.items()})
    return out


CASE_DTYPES = [(name, dtype) for name, case in sorted(REF["cases"].items())
               for dtype in ("float32", "float64") if dtype in case]


@pytest.mark.parametrize("name,dtype", CASE_DTYPES)
def test_steps_match_the_numpy_reference(name, dtype):
    case = REF["cases"][name]
    got, _, _ = _ember(case["class"], _kwargs(case, dtype), dtype)
    want = _numpy(case["class"], _kwargs(case, dtype), dtype)
    # Ftrl's n'^p - n^p cancels (0.3199 - 0.3162 at the first step): float32's rounding of
    # the two powers, which the CPU and the GPU double compute an ulp apart, grows a
    # hundredfold
    rtol = 2e-5 if dtype == "float32" and case["class"] == "Ftrl" else None
    assert _same(got, want, dtype, name, rtol=rtol, scale=rtol) == len(_grads(dtype))
    moved = [not np.array_equal(got[-1][n], w) for n, w in _initial(dtype).items()]
    assert any(moved), f"{name}: no variable moved"  # (a reference equal to no update)


KERAS_RUNS = [(name, dtype, path) for name, dtype in CASE_DTYPES
              for path in sorted(REF["cases"][name][dtype])]
# Keras 3.15.1's ops on its torch backend give float32 for some float64 operands:
# ops.maximum and ops.minimum of two float64 tensors (keras/src/backend/torch/numpy.py,
# ``dtypes.result_type("float64", "float64")`` is float32 there), used by Adamax's norm and
# Adafactor's rho and alpha; and ops.power(0.96, t) takes 0.96 as a float32 in Nadam's
# ``_backend_update_step`` (its u_product; update_step casts 0.96 to the variable's
# dtype). Its torch._foreach versions of Adamax and Nadam, and ember, stay in float64.
KERAS_FLOAT64_ROUNDED = {"Adamax", "Adafactor", "Nadam"}


@pytest.mark.parametrize("name,dtype,path", KERAS_RUNS)
def test_steps_match_keras(name, dtype, path):
    """Keras's ``update_step`` (and its torch backend's ``_foreach`` version) within
    float32's rounding: Keras's hyperparameters are Python floats where ember's are float32
    variables, so ``1 - beta_2`` is float32(0.001) in Keras and 1 - float32(0.999), 1.3e-5
    away, in ember, as in ember's Adam. In float64 (given float32-exact arguments) to
    1e-12, but where Keras rounds to float32 (above)."""
    case = REF["cases"][name]
    got, opt, _ = _ember(case["class"], _kwargs(case, dtype), dtype)
    rtol = 2e-5 if dtype == "float32" else 2e-7 if (
        path == "update_step" and case["class"] in KERAS_FLOAT64_ROUNDED) else None
    _same(got, case[dtype][path], dtype, f"{name} ({path})", rtol=rtol, scale=rtol)
    assert int(opt.iterations.numpy()) == case["iterations"]


# --- torch.optim -------------------------------------------------------------------------
def _torch(make: Any) -> list[dict[str, np.ndarray]]:
    import torch

    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # (NAdam's mu_product is of the default dtype)
    try:
        params = {n: torch.tensor(w, requires_grad=True)
                  for n, w in _initial("float64").items()}
        opt = make(list(params.values()))
        out = []
        for g in _grads("float64"):
            for n, p in params.items():
                p.grad = torch.tensor(g[n])
            opt.step()
            out.append({n: p.detach().numpy().copy() for n, p in params.items()})
    finally:
        torch.set_default_dtype(default)
    return out


# (optimizer, ember arguments, torch.optim's): float64, where the two differ only in
# rounding. Adamax: PyTorch adds epsilon to |g| inside the maximum, Keras to the maximum
# (a difference of epsilon / |g|: a small epsilon makes it vanish). NAdam: PyTorch's
# momentum_decay=0.004 scales the step in 0.96 ** (t * momentum_decay); Keras's schedule is
# momentum_decay=1. Adafactor: PyTorch clamps the second-moment estimate at epsilon_1 ** 2
# where Keras adds epsilon_1 to g^2 (2 ** -100: nothing next to these gradients), has no
# relative_step, and refuses a clipping threshold d below 1. Ftrl, Lion and Lamb:
# torch.optim has none.
TORCH = {  # (float32-exact arguments: ember's are float32 variables)
    "adamax": ("Adamax", {"learning_rate": 0.0625, "beta_1": 0.75, "beta_2": 0.9375,
                          "epsilon": 2.0 ** -40},
               lambda p, torch: torch.optim.Adamax(p, lr=0.0625, betas=(0.75, 0.9375),
                                                   eps=2.0 ** -40, foreach=False)),
    "adadelta": ("Adadelta", {"learning_rate": 0.5, "rho": 0.75, "epsilon": 2.0 ** -14},
                 lambda p, torch: torch.optim.Adadelta(p, lr=0.5, rho=0.75, eps=2.0 ** -14,
                                                       foreach=False)),
    "nadam": ("Nadam", {"learning_rate": 0.0625, "beta_1": 0.75, "beta_2": 0.875,
                        "epsilon": 2.0 ** -14},
              lambda p, torch: torch.optim.NAdam(p, lr=0.0625, betas=(0.75, 0.875),
                                                 eps=2.0 ** -14, momentum_decay=1.0,
                                                 foreach=False)),
    "adafactor": ("Adafactor", {"learning_rate": 0.5, "beta_2_decay": -0.5,
                                "epsilon_1": 2.0 ** -100, "epsilon_2": 2.0 ** -7},
                  lambda p, torch: torch.optim.Adafactor(p, lr=0.5, beta2_decay=-0.5,
                                                         eps=(2.0 ** -100, 2.0 ** -7), d=1.0,
                                                         foreach=False)),
}


@pytest.mark.parametrize("name", sorted(TORCH))
def test_steps_match_torch_optim(name):
    torch = pytest.importorskip("torch")
    cls_name, kwargs, make = TORCH[name]
    want = _torch(lambda p: make(p, torch))
    got, _, _ = _ember(cls_name, kwargs, "float64")
    assert _same(got, want, "float64", f"torch.optim.{name}", rtol=1e-10,
                 scale=1e-10) == len(_grads("float64"))
    assert any(not np.array_equal(got[-1][n], w) for n, w in _initial("float64").items())


# --- traced steps, configs, checkpoints, names ---------------------------------------------
ARGS = {"Adamax": {"learning_rate": 0.05, "beta_1": 0.8},
        "Adadelta": {"learning_rate": 0.5, "rho": 0.8},
        "Nadam": {"learning_rate": 0.05, "beta_2": 0.9},
        "Ftrl": {"learning_rate": 0.2, "l1_regularization_strength": 0.01,
                 "l2_regularization_strength": 0.1, "l2_shrinkage_regularization_strength": 0.05,
                 "beta": 0.3, "initial_accumulator_value": 0.5},
        "Lion": {"learning_rate": 0.02, "beta_2": 0.9},
        "Lamb": {"learning_rate": 0.05, "epsilon": 1e-4},
        "Adafactor": {"learning_rate": 0.5, "clip_threshold": 0.5}}
SLOTS = {"Adamax": {"m", "v"}, "Adadelta": {"accum_grad", "accum_var"}, "Nadam": {"m", "v"},
         "Ftrl": {"accumulator", "linear"}, "Lion": {"m"}, "Lamb": {"m", "v"},
         "Adafactor": {"v"}}  # and r and c for rank >= 2


def test_the_lists_cover_every_new_optimizer():
    assert set(CLASSES) == set(REFERENCES) == set(ARGS) == set(SLOTS)
    assert {REF["cases"][n]["class"] for n in REF["cases"]} == set(CLASSES)


@pytest.mark.parametrize("cls_name", CLASSES)
def test_a_traced_step_equals_the_eager_one(cls_name):
    eager, _, _ = _ember(cls_name, ARGS[cls_name], "float32")
    traced, opt, _ = _ember(cls_name, ARGS[cls_name], "float32", traced=True)
    _same(traced, eager, "float32", f"{cls_name} traced", rtol=1e-6, scale=0)
    assert int(opt.iterations.numpy()) == len(REF["grads"])


@pytest.mark.parametrize("cls_name", CLASSES)
def test_a_traced_step_reads_a_changed_hyperparameter(cls_name):
    """The learning rate is a variable the trace reads: a change after tracing takes effect
    in the replays, as eagerly."""
    def run(traced: bool, change: bool = True) -> list[dict]:
        opt = getattr(O, cls_name)(**ARGS[cls_name])
        vs = [em.Variable(w, name=n) for n, w in _initial("float32").items()]
        step = graph.function(lambda *g: opt.apply_gradients(zip(g, vs))) if traced else \
            (lambda *g: opt.apply_gradients(zip(g, vs)))
        out = []
        for k, g in enumerate(_grads("float32")):
            if k == 3 and change:
                opt.learning_rate = 0.01
            step(*[em.constant(g[n]) for n in NAMES])
            out.append({v.name.split(":")[0]: v.numpy() for v in vs})
        return out

    traced = run(True)
    assert _same(traced, run(False), "float32", f"{cls_name} traced", rtol=1e-6,
                 scale=0) == len(_grads("float32"))
    unchanged = run(True, change=False)  # the change did change the replays' steps
    assert any(not np.allclose(traced[-1][n], unchanged[-1][n]) for n in NAMES), cls_name


@pytest.mark.parametrize("cls_name", CLASSES)
def test_get_config_names_keras_arguments_and_round_trips(cls_name):
    keras_config = {k: v for k, v in REF["configs"][cls_name].items() if k != "name"}
    config = getattr(O, cls_name)().get_config()
    assert config.pop("name") == cls_name
    assert config == keras_config  # the same arguments, with Keras's defaults

    opt = getattr(O, cls_name)(**ARGS[cls_name], name="mine")
    config = opt.get_config()
    for k, v in ARGS[cls_name].items():
        assert config[k] == pytest.approx(v, rel=1e-7), k
    again = getattr(O, cls_name).from_config(config)
    assert again.get_config() == config and type(again) is type(opt)
    got, _, _ = _ember(cls_name, config, "float32", steps=2)
    want, _, _ = _ember(cls_name, ARGS[cls_name], "float32", steps=2)
    _same(got, want, "float32", f"{cls_name} from_config", rtol=0, scale=0)


@pytest.mark.parametrize("cls_name", CLASSES)
def test_slots_are_in_a_checkpoint_and_training_resumes(cls_name, tmp_path):
    steps, opt, variables = _ember(cls_name, ARGS[cls_name], "float32", steps=3)
    path = checkpoint.Checkpoint(optimizer=opt, **{v.name.split(":")[0]: v for v in variables}
                                 ).save(str(tmp_path / "ckpt"))
    saved = dict(checkpoint.list_variables(path))
    for v in variables:
        n = v.name.split(":")[0]
        names = {k.rsplit("/", 1)[1] for k in saved if k.startswith(f"optimizer/slots/{n}/")}
        want = SLOTS[cls_name] | ({"r", "c"} if cls_name == "Adafactor" and len(v.shape) >= 2
                                  else set()) | (
            {"u_product"} if cls_name == "Nadam" and v is variables[0] else set())
        assert names == want, n
        for s in names:
            slot = opt.get_slot(v, s)
            assert saved[f"optimizer/slots/{n}/{s}"] == list(slot.shape)
            assert slot.device == v.device and not slot.trainable
    if cls_name == "Adafactor":
        assert saved["optimizer/slots/tensor/r"] == [2, 2] and \
            saved["optimizer/slots/tensor/c"] == [2, 2]
        assert saved["optimizer/slots/matrix/r"] == [2] and \
            saved["optimizer/slots/matrix/c"] == [3]
    if cls_name == "Nadam":
        assert saved["optimizer/slots/matrix/u_product"] == []
    assert "optimizer/iterations" in saved

    # a fresh optimizer restored before its first step gets its slots as it makes them
    opt2 = getattr(O, cls_name)(**ARGS[cls_name])
    variables2 = [em.Variable(np.zeros(v.shape, np.float32), name=v.name.split(":")[0])
                  for v in variables]
    checkpoint.Checkpoint(optimizer=opt2, **{v.name.split(":")[0]: v for v in variables2}
                          ).restore(path)
    assert int(opt2.iterations.numpy()) == 3
    g = _grads("float32")[3]
    for o, vs in ((opt, variables), (opt2, variables2)):
        o.apply_gradients([(em.constant(g[v.name.split(":")[0]]), v) for v in vs])
    for a, b in zip(variables, variables2):
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    for v, v2 in zip(variables, variables2):
        for s in opt._slots[v.uid]:
            np.testing.assert_array_equal(opt2.get_slot(v2, s).numpy(),
                                          opt.get_slot(v, s).numpy())


@pytest.mark.parametrize("cls_name", CLASSES)
def test_names_give_the_optimizer_at_its_defaults(cls_name):
    name = cls_name.lower()
    assert type(O.get(name)) is getattr(O, cls_name)
    assert type(O.get(cls_name)) is getattr(O, cls_name)  # any case, as Keras
    model = nn.Sequential([nn.layers.Dense(1)])
    model.compile(optimizer=name, loss="mse")
    assert type(model.optimizer) is getattr(O, cls_name)
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
    before = [w.copy() for w in model.get_weights()] if model.built else None
    model.fit(x, x[:, :1], epochs=1, batch_size=4, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 1
    assert before is None or any(np.any(a != b) for a, b in zip(before, model.get_weights()))


def test_keras_argument_checks():
    for name in ("l1_regularization_strength", "l2_regularization_strength",
                 "l2_shrinkage_regularization_strength"):
        with pytest.raises(ValueError, match=f"`{name}` needs to be positive or zero"):
            O.Ftrl(**{name: -0.1})
    with pytest.raises(ValueError, match="`initial_accumulator_value` needs to be positive"):
        O.Ftrl(initial_accumulator_value=-1.0)
    with pytest.raises(ValueError, match="`learning_rate_power` needs to be negative or zero"):
        O.Ftrl(learning_rate_power=0.5)
    for beta_1 in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match=r"`beta_1` must be in the \[0, 1\] range"):
            O.Lion(beta_1=beta_1)
    O.Lion(beta_1=1.0)  # (0, 1]
    with pytest.raises(ValueError, match="relative_step"):
        O.Adafactor(relative_step=False)  # accepted and ignored by Keras 3.15
    O.Ftrl(learning_rate_power=0.0, initial_accumulator_value=0.0)


def test_nadam_u_product_is_one_scalar_for_the_optimizer():
    """Made with the first variable's slots, in its dtype (Keras's ``build``), advanced once
    a step however many variables are updated, and one of ``variables``."""
    opt = O.Nadam(0.01)
    a, b = em.Variable(np.ones(3)), em.Variable(np.ones(2))  # float64
    for _ in range(3):
        opt.apply_gradients([(em.constant(np.full(3, 0.5)), a),
                             (em.constant(np.full(2, -0.5)), b)])
    u = opt.get_slot(a, "u_product")
    assert u.dtype == np.float64 and u.shape == () and any(x is u for x in opt.variables)
    assert sorted(opt._slots[b.uid]) == ["m", "v"]
    b1 = float(np.float32(0.9))
    want = np.prod([b1 * (1 - 0.5 * 0.96 ** t) for t in range(1, 4)])
    np.testing.assert_allclose(float(u.numpy()), want, rtol=1e-14)


def test_nadam_u_product_stays_when_a_loss_scale_skips_a_step():
    """A step ``LossScaleOptimizer`` skips (a non-finite gradient) leaves u_product as it
    was, as Keras's, which does not run the inner step then."""
    def run(skip: bool) -> tuple[np.ndarray, float]:
        opt = O.LossScaleOptimizer(O.Nadam(0.05), initial_scale=4.0)
        w = em.Variable(np.array([1.0, -2.0, 0.5], np.float32))
        grads = [[0.3, -1.2, 2.0], [np.inf, 0.0, 1.0], [-0.7, 0.4, 1.1], [0.2, 0.9, -1.5]]
        for g in grads if skip else grads[:1] + grads[2:]:
            scale = float(opt.dynamic_scale.numpy())  # (halved by the skipped step)
            with np.errstate(invalid="ignore"):  # (the skipped step's inf - inf)
                opt.apply_gradients([(em.constant(np.array(g, np.float32) * scale), w)])
        return w.numpy(), float(opt.inner_optimizer.get_slot(w, "u_product").numpy())

    (w_skip, u_skip), (w_plain, u_plain) = run(True), run(False)
    assert u_skip == u_plain
    np.testing.assert_array_equal(w_skip, w_plain)

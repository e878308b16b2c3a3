"""An optimizer's hyperparameters live on the device of the variables it updates.

Keras code builds the optimizer before ``with em.device("/gpu:0")``; its own variables
(``iterations``, the learning rate) were then made on the host, and the first update on the
GPU raised a ``DeviceError``. They move to the variables' device at the first update, and
stay variables: a host number would be baked into a traced step (and a captured CUDA
graph), and a later learning-rate change silently ignored. Checked on the strict device
double, which refuses host/device mixing and counts uploads as cupy would see them.
"""

import numpy as np
import pytest

import ember.core as em
from ember import graph, nn, tape
from ember.core.testing import simulated_gpus

ONLY_BACKENDS = ("cpu",)  # each test makes its own simulated GPUs, outside of which it starts

O = nn.optimizers
OPTIMIZERS = {
    "sgd-momentum": lambda: O.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: O.Adam(0.1, amsgrad=True),
    "adamw": lambda: O.AdamW(0.1, weight_decay=0.1),
    "rmsprop": lambda: O.RMSProp(0.05, momentum=0.5, centered=True, clipnorm=1.0),
    "adagrad": lambda: O.Adagrad(0.1, clipvalue=0.5),
    "adam-global-clip": lambda: O.Adam(0.1, global_clipnorm=0.5),
    "adamax": lambda: O.Adamax(0.1),
    "adadelta": lambda: O.Adadelta(1.0, clipnorm=1.0),
    "nadam": lambda: O.Nadam(0.1),
    "ftrl": lambda: O.Ftrl(0.1, l1_regularization_strength=0.01, beta=0.1),
    "lion": lambda: O.Lion(0.05),
    "lamb": lambda: O.Lamb(0.1),
    "adafactor": lambda: O.Adafactor(0.1),
}
X = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.2]], np.float32)
Y = np.array([1.0, -2.0], np.float32)


def _model():
    return (em.Variable(np.array([0.3, -0.2, 0.1], np.float32), name="w"),
            em.Variable(np.float32(0.05), name="b"))


def _step(opt, w, b, x, y):
    with tape.GradientTape() as t:
        loss = em.reduce_mean(em.square(em.add(em.reduce_sum(em.multiply(x, w), axis=1), b)
                                        - y))
    grads = t.gradient(loss, [w, b])
    opt.apply_gradients(zip(grads, [w, b]))
    return loss


def _run(make, steps, on_gpu, traced=False, between=None):
    """``steps`` updates of a fresh model by ``make()``'s optimizer, made on the host; the
    model on /gpu:0 of a strict double when ``on_gpu``. ``between(opt, i)`` runs before
    step ``i``. Returns the weights, the optimizer and per-step upload counts."""
    opt = make()  # on the host, before any device scope
    assert opt.iterations.device == "/cpu:0"
    with simulated_gpus(1, strict=True) as (gpu,), em.device("/gpu:0" if on_gpu else "/cpu:0"):
        w, b = _model()
        x, y = em.constant(X), em.constant(Y)
        step = graph.function(_step) if traced else _step
        uploads = []
        for i in range(steps):
            if between is not None:
                between(opt, i)
            before = gpu.backend.counters.from_host
            step(opt, w, b, x, y)
            uploads.append(gpu.backend.counters.from_host - before)
        return np.concatenate([w.numpy(), [b.numpy()]]), opt, uploads, step


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_an_optimizer_made_on_the_host_updates_variables_on_the_gpu(name):
    expected, _, _, _ = _run(OPTIMIZERS[name], 4, on_gpu=False)
    got, opt, uploads, _ = _run(OPTIMIZERS[name], 4, on_gpu=True)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    assert opt.iterations.device == "/gpu:0" and int(opt.iterations) == 4
    assert opt.learning_rate.device == "/gpu:0"
    assert all(slot.device == "/gpu:0" for _, _, slot in opt.__checkpoint_slots__())
    assert uploads[1:] == [0, 0, 0], f"uploads per step {uploads}"


@pytest.mark.parametrize("name", ["sgd-momentum", "adam", "rmsprop", "nadam", "lamb",
                                  "adafactor"])
def test_traced_steps_on_the_gpu_equal_eager_ones_and_upload_nothing(name):
    expected, _, _, _ = _run(OPTIMIZERS[name], 6, on_gpu=True)
    got, opt, uploads, step = _run(OPTIMIZERS[name], 6, on_gpu=True, traced=True)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    assert step.experimental_get_tracing_count() <= 3
    assert uploads[3:] == [0, 0, 0], f"uploads per step {uploads}"


def _change_learning_rate(opt, i):
    if i == 3:
        opt.learning_rate = 0.5  # Keras's attribute form
    elif i == 5:
        opt.learning_rate.assign(0.001)  # the variable's own form


@pytest.mark.parametrize("name", ["sgd-momentum", "adam", "adagrad", "ftrl", "lion"])
def test_a_later_learning_rate_change_takes_effect_in_a_traced_step(name):
    unchanged, _, _, _ = _run(OPTIMIZERS[name], 8, on_gpu=True, traced=True)
    eager, _, _, _ = _run(OPTIMIZERS[name], 8, on_gpu=True, between=_change_learning_rate)
    traced, opt, _, step = _run(OPTIMIZERS[name], 8, on_gpu=True, traced=True,
                                between=_change_learning_rate)
    assert not np.allclose(eager, unchanged), "the learning-rate change had no effect"
    np.testing.assert_allclose(traced, eager, rtol=1e-5, atol=1e-7)
    assert step.experimental_get_tracing_count() <= 3, "the change retraced instead"
    assert step.cache_size() == 1, "no trace kept: the steps ran eagerly"
    assert opt.learning_rate.device == "/gpu:0"
    np.testing.assert_allclose(float(opt.learning_rate), 0.001)


def test_the_first_update_inside_a_trace_moves_the_state_and_the_next_call_traces_it():
    """SGD without momentum makes no slots: its first traced call is the move alone."""
    expected, _, _, _ = _run(lambda: O.SGD(0.1), 5, on_gpu=True)
    got, opt, uploads, step = _run(lambda: O.SGD(0.1), 5, on_gpu=True, traced=True)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert opt.learning_rate.device == "/gpu:0" and int(opt.iterations) == 5
    assert step.experimental_get_tracing_count() == 2 and uploads[2:] == [0, 0, 0]


def test_a_users_host_variable_is_copied_only_when_it_changes():
    """A hyperparameter variable of the user's own stays where the user made it (the user
    reads it there); the update copies its value, again only after an assign."""
    def run(on_gpu):
        beta = em.Variable(np.float32(0.5), name="beta_1")  # on the host

        def between(opt, i):
            if i == 3:
                beta.assign(np.float32(0.8))

        got, opt, uploads, _ = _run(lambda: O.Adam(0.1, beta_1=beta), 6, on_gpu, between=between)
        assert beta.device == "/cpu:0", "the user's variable was moved"
        assert opt.__checkpoint_children__()["beta_1"] is beta
        return got, uploads

    expected, _ = run(on_gpu=False)
    got, uploads = run(on_gpu=True)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert uploads[1:] == [0, 0, 1, 0, 0], uploads  # once after the assign


def test_variables_on_two_gpus_each_get_their_own_copy():
    clip = em.Variable(np.float32(0.4))  # a tensor hyperparameter on the host

    def make():
        return O.Adam(0.1, clipvalue=clip)

    def run(devices):
        opt = make()
        with simulated_gpus(2, strict=True):
            with em.device(devices[0]):
                w = em.Variable(np.array([1.0, -2.0], np.float32))
            with em.device(devices[1]):
                b = em.Variable(np.float32(3.0))
            for g in ([0.3, -0.9], [1.2, 0.1]):
                with em.device(devices[0]):
                    gw = em.constant(np.array(g, np.float32))
                with em.device(devices[1]):
                    gb = em.constant(np.float32(g[0] - g[1]))
                opt.apply_gradients([(gw, w), (gb, b)])
            assert opt.iterations.device == devices[0]
            return np.concatenate([w.numpy(), [b.numpy()]])

    np.testing.assert_allclose(run(["/gpu:0", "/gpu:1"]), run(["/cpu:0", "/cpu:0"]),
                               rtol=1e-6)

import warnings

import numpy as np
import pytest

import ember.core as em
from ember import nn

O = nn.optimizers


def test_sgd_applies_and_counts_steps():
    v = em.Variable([1.0, 2.0])
    opt = O.SGD(0.5)
    gs = em.Variable(np.int64(0))
    opt.apply_gradients([(em.constant([1.0, 1.0]), v)], global_step=gs)
    np.testing.assert_allclose(v.numpy(), [0.5, 1.5])
    assert int(opt.iterations) == 1 and int(gs) == 1


def test_none_gradients_are_skipped_with_one_warning_per_variable():
    a, b = em.Variable(1.0, name="a"), em.Variable(1.0, name="b")
    opt = O.SGD(0.1)
    with pytest.warns(UserWarning, match="'b:0'"):
        opt.apply_gradients([(em.constant(1.0), a), (None, b)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.apply_gradients([(em.constant(1.0), a), (None, b)])
    assert float(b) == 1.0
    with pytest.raises(ValueError, match="no gradients"):
        opt.apply_gradients([(None, b)])


def test_minimize_without_var_list_uses_the_trainable_variables_read():
    w = em.Variable(3.0)
    frozen = em.Variable(2.0, trainable=False)
    unused = em.Variable(7.0)
    opt = O.SGD(0.1)
    loss = opt.minimize(lambda: em.square(w * frozen))
    assert float(loss) == 36.0
    np.testing.assert_allclose(float(w), 3.0 - 0.1 * 2 * 3 * 4, rtol=1e-6)
    assert float(frozen) == 2.0 and float(unused) == 7.0
    opt.minimize(lambda: em.square(unused), var_list=[unused])
    np.testing.assert_allclose(float(unused), 7.0 - 0.1 * 14, rtol=1e-6)


@pytest.mark.parametrize("opt,names", [
    (lambda: O.SGD(0.1, momentum=0.9), ["momentum"]), (lambda: O.Adam(), ["m", "v"]),
    (lambda: O.AdamW(), ["m", "v"]), (lambda: O.RMSProp(momentum=0.5, centered=True),
                                      ["rms", "momentum", "mg"]),
    (lambda: O.Adagrad(), ["accumulator"]), (lambda: O.Adamax(), ["m", "v"]),
    (lambda: O.Adadelta(), ["accum_grad", "accum_var"]),
    (lambda: O.Ftrl(), ["accumulator", "linear"]), (lambda: O.Lion(), ["m"]),
    (lambda: O.Lamb(), ["m", "v"])])
# (Adafactor's r and c, and Nadam's u_product, are shaped otherwise:
# test_optimizers_keras_more.py)
def test_slots_are_tracked_variables_on_the_parameter_device(opt, names):
    o = opt()
    v = em.Variable(np.ones((2, 3), np.float32))
    o.apply_gradients([(em.ones((2, 3)), v)])
    slots = o.__checkpoint_slots__()
    assert [n for _, n, _ in slots] == names
    for primary, _, slot in slots:
        assert primary is v
        assert slot.shape == v.shape and slot.device == v.device and not slot.trainable
    kids = o.__checkpoint_children__()
    assert kids["iterations"] is o.iterations and "learning_rate" in kids


def test_slot_created_is_reported_to_listeners():
    events = []

    class Listener:
        def child_created(self, owner, name, child):
            events.append(("child", name))

        def slot_created(self, owner, primary, name, slot):
            events.append(("slot", name))

    o = O.Adam()
    o.__checkpoint_listen__(Listener())
    layer = nn.layers.Dense(2)
    layer.__checkpoint_listen__(Listener())
    layer(em.ones((1, 2)))
    o.apply_gradients([(em.ones((2, 2)), layer.kernel)])
    assert events == [("child", "kernel"), ("child", "bias"), ("slot", "m"), ("slot", "v")]


def test_schedules_and_callable_learning_rate():
    s = O.ExponentialDecay(1.0, 2, 0.5, staircase=True)
    assert [s(i) for i in range(5)] == [1.0, 1.0, 0.5, 0.5, 0.25]
    p = O.PiecewiseConstantDecay([1, 3], [1.0, 0.1, 0.01])
    v = em.Variable(0.0)
    opt = O.SGD(p)
    for _ in range(5):
        opt.apply_gradients([(em.constant(-1.0), v)])
    np.testing.assert_allclose(float(v), 1.0 + 1.0 + 0.1 + 0.1 + 0.01, rtol=1e-6)  # steps 0..4
    c = O.CosineDecay(0.0, 10, warmup_target=1.0, warmup_steps=4)
    assert c(2) == 0.5 and c(4) == 1.0 and abs(c(9) - 0.5) < 1e-7 and c(100) == 0.0  # (float32, as Keras)
    lr = [0.5]
    opt = O.SGD(lambda: lr[0])
    w = em.Variable(0.0)
    opt.apply_gradients([(em.constant(1.0), w)])
    lr[0] = 0.25
    opt.apply_gradients([(em.constant(1.0), w)])
    assert float(w) == -0.75
    opt.learning_rate = 0.1
    assert abs(opt.learning_rate - 0.1) < 1e-7


def test_gradient_clipping():
    v = em.Variable([0.0, 0.0])
    O.SGD(1.0, clipnorm=1.0).apply_gradients([(em.constant([3.0, 4.0]), v)])
    np.testing.assert_allclose(v.numpy(), [-0.6, -0.8], rtol=1e-6)
    v.assign([0.0, 0.0])
    O.SGD(1.0, clipvalue=0.5).apply_gradients([(em.constant([3.0, -0.1]), v)])
    np.testing.assert_allclose(v.numpy(), [-0.5, 0.1], rtol=1e-6)
    a, b = em.Variable(0.0), em.Variable(0.0)
    O.SGD(1.0, global_clipnorm=1.0).apply_gradients(
        [(em.constant(3.0), a), (em.constant(4.0), b)])
    np.testing.assert_allclose([float(a), float(b)], [-0.6, -0.8], rtol=1e-6)


def test_global_step_is_one_int64_variable():
    gs = nn.get_or_create_global_step()
    assert gs is nn.get_or_create_global_step()
    assert gs.dtype == np.int64 and not gs.trainable


def test_adam_converges_on_a_quadratic():
    w = em.Variable([5.0, -3.0])
    opt = O.Adam(0.1)
    for _ in range(300):
        opt.minimize(lambda: em.reduce_sum(em.square(w - em.constant([1.0, 2.0]))))
    np.testing.assert_allclose(w.numpy(), [1.0, 2.0], atol=1e-2)


@pytest.mark.parametrize("lr", [0.01, 3, "variable"])
@pytest.mark.parametrize("shape", [(7,), (300, 111)])  # one block; several, the last partial
def test_sgd_update_is_the_bits_of_subtracting_the_rounded_product(lr, shape):
    # SGD without momentum updates a variable nothing else holds in place, block by block
    # (no array for lr * g); the bits must be those of the ops: v - float32(lr * g)
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32) * 1e3
    v = em.Variable(w0)
    opt = nn.optimizers.SGD(em.Variable(0.37) if lr == "variable" else lr)
    for _ in range(2):
        opt.apply_gradients([(em.constant(g), v)])
    s = np.float32(0.37 if lr == "variable" else lr)
    want = (w0 - g * s) - g * s
    np.testing.assert_array_equal(v.numpy(), want)
    # a variable whose tensor is held elsewhere is not written in place: the held value stays
    held = v.value()
    before = held.numpy().copy()
    opt.apply_gradients([(em.constant(g), v)])
    np.testing.assert_array_equal(held.numpy(), before)
    np.testing.assert_array_equal(v.numpy(), want - g * s)


def _keras3_rmsprop(w, grads, lr, rho, momentum, eps, centered):
    """keras/src/optimizers/rmsprop.py's update_step, in numpy."""
    ms, mg, buf = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        ms = rho * ms + (1 - rho) * g * g
        denom = ms + eps
        if centered:
            mg = rho * mg + (1 - rho) * g
            denom = ms - mg * mg + eps
        step = lr * g / np.sqrt(denom)
        if momentum:
            buf = momentum * buf + step
            step = buf
        w = w - step
    return w


@pytest.mark.parametrize("momentum,centered", [(0.0, False), (0.9, False), (0.5, True)])
def test_rmsprop_steps_as_keras3(momentum, centered):
    # small gradients and a large epsilon: where epsilon sits (inside the square root, as
    # Keras 3; PyTorch adds it outside) changes the step tenfold
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) * 1e-3 for _ in range(4)]
    v = em.Variable(w0)
    opt = nn.optimizers.RMSprop(learning_rate=0.1, rho=0.8, momentum=momentum, epsilon=1e-5,
                                centered=centered)
    for g in grads:
        opt.apply_gradients([(em.constant(g), v)])
    want = _keras3_rmsprop(w0, grads, 0.1, 0.8, momentum, 1e-5, centered)
    np.testing.assert_allclose(v.numpy(), want, rtol=1e-6)  # (hyperparameters in float32)


def test_adagrad_steps_as_keras3():
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal(4)
    grads = [rng.standard_normal(4) * 1e-3 for _ in range(3)]
    v = em.Variable(w0)
    opt = nn.optimizers.Adagrad(learning_rate=0.5, initial_accumulator_value=1e-6,
                                epsilon=1e-5)
    acc, want = np.full(4, 1e-6), w0
    for g in grads:
        opt.apply_gradients([(em.constant(g), v)])
        acc = acc + g * g
        want = want - 0.5 * g / np.sqrt(acc + 1e-5)
    np.testing.assert_allclose(v.numpy(), want, rtol=1e-6)  # (hyperparameters in float32)


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_steps_as_keras3_under_a_changing_rate(nesterov):
    # Keras 3: m = mu m - lr g; w += m (Nesterov: w += mu m - lr g). PyTorch's m = mu m + g;
    # w -= lr m takes the same steps only while the learning rate stays put
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal(6).astype(np.float32)
    grads = [rng.standard_normal(6).astype(np.float32) for _ in range(4)]
    rates = [0.1, 0.01, 0.05, 0.2]
    v, lr = em.Variable(w0), em.Variable(0.1)
    opt = nn.optimizers.SGD(lr, momentum=0.9, nesterov=nesterov)
    w, m = w0.astype(np.float64), np.zeros(6)
    for g, rate in zip(grads, rates):
        lr.assign(rate)
        opt.apply_gradients([(em.constant(g), v)])
        m = 0.9 * m - rate * g
        w = w + (0.9 * m - rate * g if nesterov else m)
    np.testing.assert_allclose(v.numpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(opt.get_slot(v, "momentum").numpy(), m, rtol=1e-5, atol=1e-6)

"""Layer regularizers (weights and activity, ``losses``, ``fit``) and weight constraints
(applied by the optimizer after each update, as Keras)."""

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape
from ember.nn.layers import Dense, Layer

R, C = nn.regularizers, nn.constraints


def test_dense_weight_regularizers_are_in_losses():
    d = Dense(3, kernel_regularizer=R.L2(0.1), bias_regularizer=R.L1(0.2),
              bias_initializer="ones")
    d(em.ones((2, 4)))
    k = d.kernel.numpy()
    got = [float(x) for x in d.losses]
    np.testing.assert_allclose(got, [0.1 * np.sum(k ** 2), 0.2 * 3.0], rtol=1e-6)
    d.kernel.assign(np.zeros_like(k))  # weight penalties follow the variable's value
    np.testing.assert_allclose(float(d.losses[0]), 0.0)


def test_activity_regularizer_is_per_call_and_divided_by_batch_size():
    d = Dense(2, activity_regularizer=R.L1(0.5), kernel_initializer="ones")
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = d(em.constant(x)).numpy()
    np.testing.assert_allclose([float(v) for v in d.losses], [0.5 * np.abs(y).sum() / 4],
                               rtol=1e-6)
    d(em.constant(x))
    assert len(d.losses) == 1  # replaced by the new call, not accumulated


def test_model_losses_collect_nested_layers_and_add_loss():
    class M(nn.Model):
        def __init__(self):
            super().__init__()
            self._a = Dense(2, kernel_regularizer="l2")
            self.blocks = [Dense(1, kernel_regularizer=R.L1L2(l1=0.1, l2=0.1))]

        def call(self, x):
            y = self.blocks[0](self._a(x))
            self.add_loss(em.reduce_sum(y) * 0.0 + 1.0)
            return y

    m = M()
    m(em.ones((2, 3)))
    assert len(m.losses) == 3
    np.testing.assert_allclose(float(m.losses[0]), 1.0)  # own add_loss first
    m(em.ones((2, 3)))
    assert len(m.losses) == 3


def test_a_nested_layers_activity_loss_is_replaced_at_each_outermost_call():
    """An outermost call clears its tree's call losses (it walks the tree only when some
    layer holds any); a layer outside the tree keeps its own."""
    inner = Dense(2, activity_regularizer=R.L1(1.0), kernel_initializer="ones")
    m = nn.Sequential([Dense(3, input_shape=(3,)), inner])
    other = Dense(1, activity_regularizer=R.L1(1.0))
    other(em.ones((1, 3)))
    x = em.ones((2, 3))
    for _ in range(3):
        m(x)
        assert len(m.losses) == 1
    assert len(other.losses) == 1
    plain = nn.Sequential([Dense(2, input_shape=(3,))])
    plain(x)  # no call losses in its tree
    assert plain.losses == [] and len(m.losses) == 1


def test_fit_adds_regularization_to_the_loss():
    x = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)
    y = np.zeros((8, 1), np.float32)

    def make(reg):
        em.random.set_seed(1)
        m = nn.Sequential([Dense(1, input_shape=(3,), kernel_regularizer=reg)])
        m.compile(nn.optimizers.SGD(0.1), loss="mse")
        return m

    plain, regd = make(None), make(R.L2(1.0))
    k0 = regd.layers[0].kernel.numpy().copy()
    np.testing.assert_allclose(plain.layers[0].kernel.numpy(), k0)
    plain.fit(x, y, batch_size=8, epochs=1, verbose=0)
    regd.fit(x, y, batch_size=8, epochs=1, verbose=0)
    # the L2 term adds 2 * k to the gradient: an extra step of -0.1 * 2 * k0
    np.testing.assert_allclose(regd.layers[0].kernel.numpy(),
                               plain.layers[0].kernel.numpy() - 0.2 * k0, rtol=1e-5, atol=1e-6)


def test_add_weight_regularizer_and_constraint_on_a_custom_layer():
    class Scale(Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", (input_shape[-1],), initializer="ones",
                                     regularizer=R.L2(0.5), constraint=C.NonNeg())

        def call(self, x):
            return x * self.w

    s = Scale()
    x = em.ones((1, 3))
    s(x)
    np.testing.assert_allclose(float(s.losses[0]), 0.5 * 3)
    opt = nn.optimizers.SGD(10.0)
    with tape.GradientTape() as t:
        loss = em.reduce_sum(s(x))
    opt.apply_gradients(zip(t.gradient(loss, s.trainable_variables), s.trainable_variables))
    np.testing.assert_allclose(s.w.numpy(), [0.0, 0.0, 0.0])  # 1 - 10 < 0, projected


@pytest.mark.parametrize("opt", [lambda: nn.optimizers.SGD(0.5), lambda: nn.optimizers.Adam(0.5),
                                 lambda: nn.optimizers.RMSProp(0.5),
                                 lambda: nn.optimizers.Adagrad(0.5),
                                 lambda: nn.optimizers.Adamax(0.5),
                                 lambda: nn.optimizers.Adadelta(0.5),
                                 lambda: nn.optimizers.Nadam(0.5),
                                 lambda: nn.optimizers.Ftrl(0.5),
                                 lambda: nn.optimizers.Lion(0.5),
                                 lambda: nn.optimizers.Lamb(0.5),
                                 lambda: nn.optimizers.Adafactor(0.5)])
def test_every_optimizer_applies_dense_constraints(opt):
    d = Dense(4, kernel_constraint=C.MaxNorm(0.5), bias_constraint="non_neg")
    x = em.ones((2, 3))
    d(x)
    o = opt()
    for _ in range(2):
        with tape.GradientTape() as t:
            loss = em.reduce_sum(d(x))
        o.apply_gradients(zip(t.gradient(loss, d.trainable_variables), d.trainable_variables))
    assert np.all(np.linalg.norm(d.kernel.numpy(), axis=0) <= 0.5 + 1e-5)
    assert np.all(d.bias.numpy() >= 0)


def test_constraint_values():
    w = np.array([[3.0, 0.1], [4.0, -0.2]], np.float32)
    n = np.linalg.norm(w, axis=0, keepdims=True)
    np.testing.assert_allclose(C.MaxNorm(1.0)(em.constant(w)).numpy(),
                               w * np.minimum(n, 1.0) / (n + 1e-7), rtol=1e-5)
    np.testing.assert_allclose(C.UnitNorm()(em.constant(w)).numpy(), w / (n + 1e-7), rtol=1e-5)
    np.testing.assert_allclose(C.UnitNorm(axis=1)(em.constant(w)).numpy(),
                               w / (np.linalg.norm(w, axis=1, keepdims=True) + 1e-7), rtol=1e-5)
    mm = C.MinMaxNorm(0.5, 1.0, rate=0.5)(em.constant(w)).numpy()
    desired = 0.5 * np.clip(n, 0.5, 1.0) + 0.5 * n
    np.testing.assert_allclose(mm, w * desired / (n + 1e-7), rtol=1e-5)
    np.testing.assert_allclose(C.NonNeg()(em.constant(w)).numpy(), np.maximum(w, 0))


def test_regularizer_values_and_names():
    x = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)
    np.testing.assert_allclose(float(R.L1(0.1)(em.constant(x))), 0.1 * np.abs(x).sum(), rtol=1e-6)
    np.testing.assert_allclose(float(R.get("l2")(em.constant(x))), 0.01 * (x ** 2).sum(),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="l3"):
        R.get("l3")
    with pytest.raises(ValueError, match="l1"):
        R.L1(-1.0)
    with pytest.raises(ValueError, match="nonnegative"):
        C.get("nonnegative")


def test_frozen_weights_add_no_regularization():
    """Keras 3 sums the regularizers of ``trainable_weights`` only: a frozen layer's, or a
    ``trainable=False`` weight's, penalty is not in ``losses`` nor in fit's loss."""
    dense = Dense(1, kernel_initializer="ones", kernel_regularizer=R.L2(1.0))
    model = nn.Sequential([nn.layers.Input((3,)), dense])
    model(np.zeros((1, 3), np.float32))
    assert [float(v) for v in model.losses] == [3.0]
    dense.trainable = False
    assert model.losses == []
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 1), np.float32)
    model.compile("sgd", "mse")
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), 9.0, rtol=1e-6)  # no +3
    dense.trainable = True
    model.trainable = False  # an ancestor frozen: the same
    assert model.losses == []

    class Two(Layer):
        def build(self, input_shape):
            self.a = self.add_weight("a", (1,), initializer="ones", regularizer=R.L1(3.0))
            self.b = self.add_weight("b", (1,), initializer="ones", regularizer=R.L1(30.0),
                                     trainable=False)

        def call(self, x):
            self.add_loss(em.constant(100.0))
            return x * self.a

    two = Two()
    two(np.ones((1, 1), np.float32))
    assert [float(v) for v in two.losses] == [100.0, 3.0]  # Keras 3.15.1: [3, 100] order aside


def test_orthogonal_regularizer_leaves_the_diagonal_out():
    """Keras 3 multiplies the products by ``1 - eye``: a zero row's zero diagonal adds
    nothing (0.2357 in Keras 3.15.1, where subtracting ``eye`` gave 0.4024)."""
    w = em.constant(np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]], np.float32))
    np.testing.assert_allclose(float(R.OrthogonalRegularizer(1.0, "rows")(w)), 0.23570226,
                               rtol=1e-6)


def test_variance_scaling_distribution_as_keras_3():
    """Any case; ``"normal"`` is the truncated normal; an unknown name and a scale <= 0
    are errors (Keras 3), never a silent truncated normal."""
    init = nn.initializers.VarianceScaling(1.0, "fan_in", "Uniform", seed=1)
    assert init.distribution == "uniform"
    assert float(np.abs(init((100, 100))).max()) <= np.sqrt(3.0 / 100)
    assert nn.initializers.VarianceScaling(distribution="normal").distribution == \
        "truncated_normal"
    with pytest.raises(ValueError, match="unknown distribution 'bogus'"):
        nn.initializers.VarianceScaling(distribution="bogus")
    with pytest.raises(ValueError, match="scale must be a positive"):
        nn.initializers.VarianceScaling(0.0)


def test_keras_3s_initializer_and_regularizer_names():
    """Keras 3's ``initializers.get`` takes class names as spelled and the
    ``IdentityInitializer`` / ``OrthogonalInitializer`` aliases; ``Identity(gain)`` is
    ``gain * eye`` of a 2-D shape; ``L1(None)``/``L2(None)`` are the 0.01 defaults and
    ``L1L2(None, None)`` zero (Keras 3)."""
    I = nn.initializers
    assert isinstance(I.get("GlorotUniform"), I.GlorotUniform)
    assert isinstance(I.get("OrthogonalInitializer"), I.Orthogonal)
    for name in ("identity", "Identity", "IdentityInitializer"):
        assert isinstance(I.get(name), I.Identity)
    np.testing.assert_array_equal(I.Identity(gain=2.0)((2, 3)).numpy(),
                                  [[2, 0, 0], [0, 2, 0]])
    with pytest.raises(ValueError, match="2-D matrices only"):
        I.Identity()((2, 3, 4))
    again = I.deserialize(I.serialize(I.Identity(gain=3.0)))
    assert again.gain == 3.0
    assert R.L1(None).l1 == 0.01 and R.L2(None).l2 == 0.01
    assert R.L1L2(None, None).get_config() == {"l1": 0.0, "l2": 0.0}

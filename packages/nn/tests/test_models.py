"""Tracking by attribute path, freezing, Sequential, nesting, summary, and the seed models."""

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape

L = nn.layers


class MNISTModel(nn.Model):
    def __init__(self):
        super().__init__()
        self.dense1 = L.Dense(units=10)
        self.dense2 = L.Dense(units=10)

    def call(self, input):
        result = self.dense1(input)
        result = self.dense2(result)
        result = self.dense2(result)  # reuse variables from dense2 layer
        return result


class MySimpleLayer(L.Layer):
    def __init__(self, output_units):
        super().__init__()
        self.output_units = output_units

    def build(self, input_shape):
        self.kernel = self.add_variable("kernel", [input_shape[-1], self.output_units])

    def call(self, input):
        return em.matmul(input, self.kernel)


class MNIST_HighLevel(nn.Model):
    def __init__(self, hidden_units, n_cls):
        super().__init__()
        self.hidden_units = hidden_units
        self.n_cls = n_cls
        self.reshape_img = L.Reshape([28, 28, 1], name="input_reshape")
        self.conv1 = L.Conv2D(32, 5, padding="SAME", name="conv1")
        self.pool1 = L.MaxPool2D(padding="SAME", name="conv1/pool")
        self.conv2 = L.Conv2D(64, 5, padding="SAME", name="conv2")
        self.pool2 = L.MaxPool2D(padding="SAME", name="conv2/pool")
        self.reshape_conv = L.Reshape([49, 64], name="conv_feat_reshape")
        self.lstm = L.LSTM(units=self.hidden_units, use_bias=True)
        self.dense = L.Dense(units=self.n_cls)

    def call(self, imgs):
        imgs = self.reshape_img(imgs)
        conv_feat = self.pool1(self.conv1(imgs))
        conv_feat = self.pool2(self.conv2(conv_feat))
        conv_feat = self.reshape_conv(conv_feat)
        conv_feat = em.transpose(conv_feat, perm=[0, 2, 1], name="conv_transpose")
        lstm_feat = self.lstm(conv_feat)
        return self.dense(lstm_feat)


def test_mnist_model_reuses_dense2():
    model = MNISTModel()
    out = model(em.random.normal((3, 784)))
    assert out.shape == (3, 10)
    assert list(model.variables_by_path()) == [
        "dense1/kernel", "dense1/bias", "dense2/kernel", "dense2/bias"]
    assert model.dense2.kernel.shape == (10, 10)
    with tape.GradientTape() as t:
        loss = nn.losses.sparse_softmax_cross_entropy([1, 2, 3], model(em.ones((3, 784))))
    grads = t.gradient(loss, model.variables)
    assert all(g is not None for g in grads)


def test_my_simple_layer():
    layer = MySimpleLayer(5)
    x = em.ones((2, 3))
    y = layer(x)
    assert y.shape == (2, 5)
    assert list(layer.variables_by_path()) == ["kernel"]
    np.testing.assert_allclose(y.numpy(), np.ones((2, 3)) @ layer.kernel.numpy(), rtol=1e-6)


def test_mnist_high_level_runs_and_trains():
    model = MNIST_HighLevel(hidden_units=16, n_cls=10)
    x = em.random.uniform((4, 784))
    labels = em.one_hot(em.constant([1, 2, 3, 4]), 10)
    assert model(x).shape == (4, 10)
    paths = list(model.variables_by_path())
    assert paths[:2] == ["conv1/kernel", "conv1/bias"]
    assert "lstm/recurrent_kernel" in paths and paths[-1] == "dense/bias"
    assert model.lstm.kernel.shape == (49, 64)  # transposed (N, 64, 49) features
    opt = nn.optimizers.Adam(1e-3)
    step = nn.get_or_create_global_step()
    start = int(step)
    losses = []
    for _ in range(3):
        with tape.GradientTape() as t:
            loss = nn.losses.softmax_cross_entropy(labels, model(x))
        grads = t.gradient(loss, model.variables)
        opt.apply_gradients(zip(grads, model.variables), global_step=step)
        losses.append(float(loss))
    assert losses[-1] < losses[0]
    assert int(step) == start + 3


def test_seed_conv_pool_shapes():
    conv = L.Conv2D(filters=64, kernel_size=3, padding="SAME")
    pool = L.MaxPool2D(pool_size=2, strides=2, padding="SAME")
    imgs = em.random.uniform(shape=(128, 32, 32, 3))
    conv_feat = conv(imgs)
    assert conv_feat.shape == (128, 32, 32, 64)
    assert pool(conv_feat).shape == (128, 16, 16, 64)


def test_seed_linear_regression_model():
    class Model(nn.Model):
        def __init__(self):
            super().__init__()
            self.W = em.Variable(5., name="weight")
            self.B = em.Variable(10., name="bias")

        def call(self, inputs):
            return inputs * self.W + self.B

    xs = em.random.normal([2000])
    ys = xs * 3 + 2 + em.random.normal([2000])
    model = Model()
    assert list(model.variables_by_path()) == ["W", "B"]

    def loss(model, inputs, targets):
        return em.reduce_mean(em.square(model(inputs) - targets))

    opt = nn.optimizers.SGD(learning_rate=0.01)
    first = float(loss(model, xs, ys))
    for _ in range(300):
        with tape.GradientTape() as t:
            value = loss(model, xs, ys)
        grads = t.gradient(value, [model.W, model.B])
        opt.apply_gradients(zip(grads, [model.W, model.B]),
                            global_step=nn.get_or_create_global_step())
    assert float(loss(model, xs, ys)) < first / 20
    assert abs(float(model.W) - 3) < 0.2 and abs(float(model.B) - 2) < 0.2
    # minimize() without var_list: the trainable variables the loss read
    opt.minimize(lambda: loss(model, xs, ys), global_step=nn.get_or_create_global_step())


def test_sequential_with_input_shape_builds_and_summarises(capsys):
    model = nn.Sequential([L.Dense(10, input_shape=(784,)), L.Dense(10)])
    assert model.built
    assert len(model.variables) == 4
    assert list(model.variables_by_path())[0] == "layers/0/kernel"
    model.summary()
    out = capsys.readouterr().out
    assert "(None, 10)" in out and "7,850" in out and "Total params: 7,960" in out
    assert model(em.zeros((2, 784))).shape == (2, 10)


def test_sequential_add_and_nesting():
    inner = nn.Sequential()
    inner.add(L.Dense(4, activation="relu"))
    inner.add(L.Dense(3))
    outer = nn.Sequential([L.Dense(5), inner, L.Activation("softmax")])
    y = outer(em.ones((2, 6)))
    assert y.shape == (2, 3)
    np.testing.assert_allclose(y.numpy().sum(-1), 1.0, rtol=1e-6)
    assert list(outer.variables_by_path()) == [
        "layers/0/kernel", "layers/0/bias", "layers/1/layers/0/kernel",
        "layers/1/layers/0/bias", "layers/1/layers/1/kernel", "layers/1/layers/1/bias"]


def test_lists_and_dicts_are_tracked_by_path():
    class Blocks(nn.Model):
        def __init__(self):
            super().__init__()
            self.blocks = [L.Dense(3), L.Dense(3)]
            self.heads = {"a": L.Dense(1)}
            self.blocks.append(L.Dense(2))

        def call(self, x):
            for b in self.blocks:
                x = b(x)
            return self.heads["a"](x)

    m = Blocks()
    m(em.ones((1, 4)))
    assert list(m.variables_by_path()) == [
        "blocks/0/kernel", "blocks/0/bias", "blocks/1/kernel", "blocks/1/bias",
        "blocks/2/kernel", "blocks/2/bias", "heads/a/kernel", "heads/a/bias"]


def test_trainable_flag_freezes_and_non_trainable_variables():
    model = nn.Sequential([L.Dense(4), L.BatchNormalization(), L.Dense(2)])
    model(em.ones((3, 5)))
    assert len(model.trainable_variables) == 6
    assert len(model.non_trainable_variables) == 2  # moving statistics
    model.layers[0].trainable = False
    assert len(model.trainable_variables) == 4
    model.trainable = False
    assert model.trainable_variables == []
    assert len(model.variables) == 8


def test_shared_layer_counted_once():
    d = L.Dense(3)

    class Twice(nn.Model):
        def __init__(self):
            super().__init__()
            self.a = d
            self.b = d

        def call(self, x):
            return self.b(self.a(x))

    m = Twice()
    m(em.ones((1, 3)))
    assert len(m.variables) == 2


def test_shape_mismatch_error_is_clear():
    d = L.Dense(3)
    d(em.ones((2, 4)))
    with pytest.raises(ValueError, match=r"built for inputs with 4 at axis -1, got shape \(2, 5\)"):
        d(em.ones((2, 5)))
    with pytest.raises(ValueError, match="Reshape"):
        L.Reshape([5, 5])(em.ones((1, 12)))


def test_dropout_training_flag_propagates_and_is_seeded():
    class M(nn.Model):
        def __init__(self):
            super().__init__()
            self.drop = L.Dropout(0.5)

        def call(self, x):  # no training argument: the flag flows through the context
            return self.drop(x)

    m, x = M(), em.ones((100,))
    np.testing.assert_array_equal(m(x).numpy(), np.ones(100))
    em.random.set_seed(3)
    a = m(x, training=True).numpy()
    em.random.set_seed(3)
    b = m(x, training=True).numpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 2.0} and 0 < (a == 0).sum() < 100


def test_batchnorm_training_vs_inference():
    bn = L.BatchNormalization(momentum=0.5)
    x = em.constant(np.random.default_rng(0).normal(3, 2, (64, 3)).astype(np.float32))
    y = bn(x, training=True).numpy()
    np.testing.assert_allclose(y.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.5 * x.numpy().mean(0), rtol=1e-5)
    y_inf = bn(x, training=False).numpy()
    assert not np.allclose(y, y_inf)


def test_input_dtype_is_cast_and_numpy_accepted():
    d = L.Dense(2)
    assert d(np.ones((1, 3))).dtype == np.float32


def test_model_requires_super_init_and_a_layer_is_initialized_without_it():
    class Bad(nn.Model):
        def __init__(self):
            self.d = L.Dense(1)

    class ModuleLike(L.Layer):  # a tf.Module need not call super().__init__()
        def __init__(self):
            self.d = L.Dense(1)

    with pytest.raises(AttributeError, match="super"):
        Bad()
    m = ModuleLike()
    assert m.layers == [m.d]


def test_initializers_are_seeded_and_shaped():
    for name in ["glorot_uniform", "glorot_normal", "he_normal", "lecun_normal", "orthogonal",
                 "zeros", "ones", "random_normal", "random_uniform", "truncated_normal"]:
        init = nn.initializers.get(name)
        em.random.set_seed(5)
        a = init((6, 4)).numpy()
        em.random.set_seed(5)
        b = nn.initializers.get(name)((6, 4)).numpy()
        np.testing.assert_array_equal(a, b)
        assert a.shape == (6, 4) and a.dtype == np.float32
    q = nn.initializers.Orthogonal()((6, 4)).numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    g = nn.initializers.GlorotUniform()((200, 300)).numpy()
    assert np.abs(g).max() <= np.sqrt(6 / 500) + 1e-6
    np.testing.assert_allclose(nn.initializers.Constant(2.5)((2,)).numpy(), [2.5, 2.5])


def test_seeded_initializers_repeat_as_keras3():
    # Keras 3: an int seed gives the same numbers at every call and from every initializer
    # with that seed; a SeedGenerator advances; None draws from the global generator
    for cls in (nn.initializers.GlorotNormal, nn.initializers.HeUniform,
                nn.initializers.RandomNormal, nn.initializers.TruncatedNormal,
                nn.initializers.RandomUniform, nn.initializers.Orthogonal):
        init = cls(seed=42)
        em.random.set_seed(1)
        a = init((5, 3)).numpy()
        em.random.set_seed(2)  # the global seed has no say
        np.testing.assert_array_equal(a, init((5, 3)).numpy())
        np.testing.assert_array_equal(a, cls(seed=42)((5, 3)).numpy())
        assert not np.array_equal(a, cls(seed=43)((5, 3)).numpy())
        gen = cls(seed=nn.random.SeedGenerator(7))
        assert not np.array_equal(gen((5, 3)).numpy(), gen((5, 3)).numpy())
        unseeded = cls()
        assert not np.array_equal(unseeded((5, 3)).numpy(), unseeded((5, 3)).numpy())
    # two layers given one seeded initializer start equal (upstream's reproducibility recipe)
    init = nn.initializers.GlorotNormal(seed=3)
    d1, d2 = L.Dense(4, kernel_initializer=init), L.Dense(4, kernel_initializer=init)
    d1(em.ones((1, 2)))
    d2(em.ones((1, 2)))
    np.testing.assert_array_equal(d1.kernel.numpy(), d2.kernel.numpy())


def test_absent_weights_are_none_as_keras():
    for layer, shape, names in [
            (L.Dense(2, use_bias=False), (1, 3), ["bias"]),
            (L.Conv2D(2, 3, use_bias=False), (1, 5, 5, 1), ["bias"]),
            (L.DepthwiseConv2D(3, use_bias=False), (1, 5, 5, 1), ["bias"]),
            (L.EinsumDense("ab,bc->ac", output_shape=2), (1, 3), ["bias"]),
            (L.BatchNormalization(center=False, scale=False), (2, 3), ["gamma", "beta"]),
            (L.LayerNormalization(center=False, scale=False), (2, 3), ["gamma", "beta"]),
            (L.GroupNormalization(groups=1, center=False, scale=False), (2, 3),
             ["gamma", "beta"])]:
        out = layer(em.ones(shape))
        for name in names:
            assert getattr(layer, name) is None, (layer, name)
        assert all(v is not None for v in layer.weights)
        assert out.shape[0] == shape[0]


def _student():
    return nn.Sequential([
        L.Conv2D(4, (3, 3), strides=(2, 2), padding="same", activation="relu",
                 input_shape=(8, 8, 1)),
        L.LeakyReLU(alpha=0.05),
        L.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
        L.Flatten(),
        L.Dropout(0.25),
        L.Dense(3, activation="tanh"),
    ], name="student")


def test_clone_model_makes_the_same_architecture_with_fresh_weights():
    model = _student()
    clone = nn.models.clone_model(model)
    assert type(clone) is nn.Sequential and clone.name == "student"
    assert [type(a) for a in clone.layers] == [type(b) for b in model.layers]
    assert clone.count_params() == model.count_params() and clone.built
    mine = {id(v) for v in model.variables}
    assert not any(id(v) in mine for v in clone.variables)
    assert not np.allclose(clone.get_weights()[0], model.get_weights()[0])  # fresh
    x = np.random.default_rng(0).standard_normal((2, 8, 8, 1)).astype(np.float32) * 4
    clone.set_weights(model.get_weights())
    # the same function: relu, alpha=0.05 and tanh came along (a from_config of defaults
    # would give linear, 0.3 and linear)
    np.testing.assert_allclose(clone(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    again = nn.Sequential.from_config(model.get_config())
    assert again.count_params() == model.count_params()
    seen = []
    nn.models.clone_model(model, clone_function=lambda layer: seen.append(layer) or layer)
    assert seen == model.layers


def test_clone_model_rejects_what_it_cannot_clone():
    with pytest.raises(ValueError, match="input_tensors"):
        nn.models.clone_model(_student(), input_tensors=[em.zeros((1, 8, 8, 1))])
    with pytest.raises(ValueError, match="could not build MNISTModel from its config"):
        nn.models.clone_model(MNISTModel())  # a subclass is made from its config, as Keras
    with pytest.raises(ValueError, match="not a Layer"):
        nn.models.clone_model(_student(), clone_function=lambda layer: None)


@pytest.mark.parametrize("init", [
    nn.initializers.HeNormal(seed=3), nn.initializers.GlorotUniform(),
    nn.initializers.VarianceScaling(2.0, "fan_avg", "uniform", seed=1),
    nn.initializers.RandomNormal(0.5, 0.1, seed=2), nn.initializers.RandomUniform(-1.0, 2.0),
    nn.initializers.TruncatedNormal(stddev=0.2), nn.initializers.Constant(0.25),
    nn.initializers.Orthogonal(gain=2.0, seed=4), nn.initializers.Zeros()],
    ids=lambda i: type(i).__name__)
def test_initializers_serialize_to_keras_form_and_back(init):
    config = nn.initializers.serialize(init)
    assert config["class_name"] == type(init).__name__
    again = nn.initializers.get(config)
    assert type(again) is type(init) and again.get_config() == init.get_config()
    em.random.set_seed(7)
    a = init((5, 3)).numpy()
    em.random.set_seed(7)
    np.testing.assert_array_equal(again((5, 3)).numpy(), a)  # same arguments, same draws


def test_initializer_configs_hold_their_arguments():
    assert nn.initializers.HeNormal(seed=3).get_config() == {"seed": 3}
    assert nn.initializers.RandomNormal(0.5, 0.1).get_config() == {
        "mean": 0.5, "stddev": 0.1, "seed": None}
    with pytest.raises(ValueError, match="a plain function cannot be serialized"):
        nn.initializers.serialize(lambda shape, dtype=None: em.zeros(shape))
    with pytest.raises(ValueError, match="unknown initializer 'Nope'"):
        nn.initializers.deserialize({"class_name": "Nope", "config": {}})


def test_sequential_takes_an_input_first_as_keras():
    model = nn.Sequential([nn.Input(shape=(4,)), nn.layers.Dense(3), nn.layers.Dense(2)])
    assert model.built and model.layers[0].kernel.shape == (4, 3)  # built at once
    assert model(em.ones((5, 4))).shape == (5, 2)
    ids = nn.Sequential([nn.Input(shape=(6,), dtype="int32"), nn.layers.Embedding(10, 3)])
    assert ids.built and ids(em.constant([[1, 2, 3, 4, 5, 6]])).shape == (1, 6, 3)
    later = nn.Sequential()
    later.add(nn.Input(shape=(2,)))
    later.add(nn.layers.Dense(1))
    assert later.built
    with pytest.raises(ValueError, match="an nn.Input must come first"):
        later.add(nn.Input(shape=(2,)))
    sym = nn.layers.Dense(2)(nn.Input(shape=(3,)))
    with pytest.raises(TypeError, match="the output of a layer"):
        nn.Sequential([sym])


def test_losses_added_while_a_model_is_built_symbolically_are_not_kept():
    # Keras 3 drops what add_loss gets while tracing on symbolic inputs; ember builds by
    # probing on zeros, and model.losses held the probe's number until the first call
    class AddLoss(L.Layer):
        def call(self, x):
            self.add_loss(em.reduce_sum(x) + 1.0)
            return x

    inp = nn.Input(shape=(3,))
    functional = nn.Model(inp, AddLoss()(inp))
    stacked = nn.Sequential([L.Input((3,)), AddLoss(), L.Dense(2, activity_regularizer="l2")])
    assert functional.losses == [] and stacked.losses == []
    functional(em.ones((2, 3)))
    assert [float(v) for v in functional.losses] == [7.0]
    stacked(em.ones((1, 3)))
    assert float(stacked.losses[0]) == 4.0 and len(stacked.losses) == 2


def test_initializer_names_include_keras_3s_aliases():
    """Keras 3's ``initializers.get`` also takes "uniform", "normal", "one" and "zero"
    (its ALL_OBJECTS_DICT aliases; ember refused them, found porting keras-io's Perceiver)."""
    for name, cls in (("uniform", "RandomUniform"), ("normal", "RandomNormal"),
                      ("one", "Ones"), ("zero", "Zeros")):
        assert type(nn.initializers.get(name)).__name__ == cls
    layer = nn.layers.Dense(2, kernel_initializer="one", bias_initializer="zero")
    np.testing.assert_array_equal(layer(np.ones((1, 3), np.float32)).numpy(), [[3.0, 3.0]])

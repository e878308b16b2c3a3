"""ember.nn objects through ember.checkpoint: keys are object-graph (attribute) paths, and
variables created after ``restore`` take their saved values whatever their display names."""

import numpy as np
import pytest

import ember.core as em
from ember import checkpoint, nn, tape


def _model():
    return nn.Sequential([nn.layers.Dense(8, activation="relu"), nn.layers.BatchNormalization(),
                          nn.layers.Dense(3)])


def _train(model, opt, steps=3):
    x = em.constant(np.random.default_rng(0).standard_normal((16, 5)).astype(np.float32))
    y = em.constant(np.arange(16) % 3)
    for _ in range(steps):
        with tape.GradientTape() as t:
            loss = nn.losses.sparse_softmax_cross_entropy(y, model(x, training=True))
        vs = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, vs), vs))
    return x


def test_roundtrip_with_deferred_restoration(tmp_path):
    model, opt = _model(), nn.optimizers.Adam(0.01)
    x = _train(model, opt)
    step = em.Variable(np.int64(3))
    path = checkpoint.Checkpoint(model=model, optimizer=opt, step=step).save(
        str(tmp_path / "ckpt"))
    expected = model(x).numpy()

    model2, opt2, step2 = _model(), nn.optimizers.Adam(0.01), em.Variable(np.int64(0))
    status = checkpoint.Checkpoint(model=model2, optimizer=opt2, step=step2).restore(path)
    assert int(step2) == 3 and int(opt2.iterations) == 3
    np.testing.assert_allclose(model2(x).numpy(), expected, rtol=1e-6)  # built now: restored
    for p, v in model.variables_by_path().items():
        np.testing.assert_array_equal(model2.variables_by_path()[p].numpy(), v.numpy())
    _train(model2, opt2, steps=1)  # slots are created now and take their saved values
    for (_, name, slot) in opt2.__checkpoint_slots__():
        assert np.any(slot.numpy() != 0), name
    status.assert_consumed()


class _Embedder(nn.layers.Layer):
    """Keras-style: the attribute name differs from the name given to add_weight."""

    def __init__(self, weight_name="embedding_kernel"):
        super().__init__()
        self.weight_name = weight_name

    def build(self, input_shape):
        self.embedding = self.add_weight(self.weight_name, (input_shape[-1], 4),
                                         initializer="random_normal")
        self._scale = self.add_weight("s", (4,), initializer="random_normal")

    def call(self, x):
        return em.matmul(x, self.embedding) * self._scale


class _Wrapper(nn.Model):
    def __init__(self, weight_name="embedding_kernel"):
        super().__init__()
        self._inner = _Embedder(weight_name)          # private attribute: tracked too
        self.blocks = [nn.layers.Dense(2)]

    def call(self, x):
        return self.blocks[0](self._inner(x))


@pytest.mark.parametrize("restore_name", ["embedding_kernel", "something_else", "embedding"])
def test_deferred_restore_ignores_display_names(tmp_path, restore_name):
    x = em.ones((2, 3))
    saved = _Wrapper()
    expected = saved(x).numpy()
    path = checkpoint.Checkpoint(model=saved).save(str(tmp_path / "ckpt"))

    fresh = _Wrapper(restore_name)  # not built yet: its variables appear after restore
    status = checkpoint.Checkpoint(model=fresh).restore(path)
    np.testing.assert_allclose(fresh(x).numpy(), expected, rtol=1e-6)
    for p, v in saved.variables_by_path().items():
        np.testing.assert_array_equal(fresh.variables_by_path()[p].numpy(), v.numpy())
    assert list(fresh.variables_by_path()) == [
        "_inner/embedding", "_inner/_scale", "blocks/0/kernel", "blocks/0/bias"]
    status.assert_consumed()


def test_checkpoint_keys_are_attribute_paths(tmp_path):
    model = _Wrapper()
    model(em.ones((1, 3)))
    opt = nn.optimizers.SGD(0.1, momentum=0.9)
    with tape.GradientTape() as t:
        loss = em.reduce_sum(model(em.ones((1, 3))))
    opt.apply_gradients(zip(t.gradient(loss, model.trainable_variables),
                            model.trainable_variables))
    path = checkpoint.Checkpoint(model=model, opt=opt).save(str(tmp_path / "ckpt"))
    model2, opt2 = _Wrapper("other"), nn.optimizers.SGD(0.1, momentum=0.9)
    status = checkpoint.Checkpoint(model=model2, opt=opt2).restore(path)
    model2(em.ones((1, 3)))
    with tape.GradientTape() as t:
        loss = em.reduce_sum(model2(em.ones((1, 3))))
    opt2.apply_gradients(zip(t.gradient(loss, model2.trainable_variables),
                             model2.trainable_variables))
    status.assert_consumed()


def test_a_functional_model_round_trips(tmp_path):
    """ember-nn's functional models through ember.checkpoint (here: nn's own tests
    install nn's dependencies only)."""
    def make():
        inp = nn.Input((3,))
        return nn.Model(inp, nn.layers.Dense(2)(nn.layers.Dense(4)(inp)))

    model, other = make(), make()
    x = np.ones((1, 3), np.float32)
    path = checkpoint.Checkpoint(model=model).write(str(tmp_path / "ck"))
    checkpoint.Checkpoint(model=other).restore(path)
    np.testing.assert_allclose(other(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_an_optimizer_made_on_the_host_round_trips_from_the_gpu(tmp_path):
    """Optimizers built before ``with em.device("/gpu:0")`` move their iterations and
    learning rate to the GPU at the first update; saved from there and restored into a
    fresh one made on the host, training goes on as if never stopped (strict double)."""
    from ember.core.testing import simulated_gpus

    def steps(opt, w, n):
        for i in range(n):
            opt.apply_gradients([(em.constant(np.float32([0.5, -1.0]) * (i + 1)), w)])

    opt, ref = nn.optimizers.Adam(0.1), nn.optimizers.Adam(0.1)
    assert opt.iterations.device == opt.learning_rate.device == "/cpu:0"
    with simulated_gpus(1, strict=True):
        with em.device("/gpu:0"):
            w, w_ref = em.Variable(np.float32([1.0, 2.0])), em.Variable(np.float32([1.0, 2.0]))
            opt.learning_rate.assign(0.02)
            ref.learning_rate.assign(0.02)
            steps(opt, w, 3)
            steps(ref, w_ref, 3)
            path = checkpoint.Checkpoint(opt=opt, w=w).save(str(tmp_path / "ckpt"))
            steps(ref, w_ref, 2)
        assert opt.iterations.device == opt.learning_rate.device == "/gpu:0"
        with em.device("/cpu:0"):
            fresh = nn.optimizers.Adam(0.1)  # on the host again
        with em.device("/gpu:0"):
            w2 = em.Variable(np.float32([0.0, 0.0]))
            status = checkpoint.Checkpoint(opt=fresh, w=w2).restore(path)
            steps(fresh, w2, 2)  # the slots, made now on the GPU, take their saved values
            status.assert_consumed()
        assert fresh.iterations.device == "/gpu:0" and int(fresh.iterations) == 5
        np.testing.assert_allclose(float(fresh.learning_rate), 0.02)
        np.testing.assert_allclose(w2.numpy(), w_ref.numpy(), rtol=1e-6)

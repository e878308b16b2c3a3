"""Every attribute holding a layer or variable is tracked (private names, nested containers),
and ember's own state never collides with a user's attribute names."""

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape
from ember.nn.layers import Dense, Layer


def test_private_attribute_layer_is_tracked():
    class M(nn.Model):
        def __init__(self):
            super().__init__()
            self._hidden = Dense(2)

        def call(self, x):
            return self._hidden(x)

    m = M()
    m(em.ones((1, 3)))
    assert list(m.variables_by_path()) == ["_hidden/kernel", "_hidden/bias"]
    assert len(m.trainable_variables) == 2
    assert "_hidden" in m.__checkpoint_children__()


def test_nested_lists_tuples_dicts_are_tracked():
    class M(nn.Model):
        def __init__(self):
            super().__init__()
            self._blocks = []                       # filled later: still tracked
            self.pairs = [(Dense(1), Dense(1))]
            self.heads = {"a": [Dense(1)], "b": {"c": Dense(1)}}
            self._v = em.Variable(1.0)

        def call(self, x):
            for b in self._blocks:
                x = b(x)
            y = self.pairs[0][0](x) + self.pairs[0][1](x)
            return y + self.heads["a"][0](x) + self.heads["b"]["c"](x) + self._v

    m = M()
    m._blocks.append(Dense(3))
    m(em.ones((2, 3)))
    paths = list(m.variables_by_path())
    assert paths == ["_blocks/0/kernel", "_blocks/0/bias", "pairs/0/0/kernel", "pairs/0/0/bias",
                     "pairs/0/1/kernel", "pairs/0/1/bias", "heads/a/0/kernel", "heads/a/0/bias",
                     "heads/b/c/kernel", "heads/b/c/bias", "_v"]
    assert len(m.layers) == 5 and len(m.submodules) == 5


def test_plain_data_lists_are_left_alone():
    class L(Layer):
        def __init__(self):
            super().__init__()
            self.sizes = [1, 2, 3]
            self.cfg = {"a": 1}

    layer = L()
    assert type(layer.sizes) is list and type(layer.cfg) is dict
    assert layer.variables == []


# Names a user's Layer/Model plausibly uses; ember must not read or write any of them.
PLAUSIBLE = ["_output_shape", "_built", "_name", "_trainable", "_children", "_layers",
             "_losses", "_dtype", "_weights", "_variables", "_input_shape",
             "_batch_input_shape", "_stack", "_weight_names", "_ckpt_listeners",
             "_listeners", "_autocast", "_loss_tracker", "_training", "_inputs", "_outputs",
             "_config", "_state", "_step", "_optimizer", "_metrics", "_compiled", "_convert",
             "_notify", "_maybe_build", "_call", "_build", "_activity_regularizer",
             "_input_spec", "_submodules", "_tracking", "_trackable_children", "_self_state"]


def _sentinel(name):
    return f"user value of {name}"


class _Sweep(nn.Model):
    def __init__(self):
        super().__init__()
        for n in PLAUSIBLE:
            setattr(self, n, _sentinel(n))
        self.dense = Dense(2)

    def build(self, input_shape):
        for n in PLAUSIBLE:
            assert getattr(self, n) == _sentinel(n), n
            setattr(self, n, _sentinel(n))

    def call(self, x):
        for n in PLAUSIBLE:
            assert getattr(self, n) == _sentinel(n), n
            setattr(self, n, _sentinel(n))
        return self.dense(x)


def test_user_attribute_names_never_collide_with_internals(tmp_path):
    m = _Sweep()
    x = np.ones((4, 3), np.float32)
    y = np.zeros((4, 2), np.float32)
    before = m.dense  # not built yet
    m(em.constant(x))
    assert before is m.dense
    assert [p for p in m.variables_by_path()] == ["dense/kernel", "dense/bias"]
    m.compile(nn.optimizers.SGD(0.1), loss="mse")
    hist = m.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert len(hist.history["loss"]) == 1
    m.evaluate(x, y, verbose=0)
    m.summary(print_fn=lambda s: None)
    assert set(m.__checkpoint_children__()) == {"dense"}
    assert len(m.trainable_variables) == 2 and m.count_params() == 8
    for n in PLAUSIBLE:
        assert getattr(m, n) == _sentinel(n), n


def test_sequential_and_dense_keep_user_private_attributes():
    seq = nn.Sequential([Dense(2, input_shape=(3,))])
    seq._stack = "mine"
    seq._batch_input_shape = "mine"
    seq.add(Dense(1))
    assert seq._stack == "mine" and seq._batch_input_shape == "mine"
    assert seq(em.ones((1, 3))).shape == (1, 1)
    assert len(seq.layers) == 2


def test_ember_names_are_reserved_loudly():
    layer = Dense(1)
    with pytest.raises(AttributeError, match="_ember_state"):
        layer._ember_state = 1


def test_frozen_private_sublayer_is_not_trained():
    class M(nn.Model):
        def __init__(self):
            super().__init__()
            self._a = Dense(1)
            self._a.trainable = False
            self._b = Dense(1)

        def call(self, x):
            return self._b(self._a(x))

    m = M()
    x = em.ones((2, 2))
    with tape.GradientTape() as t:
        loss = em.reduce_sum(m(x))
    assert len(m.trainable_variables) == 2
    assert len(t.gradient(loss, m.trainable_variables)) == 2


# --- tf.Module's ways, which nn.Layer stands for --------------------------------------------
class NoSuperDense(nn.layers.Layer):
    """A tf.Module-style layer: no super().__init__(), variables assigned directly."""

    def __init__(self, n):
        self.n = n
        self.w = em.Variable(em.ones((3, n)))
        self.b = em.Variable(em.zeros((n,)))

    def __call__(self, x):
        return x @ self.w + self.b


class OwnLayersList(nn.layers.Layer):
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_a_layer_without_super_init_is_initialized_when_it_first_tracks():
    layer = NoSuperDense(3)
    assert [v.shape for v in layer.trainable_variables] == [(3, 3), (3,)]
    assert layer.name.startswith("no_super_dense")  # (a unique name, as any layer)
    np.testing.assert_array_equal(layer(em.ones((1, 3))).numpy(), [[3.0, 3.0, 3.0]])


def test_a_layer_may_assign_its_own_layers_list():
    model = OwnLayersList([NoSuperDense(3), NoSuperDense(3)])
    assert len(model.layers) == 2 and len(model.trainable_variables) == 4
    np.testing.assert_array_equal(model(em.ones((1, 3))).numpy(), [[9.0, 9.0, 9.0]])


def test_a_model_must_call_super_init_and_keeps_layers_reserved():
    class NoSuper(nn.Model):
        def __init__(self):
            self.dense = nn.layers.Dense(2)

    class OwnLayers(nn.Model):
        def __init__(self):
            super().__init__()
            self.layers = [nn.layers.Dense(2)]

    with pytest.raises(AttributeError, match=r"NoSuper: call super\(\).__init__\(\) before"):
        NoSuper()
    with pytest.raises(AttributeError, match="'layers' is reserved for the model's layers"):
        OwnLayers()


def test_a_layer_without_super_init_and_no_variables_yet_is_tracked_by_its_parent():
    class Inner(nn.layers.Layer):  # tf.Module-style, variables made on first use
        def __init__(self):
            self.units = 2

        def __call__(self, x):
            if not hasattr(self, "w"):
                self.w = em.Variable(em.ones((x.shape[-1], self.units)))
            return x @ self.w

    class Outer(nn.layers.Layer):
        def __init__(self, inner):
            self.inner = inner
            self.stack = [Inner(), Inner()]

    outer = Outer(Inner())
    assert outer.layers == [outer.inner, *outer.stack]
    outer.inner(em.ones((1, 3)))
    outer.stack[1](em.ones((1, 2)))
    assert [tuple(v.shape) for v in outer.variables] == [(3, 2), (2, 2)]


def test_a_list_assigned_before_any_variable_by_a_layer_without_super_init_is_tracked():
    class Slots(nn.layers.Layer):  # TensorFlow's optimizers core guide: slots appended later
        def __init__(self):
            self.slots = []

    s = Slots()
    s.slots.append(em.Variable(0.0))
    assert len(s.variables) == 1


def test_a_model_holding_a_functional_model_lists_its_variables_in_keras_order():
    """A functional model lists its variables layer by layer in Keras's order, not its
    calls'; a subclassed model holding it listed the calls' order, so get_weights()
    and set_weights() of arrays of equal shapes permuted them silently (keras-io's
    Perceiver; Keras 3.15 lists pa, pb, qa, qb here)."""
    L = nn.layers
    a, b = L.Input((4,)), L.Input((4,))
    x = L.Dense(4, name="qa")(L.Dense(4, name="pa")(a))
    y = L.Dense(4, name="qb")(L.Dense(4, name="pb")(b))
    inner = nn.Model([a, b], L.Add()([x, y]))

    class Outer(nn.Model):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def call(self, inputs):
            return self.inner(inputs)

    want = [w.name for w in inner.weights]
    assert [w.name.split("/")[0] for w in inner.weights if "kernel" in w.name] == [
        "pa", "pb", "qa", "qb"]
    outer = Outer()
    assert [w.name for w in outer.weights] == want
    assert [w.name for w in outer.trainable_weights] == want
    values = [w.numpy() + i for i, w in enumerate(inner.weights)]
    outer.set_weights(values)
    for w, v in zip(inner.weights, values):
        np.testing.assert_array_equal(w.numpy(), v)

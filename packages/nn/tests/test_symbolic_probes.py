"""Building on symbolic inputs runs each layer once on a probe (its output's shapes are
all that is kept): on zeros, and where those values make a layer refuse them (an id out
of range after ``x - 1``, a singular matrix), on ones, then on numbers in [0.5, 1.5).
Keras builds such models; numpy's warnings on the probe (``log(0)``, ``0 / 0``) are not
the user's and are not shown."""

import warnings

import numpy as np

import ember.core as em
from ember import nn


class Shift(nn.layers.Layer):
    def call(self, x):
        return x - 1


def test_values_that_zeros_make_invalid_still_build():
    seq = nn.Sequential([Shift(dtype="int64"), nn.layers.Embedding(3, 2)])
    assert seq(nn.Input(shape=(), dtype="int64")).shape == (None, 2)
    assert seq(np.array([1, 2, 3])).shape == (3, 2)
    inp = nn.Input(shape=(4,), dtype="int64")
    model = nn.Model(inp, nn.layers.Embedding(5, 2)(Shift()(inp)))
    assert model(np.array([[1, 2, 3, 4]])).shape == (1, 4, 2)
    square = nn.Input((3, 3))
    inverse = nn.Model(square, em.linalg.inv(square))
    a = np.array([[[2.0, 1, 0], [0, 1, 0], [0, 0, 4]]], np.float32)
    np.testing.assert_allclose(inverse(a).numpy(), np.linalg.inv(a), rtol=1e-6)


def test_a_probe_shows_no_numpy_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = nn.Input((4,))
        y = x / em.reduce_sum(x, axis=-1, keepdims=True)
        z = em.log(x)
    model = nn.Model(x, [y, z])
    got_y, got_z = model(np.ones((2, 4), np.float32))
    np.testing.assert_allclose(got_y.numpy(), 0.25)
    np.testing.assert_allclose(got_z.numpy(), 0.0)


def test_a_real_error_is_still_raised():
    x = nn.Input((4,))
    try:
        nn.layers.Dense(2)(em.reshape(x, (-1, 3)))
    except Exception as e:  # the probe's own error, from the first (zeros) try
        assert "reshape" in str(e)
    else:
        raise AssertionError("a reshape of 4 values into rows of 3 must fail")


def test_an_operations_output_keeps_the_batch_axis_only_where_it_follows_the_batch():
    """Probed at two batch sizes, as Keras's ops infer shapes symbolically: a reduction
    over the batch has no batch axis (ember said ``(None,)`` for all of these; found
    porting keras-io's "Introduction to Keras for researchers")."""
    inp = nn.Input(shape=(32,))
    assert em.reduce_mean(inp).shape == ()
    assert em.reduce_sum(inp, axis=0).shape == (32,)
    assert em.reduce_sum(inp, axis=1).shape == (None,)
    assert em.transpose(inp).shape == (32, None)
    assert inp[0].shape == (32,)
    assert (inp * 2.0).shape == (None, 32)
    seq = nn.Input(shape=(None, 8))
    assert em.reduce_mean(seq, axis=1).shape == (None, 8)
    assert seq[:, 0].shape == (None, 8)
    assert em.reduce_max(seq).shape == ()
    assert nn.layers.Lambda(lambda t: em.reduce_sum(t, axis=0))(inp).shape == (32,)
    # downstream nodes are probed with the real leading size, not the batch's 1
    total = em.reduce_sum(inp, axis=0)
    model = nn.Model(inp, nn.layers.Dense(3)(em.reshape(total, (1, 32))))
    assert model.output_shape == (1, 3)
    x = np.ones((5, 32), np.float32)
    assert model(x).shape == (1, 3)
    assert nn.Model(inp, total).output_shape == (32,)
    np.testing.assert_allclose(nn.Model(inp, total)(x).numpy(), np.full(32, 5.0))


def test_a_fixed_batch_size_is_the_probes_batch_size():
    """A layer may reshape to its model's fixed batch (keras-io's Switch Transformer
    reshapes to batch * tokens): an Input with batch_size=2 is probed with 2, not 1."""
    class Tokens(nn.layers.Layer):
        def call(self, x):
            return em.reshape(em.reshape(x, [6, 4]), [em.shape(x)[0], 3, 4])

    inp = nn.Input(shape=(3, 4), batch_size=2)
    model = nn.Model(inp, Tokens()(inp))
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(model(x).numpy(), x)
    # and the layers after it keep that batch, as Keras's shapes do
    ids = nn.Input(shape=(4,), batch_size=5, dtype="int32")
    h = nn.layers.Embedding(10, 3)(ids)
    assert h.shape == (5, 4, 3)
    assert nn.layers.Dense(2)(h).shape == (5, 4, 2)

    class Rows(nn.layers.Layer):  # reshapes to the model's fixed batch times its steps
        def call(self, x):
            return em.reshape(x, [5 * 4, 3])

    assert Rows()(h).shape == (20, 3)


def test_a_call_that_requires_training_gets_false_outside_any_training_context():
    """``def call(self, x, training)`` with no default: tf.keras and Keras 3 run it in
    inference when no call says otherwise, and a Sequential's build must not call it without
    the flag (keras-io's Switch Transformer; ember raised "missing 'training'")."""
    seen = []

    class Block(nn.layers.Layer):
        def call(self, x, training):
            seen.append(training)
            return x * 2.0

    x = np.ones((1, 2), np.float32)
    Block()(x)
    Block()(x, True)
    nn.Sequential([Block()])(x, training=True)
    assert seen[:2] == [False, True] and seen[-1] is True
    assert set(seen[2:-1]) <= {False}  # (the Sequential's build, in inference)


def test_a_layer_that_refuses_long_sequences_still_gets_none_sizes():
    """A position table of 64 rows sliced to the sequence length refuses the wide probe
    (65): the next size (2) shows the axis follows the input, so it is None, as Keras's
    (keras-io FNet: every encoder's shape was (None, 1, 4)); ``output_shape`` is the
    symbolic one, not the last call's sizes."""
    class Positions(nn.layers.Layer):
        def build(self, input_shape):
            self.table = self.add_weight("table", (64, 4))

        def call(self, x):
            n = em.shape(x)[-1]
            return em.zeros_like(em.cast(em.expand_dims(x, -1), "float32")) + self.table[:n]

    inp = nn.Input(shape=(None,), dtype="int64")
    layer = Positions()
    out = layer(inp)
    assert out.shape == (None, None, 4)
    model = nn.Model(inp, out)
    assert model(np.zeros((3, 7), np.int64)).shape == (3, 7, 4)
    assert layer.output_shape == (None, None, 4)

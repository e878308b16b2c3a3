"""Mixed precision: dtype policies, autocast, LossScaleOptimizer and fit, as Keras 3.

Every test runs on ``cpu`` and on the strict GPU double (``strict-gpu``), where the compute
dtype is float16; bfloat16 runs on the CPU only (cupy has none), so the tests whose names
say bfloat16 are skipped on GPU backends by the backend fixture, and one test checks the
refusal by name. The loss scale and its skip-on-overflow must stay on the device: on the
double, a step makes no sync and no scalar read, and a traced step replays one plan whether
its gradients overflow or not.
"""

import contextlib

import numpy as np
import pytest

import ember.core as em
from ember import checkpoint, graph, nn, tape
from ember.core import extend
from ember.core.testing import simulated_gpus

MP = nn.mixed_precision
LSO = MP.LossScaleOptimizer


@pytest.fixture(autouse=True)
def _float32_after(backend):
    yield
    MP.set_global_policy("float32")  # the global policy is per thread: never leak it


def _counters(backend):
    return getattr(em.get_device(backend).backend, "counters", None)


class _OpDtypes:
    """A recorder of (op name, input dtypes)."""

    def __init__(self):
        self.ops = []

    def record_op(self, op, inputs, attrs, outputs):
        self.ops.append((op.name, tuple(str(t.dtype) for t in inputs)))

    def variable_read(self, variable, value):
        pass


# --- policies ------------------------------------------------------------------------------
def test_policy_names_give_keras_dtypes():
    assert (MP.Policy("mixed_float16").compute_dtype,
            MP.Policy("mixed_float16").variable_dtype) == ("float16", "float32")
    assert (MP.Policy("mixed_bfloat16").compute_dtype,
            MP.Policy("mixed_bfloat16").variable_dtype) == ("bfloat16", "float32")
    assert (MP.Policy("float64").compute_dtype, MP.Policy("float64").variable_dtype) == (
        "float64", "float64")
    assert repr(MP.Policy("mixed_float16")) == '<DTypePolicy "mixed_float16">'
    assert MP.Policy("float32") == MP.DTypePolicy("float32") != MP.Policy("float64")
    with pytest.raises(ValueError, match="mixed_float32"):
        MP.Policy("mixed_float32")
    with pytest.raises(TypeError, match="name must be a string"):
        MP.Policy(16)
    policy = MP.Policy("mixed_float16")
    assert policy.convert_input(np.ones(2, np.float32), True, "float16").dtype == em.float16
    assert policy.convert_input(np.ones(2, np.int32), True, "float16").dtype == em.int32
    assert policy.convert_input(np.ones(2, np.float32), False, "float16").dtype == em.float32
    assert MP.DTypePolicy.from_config(policy.get_config()) == policy


def test_the_global_policy_is_float32_until_set_and_takes_names_or_policies():
    assert MP.global_policy() == MP.Policy("float32")
    MP.set_global_policy("mixed_float16")
    assert MP.global_policy().name == "mixed_float16"
    assert MP.Policy().name == "mixed_float16"  # None: the global policy's name
    MP.set_global_policy(MP.Policy("float64"))
    assert MP.dtype_policy().compute_dtype == "float64"
    with pytest.raises(ValueError, match="policy must be"):
        MP.set_global_policy(3)


def test_layers_take_the_global_policy_and_dtype_overrides_it():
    before = nn.layers.Dense(2)
    MP.set_global_policy("mixed_float16")
    dense = nn.layers.Dense(3)
    out_layer = nn.layers.Activation("softmax", dtype="float32")
    x = np.ones((2, 4), np.float32)
    y = dense(x)
    assert dense.dtype_policy == MP.Policy("mixed_float16")
    assert (dense.compute_dtype, dense.variable_dtype) == ("float16", "float32")
    assert dense.dtype == em.float32 and dense.kernel.dtype == em.float32
    assert y.dtype == em.float16
    assert out_layer(y).dtype == em.float32
    assert before.dtype_policy.name == "float32" and before(x).dtype == em.float32
    assert nn.layers.Dense(2, dtype=MP.Policy("float64"))(x).dtype == em.float64
    config = dense.get_config()
    assert config["dtype"] == "mixed_float16"
    MP.set_global_policy("float32")
    again = nn.layers.Dense.from_config(config)
    assert again.dtype_policy.name == "mixed_float16"


def test_symbolic_outputs_carry_the_compute_dtype():
    MP.set_global_policy("mixed_float16")
    inputs = nn.Input(shape=(4,))
    x = nn.layers.Dense(3)(inputs)
    out = nn.layers.Activation("linear", dtype="float32")(x)
    assert (x.dtype.name, out.dtype.name) == ("float16", "float32")


@pytest.mark.parametrize("kind", ["functional", "sequential"])
def test_a_mixed_model_leaves_casting_to_its_layers(kind):
    """As Keras 3's Functional: a float32 first layer sees its inputs unrounded."""
    MP.set_global_policy("mixed_float16")
    seen = []
    first = nn.layers.Lambda(lambda t: (seen.append(t.numpy()), t)[1], dtype="float32")
    if kind == "functional":
        inputs = nn.Input(shape=(3,))
        model = nn.Model(inputs, nn.layers.Dense(2)(first(inputs)))
    else:
        model = nn.Sequential([first, nn.layers.Dense(2)])
    x = np.array([[1.0001, 2.0, 3.0]], np.float32)
    assert model(x).dtype == em.float16
    np.testing.assert_array_equal(seen[-1], x)  # float16 would have made 1.0001 into 1.0


def test_a_mixed_layer_computes_in_float16_on_cast_variables():
    MP.set_global_policy("mixed_float16")
    dense = nn.layers.Dense(3, activation="relu")
    x = np.random.default_rng(0).uniform(-1, 1, (4, 5)).astype(np.float32)
    dense.build((4, 5))
    log = _OpDtypes()
    with extend.recording_to(log):
        y = dense(x)
    products = [dt for name, dt in log.ops if name == "dense"]  # (product, bias: one op)
    assert products == [("float16", "float16", "float16")], log.ops
    want = np.maximum(x.astype(np.float16).astype(np.float32) @ dense.kernel.numpy()
                      + dense.bias.numpy(), 0)
    np.testing.assert_allclose(y.numpy().astype(np.float32), want, rtol=1e-2, atol=1e-3)
    assert dense.kernel.value().dtype == em.float32  # outside call, reads are not cast


def test_gradients_come_back_float32_and_match_a_float32_layer():
    x = np.random.default_rng(1).uniform(-1, 1, (8, 5)).astype(np.float32)
    grads = {}
    for policy in ("float32", "mixed_float16"):
        MP.set_global_policy(policy)
        em.random.set_seed(3)
        layer = nn.layers.Dense(4, activation="tanh")
        with tape.GradientTape() as t:
            loss = em.reduce_sum(em.cast(layer(x), em.float32))
        grads[policy] = t.gradient(loss, layer.trainable_variables)
    assert [g.dtype for g in grads["mixed_float16"]] == [em.float32, em.float32]
    for a, b in zip(grads["mixed_float16"], grads["float32"]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-2, atol=2e-2)


class _Scaled(nn.layers.Layer):
    """A layer with one autocast variable and one that is not, reading both in call."""

    def build(self, input_shape):
        self.w = self.add_weight("w", (input_shape[-1],), initializer="ones")
        self.kept = self.add_weight("kept", (input_shape[-1],), initializer="ones",
                                    autocast=False)

    def call(self, x):
        self.seen = (self.w.value().dtype, self.kept.value().dtype)
        return x * self.w


def test_add_weight_autocast_false_and_a_float32_layer_inside_a_mixed_one():
    MP.set_global_policy("mixed_float16")
    inner32 = _Scaled(dtype="float32")
    inner16 = _Scaled()

    class Outer(nn.layers.Layer):
        def call(self, x):
            return inner32(inner16(x))

    out = Outer()(np.ones((2, 3), np.float32))
    assert inner16.seen == (em.float16, em.float32)
    assert inner32.seen == (em.float32, em.float32)  # the scope follows the inner policy
    assert out.dtype == em.float32


@pytest.mark.parametrize("name", ["BatchNormalization", "LayerNormalization"])
def test_normalization_computes_in_float32_and_returns_float16(name):
    x = np.random.default_rng(2).normal(3.0, 2.0, (16, 4)).astype(np.float32)
    outs = {}
    for policy in ("float32", "mixed_float16"):
        MP.set_global_policy(policy)
        layer = getattr(nn.layers, name)()
        outs[policy] = layer(x, training=True)
        assert {str(v.dtype) for v in layer.variables} == {"float32"}
        if name == "BatchNormalization":
            outs[policy + "_mean"] = layer.moving_mean.numpy()
    assert outs["mixed_float16"].dtype == em.float16
    np.testing.assert_allclose(outs["mixed_float16"].numpy().astype(np.float32),
                               outs["float32"].numpy(), rtol=5e-3, atol=5e-3)
    if name == "BatchNormalization":  # statistics of float16-rounded inputs, kept float32
        np.testing.assert_allclose(outs["mixed_float16_mean"], outs["float32_mean"],
                                   rtol=1e-3)


def test_recurrent_attention_and_embedding_layers_compute_in_float16():
    MP.set_global_policy("mixed_float16")
    x = np.random.default_rng(4).uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    assert nn.layers.LSTM(4)(x).dtype == em.float16
    assert nn.layers.GRU(4, return_sequences=True)(x).dtype == em.float16
    assert nn.layers.Bidirectional(nn.layers.LSTM(2))(x).dtype == em.float16
    assert nn.layers.MultiHeadAttention(2, 4)(x, x).dtype == em.float16
    emb = nn.layers.Embedding(10, 3)
    assert emb(np.array([[1, 2, 3]])).dtype == em.float16 and emb.embeddings.dtype == em.float32


# --- bfloat16 -------------------------------------------------------------------------------
def test_mixed_bfloat16_layers_compute_in_bfloat16_on_the_cpu():
    MP.set_global_policy("mixed_bfloat16")
    dense = nn.layers.Dense(3)
    x = np.random.default_rng(5).uniform(-1, 1, (4, 5)).astype(np.float32)
    with tape.GradientTape() as t:
        y = dense(x)
        loss = em.reduce_sum(em.cast(y, em.float32))
    assert y.dtype == em.bfloat16  # numpy's bfloat16 matmul would have said float32
    (gk, gb) = t.gradient(loss, [dense.kernel, dense.bias])
    assert gk.dtype == em.float32 and gb.dtype == em.float32
    np.testing.assert_allclose(gb.numpy(), [4.0, 4.0, 4.0])


def test_fit_under_mixed_bfloat16_trains_without_loss_scaling():
    MP.set_global_policy("mixed_bfloat16")
    model = _classifier()
    model.compile(optimizer=nn.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy")
    assert not isinstance(model.optimizer, LSO)  # Keras 3 scales float16 only
    x, y = _data()
    hist = model.fit(x, y, batch_size=16, epochs=3, verbose=0)
    assert hist.history["loss"][-1] < hist.history["loss"][0]


def test_a_gpu_refuses_the_bf16_policy_by_name(backend):
    scope = simulated_gpus(1, strict=True) if backend == "/cpu:0" else contextlib.nullcontext()
    with scope, em.device("/gpu:0"):
        MP.set_global_policy("mixed_bfloat16")
        layer = nn.layers.Dense(2)
        with pytest.raises(em.DeviceError, match=r"'mixed_bfloat16'.*/gpu:0.*mixed_float16"):
            layer(em.ones((2, 3)))
        with pytest.raises(em.DeviceError, match="mixed_bfloat16"):
            nn.layers.Embedding(4, 2)(em.constant([[1, 2]]))


# --- LossScaleOptimizer -------------------------------------------------------------------
def test_loss_scale_optimizer_unscales_as_its_inner_optimizer_would_update():
    grads = [np.array([0.3, -1.2], np.float32), np.array([2.0, 0.5], np.float32)]
    plain, wrapped = em.Variable([1.0, -2.0]), em.Variable([1.0, -2.0])
    inner, opt = nn.optimizers.Adam(0.1), LSO(nn.optimizers.Adam(0.1), initial_scale=64.0)
    for g in grads:
        inner.apply_gradients([(em.constant(g), plain)])
        opt.apply_gradients([(em.constant(g * 64.0), wrapped)])
    np.testing.assert_allclose(wrapped.numpy(), plain.numpy(), rtol=1e-6)
    assert int(opt.iterations) == 2 and opt.iterations is opt.inner_optimizer.iterations
    assert float(opt.scale_loss(em.constant(2.0))) == 128.0


def test_setting_iterations_sets_the_inner_optimizers():
    opt = LSO(nn.optimizers.SGD(0.1), initial_scale=1.0)
    step = em.Variable(np.int64(5))
    opt.iterations = step
    assert opt.inner_optimizer.iterations is step and opt.iterations is step
    opt.apply_gradients([(em.constant([1.0]), em.Variable([1.0]))])
    assert int(step) == 6


def test_a_non_finite_step_is_skipped_and_halves_the_scale():
    opt = LSO(nn.optimizers.Adam(0.1), initial_scale=8.0)
    v = em.Variable([1.0, -2.0])
    opt.apply_gradients([(em.constant([float("nan"), 1.0]), v)])  # the first step: skipped
    assert v.numpy().tolist() == [1.0, -2.0] and int(opt.iterations) == 0
    for name in ("m", "v"):  # the slots the skipped step made keep their initial zeros
        assert opt.get_slot(v, name).numpy().tolist() == [0.0, 0.0]
    assert float(opt.dynamic_scale) == 4.0 and int(opt.step_counter) == 0
    opt.apply_gradients([(em.constant([4.0, 4.0]), v)])
    after_one = (v.numpy().copy(), opt.get_slot(v, "m").numpy().copy())
    opt.apply_gradients([(em.constant([float("inf"), 0.0]), v)])
    np.testing.assert_array_equal(v.numpy(), after_one[0])
    np.testing.assert_array_equal(opt.get_slot(v, "m").numpy(), after_one[1])
    assert int(opt.iterations) == 1 and float(opt.dynamic_scale) == 2.0


def test_the_scale_doubles_after_dynamic_growth_steps_finite_steps():
    opt = LSO(nn.optimizers.SGD(0.0), initial_scale=1.0, dynamic_growth_steps=3)
    v = em.Variable([1.0])
    seen = []
    for g in [1.0, 1.0, 1.0, 1.0, float("inf"), 1.0, 1.0, 1.0]:
        opt.apply_gradients([(em.constant([g]), v)])
        seen.append((float(opt.dynamic_scale), int(opt.step_counter)))
    assert seen == [(1.0, 1), (1.0, 2), (2.0, 0), (2.0, 1), (1.0, 0), (1.0, 1), (1.0, 2),
                    (2.0, 0)]


def test_global_step_counts_applied_steps_only():
    opt = LSO(nn.optimizers.SGD(0.1), initial_scale=1.0)
    v, gs = em.Variable([1.0]), em.Variable(np.int64(0))
    for g in (1.0, float("nan"), 1.0):
        opt.apply_gradients([(em.constant([g]), v)], global_step=gs)
    assert int(gs) == 2 and int(opt.iterations) == 2


def test_minimize_and_hyperparameters_go_through_the_inner_optimizer():
    opt = LSO(nn.optimizers.SGD(0.5), initial_scale=1024.0)
    w = em.Variable(3.0)
    loss = opt.minimize(lambda: em.square(w), var_list=[w])
    assert float(loss) == 9.0 and float(w) == pytest.approx(0.0)
    opt.learning_rate = 0.25
    assert float(opt.inner_optimizer.learning_rate) == 0.25
    assert float(opt.learning_rate) == 0.25 and opt.get_slot_names() == []


def test_loss_scale_optimizer_arguments_are_honoured_or_refused_by_name():
    with pytest.raises(ValueError, match="dynamic=False"):
        LSO(nn.optimizers.SGD(), dynamic=False)
    with pytest.raises(ValueError, match="learning_rate"):
        LSO(nn.optimizers.SGD(), learning_rate=0.1)
    with pytest.raises(TypeError, match="not_an_argument"):
        LSO(nn.optimizers.SGD(), not_an_argument=1)
    with pytest.raises(ValueError, match="initial_scale"):
        LSO(nn.optimizers.SGD(), initial_scale=0.0)
    with pytest.raises(ValueError, match="dynamic_growth_steps"):
        LSO(nn.optimizers.SGD(), dynamic_growth_steps=0)
    with pytest.raises(TypeError, match="inner_optimizer"):
        LSO("sgd")
    with pytest.raises(ValueError, match="scaled twice"):
        LSO(LSO(nn.optimizers.SGD()))
    config = LSO(nn.optimizers.Adam(0.01), initial_scale=16.0, dynamic_growth_steps=5,
                 name="lso").get_config()
    again = LSO.from_config(config)
    assert isinstance(again.inner_optimizer, nn.optimizers.Adam)
    assert (again.initial_scale, again.dynamic_growth_steps, again.name) == (16.0, 5, "lso")
    assert float(again.learning_rate) == pytest.approx(0.01)
    with pytest.raises(ValueError, match="os.system"):
        LSO.from_config({**config, "inner_optimizer": {"class_name": "os.system"}})


def _mixed_step(opt, w):
    """A float16 computation of ``w``: its scaled gradient overflows float16 when the
    inputs sum past 65504 / scale."""
    def step(x):
        with tape.GradientTape() as t:
            loss = em.reduce_sum(em.cast(em.multiply(em.cast(w, em.float16), x), em.float32))
            scaled = opt.scale_loss(loss)
        (g,) = t.gradient(scaled, [w])
        opt.apply_gradients([(g, w)])
        return loss
    return step


# finite, finite, overflow, finite, ...: the scale is 1024 (overflow: 1024 * 100 > 65504)
XS = [0.5, 0.25, 100.0, 0.5, 100.0, 0.125]


def _run_steps(traced, backend):
    opt = LSO(nn.optimizers.SGD(0.1), initial_scale=1024.0, dynamic_growth_steps=2)
    w = em.Variable(np.ones(3, np.float32))
    step = _mixed_step(opt, w)
    fn = graph.function(step) if traced else step
    xs = [em.constant(np.full(3, x, np.float16)) for x in XS]
    counters = _counters(backend)
    log = []
    for i, x in enumerate(xs):
        if counters is not None and i == 2:  # after the trace and the variables' move
            counters.reset()
        fn(x)
    if counters is not None:
        log = (counters.syncs, counters.scalar_reads, counters.to_host)
    return w.numpy(), float(opt.dynamic_scale), int(opt.iterations), log, fn


def test_the_loss_scale_lives_on_the_device_eager_and_traced(backend):
    w_eager, scale_eager, it_eager, counted, _ = _run_steps(False, backend)
    # scales: 1024 -> 1024 (1) -> grow to 2048 (2) -> overflow: 1024 -> 1024 (1) ->
    # overflow: 512 -> 512 (1); applied steps: 4
    assert (scale_eager, it_eager) == (512.0, 4)
    want = 1.0 - 0.1 * (0.5 + 0.25 + 0.5 + 0.125)
    np.testing.assert_allclose(w_eager, np.full(3, want, np.float32), rtol=1e-3)
    w_traced, scale_traced, it_traced, counted_traced, fn = _run_steps(True, backend)
    np.testing.assert_array_equal(w_traced, w_eager)
    assert (scale_traced, it_traced) == (scale_eager, it_eager)
    assert fn.experimental_get_tracing_count() <= 2, "a step retraced (a guard failed)"
    assert fn.cache_size() == 1
    if _counters(backend) is not None:  # the strict double: nothing read back per step
        assert counted == (0, 0, 0), counted
        assert counted_traced == (0, 0, 0), counted_traced


def test_a_loss_scale_optimizer_made_on_the_host_moves_to_the_gpu_once(backend):
    def run(traced):
        with em.device("/cpu:0"):  # Keras code builds the optimizer before the device scope
            opt = LSO(nn.optimizers.Adam(0.05), initial_scale=1024.0, dynamic_growth_steps=2)
        with em.device("/gpu:0"):
            w = em.Variable(np.ones(3, np.float32))
            step = _mixed_step(opt, w)
            fn = graph.function(step) if traced else step
            for x in XS:
                fn(em.constant(np.full(3, x, np.float16)))
        assert {v.device for v in opt.variables} == {"/gpu:0"}
        return w.numpy(), float(opt.dynamic_scale), int(opt.iterations), fn

    scope = simulated_gpus(1, strict=True) if backend == "/cpu:0" else contextlib.nullcontext()
    with scope:
        eager = run(False)
        traced = run(True)
    np.testing.assert_array_equal(traced[0], eager[0])
    assert traced[1:3] == eager[1:3] == (512.0, 4)
    assert traced[3].experimental_get_tracing_count() <= 3  # the move, the slots, the plan


# --- fit ----------------------------------------------------------------------------------
def _data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    return x, (x[:, 0] + x[:, 1] > 0).astype(np.int32)


def _classifier():
    em.random.set_seed(7)
    inputs = nn.Input(shape=(6,))
    x = nn.layers.Dense(16, activation="relu")(inputs)
    x = nn.layers.Dense(2)(x)
    outputs = nn.layers.Activation("softmax", dtype="float32")(x)
    return nn.Model(inputs, outputs)


def _fit(policy, backend, **compile_kw):
    MP.set_global_policy(policy)
    model = _classifier()
    model.compile(optimizer=nn.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy",
                  **compile_kw)
    x, y = _data()
    x, y = em.constant(x), em.constant(y)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)  # traces, moves
    counters = _counters(backend)
    if counters is not None:
        counters.reset()
    hist = model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    syncs = None if counters is None else counters.syncs
    return model, hist.history["loss"], syncs


def test_fit_wraps_the_optimizer_under_mixed_float16_and_trains_like_float32(backend):
    model, losses, syncs = _fit("mixed_float16", backend)
    assert isinstance(model.optimizer, LSO) and model.optimizer.name == "loss_scale_optimizer"
    assert isinstance(model.optimizer.inner_optimizer, nn.optimizers.SGD)
    assert int(model.optimizer.iterations) == 12  # 4 batches x 3 epochs, none skipped
    assert float(model.optimizer.dynamic_scale) == 2.0 ** 15
    ref, ref_losses, ref_syncs = _fit("float32", backend)
    assert not isinstance(ref.optimizer, LSO)
    np.testing.assert_allclose(losses, ref_losses, rtol=2e-2)
    assert syncs == ref_syncs, "the loss scale made fit read the device"
    plain, _, _ = _fit("mixed_float16", backend, auto_scale_loss=False)
    assert not isinstance(plain.optimizer, LSO)


# --- checkpoints --------------------------------------------------------------------------
def _train(opt, w, gs):
    for g in gs:
        opt.apply_gradients([(em.constant(np.array(g, np.float32)), w)])


def test_a_checkpoint_round_trips_the_scale_the_counters_and_the_inner_slots(tmp_path):
    steps = [[1.0, 2.0], [float("inf"), 0.0], [3.0, -1.0], [0.5, 0.5]]
    w = em.Variable(np.array([1.0, -1.0], np.float32))
    opt = LSO(nn.optimizers.Adam(0.1), initial_scale=64.0, dynamic_growth_steps=2)
    _train(opt, w, steps[:3])
    path = checkpoint.Checkpoint(w=w, optimizer=opt).save(str(tmp_path / "ckpt"))
    w2 = em.Variable(np.zeros(2, np.float32))
    opt2 = LSO(nn.optimizers.Adam(0.1), initial_scale=64.0, dynamic_growth_steps=2)
    checkpoint.Checkpoint(w=w2, optimizer=opt2).restore(path)  # slots restored when made
    assert (float(opt2.dynamic_scale), int(opt2.step_counter), int(opt2.iterations)) == (
        float(opt.dynamic_scale), int(opt.step_counter), int(opt.iterations))
    _train(opt, w, steps[3:])
    _train(opt2, w2, steps[3:])
    np.testing.assert_array_equal(w2.numpy(), w.numpy())
    for name in ("m", "v"):
        np.testing.assert_array_equal(opt2.get_slot(w2, name).numpy(),
                                      opt.get_slot(w, name).numpy())
    assert float(opt2.dynamic_scale) == float(opt.dynamic_scale) == 64.0

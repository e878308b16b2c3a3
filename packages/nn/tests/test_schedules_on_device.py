"""A learning-rate schedule is computed with ops from the optimizer's ``iterations`` on its
device (as Keras 3 computes it): no host read a step, so a GPU step does not wait for the
device and a traced step replays at every step. Before, the step was read to the host:
``graph.function`` failed its guard at every call and fell back to eager after a few
traces (so did ``fit``), and a GPU step synced."""

import warnings

import numpy as np
import pytest

import ember.core as em
from ember import graph, nn, tape

S = nn.optimizers.schedules
STEPS = (0, 3, 5, 10, 11, 15, 21, 40)
# Keras 3.15.1 (torch backend): float(schedule(step)) for STEPS
KERAS = {
    "exponential": (S.ExponentialDecay(0.1, 10, 0.5), [
        0.10000000149011612, 0.08122523874044418, 0.0707106813788414, 0.05000000074505806,
        0.046651650220155716, 0.0353553406894207, 0.023325826972723007,
        0.0062500000931322575]),
    "staircase": (S.ExponentialDecay(0.1, 10, 0.5, staircase=True), [
        0.10000000149011612, 0.10000000149011612, 0.10000000149011612, 0.05000000074505806,
        0.05000000074505806, 0.05000000074505806, 0.02500000037252903,
        0.0062500000931322575]),
    "piecewise": (S.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1]), [
        1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.10000000149011612, 0.10000000149011612]),
    "cosine_warmup": (S.CosineDecay(0.0, 10, warmup_target=1.0, warmup_steps=5), [
        0.0, 0.6000000238418579, 1.0, 0.4999999701976776, 0.3454914093017578, 0.0, 0.0,
        0.0]),
    "cosine_alpha": (S.CosineDecay(0.2, 10, alpha=0.1), [
        0.20000000298023224, 0.1629006713628769, 0.10999999195337296, 0.020000001415610313,
        0.020000001415610313, 0.020000001415610313, 0.020000001415610313,
        0.020000001415610313]),
    "inverse_time": (S.InverseTimeDecay(0.1, 10, 0.5), [
        0.10000000149011612, 0.08695652335882187, 0.07999999821186066, 0.06666667014360428,
        0.06451613456010818, 0.05714285746216774, 0.04878048971295357, 0.03333333507180214]),
    "inverse_time_staircase": (S.InverseTimeDecay(0.1, 10, 0.5, staircase=True), [
        0.10000000149011612, 0.10000000149011612, 0.10000000149011612, 0.06666667014360428,
        0.06666667014360428, 0.06666667014360428, 0.05000000074505806, 0.03333333507180214]),
    "polynomial": (S.PolynomialDecay(0.1, 10, end_learning_rate=0.01, power=2.0), [
        0.10000000149011612, 0.054099999368190765, 0.032499998807907104, 0.009999999776482582,
        0.009999999776482582, 0.009999999776482582, 0.009999999776482582,
        0.009999999776482582]),
    "polynomial_cycle": (S.PolynomialDecay(0.1, 10, power=0.5, cycle=True), [
        0.10000000149011612, 0.0836823359131813, 0.07073996961116791, 9.999999747378752e-05,
        0.06711495667695999, 0.050050001591444016, 0.05481748655438423, 9.999999747378752e-05]),
    "restarts": (S.CosineDecayRestarts(0.1, 10, t_mul=2.0, m_mul=0.5, alpha=0.1), [
        0.10000000149011612, 0.08145033568143845, 0.05499999597668648, 0.055000003427267075,
        0.05472299084067345, 0.04840990528464317, 0.028980225324630737, 0.029204953461885452]),
    "restarts_even": (S.CosineDecayRestarts(0.1, 7, t_mul=1.0, m_mul=0.8), [
        0.10000000149011612, 0.061126042157411575, 0.018825501203536987, 0.04890082776546478,
        0.031099168583750725, 0.06083101034164429, 0.05120000243186951, 0.006168737541884184]),
    "cosine": (S.CosineDecay(0.1, 10), [
        0.10000000149011612, 0.07938926666975021, 0.04999999701976776, 0.0, 0.0, 0.0, 0.0, 0.0]),
}


@pytest.mark.parametrize("name", sorted(KERAS))
def test_a_schedule_on_a_step_tensor_is_keras_float32_on_the_device(name):
    schedule, keras = KERAS[name]
    got = []
    for step in STEPS:
        rate = schedule(em.constant(np.int64(step)))
        assert isinstance(rate, em.Tensor) and rate.dtype == em.float32 and not rate.shape
        got.append(float(rate))
    np.testing.assert_allclose(got, keras, rtol=1e-6, atol=1e-12)  # a GPU's cos: 2 ulp
    # a Python int still gives a Python float (float64 arithmetic), within float32 of it
    np.testing.assert_allclose([schedule(s) for s in STEPS], keras, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(KERAS))
def test_a_schedule_of_an_array_of_steps_gives_each_steps_rate(name):
    """Keras's schedules take an array of steps (the overfitting tutorial plots one over
    np.linspace); ember's refused it ("only 0-dimensional arrays")."""
    schedule, keras = KERAS[name]
    for steps in (np.array(STEPS), list(STEPS)):
        rates = schedule(steps)
        assert isinstance(rates, em.Tensor) and rates.dtype == em.float32
        np.testing.assert_allclose(rates.numpy(), keras, rtol=1e-6, atol=1e-12)


def _model_and_step(schedule, optimizer=None):
    rng = np.random.default_rng(0)
    model = nn.Sequential([nn.layers.Dense(4, input_shape=(3,))])
    opt = optimizer(schedule) if optimizer else nn.optimizers.SGD(schedule)
    x = em.constant(rng.standard_normal((5, 3)).astype(np.float32))

    def step():
        with tape.GradientTape() as t:
            loss = em.reduce_mean(em.square(model(x) - 1.0))
        variables = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, variables), variables))
        return loss

    return model, opt, step


@pytest.mark.parametrize("name", ["exponential", "piecewise", "cosine_warmup"])
def test_a_traced_step_with_a_schedule_traces_once_and_steps_as_eager(name):
    schedule = KERAS[name][0]
    eager_model, eager_opt, eager = _model_and_step(schedule)
    traced_model, traced_opt, step = _model_and_step(schedule)
    traced_model.set_weights(eager_model.get_weights())
    traced = graph.function(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the retrace warning would be an error
        for _ in range(12):  # across the piecewise boundary at 10 and the warmup's end
            eager()
            traced()
    assert traced.experimental_get_tracing_count() == 1
    assert int(traced_opt.iterations) == int(eager_opt.iterations) == 12
    for a, b in zip(eager_model.trainable_variables, traced_model.trainable_variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert float(traced_opt.learning_rate) == float(schedule(em.constant(np.int64(12))))


def test_fit_with_a_schedule_stays_traced():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = (x.sum(1, keepdims=True) > 0).astype(np.float32)
    model = nn.Sequential([nn.layers.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile(nn.optimizers.Adam(S.ExponentialDecay(0.05, 4, 0.5)), "binary_crossentropy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert int(model.optimizer.iterations) == 16
    assert float(model.optimizer.learning_rate) == pytest.approx(0.05 * 0.5 ** 4, rel=1e-6)


class _IntsOnly(S.LearningRateSchedule):
    def __call__(self, step):
        return 0.1 if int(step) < 2 else 0.01  # int() of a tensor: it works, on the host


class _Refuses(S.LearningRateSchedule):
    def __call__(self, step):
        if not isinstance(step, int):
            raise TypeError("ints only")
        return 0.5 / (step + 1)


@pytest.mark.parametrize("schedule", [_IntsOnly(), _Refuses()], ids=["host", "refuses"])
def test_a_schedule_that_wants_an_int_is_called_with_the_step_on_the_host(schedule):
    _, opt, step = _model_and_step(schedule)
    for _ in range(3):
        step()
    assert float(opt.learning_rate) == schedule(3)


def test_a_gpu_step_with_a_schedule_reads_nothing_back(backend):
    counters = getattr(em.get_device(backend).backend, "counters", None)
    if counters is None:  # the CPU, or a real GPU (cupy counts no transfers)
        pytest.skip("the transfer counters are the strict GPU double's (its run has them)")
    schedule = S.CosineDecay(0.1, 20, warmup_target=0.2, warmup_steps=3)
    for optimizer in (nn.optimizers.SGD, nn.optimizers.Adam,
                      lambda s: nn.mixed_precision.LossScaleOptimizer(nn.optimizers.SGD(s))):
        _, opt, step = _model_and_step(schedule, optimizer)
        for _ in range(3):
            step()
        counters.reset()
        step()
        step()
        assert counters.syncs == 0 and counters.to_host == 0, (optimizer, counters)


@pytest.mark.parametrize("name", sorted(KERAS))
def test_a_schedule_takes_keras_name_and_round_trips_its_config(name):
    schedule = KERAS[name][0]
    config = schedule.get_config()
    assert "name" in config
    again = type(schedule).from_config({**config, "name": "mine"})
    assert again.name == "mine"
    assert again.get_config() == {**config, "name": "mine"}
    assert [again(s) for s in STEPS] == [schedule(s) for s in STEPS]


def test_schedules_refuse_a_length_that_is_not_positive():
    for make in (lambda: S.ExponentialDecay(0.1, 0, 0.5),
                 lambda: S.InverseTimeDecay(0.1, -1, 1.0), lambda: S.PolynomialDecay(0.1, 0),
                 lambda: S.CosineDecay(0.1, 0), lambda: S.CosineDecayRestarts(0.1, 0),
                 lambda: S.CosineDecayRestarts(0.1, 5, t_mul=0)):
        with pytest.raises(ValueError, match="must be a positive number"):
            make()


def test_an_int_step_gives_the_tensor_steps_float32_number():
    """An int and a tensor step compute the same float32 number (Keras's): the int path
    computed in float64, so CosineDecayRestarts(0.1, 3, t_mul=3.0, ...) at step 363 floored
    a restart index of 4.999... to 4 (0.005; the tensor path and Keras 3 give 0.0611), and
    ExponentialDecay(0.1, 3, 1.1)(12345) was 2.1e169 where float32 overflows to inf."""
    from ember.nn.optimizers import schedules as S

    cases = [(S.CosineDecayRestarts(0.1, 3, t_mul=3.0, m_mul=0.9, alpha=0.05), 363),
             (S.CosineDecayRestarts(0.1, 4, t_mul=1.5, m_mul=0.8, alpha=0.1), 10),
             (S.PolynomialDecay(0.1, 7, end_learning_rate=0.01, power=0.5, cycle=True), 23),
             (S.CosineDecay(0.1, 9, alpha=0.1, warmup_target=0.2, warmup_steps=4), 6),
             (S.InverseTimeDecay(0.1, 3, 0.7, staircase=True), 11)]
    for schedule, step in cases:  # (a GPU's float32 pow may differ in the last place)
        np.testing.assert_allclose(schedule(step), float(schedule(em.constant(step, em.int64))),
                                   rtol=1e-6)
    np.testing.assert_allclose(cases[0][0](363), 0.0611, rtol=1e-3)  # Keras 3.15.1's
    with np.errstate(over="ignore"):
        assert S.ExponentialDecay(0.1, 3, 1.1, staircase=True)(12345) == float("inf")

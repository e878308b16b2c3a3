"""Every hyperparameter of every optimizer is read at every step, in every form
(float, Variable, tensor, zero-argument callable, schedule), as TensorFlow reads them."""

import warnings

import numpy as np
import pytest

import ember.core as em
from ember import nn

O = nn.optimizers

# (optimizer, fixed kwargs, hyperparameter, first value, second value)
CASES = [
    (O.SGD, {}, "learning_rate", 0.1, 0.02),
    (O.SGD, {}, "momentum", 0.5, 0.9),
    (O.SGD, {"nesterov": True}, "momentum", 0.5, 0.9),
    (O.SGD, {}, "clipvalue", 0.3, 0.1),
    (O.SGD, {}, "clipnorm", 0.3, 0.1),
    (O.SGD, {}, "global_clipnorm", 0.3, 0.1),
    (O.Adam, {}, "learning_rate", 0.1, 0.02),
    (O.Adam, {}, "beta_1", 0.5, 0.9),
    (O.Adam, {}, "beta_2", 0.5, 0.99),
    (O.Adam, {}, "epsilon", 0.1, 1.0),
    (O.Adam, {"amsgrad": True}, "beta_2", 0.5, 0.99),
    (O.AdamW, {}, "learning_rate", 0.1, 0.02),
    (O.AdamW, {}, "weight_decay", 0.1, 0.5),
    (O.AdamW, {}, "beta_1", 0.5, 0.9),
    (O.AdamW, {}, "epsilon", 0.1, 1.0),
    (O.RMSProp, {}, "learning_rate", 0.1, 0.02),
    (O.RMSProp, {}, "rho", 0.5, 0.9),
    (O.RMSProp, {}, "momentum", 0.5, 0.9),
    (O.RMSProp, {"centered": True}, "epsilon", 0.1, 1.0),
    (O.Adagrad, {}, "learning_rate", 0.1, 0.02),
    (O.Adagrad, {}, "epsilon", 0.1, 1.0),
    (O.Adamax, {}, "learning_rate", 0.1, 0.02),
    (O.Adamax, {}, "beta_1", 0.5, 0.9),
    (O.Adamax, {}, "beta_2", 0.5, 0.99),
    (O.Adamax, {}, "epsilon", 0.1, 1.0),
    (O.Adadelta, {}, "learning_rate", 0.1, 0.02),
    (O.Adadelta, {}, "rho", 0.5, 0.9),
    (O.Adadelta, {}, "epsilon", 0.1, 1.0),
    (O.Nadam, {}, "learning_rate", 0.1, 0.02),
    (O.Nadam, {}, "beta_1", 0.5, 0.9),
    (O.Nadam, {}, "beta_2", 0.5, 0.99),
    (O.Nadam, {}, "epsilon", 0.1, 1.0),
    (O.Ftrl, {}, "learning_rate", 0.1, 0.02),
    (O.Ftrl, {}, "learning_rate_power", -0.5, -0.2),
    (O.Ftrl, {}, "l1_regularization_strength", 0.1, 0.5),
    (O.Ftrl, {}, "l2_regularization_strength", 0.1, 1.0),
    (O.Ftrl, {}, "l2_shrinkage_regularization_strength", 0.1, 0.5),
    (O.Ftrl, {}, "beta", 0.1, 1.0),
    (O.Lion, {}, "learning_rate", 0.1, 0.02),
    (O.Lion, {"beta_2": 0.5}, "beta_1", 0.1, 0.99),
    (O.Lion, {}, "beta_2", 0.5, 0.99),
    (O.Lamb, {}, "learning_rate", 0.1, 0.02),
    (O.Lamb, {}, "beta_1", 0.5, 0.9),
    (O.Lamb, {}, "beta_2", 0.5, 0.99),
    (O.Lamb, {}, "epsilon", 0.1, 1.0),
    (O.Adafactor, {}, "learning_rate", 0.1, 0.02),
    (O.Adafactor, {}, "beta_2_decay", -0.8, -0.3),
    (O.Adafactor, {}, "epsilon_1", 0.1, 1.0),
    (O.Adafactor, {}, "epsilon_2", 2.0, 5.0),
    (O.Adafactor, {}, "clip_threshold", 0.1, 0.5),
]
GRADS = [np.array([0.3, -1.2, 2.0], np.float32), np.array([-0.7, 0.4, 1.1], np.float32),
         np.array([0.2, 0.9, -1.5], np.float32)]


def _run(opt, between=None):
    v = em.Variable(np.array([1.0, -2.0, 0.5], np.float32))
    for i, g in enumerate(GRADS):
        if i == 1 and between is not None:
            between()
        opt.apply_gradients([(em.constant(g), v)])
    return v.numpy()


def _ids(case):
    return f"{case[0].__name__}-{case[2]}" + ("-" + "-".join(case[1]) if case[1] else "")


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_assigning_a_variable_changes_the_next_step(case):
    cls, kw, name, a, b = case
    lr = {} if name == "learning_rate" else {"learning_rate": 0.05}
    reference = cls(**lr, **kw, **{name: a})
    expected = _run(reference, lambda: setattr(reference, name, b))  # attribute: live too
    unchanged = _run(cls(**lr, **kw, **{name: a}))
    assert not np.allclose(expected, unchanged), "the hyperparameter has no effect"

    var = em.Variable(np.float32(a))
    np.testing.assert_allclose(_run(cls(**lr, **kw, **{name: var}),
                                    lambda: var.assign(np.float32(b))), expected, rtol=1e-5)

    box = [a]
    np.testing.assert_allclose(_run(cls(**lr, **kw, **{name: lambda: box[0]}),
                                    lambda: box.__setitem__(0, b)), expected, rtol=1e-5)

    sched = O.PiecewiseConstantDecay([0], [a, b])  # step 0 -> a, later steps -> b
    np.testing.assert_allclose(_run(cls(**lr, **kw, **{name: sched})), expected, rtol=1e-5)

    np.testing.assert_allclose(_run(cls(**lr, **kw, **{name: em.constant(np.float32(a))})),
                               unchanged, rtol=1e-5)


def test_learning_rate_attribute_is_the_variable_keras_code_assigns():
    opt = O.SGD(0.5)
    opt.learning_rate.assign(0.25)
    v = em.Variable(1.0)
    opt.apply_gradients([(em.constant(1.0), v)])
    np.testing.assert_allclose(float(v), 0.75)
    opt.lr = 0.5  # a plain number replaces the value, the saved variable stays
    assert opt.__checkpoint_children__()["learning_rate"] is opt.learning_rate
    np.testing.assert_allclose(float(opt.learning_rate), 0.5)


def test_user_variable_hyperparameters_are_checkpoint_children():
    beta = em.Variable(np.float32(0.8))
    opt = O.Adam(beta_1=beta)
    assert opt.__checkpoint_children__()["beta_1"] is beta


def test_bad_hyperparameter_is_rejected_by_name():
    with pytest.raises(TypeError, match="momentum"):
        O.SGD(momentum="fast")
    with pytest.raises(ValueError, match="momentum"):
        O.SGD(momentum=-1.0)


def test_callable_hyperparameter_is_read_once_per_step():
    calls = []
    opt = O.Adam(beta_1=lambda: calls.append(1) or 0.9)
    vs = [em.Variable(1.0), em.Variable(2.0), em.Variable(3.0)]
    opt.apply_gradients([(em.constant(1.0), v) for v in vs])
    assert len(calls) == 1


def test_no_warning_for_non_trainable_variables_without_gradient():
    w = em.Variable(1.0)
    stat = em.Variable(0.0, trainable=False)
    opt = O.SGD(0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.apply_gradients([(em.constant(1.0), w), (None, stat)])
    assert float(w) == pytest.approx(0.7) and float(stat) == 0.0


def test_one_warning_per_trainable_variable_not_per_step():
    a, b, c = em.Variable(1.0, name="a"), em.Variable(1.0, name="b"), em.Variable(1.0, name="c")
    opt = O.SGD(0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            opt.apply_gradients([(em.constant(1.0), a), (None, b), (None, c)])
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2 and "'b:0'" in messages[0] and "'c:0'" in messages[1]


def test_a_number_set_as_the_learning_rate_goes_into_the_users_variable_a_trace_reads():
    """``opt.learning_rate = 0.0`` with the user's own Variable as the learning rate assigns
    into it, as Keras does: a new variable would be silently ignored by a traced step."""
    from ember import graph

    lr = em.Variable(0.1)
    w = em.Variable([1.0, 2.0])
    opt = nn.optimizers.SGD(learning_rate=lr)
    step = graph.function(lambda: opt.apply_gradients([(em.ones([2]), w)]))
    step()
    step()  # traced and replayed
    opt.learning_rate = 0.0
    assert opt.learning_rate is lr and float(lr) == 0.0
    before = w.numpy().copy()
    step()
    np.testing.assert_array_equal(w.numpy(), before)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_a_number_set_between_traced_steps_changes_the_next_replay(case):
    """``opt.momentum = 0.9`` between two replays of a traced step: the next replay uses it,
    bit for bit as eagerly (a number read as a Python float was baked into the trace)."""
    from ember import graph

    cls, kw, name, a, b = case
    lr = {} if name == "learning_rate" else {"learning_rate": 0.05}
    eager = cls(**lr, **kw, **{name: a})
    expected = _run(eager, lambda: setattr(eager, name, b))
    traced = cls(**lr, **kw, **{name: a})
    v = em.Variable(np.array([1.0, -2.0, 0.5], np.float32))
    step = graph.function(lambda g: traced.apply_gradients([(g, v)]))
    for i, g in enumerate(GRADS):
        if i == 1:
            setattr(traced, name, b)
        step(em.constant(g))
    np.testing.assert_array_equal(v.numpy(), expected)
    assert name == "learning_rate" or getattr(traced, name) == pytest.approx(b)
    # the first call makes the slots (so the second traces again); the change retraces nothing
    assert step.experimental_get_tracing_count() <= 2


def test_a_hyperparameter_number_reads_as_a_number_and_is_config_not_state():
    opt = O.Adam(beta_1=0.8)
    assert opt.beta_1 == pytest.approx(0.8) and isinstance(opt.beta_1, float)
    assert opt.get_config()["beta_1"] == pytest.approx(0.8)
    assert set(opt.__checkpoint_children__()) == {"iterations", "learning_rate"}


def test_changes_a_traced_step_cannot_follow_are_refused_by_name():
    from ember import graph

    opt = O.SGD(0.1)  # momentum 0: the trace has no momentum slot
    v = em.Variable(np.float32(1.0))
    step = graph.function(lambda: opt.apply_gradients([(em.constant(np.float32(1.0)), v)]))
    step()
    with pytest.raises(ValueError, match="momentum changed from 0.0 to 0.9 after a traced"):
        opt.momentum = 0.9
    with pytest.raises(ValueError, match="learning_rate cannot be replaced by Variable"):
        opt.learning_rate = em.Variable(0.5)
    opt.learning_rate = 0.5  # a number is assigned into what the trace reads
    step()
    assert float(v) == pytest.approx(1.0 - 0.1 - 0.5)
    eager = O.SGD(0.1)
    eager.apply_gradients([(em.constant(np.float32(1.0)), em.Variable(np.float32(1.0)))])
    eager.momentum = 0.9  # eagerly nothing was traced: the next step makes the slot

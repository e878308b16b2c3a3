"""compile/fit/evaluate/predict for functional models of several inputs and outputs, in
Keras's forms: losses, loss weights and metrics per output (one for all, a list, a dict
by output name), targets and inputs as lists or dicts by name; the weighted loss and its
gradients checked against a hand-written GradientTape step."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn, tape

L = nn.layers
RNG = np.random.default_rng(0)


def _model():
    a = nn.Input(shape=(3,), name="a")
    b = nn.Input(shape=(2,), name="b")
    x = L.concatenate([a, b])
    x = L.Dense(4, activation="tanh", name="hidden")(x)
    return nn.Model([a, b], [L.Dense(1, name="score")(x), L.Dense(3, name="kind")(x)])


def _data(n=16):
    xa = RNG.standard_normal((n, 3)).astype(np.float32)
    xb = RNG.standard_normal((n, 2)).astype(np.float32)
    score = RNG.standard_normal((n, 1)).astype(np.float32)
    kind = RNG.integers(0, 3, n)
    return xa, xb, score, kind


def test_names_come_from_inputs_and_output_layers():
    model = _model()
    assert model.input_names == ["a", "b"]
    assert model.output_names == ["score", "kind"]
    xa, xb, _, _ = _data(4)
    by_list, by_name = model([xa, xb]), model({"b": xb, "a": xa})
    assert_allclose(by_list[1].numpy(), by_name[1].numpy())
    with pytest.raises(ValueError, match=r"needs the inputs' names \['a', 'b'\]; missing "
                                         r"\['b'\] \(got \['a', 'c'\]\)"):
        model({"a": xa, "c": xb})


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_one_step_is_the_weighted_sum_of_the_output_losses(run_eagerly):
    xa, xb, score, kind = _data(8)
    model = _model()
    model.compile(optimizer=nn.optimizers.SGD(0.1),
                  loss={"score": "mse", "kind": nn.losses.SparseCategoricalCrossentropy(
                      from_logits=True)},
                  loss_weights={"kind": 0.25}, run_eagerly=run_eagerly)
    twin = _model()
    twin.set_weights(model.get_weights())
    # the step by hand: mse(score) + 0.25 * crossentropy(kind)
    with tape.GradientTape() as t:
        s, k = twin([xa, xb])
        want_parts = (em.reduce_mean(em.square(s - score)),
                      em.reduce_mean(nn.losses.SparseCategoricalCrossentropy(
                          from_logits=True)(kind, k)))
        want = want_parts[0] + 0.25 * want_parts[1]
    grads = t.gradient(want, twin.trainable_variables)
    for v, g in zip(twin.trainable_variables, grads):
        v.assign_sub(0.1 * g)
    logs = model.fit({"a": xa, "b": xb}, {"score": score, "kind": kind}, batch_size=8,
                     shuffle=False, verbose=0).history
    assert_allclose(logs["loss"][0], float(want), rtol=1e-5)
    assert_allclose(logs["kind_loss"][0], float(want_parts[1]), rtol=1e-5)
    for got, exp in zip(model.get_weights(), twin.get_weights()):
        assert_allclose(got, exp, rtol=1e-5, atol=1e-6)


def test_fit_evaluate_predict_with_lists_dicts_metrics_and_validation():
    xa, xb, score, kind = _data(32)
    model = _model()
    model.compile(optimizer=nn.optimizers.Adam(0.01),
                  loss=["mse", nn.losses.SparseCategoricalCrossentropy(from_logits=True)],
                  metrics={"kind": ["accuracy"], "score": "mae"})
    assert model.metrics_names == ["loss", "score_loss", "kind_loss", "score_mae",
                                   "kind_accuracy"]
    h = model.fit([xa, xb], [score, kind], batch_size=8, epochs=3, verbose=0,
                  validation_split=0.25)
    # sorted by name, as Keras 3 logs them (its _pythonify_logs)
    assert list(h.history) == ["kind_accuracy", "kind_loss", "loss", "score_loss",
                               "score_mae", "val_kind_accuracy", "val_kind_loss", "val_loss",
                               "val_score_loss", "val_score_mae"]
    assert h.history["loss"][-1] < h.history["loss"][0]
    for epoch in range(3):  # the total is the sum of the parts (weights 1)
        assert_allclose(h.history["loss"][epoch], h.history["score_loss"][epoch] +
                        h.history["kind_loss"][epoch], rtol=1e-5)
    res = model.evaluate({"a": xa, "b": xb}, {"score": score, "kind": kind}, batch_size=8,
                         return_dict=True)
    s, k = model.predict({"a": xa, "b": xb}, batch_size=8)
    assert_allclose(res["score_mae"], np.abs(s - score).mean(), rtol=1e-5)
    assert_allclose(res["kind_accuracy"], (k.argmax(1) == kind).mean(), rtol=1e-6)
    as_list = model.evaluate([xa, xb], [score, kind], batch_size=8)
    assert_allclose(as_list, [res[k] for k in model.metrics_names], rtol=1e-6)


def test_one_loss_for_every_output_and_outputs_without_a_loss():
    xa, xb, score, _ = _data(8)
    model = _model()
    model.compile(optimizer="sgd", loss={"score": "mse"})  # kind: no loss, no target
    logs = model.evaluate([xa, xb], {"score": score}, return_dict=True)
    # one output with a loss: its loss is `loss`, no `score_loss` (Keras 3.15.1's keys)
    assert list(logs) == ["loss"]
    s, _ = model.predict([xa, xb])
    assert_allclose(logs["loss"], float(np.mean((s - score) ** 2)), rtol=1e-5)
    both = _model()
    both.compile(optimizer="sgd", loss="mse", metrics=["mae"])  # each output gets its own
    assert both.metrics_names == ["loss", "score_loss", "kind_loss", "score_mae", "kind_mae"]
    target = [score, np.zeros((8, 3), np.float32)]
    logs = both.evaluate([xa, xb], target, return_dict=True)
    assert_allclose(logs["loss"], logs["score_loss"] + logs["kind_loss"], rtol=1e-5)


def test_sample_weights_apply_to_every_output():
    xa, xb, score, kind = _data(8)
    w = np.linspace(0.0, 2.0, 8).astype(np.float32)
    model = _model()
    model.compile(optimizer="sgd", loss=["mse", nn.losses.SparseCategoricalCrossentropy(
        from_logits=True)])
    logs = model.evaluate([xa, xb], [score, kind], sample_weight=w, return_dict=True)
    s, _ = model.predict([xa, xb])
    want = float(np.sum(((s - score) ** 2).mean(1) * w) / 8)
    assert_allclose(logs["score_loss"], want, rtol=1e-5)


def test_one_output_models_take_loss_weights_as_keras_3():
    """Keras 3.15.1 weighs a one-output model's loss by ``loss_weights`` (0.5: half the
    loss, 0.2251 against 0.4502 in its run); a number, a list of one or a dict of one."""
    x = RNG.standard_normal((6, 3)).astype(np.float32)
    y = RNG.standard_normal((6, 1)).astype(np.float32)
    inp = L.Input((3,))
    model = nn.Model(inp, L.Dense(1, name="out")(inp))
    model.compile(loss="mse")
    full = model.evaluate(x, y, verbose=0)
    for weights in (0.5, [0.5], {"out": 0.5}):
        model.compile(loss="mse", loss_weights=weights)
        assert_allclose(model.evaluate(x, y, verbose=0), 0.5 * full, rtol=1e-6)
    with pytest.raises(ValueError, match="names no output"):
        model.compile(loss="mse", loss_weights={"other": 0.5})


def test_per_output_arguments_are_checked_by_name():
    model = _model()
    with pytest.raises(ValueError, match=r"loss is a list of 1, but the model has 2 outputs "
                                         r"\['score', 'kind'\]"):
        model.compile(loss=["mse"])
    with pytest.raises(ValueError, match=r"loss for \['typo'\], which are not among its "
                                         r"outputs"):
        model.compile(loss={"typo": "mse"})
    with pytest.raises(ValueError, match=r"loss_weights for \['typo'\]"):
        model.compile(loss="mse", loss_weights={"typo": 2.0})
    with pytest.raises(ValueError, match="a loss weight must be a number, got 'big'"):
        model.compile(loss="mse", loss_weights=["big", 1.0])
    shared = nn.metrics.MeanAbsoluteError()
    with pytest.raises(ValueError, match=r"the metric object 'mean_absolute_error' is given "
                                         r"for outputs 'score' and 'kind'"):
        model.compile(loss="mse", metrics=[shared])
    assert shared.name == "mean_absolute_error"  # a failed compile renamed nothing
    model.compile(loss="mse")
    xa, xb, score, kind = _data(8)
    with pytest.raises(ValueError, match=r"targets for \['typo'\], which are not among its "
                                         r"outputs"):
        model.evaluate([xa, xb], {"score": score, "typo": kind})
    with pytest.raises(ValueError, match=r"output 'kind' has a loss but no target"):
        model.evaluate([xa, xb], {"score": score})
    with pytest.raises(ValueError, match=r"the targets hold different numbers of examples"):
        model.evaluate([xa, xb], [score, kind[:4]])


def test_one_output_models_refuse_the_per_output_forms_by_name():
    model = nn.Sequential([L.Dense(1, input_shape=(3,))])
    with pytest.raises(ValueError, match="loss_weights has 2 entries, but the model has one "
                                         "output"):
        model.compile(loss="mse", loss_weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="a list of losses .* needs a functional model with "
                                         "several outputs"):
        model.compile(loss=["mse", "mae"])
    model.compile(loss=["mse"])  # a list of one is its loss, as Keras 3 takes it
    with pytest.raises(ValueError, match="metrics per output .* need a functional model"):
        model.compile(loss="mse", metrics={"dense": "mae"})
    model.compile(loss="mse")
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    with pytest.raises(ValueError, match="y is a list of 2 arrays, one per output, but the "
                                         "model has one output"):
        model.evaluate(x, [np.zeros((4, 1)), np.zeros((4, 1))])


def test_the_total_loss_counts_examples_when_the_last_batch_is_short():
    # it counted each batch as one example: loss was no longer the weighted sum of the parts
    xa, xb, score, kind = _data(10)
    model = _model()
    model.compile(optimizer="sgd", loss=["mse", nn.losses.SparseCategoricalCrossentropy(
        from_logits=True)], loss_weights=[1.0, 2.0])
    logs = model.evaluate([xa, xb], [score, kind], batch_size=8, return_dict=True)
    assert_allclose(logs["loss"], logs["score_loss"] + 2.0 * logs["kind_loss"], rtol=1e-5)
    s, _ = model.predict([xa, xb])
    assert_allclose(logs["score_loss"], ((s - score) ** 2).mean(), rtol=1e-5)


def test_names_are_unique_and_dict_inputs_need_unique_names():
    a, b = nn.Input(shape=(2,)), nn.Input(shape=(2,))
    shared, head = L.Dense(1, name="dense"), L.Dense(1, name="dense_1")
    model = nn.Model([a, b], [shared(a), shared(b), head(a)])
    names = model.output_names
    assert len(set(names)) == 3 and names[2] == "dense_1"
    c, d = nn.Input(shape=(1,), name="input_2"), nn.Input(shape=(1,))
    two = nn.Model([c, d], L.concatenate([c, d]))
    assert two.input_names == ["input_2", "input_3"]
    e, f = nn.Input(shape=(1,), name="x"), nn.Input(shape=(1,), name="x")
    with pytest.raises(ValueError, match=r"inputs named \['x', 'x'\]: each name must be "
                                         r"unique"):
        nn.Model([e, f], L.concatenate([e, f]))


def test_add_loss_alone_trains_a_model_of_several_outputs():
    class Penalty(L.Layer):
        def call(self, x):
            self.add_loss(em.reduce_mean(em.square(x)))
            return x

    a = nn.Input(shape=(3,))
    h = Penalty()(L.Dense(2)(a))
    model = nn.Model(a, [h, Penalty()(L.Dense(1)(h))])  # every kernel has a gradient
    model.compile(optimizer=nn.optimizers.SGD(0.1))
    x = RNG.standard_normal((16, 3)).astype(np.float32)
    losses = model.fit(x, batch_size=8, epochs=3, verbose=0).history["loss"]
    assert losses[-1] < losses[0]


def test_one_output_in_a_list_is_one_output_and_metrics_need_their_target():
    a = nn.Input(shape=(3,))
    single = nn.Model(a, [L.Dense(1)(a)])
    single.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x = RNG.standard_normal((8, 3)).astype(np.float32)
    logs = single.evaluate(x, np.zeros((8, 1)), return_dict=True)
    assert set(logs) == {"loss", "mae"}
    model = _model()
    model.compile(optimizer="sgd", loss={"score": "mse"}, metrics={"kind": ["accuracy"]},
                  loss_weights=[np.float32(0.5), 1])
    xa, xb, score, _ = _data(8)
    with pytest.raises(ValueError, match=r"output 'kind' has the metric 'kind_accuracy' but "
                                         r"no target"):
        model.evaluate([xa, xb], {"score": score})
    s, k = model.predict_on_batch({"a": xa, "b": xb})
    assert s.shape == (8, 1) and k.shape == (8, 3)

"""fit/evaluate weigh examples as Keras 3 does: ``class_weight`` (a weight per class, read
from the targets), ``sample_weight`` per output (a list or a dict by output name),
``[y, None]`` targets for outputs without a loss, and losses and metrics masked over
padded steps (a mask carried by the model's output). Each is checked against the same
number written by hand; traced fit stays traced."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn

L = nn.layers
RNG = np.random.default_rng(7)


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _classifier():
    model = nn.Sequential([L.Dense(3, input_shape=(4,))])
    # SGD(0): every step leaves the weights alone, so predict() gives what fit saw
    model.compile(nn.optimizers.SGD(0.0),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def _class_data(n=24):
    x = RNG.standard_normal((n, 4)).astype(np.float32)
    return x, RNG.integers(0, 3, n)


CW = {0: 1.0, 1: 3.0, 2: 0.25}


def _weighted_ce(model, x, y, w):
    per = -_log_softmax(model.predict(x))[np.arange(len(y)), y]
    return float((per * w).sum() / len(y))


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_class_weight_weighs_each_example_by_its_class(run_eagerly):
    x, y = _class_data()
    model = _classifier()
    model.run_eagerly = run_eagerly
    w = np.array([CW[c] for c in y])
    want = _weighted_ce(model, x, y, w)
    plain = model.fit(x, y, batch_size=8, shuffle=False, verbose=0).history["loss"][0]
    weighted = model.fit(x, y, batch_size=8, shuffle=False, verbose=0,
                         class_weight=CW).history["loss"][0]
    assert_allclose(weighted, want, rtol=1e-5)
    assert not np.isclose(plain, weighted, rtol=1e-3), "class_weight changed nothing"
    # the same weights given as sample_weight, and one-hot targets read by their argmax
    same = model.fit(x, y, batch_size=8, shuffle=False, verbose=0, sample_weight=w)
    assert_allclose(same.history["loss"][0], want, rtol=1e-5)
    onehot = nn.Sequential([L.Dense(3, input_shape=(4,))])
    onehot.set_weights(model.get_weights())
    onehot.compile(nn.optimizers.SGD(0.0), nn.losses.CategoricalCrossentropy(from_logits=True))
    hist = onehot.fit(x, np.eye(3, dtype=np.float32)[y], batch_size=8, verbose=0,
                      class_weight=CW)
    assert_allclose(hist.history["loss"][0], want, rtol=1e-5)


def test_class_weight_on_an_iterable_of_batches_stays_traced():
    x, y = _class_data()
    model = _classifier()
    want = _weighted_ce(model, x, y, np.array([CW[c] for c in y]))
    batches = [(x[i:i + 8], em.constant(y[i:i + 8])) for i in range(0, 24, 8)]  # a dataset's
    hist = model.fit(batches, epochs=2, verbose=0, class_weight={"1": 3.0, 0: 1, 2: 0.25})
    assert_allclose(hist.history["loss"], [want, want], rtol=1e-5)
    step = model._ember.extra["traced_steps"]["train_step"][1]
    assert step.experimental_get_tracing_count() == 1 and step.cache_size() == 1


def test_class_weight_leaves_validation_unweighted_and_unknown_classes_at_one():
    x, y = _class_data(32)
    model = _classifier()
    w = np.array([{1: 4.0}.get(c, 1.0) for c in y])
    hist = model.fit(x, y, batch_size=8, shuffle=False, verbose=0, class_weight={1: 4.0},
                     validation_split=0.25)
    assert_allclose(hist.history["loss"], [_weighted_ce(model, x[:24], y[:24], w[:24])],
                    rtol=1e-5)
    assert_allclose(hist.history["val_loss"],
                    [_weighted_ce(model, x[24:], y[24:], np.ones(8))], rtol=1e-5)


def test_class_weight_is_refused_by_name_where_keras_refuses_it():
    x, y = _class_data(8)
    model = _classifier()
    with pytest.raises(ValueError, match="class_weight and sample_weight"):
        model.fit(x, y, class_weight=CW, sample_weight=np.ones(8), verbose=0)
    with pytest.raises(ValueError, match="class_weight and sample_weight"):
        model.fit([(x, y, np.ones(8))], class_weight=CW, verbose=0)
    for bad, what in (({-1: 2.0}, "class indices"), ({1.5: 2.0}, "class indices"),
                      ({0: "big"}, "finite number"), ({0: float("nan")}, "finite number"),
                      ([1.0, 2.0], "dict"), ({}, "empty")):
        with pytest.raises(ValueError, match=what):
            model.fit(x, y, class_weight=bad, verbose=0)
    multi = _two_outputs()
    multi.compile(loss="mse")
    with pytest.raises(ValueError, match=r"single output.*\['score', 'kind'\]"):
        multi.fit(x, [y, y], class_weight=CW, verbose=0)
    with pytest.raises(ValueError, match="ids per step"):
        model.fit(x, np.zeros((8, 5), np.int64), class_weight=CW, verbose=0)


# --- several outputs: per-output sample weights and targets without a loss --------------

def _two_outputs():
    inp = nn.Input(shape=(4,), name="x")
    h = L.Dense(5, activation="tanh", name="hidden")(inp)
    return nn.Model(inp, [L.Dense(1, name="score")(h), L.Dense(3, name="kind")(h)])


def _multi_data(n=16):
    x = RNG.standard_normal((n, 4)).astype(np.float32)
    return x, RNG.standard_normal((n, 1)).astype(np.float32), RNG.integers(0, 3, n)


def _per_output_losses(model, x, score, kind, ws, wk):
    s, k = model.predict(x)
    mse = ((s - score) ** 2).mean(-1)
    ce = -_log_softmax(k)[np.arange(len(kind)), kind]
    return float((mse * ws).sum() / len(x)), float((ce * wk).sum() / len(x))


@pytest.mark.parametrize("form", ["list", "dict", "dict_partial"])
def test_sample_weight_per_output_as_a_list_or_a_dict(form):
    x, score, kind = _multi_data()
    model = _two_outputs()
    model.compile(nn.optimizers.SGD(0.0),
                  ["mse", nn.losses.SparseCategoricalCrossentropy(from_logits=True)],
                  weighted_metrics={"score": "mae"})
    ws = np.linspace(0.0, 2.0, 16).astype(np.float32)
    wk = (np.arange(16) % 2).astype(np.float32)
    sw = {"list": [ws, wk], "dict": {"kind": wk, "score": ws},
          "dict_partial": {"kind": wk}}[form]
    if form == "dict_partial":
        ws = np.ones(16, np.float32)  # an output the dict leaves out is not weighted
    want_s, want_k = _per_output_losses(model, x, score, kind, ws, wk)
    logs = model.evaluate(x, [score, kind], sample_weight=sw, batch_size=8, return_dict=True)
    assert_allclose([logs["score_loss"], logs["kind_loss"]], [want_s, want_k], rtol=1e-5)
    assert_allclose(logs["loss"], want_s + want_k, rtol=1e-5)
    s, _ = model.predict(x)  # the metric of an output takes that output's weights
    assert_allclose(logs["score_mae"], (np.abs(s - score)[:, 0] * ws).sum() / ws.sum(),
                    rtol=1e-5)
    hist = model.fit(x, [score, kind], sample_weight=sw, batch_size=8, verbose=0,
                     shuffle=False, validation_data=(x, [score, kind], sw))
    assert_allclose(hist.history["loss"], [want_s + want_k], rtol=1e-5)
    assert_allclose(hist.history["val_kind_loss"], [want_k], rtol=1e-5)
    split = model.fit(x, [score, kind], sample_weight=sw, batch_size=4, verbose=0,
                      validation_split=0.25)  # each output's weights split with its rows
    tail = {k: v[12:] for k, v in sw.items()} if isinstance(sw, dict) else [v[12:] for v in sw]
    held = model.evaluate(x[12:], [score[12:], kind[12:]], sample_weight=tail,
                          return_dict=True)
    assert_allclose(split.history["val_loss"], [held["loss"]], rtol=1e-5)


def test_per_output_sample_weights_are_checked_by_name():
    x, score, kind = _multi_data(8)
    model = _two_outputs()
    model.compile(loss="mse")
    with pytest.raises(ValueError, match=r"sample_weight for \['typo'\]"):
        model.evaluate(x, [score, kind], sample_weight={"typo": np.ones(8)})
    with pytest.raises(ValueError, match="sample weights hold different numbers"):
        model.evaluate(x, [score, kind], sample_weight=[np.ones(8), np.ones(5)])
    one = _classifier()
    with pytest.raises(ValueError, match="one per output.*has one output"):
        one.evaluate(x, kind, sample_weight=[np.ones(8), np.ones(8)])


@pytest.mark.filterwarnings("ignore:.*no gradient for variable")  # kind's layer: no loss reaches it
@pytest.mark.parametrize("targets", ["none_in_list", "only_the_lossy", "one_array"])
def test_targets_for_outputs_without_a_loss_may_be_none_or_left_out(targets):
    x, score, kind = _multi_data()
    model = _two_outputs()
    model.compile(nn.optimizers.SGD(0.1), loss=["mse", None], metrics={"score": ["mae"]})
    y = {"none_in_list": [score, None], "only_the_lossy": [score],
         "one_array": score}[targets]
    twin = _two_outputs()
    twin.set_weights(model.get_weights())
    twin.compile(nn.optimizers.SGD(0.1), loss={"score": "mse"}, metrics={"score": ["mae"]})
    got = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history
    want = twin.fit(x, {"score": score}, batch_size=8, epochs=2, shuffle=False,
                    verbose=0).history
    # one output has a loss: no <output>_loss at all, as Keras 3.15.1
    assert list(got) == ["loss", "score_mae"]
    for k in want:
        assert_allclose(got[k], want[k], rtol=1e-6)
    assert_allclose(model.evaluate(x, y), twin.evaluate(x, {"score": score}), rtol=1e-6)


def test_a_none_target_for_an_output_with_a_loss_or_a_metric_is_refused():
    x, score, kind = _multi_data(8)
    model = _two_outputs()
    model.compile(loss="mse")
    with pytest.raises(ValueError, match="output 'kind' has a loss but no target"):
        model.fit(x, [score, None], verbose=0)
    model.compile(loss=["mse", None], metrics={"kind": "accuracy"})
    with pytest.raises(ValueError, match="output 'kind' has the metric 'kind_accuracy' but "
                                         "no target"):
        model.evaluate(x, [score, None])


# --- masks: losses and metrics over the real steps only ----------------------------------

VOCAB, STEPS = 7, 6


def _tagger():
    """Tokens in, a tag per step out: the output carries the embedding's mask."""
    model = nn.Sequential([L.Embedding(VOCAB, 4, mask_zero=True),
                           L.SimpleRNN(5, return_sequences=True), L.Dense(3)])
    return model


def _sequences(n=6):
    ids = np.zeros((n, STEPS), np.int64)
    lengths = RNG.integers(1, STEPS, n)
    lengths[0] = STEPS
    for i, m in enumerate(lengths):
        ids[i, :m] = RNG.integers(1, VOCAB, m)  # post-padded with 0
    tags = RNG.integers(0, 3, (n, STEPS))
    tags[ids == 0] = 2  # padded steps: a tag that counted would move the loss by much
    return ids, tags, ids != 0


def _tagger_with_padding_wrong(ids):
    """A tagger whose logits at the padded steps put the tag 2 far down."""
    model = _tagger()
    model(em.constant(ids))
    kernel, bias = model.layers[-1].get_weights()
    model.layers[-1].set_weights([kernel, bias + np.array([0.0, 0.0, -4.0], np.float32)])
    return model


def _masked_ce(model, ids, tags, mask, sw=None):
    """The loss by hand: cross entropy per step, times the weights, over the real steps."""
    per = -np.take_along_axis(_log_softmax(model.predict(ids)), tags[..., None], -1)[..., 0]
    w = np.ones(ids.shape[0]) if sw is None else sw
    return float((per * mask * w[:, None]).sum() / mask.sum())


@pytest.mark.parametrize("loss", ["keras_loss", "keras_function", "tf_losses_function"])
@pytest.mark.parametrize("run_eagerly", [False, True])
def test_the_loss_is_the_mean_over_the_real_steps(loss, run_eagerly):
    ids, tags, mask = _sequences()
    model = _tagger_with_padding_wrong(ids)
    fn = {"keras_loss": nn.losses.SparseCategoricalCrossentropy(from_logits=True),
          "keras_function": lambda y, p: nn.losses.sparse_categorical_crossentropy(
              y, p, from_logits=True),
          "tf_losses_function": "sparse_softmax_cross_entropy"}[loss]
    model.compile(nn.optimizers.SGD(0.0), fn, metrics=["accuracy"], run_eagerly=run_eagerly)
    want = _masked_ce(model, ids, tags, mask)
    unmasked = -np.take_along_axis(_log_softmax(model.predict(ids)), tags[..., None],
                                   -1).mean()
    assert not np.isclose(want, unmasked, rtol=1e-3), "the padding changes nothing here"
    hist = model.fit(ids, tags, batch_size=6, verbose=0)
    assert_allclose(hist.history["loss"], [want], rtol=1e-5)
    hits = model.predict(ids).argmax(-1) == tags  # accuracy over the real steps too
    assert_allclose(hist.history["accuracy"], [hits[mask].mean()], rtol=1e-6)
    assert_allclose(model.evaluate(ids, tags)[0], want, rtol=1e-5)
    if not run_eagerly:
        step = model._ember.extra["traced_steps"]["train_step"][1]
        assert step.experimental_get_tracing_count() == 1 and step.cache_size() == 1


def test_masked_loss_takes_sample_weights_per_sequence_and_per_step():
    ids, tags, mask = _sequences()
    model = _tagger()
    model.compile(nn.optimizers.SGD(0.0),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    sw = np.array([1.0, 0.0, 2.0, 0.5, 1.0, 3.0], np.float32)
    got = model.evaluate(ids, tags, sample_weight=sw, batch_size=6)
    assert_allclose(got, _masked_ce(model, ids, tags, mask, sw), rtol=1e-5)
    per_step = np.broadcast_to(sw[:, None], ids.shape).copy()
    assert_allclose(model.evaluate(ids, tags, sample_weight=per_step, batch_size=6), got,
                    rtol=1e-6)


def test_masked_gradient_equals_the_hand_written_masked_loss():
    from ember import tape

    ids, tags, mask = _sequences()
    model = _tagger()
    model.compile(nn.optimizers.SGD(0.5),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    model(em.constant(ids))
    twin = _tagger()
    twin(em.constant(ids))
    twin.set_weights(model.get_weights())
    with tape.GradientTape() as t:
        logp = em.nn_ops.log_softmax(twin(em.constant(ids)))
        per = -em.reduce_sum(em.one_hot(em.constant(tags), 3) * logp, axis=-1)
        m = em.cast(em.constant(mask), em.float32)
        want = em.reduce_sum(per * m) / em.reduce_sum(m)
    grads = t.gradient(want, twin.trainable_variables)
    for v, g in zip(twin.trainable_variables, grads):
        v.assign_sub(0.5 * g)
    model.fit(ids, tags, batch_size=6, verbose=0)
    for got, exp in zip(model.get_weights(), twin.get_weights()):
        assert_allclose(got, exp, rtol=1e-4, atol=1e-6)


def test_a_loss_that_returns_a_scalar_refuses_a_mask_by_name():
    ids, tags, _ = _sequences()
    model = _tagger()
    model.compile(loss=lambda y, p: em.reduce_mean(nn.losses.sparse_categorical_crossentropy(
        y, p, from_logits=True)), run_eagerly=True)
    with pytest.raises(TypeError, match="mask"):
        model.fit(ids, tags, verbose=0)


def test_binary_tags_per_step_are_masked_in_loss_and_accuracy():
    # predictions (N, T, 1) against a mask (N, T): the mask covers each step's one value
    ids, _, mask = _sequences()
    flags = (RNG.random(ids.shape) > 0.5).astype(np.float32)
    model = nn.Sequential([L.Embedding(VOCAB, 4, mask_zero=True),
                           L.SimpleRNN(5, return_sequences=True),
                           L.Dense(1, activation="sigmoid")])
    model.compile(nn.optimizers.SGD(0.0), "binary_crossentropy", metrics=["accuracy"])
    p = np.clip(model.predict(ids)[..., 0], 1e-7, 1 - 1e-7)
    per = -(flags * np.log(p) + (1 - flags) * np.log(1 - p))
    logs = model.evaluate(ids, flags, return_dict=True)
    assert_allclose(logs["loss"], (per * mask).sum() / mask.sum(), rtol=1e-5)
    assert_allclose(logs["accuracy"], ((p > 0.5) == flags)[mask].mean(), rtol=1e-6)


def test_a_keras_loss_called_on_masked_predictions_masks_itself():
    ids, tags, mask = _sequences()
    model = _tagger()
    logits = model(em.constant(ids))
    got = nn.losses.SparseCategoricalCrossentropy(from_logits=True)(tags, logits)
    assert_allclose(float(got), _masked_ce(model, ids, tags, mask), rtol=1e-5)
    summed = nn.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")
    per = -np.take_along_axis(_log_softmax(logits.numpy()), tags[..., None], -1)[..., 0]
    assert_allclose(float(summed(tags, logits)), (per * mask).sum(), rtol=1e-5)


def test_metrics_count_every_example_and_weighted_metrics_weigh_them_as_keras_3():
    # Keras 3.15 on this model and data: {'loss': 0.25, 'mae': 2.5, 'mse': 1.0,
    # 'true_positives': 0.0}, the same from evaluate and from one fit epoch (lr 0 here)
    model = nn.Sequential([nn.Input((1,)), nn.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(nn.optimizers.SGD(0.0), "mse", metrics=["mae", nn.metrics.TruePositives()],
                  weighted_metrics=["mse"])
    x = np.ones((4, 1), np.float32)
    y = np.array([[1], [2], [3], [4]], np.float32)
    sw = np.array([1, 0, 0, 0], np.float32)
    want = {"loss": 0.25, "mae": 2.5, "true_positives": 0.0, "mse": 1.0}
    logs = model.evaluate(x, y, sample_weight=sw, verbose=0, return_dict=True)
    assert logs == pytest.approx(want)
    history = model.fit(x, y, sample_weight=sw, batch_size=4, verbose=0)
    assert {k: v[0] for k, v in history.history.items()} == pytest.approx(want)


def test_class_weight_reaches_weighted_metrics_only():
    # Keras 3.15: true_positives 2.0 with class_weight {0: 0.5, 1: 0.25} (unweighted)
    model = nn.Sequential([nn.Input((1,)),
                           nn.layers.Dense(1, activation="sigmoid", kernel_initializer="ones")])
    model.compile(nn.optimizers.SGD(0.0), "binary_crossentropy",
                  metrics=[nn.metrics.TruePositives()],
                  weighted_metrics=[nn.metrics.TruePositives()])
    x = np.ones((4, 1), np.float32)
    y = np.array([[1], [1], [0], [0]], np.float32)
    h = model.fit(x, y, class_weight={0: 0.5, 1: 0.25}, batch_size=4, verbose=0).history
    assert h["true_positives"] == [2.0]
    assert h["weighted_true_positives"] == [0.5]  # Keras's name for the weighted twin


def test_compile_takes_keras_3_arguments_in_its_order_and_defaults():
    model = _classifier()
    model.compile(loss="mse")
    assert isinstance(model.optimizer, nn.optimizers.RMSprop)  # Keras 3's default
    model.compile("sgd", "mse", None, ["mae"], None, True)
    assert model.metrics_names == ["loss", "mae"] and model.run_eagerly
    model.compile("sgd", "mse")
    assert not model.run_eagerly  # Keras: compile sets run_eagerly=False
    with pytest.raises(ValueError, match="steps_per_execution=4"):
        model.compile("sgd", "mse", steps_per_execution=4)
    with pytest.raises(ValueError, match="jit_compile=True"):
        model.compile("sgd", "mse", jit_compile=True)
    model.compile("sgd", "mse", jit_compile=False)


def test_a_weighted_twin_of_an_output_metric_is_named_as_keras():
    # Keras 3: <output>_weighted_<metric> (a metric name with "_" in it kept whole)
    model = _two_outputs()
    model.compile("sgd", ["mse", nn.losses.SparseCategoricalCrossentropy(from_logits=True)],
                  metrics={"score": ["mean_absolute_error"]},
                  weighted_metrics={"score": ["mean_absolute_error"]})
    x, score, kind = _multi_data(8)
    logs = model.evaluate(x, [score, kind], sample_weight=np.ones(8, np.float32), verbose=0,
                          return_dict=True)
    assert {"score_mean_absolute_error", "score_weighted_mean_absolute_error"} <= set(logs)

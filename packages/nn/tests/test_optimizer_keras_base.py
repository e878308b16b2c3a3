"""The base optimizer's options every Keras 3 optimizer takes, against Keras 3.15.1's own
numbers (``data/keras_optimizer_base_steps.json``, written by
``keras_optimizer_base_reference.py`` with Keras's interpreter): decoupled
``weight_decay`` and ``exclude_from_weight_decay``, ``use_ema`` (``ema_momentum``,
``ema_overwrite_frequency``, ``finalize_variable_values``), ``gradient_accumulation_steps``
(with a schedule, which Keras calls with the number of calls), ``loss_scale_factor``, and
clips of 0, which clip nothing (ember scaled gradients to 0, or flipped them for a negative
clip; found by a parity sweep against Keras)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import ember.core as em
from ember import graph, nn

REF = json.loads((pathlib.Path(__file__).parent / "data" / "keras_optimizer_base_steps.json")
                 .read_text())
OPT = nn.optimizers
# float32: Adam's 1 - beta_2**t cancels (1 - float32(0.999) is 1.3e-5 off 0.001), so the
# two libraries' orders of operations differ by a few 1e-6 relative
TOL = {"rtol": 1e-5, "atol": 1e-6}  # (steps of lr = 0.05: 1e-5 of one)


def _make(case: dict) -> tuple[object, em.Variable, em.Variable]:
    kw = dict(case["kwargs"])
    lr = kw.get("learning_rate")
    if isinstance(lr, dict):
        lr = dict(lr)
        kw["learning_rate"] = getattr(OPT.schedules, lr.pop("schedule"))(**lr)
    opt = getattr(OPT, case["class"])(**kw)
    kernel = em.Variable(np.array(REF["kernel"], np.float32), name="kernel")
    bias = em.Variable(np.array(REF["bias"], np.float32), name="bias")
    exclude = case["exclude"]
    if exclude is not None:
        by_name = {"kernel": kernel, "bias": bias}
        opt.exclude_from_weight_decay(
            var_list=[by_name[n] for n in exclude.get("var_list", [])] or None,
            var_names=exclude.get("var_names"))
    return opt, kernel, bias


@pytest.mark.parametrize("name", sorted(REF["cases"]))
def test_steps_match_keras(backend, name):
    case = REF["cases"][name]
    opt, kernel, bias = _make(case)
    for k, ((gk, gb), (wk, wb)) in enumerate(zip(REF["grads"], case["steps"])):
        opt.apply_gradients([(em.constant(np.array(gk, np.float32)), kernel),
                             (em.constant(np.array(gb, np.float32)), bias)])
        np.testing.assert_allclose(kernel.numpy(), wk, **TOL,
                                   err_msg=f"{name}, call {k + 1}: kernel")
        np.testing.assert_allclose(bias.numpy(), wb, **TOL,
                                   err_msg=f"{name}, call {k + 1}: bias")
    assert int(opt.iterations.numpy()) == case["iterations"]
    if case["finalized"] is not None:
        opt.finalize_variable_values([kernel, bias])
        np.testing.assert_allclose(kernel.numpy(), case["finalized"][0], **TOL)
        np.testing.assert_allclose(bias.numpy(), case["finalized"][1], **TOL)


@pytest.mark.parametrize("name", ["adam_accumulation_schedule", "sgd_accumulation",
                                  "adam_ema", "adam_weight_decay_excluding_bias",
                                  "sgd_accumulation_ema_weight_decay"])
def test_a_traced_step_is_one_trace_and_matches_keras(backend, name):
    """The decisions (update or accumulate, first step or not, overwrite) are made on the
    device: the traced step is traced once and replays every call."""
    case = REF["cases"][name]
    opt, kernel, bias = _make(case)

    @graph.function
    def step(gk, gb):
        opt.apply_gradients([(gk, kernel), (gb, bias)])

    for (gk, gb), (wk, wb) in zip(REF["grads"], case["steps"]):
        step(em.constant(np.array(gk, np.float32)), em.constant(np.array(gb, np.float32)))
        np.testing.assert_allclose(kernel.numpy(), wk, **TOL)
        np.testing.assert_allclose(bias.numpy(), wb, **TOL)
    assert step.experimental_get_tracing_count() <= 2  # (the first call makes the slots)
    assert int(opt.iterations.numpy()) == case["iterations"]


def test_accumulation_counts_updates_and_keeps_its_state_in_checkpoints(tmp_path):
    from ember import checkpoint

    opt = OPT.Adam(0.1, gradient_accumulation_steps=3)
    v = em.Variable([1.0, 2.0])
    for _ in range(4):
        opt.apply_gradients([(em.constant([1.0, -1.0]), v)])
    assert int(opt.iterations) == 1
    acc = opt.get_slot(v, "gradient_accumulator")
    np.testing.assert_allclose(acc.numpy(), [1.0, -1.0])  # the 4th call's, after the update
    path = checkpoint.Checkpoint(opt=opt, v=v).write(str(tmp_path / "ck"))
    opt2 = OPT.Adam(0.1, gradient_accumulation_steps=3)
    v2 = em.Variable([0.0, 0.0])
    opt2.apply_gradients([(em.constant([0.0, 0.0]), v2)])  # slots exist to restore into
    checkpoint.Checkpoint(opt=opt2, v=v2).read(path)
    for o, var in ((opt, v), (opt2, v2)):
        for _ in range(2):
            o.apply_gradients([(em.constant([0.5, 0.5]), var)])
    np.testing.assert_array_equal(v.numpy(), v2.numpy())
    assert int(opt2.iterations) == int(opt.iterations) == 2


def test_clips_of_zero_clip_nothing_and_negative_ones_are_refused():
    for kw in ({"clipnorm": 0.0}, {"clipvalue": 0}, {"global_clipnorm": 0.0}):
        v = em.Variable([1.0])
        OPT.SGD(0.1, **kw).apply_gradients([(em.constant([2.0]), v)])
        assert float(v[0]) == pytest.approx(0.8)
    for arg in ("clipnorm", "clipvalue", "global_clipnorm"):
        with pytest.raises(ValueError, match=arg):
            OPT.SGD(0.1, **{arg: -1.0})
    opt = OPT.SGD(0.1, clipvalue=0.5)
    opt.clipvalue = 0.0  # turned off later, as a number
    v = em.Variable([1.0])
    opt.apply_gradients([(em.constant([2.0]), v)])
    assert float(v[0]) == pytest.approx(0.8)


def test_weight_decay_exclusion_is_set_before_the_first_update():
    opt = OPT.SGD(0.1, weight_decay=0.1)
    v = em.Variable([1.0])
    opt.apply_gradients([(em.constant([0.0]), v)])
    assert float(v[0]) == pytest.approx(0.99)
    with pytest.raises(ValueError, match="exclude_from_weight_decay"):
        opt.exclude_from_weight_decay(var_names=["bias"])


def test_option_arguments_are_checked_by_name():
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        OPT.SGD(gradient_accumulation_steps=1)
    with pytest.raises(ValueError, match="ema_momentum"):
        OPT.SGD(use_ema=True, ema_momentum=1.5)
    with pytest.raises(ValueError, match="use_ema=True"):
        OPT.SGD(ema_momentum=0.5)  # would change nothing without use_ema
    with pytest.raises(ValueError, match="ema_overwrite_frequency"):
        OPT.SGD(use_ema=True, ema_overwrite_frequency=0)
    with pytest.raises(ValueError, match="loss_scale_factor"):
        OPT.SGD(loss_scale_factor=-2.0)


def test_config_round_trip_keeps_the_options():
    opt = OPT.Adam(0.01, weight_decay=0.1, use_ema=True, ema_momentum=0.9,
                   ema_overwrite_frequency=5, loss_scale_factor=8.0,
                   gradient_accumulation_steps=4)
    config = opt.get_config()
    for k, want in (("weight_decay", 0.1), ("use_ema", True), ("ema_momentum", 0.9),
                    ("ema_overwrite_frequency", 5), ("loss_scale_factor", 8.0),
                    ("gradient_accumulation_steps", 4)):
        assert config[k] == pytest.approx(want), k
    again = OPT.Adam.from_config(config)
    assert again.get_config() == config


def test_fit_scales_the_loss_and_ends_on_the_averages():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    model = nn.Sequential([nn.layers.Dense(1, input_shape=(3,))])
    opt = OPT.SGD(0.05, use_ema=True, ema_momentum=0.8, loss_scale_factor=16.0)
    model.compile(opt, "mse")
    model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    for v in model.trainable_weights:  # fit ended by writing the averages in
        np.testing.assert_array_equal(v.numpy(), opt.get_slot(v, "average").numpy())
    assert float(opt.scale_loss(em.constant(2.0))) == 32.0

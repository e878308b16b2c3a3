"""Horovod's Keras callbacks (distribute.callbacks), driven as fit drives them, on a world
of two threads; the model and optimizer are the few attributes the callbacks read."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import distribute
from ember.distribute.callbacks import (
    BroadcastGlobalVariablesCallback,
    LearningRateWarmupCallback,
    MetricAverageCallback,
)
from ember.distribute.testing import run_in_threads


class _Optimizer:
    def apply_gradients(self, grads_and_vars):
        raise AssertionError("not called here")

    def __init__(self, lr, momentum=None):
        self.learning_rate = lr
        if momentum is not None:
            self.momentum = momentum
        self.variables = [em.Variable(0.0)]


class _Model:
    def __init__(self, value, optimizer):
        self.variables = [em.Variable(np.full(3, value, np.float32))]
        self.optimizer = optimizer


def test_warmup_goes_from_lr_over_size_to_lr_batch_by_batch_with_momentum_corrected():
    def rank_fn():
        opt = _Optimizer(0.0, momentum=0.9)
        cb = LearningRateWarmupCallback(0.2, warmup_epochs=2, steps_per_epoch=4)
        cb.set_model(_Model(0.0, opt))
        cb.set_params({"epochs": 3, "steps": 4})
        cb.on_train_begin()
        seen = []
        for epoch in range(3):
            cb.on_epoch_begin(epoch)
            for batch in range(4):
                cb.on_train_batch_begin(batch)
                seen.append((opt.learning_rate, opt.momentum))
                cb.on_train_batch_end(batch)
                assert opt.momentum == 0.9  # put back after the batch
            logs = {}
            cb.on_epoch_end(epoch, logs)
            assert logs["lr"] == opt.learning_rate
        return seen

    for seen in run_in_threads(2, rank_fn):
        lrs = [lr for lr, _ in seen]
        # (e + b/4 + 1/4) * (2 - 1) / 2 + 1, over 2 ranks, times 0.2
        want = [0.2 * ((e + b / 4 + 0.25) / 2 + 1) / 2 for e in range(2) for b in range(4)]
        np.testing.assert_allclose(lrs[:8], want)
        assert lrs[7] == pytest.approx(0.2)  # the last warmup batch reaches initial_lr
        assert lrs[8:] == [lrs[7]] * 4  # after the warmup, nothing changes it
        # the momentum of a batch whose rate changed is scaled by new / old
        olds = [0.0] + lrs[:7]
        for (lr, mom), old in zip(seen[1:8], olds[1:]):
            assert mom == pytest.approx(0.9 * lr / old)


def test_metric_average_makes_every_logged_value_the_ranks_mean_in_place():
    def rank_fn():
        r = distribute.rank()
        logs = {"loss": 1.0 + r, "per_class": np.array([r, 2.0 * r])}
        MetricAverageCallback().on_epoch_end(0, logs)
        return logs

    for logs in run_in_threads(2, rank_fn):
        assert logs["loss"] == 1.5
        np.testing.assert_array_equal(logs["per_class"], [0.5, 1.0])
    one = {"loss": 2.0}
    MetricAverageCallback().on_epoch_end(0, one)  # a world of one: unchanged
    assert one == {"loss": 2.0}


def test_broadcast_global_variables_copies_the_roots_values_after_the_first_batch_only():
    def rank_fn():
        r = distribute.rank()
        model = _Model(float(r + 1), _Optimizer(0.1))
        model.optimizer.variables[0].assign(10.0 * (r + 1))
        cb = BroadcastGlobalVariablesCallback(root_rank=1)
        cb.set_model(model)
        cb.on_train_batch_end(0)
        first = (model.variables[0].numpy().tolist(), float(model.optimizer.variables[0]))
        model.variables[0].assign(np.full(3, -r, np.float32))
        cb.on_train_batch_end(1)  # done once: no second broadcast
        return first, model.variables[0].numpy().tolist()

    for r, (first, later) in enumerate(run_in_threads(2, rank_fn)):
        assert first == ([2.0] * 3, 20.0)
        assert later == [float(-r)] * 3


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="device='/gpu:0' is not supported"):
        MetricAverageCallback(device="/gpu:0")
    with pytest.raises(ValueError, match="backward_passes_per_step=2"):
        distribute.DistributedOptimizer(_Optimizer(0.1), backward_passes_per_step=2)
    with pytest.raises(TypeError, match="average_aggregated_gradients must be a bool"):
        distribute.DistributedOptimizer(_Optimizer(0.1), average_aggregated_gradients=1)
    distribute.DistributedOptimizer(_Optimizer(0.1), backward_passes_per_step=1,
                                    average_aggregated_gradients=True)

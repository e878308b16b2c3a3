"""``EarlyStopping``: stop ``fit`` once the monitored quantity stops improving."""

from __future__ import annotations

from typing import Any

from ._monitor import MonitorCallback, _whole


class EarlyStopping(MonitorCallback):
    """Stop training when ``monitor`` has not improved for ``patience`` epochs (Keras's).

    Args:
        monitor: the logged quantity to watch (default ``"val_loss"``).
        min_delta: a change smaller than this is no improvement.
        patience: epochs without improvement before training stops.
        verbose: 1 prints when it stops and when it restores weights.
        mode: ``"min"``, ``"max"`` or ``"auto"`` (from the quantity's name).
        baseline: training stops unless the quantity does better than this within
            ``patience`` epochs.
        restore_best_weights: at the end of training, put back the weights of the best
            epoch (as Keras 3, also when training ran to the end).
        start_from_epoch: epochs of warm-up before watching begins.

    The best weights are kept as the variables' values on their device (a value read is
    never changed by later training), with no copy to the host.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(20,))])
        >>> model.compile(nn.optimizers.SGD(0.0), "mse")  # a loss that never improves
        >>> stop = nn.callbacks.EarlyStopping(monitor="loss", patience=3)
        >>> history = model.fit(np.ones((5, 20), np.float32), np.zeros(5), epochs=10,
        ...                     batch_size=1, callbacks=[stop], verbose=0)
        >>> len(history.history["loss"])
        4
    """

    def __init__(self, monitor: str = "val_loss", min_delta: Any = 0, patience: int = 0,
                 verbose: int = 0, mode: str = "auto", baseline: Any = None,
                 restore_best_weights: bool = False, start_from_epoch: int = 0) -> None:
        super().__init__(monitor, mode, baseline=baseline, min_delta=min_delta)
        self.patience = _whole("EarlyStopping", "patience", patience)
        self.verbose = _whole("EarlyStopping", "verbose", verbose)
        self.restore_best_weights = bool(restore_best_weights)
        self.start_from_epoch = _whole("EarlyStopping", "start_from_epoch", start_from_epoch)
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best_weights: list[Any] | None = None

    def on_train_begin(self, logs: Any = None) -> None:
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best, self.best_weights = None, None  # a second fit starts afresh (Keras)

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if self.monitor_op is None:
            self._set_monitor_op()
        current = self._current(logs, "early stopping")
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self._weights(), epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self._weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0  # better than the best so far and than the baseline
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs: Any = None) -> None:
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            for variable, value in zip(self.model.variables, self.best_weights):
                variable.assign(value)

    def _weights(self) -> list[Any]:
        return [v.value() for v in self.model.variables]

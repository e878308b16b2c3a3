"""``ModelCheckpoint``: save the model (or its weights) during ``fit``, as Keras 3."""

from __future__ import annotations

import os
import warnings
from typing import Any

from ._monitor import MonitorCallback


class ModelCheckpoint(MonitorCallback):
    """Save the model or its weights every epoch, or every ``save_freq`` batches.

    Args:
        filepath: where to save; it may hold ``{epoch:02d}``, ``{batch}`` and any logged
            quantity (``{val_loss:.2f}``), filled in at each save (epochs and batches
            counted from 1, as Keras). A ``.keras`` file (``model.save``), or with
            ``save_weights_only`` a ``.weights.h5`` (or ``.safetensors``) file
            (``model.save_weights``). Its directory is made when missing.
        monitor: the logged quantity ``save_best_only`` watches.
        verbose: 1 prints a line at each save (and when the quantity did not improve).
        save_best_only: save only when ``monitor`` improved on the best value so far
            (a file name without placeholders then always holds the best model).
        save_weights_only: save the weights (and optimizer variables), not the model.
        mode: ``"min"``, ``"max"`` or ``"auto"`` (the direction inferred from the
            quantity's name: losses go down, accuracies up).
        save_freq: ``"epoch"``, or a number of batches between saves (at the end of a
            batch, with that batch's logs: running averages within the epoch).
        initial_value_threshold: with ``save_best_only``, the value the first save must
            improve on.

    Each save is atomic (see ``model.save``): a fit killed while saving leaves the last
    file whole. Saving happens between steps, so a traced step stays traced.

    Raises:
        ValueError: a filepath of another extension (ember writes no Keras 2 ``.h5``
            models), or a ``save_freq`` that is neither ``"epoch"`` nor a positive int.

    Examples:
        >>> import os, tempfile
        >>> import numpy as np
        >>> from ember import nn
        >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(3,))])
        >>> model.compile("sgd", "mse")
        >>> folder = tempfile.mkdtemp()
        >>> save = nn.callbacks.ModelCheckpoint(os.path.join(folder, "m-{epoch:02d}.keras"))
        >>> _ = model.fit(np.ones((4, 3), np.float32), np.zeros(4), epochs=2, verbose=0,
        ...               callbacks=[save])
        >>> sorted(os.listdir(folder))
        ['m-01.keras', 'm-02.keras']
    """

    def __init__(self, filepath: Any, monitor: str = "val_loss", verbose: int = 0,
                 save_best_only: bool = False, save_weights_only: bool = False,
                 mode: str = "auto", save_freq: Any = "epoch",
                 initial_value_threshold: Any = None) -> None:
        super().__init__(monitor, mode, initial_value_threshold)
        if not isinstance(filepath, (str, os.PathLike)):
            raise TypeError(f"ModelCheckpoint: filepath must be a str or os.PathLike, got "
                            f"{type(filepath).__name__}")
        for arg, value in (("save_best_only", save_best_only),
                           ("save_weights_only", save_weights_only)):
            if not isinstance(value, bool):
                raise TypeError(f"ModelCheckpoint: {arg} must be a bool, got {value!r}")
        if isinstance(verbose, bool) or verbose not in (0, 1, 2):
            raise ValueError(f"ModelCheckpoint: verbose must be 0, 1 or 2, got {verbose!r}")
        if save_freq != "epoch" and (isinstance(save_freq, bool) or
                                     not isinstance(save_freq, int) or save_freq < 1):
            raise ValueError(f"ModelCheckpoint: unrecognized save_freq {save_freq!r}; "
                             f"expected 'epoch' or a positive number of batches")
        self.filepath = os.fspath(filepath)
        self.verbose = verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.save_freq = save_freq
        if save_weights_only:
            if not self.filepath.endswith((".weights.h5", ".safetensors")):
                raise ValueError(f"ModelCheckpoint: with save_weights_only=True the filepath "
                                 f"must end in `.weights.h5` (or `.safetensors`); received "
                                 f"filepath={self.filepath!r}")
        elif self.filepath.endswith(".h5"):
            raise ValueError(f"ModelCheckpoint: {self.filepath!r}: ember writes no Keras 2 "
                             f"`.h5` models; use a `.keras` file (or save_weights_only=True "
                             f"with `.weights.h5`)")
        elif not self.filepath.endswith(".keras"):
            raise ValueError(f"ModelCheckpoint: the filepath must end in `.keras`; received "
                             f"filepath={self.filepath!r}")
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen: int | None = None
        self._current_epoch = 0

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._current_epoch = epoch

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        if self._should_save_on_batch(batch):
            from ..training import host_logs

            self._save_model(self._current_epoch, batch, host_logs(logs or {}))

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if self.save_freq == "epoch":
            self._save_model(epoch, None, dict(logs or {}))

    def _should_save_on_batch(self, batch: int) -> bool:
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:  # a new epoch
            added = batch + 1
        else:
            added = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += added
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _should_save_model(self, epoch: int, logs: dict[str, Any], filepath: str) -> bool:
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:  # Keras saves anyway, with a warning
            warnings.warn(f"ModelCheckpoint: can save the best model only with "
                          f"{self.monitor!r} in the logs (they hold "
                          f"{', '.join(logs) or 'nothing'}); saving", stacklevel=3)
            return True
        if self.monitor_op is None:
            self._set_monitor_op()
        current = float(current)
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to "
                      f"{current:.5f}, saving model to {filepath}")
            self.best = current
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
        return False

    def _save_model(self, epoch: int, batch: int | None, logs: dict[str, Any]) -> None:
        filepath = self._get_file_path(epoch, batch, logs)
        if not self._should_save_model(epoch, logs, filepath):
            return
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if os.path.isdir(filepath):
            raise OSError(f"ModelCheckpoint: the filepath {filepath!r} is an existing "
                          f"directory; give a file name")
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")

    def _get_file_path(self, epoch: int, batch: int | None, logs: dict[str, Any]) -> str:
        values = dict(logs)
        values["epoch"] = epoch + 1
        if batch is not None and "batch" not in logs:
            values["batch"] = batch + 1
        try:
            return self.filepath.format(**values)
        except KeyError as e:
            raise KeyError(f"ModelCheckpoint: failed to format the filepath "
                           f"{self.filepath!r}: {e} is not in the logs (they hold "
                           f"{', '.join(logs) or 'nothing'})") from None

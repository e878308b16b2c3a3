"""``TerminateOnNaN``: stop ``fit`` at the first batch whose loss is NaN or infinite."""

from __future__ import annotations

import math
from typing import Any

from ._base import Callback


class TerminateOnNaN(Callback):
    """Stop training when a batch's loss is NaN or infinite (Keras's).

    Args:
        raise_error: False (the default) stops gracefully (``model.stop_training``, so
            ``on_train_end`` runs); True raises a ``RuntimeError`` at once, so no other
            callback's ``on_train_end`` runs (a ``BackupAndRestore`` keeps its backup).

    It reads the loss back after every training step: on a GPU that is one sync per step,
    the price of stopping at the very batch that failed.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(nn.optimizers.SGD(0.1), "mse")
        >>> x, y = np.ones((4, 2), np.float32), np.array([0.0, 0.0, np.nan, 0.0])
        >>> history = model.fit(x, y, batch_size=1, shuffle=False, epochs=5,
        ...                     callbacks=[nn.callbacks.TerminateOnNaN()], verbose=0)
        Batch 2: Invalid loss, terminating training
        >>> len(history.history["loss"])
        1
    """

    def __init__(self, raise_error: bool = False) -> None:
        super().__init__()
        if not isinstance(raise_error, bool):
            raise TypeError(f"TerminateOnNaN: raise_error must be a bool, got {raise_error!r}")
        self.raise_error = raise_error

    def on_batch_end(self, batch: int, logs: Any = None) -> None:
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        value = float(loss)
        if math.isnan(value) or math.isinf(value):
            if self.raise_error:
                raise RuntimeError(f"TerminateOnNaN: the loss of batch {batch} is {value}; "
                                   f"training stops here")
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True

"""``ProgbarLogger``: the progress bar of ``fit``, ``evaluate`` and ``predict`` (tqdm's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Callback


class ProgbarLogger(Callback):
    """Shows a progress bar (verbose 1) or one line per epoch (verbose 2).

    ``fit``, ``evaluate`` and ``predict`` add one when ``verbose`` is not 0 and the
    callbacks given hold none, as Keras does; its verbosity is theirs. The bar is tqdm's
    (written to stderr); without tqdm installed, verbose 1 shows nothing. It reads the
    running logs back from the device every ``training.BAR_EVERY_STEPS`` steps, not every
    step: each read is a GPU sync.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,))])
        >>> model.compile("sgd", "mse")
        >>> x = np.zeros((4, 2), np.float32)
        >>> _ = model.fit(x, x[:, 0], epochs=1, verbose=0, callbacks=[nn.callbacks.ProgbarLogger()])
    """

    def __init__(self) -> None:
        super().__init__()
        self.verbose, self.epochs, self.target = 1, 1, None
        self._bar: Any = None
        self._in_fit = False

    def set_params(self, params: dict[str, Any]) -> None:
        super().set_params(params)
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else int(verbose)
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    # --- fit ---------------------------------------------------------------------------
    def on_train_begin(self, logs: Any = None) -> None:
        self._in_fit = True

    def on_train_end(self, logs: Any = None) -> None:
        self._in_fit = False

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._open(f"epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        self._advance(logs)

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        self._close(logs, f"epoch {epoch + 1}/{self.epochs}")

    # --- evaluate (not fit's validation) and predict ----------------------------------
    def on_test_begin(self, logs: Any = None) -> None:
        if not self._in_fit:
            self._open("evaluate")

    def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
        if not self._in_fit:
            self._advance(logs)

    def on_test_end(self, logs: Any = None) -> None:
        if not self._in_fit:
            self._close(logs, "evaluate")

    def on_predict_begin(self, logs: Any = None) -> None:
        self._open("predict")

    def on_predict_batch_end(self, batch: int, logs: Any = None) -> None:
        self._advance(None)  # its logs hold the outputs, not numbers to show

    def on_predict_end(self, logs: Any = None) -> None:
        self._close(None, None)  # Keras prints no logs for predict

    # --- the bar -----------------------------------------------------------------------
    def _open(self, desc: str) -> None:
        self._close(None, None)
        self._steps = 0
        if self.verbose != 1:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:  # the bar is a convenience; training does not need it
            return
        self._bar = tqdm(total=self.target, desc=desc, leave=True, dynamic_ncols=True)

    def _advance(self, logs: Any) -> None:
        from .. import training

        self._steps += 1
        if self._bar is None:
            return
        self._bar.update(1)
        if logs and self._steps % training.BAR_EVERY_STEPS == 0:
            self._postfix(training.host_logs(logs))

    def _close(self, logs: Any, desc: str | None) -> None:
        """Show the final logs (already on the host: fit reads them once an epoch)."""
        if self._bar is not None:
            if logs:
                self._postfix(logs)
            self._bar.close()
            self._bar = None
        elif self.verbose == 2 and desc is not None:  # one line, as Keras's verbose=2
            print(f"{desc} - " + " - ".join(f"{k}: {_shown(v)}" for k, v in
                                            (logs or {}).items()))

    def _postfix(self, logs: dict[str, Any]) -> None:
        self._bar.set_postfix({k: _shown(v) for k, v in logs.items()}, refresh=False)


def _shown(value: Any) -> str:
    """A logged value as Keras's progress bar shows it: four decimals, or four significant
    digits in exponent form at 1e-3 and below (a loss of 2.4e-06 is not 0.0000)."""
    v = float(np.mean(value))  # an array of results (several thresholds): their mean, as
    return f"{v:.4f}" if abs(v) > 1e-3 else f"{v:.4e}"  # Keras's bar shows it

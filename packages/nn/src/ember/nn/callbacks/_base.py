"""The callback protocol: ``Callback``, ``CallbackList``, ``History``, ``LambdaCallback``."""

from __future__ import annotations

from typing import Any

__all__ = ["Callback", "CallbackList", "History", "LambdaCallback"]

_HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
          "on_train_batch_begin", "on_train_batch_end", "on_test_begin", "on_test_end",
          "on_test_batch_begin", "on_test_batch_end", "on_predict_begin", "on_predict_end",
          "on_predict_batch_begin", "on_predict_batch_end")


class Callback:
    """Base class: override any ``on_*`` hook; ``self.model`` is the model being run.

    Setting ``model.stop_training = True`` in a hook ends ``fit`` after the current batch.
    ``fit`` calls the test hooks too while it validates (before ``on_epoch_end``), and
    hands ``on_train_end`` the last epoch's logs, as Keras does.
    """

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict[str, Any] = {}

    def set_model(self, model: Any) -> None:
        self.model = model

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params


def _noop(self: Any, *args: Any, **kwargs: Any) -> None:
    return None


for _h in _HOOKS + ("on_batch_begin", "on_batch_end"):
    setattr(Callback, _h, _noop)


def _train_batch_begin(self: Any, batch: int, logs: Any = None) -> None:
    self.on_batch_begin(batch, logs)


def _train_batch_end(self: Any, batch: int, logs: Any = None) -> None:
    self.on_batch_end(batch, logs)


# Keras's older names: a callback overriding on_batch_begin/on_batch_end sees training batches
Callback.on_train_batch_begin = _train_batch_begin  # type: ignore[attr-defined]
Callback.on_train_batch_end = _train_batch_end  # type: ignore[attr-defined]


class LambdaCallback(Callback):
    """A callback from keyword functions: ``LambdaCallback(on_epoch_end=fn)``."""

    def __init__(self, **hooks: Any) -> None:
        super().__init__()
        for name, fn in hooks.items():
            if name not in _HOOKS + ("on_batch_begin", "on_batch_end"):
                raise ValueError(f"LambdaCallback: unknown hook {name!r}")
            setattr(self, name, fn)


class History(Callback):
    """Records the logs of every epoch: ``history.history["loss"]``."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list[float]] = {}

    def on_train_begin(self, logs: Any = None) -> None:
        # Keras 3 starts the epoch list again and keeps the history: one History given to
        # two fits holds both fits' epochs (fit makes a new one for its own return value)
        self.epoch: list[int] = []

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if getattr(self, "model", None) is not None:  # Keras's ``model.history``, kept
            object.__setattr__(self.model, "history", self)  # untracked (not a weight)


class CallbackList:
    """Calls one hook on every callback, in order."""

    def __init__(self, callbacks: Any, model: Any, params: dict[str, Any]) -> None:
        self.callbacks = list(callbacks or [])
        for c in self.callbacks:
            c.set_model(model)
            c.set_params(params)

    def __getattr__(self, name: str) -> Any:
        if name not in _HOOKS:
            raise AttributeError(name)

        def call(*args: Any) -> None:
            for c in self.callbacks:
                getattr(c, name)(*args)

        return call

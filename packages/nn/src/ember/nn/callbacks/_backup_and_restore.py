"""``BackupAndRestore``: a ``fit`` that was interrupted resumes where it was backed up,
and trains on bit for bit as if it had never stopped."""

from __future__ import annotations

import os
from typing import Any

import ember.core as em

from ._base import Callback

_NAME = "backup"  # the checkpoints are <backup_dir>/backup-<n>.safetensors


class BackupAndRestore(Callback):
    """Back up the training state as ``fit`` goes; a new ``fit`` resumes from it (Keras's).

    The backup is an ember checkpoint (``ember.checkpoint.CheckpointManager``: atomic
    and checksummed, so a process killed while saving leaves the previous backup whole)
    of the model's variables, the optimizer (its iterations, learning rate and slots), the
    metrics' running state, the random streams (``em.random``'s global generator: the
    shuffling of array data, unseeded dropout; the streams of the ``seed=`` its layers
    were given) and where training was. Run the same program again and
    ``fit`` starts at the epoch, and batch, after the last backup: with the same data, the
    rest of training is the one the interrupted run would have done, bit for bit.

    Args:
        backup_dir: the directory of the backups, this callback's alone.
        save_freq: ``"epoch"`` backs up at the end of every epoch; a number N every N
            training batches (a resumed epoch draws the batches already trained, in the
            same shuffled order, without training on them: Keras instead trains the whole
            epoch again).
        double_checkpoint: keep the last two backups; when the newest cannot be read
            (a damaged file), resume from the one before.
        delete_checkpoint: delete the backups when ``fit`` ends (not when it is
            interrupted by an error); False keeps them.

    What it cannot restore: an ``ember.data`` pipeline's own position and shuffle state
    (pass arrays, or a dataset that starts each epoch afresh); random draws of your own
    code with a ``seed=`` no layer of the model holds.

    Examples:
        >>> import numpy as np, tempfile
        >>> from ember import nn
        >>> class Interrupt(nn.callbacks.Callback):
        ...     def on_epoch_begin(self, epoch, logs=None):
        ...         if epoch == 2:
        ...             raise RuntimeError("interrupted")
        >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,))])
        >>> model.compile("sgd", "mse")
        >>> x, y = np.ones((4, 2), np.float32), np.zeros(4)
        >>> backup = nn.callbacks.BackupAndRestore(tempfile.mkdtemp())
        >>> try:
        ...     model.fit(x, y, epochs=5, callbacks=[backup, Interrupt()], verbose=0)
        ... except RuntimeError:
        ...     pass
        >>> history = model.fit(x, y, epochs=5, callbacks=[backup], verbose=0)
        >>> history.epoch  # epochs 0 and 1 were done
        [2, 3, 4]
    """

    def __init__(self, backup_dir: Any, save_freq: Any = "epoch",
                 double_checkpoint: bool = False, delete_checkpoint: bool = True) -> None:
        super().__init__()
        if not backup_dir:
            raise ValueError("BackupAndRestore: backup_dir is empty; give the directory of "
                             "the backups")
        if save_freq != "epoch" and (isinstance(save_freq, bool) or
                                     not isinstance(save_freq, int) or save_freq < 1):
            raise ValueError(f"BackupAndRestore: save_freq must be 'epoch' or a whole number "
                             f"of batches >= 1, got {save_freq!r}")
        for arg, value in (("double_checkpoint", double_checkpoint),
                           ("delete_checkpoint", delete_checkpoint)):
            if not isinstance(value, bool):
                raise TypeError(f"BackupAndRestore: {arg} must be a bool, got {value!r}")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.double_checkpoint, self.delete_checkpoint = double_checkpoint, delete_checkpoint
        self._manager: Any = None
        self._progress = _Progress()
        self._since_save = 0

    # --- fit's hooks -------------------------------------------------------------------
    def on_train_begin(self, logs: Any = None) -> None:
        from ember import checkpoint

        model = self.model
        metrics = {m.name: m for m in model.metrics}
        if len(metrics) != len(model.metrics):
            raise ValueError(f"BackupAndRestore: {model.name}'s metrics have repeated names "
                             f"{[m.name for m in model.metrics]}; each needs its own to be "
                             f"backed up")
        self._progress = _Progress()
        ckpt = checkpoint.Checkpoint(model=model, optimizer=model.optimizer, metrics=metrics,
                                     rng=em.random.get_global_generator(),
                                     seeded=_seeded_streams(model), progress=self._progress)
        self._manager = checkpoint.CheckpointManager(
            ckpt, self.backup_dir, max_to_keep=2 if self.double_checkpoint else 1,
            checkpoint_name=_NAME)
        self._since_save = 0
        if self._manager.latest_checkpoint is not None:
            self._restore(ckpt, metrics)

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._progress.epoch, self._progress.batches = epoch, 0
        self._progress.epoch_rng = em.random.get_global_generator().state

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        self._progress.batches = batch + 1
        if self.save_freq == "epoch":
            return
        self._since_save += 1
        if self._since_save >= self.save_freq:
            self._save()

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if self.save_freq == "epoch":  # the next epoch starts from this state
            self._progress.epoch, self._progress.batches = epoch + 1, 0
            self._save()

    def on_train_end(self, logs: Any = None) -> None:
        manager, self._manager = self._manager, None
        if manager is None:
            return
        paths = manager.checkpoints
        manager.close()
        if self.delete_checkpoint:
            _delete(self.backup_dir, paths)

    # --- saving and restoring ----------------------------------------------------------
    def _save(self) -> None:
        self._since_save = 0
        generator, ckpt = em.random.get_global_generator(), self._manager.checkpoint
        if ckpt.rng is not generator:  # em.random.set_seed made new ones
            ckpt.rng, ckpt.seeded = generator, _seeded_streams(self.model)
        self._manager.save()

    def _restore(self, ckpt: Any, metrics: dict[str, Any]) -> None:
        from ember import checkpoint

        paths = list(reversed(self._manager.checkpoints))
        for i, path in enumerate(paths):
            try:
                ckpt.restore(path)
                break
            except (checkpoint.CorruptCheckpointError, checkpoint.CheckpointIOError) as e:
                if i + 1 == len(paths):
                    raise type(e)(f"BackupAndRestore: cannot resume from {path}: {e}") from e
            except checkpoint.CheckpointMismatchError as e:
                raise checkpoint.CheckpointMismatchError(
                    f"BackupAndRestore: the backup in {self.backup_dir} is of another model "
                    f"or optimizer than this fit's: {e}") from e
        progress = self._progress
        resumed = None
        if progress.batches:  # backed up inside an epoch: its shuffle comes first
            generator = em.random.get_global_generator()
            after = generator.state
            held = [(v, v.value()) for m in metrics.values() for v in m.variables]
            generator.state = progress.epoch_rng

            def resumed() -> None:
                """Once the trained batches are drawn: the random stream and the running
                metrics as they were at the backup (fit reset the metrics at the epoch's
                start)."""
                em.random.get_global_generator().state = after
                for variable, value in held:
                    variable.assign(value)

        self.model._ember.extra["resume"] = (progress.epoch, progress.batches, resumed)


def _seeded_streams(model: Any) -> dict[str, Any]:
    """The random stream of each ``seed=`` the model's layers hold (``Dropout(seed=7)``
    draws from em.random's stream of seed 7, whose place moves with every draw)."""
    seeds = {layer.__dict__.get("seed") for layer in [model, *model.submodules]}
    return {str(s): em.random._gen(s) for s in sorted(
        s for s in seeds if isinstance(s, int) and not isinstance(s, bool))}


class _Progress:
    """Where training was at a backup: resume at ``epoch`` with its first ``batches``
    batches done; ``epoch_rng`` is the random generator's state at that epoch's start."""

    def __init__(self) -> None:
        self.epoch, self.batches = 0, 0
        self.epoch_rng: Any = None

    def __checkpoint_state__(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "batches": self.batches, "epoch_rng": self.epoch_rng}

    def __checkpoint_restore_state__(self, state: dict[str, Any]) -> None:
        self.epoch, self.batches = int(state["epoch"]), int(state["batches"])
        self.epoch_rng = state["epoch_rng"]


def _delete(directory: str, paths: list[str]) -> None:
    """Remove the backups, the manager's state and lock files, then the directory if that
    left it empty (never anything else a user put there)."""
    for path in [p + ".safetensors" for p in paths] + [
            os.path.join(directory, "checkpoint"),
            os.path.join(directory, ".ember-checkpoint.lock")]:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    try:
        os.rmdir(directory)
    except OSError:  # not empty: someone else's files are there too
        pass

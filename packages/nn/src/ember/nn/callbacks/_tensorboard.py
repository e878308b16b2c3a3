"""``TensorBoard``: ``fit``'s logs, learning rate and weights as TensorBoard summaries,
written with ember.summary."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from ._base import Callback
from ._monitor import _whole


class TensorBoard(Callback):
    """Write what ``fit`` and ``evaluate`` log for TensorBoard (Keras's, on ember.summary).

    Event files go to ``log_dir/train`` and ``log_dir/validation``, as Keras writes them:
    ``epoch_<name>`` scalars at each epoch's end (step: the epoch), the training ones
    (with ``epoch_learning_rate``) under ``train``, the ``val_`` ones without their prefix
    under ``validation``; ``evaluation_<name>_vs_iterations`` under ``validation`` after
    each evaluation (step: the optimizer's iterations).

    Args:
        log_dir: the directory of the run.
        histogram_freq: every this many epochs (0: never), a histogram of every weight,
            tagged ``<weight name>/histogram`` (``dense/kernel/histogram``).
        write_graph: write the model's layer table (``model.summary()``) as text at step
            0, the first time a batch has trained. ember has no graph for TensorBoard's
            Graphs dashboard: the table is written to its Text dashboard instead.
        write_images: with the histograms, each weight as an image (Keras's layout), tagged
            ``<weight name>/image``.
        write_steps_per_second: also write ``epoch_steps_per_second`` (and, with a batch
            ``update_freq``, ``batch_steps_per_second``).
        update_freq: ``"epoch"``; or ``"batch"`` (1) or a number N: every N training batches
            (counted over the whole ``fit``) also ``batch_<name>`` scalars of the running
            logs, at that count. Each such write reads the logs back from the device (a
            GPU sync), so a small N slows training on a GPU.
        profile_batch: only 0: ember has no profiler that TensorBoard reads; another value
            is an error naming it.
        embeddings_freq: only 0: ember does not write TensorBoard's projector files.
        embeddings_metadata: only None, for the same reason.

    Summaries that a model's own ``train_step`` writes are not redirected to these writers
    (Keras makes its writer the default while batches train, with a batch ``update_freq``):
    write them with your own ``summary.create_file_writer``.

    Examples:
        >>> import numpy as np, tempfile
        >>> from ember import nn, summary
        >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,))])
        >>> model.compile("sgd", "mse")
        >>> log_dir = tempfile.mkdtemp()
        >>> _ = model.fit(np.ones((4, 2), np.float32), np.zeros(4), epochs=2, verbose=0,
        ...               callbacks=[nn.callbacks.TensorBoard(log_dir)])
        >>> import glob
        >>> [path] = glob.glob(f"{log_dir}/train/events.out.tfevents.*")
        >>> sorted({v.tag for e in summary.read_events(path) for v in e.summary.value})
        ['epoch_learning_rate', 'epoch_loss', 'model_summary']
    """

    def __init__(self, log_dir: Any = "logs", histogram_freq: int = 0, write_graph: bool = True,
                 write_images: bool = False, write_steps_per_second: bool = False,
                 update_freq: Any = "epoch", profile_batch: Any = 0, embeddings_freq: int = 0,
                 embeddings_metadata: Any = None) -> None:
        super().__init__()
        if profile_batch not in (0, "0", (0, 0), [0, 0]):
            raise ValueError(f"TensorBoard: profile_batch={profile_batch!r}: ember has no "
                             f"profiler whose traces TensorBoard reads; leave it 0")
        if embeddings_freq != 0:
            raise ValueError(f"TensorBoard: embeddings_freq={embeddings_freq!r}: ember does "
                             f"not write TensorBoard's embedding projector files; leave it 0")
        if embeddings_metadata is not None:
            raise ValueError("TensorBoard: embeddings_metadata: ember does not write "
                             "TensorBoard's embedding projector files; leave it None")
        for arg, value in (("write_graph", write_graph), ("write_images", write_images),
                           ("write_steps_per_second", write_steps_per_second)):
            if not isinstance(value, bool):
                raise TypeError(f"TensorBoard: {arg} must be a bool, got {value!r}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = _whole("TensorBoard", "histogram_freq", histogram_freq)
        self.write_graph, self.write_images = write_graph, write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = _update_freq(update_freq)
        self._writers: dict[str, Any] = {}
        self._global_train_batch = self._global_test_batch = 0
        self._graph_written = False
        self._epoch_start = (0, 0.0)
        self._batch_start = 0.0

    def set_model(self, model: Any) -> None:
        super().set_model(model)
        self._graph_written = not self.write_graph

    def _writer(self, which: str) -> Any:
        """The ``train`` or ``validation`` writer, made when first needed (and again after
        ``on_train_end`` closed it)."""
        if which not in self._writers:
            self._writers[which] = _summary().create_file_writer(
                os.path.join(self.log_dir, which))
        return self._writers[which]

    # --- training ----------------------------------------------------------------------
    def on_train_begin(self, logs: Any = None) -> None:
        self._global_train_batch = 0

    def on_train_end(self, logs: Any = None) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._epoch_start = (self._global_train_batch, time.perf_counter())

    def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
        self._global_train_batch += 1
        if self.write_steps_per_second:
            self._batch_start = time.perf_counter()

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        if not self._graph_written:
            self._write_graph()
        step = self._global_train_batch
        if self.update_freq == "epoch" or step % self.update_freq:
            return
        from .. import training

        values = training.host_logs(logs or {})  # one read for all of them
        if self.write_steps_per_second:
            values["steps_per_second"] = 1.0 / max(time.perf_counter() - self._batch_start,
                                                   1e-9)
        with self._writer("train").as_default():
            for name, value in values.items():
                _scalars(f"batch_{name}", value, step)

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        logs = logs or {}
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and "learning_rate" in getattr(optimizer, "_hypers", {}):
            train["learning_rate"] = float(optimizer._host_hyper("learning_rate"))
        if self.write_steps_per_second:
            batches, start = self._epoch_start
            train["steps_per_second"] = (self._global_train_batch - batches) / max(
                time.perf_counter() - start, 1e-9)
        with self._writer("train").as_default():
            for name, value in train.items():
                _scalars(f"epoch_{name}", value, epoch)
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        if val:
            with self._writer("validation").as_default():
                for name, value in val.items():
                    _scalars(f"epoch_{name}", value, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._write_weights(epoch)

    # --- evaluation (fit's validation and evaluate) -----------------------------------
    def on_test_batch_begin(self, batch: int, logs: Any = None) -> None:
        self._global_test_batch += 1

    def on_test_end(self, logs: Any = None) -> None:
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None or not logs:
            return
        step = int(optimizer.iterations.numpy())
        writer = self._writer("validation")
        with writer.as_default():
            for name, value in logs.items():
                _summary().scalar(f"evaluation_{name}_vs_iterations", value, step=step)
        writer.flush()

    # --- weights and the model ---------------------------------------------------------
    def _write_weights(self, epoch: int) -> None:
        with self._writer("train").as_default():
            for path, variable in _tags(self.model).items():
                _summary().histogram(f"{path}/histogram", variable.value(), step=epoch)
                if self.write_images:
                    image = _weight_image(variable.numpy())
                    if image is not None:
                        _summary().image(f"{path}/image", image, step=epoch)

    def _write_graph(self) -> None:
        from ..model import summary_text

        self._graph_written = True
        with self._writer("train").as_default():
            _summary().text("model_summary", f"```\n{summary_text(self.model)}\n```", step=0)


def _tags(model: Any) -> dict[str, Any]:
    """Each weight by its name (``dense/kernel``, as Keras's ``weight.path`` less the
    model's name), or by its path in the model (``layers/0/kernel``) where two share a
    name."""
    by_path = model.variables_by_path()
    names = {str(v.name).split(":")[0]: v for v in by_path.values()}
    return names if len(names) == len(by_path) else by_path


def _summary() -> Any:
    """ember.summary, imported when a TensorBoard callback first writes (it loads protobuf:
    importing ember.nn stays quick)."""
    from ember import summary

    return summary


def _update_freq(value: Any) -> Any:
    if value == "epoch":
        return "epoch"
    if value == "batch":
        return 1
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"TensorBoard: update_freq must be 'epoch', 'batch' or a whole "
                         f"number >= 1, got {value!r}")
    return int(value)


def _weight_image(w: np.ndarray) -> np.ndarray | None:
    """A weight as an NHWC batch of images, laid out as Keras does (a bias: one column; a
    kernel: its longer side across; a 1-D convolution's kernel: one image per input
    channel); None for shapes Keras shows no image of."""
    w = np.squeeze(w)
    if w.ndim == 1:
        w = w.reshape(1, w.shape[0], 1, 1)
    elif w.ndim == 2:
        if w.shape[0] > w.shape[1]:
            w = w.T
        w = w.reshape(1, w.shape[0], w.shape[1], 1)
    elif w.ndim == 3:
        w = np.transpose(w, (2, 0, 1))[..., None]
    if w.ndim == 4 and w.shape[-1] in (1, 3, 4):
        return w
    return None


def _scalars(tag: str, value: Any, step: int) -> None:
    """One scalar, or one per result of a metric of several (``<tag>_0``, ``<tag>_1``...)."""
    flat = np.asarray(value).reshape(-1)
    if np.ndim(value) == 0:
        _summary().scalar(tag, value, step=step)
    else:
        for i, v in enumerate(flat):
            _summary().scalar(f"{tag}_{i}", float(v), step=step)

"""Train an MNIST classifier with ember: data -> model -> GradientTape -> optimizer.

Says where the run goes (checkpoints, TensorBoard logs), shows progress, checkpoints each
epoch (and every ``--checkpoint-every`` steps) and, run again, resumes the latest checkpoint
(model, optimizer, global step, data position). It resumes only a run of the same model and
options: ``run.json`` in the run directory records them, and a different configuration
stops with a message that says how to start a separate run.

    python examples/mnist.py                          # the MLP, 1 epoch: ~15 s on a CPU
    python examples/mnist.py --eager                  # every step eagerly (same numbers)
    python examples/mnist.py --epochs 2 --model cnn   # CNN + LSTM: ~3 min an epoch on 2 cores
    mpiexec -n 2 python examples/mnist.py --distributed   # data-parallel over 2 processes

With ``--distributed`` (and ember-distribute installed), every rank takes its share of each
global batch of ``--batch-size``, gradients are averaged over the ranks, only rank 0
writes checkpoints, logs and run.json, and every rank resumes from rank 0's checkpoint.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
from mnist_support import (
    RunDir,
    commands,
    missing_files,
    missing_mnist,
    run_in_use,
    tensorboard_command,
    with_option,
)

import ember.core as em
from ember import checkpoint, data, graph, nn, summary, tape


class LinearModel(nn.Model):
    """Two Dense layers and no activation, ``dense2`` applied twice (sharing its variables).

    The model of the classic eager-execution MNIST tutorial. Being linear, it reaches about
    92% at best.
    """

    def __init__(self) -> None:
        super().__init__()
        self.dense1 = nn.layers.Dense(units=10)
        self.dense2 = nn.layers.Dense(units=10)

    def call(self, inputs, training=None):
        return self.dense2(self.dense2(self.dense1(inputs)))


class MLP(nn.Model):
    """784-128-10 with ReLU: about 95% after one epoch, in seconds on a CPU."""

    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.dense1 = nn.layers.Dense(hidden, activation="relu")
        self.dense2 = nn.layers.Dense(10)

    def call(self, inputs, training=None):
        return self.dense2(self.dense1(inputs))


class CNNLSTM(nn.Model):
    """Conv, pool, conv, pool, then an LSTM over the 49 positions: ~98.5% after 4 epochs."""

    def __init__(self, hidden_units: int = 128, n_cls: int = 10) -> None:
        super().__init__()
        self.reshape_img = nn.layers.Reshape([28, 28, 1])
        self.conv1 = nn.layers.Conv2D(32, 5, padding="SAME", activation="relu")
        self.pool1 = nn.layers.MaxPool2D(padding="SAME")
        self.conv2 = nn.layers.Conv2D(64, 5, padding="SAME", activation="relu")
        self.pool2 = nn.layers.MaxPool2D(padding="SAME")
        self.reshape_conv = nn.layers.Reshape([49, 64])
        self.lstm = nn.layers.LSTM(units=hidden_units, use_bias=True)
        self.dense = nn.layers.Dense(units=n_cls)

    def call(self, imgs, training=None):
        x = self.pool1(self.conv1(self.reshape_img(imgs)))
        x = self.pool2(self.conv2(x))
        return self.dense(self.lstm(self.reshape_conv(x)))


MODELS = {"linear": LinearModel, "mlp": MLP, "cnn": CNNLSTM}
ALIASES = {"seed-linear": "linear"}  # the name before 0.2
DEFAULT_WORKDIR = "mnist_run"
# the options that define a run: resuming with different ones would mix two experiments
CONFIG_KEYS = ("model", "batch_size", "learning_rate", "seed", "train_limit")


def model_name(value: str) -> str:
    name = ALIASES.get(value, value)
    if name not in MODELS:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(MODELS)} (got {value!r})")
    return name


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=None,
                   help="folder with the four MNIST IDX .gz files (default: $EMBER_DATA, "
                        "else ~/.cache/ember/datasets/mnist)")
    p.add_argument("--download", action=argparse.BooleanOptionalAction, default=True,
                   help="fetch missing MNIST files into the data folder (default: yes)")
    p.add_argument("--no-verify", action="store_true",
                   help="skip the official checksums (your own files in MNIST's IDX format)")
    p.add_argument("--model", type=model_name, default="mlp", metavar="{linear,mlp,cnn}",
                   help="linear: 2 Dense, no activation; mlp: 784-128-10; cnn: CNN + LSTM, "
                        "about 3 min an epoch on a 2-core CPU (seconds on a GPU) "
                        "(default: mlp)")
    p.add_argument("--epochs", type=int, default=1, help="train up to this many epochs in "
                   "all; a finished run trains further when asked for more (default: 1)")
    p.add_argument("--batch-size", type=int, default=32, help="(default: 32)")
    p.add_argument("--learning-rate", type=float, default=1e-3, help="Adam's (default: 0.001)")
    p.add_argument("--device", default=None, help="e.g. /cpu:0 or /gpu:0 (default: automatic)")
    p.add_argument("--workdir", default=None,
                   help="the run directory: run.json, checkpoints in ckpt/, TensorBoard logs in "
                        f"logs/ (default: {DEFAULT_WORKDIR}/MODEL, one run per model)")
    p.add_argument("--checkpoint-every", type=int, default=0,
                   help="also checkpoint every N steps (default: 0, once per epoch)")
    p.add_argument("--max-steps", type=int, default=0,
                   help="stop at global step N, with a checkpoint (default: 0, no limit)")
    p.add_argument("--train-limit", type=int, default=0,
                   help="train on the first N examples only (default: 0, all 60,000)")
    p.add_argument("--seed", type=int, default=0, help="(default: 0)")
    p.add_argument("--save-weights", default=None, help="write the final weights to this .npz")
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel over the ranks of `mpiexec -n N` (ember-distribute); "
                        "--batch-size is the global batch")
    p.add_argument("--eager", action="store_true",
                   help="run every training step eagerly (default: trace the step once with "
                        "graph.function and replay it: the same numbers, less Python; "
                        "--distributed always runs eagerly)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar or progress lines (CI=true: lines, not a bar)")
    args = p.parse_args(argv)
    for name in ("epochs", "batch_size"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.workdir is None:
        args.workdir = os.path.join(DEFAULT_WORKDIR, args.model)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def load(args: argparse.Namespace, split: str) -> data.Dataset:
    """MNIST from --data-dir, $EMBER_DATA or the cache; downloaded (checksummed) if missing."""
    sums = {} if args.no_verify else None
    folder, missing = missing_files(args.data_dir)
    if missing and args.download:
        print(f"MNIST is not in {folder}; downloading it there ...", file=sys.stderr, flush=True)
    try:
        return data.datasets.mnist(split, data_dir=args.data_dir, download=args.download,
                                   checksums=sums)
    except (FileNotFoundError, OSError) as e:
        sys.exit(missing_mnist(args.data_dir, args.download, e))


# Steps after a run's first that the estimate does not time: they trace the step and, on a
# GPU, compile its kernels and capture its CUDA graph (seconds each where a step then takes
# milliseconds: timed from the first step, an 11 s epoch was estimated at 2.8 h).
WARMUP_STEPS = 3
MAX_REVISIONS = 2


class Progress:
    """A tqdm bar on a terminal; in logs and under CI=true a plain line every 10 s.

    It also prints an estimate of the time per epoch when that is over a minute. Steps are
    timed after warm-up (``WARMUP_STEPS``), in windows: the first of 5 steps (or 3 s), each
    next one four times as long. A window that ran at least twice as fast or as slow as the
    estimate revises it (at most ``MAX_REVISIONS`` times): warm-up can outlast its steps.
    """

    def __init__(self, total: int, initial: int, steps_per_epoch: int, quiet: bool,
                 mute: bool = False, clock=time.perf_counter) -> None:
        self.total, self.steps_per_epoch = total, steps_per_epoch
        self.mute = mute  # another rank reports
        self.clock = clock
        self.bar = None
        interactive = sys.stderr.isatty() and os.environ.get("CI", "").lower() in ("", "0", "false")
        if interactive and not quiet:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True,
                                mininterval=0.5)
            except ImportError:
                pass
        self.lines = not quiet and self.bar is None
        self.s0: int | None = None  # the run's first step
        self.window: tuple[int, float, int] | None = None  # (step, time) it starts, steps
        self.rate: float | None = None  # the last window's steps/s
        self.estimate: float | None = None  # the rate the estimate stands on
        self.shown = False  # an estimate was printed
        self.revisions = 0
        self.last_line = clock()
        self.last_postfix = 0.0

    def step(self, s: int, loss) -> None:
        """Step ``s`` done; ``loss()`` gives the running loss. It is called only when shown
        (every 0.5 s on a bar, 10 s in lines): on a GPU each read waits for the device."""
        now = self.clock()
        if self.s0 is None:
            self.s0 = s
        if self.window is None and s - self.s0 >= WARMUP_STEPS:
            self.window = (s, now, 5)
        if self.bar is not None:
            if now - self.last_postfix >= 0.5:
                self.last_postfix = now
                self.bar.set_postfix(loss=f"{float(loss()):.4f}", refresh=False)
            self.bar.update(1)
        rate = self.rate
        if self.window is not None and s > self.window[0] and now > self.window[1]:
            start, t, steps = self.window
            rate = (s - start) / (now - t)
            if s - start >= steps or (self.rate is None and now - t >= 3):
                self._judge(s, rate, s - start)
                self.window = (s, now, 4 * (s - start))
        if self.lines and now - self.last_line >= 10:
            self.last_line = now
            pace = ("warming up (the first steps trace the step and compile kernels)"
                    if rate is None else f"{rate:.1f} steps/s, about "
                    f"{_duration((self.total - s) / rate)} left")
            self.write(f"step {s}/{self.total} ({100 * s // self.total}%), loss "
                       f"{float(loss()):.4f}, {pace}")

    def _judge(self, s: int, rate: float, steps: int) -> None:
        """A window of ``steps`` ended at step ``s`` with ``rate``: estimate, or revise."""
        self.rate = rate
        per_epoch, left = self.steps_per_epoch / rate, (self.total - s) / rate
        slow = per_epoch >= 60 or left >= 60
        if self.estimate is None:
            self.estimate, self.shown = rate, slow
            if slow:
                hint = " (--max-steps N stops sooner; a later run resumes)" if left >= 60 else ""
                self.write(f"estimate: {rate:.1f} steps/s on this machine, about "
                           f"{_duration(per_epoch)} per epoch and {_duration(left)} to step "
                           f"{self.total}{hint}")
            return
        if (self.revisions >= MAX_REVISIONS or (not self.shown and not slow)
                or max(rate, self.estimate) < 2 * min(rate, self.estimate)):
            return
        self.estimate, self.shown = rate, True
        self.revisions += 1
        self.write(f"estimate revised: {rate:.1f} steps/s over the last {steps} steps, about "
                   f"{_duration(per_epoch)} per epoch and {_duration(left)} to step "
                   f"{self.total}")

    def write(self, msg: str) -> None:
        if self.mute:
            return
        if self.bar is not None:
            self.bar.write(msg)
        else:
            print(msg, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Job:
    """One run: the data pipeline, the model, its optimizer and their checkpoints."""

    def __init__(self, args: argparse.Namespace, train_ds: data.Dataset) -> None:
        self.args = args
        n_train = len(train_ds)
        self.steps_per_epoch = math.ceil(n_train / args.batch_size)
        self.total = self.steps_per_epoch * args.epochs
        shuffled = train_ds.shuffle(10000, seed=args.seed)  # the same order on every rank
        if args.world is not None and args.world.size() > 1:
            # rank r takes rows r, r+n, ... of each global batch: its share of every batch
            n, batch = args.world.size(), args.batch_size // args.world.size()
            shuffled = shuffled.shard(n, args.world.rank())
            self.steps_per_epoch = math.ceil(n_train / (batch * n))
            self.total = self.steps_per_epoch * args.epochs
        else:
            batch = args.batch_size
        pipeline = shuffled.batch(batch).repeat(args.epochs)
        self.model = MODELS[args.model]()
        self.model(em.zeros([1, 784]))  # build now, so that restore checks every variable
        self.optimizer = nn.optimizers.Adam(learning_rate=args.learning_rate)
        if args.world is not None:
            self.optimizer = args.world.DistributedOptimizer(self.optimizer)
        with em.device("/cpu:0"):  # on the host, as TF keeps it: reading it (every step, by
            # the summary policy and the loop) then never waits for a GPU
            self.step = em.Variable(0, dtype=em.int64, trainable=False, name="global_step")
        if not args.eager and args.world is None:
            # Graphs on demand: the step is traced once and replayed (the first call makes
            # Adam's slots; the second traces). Distributed steps stay eager: their
            # collectives are not ops a replay can redo yet.
            self.train_step = graph.function(self.train_step)
        self.batches = iter(pipeline)
        self.ckpt = checkpoint.Checkpoint(model=self.model, optimizer=self.optimizer,
                                          step=self.step, data=self.batches)
        self.ckpt_dir = os.path.join(args.workdir, "ckpt")
        if args.world is not None:  # rank 0 keeps the checkpoints; save() is a no-op elsewhere
            self.manager = args.world.chief_only(checkpoint.CheckpointManager, self.ckpt,
                                                 self.ckpt_dir, max_to_keep=3)
        else:
            self.manager = checkpoint.CheckpointManager(self.ckpt, self.ckpt_dir, max_to_keep=3)

    def resume(self) -> None:
        """Restore the latest checkpoint, which must hold every object of this model.

        Distributed, every rank restores the checkpoint rank 0 sees as latest."""
        job = self

        class Checked:
            def restore(self, path):
                return job.ckpt.restore(path).assert_existing_objects_matched().expect_partial()

        try:
            if self.args.world is not None:
                latest = self.args.world.restore_latest(Checked(), self.ckpt_dir)
            else:
                latest = self.manager.latest_checkpoint
                if latest is not None:
                    Checked().restore(latest)
        except checkpoint.CheckpointError as e:
            sys.exit(f"{latest} does not fit this job's {self.args.model} model, so it cannot "
                     f"be resumed:\n{e}\nStart a separate run with --workdir NEW_DIR, or delete "
                     f"{self.args.workdir} to start over.")
        if latest is not None:
            say(f"resumed from {latest} at step {int(self.step)}")

    def train_step(self, images, labels):
        with tape.GradientTape() as t:
            logits = self.model(images, training=True)
            loss = nn.losses.sparse_softmax_cross_entropy(labels, logits)
        variables = self.model.trainable_variables
        grads = t.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables), global_step=self.step)
        return loss, logits

    def fit(self, stop: int, writer) -> float:
        """Train up to global step ``stop``; returns the seconds spent."""
        args, per_epoch = self.args, self.steps_per_epoch
        loss_avg, acc = nn.metrics.Mean("loss"), nn.metrics.SparseCategoricalAccuracy()
        bar = Progress(stop, int(self.step), per_epoch, args.no_progress or not chief(args),
                       mute=not chief(args))
        t0 = time.perf_counter()
        with writer.as_default(), summary.record_summaries_every_n_global_steps(50, self.step):
            for images, labels in self.batches:
                loss, logits = self.train_step(images, labels)
                loss_avg(loss)
                acc(labels, logits)
                summary.scalar("loss", loss, step=self.step)
                s = int(self.step)
                bar.step(s, loss_avg.result)
                if args.checkpoint_every and s % args.checkpoint_every == 0:
                    self.manager.save(checkpoint_number=s)
                if s % per_epoch == 0 or s >= stop:
                    with summary.always_record_summaries():  # off the every-50 grid
                        summary.scalar("train_accuracy", acc.result(), step=self.step)
                    bar.write(self._epoch_line(s, stop, loss_avg, acc))
                    loss_avg.reset_states()
                    acc.reset_states()
                    self.manager.save(checkpoint_number=s)
                if s >= stop:
                    break
        bar.close()
        return time.perf_counter() - t0

    def _epoch_line(self, s: int, stop: int, loss_avg, acc) -> str:
        per_epoch, epochs = self.steps_per_epoch, self.args.epochs
        metrics = f"loss {float(loss_avg.result()):.4f}, accuracy {float(acc.result()):.4f}"
        if s % per_epoch == 0:
            return f"epoch {s // per_epoch}/{epochs}: {metrics}"
        into = s - (s // per_epoch) * per_epoch
        return (f"stopped early at step {s} (--max-steps {stop}), {into} of {per_epoch} steps "
                f"into epoch {s // per_epoch + 1}/{epochs}: {metrics} over those steps. Run "
                f"again without --max-steps (or with a larger one) to go on from step {s}.")

    def evaluate(self, test_ds: data.Dataset) -> float:  # every rank: the same weights
        acc = nn.metrics.SparseCategoricalAccuracy()
        for images, labels in test_ds.batch(1000):
            acc(labels, self.model(images, training=False))
        return float(acc.result())


def already_done(job: Job, run: RunDir, stop: int) -> bool:
    """Say so, and how to go on, when the run has nothing left to do."""
    args, s = job.args, int(job.step)
    if s < stop:
        return False
    last = run.record.get("last", {})
    result = f", test accuracy {last['test_accuracy']:.4f}" if "test_accuracy" in last else ""
    if s < job.total:  # stopped by --max-steps
        say(f"{args.workdir} is at step {s}, and --max-steps {args.max_steps} asks for no "
              f"more: nothing to do. To go on, run without --max-steps or with a larger one.")
        return True
    done = s / job.steps_per_epoch
    argv = with_option(with_option(args.argv, "--max-steps", None), "--epochs",
                       str(math.floor(done) + 1))
    say(f"{args.workdir} is already complete: {done:g} epoch(s), {s} steps{result}.\n"
          f"To train further, ask for more epochs:\n"
          f"{commands(argv)}\n"
          f"To start fresh, delete {args.workdir} or pass --workdir NEW_DIR.")
    return True


def chief(args: argparse.Namespace) -> bool:
    return args.world is None or args.world.is_chief()


def say(msg: str) -> None:
    """Print on rank 0 only (every rank, when not distributed)."""
    if _ARGS is None or chief(_ARGS):
        print(msg, flush=True)


_ARGS: argparse.Namespace | None = None


def join_world(args: argparse.Namespace) -> None:
    args.world = None
    if not args.distributed:
        return
    try:
        from ember import distribute
    except ImportError:
        sys.exit("--distributed needs ember-distribute: pip install './packages/distribute[mpi]'")
    distribute.init()
    if args.batch_size % distribute.size():
        sys.exit(f"--batch-size {args.batch_size} (the global batch) does not split evenly over "
                 f"{distribute.size()} ranks")
    args.world = distribute


def train(args: argparse.Namespace) -> float | None:
    global _ARGS
    _ARGS = args
    config = {k: getattr(args, k) for k in CONFIG_KEYS}
    run = RunDir(args.workdir, config)
    run.check()  # exits, saying why and what to do, if the folder holds another run
    em.random.set_seed(args.seed)
    train_ds = load(args, "train")
    if args.train_limit:
        train_ds = train_ds.take(args.train_limit)
    test_ds = load(args, "test")
    try:
        job = Job(args, train_ds)
    except checkpoint.CheckpointLockedError as e:  # another job trains in this directory
        sys.exit(run_in_use(args.workdir, os.path.join(args.workdir, "ckpt"), e))
    stop = min(job.total, args.max_steps) if args.max_steps else job.total
    world = "" if args.world is None else f", {args.world.size()} ranks"
    say(f"run directory {args.workdir} ({args.model}, {args.epochs} epoch(s) of "
          f"{job.steps_per_epoch} steps{world})\n"
          f"  checkpoints      {job.ckpt_dir}\n"
          f"  TensorBoard logs {os.path.join(args.workdir, 'logs')}   view them: "
          f"{tensorboard_command(args.workdir, DEFAULT_WORKDIR)}\n"
          f"  configuration    {run.path}")
    job.resume()
    if already_done(job, run, stop):
        return None
    if chief(args):
        run.write()
    logdir = os.path.join(args.workdir, "logs")
    writer = summary.create_file_writer(logdir if chief(args) else None)
    elapsed = job.fit(stop, writer)
    test_acc = job.evaluate(test_ds)
    with writer.as_default():
        summary.scalar("test_accuracy", test_acc, step=int(job.step))
    writer.close()
    if not chief(args):
        return test_acc
    run.write(last={"step": int(job.step), "test_accuracy": test_acc})
    say(f"test accuracy {test_acc:.4f} ({int(job.step)} steps, {elapsed:.1f}s this run)")
    if args.save_weights:
        np.savez(args.save_weights,
                 **{p: v.numpy() for p, v in job.model.variables_by_path().items()})
    return test_acc


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    join_world(args)
    if args.device:
        with em.device(args.device):
            train(args)
    else:
        train(args)


if __name__ == "__main__":
    main()

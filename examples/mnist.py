"""The seeds' MNIST walkthrough as a real program: data -> model -> GradientTape -> optimizer.

With a progress bar, loss and accuracy per epoch, TensorBoard summaries, checkpoints (each
epoch and every ``--checkpoint-every`` steps) and resumption from the latest checkpoint
(model, optimizer, global step, data position) when run again.

    python examples/mnist.py --epochs 1 --model mlp
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

import ember.core as em
from ember import checkpoint, data, nn, summary, tape


class MNISTModel(nn.Model):
    """The seeds' two-Dense model: ``dense2`` is applied twice (it shares its variables).

    It has no activation, so it is linear: about 92% on MNIST at best.
    """

    def __init__(self) -> None:
        super().__init__()
        self.dense1 = nn.layers.Dense(units=10)
        self.dense2 = nn.layers.Dense(units=10)

    def call(self, inputs, training=None):
        return self.dense2(self.dense2(self.dense1(inputs)))


class MLP(nn.Model):
    """784-128-10 with ReLU: the seeds' model structure with a hidden layer that can learn."""

    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.dense1 = nn.layers.Dense(hidden, activation="relu")
        self.dense2 = nn.layers.Dense(10)

    def call(self, inputs, training=None):
        return self.dense2(self.dense1(inputs))


class MNISTHighLevel(nn.Model):
    """The seeds' CNN + LSTM (``MNIST_HighLevel``): conv, pool, conv, pool, LSTM over rows."""

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


MODELS = {"mlp": MLP, "seed-linear": MNISTModel, "cnn": MNISTHighLevel}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=None,
                   help="folder with the MNIST IDX .gz files (default: $EMBER_DATA or the cache)")
    p.add_argument("--download", action="store_true", help="fetch missing MNIST files")
    p.add_argument("--no-verify", action="store_true",
                   help="skip the official checksums (your own files in MNIST's IDX format)")
    p.add_argument("--model", choices=sorted(MODELS), default="mlp")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--device", default=None, help="e.g. /cpu:0 or /gpu:0 (default: automatic)")
    p.add_argument("--workdir", default="mnist_run", help="checkpoints and summaries go here")
    p.add_argument("--checkpoint-every", type=int, default=0,
                   help="also checkpoint every N steps (0: once per epoch)")
    p.add_argument("--max-steps", type=int, default=0, help="stop after N steps (0: no limit)")
    p.add_argument("--train-limit", type=int, default=0, help="use only the first N examples")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save-weights", default=None, help="write final weights to this .npz")
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def load(args: argparse.Namespace, split: str) -> data.Dataset:
    """MNIST from --data-dir, $EMBER_DATA or the cache; downloaded (checksummed) if missing."""
    sums = {} if args.no_verify else None
    try:
        return data.datasets.mnist(split, data_dir=args.data_dir, download=args.download,
                                   checksums=sums)
    except FileNotFoundError as missing:
        try:
            print("MNIST not found locally; downloading the official files ...", file=sys.stderr)
            return data.datasets.mnist(split, data_dir=args.data_dir, download=True,
                                       checksums=sums)
        except OSError as e:
            sys.exit(f"{missing}\nThe download failed too ({e}). Put the four official "
                     "*-ubyte.gz files in a folder and pass --data-dir DIR or set $EMBER_DATA.")


def progress(total: int, initial: int, disable: bool):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, initial=initial, disable=disable, unit="step", dynamic_ncols=True)


def train(args: argparse.Namespace) -> float:
    em.random.set_seed(args.seed)
    train_ds = load(args, "train")
    if args.train_limit:
        train_ds = train_ds.take(args.train_limit)
    n_train = len(train_ds)
    steps_per_epoch = math.ceil(n_train / args.batch_size)
    pipeline = train_ds.shuffle(10000, seed=args.seed).batch(args.batch_size).repeat(args.epochs)

    model = MODELS[args.model]()
    optimizer = nn.optimizers.Adam(learning_rate=args.learning_rate)
    step = em.Variable(0, dtype=em.int64, trainable=False, name="global_step")
    batches = iter(pipeline)
    ckpt = checkpoint.Checkpoint(model=model, optimizer=optimizer, step=step, data=batches)
    manager = checkpoint.CheckpointManager(ckpt, os.path.join(args.workdir, "ckpt"), max_to_keep=3)
    if manager.latest_checkpoint:
        ckpt.restore(manager.latest_checkpoint).expect_partial()
        print(f"resumed from {manager.latest_checkpoint} at step {int(step)}")
    writer = summary.create_file_writer(os.path.join(args.workdir, "logs"))

    total = steps_per_epoch * args.epochs
    if args.max_steps:
        total = min(total, args.max_steps)
    loss_avg, acc = nn.metrics.Mean("loss"), nn.metrics.SparseCategoricalAccuracy()
    bar = progress(total, int(step), args.no_progress)
    t0 = time.perf_counter()
    with writer.as_default(), summary.record_summaries_every_n_global_steps(50, step):
        for images, labels in batches:
            with tape.GradientTape() as t:
                logits = model(images, training=True)
                loss = nn.losses.sparse_softmax_cross_entropy(labels, logits)
            grads = t.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables), global_step=step)
            loss_avg(loss)
            acc(labels, logits)
            summary.scalar("loss", loss, step=step)
            s = int(step)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{float(loss_avg.result()):.4f}")
            if args.checkpoint_every and s % args.checkpoint_every == 0:
                manager.save(checkpoint_number=s)
            if s % steps_per_epoch == 0 or s == total:
                epoch = math.ceil(s / steps_per_epoch)
                with summary.always_record_summaries():  # epoch ends are off the every-50 grid
                    summary.scalar("train_accuracy", acc.result(), step=step)
                msg = (f"epoch {epoch}: loss {float(loss_avg.result()):.4f}, "
                       f"accuracy {float(acc.result()):.4f}")
                (bar.write if bar is not None else print)(msg)
                loss_avg.reset_states()
                acc.reset_states()
                manager.save(checkpoint_number=s)
            if s >= total:
                break
    if bar is not None:
        bar.close()
    elapsed = time.perf_counter() - t0
    test_acc = evaluate(args, model)
    with writer.as_default():
        summary.scalar("test_accuracy", test_acc, step=int(step))
    writer.close()
    print(f"test accuracy {test_acc:.4f} ({int(step)} steps, {elapsed:.1f}s this run)")
    if args.save_weights:
        np.savez(args.save_weights, **{p: v.numpy() for p, v in model.variables_by_path().items()})
    return test_acc


def evaluate(args: argparse.Namespace, model: nn.Model) -> float:
    acc = nn.metrics.SparseCategoricalAccuracy()
    for images, labels in load(args, "test").batch(1000):
        acc(labels, model(images, training=False))
    return float(acc.result())


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.device:
        with em.device(args.device):
            train(args)
    else:
        train(args)


if __name__ == "__main__":
    main()

"""Port of keras-team/keras-io guides/writing_your_own_callbacks.py ("Writing your own
callbacks", the tf.keras version): a CustomCallback printing every hook of fit, evaluate and
predict, a LossAndErrorPrintingCallback reading `logs`, EarlyStoppingAtMinLoss (stop_training,
get_weights/set_weights) and a CustomLearningRateScheduler setting the optimizer's learning
rate at the start of each epoch.

Upstream: https://github.com/keras-team/keras-io/blob/ad4fc805f5e1a4a4c0bcdd416aa9feac6608fb6c/guides/writing_your_own_callbacks.py
Changed: names only (keras.Sequential/layers/optimizers/callbacks -> nn.Sequential/layers/
optimizers/callbacks; tf.keras.backend.get_value(v) -> v.numpy(),
tf.keras.backend.set_value(v, x) -> v.assign(x); np.Inf -> np.inf, as numpy 2 spells it);
tf.keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...), read back
as the uint8 28x28 images and labels load_data() gives. Upstream already uses 1,000 training
and 1,000 test images; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 320 of each, the early
stopping run at most 8 epochs and no threshold. Added: a seed for ember; the text that
CustomCallback prints is compared line by line with the hooks, order, batch counts and log
keys Keras gives (validation runs the test hooks inside fit, before on_epoch_end;
on_train_end and on_test_end get the last logs; predict's batch logs hold "outputs"); the
running loss LossAndErrorPrintingCallback prints at the last batch is the epoch's loss and
evaluate's result; a Recorder callback (added after the guide's callbacks) keeps each
epoch's weights and learning rate and the largest weight change of each step, from which:
early stopping stopped at the first epoch whose loss did not improve and left the best
epoch's weights in the model, and every epoch trained with the learning rate the schedule
gave it (RMSprop moves a weight by at most lr / sqrt(1 - rho) a step, and by that much where
a weight meets its first nonzero gradient). To check them, the first two sections run inside
`with printed() as out:` (what they print is kept, then printed) and the early stopping
run keeps fit's History.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

# ruff: noqa: UP008, UP031, UP032 (the guide's spellings: super(C, self), % and .format)
import contextlib
import io
import math
import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn

keras = nn  # the guide's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
N = 320 if SHORT and not FULL else 1000


def load_data(n):
    def split(name):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8), np.asarray(y)
    return split("train"), split("test")


@contextlib.contextmanager
def printed():
    """What the block prints, kept to check and printed after it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        yield out
    print(out.getvalue(), end="")


class Recorder(keras.callbacks.Callback):
    """Each epoch's learning rate (at its first batch) and weights (after its last batch),
    and the largest change of any weight in each step."""

    def on_train_begin(self, logs=None):
        self.lrs, self.weights, self.moves = [], [], []

    def on_epoch_begin(self, epoch, logs=None):
        self.moves.append([])

    def on_train_batch_begin(self, batch, logs=None):
        if batch == 0:
            self.lrs.append(float(self.model.optimizer.learning_rate.numpy()))
        self.before = self.model.get_weights()

    def on_train_batch_end(self, batch, logs=None):
        self.after = self.model.get_weights()
        self.moves[-1].append(max(np.abs(a - b).max() for a, b in zip(self.after, self.before)))

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append(self.after)


# Define the Keras model to add callbacks to
def get_model():
    model = keras.Sequential()
    model.add(keras.layers.Dense(1, input_dim=784))
    model.compile(
        optimizer=keras.optimizers.RMSprop(learning_rate=0.1),
        loss="mean_squared_error",
        metrics=["mean_absolute_error"],
    )
    return model


# Load example MNIST data and pre-process it
(x_train, y_train), (x_test, y_test) = load_data(N)
x_train = x_train.reshape(-1, 784).astype("float32") / 255.0
x_test = x_test.reshape(-1, 784).astype("float32") / 255.0

# Limit the data to 1000 samples
x_train = x_train[:1000]
y_train = y_train[:1000]
x_test = x_test[:1000]
y_test = y_test[:1000]


class CustomCallback(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        keys = list(logs.keys())
        print("Starting training; got log keys: {}".format(keys))

    def on_train_end(self, logs=None):
        keys = list(logs.keys())
        print("Stop training; got log keys: {}".format(keys))

    def on_epoch_begin(self, epoch, logs=None):
        keys = list(logs.keys())
        print("Start epoch {} of training; got log keys: {}".format(epoch, keys))

    def on_epoch_end(self, epoch, logs=None):
        keys = list(logs.keys())
        print("End epoch {} of training; got log keys: {}".format(epoch, keys))

    def on_test_begin(self, logs=None):
        keys = list(logs.keys())
        print("Start testing; got log keys: {}".format(keys))

    def on_test_end(self, logs=None):
        keys = list(logs.keys())
        print("Stop testing; got log keys: {}".format(keys))

    def on_predict_begin(self, logs=None):
        keys = list(logs.keys())
        print("Start predicting; got log keys: {}".format(keys))

    def on_predict_end(self, logs=None):
        keys = list(logs.keys())
        print("Stop predicting; got log keys: {}".format(keys))

    def on_train_batch_begin(self, batch, logs=None):
        keys = list(logs.keys())
        print("...Training: start of batch {}; got log keys: {}".format(batch, keys))

    def on_train_batch_end(self, batch, logs=None):
        keys = list(logs.keys())
        print("...Training: end of batch {}; got log keys: {}".format(batch, keys))

    def on_test_batch_begin(self, batch, logs=None):
        keys = list(logs.keys())
        print("...Evaluating: start of batch {}; got log keys: {}".format(batch, keys))

    def on_test_batch_end(self, batch, logs=None):
        keys = list(logs.keys())
        print("...Evaluating: end of batch {}; got log keys: {}".format(batch, keys))

    def on_predict_batch_begin(self, batch, logs=None):
        keys = list(logs.keys())
        print("...Predicting: start of batch {}; got log keys: {}".format(batch, keys))

    def on_predict_batch_end(self, batch, logs=None):
        keys = list(logs.keys())
        print("...Predicting: end of batch {}; got log keys: {}".format(batch, keys))


with printed() as out:
    model = get_model()
    model.fit(
        x_train,
        y_train,
        batch_size=128,
        epochs=1,
        verbose=0,
        validation_split=0.5,
        callbacks=[CustomCallback()],
    )

    res = model.evaluate(
        x_test, y_test, batch_size=128, verbose=0, callbacks=[CustomCallback()]
    )

    res = model.predict(x_test, batch_size=128, callbacks=[CustomCallback()])

# What Keras prints: the hooks in this order, these batch counts and these log keys
KEYS = ["loss", "mean_absolute_error"]


def batches(what, n):
    return [line for b in range(math.ceil(n / 128)) for line in (
        f"...{what}: start of batch {b}; got log keys: []",
        f"...{what}: end of batch {b}; got log keys: "
        f"{['outputs'] if what == 'Predicting' else KEYS}")]


def testing(n):
    return ["Start testing; got log keys: []", *batches("Evaluating", n),
            f"Stop testing; got log keys: {KEYS}"]


epoch_keys = KEYS + ["val_" + k for k in KEYS]
expected = ["Starting training; got log keys: []", "Start epoch 0 of training; got log keys: []",
            *batches("Training", len(x_train) // 2), *testing(len(x_train) // 2),
            f"End epoch 0 of training; got log keys: {epoch_keys}",
            f"Stop training; got log keys: {epoch_keys}", *testing(len(x_test)),
            "Start predicting; got log keys: []", *batches("Predicting", len(x_test)),
            "Stop predicting; got log keys: []"]
got = out.getvalue().splitlines()
for i, (g, e) in enumerate(zip(got, expected)):
    assert g == e, f"line {i}: {g!r}, Keras prints {e!r}"
assert len(got) == len(expected), (len(got), len(expected), got[len(expected):])
assert res.shape == (len(x_test), 1), res.shape


class LossAndErrorPrintingCallback(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        print(
            "Up to batch {}, the average loss is {:7.2f}.".format(batch, logs["loss"])
        )

    def on_test_batch_end(self, batch, logs=None):
        print(
            "Up to batch {}, the average loss is {:7.2f}.".format(batch, logs["loss"])
        )

    def on_epoch_end(self, epoch, logs=None):
        print(
            "The average loss for epoch {} is {:7.2f} "
            "and mean absolute error is {:7.2f}.".format(
                epoch, logs["loss"], logs["mean_absolute_error"]
            )
        )


with printed() as out:
    model = get_model()
    model.fit(
        x_train,
        y_train,
        batch_size=128,
        epochs=2,
        verbose=0,
        callbacks=[LossAndErrorPrintingCallback()],
    )

    res = model.evaluate(
        x_test,
        y_test,
        batch_size=128,
        verbose=0,
        callbacks=[LossAndErrorPrintingCallback()],
    )

# the loss in the logs is the running mean over the epoch's batches: its last value is the
# epoch's loss (and evaluate's); each epoch prints one line per batch, then its summary
lines = out.getvalue().splitlines()
per_pass = math.ceil(len(x_train) / 128)
assert len(lines) == 2 * (per_pass + 1) + math.ceil(len(x_test) / 128), lines
for epoch in range(2):
    last, summary = lines[epoch * (per_pass + 1) + per_pass - 1: (epoch + 1) * (per_pass + 1)]
    assert last.startswith(f"Up to batch {per_pass - 1},"), (last, summary)
    assert last.split()[-1] == summary.split()[7] + ".", (last, summary)
assert lines[-1].endswith(f" {res[0]:7.2f}."), (lines[-1], res)


class EarlyStoppingAtMinLoss(keras.callbacks.Callback):
    """Stop training when the loss is at its min, i.e. the loss stops decreasing.

  Arguments:
      patience: Number of epochs to wait after min has been hit. After this
      number of no improvement, training stops.
  """

    def __init__(self, patience=0):
        super(EarlyStoppingAtMinLoss, self).__init__()
        self.patience = patience
        # best_weights to store the weights at which the minimum loss occurs.
        self.best_weights = None

    def on_train_begin(self, logs=None):
        # The number of epoch it has waited when loss is no longer minimum.
        self.wait = 0
        # The epoch the training stops at.
        self.stopped_epoch = 0
        # Initialize the best as infinity.
        self.best = np.inf

    def on_epoch_end(self, epoch, logs=None):
        current = logs.get("loss")
        if np.less(current, self.best):
            self.best = current
            self.wait = 0
            # Record the best weights if current results is better (less).
            self.best_weights = self.model.get_weights()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.model.stop_training = True
                print("Restoring model weights from the end of the best epoch.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0:
            print("Epoch %05d: early stopping" % (self.stopped_epoch + 1))


recorder = Recorder()
model = get_model()
history = model.fit(
    x_train,
    y_train,
    batch_size=64,
    steps_per_epoch=5,
    epochs=8 if SHORT and not FULL else 30,
    verbose=0,
    callbacks=[LossAndErrorPrintingCallback(), EarlyStoppingAtMinLoss(), recorder],
)

# patience 0: training stops at the first epoch whose loss is not below the best so far, and
# the model is left with the weights of the epoch before it (the best one)
losses = history.history["loss"]
first_worse = next((e for e in range(1, len(losses)) if losses[e] >= min(losses[:e])), None)
assert first_worse is not None or SHORT, losses  # RMSprop at 0.1 does not improve 30 times
assert len(losses) == (len(recorder.weights) if first_worse is None else first_worse + 1), losses
assert all(len(m) == 5 for m in recorder.moves), recorder.moves  # steps_per_epoch
if first_worse is not None:
    best = int(np.argmin(losses))
    assert best == first_worse - 1, (best, losses)
    assert any(np.abs(a - b).max() > 0 for a, b in zip(recorder.weights[-1],
                                                        recorder.weights[best]))
    for now, kept in zip(model.get_weights(), recorder.weights[best]):
        np.testing.assert_array_equal(now, kept)


class CustomLearningRateScheduler(keras.callbacks.Callback):
    """Learning rate scheduler which sets the learning rate according to schedule.

  Arguments:
      schedule: a function that takes an epoch index
          (integer, indexed from 0) and current learning rate
          as inputs and returns a new learning rate as output (float).
  """

    def __init__(self, schedule):
        super(CustomLearningRateScheduler, self).__init__()
        self.schedule = schedule

    def on_epoch_begin(self, epoch, logs=None):
        if not hasattr(self.model.optimizer, "lr"):
            raise ValueError('Optimizer must have a "lr" attribute.')
        # Get the current learning rate from model's optimizer.
        lr = float(self.model.optimizer.learning_rate.numpy())
        # Call schedule function to get the scheduled learning rate.
        scheduled_lr = self.schedule(epoch, lr)
        # Set the value back to the optimizer before this epoch starts
        self.model.optimizer.lr.assign(scheduled_lr)
        print("\nEpoch %05d: Learning rate is %6.4f." % (epoch, scheduled_lr))


LR_SCHEDULE = [
    # (epoch to start, learning rate) tuples
    (3, 0.05),
    (6, 0.01),
    (9, 0.005),
    (12, 0.001),
]


def lr_schedule(epoch, lr):
    """Helper function to retrieve the scheduled learning rate based on epoch."""
    if epoch < LR_SCHEDULE[0][0] or epoch > LR_SCHEDULE[-1][0]:
        return lr
    for i in range(len(LR_SCHEDULE)):
        if epoch == LR_SCHEDULE[i][0]:
            return LR_SCHEDULE[i][1]
    return lr


recorder = Recorder()
model = get_model()
model.fit(
    x_train,
    y_train,
    batch_size=64,
    steps_per_epoch=5,
    epochs=15,
    verbose=0,
    callbacks=[
        LossAndErrorPrintingCallback(),
        CustomLearningRateScheduler(lr_schedule),
        recorder,
    ],
)

# the schedule's rates, set in on_epoch_begin, are the optimizer's during each epoch and
# the ones its steps use: an RMSprop step moves a weight by at most lr / sqrt(1 - rho), and
# by exactly that where a pixel meets its first nonzero gradient (its mean square was 0)
scheduled = [0.1] * 3 + [0.05] * 3 + [0.01] * 3 + [0.005] * 3 + [0.001] * 3
np.testing.assert_allclose(recorder.lrs, scheduled, rtol=1e-6)
for lr, moves in zip(scheduled, recorder.moves):
    bound = lr / math.sqrt(1 - 0.9)
    assert 0.5 * bound < max(moves) <= bound * (1 + 1e-3), (lr, moves)

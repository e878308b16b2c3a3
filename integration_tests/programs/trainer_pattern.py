"""Port of keras-team/keras-io examples/keras_recipes/trainer_pattern.py ("Trainer pattern": a
Model subclass MyTrainer that wraps another model, owns its loss and metric, lists the metric
in an overridden `metrics` property and trains the wrapped model in its own train_step and
test_step; one Sequential and one functional model share it, compiled with only an optimizer,
SGD and Adam, and fit on MNIST with validation_data).

Upstream: https://github.com/keras-team/keras-io/blob/3b8cb115628c5736c2ca8a016d859d2d53f19a95/examples/keras_recipes/trainer_pattern.py
(the Keras 3 version). Its earlier tf.keras version,
https://github.com/keras-team/keras-io/blob/3aca0563e5cebb3e442bee3f7c30adc53cfe3102/examples/keras_recipes/trainer_pattern.py,
differs in MyTrainer (compiled_loss with regularization_losses, compiled_metrics, no
test_step, no metrics property), in Flatten(input_shape=(28, 28)) and in compile (a string
loss and metrics=["accuracy"]); it runs below too, as MyTrainerTF2, on the same data.
Changed: names only (keras -> nn, tf.GradientTape -> tape.GradientTape; the tape is `t`
because `tape` names the module); os.environ["KERAS_BACKEND"] is dropped;
keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...), turned back
into Keras's uint8 arrays of (n, 28, 28) images and uint8 labels. Reduced
(EMBER_PROGRAMS_FULL=1 restores it): 20,000 training and 1,000 test images, 3 epochs per
fit (upstream 60,000, 10,000 and 5: so SGD takes 939 steps of 64, as upstream's first
epoch); EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 512 and 256 images, 1 epoch, no
thresholds.
Added: seeds (numpy, ember); the data's shapes, dtypes and range; both models' output
shapes, parameter counts (Keras's: 203,530 and 407,050) and softmax rows summing to one; the
functional model takes the (n, 28, 28) images for its (28, 28, 1) input (Keras 3 adds the
last axis) with the same outputs as the (n, 28, 28, 1) ones; the trainer's call, predict
and trainable_variables are the wrapped model's; dropout runs in training only, the flag
reaching the wrapped model through a call() that takes none; the untrained trainer's
loss_fn checked against a numpy cross-entropy of its predictions (near log(10)) and the
tape's gradient of the last bias against numpy's sum(p - onehot(y)) / batch; fit's history
holds exactly the keys Keras logs (no "loss": this train_step tracks none), one value per
epoch, its epoch and steps, and each epoch's accuracy times the number of images is a
whole number (every example counted once, the short last batch by its size); the last
val accuracy agrees with argmax(predict) over the test images computed by hand, and for
MyTrainerTF2 val_loss with a numpy cross-entropy of predict and evaluate with both;
fitting one trainer leaves the other model's weights alone. Thresholds, on the 1,000 test
images: 82% for SGD and 92% for Adam, for both classes (an untrained model scores about
10%, always the commonest digit 12.6%; seeds 0-3 give 86-87% and 95-96%). Keras's own run of
upstream (keras-io's rendered trainer_pattern.md), epoch by epoch, training / val accuracy:
SGD 0.763/0.889, 0.875/0.908, 0.892/0.914, 0.904/0.922, 0.910/0.927; Adam 0.919/0.961 ...
0.979/0.980. This port with EMBER_PROGRAMS_FULL=1 (35 s on one core): SGD 0.760/0.886,
0.875/0.905, 0.893/0.916, 0.905/0.922, 0.911/0.928; Adam 0.920/0.963 ... 0.980/0.979.
Found: no gap; the example runs as written. (Checked and in agreement with Keras:
the Functional input-rank adjustment, the training flag reaching the wrapped model through a
call that takes none, sparse cross-entropy's clipping and renormalisation, "accuracy"
resolving to sparse categorical accuracy, the shared metric reset between training and
validation without losing the training value, a one-metric evaluate returning a scalar.)
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn, tape

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)
N_TRAIN = 60000 if FULL else 512 if SHORT else 20000
N_TEST = 10000 if FULL else 256 if SHORT else 1000
EPOCHS = 5 if FULL else 1 if SHORT else 3


class mnist:  # keras.datasets.mnist, from the local files
    @staticmethod
    def load_data():
        def split(name, n):
            x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
            return ((np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8),
                    np.asarray(y).astype(np.uint8))
        return split("train", N_TRAIN), split("test", N_TEST)


def np_scce(y, p):
    """Keras's sparse categorical cross-entropy of probabilities (not logits), in numpy:
    rows renormalised, clipped to [1e-7, 1 - 1e-7], averaged over the batch."""
    p = np.asarray(p, np.float64)
    p = np.clip(p / p.sum(-1, keepdims=True), 1e-7, 1 - 1e-7)
    return float(-np.mean(np.log(p[np.arange(len(y)), y])))


"""
## Setup
"""

# Load MNIST dataset and standardize the data
(x_train, y_train), (x_test, y_test) = mnist.load_data()
assert x_train.shape == (N_TRAIN, 28, 28) and x_train.dtype == np.uint8, x_train.shape
assert x_test.shape == (N_TEST, 28, 28) and y_test.shape == (N_TEST,) and y_test.dtype == np.uint8
assert x_train.max() == 255 and set(np.unique(y_train)) == set(range(10))
x_train, x_test = x_train / 255.0, x_test / 255.0
assert x_train.dtype == np.float64 and 0.0 <= x_train.min() and x_train.max() == 1.0


"""
## Define the Trainer class

A custom training and evaluation step can be created by overriding
the `train_step()` and `test_step()` method of a `Model` subclass:
"""


class MyTrainer(keras.Model):
    def __init__(self, model):
        super().__init__()
        self.model = model
        # Create loss and metrics here.
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy()
        self.accuracy_metric = keras.metrics.SparseCategoricalAccuracy()

    @property
    def metrics(self):
        # List metrics here.
        return [self.accuracy_metric]

    def train_step(self, data):
        x, y = data
        with tape.GradientTape() as t:
            y_pred = self.model(x, training=True)  # Forward pass
            # Compute loss value
            loss = self.loss_fn(y, y_pred)

        # Compute gradients
        trainable_vars = self.trainable_variables
        gradients = t.gradient(loss, trainable_vars)

        # Update weights
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))

        # Update metrics
        for metric in self.metrics:
            metric.update_state(y, y_pred)

        # Return a dict mapping metric names to current value.
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y = data

        # Inference step
        y_pred = self.model(x, training=False)

        # Update metrics
        for metric in self.metrics:
            metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

    def call(self, x):
        # Equivalent to `call()` of the wrapped keras.Model
        x = self.model(x)
        return x


"""
## Define multiple models to share the custom training step

Let's define two different models that can share our Trainer class and its custom `train_step()`:
"""

# A model defined using Sequential API
model_a = keras.models.Sequential(
    [
        keras.layers.Flatten(),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(10, activation="softmax"),
    ]
)

# A model defined using Functional API
func_input = keras.Input(shape=(28, 28, 1))
x = keras.layers.Flatten()(func_input)
x = keras.layers.Dense(512, activation="relu")(x)
x = keras.layers.Dropout(0.4)(x)
func_output = keras.layers.Dense(10, activation="softmax")(x)

model_b = keras.Model(func_input, func_output)
assert tuple(func_output.shape) == (None, 10) and model_b.count_params() == 407050

"""
## Create Trainer class objects from the models
"""

trainer_1 = MyTrainer(model_a)
trainer_2 = MyTrainer(model_b)

# added: the models, and what the trainers are made of, before any training
probe_x, probe_y = x_test[:64], y_test[:64]
for trainer, model in ((trainer_1, model_a), (trainer_2, model_b)):
    p = model(probe_x).numpy()
    assert p.shape == (64, 10) and p.dtype == np.float32, (p.shape, p.dtype)
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-5)  # softmax rows
    np.testing.assert_array_equal(trainer(probe_x).numpy(), p)  # call is the model's
    np.testing.assert_allclose(trainer.predict(probe_x, verbose=0), p, rtol=1e-5)  # 2 batches
    assert [id(v) for v in trainer.trainable_variables] == \
        [id(v) for v in model.trainable_variables] and len(model.trainable_variables) == 4
    assert trainer.metrics == [trainer.accuracy_metric]
    # dropout only while training, the flag reaching the model through a call without one
    assert not np.array_equal(trainer(probe_x, training=True).numpy(), p)
    np.testing.assert_array_equal(trainer(probe_x, training=False).numpy(), p)
    # the trainer's loss and the tape's gradient of the last bias, against numpy's
    with tape.GradientTape() as t:
        y_pred = trainer.model(probe_x, training=False)
        loss = trainer.loss_fn(probe_y, y_pred)
    np.testing.assert_allclose(float(loss), np_scce(probe_y, p), rtol=1e-5)
    assert abs(float(loss) - np.log(10)) < 1.0, float(loss)  # near chance before training
    bias = model.trainable_variables[-1]
    assert tuple(bias.shape) == (10,)
    np.testing.assert_allclose(t.gradient(loss, bias).numpy(),
                               (p - np.eye(10)[probe_y]).sum(0) / 64, atol=1e-6)
assert model_a.count_params() == 203530, model_a.count_params()
# the (n, 28, 28) images go into the (28, 28, 1) input as Keras 3 takes them
np.testing.assert_array_equal(model_b(probe_x).numpy(), model_b(probe_x[..., None]).numpy())


def accuracy_by_hand(trainer):
    return float(np.mean(np.argmax(trainer.predict(x_test, verbose=0), -1) == y_test))


"""
## Compile and fit the models to the MNIST dataset
"""

b_before = [w.copy() for w in model_b.get_weights()]
trainer_1.compile(optimizer=keras.optimizers.SGD())
history_1 = trainer_1.fit(
    x_train, y_train, epochs=EPOCHS, batch_size=64, validation_data=(x_test, y_test)
)
for before, after in zip(b_before, model_b.get_weights()):
    np.testing.assert_array_equal(before, after)  # trainer_1 trains model_a only

a_before = [w.copy() for w in model_a.get_weights()]
trainer_2.compile(optimizer=keras.optimizers.Adam())
history_2 = trainer_2.fit(
    x_train, y_train, epochs=EPOCHS, batch_size=64, validation_data=(x_test, y_test)
)
for before, after in zip(a_before, model_a.get_weights()):
    np.testing.assert_array_equal(before, after)  # trainer_2 trains model_b only

for history, trainer, threshold in ((history_1, trainer_1, 0.82), (history_2, trainer_2, 0.92)):
    logs = history.history
    print({k: [round(v, 4) for v in vals] for k, vals in logs.items()})
    # as Keras logs a train_step that returns its one metric (no "loss" it never tracked)
    assert list(logs) == ["sparse_categorical_accuracy", "val_sparse_categorical_accuracy"]
    assert all(len(v) == EPOCHS for v in logs.values()), logs
    assert history.epoch == list(range(EPOCHS)) and history.params["steps"] == -(-N_TRAIN // 64)
    # each epoch's accuracy counts every example once (the short last batch by its size)
    for n, key in ((N_TRAIN, "sparse_categorical_accuracy"),
                   (N_TEST, "val_sparse_categorical_accuracy")):
        counts = np.array(logs[key]) * n
        np.testing.assert_allclose(counts, counts.round(), atol=0.01, err_msg=key)
    val = logs["val_sparse_categorical_accuracy"][-1]
    np.testing.assert_allclose(val, accuracy_by_hand(trainer), atol=1e-6)
    assert trainer.evaluate(x_test, y_test, verbose=0) == val  # a scalar: the one metric
    assert SHORT or val > threshold, (threshold, logs)
    assert SHORT or logs["sparse_categorical_accuracy"][-1] > threshold - 0.1, logs


"""
## Added: upstream's earlier tf.keras version of MyTrainer (commit 3aca056), as it is
"""


class MyTrainerTF2(keras.Model):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def train_step(self, data):
        x, y = data
        with tape.GradientTape() as t:
            y_pred = self.model(x, training=True)  # Forward pass
            # Compute loss value
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)

        # Compute gradients
        trainable_vars = self.trainable_variables
        gradients = t.gradient(loss, trainable_vars)

        # Update weights
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))

        # Update metrics configured in `compile()`
        self.compiled_metrics.update_state(y, y_pred)

        # Return a dict mapping metric names to current value.
        return {m.name: m.result() for m in self.metrics}

    def call(self, x):
        # Equivalent to `call()` of the wrapped keras.Model
        x = self.model(x)
        return x


# A model defined using Sequential API
model_a = keras.models.Sequential(
    [
        keras.layers.Flatten(input_shape=(28, 28)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(10, activation="softmax"),
    ]
)

# A model defined using Functional API
func_input = keras.Input(shape=(28, 28, 1))
x = keras.layers.Flatten(input_shape=(28, 28))(func_input)
x = keras.layers.Dense(512, activation="relu")(x)
x = keras.layers.Dropout(0.4)(x)
func_output = keras.layers.Dense(10, activation="softmax")(x)

model_b = keras.Model(func_input, func_output)
assert model_a.output_shape == (None, 10) and model_a.count_params() == 203530
assert model_b.output_shape == (None, 10) and model_b.count_params() == 407050

trainer_1 = MyTrainerTF2(model_a)
trainer_2 = MyTrainerTF2(model_b)
EPOCHS_TF2 = EPOCHS

trainer_1.compile(
    keras.optimizers.SGD(), loss="sparse_categorical_crossentropy", metrics=["accuracy"]
)
history_1 = trainer_1.fit(
    x_train, y_train, epochs=EPOCHS_TF2, batch_size=64, validation_data=(x_test, y_test)
)

trainer_2.compile(
    keras.optimizers.Adam(),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
)
history_2 = trainer_2.fit(
    x_train, y_train, epochs=EPOCHS_TF2, batch_size=64, validation_data=(x_test, y_test)
)

for history, trainer, threshold in ((history_1, trainer_1, 0.82), (history_2, trainer_2, 0.92)):
    logs = history.history
    print({k: [round(v, 4) for v in vals] for k, vals in logs.items()})
    # tf.keras logs the compiled loss tracker and "accuracy" (sparse, from the shapes)
    assert list(logs) == ["accuracy", "loss", "val_accuracy", "val_loss"], logs  # Keras 3 sorts
    assert all(len(v) == EPOCHS_TF2 for v in logs.values()), logs
    probs = trainer.predict(x_test, verbose=0)
    np.testing.assert_allclose(logs["val_accuracy"][-1], accuracy_by_hand(trainer), atol=1e-6)
    np.testing.assert_allclose(logs["val_loss"][-1], np_scce(y_test, probs), rtol=1e-4)
    np.testing.assert_allclose(trainer.evaluate(x_test, y_test, verbose=0),
                               [logs["val_loss"][-1], logs["val_accuracy"][-1]], rtol=1e-6)
    assert SHORT or logs["val_accuracy"][-1] > threshold, (threshold, logs)
    assert SHORT or logs["loss"][-1] < 0.5 * np.log(10), logs  # chance: log(10) = 2.30

"""Port of keras-team/keras-io examples/timeseries/timeseries_classification_from_scratch.py
("Timeseries classification from scratch", the Keras 3 version: a fully convolutional
network, Conv1D/BatchNormalization/ReLU three times, GlobalAveragePooling1D and a softmax
Dense, built with the functional API; ModelCheckpoint(save_best_only), ReduceLROnPlateau and
EarlyStopping on val_loss; validation_split; the best model loaded back with load_model and
evaluated on the test set).

Upstream: https://github.com/keras-team/keras-io/blob/master/examples/timeseries/timeseries_classification_from_scratch.py
(the Keras 3 version, "Last modified: 2023/08/25": `import keras`, "best_model.keras"; the
last tf.keras version, ad4fc805f5e1a4a4c0bcdd416aa9feac6608fb6c, saves "best_model.h5")
Changed: names only (keras.layers/models/callbacks -> nn.layers/models/callbacks), except
where the example cannot run here: the FordA files cannot be downloaded, so readucr
returns series this program makes with FordA's layout (a label of -1 or 1 and 500 values):
noisy sines whose frequency lies in one band for class -1 (2 to 6 cycles in the 500 steps)
and in another for class 1 (50 to 80), each series standardized to mean 0 and standard
deviation 5 (FordA's are z-normalized, standard deviation 1: then the first Conv1D's
outputs have a variance near 0.03 while the first BatchNormalization's moving variance
starts at 1 and moves 1% a step, so after a few dozen steps the model in inference mode
(validation, evaluate, the loaded checkpoint) is not the model trained, and its test
accuracy swings between 0.5 and 1 with the seed, in Keras 3 as in ember); the matplotlib
plots (the classes' series, the accuracy curves) and keras.utils.plot_model are left out
(ember has no plot_model; model.summary() shows the model instead); the checkpoint goes
to a temporary directory, not the working one. Reduced (EMBER_PROGRAMS_FULL=1 restores
upstream's 500 epochs and FordA's 3,601 and 1,320 series): 401 training and 100 test
series, 3 epochs, batch 32 as upstream; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 161
and 64 series, 2 epochs, no threshold. (401 and 161, like FordA's 3,601, are counts whose
80% is not whole: validation_split then keeps floor(0.8 n) series for training, as Keras
does.)
Added: seeds for numpy and ember; a Recorder callback (after the example's three) keeps
each epoch's learning rate, training batch count and weights; checks that the model has
the 25,858 parameters Keras counts, that the history holds the keys Keras 3 gives, in its
order (the metric, the val_ twins and the learning_rate ReduceLROnPlateau logs) with the
rate each epoch trained with, that fit trained on floor(0.8 n) series, that
best_model.keras exists and holds the weights of the epoch with the lowest val_loss (the
loaded model evaluates the validation part to that val_loss), that the loaded model's
test accuracy agrees with the in-memory model given those weights and with the accuracy
computed by hand from predict(), and that it passes 90% (chance: 50%).
Found: ember had no layers.ReLU, and validation_split rounded its split index (3,601
series trained on 2,881, Keras 2,880); both were fixed for it.
"""

import os
import tempfile

import numpy as np

import ember.core as em
from ember import nn

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()

"""
## Load the data: the FordA dataset (here: series made to FordA's layout)
"""


def readucr(filename):
    # FordA's files: one series a row, its label (-1 or 1) first, then 500 values
    train = filename.endswith("_TRAIN.tsv")
    n = (3601 if train else 1320) if FULL else \
        (161 if train else 64) if SHORT else (401 if train else 100)
    rng = np.random.default_rng(0 if train else 1)
    y = rng.choice([-1, 1], n)
    t = np.arange(500) / 500
    cycles = np.where(y == 1, rng.uniform(50, 80, n), rng.uniform(2, 6, n))[:, None]
    phase = rng.uniform(0, 2 * np.pi, (n, 1))
    x = np.sin(2 * np.pi * cycles * t + phase) + 0.5 * rng.standard_normal((n, 500))
    x = 5 * (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)
    data = np.concatenate([y[:, None].astype(float), x], axis=1)
    y = data[:, 0]
    x = data[:, 1:]
    return x, y.astype(int)


root_url = "https://raw.githubusercontent.com/hfawaz/cd-diagram/master/FordA/"

x_train, y_train = readucr(root_url + "FordA_TRAIN.tsv")
x_test, y_test = readucr(root_url + "FordA_TEST.tsv")

"""
## Visualize the data (the plot is left out)
"""

classes = np.unique(np.concatenate((y_train, y_test), axis=0))
assert list(classes) == [-1, 1], classes

"""
## Standardize the data
"""

x_train = x_train.reshape((x_train.shape[0], x_train.shape[1], 1))
x_test = x_test.reshape((x_test.shape[0], x_test.shape[1], 1))

num_classes = len(np.unique(y_train))

idx = np.random.permutation(len(x_train))
x_train = x_train[idx]
y_train = y_train[idx]

y_train[y_train == -1] = 0
y_test[y_test == -1] = 0

"""
## Build a model
"""


def make_model(input_shape):
    input_layer = keras.layers.Input(input_shape)

    conv1 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(input_layer)
    conv1 = keras.layers.BatchNormalization()(conv1)
    conv1 = keras.layers.ReLU()(conv1)

    conv2 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(conv1)
    conv2 = keras.layers.BatchNormalization()(conv2)
    conv2 = keras.layers.ReLU()(conv2)

    conv3 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(conv2)
    conv3 = keras.layers.BatchNormalization()(conv3)
    conv3 = keras.layers.ReLU()(conv3)

    gap = keras.layers.GlobalAveragePooling1D()(conv3)

    output_layer = keras.layers.Dense(num_classes, activation="softmax")(gap)

    return keras.models.Model(inputs=input_layer, outputs=output_layer)


model = make_model(input_shape=x_train.shape[1:])
# keras.utils.plot_model(model, show_shapes=True)  (left out: ember has no plot_model)
model.summary()
# what Keras counts: 3 Conv1D (256, 12,352, 12,352), 3 BatchNormalization (256 each, half
# of it the non-trainable moving mean and variance), Dense 130
assert model.count_params() == 25_858, model.count_params()
assert len(model.non_trainable_weights) == 6, model.non_trainable_weights

"""
## Train the model
"""

epochs = 500 if FULL else 2 if SHORT else 3
batch_size = 32


class Recorder(keras.callbacks.Callback):
    """Each epoch's learning rate (at its start), number of training batches and weights
    (after its last batch)."""

    def on_train_begin(self, logs=None):
        self.weights, self.lrs, self.batches = [], [], []

    def on_epoch_begin(self, epoch, logs=None):
        self.lrs.append(float(self.model.optimizer.learning_rate.numpy()))
        self.batches.append(0)

    def on_train_batch_begin(self, batch, logs=None):
        self.batches[-1] += 1

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append(self.model.get_weights())


best_model = os.path.join(workdir.name, "best_model.keras")
recorder = Recorder()
callbacks = [
    keras.callbacks.ModelCheckpoint(
        best_model, save_best_only=True, monitor="val_loss"
    ),
    keras.callbacks.ReduceLROnPlateau(
        monitor="val_loss", factor=0.5, patience=20, min_lr=0.0001
    ),
    keras.callbacks.EarlyStopping(monitor="val_loss", patience=50, verbose=1),
]
model.compile(
    optimizer="adam",
    loss="sparse_categorical_crossentropy",
    metrics=["sparse_categorical_accuracy"],
)
history = model.fit(
    x_train,
    y_train,
    batch_size=batch_size,
    epochs=epochs,
    callbacks=callbacks + [recorder],
    validation_split=0.2,
    verbose=1,
)

"""
## Evaluate model on test data
"""

assert os.path.isfile(best_model), os.listdir(workdir.name)
in_memory = model
model = keras.models.load_model(best_model)

test_loss, test_acc = model.evaluate(x_test, y_test)

print("Test accuracy", test_acc)
print("Test loss", test_loss)

"""
## Added checks
"""

# the history Keras 3 gives: the loss and metric, their val_ twins, and the learning rate
# ReduceLROnPlateau writes into the epoch logs (the rate the epoch trained with)
keys = ["loss", "sparse_categorical_accuracy", "val_loss", "val_sparse_categorical_accuracy",
        "learning_rate"]
assert list(history.history) == keys, list(history.history)
n_epochs = len(history.history["loss"])
assert n_epochs == len(recorder.weights) and (n_epochs == epochs or FULL), n_epochs
for key in keys:
    assert len(history.history[key]) == n_epochs, (key, history.history[key])
np.testing.assert_allclose(history.history["learning_rate"], recorder.lrs, rtol=1e-6)
if not FULL:  # ReduceLROnPlateau waits 20 epochs: Adam's default rate throughout
    np.testing.assert_allclose(history.history["learning_rate"], 0.001, rtol=1e-6)

# validation_split=0.2 trains on the first floor(0.8 n) series (Keras's split_at) and
# validates on the rest
split_at = int(np.floor(len(x_train) * (1.0 - 0.2)))
x_val, y_val = x_train[split_at:], y_train[split_at:]
assert recorder.batches == [-(-split_at // batch_size)] * n_epochs, (
    recorder.batches, split_at, len(x_train))

# best_model.keras holds the weights of the epoch with the lowest val_loss (the checkpoint
# is written at the end of the epoch whose validation just ran), moving statistics included
val_losses = history.history["val_loss"]
best = int(np.argmin(val_losses))
loaded = model.get_weights()
assert len(loaded) == len(recorder.weights[best]), (len(loaded), len(recorder.weights[best]))
for got, kept in zip(loaded, recorder.weights[best]):
    np.testing.assert_array_equal(got, kept)

# ... so the loaded model scores the validation part as that epoch did, and the test set as
# the in-memory model given those weights
val_loss, val_acc = model.evaluate(x_val, y_val, verbose=0)
np.testing.assert_allclose(val_loss, val_losses[best], rtol=1e-5)
np.testing.assert_allclose(val_acc, history.history["val_sparse_categorical_accuracy"][best],
                           atol=1e-6)
if best == n_epochs - 1:  # the last epoch was the best: the model in memory is that model
    np.testing.assert_allclose(in_memory.evaluate(x_test, y_test, verbose=0),
                               [test_loss, test_acc], rtol=1e-5)
in_memory.set_weights(recorder.weights[best])
np.testing.assert_allclose(in_memory.evaluate(x_test, y_test, verbose=0),
                           [test_loss, test_acc], rtol=1e-5)

# evaluate's accuracy is the fraction of test series whose argmax class is the label
y_pred = model.predict(x_test).argmax(axis=1)
np.testing.assert_allclose(test_acc, np.mean(y_pred == y_test), atol=1e-6)
assert SHORT or test_acc > 0.9, (test_acc, history.history)
workdir.cleanup()

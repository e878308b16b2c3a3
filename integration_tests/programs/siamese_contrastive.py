"""Port of keras-team/keras-io examples/vision/siamese_contrastive.py ("Image similarity
estimation using a Siamese Network with a contrastive loss": MNIST pairs, one embedding
network shared by two towers, a Lambda layer computing the euclidean distance,
BatchNormalization, a contrastive loss function, RMSprop, fit on two inputs).

Upstream: https://github.com/keras-team/keras-io/blob/12bad05fbf95911b2e994cde3c9340c13a5e76d0/examples/vision/siamese_contrastive.py
Changed: names only (keras.layers/Model -> nn.layers/nn.Model, tf.keras.layers -> nn.layers,
tf.math.* -> em.*, tf.keras.backend.epsilon() -> 1e-7, its value);
keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...).
Plotting (visualize(), plt_metric()) is dropped. Reduced (EMBER_PROGRAMS_FULL=1 restores
it): 2,000 training, 500 validation and 500 test images, i.e. 4,000/1,000/1,000 pairs, 2
epochs (upstream 30,000, 30,000, 10,000 and 10); EMBER_PROGRAMS_SHORT=1: 200/100/100 images
and 1 epoch, no thresholds. Added: seeds for Python's random and for ember; the
parameter count; the two towers share their weights; the loss Keras computes with its (N, 1)
labels agrees with the contrastive loss computed in numpy from predict(), and so does the
accuracy; test accuracy passes 80% (chance is 50%).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import random
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
random.seed(0)


def load_data(n_train, n_test):
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8), np.asarray(y)
    return split("train", n_train), split("test", n_test)


epochs = 10 if FULL else 1 if SHORT else 2
batch_size = 16
margin = 1  # Margin for constrastive loss.

n_train = 30000 if FULL else 200 if SHORT else 2000  # and as many validation images
n_val = 30000 if FULL else 100 if SHORT else 500
(x_train_val, y_train_val), (x_test, y_test) = load_data(
    n_train + n_val, 10000 if FULL else 100 if SHORT else 500)

# Change the data type to a floating point format
x_train_val = x_train_val.astype("float32")
x_test = x_test.astype("float32")

# Keep 50% of train_val  in validation set
x_train, x_val = x_train_val[:n_train], x_train_val[n_train:]
y_train, y_val = y_train_val[:n_train], y_train_val[n_train:]
del x_train_val, y_train_val


def make_pairs(x, y):
    """Creates a tuple containing image pairs with corresponding label.

    Arguments:
        x: List containing images, each index in this list corresponds to one image.
        y: List containing labels, each label with datatype of `int`.

    Returns:
        Tuple containing two numpy arrays as (pairs_of_samples, labels),
        where pairs_of_samples' shape is (2len(x), 2,n_features_dims) and
        labels are a binary array of shape (2len(x)).
    """

    num_classes = max(y) + 1
    digit_indices = [np.where(y == i)[0] for i in range(num_classes)]

    pairs = []
    labels = []

    for idx1 in range(len(x)):
        # add a matching example
        x1 = x[idx1]
        label1 = y[idx1]
        idx2 = random.choice(digit_indices[label1])
        x2 = x[idx2]

        pairs += [[x1, x2]]
        labels += [1]

        # add a non-matching example
        label2 = random.randint(0, num_classes - 1)
        while label2 == label1:
            label2 = random.randint(0, num_classes - 1)

        idx2 = random.choice(digit_indices[label2])
        x2 = x[idx2]

        pairs += [[x1, x2]]
        labels += [0]

    return np.array(pairs), np.array(labels).astype("float32")


# make train pairs
pairs_train, labels_train = make_pairs(x_train, y_train)

# make validation pairs
pairs_val, labels_val = make_pairs(x_val, y_val)

# make test pairs
pairs_test, labels_test = make_pairs(x_test, y_test)
assert pairs_train.shape == (2 * n_train, 2, 28, 28), pairs_train.shape

x_train_1 = pairs_train[:, 0]  # x_train_1.shape is (60000, 28, 28)
x_train_2 = pairs_train[:, 1]

x_val_1 = pairs_val[:, 0]  # x_val_1.shape = (60000, 28, 28)
x_val_2 = pairs_val[:, 1]

x_test_1 = pairs_test[:, 0]  # x_test_1.shape = (20000, 28, 28)
x_test_2 = pairs_test[:, 1]


# Provided two tensors t1 and t2
# Euclidean distance = sqrt(sum(square(t1-t2)))
def euclidean_distance(vects):
    """Find the Euclidean distance between two vectors.

    Arguments:
        vects: List containing two tensors of same length.

    Returns:
        Tensor containing euclidean distance
        (as floating point value) between vectors.
    """

    x, y = vects
    sum_square = em.reduce_sum(em.square(x - y), axis=1, keepdims=True)
    return em.sqrt(em.maximum(sum_square, 1e-7))


input = layers.Input((28, 28, 1))
x = nn.layers.BatchNormalization()(input)
x = layers.Conv2D(4, (5, 5), activation="tanh")(x)
x = layers.AveragePooling2D(pool_size=(2, 2))(x)
x = layers.Conv2D(16, (5, 5), activation="tanh")(x)
x = layers.AveragePooling2D(pool_size=(2, 2))(x)
x = layers.Flatten()(x)

x = nn.layers.BatchNormalization()(x)
x = layers.Dense(10, activation="tanh")(x)
embedding_network = keras.Model(input, x)


input_1 = layers.Input((28, 28, 1))
input_2 = layers.Input((28, 28, 1))

# As mentioned above, Siamese Network share weights between
# tower networks (sister networks). To allow this, we will use
# same embedding network for both tower networks.
tower_1 = embedding_network(input_1)
tower_2 = embedding_network(input_2)

merge_layer = layers.Lambda(euclidean_distance)([tower_1, tower_2])
normal_layer = nn.layers.BatchNormalization()(merge_layer)
output_layer = layers.Dense(1, activation="sigmoid")(normal_layer)
siamese = keras.Model(inputs=[input_1, input_2], outputs=output_layer)


def loss(margin=1):
    """Provides 'constrastive_loss' an enclosing scope with variable 'margin'.

    Arguments:
        margin: Integer, defines the baseline for distance for which pairs
                should be classified as dissimilar. - (default is 1).

    Returns:
        'constrastive_loss' function with data ('margin') attached.
    """

    # Contrastive loss = mean( (1-true_value) * square(prediction) +
    #                         true_value * square( max(margin-prediction, 0) ))
    def contrastive_loss(y_true, y_pred):
        """Calculates the constrastive loss.

        Arguments:
            y_true: List of labels, each label is of type float32.
            y_pred: List of predictions of same length as of y_true,
                    each label is of type float32.

        Returns:
            A tensor containing constrastive loss as floating point value.
        """

        square_pred = em.square(y_pred)
        margin_square = em.square(em.maximum(margin - (y_pred), 0))
        return em.reduce_mean(
            (1 - y_true) * square_pred + (y_true) * margin_square
        )

    return contrastive_loss


siamese.compile(loss=loss(margin=margin), optimizer="RMSprop", metrics=["accuracy"])
siamese.summary()
# Keras's summary: 5,318 in the embedding network (of which 2 * (1 + 400) BatchNormalization
# moving statistics), 4 in the last BatchNormalization (2 of them moving), 2 in the Dense
assert siamese.count_params() == 5318 + 4 + 2, siamese.count_params()
# 10 trainable in the embedding network, 4 after it: both towers use the same 10
assert len(siamese.trainable_variables) == 14, len(siamese.trainable_variables)

history = siamese.fit(
    [x_train_1, x_train_2],
    labels_train,
    validation_data=([x_val_1, x_val_2], labels_val),
    batch_size=batch_size,
    epochs=epochs,
)
print(history.history)

results = siamese.evaluate([x_test_1, x_test_2], labels_test)
print("test loss, test acc:", results)

predictions = siamese.predict([x_test_1, x_test_2])
assert predictions.shape == (len(labels_test), 1), predictions.shape

# evaluate's loss: the batches' means weighted by their sizes, so the mean over every pair
p, y = predictions[:, 0], labels_test
by_hand = (1 - y) * p ** 2 + y * np.maximum(margin - p, 0) ** 2  # (N,): no (N, N) broadcast
np.testing.assert_allclose(results[0], by_hand.mean(), rtol=1e-4)
np.testing.assert_allclose(results[1], np.mean((p > 0.5) == (y > 0.5)), atol=1e-6)
assert SHORT or history.history["loss"][-1] < history.history["loss"][0], history.history
assert SHORT or results[1] > 0.8, results

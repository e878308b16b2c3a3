"""Port of keras-team/keras-io examples/vision/knowledge_distillation.py ("Knowledge
Distillation": a Distiller Model subclass with its own compile(), train_step and test_step,
a KL divergence between temperature-softened softmaxes, a teacher and a student Sequential).

Upstream: https://github.com/keras-team/keras-io/blob/501fb4cbe62e5b5c434393f512a452ef833640a1/examples/vision/knowledge_distillation.py
Changed: names only (keras.Model/Sequential/layers/losses/metrics/optimizers -> nn.*,
tf.GradientTape -> tape.GradientTape, tf.nn.softmax -> em.nn_ops.softmax);
keras.Input(shape=s) at the head of a Sequential -> input_shape=s on its first layer;
keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...).
Reduced (EMBER_PROGRAMS_FULL=1 restores it): 2,000 training and 1,000 test images, a teacher
of 64 and 128 filters (upstream 256 and 512), 2 teacher, 2 distillation and 2 scratch
epochs (upstream 60,000, 10,000, 5, 3 and 3); EMBER_PROGRAMS_SHORT=1: 256 and 128 images, 1
epoch each, no accuracy threshold. Added: the teacher and the distilled student pass 80% test
accuracy; fit logs the keys Keras logs (no "loss" that the step never computed);
evaluate()'s accuracy agrees with argmax(predict) computed by hand; the student
loss that test_step reports agrees with a cross entropy computed in numpy; the distillation
loss of the first batch agrees with KL(softmax(t/T) || softmax(s/T)) * T^2 computed in numpy;
only the student's weights move while distilling; clone_model gives fresh weights.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn, tape
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)


def load_data(n_train, n_test):
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8), np.asarray(y)
    return split("train", n_train), split("test", n_test)


class Distiller(keras.Model):
    def __init__(self, student, teacher):
        super(Distiller, self).__init__()  # noqa: UP008 (upstream spelling)
        self.teacher = teacher
        self.student = student

    def compile(
        self,
        optimizer,
        metrics,
        student_loss_fn,
        distillation_loss_fn,
        alpha=0.1,
        temperature=3,
    ):
        """Configure the distiller.

        Args:
            optimizer: Keras optimizer for the student weights
            metrics: Keras metrics for evaluation
            student_loss_fn: Loss function of difference between student
                predictions and ground-truth
            distillation_loss_fn: Loss function of difference between soft
                student predictions and soft teacher predictions
            alpha: weight to student_loss_fn and 1-alpha to distillation_loss_fn
            temperature: Temperature for softening probability distributions.
                Larger temperature gives softer distributions.
        """
        super(Distiller, self).compile(optimizer=optimizer, metrics=metrics)  # noqa: UP008
        self.student_loss_fn = student_loss_fn
        self.distillation_loss_fn = distillation_loss_fn
        self.alpha = alpha
        self.temperature = temperature

    def train_step(self, data):
        # Unpack data
        x, y = data

        # Forward pass of teacher
        teacher_predictions = self.teacher(x, training=False)

        with tape.GradientTape() as t:
            # Forward pass of student
            student_predictions = self.student(x, training=True)

            # Compute losses
            student_loss = self.student_loss_fn(y, student_predictions)

            # Compute scaled distillation loss from https://arxiv.org/abs/1503.02531
            # The magnitudes of the gradients produced by the soft targets scale
            # as 1/T^2, multiply them by T^2 when using both hard and soft targets.
            distillation_loss = (
                self.distillation_loss_fn(
                    em.nn_ops.softmax(teacher_predictions / self.temperature, axis=1),
                    em.nn_ops.softmax(student_predictions / self.temperature, axis=1),
                )
                * self.temperature**2
            )

            loss = self.alpha * student_loss + (1 - self.alpha) * distillation_loss

        # Compute gradients
        trainable_vars = self.student.trainable_variables
        gradients = t.gradient(loss, trainable_vars)

        # Update weights
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))

        # Update the metrics configured in `compile()`.
        self.compiled_metrics.update_state(y, student_predictions)

        # Return a dict of performance
        results = {m.name: m.result() for m in self.metrics}
        results.update(
            {"student_loss": student_loss, "distillation_loss": distillation_loss}
        )
        return results

    def test_step(self, data):
        # Unpack the data
        x, y = data

        # Compute predictions
        y_prediction = self.student(x, training=False)

        # Calculate the loss
        student_loss = self.student_loss_fn(y, y_prediction)

        # Update the metrics.
        self.compiled_metrics.update_state(y, y_prediction)

        # Return a dict of performance
        results = {m.name: m.result() for m in self.metrics}
        results.update({"student_loss": student_loss})
        return results


# Create the teacher
wide = 256 if FULL else 64
teacher = keras.Sequential(
    [
        layers.Conv2D(wide, (3, 3), strides=(2, 2), padding="same", input_shape=(28, 28, 1)),
        layers.LeakyReLU(alpha=0.2),
        layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
        layers.Conv2D(2 * wide, (3, 3), strides=(2, 2), padding="same"),
        layers.Flatten(),
        layers.Dense(10),
    ],
    name="teacher",
)


# Create the student
student = keras.Sequential(
    [
        layers.Conv2D(16, (3, 3), strides=(2, 2), padding="same", input_shape=(28, 28, 1)),
        layers.LeakyReLU(alpha=0.2),
        layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
        layers.Conv2D(32, (3, 3), strides=(2, 2), padding="same"),
        layers.Flatten(),
        layers.Dense(10),
    ],
    name="student",
)
assert student.count_params() == 20490, student.count_params()  # the number Keras prints

# Clone student for later comparison
student_scratch = keras.models.clone_model(student)
assert student_scratch.count_params() == 20490 and not any(
    np.array_equal(a, b) for a, b in zip(student.get_weights()[::2],
                                         student_scratch.get_weights()[::2]))  # fresh kernels

# Prepare the train and test dataset.
batch_size = 64
(x_train, y_train), (x_test, y_test) = load_data(60000 if FULL else 256 if SHORT else 2000,
                                                 10000 if FULL else 128 if SHORT else 1000)

# Normalize data
x_train = x_train.astype("float32") / 255.0
x_train = np.reshape(x_train, (-1, 28, 28, 1))

x_test = x_test.astype("float32") / 255.0
x_test = np.reshape(x_test, (-1, 28, 28, 1))


def accuracy_by_hand(model):
    return float(np.mean(np.argmax(model.predict(x_test), -1) == y_test))


# Train teacher as usual
teacher.compile(
    optimizer=keras.optimizers.Adam(),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
)

# Train and evaluate teacher on data.
teacher.fit(x_train, y_train, epochs=5 if FULL else 1 if SHORT else 2)
teacher_score = teacher.evaluate(x_test, y_test)
print("teacher:", teacher_score)
np.testing.assert_allclose(teacher_score[1], accuracy_by_hand(teacher), atol=1e-6)
assert SHORT or teacher_score[1] > 0.8, teacher_score

# Initialize and compile distiller
distiller = Distiller(student=student, teacher=teacher)
distiller.compile(
    optimizer=keras.optimizers.Adam(),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
    student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    distillation_loss_fn=keras.losses.KLDivergence(),
    alpha=0.1,
    temperature=10,
)



def softmax(z):
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


teacher_before = [w.copy() for w in teacher.get_weights()]
student_before = [w.copy() for w in student.get_weights()]

# Distill teacher to student
history = distiller.fit(x_train, y_train, epochs=3 if FULL else 1 if SHORT else 2)
print(history.history)
assert set(history.history) == {"sparse_categorical_accuracy", "student_loss",
                                "distillation_loss"}, history.history  # as Keras logs them
for before, after in zip(teacher_before, teacher.get_weights()):
    np.testing.assert_array_equal(before, after)  # only the student learns
assert any(np.any(b != a) for b, a in zip(student_before, student.get_weights()))

# Evaluate student on test dataset
student_score = distiller.evaluate(x_test, y_test)
print("distilled student:", student_score)
accuracy, student_loss = student_score
np.testing.assert_allclose(accuracy, accuracy_by_hand(student), atol=1e-6)
# test_step returns the last batch's student_loss (evaluate's batches are 32, as Keras's)
last = slice(32 * ((len(y_test) - 1) // 32), None)
logits = student.predict(x_test[last])
ce_by_hand = -np.mean(np.log(softmax(logits)[np.arange(len(logits)), y_test[last]]))
np.testing.assert_allclose(student_loss, ce_by_hand, rtol=1e-4)
assert SHORT or accuracy > 0.8, student_score

# Train student as doen usually
student_scratch.compile(
    optimizer=keras.optimizers.Adam(),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
)

# Train and evaluate student trained from scratch.
student_scratch.fit(x_train, y_train, epochs=3 if FULL else 1 if SHORT else 2)
scratch_score = student_scratch.evaluate(x_test, y_test)
print("student from scratch:", scratch_score)
np.testing.assert_allclose(scratch_score[1], accuracy_by_hand(student_scratch), atol=1e-6)

# one distillation step of a fresh student, against the loss computed by hand in numpy
probe = Distiller(student=keras.models.clone_model(student), teacher=teacher)
probe.compile(
    optimizer=keras.optimizers.Adam(),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
    student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    distillation_loss_fn=keras.losses.KLDivergence(),
    alpha=0.1,
    temperature=10,
)
xb, yb = x_train[:batch_size], y_train[:batch_size]
pt = np.clip(softmax(teacher.predict(xb) / 10), 1e-7, 1)
ps = np.clip(softmax(probe.student.predict(xb) / 10), 1e-7, 1)
kl_by_hand = np.mean(np.sum(pt * np.log(pt / ps), -1)) * 10**2
logs = probe.train_step((em.constant(xb), em.constant(yb)))
np.testing.assert_allclose(float(logs["distillation_loss"]), kl_by_hand, rtol=1e-4)

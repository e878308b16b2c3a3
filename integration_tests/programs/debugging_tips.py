"""Port of keras-team/keras-io examples/keras_recipes/debugging_tips.py ("Keras debugging
tips": a custom Antirectifier layer tested on its own, first with a wrong concat axis, then
with prints of the shapes, then fixed; a functional model of three inputs and two outputs
(Embedding, LSTM, concatenate, two named Dense heads) checked with summary(); a functional
MyModel(keras.Model) whose train_step mixes first- and second-order gradients of nested
GradientTapes, trained by fit, then debugged with run_eagerly=True and prints, then fixed by
l2-normalizing both gradients, and a last run with SGD on an InverseTimeDecay schedule).

Upstream: https://github.com/keras-team/keras-io/blob/bbc628f4e1f05bbd66533e79027422631c9eda99/examples/keras_recipes/debugging_tips.py
Changed: names only (`tf = em`, `keras = nn`: tensorflow.keras.layers -> ember.nn.layers,
tf.nn.relu -> em.nn_ops.relu, tf.concat/matmul/reduce_* -> em.*, tf.math.l2_normalize ->
em.l2_normalize, tf.random.normal -> em.random.normal, tf.GradientTape ->
tape.GradientTape, keras.optimizers.schedules -> nn.optimizers.schedules); the prose is
dropped; keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...) (the same
uint8 28x28 images and labels). Tip 4 is prose only (its TensorBoard profiler snippet is
not run upstream either). Reduced (EMBER_PROGRAMS_FULL=1 restores it): 12,000 of the 60,000
training images, and the last run 10 epochs (upstream 50); EMBER_PROGRAMS_SHORT=1: 10,240
images and every fit one epoch, no thresholds. The 10 eager steps of batch 1024 (upstream's
steps_per_epoch=10) are kept at every size.
Added: seeds for numpy and ember; tip 1's buggy layers do fail on the (2, 5) input (TF:
"Matrix size-incompatible: In[0]: [4,5], In[1]: [10,5]") and print upstream's shapes, the
fixed layer's output equals numpy's concat(relu(x), relu(-x)) @ kernel, and he_normal's
kernel (on a wider input) has Keras's truncated-normal spread; tip 2's output shapes, layer
names, connections and the 1,392,097 parameters summary() prints, and the model run on
sequences of two lengths; tip 3: each of the 10 eager steps is recorded (weights, batch,
predictions, loss, gradients) and its predictions, loss, first-order and second-order
gradients (the gradient of the sum of the first-order ones, as TF's tape does for a list
of targets) are checked against PyTorch's autograd in float64 on the same weights and batch
(to 1e-5 of the largest entry; they agree to ~1e-6), each step's weights against SGD's
w - 0.01 * (0.5 * d2 + 0.5 * d1) from the step before, the 10 batches against distinct rows
of x_train with their labels, and fit's loss and accuracy against the recorded steps;
validation_split holds out the last 10%, and each run's last val_loss/val_accuracy equal
evaluate() and numpy on predict() of those rows; l2_normalize against numpy; the
InverseTimeDecay schedule against 0.1 / (1 + 0.1 * step / 25); the optimizer's step count.
Thresholds (validation accuracy; chance and an untrained model ~10%): the unnormalized run
stays below 50% ("it doesn't converge"; TF's run: 9.6%; here 12-15% for seeds 0-3), the
normalized one passes 30% (TF: 47% after its first epoch of 53 steps; here 44-48% after
55 steps), the final one passes 85% and beats the normalized one (TF: 86.9% after 27
steps, 97% at the end; here 87.8-88.3% after 60 steps). With EMBER_PROGRAMS_FULL=1 (70 s
of one core) the three runs end their epochs at 10.5/9.6/9.6% (TF 9.6/9.6/9.6%),
48.6..72.4% (TF 46.9..68.6%) and 87.3% after the first epoch, 97.1% after the 50th (TF
86.9%, 97%).
Found (each a `# GAP n:` comment; "silent" = a different value or output and no error):
1. no nn.utils.plot_model (AttributeError): left out.
Fixed in ember since the first version of this port: summary() of this multi-input model
had no "Connected to" column (GAP 2, silent; tf.keras and Keras 3 print one for any model
that is not a plain stack; the connections were printed from each layer's `input`); with
run_eagerly=True, train_step received the numpy arrays given to fit, not tensors (GAP 3,
silent until a tensor method is used; TF: EagerTensors), and fit handed train_step float64
inputs for float64 arrays, traced and eager (GAP 4, silent; tf.keras's data adapter
converts floating numpy arrays to floatx, float32): both modes now hand over float32
Tensors, as asserted below.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

# ruff: noqa: UP031

import contextlib
import io
import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn, tape
from ember.nn import layers

tf = em  # the example's `tf.` prefix
keras = nn  # and its `keras.`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)

"""
## Tip 1: test each part before you test the whole
"""


class MyAntirectifier(layers.Layer):
    def build(self, input_shape):
        output_dim = input_shape[-1]
        self.kernel = self.add_weight(
            shape=(output_dim * 2, output_dim),
            initializer="he_normal",
            name="kernel",
            trainable=True,
        )

    def call(self, inputs):
        # Take the positive part of the input
        pos = tf.nn_ops.relu(inputs)
        # Take the negative part of the input
        neg = tf.nn_ops.relu(-inputs)
        # Concatenate the positive and negative parts
        concatenated = tf.concat([pos, neg], axis=0)
        # Project the concatenation down to the same dimensionality as the input
        return tf.matmul(concatenated, self.kernel)


# (added) upstream shows, without running it, the error this call raises
x = tf.random.normal(shape=(2, 5))
try:
    y = MyAntirectifier()(x)
except tf.InvalidArgumentError as e:  # TF: InvalidArgumentError "Matrix size-incompatible"
    print("as upstream, the buggy layer fails:", type(e).__name__, str(e)[:120])
else:
    raise AssertionError(f"concat on axis 0 then matmul by (10, 5) gave {y.shape}")


class MyAntirectifier(layers.Layer):
    def build(self, input_shape):
        output_dim = input_shape[-1]
        self.kernel = self.add_weight(
            shape=(output_dim * 2, output_dim),
            initializer="he_normal",
            name="kernel",
            trainable=True,
        )

    def call(self, inputs):
        pos = tf.nn_ops.relu(inputs)
        neg = tf.nn_ops.relu(-inputs)
        print("pos.shape:", pos.shape)
        print("neg.shape:", neg.shape)
        concatenated = tf.concat([pos, neg], axis=0)
        print("concatenated.shape:", concatenated.shape)
        print("kernel.shape:", self.kernel.shape)
        return tf.matmul(concatenated, self.kernel)


# (added) the prints upstream shows for this version, then the same failure
printed = io.StringIO()
try:
    with contextlib.redirect_stdout(printed):
        MyAntirectifier()(x)
except tf.InvalidArgumentError:
    pass
else:
    raise AssertionError("the second buggy layer ran")
print(printed.getvalue(), end="")
assert printed.getvalue().split("\n") == [
    "pos.shape: (2, 5)", "neg.shape: (2, 5)", "concatenated.shape: (4, 5)",
    "kernel.shape: (10, 5)", ""], printed.getvalue()


class MyAntirectifier(layers.Layer):
    def build(self, input_shape):
        output_dim = input_shape[-1]
        self.kernel = self.add_weight(
            shape=(output_dim * 2, output_dim),
            initializer="he_normal",
            name="kernel",
            trainable=True,
        )

    def call(self, inputs):
        pos = tf.nn_ops.relu(inputs)
        neg = tf.nn_ops.relu(-inputs)
        print("pos.shape:", pos.shape)
        print("neg.shape:", neg.shape)
        concatenated = tf.concat([pos, neg], axis=1)
        print("concatenated.shape:", concatenated.shape)
        print("kernel.shape:", self.kernel.shape)
        return tf.matmul(concatenated, self.kernel)


"""
Now our code works fine:
"""

x = tf.random.normal(shape=(2, 5))
y = MyAntirectifier()(x)

# (added) the output against numpy, and he_normal's spread on a wider layer (Keras: a
# normal of stddev sqrt(2 / fan_in) truncated at two of its own stddevs, so scaled up by
# 1 / 0.8796 to keep that variance; fan_in = 400 rows here)
assert y.shape == (2, 5) and y.dtype == em.float32
with contextlib.redirect_stdout(io.StringIO()):
    layer = MyAntirectifier()
    y = layer(x)
    wide = MyAntirectifier()
    wide(tf.random.normal(shape=(2, 200)))
x_np, kernel = x.numpy(), layer.kernel.numpy()
assert kernel.shape == (10, 5)
np.testing.assert_allclose(y.numpy(),
                           np.concatenate([np.maximum(x_np, 0), np.maximum(-x_np, 0)], 1) @ kernel,
                           rtol=1e-5, atol=1e-6)
k = wide.kernel.numpy()
std = np.sqrt(2.0 / 400)
assert k.shape == (400, 200)
assert abs(k.std() - std) < 0.03 * std and abs(k.mean()) < 0.02 * std, (k.std(), std, k.mean())
assert np.abs(k).max() <= 2 * std / 0.87962566103423978 + 1e-6, np.abs(k).max()

"""
## Tip 2: use `model.summary()` and `plot_model()` to check layer output shapes
"""

num_tags = 12  # Number of unique issue tags
num_words = 10000  # Size of vocabulary obtained when preprocessing text data
num_departments = 4  # Number of departments for predictions

title_input = keras.Input(
    shape=(None,), name="title"
)  # Variable-length sequence of ints
body_input = keras.Input(shape=(None,), name="body")  # Variable-length sequence of ints
tags_input = keras.Input(
    shape=(num_tags,), name="tags"
)  # Binary vectors of size `num_tags`

# Embed each word in the title into a 64-dimensional vector
title_features = layers.Embedding(num_words, 64)(title_input)
# Embed each word in the text into a 64-dimensional vector
body_features = layers.Embedding(num_words, 64)(body_input)

# Reduce sequence of embedded words in the title into a single 128-dimensional vector
title_features = layers.LSTM(128)(title_features)
# Reduce sequence of embedded words in the body into a single 32-dimensional vector
body_features = layers.LSTM(32)(body_features)

# Merge all available features into a single large vector via concatenation
x = layers.concatenate([title_features, body_features, tags_input])

# Stick a logistic regression for priority prediction on top of the features
priority_pred = layers.Dense(1, name="priority")(x)
# Stick a department classifier on top of the features
department_pred = layers.Dense(num_departments, name="department")(x)

# Instantiate an end-to-end model predicting both priority and department
model = keras.Model(
    inputs=[title_input, body_input, tags_input],
    outputs=[priority_pred, department_pred],
)

"""
Calling `summary()` can help you check the output shape of each layer:
"""

summary_text = io.StringIO()
with contextlib.redirect_stdout(summary_text):
    model.summary()
print(summary_text.getvalue())
# (added) the "Connected to" column Keras prints for a model that is not a plain stack
rows = {line.split()[0]: line for line in summary_text.getvalue().splitlines()
        if line and line.split()[0] in {lay.name for lay in model.layers}}
assert "Connected to" in summary_text.getvalue()
assert rows["concatenate"].endswith("lstm[0][0], lstm_1[0][0], tags[0][0]"), rows
assert rows["priority"].endswith("concatenate[0][0]") and rows["lstm"].endswith("embedding[0][0]")

# (added) what Keras's summary shows: the shapes, names and parameter counts
assert "1,392,097" in summary_text.getvalue(), summary_text.getvalue()
assert model.count_params() == 1392097, model.count_params()
assert {lay.name: tuple(lay.output.shape) for lay in model.layers} == {
    "title": (None, None), "body": (None, None), "tags": (None, 12),
    "embedding": (None, None, 64), "embedding_1": (None, None, 64), "lstm": (None, 128),
    "lstm_1": (None, 32), "concatenate": (None, 172), "priority": (None, 1),
    "department": (None, 4)}
assert title_features.shape == (None, 128) and body_features.shape == (None, 32)
assert x.shape == (None, 172)
assert priority_pred.shape == (None, 1) and department_pred.shape == (None, 4)
assert [lay.count_params() for lay in model.layers if lay.count_params()] == [
    640000, 640000, 98816, 12416, 173, 692], [lay.count_params() for lay in model.layers]
# the heads on the concatenation [title, body, tags], against numpy, at two sequence lengths
features = keras.Model(inputs=[title_input, body_input, tags_input],
                       outputs=[title_features, body_features])
for title_len, body_len in [(5, 30), (9, 3)]:
    batch = [np.random.randint(num_words, size=(3, title_len)),
             np.random.randint(num_words, size=(3, body_len)),
             np.random.randint(2, size=(3, num_tags)).astype("float32")]
    priority, department = model(batch)
    assert priority.shape == (3, 1) and department.shape == (3, num_departments)
    title_f, body_f = (t.numpy() for t in features(batch))
    assert title_f.shape == (3, 128) and body_f.shape == (3, 32)
    joined = np.concatenate([title_f, body_f, batch[2]], axis=1)
    for head, out in [("priority", priority), ("department", department)]:
        w, b = model.get_layer(head).get_weights()
        np.testing.assert_allclose(out.numpy(), joined @ w + b, rtol=1e-4, atol=1e-5)

"""
You can also visualize the entire network topology alongside output shapes using
`plot_model`:
"""

# GAP 1: keras.utils.plot_model(model, show_shapes=True)
assert not hasattr(keras.utils, "plot_model")

"""
## Tip 3: to debug what happens during `fit()`, use `run_eagerly=True`
"""


class MyModel(keras.Model):
    def train_step(self, data):
        inputs, targets = data
        trainable_vars = self.trainable_variables
        with tape.GradientTape() as tape2:
            with tape.GradientTape() as tape1:
                preds = self(inputs, training=True)  # Forward pass
                # Compute the loss value
                # (the loss function is configured in `compile()`)
                loss = self.compiled_loss(targets, preds)
            # Compute first-order gradients
            dl_dw = tape1.gradient(loss, trainable_vars)
        # Compute second-order gradients
        d2l_dw2 = tape2.gradient(dl_dw, trainable_vars)

        # Combine first-order and second-order gradients
        grads = [0.5 * w1 + 0.5 * w2 for (w1, w2) in zip(d2l_dw2, dl_dw)]

        # Update weights
        self.optimizer.apply_gradients(zip(grads, trainable_vars))

        # Update metrics (includes the metric that tracks the loss)
        self.compiled_metrics.update_state(targets, preds)
        # Return a dict mapping metric names to current value
        return {m.name: m.result() for m in self.metrics}


"""
Let's train a one-layer model on MNIST with this custom training loop.
"""


# Construct an instance of MyModel
def get_model():
    inputs = keras.Input(shape=(784,))
    intermediate = layers.Dense(256, activation="relu")(inputs)
    outputs = layers.Dense(10, activation="softmax")(intermediate)
    model = MyModel(inputs, outputs)
    return model


def load_data(n_train):
    x, y = next(iter(data.datasets.mnist("train", data_dir=DATA_DIR).take(n_train).batch(n_train)))
    return ((np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8),
            np.asarray(y).astype(np.uint8)), None


N_TRAIN = 60000 if FULL else 10240 if SHORT else 12000

# Prepare data
(x_train, y_train), _ = load_data(N_TRAIN)  # upstream: keras.datasets.mnist.load_data()
assert x_train.shape == (N_TRAIN, 28, 28) and x_train.dtype == np.uint8
x_train = np.reshape(x_train, (-1, 784)) / 255
N_VAL = N_TRAIN - int(np.floor(N_TRAIN * 0.9))  # (added) validation_split's tail
x_val, y_val = x_train[-N_VAL:], y_train[-N_VAL:]


def check_validation(model, history):
    """(added) the last epoch's val_loss / val_accuracy are those of the last 10% of the
    rows (Keras splits before shuffling), by evaluate() and by numpy on predict()."""
    probs = model.predict(x_val, verbose=0)
    assert probs.shape == (N_VAL, 10) and probs.dtype == np.float32, (probs.shape, probs.dtype)
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    acc = float(np.mean(probs.argmax(1) == y_val))
    nll = float(np.mean(-np.log(np.clip(probs[np.arange(N_VAL), y_val], 1e-7, 1.0))))
    ev_loss, ev_acc = model.evaluate(x_val, y_val, verbose=0)
    assert abs(history.history["val_accuracy"][-1] - acc) < 1e-6, (history.history, acc)
    assert abs(ev_acc - acc) < 1e-6, (ev_acc, acc)
    if nll < 15.0:  # no probability clipped
        np.testing.assert_allclose([history.history["val_loss"][-1], ev_loss], [nll, nll],
                                   rtol=1e-4)
    return acc


model = get_model()
model.compile(
    optimizer=keras.optimizers.SGD(learning_rate=1e-2),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
)
history = model.fit(x_train, y_train, epochs=1 if SHORT else 3, batch_size=1024,
                    validation_split=0.1)
print(history.history)
acc_unnormalized = check_validation(model, history)
assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}, history.history
assert SHORT or acc_unnormalized < 0.5, history.history  # "Oh no, it doesn't converge!"

"""
Time for some step-by-step printing of what's going on with our gradients.
"""

steps = []  # (added) what each eager step saw, checked against PyTorch below


class MyModel(keras.Model):  # noqa: F811 (upstream's redefinition; get_model reads it)
    def train_step(self, data):
        print()
        print("----Start of step: %d" % (self.step_counter,))
        self.step_counter += 1

        inputs, targets = data
        trainable_vars = self.trainable_variables
        weights_before = [w.numpy() for w in trainable_vars]  # added
        with tape.GradientTape() as tape2:
            with tape.GradientTape() as tape1:
                preds = self(inputs, training=True)  # Forward pass
                # Compute the loss value
                # (the loss function is configured in `compile()`)
                loss = self.compiled_loss(targets, preds)
            # Compute first-order gradients
            dl_dw = tape1.gradient(loss, trainable_vars)
        # Compute second-order gradients
        d2l_dw2 = tape2.gradient(dl_dw, trainable_vars)

        print("Max of dl_dw[0]: %.4f" % tf.reduce_max(dl_dw[0]))
        print("Min of dl_dw[0]: %.4f" % tf.reduce_min(dl_dw[0]))
        print("Mean of dl_dw[0]: %.4f" % tf.reduce_mean(dl_dw[0]))
        print("-")
        print("Max of d2l_dw2[0]: %.4f" % tf.reduce_max(d2l_dw2[0]))
        print("Min of d2l_dw2[0]: %.4f" % tf.reduce_min(d2l_dw2[0]))
        print("Mean of d2l_dw2[0]: %.4f" % tf.reduce_mean(d2l_dw2[0]))
        steps.append(dict(  # added
            weights=weights_before, inputs=inputs, targets=targets, preds=preds.numpy(),
            loss=float(loss), dl_dw=[g.numpy() for g in dl_dw],
            d2l_dw2=[g.numpy() for g in d2l_dw2]))

        # Combine first-order and second-order gradients
        grads = [0.5 * w1 + 0.5 * w2 for (w1, w2) in zip(d2l_dw2, dl_dw)]

        # Update weights
        self.optimizer.apply_gradients(zip(grads, trainable_vars))

        # Update metrics (includes the metric that tracks the loss)
        self.compiled_metrics.update_state(targets, preds)
        # Return a dict mapping metric names to current value
        return {m.name: m.result() for m in self.metrics}


model = get_model()
model.compile(
    optimizer=keras.optimizers.SGD(learning_rate=1e-2),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
    run_eagerly=True,
)
model.step_counter = 0
# We pass epochs=1 and steps_per_epoch=10 to only run 10 steps of training.
history = model.fit(x_train, y_train, epochs=1, batch_size=1024, verbose=0, steps_per_epoch=10)


def check_eager_steps(history):
    """(added) the 10 eager steps against PyTorch's autograd, SGD and fit's logs."""
    import torch

    assert model.step_counter == 10 and len(steps) == 10, (model.step_counter, len(steps))
    # as TF's: tf.Tensor (ember's Tensor), float32 from float64 arrays (fixed GAPs 3 and 4)
    assert all(type(s["inputs"]) is em.Tensor and s["inputs"].dtype == np.float32
               for s in steps), {(type(s["inputs"]), s["inputs"].dtype) for s in steps}
    seen = np.concatenate([s["inputs"] for s in steps])
    assert seen.shape == (10240, 784) and all(s["inputs"].shape == (1024, 784) for s in steps)
    rows = {r.tobytes(): i for i, r in enumerate(x_train.astype(seen.dtype))}
    index = np.array([rows.get(r.tobytes(), -1) for r in seen])
    assert (index >= 0).all(), "fit handed train_step rows that are not in x_train"
    assert len(set(index)) == 10240, "a row came twice within one epoch"
    np.testing.assert_array_equal(np.concatenate([s["targets"] for s in steps]).ravel(),
                                  y_train[index])
    worst = {"dl_dw": 0.0, "d2l_dw2": 0.0}
    for i, s in enumerate(steps):
        w = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in s["weights"]]
        xb = torch.tensor(np.asarray(s["inputs"]), dtype=torch.float64)
        yb = torch.tensor(np.asarray(s["targets"]).ravel().astype(np.int64))
        logits = torch.relu(xb @ w[0] + w[1]) @ w[2] + w[3]
        loss = torch.nn.functional.cross_entropy(logits, yb)
        d1 = torch.autograd.grad(loss, w, create_graph=True)
        d2 = torch.autograd.grad(sum(g.sum() for g in d1), w)
        assert abs(s["loss"] - loss.item()) < 1e-4 * max(1.0, loss.item()), (i, s["loss"], loss)
        np.testing.assert_allclose(s["preds"], torch.softmax(logits, 1).detach().numpy(),
                                   rtol=1e-4, atol=1e-6)
        for name, ours, theirs in [("dl_dw", s["dl_dw"], d1), ("d2l_dw2", s["d2l_dw2"], d2)]:
            for j, (a, b) in enumerate(zip(ours, theirs)):
                b = b.detach().numpy()
                assert a.shape == b.shape and a.dtype == np.float32, (name, j, a.shape, a.dtype)
                err = np.abs(a - b).max() / (np.abs(b).max() + 1e-12)
                worst[name] = max(worst[name], err)
                assert err <= 1e-5, (i, name, j, err)
        if i + 1 < len(steps):  # SGD: w <- w - 0.01 * (0.5 * d2 + 0.5 * d1)
            for j, w_next in enumerate(steps[i + 1]["weights"]):
                expect = s["weights"][j] - 0.01 * (0.5 * s["d2l_dw2"][j] + 0.5 * s["dl_dw"][j])
                np.testing.assert_allclose(w_next, expect, rtol=1e-5, atol=1e-6)
    # fit's logs: the mean of the 10 batch losses (all of 1024 rows) and the accuracy of
    # the predictions each step made before its update
    assert abs(history.history["loss"][0] - np.mean([s["loss"] for s in steps])) < 1e-4 * max(
        1.0, history.history["loss"][0]), (history.history, [s["loss"] for s in steps])
    acc = np.mean(np.concatenate([s["preds"].argmax(1) for s in steps]) == y_train[index])
    assert abs(history.history["accuracy"][0] - acc) < 1e-6, (history.history, acc)
    assert int(model.optimizer.iterations) == 10
    print("largest difference from PyTorch (float64), relative to the largest entry:", worst)


check_eager_steps(history)

"""
This leads us to an obvious idea: let's normalize the gradients before combining them.
"""

# (added) TF's l2_normalize with no axis normalizes the whole tensor: x / sqrt(max(sum(x^2),
# 1e-12))
g = np.random.normal(size=(7, 3)).astype("float32")
np.testing.assert_allclose(tf.l2_normalize(g).numpy(), g / np.sqrt((g ** 2).sum()), rtol=1e-6)
np.testing.assert_array_equal(tf.l2_normalize(np.zeros(3, "float32")).numpy(), np.zeros(3))


class MyModel(keras.Model):  # noqa: F811 (upstream's redefinition; get_model reads it)
    def train_step(self, data):
        inputs, targets = data
        trainable_vars = self.trainable_variables
        with tape.GradientTape() as tape2:
            with tape.GradientTape() as tape1:
                preds = self(inputs, training=True)  # Forward pass
                # Compute the loss value
                # (the loss function is configured in `compile()`)
                loss = self.compiled_loss(targets, preds)
            # Compute first-order gradients
            dl_dw = tape1.gradient(loss, trainable_vars)
        # Compute second-order gradients
        d2l_dw2 = tape2.gradient(dl_dw, trainable_vars)

        dl_dw = [tf.l2_normalize(w) for w in dl_dw]
        d2l_dw2 = [tf.l2_normalize(w) for w in d2l_dw2]

        # Combine first-order and second-order gradients
        grads = [0.5 * w1 + 0.5 * w2 for (w1, w2) in zip(d2l_dw2, dl_dw)]

        # Update weights
        self.optimizer.apply_gradients(zip(grads, trainable_vars))

        # Update metrics (includes the metric that tracks the loss)
        self.compiled_metrics.update_state(targets, preds)
        # Return a dict mapping metric names to current value
        return {m.name: m.result() for m in self.metrics}


model = get_model()
model.compile(
    optimizer=keras.optimizers.SGD(learning_rate=1e-2),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
)
history = model.fit(x_train, y_train, epochs=1 if SHORT else 5, batch_size=1024,
                    validation_split=0.1)
print(history.history)
acc_normalized = check_validation(model, history)
assert SHORT or acc_normalized > 0.3, history.history  # "Now, training converges!"

"""
Here's our final training run:
"""


class MyModel(keras.Model):  # noqa: F811 (upstream's redefinition; get_model reads it)
    def train_step(self, data):
        inputs, targets = data
        trainable_vars = self.trainable_variables
        with tape.GradientTape() as tape2:
            with tape.GradientTape() as tape1:
                preds = self(inputs, training=True)  # Forward pass
                # Compute the loss value
                # (the loss function is configured in `compile()`)
                loss = self.compiled_loss(targets, preds)
            # Compute first-order gradients
            dl_dw = tape1.gradient(loss, trainable_vars)
        # Compute second-order gradients
        d2l_dw2 = tape2.gradient(dl_dw, trainable_vars)

        dl_dw = [tf.l2_normalize(w) for w in dl_dw]
        d2l_dw2 = [tf.l2_normalize(w) for w in d2l_dw2]

        # Combine first-order and second-order gradients
        grads = [0.2 * w1 + 0.8 * w2 for (w1, w2) in zip(d2l_dw2, dl_dw)]

        # Update weights
        self.optimizer.apply_gradients(zip(grads, trainable_vars))

        # Update metrics (includes the metric that tracks the loss)
        self.compiled_metrics.update_state(targets, preds)
        # Return a dict mapping metric names to current value
        return {m.name: m.result() for m in self.metrics}


model = get_model()
lr = learning_rate = keras.optimizers.schedules.InverseTimeDecay(
    initial_learning_rate=0.1, decay_steps=25, decay_rate=0.1
)
# (added) the schedule: 0.1 / (1 + 0.1 * step / 25), not staircase
for step in [0, 1, 24, 25, 26, 250, 1350]:
    assert abs(float(lr(step)) - 0.1 / (1 + 0.1 * step / 25)) < 1e-7, (step, float(lr(step)))
model.compile(
    optimizer=keras.optimizers.SGD(lr),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
)
EPOCHS = 50 if FULL else 1 if SHORT else 10
history = model.fit(x_train, y_train, epochs=EPOCHS, batch_size=2048, validation_split=0.1)
print(history.history)
acc_final = check_validation(model, history)
steps_per_epoch = -(-(N_TRAIN - N_VAL) // 2048)
assert int(model.optimizer.iterations) == EPOCHS * steps_per_epoch, int(model.optimizer.iterations)
assert SHORT or acc_final > 0.85, history.history
assert SHORT or acc_final > acc_normalized, (acc_final, acc_normalized)

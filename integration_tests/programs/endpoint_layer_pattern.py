"""Port of keras-team/keras-io examples/keras_recipes/endpoint_layer_pattern.py ("Endpoint
layer pattern": a LogisticEndpoint layer that takes the targets and sample weights as inputs,
adds its BinaryCrossentropy loss with add_loss and logs a BinaryAccuracy with add_metric; a
functional model of three named inputs compiled with only an optimizer and fit on a dict; an
inference-only model that takes its weights with set_weights and predicts; the same endpoint in
a subclassed model whose call takes a dict and passes the endpoint's inputs by keyword).

Upstream: https://github.com/keras-team/keras-io/blob/2dd71c68bd2a1ebbe588f3571571abcb16d96c27/examples/keras_recipes/endpoint_layer_pattern.py
Changed: names only (tf.keras/keras -> nn, keras.layers -> nn.layers, tf.nn.softmax ->
em.nn_ops.softmax). The data is upstream's own (np.random.random), so nothing is downloaded
or substituted, and upstream's sizes (1,000 examples of 764 features, 2 epochs of batch 32)
already run in about a second: there is no reduced size and EMBER_PROGRAMS_FULL changes
nothing; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 256 examples, 1 epoch, no threshold.
Added: seeds (numpy, ember); the endpoint's loss checked against a numpy weighted binary
cross-entropy of the logits (per batch, and before and after training through evaluate),
and its gradient against numpy's X^T (w * (sigmoid(z) - t)) / batch; the
accuracy metric against Keras's value (0.0: the targets are uniform floats, which never equal
a thresholded 0/1 prediction), logged per epoch in the history; softmax over the single
logit is all ones (shape (1000, 1)); the inference model holds the training model's weights
and its logits match numpy's; both models' training loss falls each epoch, below the
untrained model's, and ends within 0.01 of mean(w)*log(2) (0.340 and 0.355: the loss of the
best constant prediction p = 0.5 for these random targets; 764 noise features over 1,000
examples let training get slightly under it). The targets are noise, so what 64 Adam steps
reach varies with the seed (a step of 1e-3 on each of 764 weights moves the mean logit by up
to 0.4); the thresholds are for the seeded run: the functional model starts at 0.472 (its
Glorot kernel's mean logit is 1.5), which must be more than 0.1 above the best constant and
ends at 0.345; the subclassed one starts at 0.363 and ends at 0.357.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
2. no Layer.add_metric (AttributeError): the metric object is called, which updates it
(Keras 3 has no add_metric either; the metric, an attribute of the layer, is the model's).
Fixed in ember since the first version of this port: (GAP 1, silent) nn.metrics.
BinaryAccuracy compared `y_pred > threshold` with `y_true > 0.5`, where Keras compares it
with y_true itself: on these soft targets ember logged about 0.50, Keras 0.0; (GAP 3,
silent) model.metrics listed only the loss tracker and compile's metrics, not the Metric
objects held by sub-layers (Keras 2 and 3 list them), so fit neither reset nor logged the
endpoint's "accuracy"; (GAP 4) Layer.__call__ took its first argument only by position
(Keras binds it by call's name for it). Upstream's lines are restored.
Beside them: ember's fit and evaluate average the per-batch losses weighted by batch size
(as Keras 3); tf.keras 2, which this example was written for, averages them unweighted when
the only loss is add_loss's (LossesContainer's batch_dim stays None), which differs in the
short last batch (8 of 1,000 here): about 3e-6 in the loss, not asserted. And building a
functional model runs each layer eagerly on zeros: a metric updated in call counts that
probe (no effect here, where the probe's sample weights are 0) and the probe's add_loss
value stays in model.losses until the first call (Keras traces symbolically and changes
no state).
"""

import math
import os

import numpy as np

import ember.core as em
from ember import nn, tape

tf = em  # the example's `tf.` prefix
keras = nn  # and its `keras.`
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
N = 256 if SHORT else 1000
EPOCHS = 1 if SHORT else 2
np.random.seed(0)
em.random.set_seed(0)


def np_endpoint_loss(z, t, w):
    """Keras's BinaryCrossentropy(from_logits=True)(t, z, w) of one batch, in numpy:
    sum(w * bce) / batch (SUM_OVER_BATCH_SIZE), bce in its stable form."""
    z, t, w = (np.asarray(a, np.float64) for a in (z, t, w))
    bce = np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z)))
    return float((w * bce).sum() / len(z))


"""
## Usage of endpoint layers in the Functional API
"""


class LogisticEndpoint(keras.layers.Layer):
    def __init__(self, name=None):
        super(LogisticEndpoint, self).__init__(name=name)  # noqa: UP008 (upstream spelling)
        self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
        self.accuracy_fn = keras.metrics.BinaryAccuracy(name="accuracy")

    def call(self, logits, targets=None, sample_weight=None):
        if targets is not None:
            # Compute the training-time loss value and add it
            # to the layer using `self.add_loss()`.
            loss = self.loss_fn(targets, logits, sample_weight)
            self.add_loss(loss)

            # Log the accuracy as a metric (we could log arbitrary metrics,
            # including different metrics for training and inference.
            # GAP 2: self.add_metric(self.accuracy_fn(targets, logits, sample_weight))
            self.accuracy_fn(targets, logits, sample_weight)

        # Return the inference-time prediction tensor (for `.predict()`).
        return tf.nn_ops.softmax(logits)


inputs = keras.Input((764,), name="inputs")
logits = keras.layers.Dense(1)(inputs)
targets = keras.Input((1,), name="targets")
sample_weight = keras.Input((1,), name="sample_weight")
preds = LogisticEndpoint()(logits, targets, sample_weight)
model = keras.Model([inputs, targets, sample_weight], preds)

data = {
    "inputs": np.random.random((N, 764)),
    "targets": np.random.random((N, 1)),
    "sample_weight": np.random.random((N, 1)),
}

# --- added: the endpoint's loss and metric on one batch, against numpy ---------------------
endpoint = model.layers[-1]
assert isinstance(endpoint, LogisticEndpoint), model.layers
batch = {k: v[:32] for k, v in data.items()}
with tape.GradientTape() as t:
    out = model(batch)
    endpoint_loss = model.losses[0]
grad_w, grad_b = t.gradient(endpoint_loss, model.trainable_variables)
assert tuple(out.shape) == (32, 1), out.shape
np.testing.assert_array_equal(out.numpy(), np.ones((32, 1), np.float32))  # softmax of 1 logit
W0, b0 = model.get_weights()
assert W0.shape == (764, 1) and b0.shape == (1,), (W0.shape, b0.shape)
z0 = batch["inputs"] @ W0.astype(np.float64) + b0
assert len(model.losses) == 1, model.losses
np.testing.assert_allclose(float(model.losses[0]),
                           np_endpoint_loss(z0, batch["targets"], batch["sample_weight"]),
                           rtol=1e-5)
sig = 1 / (1 + np.exp(-z0))  # d loss / d z = w * (sigmoid(z) - t) / batch
dz = batch["sample_weight"] * (sig - batch["targets"]) / len(z0)
np.testing.assert_allclose(grad_w.numpy(), batch["inputs"].T @ dz, rtol=1e-4, atol=1e-6)
np.testing.assert_allclose(grad_b.numpy(), dz.sum(0), rtol=1e-4, atol=1e-6)
assert float(endpoint.accuracy_fn.result()) == 0.0  # soft targets never equal 0 or 1
hard = (batch["targets"] > 0.5).astype(np.float32)  # and with 0/1 targets: numpy's accuracy
endpoint.accuracy_fn.reset_state()
endpoint.accuracy_fn(hard, z0.astype(np.float32), batch["sample_weight"])
w = batch["sample_weight"]
np.testing.assert_allclose(float(endpoint.accuracy_fn.result()),
                           float((w * (hard == (z0 > 0.5))).sum() / w.sum()), rtol=1e-5)
endpoint.accuracy_fn.reset_state()
# --------------------------------------------------------------------------------------------

model.compile(keras.optimizers.Adam(1e-3))
untrained = model.evaluate(data, batch_size=N, verbose=0, return_dict=True)["loss"]  # added
z = data["inputs"] @ W0.astype(np.float64) + b0
np.testing.assert_allclose(untrained, np_endpoint_loss(z, data["targets"],
                                                       data["sample_weight"]), rtol=1e-5)
best_constant = float(data["sample_weight"].mean()) * math.log(2)
print(f"untrained loss {untrained:.4f}, best constant prediction {best_constant:.4f}")
history = model.fit(data, epochs=EPOCHS, verbose=0)  # upstream: model.fit(data, epochs=2)

# --- added: what fit logged and reached -----------------------------------------------------
print("history:", history.history)
assert list(history.history) == ["accuracy", "loss"], history.history  # sorted, as Keras 3
assert history.history["accuracy"] == [0.0] * EPOCHS, history.history  # as Keras logs it
W1, b1 = model.get_weights()
trained = model.evaluate(data, batch_size=N, verbose=0, return_dict=True)["loss"]
z1 = data["inputs"] @ W1.astype(np.float64) + b1
np.testing.assert_allclose(trained, np_endpoint_loss(z1, data["targets"],
                                                     data["sample_weight"]), rtol=1e-5)
losses = history.history["loss"]
assert SHORT or untrained > best_constant + 0.1, (untrained, best_constant)  # far at first
assert SHORT or losses[-1] < losses[0] < untrained, (losses, untrained)
assert SHORT or abs(trained - best_constant) < 0.01, (trained, best_constant)
# --------------------------------------------------------------------------------------------

"""
## Exporting an inference-only model

Simply don't include `targets` in the model. The weights stay the same.
"""

inputs = keras.Input((764,), name="inputs")
logits = keras.layers.Dense(1)(inputs)
preds = LogisticEndpoint()(logits, targets=None, sample_weight=None)
inference_model = keras.Model(inputs, preds)

inference_model.set_weights(model.get_weights())

preds = inference_model.predict(np.random.random((1000, 764)))

# --- added ----------------------------------------------------------------------------------
assert preds.shape == (1000, 1) and preds.dtype == np.float32, (preds.shape, preds.dtype)
np.testing.assert_array_equal(preds, np.ones((1000, 1), np.float32))
for a, b in zip(inference_model.get_weights(), model.get_weights()):
    np.testing.assert_array_equal(a, b)
dense = inference_model.layers[1]
x_new = np.random.random((5, 764)).astype(np.float32)
np.testing.assert_allclose(dense(x_new).numpy(), x_new @ W1 + b1, rtol=1e-5, atol=1e-5)
assert inference_model.losses == [], inference_model.losses  # no targets, no loss
# --------------------------------------------------------------------------------------------

"""
## Usage of loss endpoint layers in subclassed models
"""


class LogReg(keras.Model):
    def __init__(self):
        super(LogReg, self).__init__()  # noqa: UP008 (upstream spelling)
        self.dense = keras.layers.Dense(1)
        self.logistic_endpoint = LogisticEndpoint()

    def call(self, inputs):
        # Note that all inputs should be in the first argument
        # since we want to be able to call `model.fit(inputs)`.
        logits = self.dense(inputs["inputs"])
        preds = self.logistic_endpoint(
            logits=logits,
            targets=inputs["targets"],
            sample_weight=inputs["sample_weight"],
        )
        return preds


model = LogReg()
data = {
    "inputs": np.random.random((N, 764)),
    "targets": np.random.random((N, 1)),
    "sample_weight": np.random.random((N, 1)),
}

model.compile(keras.optimizers.Adam(1e-3))
untrained = model.evaluate(data, batch_size=N, verbose=0, return_dict=True)["loss"]  # added
history = model.fit(data, epochs=EPOCHS, verbose=0)  # upstream: model.fit(data, epochs=2)

# --- added ----------------------------------------------------------------------------------
print("history:", history.history)
assert history.history["accuracy"] == [0.0] * EPOCHS, history.history
W, b = model.get_weights()
assert W.shape == (764, 1) and b.shape == (1,), (W.shape, b.shape)
trained = model.evaluate(data, batch_size=N, verbose=0, return_dict=True)["loss"]
z = data["inputs"] @ W.astype(np.float64) + b
np.testing.assert_allclose(trained, np_endpoint_loss(z, data["targets"], data["sample_weight"]),
                           rtol=1e-5)
losses = history.history["loss"]
best_constant = float(data["sample_weight"].mean()) * math.log(2)
assert SHORT or losses[-1] < losses[0], losses
assert SHORT or trained < untrained, (trained, untrained)
assert SHORT or abs(trained - best_constant) < 0.01, (trained, best_constant)

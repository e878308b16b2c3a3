"""Port of tensorflow/docs site/en/tutorials/customization/custom_training_walkthrough.ipynb
("Custom training: walkthrough", the penguin classifier: a Sequential MLP, a loss and a grad
function, SGD with apply_gradients, epoch metrics, a test-set Accuracy metric, predictions).

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/tutorials/customization/custom_training_walkthrough.ipynb
Changed: names only (tf.keras.Sequential/layers -> nn.Sequential/nn.layers, tf.nn.relu/softmax
-> em.nn_ops.relu/softmax, tf.math.argmax -> em.argmax, tf.keras.losses/optimizers/metrics ->
nn.losses/optimizers/metrics, tf.GradientTape -> tape.GradientTape, tf.data -> ember.data,
tf.stack/convert_to_tensor -> em.*); the tensorflow_datasets download ("penguins/processed":
four features scaled to [0, 1], three species) is replaced by 344 synthetic penguins drawn
around three species centres with the same split (20% test), and the plotting and dataframe
cells are dropped. Reduced (EMBER_PROGRAMS_FULL=1 restores it): 120 epochs instead of 201.
Added: the first step lowers the loss, optimizer.iterations counts the steps, training loss
falls threefold and the test accuracy passes 90%.
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): fewer examples and epochs, no threshold on
what training reached.
"""

import os

import numpy as np

import ember.core as em
from ember import data, nn, tape

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
em.random.set_seed(0)

class_names = ['Adélie', 'Chinstrap', 'Gentoo']

rng = np.random.default_rng(0)
centres = np.array([[0.3, 0.7, 0.3, 0.3], [0.7, 0.6, 0.3, 0.4], [0.5, 0.2, 0.8, 0.7]],
                   np.float32)
species = rng.integers(0, 3, size=344)
measurements = (centres[species] + 0.07 * rng.normal(size=(344, 4))).astype(np.float32)
ds_test = data.Dataset.from_tensor_slices((measurements[:69], species[:69]))
ds_train = data.Dataset.from_tensor_slices((measurements[69:], species[69:]))

ds_train_batch = ds_train.batch(32)

features, labels = next(iter(ds_train_batch))
print(features)
print(labels)

model = nn.Sequential([
  nn.layers.Dense(10, activation=em.nn_ops.relu, input_shape=(4,)),  # input shape required
  nn.layers.Dense(10, activation=em.nn_ops.relu),
  nn.layers.Dense(3)
])

predictions = model(features)
print(predictions[:5])
print(em.nn_ops.softmax(predictions[:5]))
print(f"Prediction: {em.argmax(predictions, axis=1)}")
print(f"    Labels: {labels}")

loss_object = nn.losses.SparseCategoricalCrossentropy(from_logits=True)


def loss(model, x, y, training):
  # training=training is needed only if there are layers with different
  # behavior during training versus inference (e.g. Dropout).
  y_ = model(x, training=training)

  return loss_object(y_true=y, y_pred=y_)


l = loss(model, features, labels, training=False)
print(f"Loss test: {l}")


def grad(model, inputs, targets):
  with tape.GradientTape() as t:
    loss_value = loss(model, inputs, targets, training=True)
  return loss_value, t.gradient(loss_value, model.trainable_variables)


optimizer = nn.optimizers.SGD(learning_rate=0.01)

loss_value, grads = grad(model, features, labels)

print(f"Step: {optimizer.iterations.numpy()}, Initial Loss: {loss_value.numpy()}")
assert int(optimizer.iterations.numpy()) == 0

optimizer.apply_gradients(zip(grads, model.trainable_variables))

after = loss(model, features, labels, training=True).numpy()
print(f"Step: {optimizer.iterations.numpy()},         Loss: {after}")
assert int(optimizer.iterations.numpy()) == 1
assert after < loss_value.numpy(), (after, loss_value.numpy())

## Note: Rerunning this cell uses the same model parameters

# Keep results for plotting
train_loss_results = []
train_accuracy_results = []

num_epochs = 201 if FULL else 5 if SHORT else 120

for epoch in range(num_epochs):
  epoch_loss_avg = nn.metrics.Mean()
  epoch_accuracy = nn.metrics.SparseCategoricalAccuracy()

  # Training loop - using batches of 32
  for x, y in ds_train_batch:
    # Optimize the model
    loss_value, grads = grad(model, x, y)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

    # Track progress
    epoch_loss_avg.update_state(loss_value)  # Add current batch loss
    # Compare predicted label to actual label
    # training=True is needed only if there are layers with different
    # behavior during training versus inference (e.g. Dropout).
    epoch_accuracy.update_state(y, model(x, training=True))

  # End epoch
  train_loss_results.append(epoch_loss_avg.result())
  train_accuracy_results.append(epoch_accuracy.result())

  if epoch % 50 == 0:
    print(f"Epoch {epoch:03d}: Loss: {epoch_loss_avg.result():.3f}, Accuracy: {epoch_accuracy.result():.3%}")

assert int(optimizer.iterations.numpy()) == 1 + num_epochs * 9
assert SHORT or float(train_loss_results[-1]) < float(train_loss_results[0]) / 3, (
  float(train_loss_results[0]), float(train_loss_results[-1]))

test_accuracy = nn.metrics.Accuracy()
ds_test_batch = ds_test.batch(10)

for (x, y) in ds_test_batch:
  # training=False is needed only if there are layers with different
  # behavior during training versus inference (e.g. Dropout).
  logits = model(x, training=False)
  prediction = em.argmax(logits, axis=1, output_type=em.int64)
  test_accuracy(prediction, y)

print(f"Test set accuracy: {test_accuracy.result():.3%}")
assert SHORT or float(test_accuracy.result()) > 0.9, float(test_accuracy.result())

print(em.stack([em.cast(y, em.int64), prediction], axis=1))

predict_dataset = em.convert_to_tensor([
    [0.3, 0.8, 0.4, 0.5,],
    [0.4, 0.1, 0.8, 0.5,],
    [0.7, 0.9, 0.8, 0.4]
])

# training=False is needed only if there are layers with different
# behavior during training versus inference (e.g. Dropout).
predictions = model(predict_dataset, training=False)

for i, logits in enumerate(predictions):
  class_idx = em.argmax(logits).numpy()
  p = em.nn_ops.softmax(logits)[class_idx]
  name = class_names[class_idx]
  print(f"Example {i} prediction: {name} ({100*p:4.1f}%)")
assert SHORT or [int(em.argmax(lg)) for lg in predictions][:2] == [0, 2]

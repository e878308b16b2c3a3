"""Port of tensorflow/docs site/en/guide/mixed_precision.ipynb ("Mixed precision": the Keras
mixed precision API, a dtype policy, a float32 output layer, fit with loss scaling, and a
custom training loop with a LossScaleOptimizer).

Upstream: https://github.com/tensorflow/docs/blob/fd8ac77643f21f7b1d22425cbf5d2979ed635bcf/site/en/guide/mixed_precision.ipynb
Changed: names only (tf.keras.mixed_precision -> nn.mixed_precision, keras.layers ->
nn.layers, keras.Input/keras.Model -> nn.Input/nn.Model, keras.optimizers.RMSprop ->
nn.optimizers.RMSprop, tf.keras.losses/metrics -> nn.losses/nn.metrics, tf.data ->
ember.data, tf.GradientTape -> tape.GradientTape, @tf.function -> @graph.function,
tf.constant -> em.constant); `!nvidia-smi -L` left out; tf.config.list_physical_devices('GPU')
-> whether new tensors go to a GPU. The custom loop takes Keras 3's LossScaleOptimizer
methods, which ember has: `optimizer.scale_loss(loss)` for the guide's (Keras 2)
`get_scaled_loss`, and `apply_gradients` unscales the gradients itself, so the guide's
`get_unscaled_gradients` step goes. On the CPU the guide runs mixed_float16 "significantly
slower"; on ember's CPU backend float16 products have no BLAS (bench_mixed_precision:
~40-180x float32's time), so after the guide's policy cells the CPU run trains with
'mixed_bfloat16' (the guide's TPU policy, 1.6-1.9x float32's time here) and a GPU run
(the strict double included) with 'mixed_float16', as the guide. keras.datasets.mnist ->
ember.data.datasets.mnist(data_dir=...). Reduced (EMBER_PROGRAMS_FULL=1 restores it):
12,000 training and 2,000 test images, batch 512 instead of 60,000/10,000 and 8,192 (at
8,192 the reduced set would give two steps an epoch). Added: the dtypes the guide prints
are asserted, fit under mixed_float16 is checked to wrap the optimizer in a
LossScaleOptimizer, and both trainings must pass 80% test accuracy (PyTorch, float32, the
fit setup: 85-86% over three seeds; ember's CPU run: 88% and 86%).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): fewer examples and epochs, no threshold on
what training reached.
"""
# ruff: noqa: UP031, UP032

import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, graph, nn, tape
from ember.nn import layers, mixed_precision

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
N_TRAIN, N_TEST = (60000, 10000) if FULL else (1024, 256) if SHORT else (12000, 2000)
BATCH = 8192 if FULL else 128 if SHORT else 512
EPOCHS = 5 if FULL else 1 if SHORT else 5
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
ON_GPU = em.constant(0.0).device.startswith("/gpu")

# ## Setting the dtype policy

policy = mixed_precision.Policy('mixed_float16')
mixed_precision.set_global_policy(policy)

# Equivalent to the two lines above
mixed_precision.set_global_policy('mixed_float16')

print('Compute dtype: %s' % policy.compute_dtype)
print('Variable dtype: %s' % policy.variable_dtype)
assert (policy.compute_dtype, policy.variable_dtype) == ('float16', 'float32')

if not ON_GPU:  # ember's CPU float16 is numpy's, unaccelerated: bfloat16 (see the header)
  mixed_precision.set_global_policy('mixed_bfloat16')
  policy = mixed_precision.global_policy()
COMPUTE = policy.compute_dtype

# ## Building the model

inputs = nn.Input(shape=(784,), name='digits')
if ON_GPU:
  num_units = 4096 if FULL else 64  # reduced: the strict double computes with numpy
  print('The model will run with %d units on a GPU' % num_units)
else:
  # Use fewer units on CPUs so the model finishes in a reasonable amount of time
  print('The model will run with 64 units on a CPU')
  num_units = 64
dense1 = layers.Dense(num_units, activation='relu', name='dense_1')
x = dense1(inputs)
dense2 = layers.Dense(num_units, activation='relu', name='dense_2')
x = dense2(x)

print(dense1.dtype_policy)
print('x.dtype: %s' % x.dtype.name)
# 'kernel' is dense1's variable
print('dense1.kernel.dtype: %s' % dense1.kernel.dtype.name)
assert dense1.dtype_policy == policy
assert (x.dtype.name, dense1.kernel.dtype.name) == (COMPUTE, 'float32')

# INCORRECT: softmax and model output will be float16, when it should be float32
outputs = layers.Dense(10, activation='softmax', name='predictions')(x)
print('Outputs dtype: %s' % outputs.dtype.name)
assert outputs.dtype.name == COMPUTE

# CORRECT: softmax and model output are float32
x = layers.Dense(10, name='dense_logits')(x)
outputs = layers.Activation('softmax', dtype='float32', name='predictions')(x)
print('Outputs dtype: %s' % outputs.dtype.name)
assert outputs.dtype.name == 'float32'

# The linear activation is an identity function. So this simply casts 'outputs'
# to float32. In this particular case, 'outputs' is already float32 so this is a
# no-op.
outputs = layers.Activation('linear', dtype='float32')(outputs)

model = nn.Model(inputs=inputs, outputs=outputs)
model.compile(loss='sparse_categorical_crossentropy',
              optimizer=nn.optimizers.RMSprop(),
              metrics=['accuracy'])
assert isinstance(model.optimizer, mixed_precision.LossScaleOptimizer) == (
    COMPUTE == 'float16'), type(model.optimizer)  # fit scales the loss under mixed_float16


def load_data():
  def split(name, n):
    x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
    return (np.asarray(x).reshape(-1, 28, 28) * 255.0).round().astype(np.uint8), np.asarray(y)
  return split("train", N_TRAIN), split("test", N_TEST)


(x_train, y_train), (x_test, y_test) = load_data()
x_train = x_train.reshape(N_TRAIN, 784).astype('float32') / 255
x_test = x_test.reshape(N_TEST, 784).astype('float32') / 255

initial_weights = model.get_weights()

# ## Training the model with Model.fit

history = model.fit(x_train, y_train,
                    batch_size=BATCH,
                    epochs=EPOCHS,
                    validation_split=0.2)
test_scores = model.evaluate(x_test, y_test, verbose=2)
print('Test loss:', test_scores[0])
print('Test accuracy:', test_scores[1])
assert SHORT or test_scores[1] > 0.80, test_scores
assert SHORT or history.history['loss'][-1] < history.history['loss'][0], history.history

# ## Loss scaling
# ### Underflow and Overflow

x = em.constant(256, dtype='float16')
print((x ** 2).numpy())  # Overflow
assert np.isinf((x ** 2).numpy())

x = em.constant(1e-5, dtype='float16')
print((x ** 2).numpy())  # Underflow
assert (x ** 2).numpy() == 0

# ## Training the model with a custom training loop

optimizer = nn.optimizers.RMSprop()
optimizer = mixed_precision.LossScaleOptimizer(optimizer)

loss_object = nn.losses.SparseCategoricalCrossentropy()
train_dataset = (data.Dataset.from_tensor_slices((x_train, y_train))
                 .shuffle(10000).batch(BATCH))
test_dataset = data.Dataset.from_tensor_slices((x_test, y_test)).batch(BATCH)


@graph.function
def train_step(x, y):
  with tape.GradientTape() as t:
    predictions = model(x)
    loss = loss_object(y, predictions)
    scaled_loss = optimizer.scale_loss(loss)
  scaled_gradients = t.gradient(scaled_loss, model.trainable_variables)
  optimizer.apply_gradients(zip(scaled_gradients, model.trainable_variables))  # unscales
  return loss


@graph.function
def test_step(x):
  return model(x, training=False)


model.set_weights(initial_weights)

losses = []
for epoch in range(EPOCHS):
  epoch_loss_avg = nn.metrics.Mean()
  test_accuracy = nn.metrics.SparseCategoricalAccuracy(
      name='test_accuracy')
  for x, y in train_dataset:
    loss = train_step(x, y)
    epoch_loss_avg(loss)
  for x, y in test_dataset:
    predictions = test_step(x)
    test_accuracy.update_state(y, predictions)
  print('Epoch {}: loss={}, test accuracy={}'.format(epoch, epoch_loss_avg.result(), test_accuracy.result()))
  losses.append(float(epoch_loss_avg.result()))

print('Loss scale: %s, steps applied: %d' % (float(optimizer.dynamic_scale),
                                               int(optimizer.iterations)))
assert SHORT or float(test_accuracy.result()) > 0.80, test_accuracy.result()
assert SHORT or losses[-1] < losses[0], losses
assert train_step.experimental_get_tracing_count() <= 3  # a skipped step replays the plan
mixed_precision.set_global_policy('float32')

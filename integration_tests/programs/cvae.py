"""Port of tensorflow/docs site/en/tutorials/generative/cvae.ipynb (a convolutional VAE: a
subclassed model holding two Sequential stacks, the ELBO written by hand with
sigmoid_cross_entropy_with_logits, trained with GradientTape).

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/tutorials/generative/cvae.ipynb
Changed: names only (tf.keras.Model/Sequential/layers -> nn.Model/nn.Sequential/nn.layers,
tf.* ops -> em.*, tf.math.log -> np.log of a constant, tf.nn.sigmoid_cross_entropy_with_logits
-> em.nn_ops.sigmoid_cross_entropy_with_logits, tf.keras.optimizers.Adam -> nn.optimizers.Adam,
tf.keras.metrics.Mean -> nn.metrics.Mean, @tf.function -> @graph.function). ember has no InputLayer, so
`InputLayer(input_shape=s)` becomes input_shape=s on the first layer of each Sequential.
Plotting and the GIF are dropped; tf.keras.datasets.mnist.load_data() ->
ember.data.datasets.mnist(data_dir=...). Reduced (EMBER_PROGRAMS_FULL=1 restores it): 1,024
training and 256 test images, batch 32, 2 epochs, learning rate 1e-3 (upstream 60,000/10,000,
10 epochs, 1e-4; EMBER_PROGRAMS_SHORT=1: 128/64 images, 1 epoch, no ELBO threshold).
Added: the test-set ELBO rises by a third and samples have the image shape.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import time
import unittest

import numpy as np

import ember.core as em
from ember import data, graph, nn, tape

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
  raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)


def load_data(n_train, n_test):
  def split(name, n):
    x, _ = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
    return (np.asarray(x).reshape(-1, 28, 28) * 255.0).round()
  return (split("train", n_train), None), (split("test", n_test), None)


train_size = 60000 if FULL else 128 if SHORT else 1024
test_size = 10000 if FULL else 64 if SHORT else 256
(train_images, _), (test_images, _) = load_data(train_size, test_size)


def preprocess_images(images):
  images = images.reshape((images.shape[0], 28, 28, 1)) / 255.
  return np.where(images > .5, 1.0, 0.0).astype('float32')


train_images = preprocess_images(train_images)
test_images = preprocess_images(test_images)

batch_size = 32

train_dataset = (data.Dataset.from_tensor_slices(train_images)
                 .shuffle(train_size).batch(batch_size))
test_dataset = (data.Dataset.from_tensor_slices(test_images)
                .shuffle(test_size).batch(batch_size))


class CVAE(nn.Model):
  """Convolutional variational autoencoder."""

  def __init__(self, latent_dim):
    super().__init__()
    self.latent_dim = latent_dim
    self.encoder = nn.Sequential(
        [
            nn.layers.Conv2D(
                filters=32, kernel_size=3, strides=(2, 2), activation='relu',
                input_shape=(28, 28, 1)),
            nn.layers.Conv2D(
                filters=64, kernel_size=3, strides=(2, 2), activation='relu'),
            nn.layers.Flatten(),
            # No activation
            nn.layers.Dense(latent_dim + latent_dim),
        ]
    )

    self.decoder = nn.Sequential(
        [
            nn.layers.Dense(units=7*7*32, activation=em.nn_ops.relu,
                            input_shape=(latent_dim,)),
            nn.layers.Reshape(target_shape=(7, 7, 32)),
            nn.layers.Conv2DTranspose(
                filters=64, kernel_size=3, strides=2, padding='same',
                activation='relu'),
            nn.layers.Conv2DTranspose(
                filters=32, kernel_size=3, strides=2, padding='same',
                activation='relu'),
            # No activation
            nn.layers.Conv2DTranspose(
                filters=1, kernel_size=3, strides=1, padding='same'),
        ]
    )

  def sample(self, eps=None):
    if eps is None:
      eps = em.random.normal(shape=(100, self.latent_dim))
    return self.decode(eps, apply_sigmoid=True)

  def encode(self, x):
    mean, logvar = em.split(self.encoder(x), num_or_size_splits=2, axis=1)
    return mean, logvar

  def reparameterize(self, mean, logvar):
    eps = em.random.normal(shape=mean.shape)
    return eps * em.exp(logvar * .5) + mean

  def decode(self, z, apply_sigmoid=False):
    logits = self.decoder(z)
    if apply_sigmoid:
      probs = em.sigmoid(logits)
      return probs
    return logits


optimizer = nn.optimizers.Adam(1e-4 if FULL else 1e-3)


def log_normal_pdf(sample, mean, logvar, raxis=1):
  log2pi = np.log(2. * np.pi)
  return em.reduce_sum(
      -.5 * ((sample - mean) ** 2. * em.exp(-logvar) + logvar + log2pi),
      axis=raxis)


def compute_loss(model, x):
  mean, logvar = model.encode(x)
  z = model.reparameterize(mean, logvar)
  x_logit = model.decode(z)
  cross_ent = em.nn_ops.sigmoid_cross_entropy_with_logits(logits=x_logit, labels=x)
  logpx_z = -em.reduce_sum(cross_ent, axis=[1, 2, 3])
  logpz = log_normal_pdf(z, 0., 0.)
  logqz_x = log_normal_pdf(z, mean, logvar)
  return -em.reduce_mean(logpx_z + logpz - logqz_x)


@graph.function
def train_step(model, x, optimizer):
  """Executes one training step and returns the loss.

  This function computes the loss and gradients, and uses the latter to
  update the model's parameters.
  """
  with tape.GradientTape() as t:
    loss = compute_loss(model, x)
  gradients = t.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(gradients, model.trainable_variables))


epochs = 10 if FULL else 1 if SHORT else 2
# set the dimensionality of the latent space to a plane for visualization later
latent_dim = 2
num_examples_to_generate = 16

# keeping the random vector constant for generation (prediction) so
# it will be easier to see the improvement.
random_vector_for_generation = em.random.normal(
    shape=[num_examples_to_generate, latent_dim])
model = CVAE(latent_dim)


def generate_and_save_images(model, epoch, test_sample):
  mean, logvar = model.encode(test_sample)
  z = model.reparameterize(mean, logvar)
  predictions = model.sample(z)
  assert predictions.shape == (num_examples_to_generate, 28, 28, 1)
  assert 0.0 <= float(em.reduce_min(predictions)) <= float(em.reduce_max(predictions)) <= 1.0


# Pick a sample of the test set for generating output images
assert batch_size >= num_examples_to_generate
for test_batch in test_dataset.take(1):
  test_sample = test_batch[0:num_examples_to_generate, :, :, :]

generate_and_save_images(model, 0, test_sample)


def test_elbo():
  loss = nn.metrics.Mean()
  for test_x in test_dataset:
    loss(compute_loss(model, test_x))
  return -float(loss.result())


elbos = [test_elbo()]
for epoch in range(1, epochs + 1):
  start_time = time.time()
  for train_x in train_dataset:
    train_step(model, train_x, optimizer)
  end_time = time.time()

  elbo = test_elbo()
  elbos.append(elbo)
  print(f'Epoch: {epoch}, Test set ELBO: {elbo}, time elapse for current epoch: '
        f'{end_time - start_time}')
  generate_and_save_images(model, epoch, test_sample)

assert SHORT or elbos[-1] > elbos[0] * 2 / 3, elbos  # ELBOs are negative: rising means nearer zero

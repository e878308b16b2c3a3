"""Port of tensorflow/docs site/en/tutorials/generative/dcgan.ipynb (a DCGAN on MNIST written
with two GradientTapes).

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/tutorials/generative/dcgan.ipynb
Changed: names only (tf.keras.Sequential -> nn.Sequential, tensorflow.keras.layers ->
ember.nn.layers, tf.random.normal -> em.random.normal, tf.ones_like/zeros_like -> em.*,
tf.keras.losses.BinaryCrossentropy -> nn.losses.BinaryCrossentropy,
tf.keras.optimizers.Adam -> nn.optimizers.Adam,
tf.train.Checkpoint -> checkpoint.Checkpoint, tf.train.latest_checkpoint ->
checkpoint.latest_checkpoint, @tf.function -> @graph.function); image plotting and the GIF cells are
dropped; tf.keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...).
Reduced (EMBER_PROGRAMS_FULL=1 restores it): 128 images, batch 32, 2 epochs, a checkpoint
every epoch (upstream: 60,000 images, batch 256, 50 epochs, every 15; EMBER_PROGRAMS_SHORT=1:
64 images, 1 epoch, no check that the loss falls). Added: the model
output shapes upstream asserts, the discriminator loss falls below its untrained 2*log(2),
and the checkpoint restores the generator exactly.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import math
import os
import pathlib
import time
import unittest

import numpy as np

import ember.core as em
from ember import checkpoint as ckpt_lib
from ember import data, graph, nn, tape
from ember.nn import layers

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
N = 60000 if FULL else 64 if SHORT else 128
x, _ = next(iter(data.datasets.mnist("train", data_dir=DATA_DIR).take(N).batch(N)))
train_images = (np.asarray(x) * 255.0).round()

train_images = train_images.reshape(train_images.shape[0], 28, 28, 1).astype('float32')
train_images = (train_images - 127.5) / 127.5  # Normalize the images to [-1, 1]

BUFFER_SIZE = 60000
BATCH_SIZE = 256 if FULL else 32

# Batch and shuffle the data
train_dataset = data.Dataset.from_tensor_slices(train_images).shuffle(BUFFER_SIZE).batch(BATCH_SIZE)


def make_generator_model():
    model = nn.Sequential()
    model.add(layers.Dense(7*7*256, use_bias=False, input_shape=(100,)))
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Reshape((7, 7, 256)))
    assert model.output_shape == (None, 7, 7, 256)  # Note: None is the batch size

    model.add(layers.Conv2DTranspose(128, (5, 5), strides=(1, 1), padding='same', use_bias=False))
    assert model.output_shape == (None, 7, 7, 128)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Conv2DTranspose(64, (5, 5), strides=(2, 2), padding='same', use_bias=False))
    assert model.output_shape == (None, 14, 14, 64)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Conv2DTranspose(1, (5, 5), strides=(2, 2), padding='same', use_bias=False, activation='tanh'))  # noqa: E501
    assert model.output_shape == (None, 28, 28, 1)

    return model


generator = make_generator_model()

noise = em.random.normal([1, 100])
generated_image = generator(noise, training=False)
assert generated_image.shape == (1, 28, 28, 1)


def make_discriminator_model():
    model = nn.Sequential()
    model.add(layers.Conv2D(64, (5, 5), strides=(2, 2), padding='same',
                                     input_shape=[28, 28, 1]))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.3))

    model.add(layers.Conv2D(128, (5, 5), strides=(2, 2), padding='same'))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.3))

    model.add(layers.Flatten())
    model.add(layers.Dense(1))

    return model


discriminator = make_discriminator_model()
decision = discriminator(generated_image)
print(decision)
assert decision.shape == (1, 1)

# This method returns a helper function to compute cross entropy loss
cross_entropy = nn.losses.BinaryCrossentropy(from_logits=True)


def discriminator_loss(real_output, fake_output):
    real_loss = cross_entropy(em.ones_like(real_output), real_output)
    fake_loss = cross_entropy(em.zeros_like(fake_output), fake_output)
    total_loss = real_loss + fake_loss
    return total_loss


def generator_loss(fake_output):
    return cross_entropy(em.ones_like(fake_output), fake_output)


generator_optimizer = nn.optimizers.Adam(1e-4)
discriminator_optimizer = nn.optimizers.Adam(1e-4)

checkpoint_dir = './training_checkpoints'
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
checkpoint = ckpt_lib.Checkpoint(generator_optimizer=generator_optimizer,
                                 discriminator_optimizer=discriminator_optimizer,
                                 generator=generator,
                                 discriminator=discriminator)

EPOCHS = 50 if FULL else 1 if SHORT else 2
SAVE_EVERY = 15 if FULL else 1
noise_dim = 100
num_examples_to_generate = 16

# You will reuse this seed overtime (so it's easier)
# to visualize progress in the animated GIF)
seed = em.random.normal([num_examples_to_generate, noise_dim])
disc_losses = []


# Notice the use of `tf.function`
# This annotation causes the function to be "compiled".
@graph.function
def train_step(images):
    noise = em.random.normal([BATCH_SIZE, noise_dim])

    with tape.GradientTape() as gen_tape, tape.GradientTape() as disc_tape:
      generated_images = generator(noise, training=True)

      real_output = discriminator(images, training=True)
      fake_output = discriminator(generated_images, training=True)

      gen_loss = generator_loss(fake_output)
      disc_loss = discriminator_loss(real_output, fake_output)

    gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
    gradients_of_discriminator = disc_tape.gradient(disc_loss, discriminator.trainable_variables)

    generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
    discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator, discriminator.trainable_variables))  # noqa: E501
    return disc_loss  # added: the losses are checked below


def train(dataset, epochs):
  for epoch in range(epochs):
    start = time.time()

    for image_batch in dataset:
      disc_losses.append(float(train_step(image_batch)))  # added: the losses

    # Produce images for the GIF as you go
    generate_and_save_images(generator,
                             epoch + 1,
                             seed)

    # Save the model every 15 epochs
    if (epoch + 1) % SAVE_EVERY == 0:
      checkpoint.save(file_prefix = checkpoint_prefix)

    print (f'Time for epoch {epoch + 1} is {time.time()-start} sec')

  # Generate after the final epoch
  generate_and_save_images(generator,
                           epochs,
                           seed)


def generate_and_save_images(model, epoch, test_input):
  # Notice `training` is set to False.
  # This is so all layers run in inference mode (batchnorm).
  predictions = model(test_input, training=False)
  assert predictions.shape == (num_examples_to_generate, 28, 28, 1)
  assert float(em.reduce_max(em.abs(predictions))) <= 1.0  # tanh output


train(train_dataset, EPOCHS)
print(disc_losses)
assert disc_losses[0] > 0.8 * 2 * math.log(2), disc_losses
assert SHORT or min(disc_losses[-3:]) < 0.9 * disc_losses[0], disc_losses

after_training = generator(seed, training=False).numpy()
for v in generator.trainable_variables:
    v.assign(em.zeros_like(v))
checkpoint.restore(ckpt_lib.latest_checkpoint(checkpoint_dir))
np.testing.assert_allclose(generator(seed, training=False).numpy(), after_training, rtol=1e-6)

"""Port of keras-team/keras-io examples/generative/wgan_gp.py ("WGAN-GP overriding
`Model.train_step`", the Keras 3 version, last modified 2023/08/3): a functional critic
(ZeroPadding2D, strided Conv2D + LeakyReLU(0.2) blocks, Dropout, Flatten, Dropout, Dense(1))
and a functional generator (Dense, BatchNormalization, LeakyReLU, Reshape, UpSampling2D +
Conv2D + BatchNormalization blocks, tanh, Cropping2D) inside a keras.Model subclass that
overrides compile() and train_step(): three critic steps per generator step, each adding
the gradient penalty, the squared distance from 1 of the norm of the critic's gradient
with respect to an interpolated image, computed with a GradientTape nested in the critic's
tape (second-order gradients through Conv2D, LeakyReLU, Dropout, Flatten, Dense and
ZeroPadding2D); a GANMonitor callback saving generated images with array_to_img.

Upstream: https://github.com/keras-team/keras-io/blob/67e2c7062095bcae4746153831a1ac547abb9b42/examples/generative/wgan_gp.py
Changed: names only (keras -> nn, keras.layers -> nn.layers, keras.models.Model ->
nn.models.Model, keras.utils.array_to_img -> nn.utils.array_to_img; upstream's TensorFlow
calls, which ember.core spells as TensorFlow does: tf.random.normal/uniform ->
em.random.normal/uniform, tf.shape/sqrt/reduce_sum/square/reduce_mean -> em.*,
tf.GradientTape -> ember.tape.GradientTape). Fashion-MNIST cannot be downloaded:
keras.datasets.fashion_mnist.load_data() is replaced by the real MNIST digits
(ember.data.datasets.mnist, found as mnist_convnet.py finds them), kept uint8 as
load_data() gives them. The GANMonitor's PNGs go into a temporary directory (upstream: the
working directory) and the IPython display of them is dropped. Reduced
(EMBER_PROGRAMS_FULL=1 restores upstream: 60,000 images, batch 512, 20 epochs, critic
filters 64/128/256/512, generator 256/128/64): 1,024 digits, batch 64, 2 epochs, every
filter count divided by 4; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 128 digits,
1 epoch, no check on what training reached.
Added: a seed; the parameter counts of both models (as Keras 3 counts them at this width);
on a tiny critic built by upstream's conv_block (float64 policy, Dropout on), the
gradient of upstream's gradient_penalty with respect to every critic weight (a
second-order gradient) and of the critic's output with respect to its input agree with
central finite differences; the model gives the generator and critic shapes upstream
relies on; every batch's d_loss and g_loss is finite, the critic's and the generator's
weights both move, fit's History holds the last batch's d_loss and g_loss (Keras 3 logs
train_step's returned values); compile() with no arguments makes Keras 3's default
RMSprop; (CPU run) the critic's loss falls well below its first value (the penalty of an
untrained critic, near gp_weight); the GANMonitor wrote one 28x28 grey PNG per image per
epoch.
Fixed in ember since the first version of this port: second-order gradients through
LeakyReLU came back None where TF gives zeros (GAP 3: the conv bias's gradient of the
penalty is now zeros, connected, and asserted so); Model.compile() defaulted to SGD
where Keras 3 defaults to RMSprop (GAP 4): compile's default optimizer is now "rmsprop"
and its arguments are in Keras 3's order, so the RMSprop check is restored.
"""

import math
import os
import pathlib
import tempfile
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
from ember import tape as tape_lib

keras = nn  # the example's `keras.` prefix
layers = nn.layers
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()
W = 1 if FULL else 4  # the width divisor: every filter count is divided by it


def load_data(n_train):
    """keras.datasets.fashion_mnist.load_data()'s training half, in its layout (uint8
    (n, 28, 28) images, uint8 labels), from the real MNIST digits."""
    x, y = next(iter(data.datasets.mnist("train", data_dir=DATA_DIR).take(n_train).batch(n_train)))
    images = (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8)
    return (images, np.asarray(y).astype(np.uint8)), (None, None)


"""
## Prepare the Fashion-MNIST data (here: MNIST)
"""

IMG_SHAPE = (28, 28, 1)
BATCH_SIZE = 512 if FULL else 64

# Size of the noise vector
noise_dim = 128

(train_images, train_labels), (test_images, test_labels) = load_data(
    60000 if FULL else 128 if SHORT else 1024)
print(f"Number of examples: {len(train_images)}")
print(f"Shape of the images in the dataset: {train_images.shape[1:]}")

# Reshape each sample to (28, 28, 1) and normalize the pixel values in the [-1, 1] range
train_images = train_images.reshape(train_images.shape[0], *IMG_SHAPE).astype("float32")
train_images = (train_images - 127.5) / 127.5
assert train_images.min() == -1.0 and train_images.max() == 1.0

"""
## Create the discriminator (the critic in the original WGAN)
"""


def conv_block(
    x,
    filters,
    activation,
    kernel_size=(3, 3),
    strides=(1, 1),
    padding="same",
    use_bias=True,
    use_bn=False,
    use_dropout=False,
    drop_value=0.5,
):
    x = layers.Conv2D(
        filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias
    )(x)
    if use_bn:
        x = layers.BatchNormalization()(x)
    x = activation(x)
    if use_dropout:
        x = layers.Dropout(drop_value)(x)
    return x


def get_discriminator_model():
    img_input = layers.Input(shape=IMG_SHAPE)
    # Zero pad the input to make the input images size to (32, 32, 1).
    x = layers.ZeroPadding2D((2, 2))(img_input)
    x = conv_block(
        x,
        64 // W,
        kernel_size=(5, 5),
        strides=(2, 2),
        use_bn=False,
        use_bias=True,
        activation=layers.LeakyReLU(0.2),
        use_dropout=False,
        drop_value=0.3,
    )
    x = conv_block(
        x,
        128 // W,
        kernel_size=(5, 5),
        strides=(2, 2),
        use_bn=False,
        activation=layers.LeakyReLU(0.2),
        use_bias=True,
        use_dropout=True,
        drop_value=0.3,
    )
    x = conv_block(
        x,
        256 // W,
        kernel_size=(5, 5),
        strides=(2, 2),
        use_bn=False,
        activation=layers.LeakyReLU(0.2),
        use_bias=True,
        use_dropout=True,
        drop_value=0.3,
    )
    x = conv_block(
        x,
        512 // W,
        kernel_size=(5, 5),
        strides=(2, 2),
        use_bn=False,
        activation=layers.LeakyReLU(0.2),
        use_bias=True,
        use_dropout=False,
        drop_value=0.3,
    )

    x = layers.Flatten()(x)
    x = layers.Dropout(0.2)(x)
    x = layers.Dense(1)(x)

    d_model = keras.models.Model(img_input, x, name="discriminator")
    return d_model


d_model = get_discriminator_model()
d_model.summary()


def conv_params(k, cin, cout, bias=True):
    return k * k * cin * cout + (cout if bias else 0)


d_widths = [1, 64 // W, 128 // W, 256 // W, 512 // W]
d_expected = sum(conv_params(5, a, b) for a, b in zip(d_widths, d_widths[1:])) + (
    2 * 2 * d_widths[-1] + 1)
assert d_model.count_params() == d_expected, (d_model.count_params(), d_expected)
assert not FULL or d_expected == 4305409  # upstream's summary: Total params: 4,305,409

"""
## Create the generator
"""


def upsample_block(
    x,
    filters,
    activation,
    kernel_size=(3, 3),
    strides=(1, 1),
    up_size=(2, 2),
    padding="same",
    use_bn=False,
    use_bias=True,
    use_dropout=False,
    drop_value=0.3,
):
    x = layers.UpSampling2D(up_size)(x)
    x = layers.Conv2D(
        filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias
    )(x)

    if use_bn:
        x = layers.BatchNormalization()(x)

    if activation:
        x = activation(x)
    if use_dropout:
        x = layers.Dropout(drop_value)(x)
    return x


def get_generator_model():
    noise = layers.Input(shape=(noise_dim,))
    x = layers.Dense(4 * 4 * (256 // W), use_bias=False)(noise)
    x = layers.BatchNormalization()(x)
    x = layers.LeakyReLU(0.2)(x)

    x = layers.Reshape((4, 4, 256 // W))(x)
    x = upsample_block(
        x,
        128 // W,
        layers.LeakyReLU(0.2),
        strides=(1, 1),
        use_bias=False,
        use_bn=True,
        padding="same",
        use_dropout=False,
    )
    x = upsample_block(
        x,
        64 // W,
        layers.LeakyReLU(0.2),
        strides=(1, 1),
        use_bias=False,
        use_bn=True,
        padding="same",
        use_dropout=False,
    )
    x = upsample_block(
        x, 1, layers.Activation("tanh"), strides=(1, 1), use_bias=False, use_bn=True
    )
    # At this point, we have an output which has the same shape as the input, (32, 32, 1).
    # We will use a Cropping2D layer to make it (28, 28, 1).
    x = layers.Cropping2D((2, 2))(x)

    g_model = keras.models.Model(noise, x, name="generator")
    return g_model


g_model = get_generator_model()
g_model.summary()

g_dense = 4 * 4 * (256 // W)
g_expected = (noise_dim * g_dense + 4 * g_dense
              + conv_params(3, 256 // W, 128 // W, False) + 4 * (128 // W)
              + conv_params(3, 128 // W, 64 // W, False) + 4 * (64 // W)
              + conv_params(3, 64 // W, 1, False) + 4)
assert g_model.count_params() == g_expected, (g_model.count_params(), g_expected)
# BatchNormalization's moving mean and variance are not trainable
g_trainable = sum(int(np.prod(v.shape)) for v in g_model.trainable_variables)
assert g_trainable == g_expected - 2 * (g_dense + 128 // W + 64 // W + 1), g_trainable
assert not FULL or (g_expected, g_trainable) == (910660, 902082)  # upstream's summary
probe = g_model(em.random.normal([2, noise_dim]), training=False)
assert probe.shape == (2, 28, 28, 1), probe.shape
assert d_model(probe, training=False).shape == (2, 1)

"""
## Create the WGAN-GP model
"""


class WGAN(keras.Model):
    def __init__(
        self,
        discriminator,
        generator,
        latent_dim,
        discriminator_extra_steps=3,
        gp_weight=10.0,
    ):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.d_steps = discriminator_extra_steps
        self.gp_weight = gp_weight

    def compile(self, d_optimizer, g_optimizer, d_loss_fn, g_loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.d_loss_fn = d_loss_fn
        self.g_loss_fn = g_loss_fn

    def gradient_penalty(self, batch_size, real_images, fake_images):
        """Calculates the gradient penalty.

        This loss is calculated on an interpolated image
        and added to the discriminator loss.
        """
        # Get the interpolated image
        alpha = em.random.uniform([batch_size, 1, 1, 1], 0.0, 1.0)
        diff = fake_images - real_images
        interpolated = real_images + alpha * diff

        with tape_lib.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            # 1. Get the discriminator output for this interpolated image.
            pred = self.discriminator(interpolated, training=True)

        # 2. Calculate the gradients w.r.t to this interpolated image.
        grads = gp_tape.gradient(pred, [interpolated])[0]
        # 3. Calculate the norm of the gradients.
        norm = em.sqrt(em.reduce_sum(em.square(grads), axis=[1, 2, 3]))
        gp = em.reduce_mean((norm - 1.0) ** 2)
        return gp

    def train_step(self, real_images):
        if isinstance(real_images, tuple):
            real_images = real_images[0]

        # Get the batch size
        batch_size = em.shape(real_images)[0]

        # For each batch, we are going to perform the
        # following steps as laid out in the original paper:
        # 1. Train the generator and get the generator loss
        # 2. Train the discriminator and get the discriminator loss
        # 3. Calculate the gradient penalty
        # 4. Multiply this gradient penalty with a constant weight factor
        # 5. Add the gradient penalty to the discriminator loss
        # 6. Return the generator and discriminator losses as a loss dictionary

        # Train the discriminator first. The original paper recommends training
        # the discriminator for `x` more steps (typically 5) as compared to
        # one step of the generator. Here we will train it for 3 extra steps
        # as compared to 5 to reduce the training time.
        for i in range(self.d_steps):  # noqa: B007 (upstream's loop)
            # Get the latent vector
            random_latent_vectors = em.random.normal(
                shape=(batch_size, self.latent_dim)
            )
            with tape_lib.GradientTape() as tape:
                # Generate fake images from the latent vector
                fake_images = self.generator(random_latent_vectors, training=True)
                # Get the logits for the fake images
                fake_logits = self.discriminator(fake_images, training=True)
                # Get the logits for the real images
                real_logits = self.discriminator(real_images, training=True)

                # Calculate the discriminator loss using the fake and real image logits
                d_cost = self.d_loss_fn(real_img=real_logits, fake_img=fake_logits)
                # Calculate the gradient penalty
                gp = self.gradient_penalty(batch_size, real_images, fake_images)
                # Add the gradient penalty to the original discriminator loss
                d_loss = d_cost + gp * self.gp_weight

            # Get the gradients w.r.t the discriminator loss
            d_gradient = tape.gradient(d_loss, self.discriminator.trainable_variables)
            # Update the weights of the discriminator using the discriminator optimizer
            self.d_optimizer.apply_gradients(
                zip(d_gradient, self.discriminator.trainable_variables)
            )

        # Train the generator
        # Get the latent vector
        random_latent_vectors = em.random.normal(shape=(batch_size, self.latent_dim))
        with tape_lib.GradientTape() as tape:
            # Generate fake images using the generator
            generated_images = self.generator(random_latent_vectors, training=True)
            # Get the discriminator logits for fake images
            gen_img_logits = self.discriminator(generated_images, training=True)
            # Calculate the generator loss
            g_loss = self.g_loss_fn(gen_img_logits)

        # Get the gradients w.r.t the generator loss
        gen_gradient = tape.gradient(g_loss, self.generator.trainable_variables)
        # Update the weights of the generator using the generator optimizer
        self.g_optimizer.apply_gradients(
            zip(gen_gradient, self.generator.trainable_variables)
        )
        return {"d_loss": d_loss, "g_loss": g_loss}


"""
## Create a Keras callback that periodically saves generated images
"""


class GANMonitor(keras.callbacks.Callback):
    def __init__(self, num_img=6, latent_dim=128):
        self.num_img = num_img
        self.latent_dim = latent_dim

    def on_epoch_end(self, epoch, logs=None):
        random_latent_vectors = em.random.normal(shape=(self.num_img, self.latent_dim))
        generated_images = self.model.generator(random_latent_vectors)
        generated_images = (generated_images * 127.5) + 127.5

        for i in range(self.num_img):
            img = generated_images[i].numpy()
            img = keras.utils.array_to_img(img)
            img.save(os.path.join(workdir.name,  # upstream: the working directory
                                  "generated_img_{i}_{epoch}.png".format(i=i, epoch=epoch)))  # noqa: UP032


"""
## Train the end-to-end model
"""

# Instantiate the optimizer for both networks
# (learning_rate=0.0002, beta_1=0.5 are recommended)
generator_optimizer = keras.optimizers.Adam(
    learning_rate=0.0002, beta_1=0.5, beta_2=0.9
)
discriminator_optimizer = keras.optimizers.Adam(
    learning_rate=0.0002, beta_1=0.5, beta_2=0.9
)


# Define the loss functions for the discriminator,
# which should be (fake_loss - real_loss).
# We will add the gradient penalty later to this loss function.
def discriminator_loss(real_img, fake_img):
    real_loss = em.reduce_mean(real_img)
    fake_loss = em.reduce_mean(fake_img)
    return fake_loss - real_loss


# Define the loss functions for the generator.
def generator_loss(fake_img):
    return -em.reduce_mean(fake_img)


"""
## Added: the gradient penalty's gradient against finite differences on a tiny critic

Upstream's conv_block and gradient_penalty, on a 6x6 critic (ZeroPadding2D, a strided
Conv2D, LeakyReLU(0.2), Dropout(0.3), Flatten, Dense(1)) in float64. Every evaluation
starts from the same seed, so alpha and the dropout masks are the same each time.
"""

keras.mixed_precision.set_global_policy("float64")
tiny_input = layers.Input(shape=(6, 6, 1), dtype="float64")  # Input defaults to floatx
t = layers.ZeroPadding2D((1, 1))(tiny_input)
t = conv_block(t, 2, kernel_size=(3, 3), strides=(2, 2), activation=layers.LeakyReLU(0.2),
               use_dropout=True, drop_value=0.3)
t = layers.Flatten()(t)
t = layers.Dense(1)(t)
tiny_critic = keras.models.Model(tiny_input, t, name="tiny_critic")
keras.mixed_precision.set_global_policy("float32")
assert all(v.dtype == em.float64 for v in tiny_critic.trainable_variables)
tiny = WGAN(discriminator=tiny_critic, generator=None, latent_dim=2)
rng = np.random.default_rng(0)
tiny_real = em.constant(rng.uniform(-1, 1, (3, 6, 6, 1)))
tiny_fake = em.constant(rng.uniform(-1, 1, (3, 6, 6, 1)))


def tiny_gp():
    em.random.set_seed(7)
    return tiny.gradient_penalty(3, tiny_real, tiny_fake)


with tape_lib.GradientTape() as outer:
    gp_value = tiny_gp()
# The Dense bias does not reach the critic's input gradient: TF (and torch) give None for it.
# The conv bias reaches it only through LeakyReLU's gradient, whose own gradient with
# respect to its input TF defines as zeros (torch too): a zeros tensor, not None.
analytic = outer.gradient(gp_value, tiny_critic.trainable_variables,
                          unconnected_gradients="zero")
# (GAP 3, fixed: ember gave None for the conv bias too, as LeakyReLU's gradient did not
# connect back to its input; TF's LeakyReluGrad has gradient zeros_like(x), and so now
# has ember's leaky_relu_grad.)
with tape_lib.GradientTape() as outer_default:
    gp_default = tiny_gp()
assert [g is None for g in outer_default.gradient(
    gp_default, tiny_critic.trainable_variables)] == [False, False, False, True]
eps = 1e-6
worst = 0.0
for v, g in zip(tiny_critic.trainable_variables, analytic):
    base = v.numpy().copy()
    fd = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        for sign in (1, -1):
            w = base.copy()
            w[idx] += sign * eps
            v.assign(w)
            fd[idx] += sign * float(tiny_gp()) / (2 * eps)
    v.assign(base)
    worst = max(worst, float(np.max(np.abs(fd - g.numpy()))))
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-5, atol=1e-7, err_msg=v.name)
print("gradient-penalty gradient vs finite differences: max |diff|", worst)
assert float(gp_value) > 0.0

# the first-order gradient the penalty is built from: d critic / d input, also by differences
x0 = tiny_real.numpy()
em.random.set_seed(7)
with tape_lib.GradientTape() as g_in:
    xt = em.constant(x0)
    g_in.watch(xt)
    out = em.reduce_sum(tiny_critic(xt, training=False))
dx = g_in.gradient(out, xt).numpy()
fd_x = np.zeros_like(x0)
for idx in np.ndindex(x0.shape):
    for sign in (1, -1):
        xp = x0.copy()
        xp[idx] += sign * eps
        fd_x[idx] += sign * float(em.reduce_sum(tiny_critic(em.constant(xp), training=False))) / (2 * eps)
np.testing.assert_allclose(dx, fd_x, rtol=1e-5, atol=1e-7)

"""
## Train (upstream's wgan.fit)
"""

# Set the number of epochs for training.
epochs = 20 if FULL else 1 if SHORT else 2

# Instantiate the customer `GANMonitor` Keras callback.
cbk = GANMonitor(num_img=3, latent_dim=noise_dim)


class BatchLosses(keras.callbacks.Callback):
    """Added: every batch's logs."""

    def __init__(self):
        super().__init__()
        self.logs = []

    def on_train_batch_end(self, batch, logs=None):
        self.logs.append({k: float(v) for k, v in logs.items()})


batch_losses = BatchLosses()

# Get the wgan model
wgan = WGAN(
    discriminator=d_model,
    generator=g_model,
    latent_dim=noise_dim,
    discriminator_extra_steps=3,
)

# Compile the wgan model
wgan.compile(
    d_optimizer=discriminator_optimizer,
    g_optimizer=generator_optimizer,
    g_loss_fn=generator_loss,
    d_loss_fn=discriminator_loss,
)
# super().compile() with no arguments builds Keras 3's default optimizer, "rmsprop"
assert isinstance(wgan.optimizer, keras.optimizers.RMSprop), type(wgan.optimizer)

d_before = [v.numpy().copy() for v in d_model.trainable_variables]
g_before = [v.numpy().copy() for v in g_model.trainable_variables]

# Start training
history = wgan.fit(train_images, batch_size=BATCH_SIZE, epochs=epochs,
                   callbacks=[cbk, batch_losses])

"""
## Added: checks
"""

steps = math.ceil(len(train_images) / BATCH_SIZE)
assert len(batch_losses.logs) == steps * epochs, len(batch_losses.logs)
d_losses = [lg["d_loss"] for lg in batch_losses.logs]
g_losses = [lg["g_loss"] for lg in batch_losses.logs]
print("d_loss per batch:", np.round(d_losses, 3).tolist())
print("g_loss per batch:", np.round(g_losses, 3).tolist())
assert all(math.isfinite(v) for v in d_losses + g_losses)
assert set(history.history) == {"d_loss", "g_loss"}, history.history.keys()
assert len(history.history["d_loss"]) == epochs
# Keras 3 logs what train_step returned for the epoch's last batch
np.testing.assert_allclose(history.history["d_loss"][-1], d_losses[-1], rtol=1e-6)
np.testing.assert_allclose(history.history["g_loss"][-1], g_losses[-1], rtol=1e-6)
# both networks were updated
# (all but the critic's last bias: fake_loss - real_loss cancels it, and the penalty does not
# reach it, so its gradient is exactly 0 and Adam leaves it alone, in Keras as here)
d_after = [v.numpy() for v in d_model.trainable_variables]
assert all(not np.array_equal(a, b) for a, b in zip(d_before[:-1], d_after[:-1]))
assert d_model.trainable_variables[-1].shape == (1,) and np.array_equal(d_before[-1], d_after[-1])
assert all(not np.array_equal(a, v.numpy()) for a, v in zip(g_before, g_model.trainable_variables))
assert len(set(np.round(g_losses, 6))) > 1  # the losses move
# The untrained critic's input gradients are small, so its penalty is near 1 and the first
# d_loss near gp_weight; training drives the gradient norm towards 1 and the cost below 0.
assert 3.0 < d_losses[0] < 12.0, d_losses[0]
assert SHORT or max(d_losses[-3:]) < 0.5 * d_losses[0], d_losses

for epoch in range(epochs):
    for i in range(3):
        path = os.path.join(workdir.name, f"generated_img_{i}_{epoch}.png")
        img = keras.utils.load_img(path, color_mode="grayscale")
        assert img.size == (28, 28) and img.mode == "L", (img.size, img.mode)
generated = g_model(em.random.normal([4, noise_dim]), training=False).numpy()
assert generated.shape == (4, 28, 28, 1) and np.all(np.abs(generated) <= 1.0)
print("WGAN-GP: OK")

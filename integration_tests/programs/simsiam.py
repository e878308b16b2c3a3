"""Port of keras-team/keras-io examples/vision/simsiam.py ("Self-supervised contrastive
learning with SimSiam": two views of each image from a tf.image augmentation pipeline (flip,
crop, colour jitter, colour drop) in two shuffled tf.data pipelines zipped together; a
ResNet20 (v2, bottleneck) encoder with a projection head and a predictor; a Model subclass
whose train_step minimises the symmetrised negative cosine similarity with stop_gradient;
SGD with CosineDecay and EarlyStopping; then a linear classifier on the frozen backbone).

Upstream: https://github.com/keras-team/keras-io/blob/ad4fc805f5e1a4a4c0bcdd416aa9feac6608fb6c/examples/vision/simsiam.py
and the ResNet it downloads (wget https://git.io/JYx2x -O resnet_cifar10_v2.py):
https://github.com/GoogleCloudPlatform/keras-idiomatic-programmer/blob/2e825472510799fefb22165c9fe439dca0fe8a5a/zoo/resnet/resnet_cifar10_v2.py
Changed: names only (tf.keras.layers/regularizers/Model/Sequential/metrics/optimizers/
callbacks -> nn.*, tf.GradientTape -> tape.GradientTape (its `tape` variable is `t`, not to
hide the module), tf.image/stop_gradient/math.l2_normalize/reduce_*/clip_by_value/tile/
random.uniform -> em.*, tf.data -> ember.data, tf.data.AUTOTUNE -> data.AUTOTUNE). The
plotting (matplotlib) is dropped; what the figures would show is asserted. Nothing can be
downloaded here: resnet_cifar10_v2.py's stem, learner and block functions are written out
below (names changed) as a namespace of that name; its module-level lines, which build an
unused ResNet164 on import, are dropped; tf.keras.datasets.cifar10.load_data() is a local
cifar10.load_data() over the real MNIST files in CIFAR-10's layout: uint8 images
(N, 32, 32, 3), the 28x28 digits padded by 2 pixels on each side in three identical
channels, uint8 labels (N, 1); "train" is the first N MNIST training images, "test" the
first of MNIST's test split. (On gray images saturation, hue and colour drop change
nothing; they run all the same, and are checked on colour images below.)
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream where MNIST allows: 50,000 training and
10,000 test images, batch 128, 5 epochs): 384 training and 256 test images, batch 32,
2 epochs (24 steps); EMBER_PROGRAMS_SHORT=1: 64 and 64 images, 1 epoch, no thresholds.
Seeds for numpy and ember (the parallel map's random draws still vary a little from run
to run, as TensorFlow's do).
Added: the datasets' layout; the augmentations against numpy (adjust_brightness and
adjust_contrast on uint8 images with TensorFlow's convert_image_dtype scaling,
rgb_to_grayscale, adjust_saturation and adjust_hue against colorsys, color_drop's
three equal channels, a 32x32 random_crop of a 32x32 image is the image); custom_augment
gives uint8 (32, 32, 3); the two separately built pipelines hold the same images in the
same order, augmented differently (each view correlates best with its own partner among
the batch, flipped or not), and so does every pair that training sees; the output shapes
of the encoder, the predictor and the backbone; Rescaling against numpy; the three kernel
regularizers' losses (which upstream's train_step leaves out) against numpy;
compute_loss against numpy and stop_gradient leaving z no gradient; an untrained model's
loss is near 0; the BatchNormalization layers, called without `training` in train_step,
run in inference mode as Keras's (fit leaves the moving statistics at 0 and 1); fit logs
only "loss", one step per batch, and the CosineDecay rate; two train_on_batch steps of a
classifier compiled as linear_model against numpy (loss as Keras 3 reports it, a Mean
across calls; weights after SGD with momentum 0.9 at CosineDecay's rates); the frozen
backbone is unchanged by the linear model's fit; evaluate's accuracy agrees with
predict's, in numpy, and the probabilities sum to 1.
Threshold (CPU run): the SimSiam loss of the last epoch is below -0.45 (its minimum is -1;
an untrained predictor's output is unrelated to the other view's projection: a cosine near
0, asserted; the last epoch reaches -0.60 to -0.66 with seeds 0-3). The linear classifier
has none: upstream's SGD(0.03, momentum 0.9) diverges on these features (|f| ~ 5 and
nearly the same for every digit, the BatchNormalization layers being identities), its loss
in the hundreds and accuracy at chance, ~10%; PyTorch's SGD on the same features does the
same (checked outside this program). Upstream's own CIFAR-10 run reads 23%.
Fixed in ember since the first version of this port:
1. em.image.random_saturation was missing (AttributeError); adjust_saturation by a factor drawn
with em.random.uniform stood in. Upstream's line runs now.
2. em.image.random_hue was missing, as were adjust_hue and an HSV conversion (AttributeError);
a hue rotation written with em ops stood in. Upstream's line runs now (adjust_hue is checked).
3. (silent) data.Dataset.zip((a, b)) of two datasets, each shuffled with the same seed, took b
in another order than a, so none of a batch's pairs was one image; one shuffle mapped to two
augmentations stood in. Two shuffles made alike now follow one order, as TensorFlow's:
upstream's zip runs, and its pairs are checked to be the same images.
4. (silent) nn.optimizers.SGD(momentum=...) updated as PyTorch does (m = momentum * m + g;
var -= lr * m), not as Keras (m = momentum * m - lr * g; var += m), which differs under
CosineDecay; a subclass with Keras's update stood in. Upstream's SGD runs now, and the numpy
check of two steps is on nn.optimizers.SGD itself.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import colorsys
import os
import pathlib
import types
import unittest

import numpy as np

import ember.core as em
from ember import data, nn, tape
from ember.nn import layers, regularizers
from ember.nn.layers import Add, BatchNormalization, Conv2D, ReLU

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)

"""
## Define hyperparameters
"""

AUTO = data.AUTOTUNE
BATCH_SIZE = 128 if FULL else 32
EPOCHS = 5 if FULL else 1 if SHORT else 2
CROP_TO = 32
SEED = 26

PROJECT_DIM = 2048
LATENT_DIM = 512
WEIGHT_DECAY = 0.0005

"""
## Load the CIFAR-10 dataset
"""

N_TRAIN = 50000 if FULL else 64 if SHORT else 384  # CIFAR-10's: 50,000 and 10,000
N_TEST = 10000 if FULL else 64 if SHORT else 256


class cifar10:  # stands in for tf.keras.datasets.cifar10: MNIST in CIFAR-10's layout
    @staticmethod
    def _split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        x = (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8)
        x = np.repeat(np.pad(x, [(0, 0), (2, 2), (2, 2)])[..., None], 3, axis=-1)
        return x, np.asarray(y).astype(np.uint8).reshape(-1, 1)

    @staticmethod
    def load_data():
        return cifar10._split("train", N_TRAIN), cifar10._split("test", N_TEST)


(x_train, y_train), (x_test, y_test) = cifar10.load_data()
print(f"Total training examples: {len(x_train)}")
print(f"Total test examples: {len(x_test)}")
assert x_train.shape == (N_TRAIN, 32, 32, 3) and x_train.dtype == np.uint8  # added
assert y_train.shape == (N_TRAIN, 1) and y_test.shape == (N_TEST, 1) and y_test.dtype == np.uint8

"""
## Defining our data augmentation pipeline
"""


def flip_random_crop(image):
    # With random crops we also apply horizontal flipping.
    image = em.image.random_flip_left_right(image)
    image = em.image.random_crop(image, (CROP_TO, CROP_TO, 3))
    return image


def color_jitter(x, strength=[0.4, 0.4, 0.4, 0.1]):  # noqa: B006 (upstream's default)
    x = em.image.random_brightness(x, max_delta=0.8 * strength[0])
    x = em.image.random_contrast(
        x, lower=1 - 0.8 * strength[1], upper=1 + 0.8 * strength[1]
    )
    x = em.image.random_saturation(
        x, lower=1 - 0.8 * strength[2], upper=1 + 0.8 * strength[2]
    )
    x = em.image.random_hue(x, max_delta=0.2 * strength[3])
    # Affine transformations can disturb the natural range of
    # RGB images, hence this is needed.
    x = em.clip_by_value(x, 0, 255)
    return x


def color_drop(x):
    x = em.image.rgb_to_grayscale(x)
    x = em.tile(x, [1, 1, 3])
    return x


def random_apply(func, x, p):
    if em.random.uniform([], minval=0, maxval=1) < p:
        return func(x)
    else:
        return x


def custom_augment(image):
    # As discussed in the SimCLR paper, the series of augmentation
    # transformations (except for random crops) need to be applied
    # randomly to impose translational invariance.
    image = flip_random_crop(image)
    image = random_apply(color_jitter, image, p=0.8)
    image = random_apply(color_drop, image, p=0.2)
    return image


# added: the colour functions against numpy, on uint8 images as upstream's (TensorFlow's
# convert_image_dtype: x / 255 in float32, back by * 255.5, clipped, truncated)
colours = np.random.randint(0, 256, (4, 5, 6, 3)).astype(np.uint8)
as_float = colours.astype(np.float32) / np.float32(255)
for delta in (0.25, -0.3):
    np.testing.assert_array_equal(
        em.image.adjust_brightness(colours, delta).numpy(),
        np.clip((as_float + np.float32(delta)) * np.float32(255.5), 0, 255).astype(np.uint8))
mean = as_float.mean(axis=(1, 2), keepdims=True)
expected = np.clip(((as_float - mean) * np.float32(1.3) + mean) * np.float32(255.5), 0, 255)
got = em.image.adjust_contrast(colours, 1.3).numpy()
assert got.dtype == np.uint8 and np.abs(got.astype(int) - expected.astype(np.uint8)).max() <= 1
gray = em.image.rgb_to_grayscale(colours).numpy()
expected = (as_float @ np.array([0.2989, 0.5870, 0.1140], np.float32)) * np.float32(255.5)
assert gray.shape == (4, 5, 6, 1) and gray.dtype == np.uint8
assert np.abs(gray[..., 0].astype(int) - expected.astype(np.uint8)).max() <= 1
dropped = color_drop(colours[0]).numpy()
assert dropped.shape == (5, 6, 3) and (dropped == dropped[..., :1]).all()
saturated = em.image.adjust_saturation(as_float, 0.5).numpy()
for pixel, out in zip(as_float.reshape(-1, 3), saturated.reshape(-1, 3)):
    h, s, v = colorsys.rgb_to_hsv(*pixel)
    np.testing.assert_allclose(out, colorsys.hsv_to_rgb(h, s * 0.5, v), atol=1e-5)
hued = em.image.adjust_hue(as_float, 0.3).numpy()  # random_hue's, against colorsys too
for pixel, out in zip(as_float.reshape(-1, 3), hued.reshape(-1, 3)):
    h, s, v = colorsys.rgb_to_hsv(*pixel)
    np.testing.assert_allclose(out, colorsys.hsv_to_rgb((h + 0.3) % 1, s, v), atol=1e-5)
np.testing.assert_array_equal(em.image.random_crop(x_train[0], (32, 32, 3)).numpy(), x_train[0])
augmented = custom_augment(x_train[0])
assert augmented.shape == (32, 32, 3) and augmented.dtype == np.uint8, augmented

"""
## Convert the data into TensorFlow `Dataset` objects
"""

ssl_ds_one = data.Dataset.from_tensor_slices(x_train)
ssl_ds_one = (
    ssl_ds_one.shuffle(1024, seed=SEED)
    .map(custom_augment, num_parallel_calls=AUTO)
    .batch(BATCH_SIZE)
    .prefetch(AUTO)
)

ssl_ds_two = data.Dataset.from_tensor_slices(x_train)
ssl_ds_two = (
    ssl_ds_two.shuffle(1024, seed=SEED)
    .map(custom_augment, num_parallel_calls=AUTO)
    .batch(BATCH_SIZE)
    .prefetch(AUTO)
)

# We then zip both of these datasets.
ssl_ds = data.Dataset.zip((ssl_ds_one, ssl_ds_two))


def _same_images(one, two):  # added: view n of `one` is the image of view n of `two`
    a = np.asarray(one, np.float64).mean(axis=-1).reshape(len(one), -1)
    b = np.asarray(two, np.float64).mean(axis=-1)
    b = np.stack([b, b[:, :, ::-1]], axis=1).reshape(len(two), 2, -1)  # flipped or not

    def z(v):
        v = v - v.mean(axis=-1, keepdims=True)
        return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-9)

    corr = np.einsum("ip,jfp->ijf", z(a), z(b)).max(axis=-1)
    return (corr.argmax(axis=1) == np.arange(len(a))).mean(), np.diag(corr).min()


# Visualize a few augmented images.
sample_images_one = next(iter(ssl_ds_one))
# the plotting (plt.figure, subplot, imshow, axis, show) of 25 of them is dropped
assert sample_images_one.shape == (BATCH_SIZE, 32, 32, 3), sample_images_one.shape  # added
assert sample_images_one.dtype == np.uint8

# Ensure that the different versions of the dataset actually contain
# identical images.
sample_images_two = next(iter(ssl_ds_two))
# added: what the two figures show, the same images in the same order, augmented differently
matched, worst = _same_images(sample_images_one, sample_images_two)
assert matched >= 0.9 and worst > 0.5, (matched, worst)
assert not np.array_equal(sample_images_one, sample_images_two)
one, two = next(iter(ssl_ds))  # added: and so are the pairs that training sees
assert one.shape == two.shape == (BATCH_SIZE, 32, 32, 3), (one.shape, two.shape)
matched, worst = _same_images(one, two)
assert matched >= 0.9 and worst > 0.5, (matched, worst)

"""
## Defining the encoder and the predictor
"""


# stands in for upstream's download of resnet_cifar10_v2.py: its functions, names changed
def stem(inputs):
    ''' Construct Stem Convolutional Group
        inputs : the input vector
    '''
    x = Conv2D(16, kernel_size=(3, 3), strides=(1, 1), padding='same', kernel_initializer='he_normal')(inputs)
    x = BatchNormalization()(x)
    x = ReLU()(x)
    return x


def learner(x, n_blocks):
    """ Construct the Learner
        x          : input to the learner
        n_blocks   : number of blocks in a group
    """
    # First Residual Block Group of 16 filters (Stage 1)
    # Quadruple (4X) the size of filters to fit the next Residual Group
    x = residual_group(x, 16, n_blocks, strides=(1, 1), n=4)

    # Second Residual Block Group of 64 filters (Stage 2)
    # Double (2X) the size of filters and reduce feature maps by 75% (strides=2) to fit the next Residual Group  # noqa: E501
    x = residual_group(x, 64, n_blocks, n=2)

    # Third Residual Block Group of 64 filters (Stage 3)
    # Double (2X) the size of filters and reduce feature maps by 75% (strides=2) to fit the next Residual Group  # noqa: E501
    x = residual_group(x, 128, n_blocks, n=2)
    return x


def residual_group(x, n_filters, n_blocks, strides=(2, 2), n=2):
    """ Construct a Residual Group
        x         : input into the group
        n_filters : number of filters for the group
        n_blocks  : number of residual blocks with identity link
        strides   : whether the projection block is a strided convolution
        n         : multiplier for the number of filters out
    """
    # Double the size of filters to fit the first Residual Group
    x = projection_block(x, n_filters, strides=strides, n=n)

    # Identity residual blocks
    for _ in range(n_blocks):
        x = identity_block(x, n_filters, n)
    return x


def identity_block(x, n_filters, n=2):
    """ Construct a Bottleneck Residual Block of Convolutions
        x        : input into the block
        n_filters: number of filters
        n        : multiplier for filters out
    """
    # Save input vector (feature maps) for the identity link
    shortcut = x

    ## Construct the 1x1, 3x3, 1x1 residual block (fig 3c)

    # Dimensionality reduction
    x = BatchNormalization()(x)
    x = ReLU()(x)
    x = Conv2D(n_filters, (1, 1), strides=(1, 1), kernel_initializer='he_normal')(x)

    # Bottleneck layer
    x = BatchNormalization()(x)
    x = ReLU()(x)
    x = Conv2D(n_filters, (3, 3), strides=(1, 1), padding="same", kernel_initializer='he_normal')(x)

    # Dimensionality restoration - increase the number of output filters by 2X or 4X
    x = BatchNormalization()(x)
    x = ReLU()(x)
    x = Conv2D(n_filters * n, (1, 1), strides=(1, 1), kernel_initializer='he_normal')(x)

    # Add the identity link (input) to the output of the residual block
    x = Add()([x, shortcut])
    return x


def projection_block(x, n_filters, strides=(2,2), n=2):
    """ Construct a Bottleneck Residual Block with Projection Shortcut
        Increase the number of filters by 2X (or 4X on first stage)
        x        : input into the block
        n_filters: number of filters
        strides  : whether the first convolution is strided
        n        : multiplier for number of filters out
    """
    # Construct the projection shortcut
    # Increase filters by 2X (or 4X) to match shape when added to output of block
    shortcut = Conv2D(n_filters * n, (1, 1), strides=strides, kernel_initializer='he_normal')(x)

    ## Construct the 1x1, 3x3, 1x1 convolution block

    # Dimensionality reduction
    x = BatchNormalization()(x)
    x = ReLU()(x)
    x = Conv2D(n_filters, (1, 1), strides=(1,1), kernel_initializer='he_normal')(x)

    # Bottleneck layer - feature pooling when strides=(2, 2)
    x = BatchNormalization()(x)
    x = ReLU()(x)
    x = Conv2D(n_filters, (3, 3), strides=strides, padding='same', kernel_initializer='he_normal')(x)

    # Dimensionality restoration - increase the number of filters by 2X (or 4X)
    x = BatchNormalization()(x)
    x = ReLU()(x)
    x = Conv2D(n_filters * n, (1, 1), strides=(1, 1), kernel_initializer='he_normal')(x)

    # Add the projection shortcut to the output of the residual block
    x = Add()([shortcut, x])
    return x


resnet_cifar10_v2 = types.SimpleNamespace(stem=stem, learner=learner)  # the module's name

N = 2
DEPTH = N * 9 + 2
NUM_BLOCKS = ((DEPTH - 2) // 9) - 1


def get_encoder():
    # Input and backbone.
    inputs = layers.Input((CROP_TO, CROP_TO, 3))
    x = layers.Rescaling(scale=1.0 / 127.5, offset=-1)(inputs)
    x = resnet_cifar10_v2.stem(x)
    x = resnet_cifar10_v2.learner(x, NUM_BLOCKS)
    x = layers.GlobalAveragePooling2D(name="backbone_pool")(x)

    # Projection head.
    x = layers.Dense(
        PROJECT_DIM, use_bias=False, kernel_regularizer=regularizers.l2(WEIGHT_DECAY)
    )(x)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    x = layers.Dense(
        PROJECT_DIM, use_bias=False, kernel_regularizer=regularizers.l2(WEIGHT_DECAY)
    )(x)
    outputs = layers.BatchNormalization()(x)
    return nn.Model(inputs, outputs, name="encoder")


def get_predictor():
    model = nn.Sequential(
        [
            # Note the AutoEncoder-like structure.
            layers.Input((PROJECT_DIM,)),
            layers.Dense(
                LATENT_DIM,
                use_bias=False,
                kernel_regularizer=regularizers.l2(WEIGHT_DECAY),
            ),
            layers.ReLU(),
            layers.BatchNormalization(),
            layers.Dense(PROJECT_DIM),
        ],
        name="predictor",
    )
    return model


"""
## Defining the (pre-)training loop
"""


def compute_loss(p, z):
    # The authors of SimSiam emphasize the impact of
    # the `stop_gradient` operator in the paper as it
    # has an important role in the overall optimization.
    z = em.stop_gradient(z)
    p = em.l2_normalize(p, axis=1)
    z = em.l2_normalize(z, axis=1)
    # Negative cosine similarity (minimizing this is
    # equivalent to maximizing the similarity).
    return -em.reduce_mean(em.reduce_sum((p * z), axis=1))


# added: compute_loss against numpy, and no gradient reaches z through stop_gradient
p_np, z_np = np.random.normal(size=(2, 6, 8)).astype("float32")
p_t, z_t = em.constant(p_np), em.constant(z_np)
with tape.GradientTape(persistent=True) as t:
    t.watch([p_t, z_t])
    value = compute_loss(p_t, z_t)
cosines = (p_np * z_np).sum(1) / np.linalg.norm(p_np, axis=1) / np.linalg.norm(z_np, axis=1)
np.testing.assert_allclose(float(value), -cosines.mean(), rtol=1e-5)
assert t.gradient(value, z_t) is None and t.gradient(value, p_t).shape == (6, 8)


class SimSiam(nn.Model):
    def __init__(self, encoder, predictor):
        super(SimSiam, self).__init__()  # noqa: UP008 (upstream spelling)
        self.encoder = encoder
        self.predictor = predictor
        self.loss_tracker = nn.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def train_step(self, data):
        # Unpack the data.
        ds_one, ds_two = data

        # Forward pass through the encoder and predictor.
        with tape.GradientTape() as t:
            z1, z2 = self.encoder(ds_one), self.encoder(ds_two)
            p1, p2 = self.predictor(z1), self.predictor(z2)
            # Note that here we are enforcing the network to match
            # the representations of two differently augmented batches
            # of data.
            loss = compute_loss(p1, z2) / 2 + compute_loss(p2, z1) / 2

        # Compute gradients and update the parameters.
        learnable_params = (
            self.encoder.trainable_variables + self.predictor.trainable_variables
        )
        gradients = t.gradient(loss, learnable_params)
        self.optimizer.apply_gradients(zip(gradients, learnable_params))

        # Monitor loss.
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


"""
## Pre-training our networks
"""

# Create a cosine decay learning scheduler.
num_training_samples = len(x_train)
steps = EPOCHS * (num_training_samples // BATCH_SIZE)
lr_decayed_fn = nn.optimizers.schedules.CosineDecay(
    initial_learning_rate=0.03, decay_steps=steps
)

# Create an early stopping callback.
early_stopping = nn.callbacks.EarlyStopping(
    monitor="loss", patience=5, restore_best_weights=True
)

# Compile model and start training.
simsiam = SimSiam(get_encoder(), get_predictor())
simsiam.compile(optimizer=nn.optimizers.SGD(lr_decayed_fn, momentum=0.6))
# added: the shapes, and the BatchNormalization layers' moving statistics before fit
assert simsiam.encoder.output_shape == (None, PROJECT_DIM), simsiam.encoder.output_shape
assert simsiam.encoder.get_layer("backbone_pool").output.shape == (None, 256)
assert simsiam.predictor.output_shape == (None, PROJECT_DIM), simsiam.predictor.output_shape
batch_norms = [layer for model in (simsiam.encoder, simsiam.predictor) for layer in model.layers
               if isinstance(layer, BatchNormalization)]
assert len(batch_norms) == 1 + 3 * 6 + 2 + 1, len(batch_norms)
# added: Rescaling maps the uint8 pixels to [-1, 1]; the three kernel regularizers' losses
# (which upstream's train_step leaves out of its loss) are 0.0005 * sum(kernel ** 2)
rescaled = nn.Model(simsiam.encoder.input, simsiam.encoder.layers[1].output)(x_train[:2])
np.testing.assert_allclose(rescaled.numpy(), x_train[:2] / np.float32(127.5) - 1, atol=1e-6)
kernels = [layer.kernel.numpy() for model in (simsiam.encoder, simsiam.predictor)
           for layer in model.layers if isinstance(layer, layers.Dense)]
np.testing.assert_allclose(
    sorted(float(v) for v in simsiam.encoder.losses + simsiam.predictor.losses),
    sorted(WEIGHT_DECAY * (k.astype(np.float64) ** 2).sum() for k in kernels[:3]), rtol=1e-5)
# added: untrained, a view's prediction is unrelated to the other view's projection
z1, z2 = simsiam.encoder(one), simsiam.encoder(two)
untrained = float(compute_loss(simsiam.predictor(z1), z2) / 2
                  + compute_loss(simsiam.predictor(z2), z1) / 2)
print("untrained loss", untrained)
assert abs(untrained) < 0.3, untrained
history = simsiam.fit(ssl_ds, epochs=EPOCHS, callbacks=[early_stopping])

# the plot of history.history["loss"] ("Negative Cosine Similairty") is dropped
print(history.history)
losses = history.history["loss"]  # added, for the checks
assert set(history.history) == {"loss"}, history.history
assert len(losses) == EPOCHS and all(-1 <= v <= 1 for v in losses), losses
assert SHORT or losses[-1] < -0.45, losses  # untrained: ~0; the minimum -1
# added: called without `training` in train_step, BatchNormalization runs in inference
# mode, as Keras's (its default, training=None): fit leaves the moving statistics alone
for bn in batch_norms:
    assert (bn.moving_mean.numpy() == 0).all() and (bn.moving_variance.numpy() == 1).all(), bn
# added: one step per batch, and the rate is CosineDecay's at the last step
batches = EPOCHS * -(-num_training_samples // BATCH_SIZE)
assert int(simsiam.optimizer.iterations) == batches, int(simsiam.optimizer.iterations)
np.testing.assert_allclose(
    float(lr_decayed_fn(batches)), 0.03 * 0.5 * (1 + np.cos(np.pi * min(batches, steps) / steps)),
    atol=1e-7)

"""
## Evaluating our SSL method
"""

# We first create labeled `Dataset` objects.
train_ds = data.Dataset.from_tensor_slices((x_train, y_train))
test_ds = data.Dataset.from_tensor_slices((x_test, y_test))

# Then we shuffle, batch, and prefetch this dataset for performance. We
# also apply random resized crops as an augmentation but only to the
# training set.
train_ds = (
    train_ds.shuffle(1024)
    .map(lambda x, y: (flip_random_crop(x), y), num_parallel_calls=AUTO)
    .batch(BATCH_SIZE)
    .prefetch(AUTO)
)
test_ds = test_ds.batch(BATCH_SIZE).prefetch(AUTO)

# Extract the backbone ResNet20.
backbone = nn.Model(
    simsiam.encoder.input, simsiam.encoder.get_layer("backbone_pool").output
)

# We then create our linear classifier and train it.
backbone.trainable = False
inputs = layers.Input((CROP_TO, CROP_TO, 3))
x = backbone(inputs, training=False)
outputs = layers.Dense(10, activation="softmax")(x)
linear_model = nn.Model(inputs, outputs, name="linear_model")

# Compile model and start training.
linear_model.compile(
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
    optimizer=nn.optimizers.SGD(lr_decayed_fn, momentum=0.9),
)
backbone_before = [w.copy() for w in backbone.get_weights()]  # added
# added: two steps of a classifier compiled as linear_model, against numpy (the features
# of the frozen backbone, softmax cross-entropy, SGD with momentum 0.9 at CosineDecay's rates)
features = backbone.predict(x_test[:BATCH_SIZE], verbose=0).astype(np.float64)
probe_in = layers.Input((CROP_TO, CROP_TO, 3))
probe = nn.Model(probe_in, layers.Dense(10, activation="softmax")(backbone(probe_in,
                                                                           training=False)))
probe.compile(loss="sparse_categorical_crossentropy", metrics=["accuracy"],
              optimizer=nn.optimizers.SGD(lr_decayed_fn, momentum=0.9))
kernel, bias = (w.astype(np.float64) for w in probe.layers[-1].get_weights())
velocity, expected_losses = [np.zeros_like(kernel), np.zeros_like(bias)], []
for step in range(2):
    logits = features @ kernel + bias
    log_p = logits - logits.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    expected_losses.append(-log_p[np.arange(BATCH_SIZE), y_test[:BATCH_SIZE, 0]].mean())
    dlogits = (np.exp(log_p) - np.eye(10)[y_test[:BATCH_SIZE, 0]]) / BATCH_SIZE
    rate = 0.03 * 0.5 * (1 + np.cos(np.pi * step / steps))
    for v, grad in zip(velocity, (features.T @ dlogits, dlogits.sum(0))):
        v *= 0.9
        v -= rate * grad
    kernel, bias = kernel + velocity[0], bias + velocity[1]
    got_loss = probe.train_on_batch(x_test[:BATCH_SIZE], y_test[:BATCH_SIZE])[0]
    # the loss before the step's update; each call resets the metrics (Keras 3.15's)
    np.testing.assert_allclose(got_loss, expected_losses[-1], rtol=1e-4)
got_kernel, got_bias = probe.layers[-1].get_weights()
np.testing.assert_allclose(got_kernel, kernel, rtol=1e-3, atol=1e-4 * np.abs(kernel).max())
np.testing.assert_allclose(got_bias, bias, rtol=1e-3, atol=1e-4 * np.abs(bias).max())
history = linear_model.fit(
    train_ds, validation_data=test_ds, epochs=EPOCHS, callbacks=[early_stopping]
)
_, test_acc = linear_model.evaluate(test_ds)
print("Test accuracy: {:.2f}%".format(test_acc * 100))  # noqa: UP032

# added: the frozen backbone (moving statistics included) did not change; the classifier
# did; evaluate's accuracy is predict's, in numpy; training reached the threshold
assert all(np.array_equal(a, b) for a, b in zip(backbone_before, backbone.get_weights()))
assert len(linear_model.trainable_weights) == 2, linear_model.trainable_weights
probabilities = linear_model.predict(test_ds)
assert probabilities.shape == (N_TEST, 10), probabilities.shape
np.testing.assert_allclose(probabilities.sum(axis=1), 1, rtol=1e-5)
np.testing.assert_allclose(test_acc, np.mean(probabilities.argmax(1) == y_test[:, 0]), atol=1e-6)
assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}, history.history

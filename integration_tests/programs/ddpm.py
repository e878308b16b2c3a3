"""Port of keras-team/keras-io examples/generative/ddpm.py ("Denoising Diffusion Probabilistic
Model", the tf.keras 2 version, last modified 2022/12/07): Oxford Flowers 102 through
tfds.load, centre-cropped, resized with antialias, rescaled to [-1, 1] and randomly flipped
in a Dataset.map, batched (drop_remainder), shuffled and prefetched; a GaussianDiffusion
utility (a linear beta schedule in float64 numpy, its float32 tensors, q_sample,
q_posterior, p_sample with tf.gather'ed coefficients); a functional U-Net taking an image
and an int64 timestep (sinusoidal TimeEmbedding layer, a swish TimeMLP, residual blocks of
GroupNormalization / swish / Conv2D with the time embedding added through a sliced
[:, None, None, :] Dense output, AttentionBlock layers (einsum self-attention) at the two
coarsest levels, strided-Conv2D downsampling, UpSampling2D + Conv2D upsampling,
VarianceScaling(fan_avg, uniform) kernels, zero-scale ones on each block's last
convolution); a keras.Model subclass whose train_step diffuses a batch at random
timesteps, regresses the noise with the compiled MeanSquaredError, applies Adam and updates
an EMA copy of the network (0.999); fit with a LambdaCallback that samples 16 images by the
full reverse chain (one predict() per timestep) after each epoch; then weights loaded into
the EMA network and 32 samples drawn.

Upstream: https://github.com/keras-team/keras-io/blob/1152d883930e8ab91a8c16366d5a21c67d771e82/examples/generative/ddpm.py
Changed: names only (tensorflow.keras / tensorflow.keras.layers -> ember.nn / ember.nn.layers,
keras.initializers.VarianceScaling, keras.activations.swish, keras.Input / Model,
keras.losses.MeanSquaredError, keras.optimizers.Adam, keras.callbacks.LambdaCallback ->
nn.*; tf.constant / shape / minimum / cast / clip_by_value / gather / reshape / exp /
range / concat / sin / cos / einsum / equal / fill / float32 / int64 and tf.random.normal /
uniform -> em.*, tf.nn.softmax -> em.nn_ops.softmax, tf.image.random_flip_left_right /
crop_to_bounding_box / resize -> em.image.*, tf.data.AUTOTUNE -> data.AUTOTUNE,
tf.GradientTape -> ember.tape.GradientTape, imported as tape_lib since upstream names the
tape `tape`), except the GAPs below. oxford_flowers102 cannot be downloaded here (no
network): a local tfds.load with upstream's arguments returns, in tfds's layout, a list of
one Dataset of dicts with a uint8 (h, w, 3) "image" of a varied size (each side 5/4 to 5/2
of img_size, as the photographs are larger than 64x64) and an int64 "label" (102 classes;
tfds's "file_name" string is left out: ember has no string tensors), in a shuffled order
(shuffle_files), of GENERATED pictures: a flower of 5 to 8 petals in a random colour, shaded
towards the rim, round a yellow-brown disc, off-centre by up to a tenth, on a leafy green
background, with pixel noise. The matplotlib figure of plot_images is dropped (it keeps
the uint8 array it would plot, checked below). The download of the 800-epoch checkpoint
(curl + unzip) is replaced by save_weights of this run's trained network (not its EMA copy,
which a short run leaves near its initial values) into checkpoints/, in a temporary working
directory; upstream's load_weights line then loads them. fit's History is kept and a second
LambdaCallback records each batch's logs.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream: 1,020 pictures, 64x64 images, 64 first
channels, 1,000 timesteps, Adam 2e-4, 1 epoch): 512 pictures, 16x16 images, 8 first
channels (widths 8-64; upstream's multipliers, attention levels, 2 residual blocks and 8
groups), 50 timesteps with the betas scaled by 1000 / 50 (linspace(0.002, 0.4): Nichol and
Dhariwal's scaling, so that the chain still ends in noise, alpha_bar_T < 1e-3; upstream's
own 1e-4..0.02 over 50 steps would end at alpha_bar 0.6), Adam 5e-3 and 4 epochs (64
steps at upstream's batch 32; at upstream's 2e-4 the evaluation loss below only gets from
0.99 to 0.85 in 64 steps). EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 32 pictures, batch 16, a U-Net of two
levels (widths 8, 16, attention on the second) with one residual block each, 25
timesteps, 1 epoch, no threshold on what training reached (the GPU double runs the
full-depth network at ~0.6 s a forward pass, and sampling takes one a timestep).
CPU run: ~25 s of one core.
Added: seeds for numpy and ember; the elements' layout (uint8 (h, w, 3) images, int64
labels); one epoch of train_ds: full batches of float32 images in [-1, 1], each equal to a
numpy preprocessing of one picture (centred square crop with floored offsets, TF's
antialiased bilinear resize (scale_and_translate's triangle kernel widened by the
shrink factor, normalised weights), / 127.5 - 1, clipped), or to its mirror image, every
picture once, both orientations seen; the schedule's twelve float32 tensors against numpy
(the DDPM paper's formulas, the products written out); q_sample, q_mean_variance and
predict_start_from_noise (inverting q_sample) against numpy, and p_sample under a reset
seed against numpy's posterior mean plus its standard deviation times the same draw (no
noise at t = 0, where it returns the clipped x_0 estimate); the U-Net's parameter count
against the architecture's formula (996,371 at the reduced size), its input and output
shapes, the EMA copy equal to it after set_weights, the widest Conv2D's kernel within
VarianceScaling's +-sqrt(3 / fan_avg) with its variance, the zero-scale last Conv2D (so the
untrained network predicts ~0, on both copies alike); TimeEmbedding against numpy's
sinusoids; an AttentionBlock (random projection weights) against numpy
(GroupNormalization with epsilon 1e-3, softmax over all positions, the projection added to
the normalised input, as upstream rebinds `inputs`); Add broadcasting a (b, 1, 1, c) time
embedding; fit's History (one loss per epoch, 0.0 as in Keras 3: see below; each batch's
log its step's loss), the callback's samples (16 uint8 images per epoch); one train_step
by hand: under a reset seed its loss equals numpy's MSE of
the same noise and the network's prediction before the step, and afterwards every EMA
weight is 0.999 of itself plus 0.001 of the updated weight; the loaded weights (different
from the EMA copy before) equal the network's; the 32 final samples are uint8 and a
generate_images() batch lies in [-1, 1] (its last step returns the clipped x_0 estimate).
What training reached (CPU run): on a fixed evaluation set (64 pictures not trained on,
timesteps spread over the chain, fixed noise) the noise-prediction MSE falls below 0.75 of
that of predicting the noise as x_t itself (0.221; the untrained network, predicting ~0,
scores 0.993, and 0.75 x 0.221 is under a quarter of that): 4 seeds gave 0.129-0.138
after 4 epochs (3 epochs: 0.161-0.172, not reliably there); and the 32 samples drawn with
the trained weights are smoother than the first epoch's EMA samples (mean |difference| of
horizontal neighbours below 0.6 x theirs: noise-like EMA samples 0.44, trained 0.15-0.17
over 4 seeds, the pictures themselves 0.046).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
1. (loud) fit(train_ds, ..., batch_size=32) raises ValueError ("batch_size=32 applies to
arrays; the data given is an iterable of batches ... batch it there"), where tf.keras 2
(and Keras 3) ignore batch_size for a tf.data.Dataset; stand-in: the same fit without it
(training_with_built_in_methods.py's GAP 11 is the PyDataset case).
3. (loud, as Keras 3; tf.keras 2 reads and writes TensorFlow checkpoints at any prefix)
load_weights("checkpoints/diffusion_model_checkpoint") raises ValueError (the filename
must end in `.weights.h5` or `.safetensors`); the same as super_resolution.py's GAP 4;
stand-in: the path with `.weights.h5`.
Fixed in ember since the first version of this port: there was no Model.loss (GAP 2,
loud): after compile(loss=keras.losses.MeanSquaredError()), upstream's
`self.loss(noise, pred_noise)` raised AttributeError ('DiffusionModel' object has no
attribute 'loss'; the stand-in was self.compiled_loss). Model.loss is now compile's loss, as
Keras 3's (tf.keras 2.11: `loss or {}`), and upstream's line runs. Ember's fit now also
logs an epoch as the metrics' results when the step's keys equal the metrics' names, as
Keras 3's _get_metrics_result_or_logs: here model.metrics is compile's "loss" tracker,
which self.loss does not update, so History's loss is 0.0 each epoch, as in Keras 3
(silent against tf.keras 2.11, whose metrics stay empty until compiled_loss runs and which
logs the epoch's last batch loss); that is what is checked, beside each batch's loss.
Also seen: Dataset elements are numpy arrays (documented), where TF yields EagerTensors:
upstream's lines do not notice.
"""

import math
import os
import tempfile
import types

import numpy as np

import ember.core as em
from ember import data, nn
from ember import tape as tape_lib
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
THRESHOLDS = not (FULL or SHORT)  # what training reached is checked on the reduced run
np.random.seed(0)
em.random.set_seed(0)
os.chdir(tempfile.mkdtemp())  # added: upstream's checkpoints/ folder goes here
NUM_FLOWERS = 1020 if FULL else 32 if SHORT else 512  # oxford_flowers102's train split: 1,020

"""
## Hyperparameters
"""

batch_size = 16 if SHORT else 32  # (SHORT: predict's batch, one set of shapes to tune)
num_epochs = 1 if FULL or SHORT else 4  # Just for the sake of demonstration
total_timesteps = 1000 if FULL else 25 if SHORT else 50
norm_groups = 8  # Number of groups used in GroupNormalization layer
learning_rate = 2e-4 if FULL else 5e-3

img_size = 64 if FULL else 16
img_channels = 3
clip_min = -1.0
clip_max = 1.0

first_conv_channels = 64 if FULL else 8
channel_multiplier = [1, 2] if SHORT else [1, 2, 4, 8]
widths = [first_conv_channels * mult for mult in channel_multiplier]
has_attention = [False, True] if SHORT else [False, False, True, True]
num_res_blocks = 1 if SHORT else 2  # Number of residual blocks

dataset_name = "oxford_flowers102"
splits = ["train"]

# ---------------------------------------------------------------------------------------
# Added: the stand-in for tfds.load("oxford_flowers102", ...) (see the header).


def flower(i):
    """Picture i: a flower of 5 to 8 petals and a disc on a leafy background, uint8
    (h, w, 3) of a random size larger than img_size, as the photographs are."""
    rng = np.random.default_rng([11, i])
    h, w = (int(s) for s in rng.integers(img_size * 5 // 4, img_size * 5 // 2 + 1, 2))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    side = min(h, w)
    cy, cx = h / 2 + rng.uniform(-0.1, 0.1) * side, w / 2 + rng.uniform(-0.1, 0.1) * side
    radius = rng.uniform(0.25, 0.45) * side
    petals = int(rng.integers(5, 9))
    dist = np.hypot(yy - cy, xx - cx) / radius
    angle = np.arctan2(yy - cy, xx - cx) + rng.uniform(0, 2 * np.pi)
    edge = 0.55 + 0.45 * np.abs(np.cos(petals * angle / 2))
    leaf = rng.uniform([10, 60, 10], [60, 140, 50])
    background = leaf * (0.7 + 0.3 * (yy / h))[..., None]
    petal = rng.uniform([120, 0, 60], [255, 200, 255]) * (1.1 - 0.4 * dist)[..., None]
    disc = rng.uniform([150, 90, 0], [240, 190, 40])
    img = np.where((dist < edge)[..., None], petal, background)
    img = np.where((dist < 0.25)[..., None], disc, img)
    img = img + rng.normal(0, 4, img.shape)
    return np.clip(img, 0, 255).round().astype(np.uint8)


def _tfds_load(name, split, with_info, shuffle_files):
    assert name == "oxford_flowers102" and not with_info and shuffle_files
    signature = {"image": data.TensorSpec(shape=(None, None, 3), dtype=em.uint8),
                 "label": data.TensorSpec(shape=(), dtype=em.int64)}

    def examples():
        for i in np.random.default_rng(12).permutation(NUM_FLOWERS):  # shuffle_files
            yield {"image": flower(int(i)), "label": np.int64(i % 102)}

    return [data.Dataset.from_generator(examples, output_signature=signature) for _ in split]


tfds = types.SimpleNamespace(load=_tfds_load)

"""
## Dataset
"""


# Load the dataset
(ds,) = tfds.load(dataset_name, split=splits, with_info=False, shuffle_files=True)

# Added: the elements as tfds gives them: uint8 (h, w, 3) images larger than img_size
first = next(iter(ds))
assert sorted(first) == ["image", "label"], sorted(first)
assert first["image"].dtype == np.uint8 and first["image"].ndim == 3, first["image"].dtype
assert first["image"].shape[2] == 3 and min(first["image"].shape[:2]) > img_size
assert first["label"].dtype == np.int64 and first["label"].shape == ()


def augment(img):
    """Flips an image left/right randomly."""
    return em.image.random_flip_left_right(img)


def resize_and_rescale(img, size):
    """Resize the image to the desired size first and then
    rescale the pixel values in the range [-1.0, 1.0].

    Args:
        img: Image tensor
        size: Desired image size for resizing
    Returns:
        Resized and rescaled image tensor
    """

    height = em.shape(img)[0]
    width = em.shape(img)[1]
    crop_size = em.minimum(height, width)

    img = em.image.crop_to_bounding_box(
        img,
        (height - crop_size) // 2,
        (width - crop_size) // 2,
        crop_size,
        crop_size,
    )

    # Resize
    img = em.cast(img, dtype=em.float32)
    img = em.image.resize(img, size=size, antialias=True)

    # Rescale the pixel values
    img = img / 127.5 - 1.0
    img = em.clip_by_value(img, clip_min, clip_max)
    return img


def train_preprocessing(x):
    img = x["image"]
    img = resize_and_rescale(img, size=(img_size, img_size))
    img = augment(img)
    return img


train_ds = (
    ds.map(train_preprocessing, num_parallel_calls=data.AUTOTUNE)
    .batch(batch_size, drop_remainder=True)
    .shuffle(batch_size * 2)
    .prefetch(data.AUTOTUNE)
)


def np_resize_antialias(image, height, width):
    """Added: TF's resize(antialias=True) for bilinear (scale_and_translate_op.cc): output
    pixel i samples at (i + 0.5) * in / out with a triangle kernel widened by in / out
    when shrinking, weights over the image's pixels normalized to 1; float64."""
    def matrix(n_out, n_in):
        scale = n_in / n_out
        centres = (np.arange(n_out)[:, None] + 0.5) * scale
        w = np.maximum(0.0, 1 - np.abs(np.arange(n_in)[None, :] + 0.5 - centres) / max(scale, 1))
        return w / w.sum(axis=1, keepdims=True)
    image = np.asarray(image, np.float64)
    return np.einsum("ij,jkc,lk->ilc", matrix(height, image.shape[0]), image,
                     matrix(width, image.shape[1]))


def np_preprocess(image):
    """Added: upstream's resize_and_rescale in numpy: the centred square crop (offsets
    rounded down), the resize, then x / 127.5 - 1 clipped to [-1, 1]."""
    h, w = image.shape[:2]
    c = min(h, w)
    crop = image[(h - c) // 2:(h - c) // 2 + c, (w - c) // 2:(w - c) // 2 + c]
    return np.clip(np_resize_antialias(crop, img_size, img_size) / 127.5 - 1.0, -1, 1)


# Added: one epoch of train_ds: NUM_FLOWERS // batch_size full batches of float32 images in
# [-1, 1]; each image is one flower as numpy preprocesses it, or its mirror image, and every
# flower comes once; both orientations occur
references = np.stack([np_preprocess(flower(i)) for i in range(NUM_FLOWERS)])
flat_refs = references.reshape(NUM_FLOWERS, -1)
flat_mirrors = references[:, :, ::-1].reshape(NUM_FLOWERS, -1)
seen, mirrored = [], 0
for batch in train_ds:
    assert batch.shape == (batch_size, img_size, img_size, 3), batch.shape
    assert batch.dtype == np.float32 and batch.min() >= -1 and batch.max() <= 1
    flat = np.asarray(batch, np.float64).reshape(batch_size, -1)
    for row in flat:
        straight = np.abs(flat_refs - row).max(axis=1)
        mirror = np.abs(flat_mirrors - row).max(axis=1)
        i = int(np.argmin(np.minimum(straight, mirror)))
        assert min(straight[i], mirror[i]) < 1e-4, (straight[i], mirror[i])
        seen.append(i)
        mirrored += bool(mirror[i] < straight[i])
assert len(set(seen)) == len(seen) == NUM_FLOWERS // batch_size * batch_size, len(seen)
assert 0 < mirrored < len(seen), (mirrored, len(seen))
print(f"one epoch: {len(seen)} images, {mirrored} of them mirrored")


"""
## Gaussian diffusion utilities
"""


class GaussianDiffusion:
    """Gaussian diffusion utility.

    Args:
        beta_start: Start value of the scheduled variance
        beta_end: End value of the scheduled variance
        timesteps: Number of time steps in the forward process
    """

    def __init__(
        self,
        beta_start=1e-4,
        beta_end=0.02,
        timesteps=1000,
        clip_min=-1.0,
        clip_max=1.0,
    ):
        self.beta_start = beta_start
        self.beta_end = beta_end
        self.timesteps = timesteps
        self.clip_min = clip_min
        self.clip_max = clip_max

        # Define the linear variance schedule
        self.betas = betas = np.linspace(
            beta_start,
            beta_end,
            timesteps,
            dtype=np.float64,  # Using float64 for better precision
        )
        self.num_timesteps = int(timesteps)

        alphas = 1.0 - betas
        alphas_cumprod = np.cumprod(alphas, axis=0)
        alphas_cumprod_prev = np.append(1.0, alphas_cumprod[:-1])

        self.betas = em.constant(betas, dtype=em.float32)
        self.alphas_cumprod = em.constant(alphas_cumprod, dtype=em.float32)
        self.alphas_cumprod_prev = em.constant(alphas_cumprod_prev, dtype=em.float32)

        # Calculations for diffusion q(x_t | x_{t-1}) and others
        self.sqrt_alphas_cumprod = em.constant(
            np.sqrt(alphas_cumprod), dtype=em.float32
        )

        self.sqrt_one_minus_alphas_cumprod = em.constant(
            np.sqrt(1.0 - alphas_cumprod), dtype=em.float32
        )

        self.log_one_minus_alphas_cumprod = em.constant(
            np.log(1.0 - alphas_cumprod), dtype=em.float32
        )

        self.sqrt_recip_alphas_cumprod = em.constant(
            np.sqrt(1.0 / alphas_cumprod), dtype=em.float32
        )
        self.sqrt_recipm1_alphas_cumprod = em.constant(
            np.sqrt(1.0 / alphas_cumprod - 1), dtype=em.float32
        )

        # Calculations for posterior q(x_{t-1} | x_t, x_0)
        posterior_variance = (
            betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)
        )
        self.posterior_variance = em.constant(posterior_variance, dtype=em.float32)

        # Log calculation clipped because the posterior variance is 0 at the beginning
        # of the diffusion chain
        self.posterior_log_variance_clipped = em.constant(
            np.log(np.maximum(posterior_variance, 1e-20)), dtype=em.float32
        )

        self.posterior_mean_coef1 = em.constant(
            betas * np.sqrt(alphas_cumprod_prev) / (1.0 - alphas_cumprod),
            dtype=em.float32,
        )

        self.posterior_mean_coef2 = em.constant(
            (1.0 - alphas_cumprod_prev) * np.sqrt(alphas) / (1.0 - alphas_cumprod),
            dtype=em.float32,
        )

    def _extract(self, a, t, x_shape):
        """Extract some coefficients at specified timesteps,
        then reshape to [batch_size, 1, 1, 1, 1, ...] for broadcasting purposes.

        Args:
            a: Tensor to extract from
            t: Timestep for which the coefficients are to be extracted
            x_shape: Shape of the current batched samples
        """
        batch_size = x_shape[0]
        out = em.gather(a, t)
        return em.reshape(out, [batch_size, 1, 1, 1])

    def q_mean_variance(self, x_start, t):
        """Extracts the mean, and the variance at current timestep.

        Args:
            x_start: Initial sample (before the first diffusion step)
            t: Current timestep
        """
        x_start_shape = em.shape(x_start)
        mean = self._extract(self.sqrt_alphas_cumprod, t, x_start_shape) * x_start
        variance = self._extract(1.0 - self.alphas_cumprod, t, x_start_shape)
        log_variance = self._extract(
            self.log_one_minus_alphas_cumprod, t, x_start_shape
        )
        return mean, variance, log_variance

    def q_sample(self, x_start, t, noise):
        """Diffuse the data.

        Args:
            x_start: Initial sample (before the first diffusion step)
            t: Current timestep
            noise: Gaussian noise to be added at the current timestep
        Returns:
            Diffused samples at timestep `t`
        """
        x_start_shape = em.shape(x_start)
        return (
            self._extract(self.sqrt_alphas_cumprod, t, em.shape(x_start)) * x_start
            + self._extract(self.sqrt_one_minus_alphas_cumprod, t, x_start_shape)
            * noise
        )

    def predict_start_from_noise(self, x_t, t, noise):
        x_t_shape = em.shape(x_t)
        return (
            self._extract(self.sqrt_recip_alphas_cumprod, t, x_t_shape) * x_t
            - self._extract(self.sqrt_recipm1_alphas_cumprod, t, x_t_shape) * noise
        )

    def q_posterior(self, x_start, x_t, t):
        """Compute the mean and variance of the diffusion
        posterior q(x_{t-1} | x_t, x_0).

        Args:
            x_start: Stating point(sample) for the posterior computation
            x_t: Sample at timestep `t`
            t: Current timestep
        Returns:
            Posterior mean and variance at current timestep
        """

        x_t_shape = em.shape(x_t)
        posterior_mean = (
            self._extract(self.posterior_mean_coef1, t, x_t_shape) * x_start
            + self._extract(self.posterior_mean_coef2, t, x_t_shape) * x_t
        )
        posterior_variance = self._extract(self.posterior_variance, t, x_t_shape)
        posterior_log_variance_clipped = self._extract(
            self.posterior_log_variance_clipped, t, x_t_shape
        )
        return posterior_mean, posterior_variance, posterior_log_variance_clipped

    def p_mean_variance(self, pred_noise, x, t, clip_denoised=True):
        x_recon = self.predict_start_from_noise(x, t=t, noise=pred_noise)
        if clip_denoised:
            x_recon = em.clip_by_value(x_recon, self.clip_min, self.clip_max)

        model_mean, posterior_variance, posterior_log_variance = self.q_posterior(
            x_start=x_recon, x_t=x, t=t
        )
        return model_mean, posterior_variance, posterior_log_variance

    def p_sample(self, pred_noise, x, t, clip_denoised=True):
        """Sample from the diffusion model.

        Args:
            pred_noise: Noise predicted by the diffusion model
            x: Samples at a given timestep for which the noise was predicted
            t: Current timestep
            clip_denoised (bool): Whether to clip the predicted noise
                within the specified range or not.
        """
        model_mean, _, model_log_variance = self.p_mean_variance(
            pred_noise, x=x, t=t, clip_denoised=clip_denoised
        )
        noise = em.random.normal(shape=x.shape, dtype=x.dtype)
        # No noise when t == 0
        nonzero_mask = em.reshape(
            1 - em.cast(em.equal(t, 0), em.float32), [em.shape(x)[0], 1, 1, 1]
        )
        return model_mean + nonzero_mask * em.exp(0.5 * model_log_variance) * noise


"""
## Network architecture
"""


# Kernel initializer to use
def kernel_init(scale):
    scale = max(scale, 1e-10)
    return keras.initializers.VarianceScaling(
        scale, mode="fan_avg", distribution="uniform"
    )


class AttentionBlock(layers.Layer):
    """Applies self-attention.

    Args:
        units: Number of units in the dense layers
        groups: Number of groups to be used for GroupNormalization layer
    """

    def __init__(self, units, groups=8, **kwargs):
        self.units = units
        self.groups = groups
        super().__init__(**kwargs)

        self.norm = layers.GroupNormalization(groups=groups)
        self.query = layers.Dense(units, kernel_initializer=kernel_init(1.0))
        self.key = layers.Dense(units, kernel_initializer=kernel_init(1.0))
        self.value = layers.Dense(units, kernel_initializer=kernel_init(1.0))
        self.proj = layers.Dense(units, kernel_initializer=kernel_init(0.0))

    def call(self, inputs):
        batch_size = em.shape(inputs)[0]
        height = em.shape(inputs)[1]
        width = em.shape(inputs)[2]
        scale = em.cast(self.units, em.float32) ** (-0.5)

        inputs = self.norm(inputs)
        q = self.query(inputs)
        k = self.key(inputs)
        v = self.value(inputs)

        attn_score = em.einsum("bhwc, bHWc->bhwHW", q, k) * scale
        attn_score = em.reshape(attn_score, [batch_size, height, width, height * width])

        attn_score = em.nn_ops.softmax(attn_score, -1)
        attn_score = em.reshape(attn_score, [batch_size, height, width, height, width])

        proj = em.einsum("bhwHW,bHWc->bhwc", attn_score, v)
        proj = self.proj(proj)
        return inputs + proj


class TimeEmbedding(layers.Layer):
    def __init__(self, dim, **kwargs):
        super().__init__(**kwargs)
        self.dim = dim
        self.half_dim = dim // 2
        self.emb = math.log(10000) / (self.half_dim - 1)
        self.emb = em.exp(em.range(self.half_dim, dtype=em.float32) * -self.emb)

    def call(self, inputs):
        inputs = em.cast(inputs, dtype=em.float32)
        emb = inputs[:, None] * self.emb[None, :]
        emb = em.concat([em.sin(emb), em.cos(emb)], axis=-1)
        return emb


def ResidualBlock(width, groups=8, activation_fn=keras.activations.swish):
    def apply(inputs):
        x, t = inputs
        input_width = x.shape[3]

        if input_width == width:
            residual = x
        else:
            residual = layers.Conv2D(
                width, kernel_size=1, kernel_initializer=kernel_init(1.0)
            )(x)

        temb = activation_fn(t)
        temb = layers.Dense(width, kernel_initializer=kernel_init(1.0))(temb)[
            :, None, None, :
        ]

        x = layers.GroupNormalization(groups=groups)(x)
        x = activation_fn(x)
        x = layers.Conv2D(
            width, kernel_size=3, padding="same", kernel_initializer=kernel_init(1.0)
        )(x)

        x = layers.Add()([x, temb])
        x = layers.GroupNormalization(groups=groups)(x)
        x = activation_fn(x)

        x = layers.Conv2D(
            width, kernel_size=3, padding="same", kernel_initializer=kernel_init(0.0)
        )(x)
        x = layers.Add()([x, residual])
        return x

    return apply


def DownSample(width):
    def apply(x):
        x = layers.Conv2D(
            width,
            kernel_size=3,
            strides=2,
            padding="same",
            kernel_initializer=kernel_init(1.0),
        )(x)
        return x

    return apply


def UpSample(width, interpolation="nearest"):
    def apply(x):
        x = layers.UpSampling2D(size=2, interpolation=interpolation)(x)
        x = layers.Conv2D(
            width, kernel_size=3, padding="same", kernel_initializer=kernel_init(1.0)
        )(x)
        return x

    return apply


def TimeMLP(units, activation_fn=keras.activations.swish):
    def apply(inputs):
        temb = layers.Dense(
            units, activation=activation_fn, kernel_initializer=kernel_init(1.0)
        )(inputs)
        temb = layers.Dense(units, kernel_initializer=kernel_init(1.0))(temb)
        return temb

    return apply


def build_model(
    img_size,
    img_channels,
    widths,
    has_attention,
    num_res_blocks=2,
    norm_groups=8,
    interpolation="nearest",
    activation_fn=keras.activations.swish,
):
    image_input = layers.Input(
        shape=(img_size, img_size, img_channels), name="image_input"
    )
    time_input = keras.Input(shape=(), dtype=em.int64, name="time_input")

    x = layers.Conv2D(
        first_conv_channels,
        kernel_size=(3, 3),
        padding="same",
        kernel_initializer=kernel_init(1.0),
    )(image_input)

    temb = TimeEmbedding(dim=first_conv_channels * 4)(time_input)
    temb = TimeMLP(units=first_conv_channels * 4, activation_fn=activation_fn)(temb)

    skips = [x]

    # DownBlock
    for i in range(len(widths)):
        for _ in range(num_res_blocks):
            x = ResidualBlock(
                widths[i], groups=norm_groups, activation_fn=activation_fn
            )([x, temb])
            if has_attention[i]:
                x = AttentionBlock(widths[i], groups=norm_groups)(x)
            skips.append(x)

        if widths[i] != widths[-1]:
            x = DownSample(widths[i])(x)
            skips.append(x)

    # MiddleBlock
    x = ResidualBlock(widths[-1], groups=norm_groups, activation_fn=activation_fn)(
        [x, temb]
    )
    x = AttentionBlock(widths[-1], groups=norm_groups)(x)
    x = ResidualBlock(widths[-1], groups=norm_groups, activation_fn=activation_fn)(
        [x, temb]
    )

    # UpBlock
    for i in reversed(range(len(widths))):
        for _ in range(num_res_blocks + 1):
            x = layers.Concatenate(axis=-1)([x, skips.pop()])
            x = ResidualBlock(
                widths[i], groups=norm_groups, activation_fn=activation_fn
            )([x, temb])
            if has_attention[i]:
                x = AttentionBlock(widths[i], groups=norm_groups)(x)

        if i != 0:
            x = UpSample(widths[i], interpolation=interpolation)(x)

    # End block
    x = layers.GroupNormalization(groups=norm_groups)(x)
    x = activation_fn(x)
    x = layers.Conv2D(3, (3, 3), padding="same", kernel_initializer=kernel_init(0.0))(x)
    return keras.Model([image_input, time_input], x, name="unet")


"""
## Training
"""


class DiffusionModel(keras.Model):
    def __init__(self, network, ema_network, timesteps, gdf_util, ema=0.999):
        super().__init__()
        self.network = network
        self.ema_network = ema_network
        self.timesteps = timesteps
        self.gdf_util = gdf_util
        self.ema = ema

    def train_step(self, images):
        # 1. Get the batch size
        batch_size = em.shape(images)[0]

        # 2. Sample timesteps uniformly
        t = em.random.uniform(
            minval=0, maxval=self.timesteps, shape=(batch_size,), dtype=em.int64
        )

        with tape_lib.GradientTape() as tape:
            # 3. Sample random noise to be added to the images in the batch
            noise = em.random.normal(shape=em.shape(images), dtype=images.dtype)

            # 4. Diffuse the images with noise
            images_t = self.gdf_util.q_sample(images, t, noise)

            # 5. Pass the diffused images and time steps to the network
            pred_noise = self.network([images_t, t], training=True)

            # 6. Calculate the loss
            loss = self.loss(noise, pred_noise)

        # 7. Get the gradients
        gradients = tape.gradient(loss, self.network.trainable_weights)

        # 8. Update the weights of the network
        self.optimizer.apply_gradients(zip(gradients, self.network.trainable_weights))

        # 9. Updates the weight values for the network with EMA weights
        for weight, ema_weight in zip(self.network.weights, self.ema_network.weights):
            ema_weight.assign(self.ema * ema_weight + (1 - self.ema) * weight)

        # 10. Return loss values
        return {"loss": loss}

    def generate_images(self, num_images=16):
        # 1. Randomly sample noise (starting point for reverse process)
        samples = em.random.normal(
            shape=(num_images, img_size, img_size, img_channels), dtype=em.float32
        )
        # 2. Sample from the model iteratively
        for t in reversed(range(0, self.timesteps)):
            tt = em.cast(em.fill(num_images, t), dtype=em.int64)
            pred_noise = self.ema_network.predict(
                [samples, tt], verbose=0, batch_size=num_images
            )
            samples = self.gdf_util.p_sample(
                pred_noise, samples, tt, clip_denoised=True
            )
        # 3. Return generated samples
        return samples

    def plot_images(
        self, epoch=None, logs=None, num_rows=2, num_cols=8, figsize=(12, 5)
    ):
        """Utility to plot images using the diffusion model during training."""
        generated_samples = self.generate_images(num_images=num_rows * num_cols)
        generated_samples = (
            em.clip_by_value(generated_samples * 127.5 + 127.5, 0.0, 255.0)
            .numpy()
            .astype(np.uint8)
        )
        plotted.append(generated_samples)  # added: the matplotlib figure is dropped


plotted = []  # added: what plot_images would show
batch_logs = []  # added: each training batch's logs

# Build the unet model
network = build_model(
    img_size=img_size,
    img_channels=img_channels,
    widths=widths,
    has_attention=has_attention,
    num_res_blocks=num_res_blocks,
    norm_groups=norm_groups,
    activation_fn=keras.activations.swish,
)
ema_network = build_model(
    img_size=img_size,
    img_channels=img_channels,
    widths=widths,
    has_attention=has_attention,
    num_res_blocks=num_res_blocks,
    norm_groups=norm_groups,
    activation_fn=keras.activations.swish,
)
ema_network.set_weights(network.get_weights())  # Initially the weights are the same

# Get an instance of the Gaussian Diffusion utilities
# (reduced: with fewer timesteps, betas scaled by 1000 / total_timesteps, as Nichol and
# Dhariwal's linear schedule does, so that the chain still ends in noise; FULL: upstream's)
gdf_util = GaussianDiffusion(
    beta_start=1e-4 * 1000 / total_timesteps,
    beta_end=0.02 * 1000 / total_timesteps,
    timesteps=total_timesteps,
)

# Added: the schedule's tensors against numpy's products and the DDPM paper's formulas
# (float32 of float64 values), a chain that ends in noise, and the forward and reverse
# steps against numpy
np_betas = np.array([1e-4 + (0.02 - 1e-4) * k / (total_timesteps - 1)
                     for k in range(total_timesteps)]) * 1000 / total_timesteps
np_abar = np.array([np.prod(1 - np_betas[:k + 1]) for k in range(total_timesteps)])
np_abar_prev = np.concatenate([[1.0], np_abar[:-1]])
np_post_var = np_betas * (1 - np_abar_prev) / (1 - np_abar)
for got, want in [
        (gdf_util.betas, np_betas), (gdf_util.alphas_cumprod, np_abar),
        (gdf_util.alphas_cumprod_prev, np_abar_prev),
        (gdf_util.sqrt_alphas_cumprod, np.sqrt(np_abar)),
        (gdf_util.sqrt_one_minus_alphas_cumprod, np.sqrt(1 - np_abar)),
        (gdf_util.log_one_minus_alphas_cumprod, np.log(1 - np_abar)),
        (gdf_util.sqrt_recip_alphas_cumprod, 1 / np.sqrt(np_abar)),
        (gdf_util.sqrt_recipm1_alphas_cumprod, np.sqrt((1 - np_abar) / np_abar)),
        (gdf_util.posterior_variance, np_post_var),
        (gdf_util.posterior_log_variance_clipped, np.log(np.maximum(np_post_var, 1e-20))),
        (gdf_util.posterior_mean_coef1, np_betas * np.sqrt(np_abar_prev) / (1 - np_abar)),
        (gdf_util.posterior_mean_coef2, (1 - np_abar_prev) * np.sqrt(1 - np_betas) / (1 - np_abar))]:
    assert got.dtype == em.float32 and got.shape == (total_timesteps,), (got.dtype, got.shape)
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-6, atol=1e-30)
assert np_abar[-1] < 1e-3 and np_post_var[0] == 0, (np_abar[-1], np_post_var[0])

x0 = references[:4].astype(np.float32)
t4 = np.array([0, 1, total_timesteps // 2, total_timesteps - 1], np.int64)
eps = np.random.default_rng(3).standard_normal(x0.shape).astype(np.float32)
col = (slice(None), None, None, None)
xt = gdf_util.q_sample(x0, em.constant(t4), eps)
assert xt.shape == x0.shape and xt.dtype == em.float32, (xt.shape, xt.dtype)
np_xt = np.sqrt(np_abar[t4])[col] * x0 + np.sqrt(1 - np_abar[t4])[col] * eps
np.testing.assert_allclose(xt.numpy(), np_xt, rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(gdf_util.predict_start_from_noise(xt, em.constant(t4), eps).numpy(),
                           x0, atol=2e-3)  # it inverts q_sample (x0 / sqrt(abar) amplifies)
mean, var, log_var = gdf_util.q_mean_variance(x0, em.constant(t4))
np.testing.assert_allclose(mean.numpy(), np.sqrt(np_abar[t4])[col] * x0, rtol=1e-5, atol=1e-7)
np.testing.assert_allclose(var.numpy()[:, 0, 0, 0], 1 - np_abar[t4], rtol=1e-5, atol=1e-7)
pred = np.random.default_rng(4).standard_normal(x0.shape).astype(np.float32)
em.random.set_seed(100)
stepped = gdf_util.p_sample(pred, xt, em.constant(t4), clip_denoised=True)
em.random.set_seed(100)
z = em.random.normal(shape=xt.shape, dtype=xt.dtype).numpy()  # p_sample's one draw
np_recon = np.clip((np_xt - np.sqrt(1 - np_abar[t4])[col] * pred) / np.sqrt(np_abar[t4])[col],
                   -1, 1)
np_mean = ((np_betas * np.sqrt(np_abar_prev) / (1 - np_abar))[t4][col] * np_recon
           + ((1 - np_abar_prev) * np.sqrt(1 - np_betas) / (1 - np_abar))[t4][col] * np_xt)
np_std = np.where(t4 == 0, 0, np.exp(0.5 * np.log(np.maximum(np_post_var, 1e-20)))[t4])
np.testing.assert_allclose(stepped.numpy(), np_mean + np_std[col] * z, rtol=1e-4, atol=1e-4)
np.testing.assert_array_equal(stepped.numpy()[0], np.clip(
    gdf_util.predict_start_from_noise(xt, em.constant(t4), pred).numpy()[0], -1, 1))
em.random.set_seed(0)

# Get the model
model = DiffusionModel(
    network=network,
    ema_network=ema_network,
    gdf_util=gdf_util,
    timesteps=total_timesteps,
)

# Compile the model
model.compile(
    loss=keras.losses.MeanSquaredError(),
    optimizer=keras.optimizers.Adam(learning_rate=learning_rate),
)


# Added: the U-Net. Its parameter count is the architecture's (each ResidualBlock: a 1x1
# Conv2D when the width changes, the time Dense, two GroupNormalizations (gamma, beta) and
# two 3x3 Conv2Ds; each AttentionBlock: a GroupNormalization and four Dense)


def unet_params(c0):
    tdim = 4 * c0

    def res(c_in, w):
        return ((c_in * w + w) * (c_in != w) + tdim * w + w + 2 * c_in + 9 * c_in * w + w
                + 2 * w + 9 * w * w + w)

    def attn(w):
        return 2 * w + 4 * (w * w + w)

    total, ch, skip_widths = 27 * c0 + c0 + 2 * (tdim * tdim + tdim), c0, [c0]
    for i, w in enumerate(widths):
        for _ in range(num_res_blocks):
            total, ch = total + res(ch, w) + attn(w) * has_attention[i], w
            skip_widths.append(w)
        if w != widths[-1]:
            total += 9 * w * w + w
            skip_widths.append(w)
    total += 2 * res(ch, ch) + attn(ch)
    for i in reversed(range(len(widths))):
        for _ in range(num_res_blocks + 1):
            total += res(ch + skip_widths.pop(), widths[i]) + attn(widths[i]) * has_attention[i]
            ch = widths[i]
        if i != 0:
            total += 9 * ch * ch + ch
    return total + 2 * ch + 9 * ch * 3 + 3


assert network.count_params() == unet_params(first_conv_channels), (
    network.count_params(), unet_params(first_conv_channels))
assert network.input_shape == [(None, img_size, img_size, 3), (None,)], network.input_shape
assert network.output_shape == (None, img_size, img_size, 3), network.output_shape
print(f"unet: {network.count_params():,} parameters, {len(network.layers)} layers")
for w, ew in zip(network.weights, ema_network.weights):
    assert w.shape == ew.shape and np.array_equal(w.numpy(), ew.numpy()), (w.name, ew.name)
# kernel_init(1.0): VarianceScaling uniform in +-sqrt(3 / fan_avg), the widest Conv2D;
# kernel_init(0.0) (scale 1e-10): the last Conv2D, so the untrained network predicts ~0
convs = [la for la in network.layers if isinstance(la, layers.Conv2D)]
widest = max(convs, key=lambda la: la.kernel.shape[2] * la.kernel.shape[3])
kh, kw, c_in, c_out = widest.kernel.shape
limit = math.sqrt(3.0 / ((kh * kw * c_in + kh * kw * c_out) / 2))
kernel = widest.kernel.numpy()
assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.9 * limit, limit
assert abs(kernel.var() / (limit ** 2 / 3) - 1) < 0.1, (kernel.var(), limit ** 2 / 3)
assert np.abs(convs[-1].kernel.numpy()).max() < 1e-4 and not convs[-1].bias.numpy().any()

# Added: TimeEmbedding, the sinusoids of the DDPM paper, against numpy
embedder = [la for la in network.layers if isinstance(la, TimeEmbedding)]
assert len(embedder) == 1
half = first_conv_channels * 2
freqs = np.exp(np.arange(half) * -(math.log(10000) / (half - 1)))
np.testing.assert_allclose(embedder[0](em.constant(t4)).numpy(),
                           np.concatenate([np.sin(t4[:, None] * freqs),
                                           np.cos(t4[:, None] * freqs)], axis=1), atol=2e-5)

# Added: an AttentionBlock (its projection given random weights, as the zero-scale
# initializer leaves it ~0) against numpy: GroupNormalization (epsilon 1e-3, 8 groups),
# softmax over all positions of the scaled dot products, the projection added to the
# *normalized* input (upstream rebinds `inputs`)
block = AttentionBlock(16, groups=8)
probe = np.random.default_rng(6).standard_normal((2, 3, 5, 16)).astype(np.float32)
block(probe)
block.proj.kernel.assign(np.random.default_rng(7).standard_normal((16, 16)).astype(np.float32))
got = block(probe).numpy()
g = probe.reshape(2, 3, 5, 8, 2).astype(np.float64)
normed = ((g - g.mean(axis=(1, 2, 4), keepdims=True))
          / np.sqrt(g.var(axis=(1, 2, 4), keepdims=True) + 1e-3)).reshape(probe.shape)
q, k, v = (normed @ d.kernel.numpy() + d.bias.numpy() for d in (block.query, block.key, block.value))
scores = np.einsum("bhwc,bHWc->bhwHW", q, k).reshape(2, 3, 5, 15) / math.sqrt(16)
weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
weights = (weights / weights.sum(axis=-1, keepdims=True)).reshape(2, 3, 5, 3, 5)
expected = normed + np.einsum("bhwHW,bHWc->bhwc", weights, v) @ block.proj.kernel.numpy()
np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)

# Added: layers.Add broadcasts the time embedding, (b, 1, 1, c), over the feature map
fmap = np.random.default_rng(9).standard_normal((2, 3, 3, 4)).astype(np.float32)
tvec = np.random.default_rng(10).standard_normal((2, 1, 1, 4)).astype(np.float32)
np.testing.assert_array_equal(layers.Add()([fmap, tvec]).numpy(), fmap + tvec)

# Added: a fixed evaluation set, 64 flowers not trained on, at timesteps spread over the
# chain, with fixed noise; its denoising loss untrained (the network predicts ~0: ~1.0)
EVAL_N = 16 if SHORT else 64
eval_x0 = np.stack([np_preprocess(flower(NUM_FLOWERS + i)) for i in range(EVAL_N)]).astype(np.float32)
eval_t = (np.arange(EVAL_N) * total_timesteps // EVAL_N).astype(np.int64)
eval_noise = np.random.default_rng(8).standard_normal(eval_x0.shape).astype(np.float32)
eval_xt = (np.sqrt(np_abar[eval_t])[col] * eval_x0
           + np.sqrt(1 - np_abar[eval_t])[col] * eval_noise).astype(np.float32)


def eval_loss(net):
    pred = net.predict([eval_xt, eval_t], verbose=0)
    assert pred.shape == eval_x0.shape and pred.dtype == np.float32, (pred.shape, pred.dtype)
    return float(np.mean((pred.astype(np.float64) - eval_noise) ** 2))


untrained_pred = network.predict([eval_xt, eval_t], verbose=0)
assert np.abs(untrained_pred).max() < 1e-3, np.abs(untrained_pred).max()
np.testing.assert_array_equal(ema_network.predict([eval_xt, eval_t], verbose=0), untrained_pred)
untrained_loss = eval_loss(network)
print(f"evaluation loss untrained: {untrained_loss:.4f}")
assert 0.9 < untrained_loss < 1.1, untrained_loss

# Train the model
# GAP 1: fit refuses batch_size with a Dataset ("batch_size=32 applies to arrays ... batch
# it there"), where tf.keras (and Keras 3) ignore it for a tf.data.Dataset:
# model.fit(
#     train_ds,
#     epochs=num_epochs,
#     batch_size=batch_size,
#     callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=model.plot_images)],
# )
history = model.fit(  # added: history =, and the second callback (each batch's logs)
    train_ds,
    epochs=num_epochs,
    callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=model.plot_images),
               keras.callbacks.LambdaCallback(
                   on_train_batch_end=lambda batch, logs: batch_logs.append(dict(logs)))],
)

# Added: fit ran num_epochs epochs of NUM_FLOWERS // batch_size steps, each batch's log
# the loss its train_step returned; as in Keras 3, model.metrics is compile's "loss"
# tracker, which upstream's self.loss never updates, and the step's keys are the metrics'
# names, so an epoch's log is the tracker's result, a mean of nothing: 0.0 (tf.keras 2.11
# lists no metric until compiled_loss runs, and logs the epoch's last batch loss); the
# callback generated 16 images after each epoch
steps = NUM_FLOWERS // batch_size
losses = history.history["loss"]
assert model.metrics_names == ["loss"], model.metrics_names
assert list(history.history) == ["loss"] and len(losses) == num_epochs, history.history
assert len(batch_logs) == num_epochs * steps, len(batch_logs)
batch_losses = np.array([float(logs["loss"]) for logs in batch_logs])
print("last batch loss per epoch:", np.round(batch_losses[steps - 1::steps], 4).tolist())
assert np.all(np.isfinite(batch_losses)) and np.all(batch_losses > 0), batch_losses
np.testing.assert_array_equal(losses, [0.0] * num_epochs)
assert len(plotted) == num_epochs, len(plotted)
for images in plotted:
    assert images.shape == (16, img_size, img_size, 3) and images.dtype == np.uint8


# Added: what training reached (CPU run; see the header): the evaluation loss against the
# untrained network's and against that of predicting the noise as x_t itself
trained_loss = eval_loss(network)
identity_loss = float(np.mean((eval_xt.astype(np.float64) - eval_noise) ** 2))
print(f"evaluation loss trained: {trained_loss:.4f} (predicting x_t: {identity_loss:.4f})")
assert not THRESHOLDS or trained_loss < 0.75 * identity_loss < 0.25 * untrained_loss, (
    trained_loss, identity_loss, untrained_loss)

# Added: one more train_step, by hand: drawn under the same seed, numpy's MSE of the noise
# and of the network's prediction before the step is the loss it returns; then each EMA
# weight is 0.999 of itself plus 0.001 of the updated weight
batch = next(iter(train_ds))
weights_before = [w.numpy() for w in network.weights]
ema_before = [w.numpy() for w in ema_network.weights]
em.random.set_seed(200)
t_drawn = em.random.uniform(minval=0, maxval=total_timesteps, shape=(batch_size,), dtype=em.int64)
noise_drawn = em.random.normal(shape=em.shape(batch), dtype=batch.dtype)
prediction = network([gdf_util.q_sample(batch, t_drawn, noise_drawn), t_drawn], training=True)
em.random.set_seed(200)
step_logs = model.train_step(batch)
np.testing.assert_allclose(float(step_logs["loss"]), np.mean(
    (noise_drawn.numpy().astype(np.float64) - prediction.numpy()) ** 2), rtol=1e-5)
assert not np.array_equal(network.weights[0].numpy(), weights_before[0])
for w, ew, before in zip(network.weights, ema_network.weights, ema_before):
    np.testing.assert_allclose(ew.numpy(), 0.999 * before + 0.001 * w.numpy(), rtol=1e-5,
                               atol=1e-7)

# Added: the samples of the callback, drawn with the EMA weights (after ~NUM_FLOWERS //
# batch_size * num_epochs steps at 0.999, still mostly their untrained selves): uint8
# noise-like images; and the data's own statistics, for the samples below
def roughness(images):  # mean |difference| of horizontal neighbours, on [0, 1]
    return float(np.abs(np.diff(images.astype(np.float64) / 255, axis=2)).mean())


data_u8 = np.clip(references * 127.5 + 127.5, 0.0, 255.0).astype(np.uint8)
untrained_roughness = roughness(plotted[0])
print(f"roughness: data {roughness(data_u8):.3f}, first samples {untrained_roughness:.3f}")

# Added: the stand-in for the download (see the header): the weights of this run's network
os.makedirs("checkpoints", exist_ok=True)
network.save_weights("checkpoints/diffusion_model_checkpoint.weights.h5")

"""
## Results
"""

assert any(not np.array_equal(w.numpy(), ew.numpy())  # added: (before loading)
           for w, ew in zip(network.weights, ema_network.weights))

# Load the model weights
# GAP 3: model.ema_network.load_weights("checkpoints/diffusion_model_checkpoint")
model.ema_network.load_weights("checkpoints/diffusion_model_checkpoint.weights.h5")

# Added: the loaded weights are the network's
for w, ew in zip(network.weights, ema_network.weights):
    np.testing.assert_array_equal(ew.numpy(), w.numpy())

# Generate and plot some samples
model.plot_images(num_rows=4, num_cols=8)

# Added: 32 samples, drawn with the trained weights; generate_images' last step (t = 0:
# posterior coefficients 1 and 0, no noise) returns the clipped x_0 estimate, so the
# samples lie in [-1, 1]; (CPU run) they are smoother than the noise-like first samples
samples = plotted[-1]
assert len(plotted) == num_epochs + 1 and samples.shape == (32, img_size, img_size, 3)
assert samples.dtype == np.uint8, samples.dtype
final = model.generate_images(num_images=16)
assert final.shape == (16, img_size, img_size, 3) and final.dtype == em.float32
assert float(em.reduce_max(em.abs(final))) <= 1.0
print(f"roughness of the samples: {roughness(samples):.3f}")
assert not THRESHOLDS or roughness(samples) < 0.6 * untrained_roughness, (
    roughness(samples), untrained_roughness)

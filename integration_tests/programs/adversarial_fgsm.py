"""Port of tensorflow/docs site/en/tutorials/generative/adversarial_fgsm.ipynb ("Adversarial
example using FGSM": the fast gradient sign method, adv_x = x + eps * sign(grad_x J(theta, x,
y)), with the gradient of CategoricalCrossentropy on a pretrained classifier's probabilities
taken with respect to the input image under a GradientTape, then the classifier's top-1 label
and confidence for epsilon 0, 0.01, 0.1 and 0.15).

Upstream: https://github.com/tensorflow/docs/blob/c87655c34ba7674564721d944a32fbf550189a26/site/en/tutorials/generative/adversarial_fgsm.ipynb
Changed: names only (tf.GradientTape -> ember.tape.GradientTape, imported as tape_lib since
upstream names its tape `tape`; tf.sign/one_hot/reshape/cast/clip_by_value -> em.*,
tf.image.resize -> em.image.resize, tf.keras.losses -> nn.losses); the matplotlib setup and
plots are dropped: display_images prints the title it would plot. The FGSM part (from
loss_object to the loop over epsilons) is upstream's line for line. Substitutions: the
pretrained MobileNetV2 (ImageNet weights) cannot be had here, so in its place a small
MobileNetV2-like classifier (a stride-2 convolution, a stride-2 depthwise then pointwise
stage, each with BatchNormalization (momentum 0.9) and ReLU6, Flatten, a softmax Dense;
global average pooling learnt too slowly for a short run) is first trained on
real MNIST (its "pretrained weights", inputs scaled to [-1, 1] as MobileNetV2's
preprocess_input does); ImageNet's 1,000 classes become the ten digits, the Labrador image
(a JPEG download) becomes the first MNIST test digit that this program writes as a 56x56
grayscale PNG into a temporary directory (a local get_file returns its path), and the
preprocess resize is to the model's 28x28 (upstream 224x224); labrador_retriever_index is
that digit's label (upstream 208).
Reduced (EMBER_PROGRAMS_FULL=1: 60,000 training images, 5 epochs): 10,000 images, 3
epochs, batch 64; EMBER_PROGRAMS_SHORT=1: 512 images, 1 epoch, 100 test digits (else 1,000)
and no thresholds.
Added: seeds for numpy and ember; the shapes and dtypes; the decoded and resized image
against the digit itself (a half-pixel bilinear halving of a 2x nearest-upsampled image is
exact); the probabilities sum to 1; the loss against numpy's -log p[label]; the input
gradient against PyTorch's (float64, the same weights, TF's asymmetric SAME padding,
BatchNormalization in inference mode with Keras's epsilon 1e-3) and the perturbation against
its sign; each adv_x is float32, clipped to [-1, 1] and image itself for eps 0; the loss
grows with epsilon for this image; with trainable = False, training=True gives the same
output as inference (Keras runs frozen BatchNormalization in inference mode). Thresholds
(CPU run): the classifier passes 88% on 1,000 test digits (chance is 10%; it reaches
92.9%, 93-95% with other seeds), and on them upstream's create_adversarial_pattern at eps
0.15 leaves an accuracy at least 30 points below that of random signs of the same size (it
leaves 7.3% against 93.0%; a wrong or zero gradient would do no better than random signs);
the mean loss of the batch is numpy's mean of -log p[label].
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it):
1. no nn.applications (tf.keras.applications.MobileNetV2; AttributeError) -- the ImageNet
weights could not be had here in any case: the trained small classifier stands in.
2. no nn.applications.mobilenet_v2.decode_predictions (AttributeError): a top-k over the
digits' names stands in. 3. no nn.applications.mobilenet_v2.preprocess_input
(AttributeError): image / 127.5 - 1 stands in. 4. no tf.io.read_file (no em.io;
AttributeError): open().read(). 5. no tf.image.decode_image (AttributeError):
nn.utils.load_img on the bytes stands in.
"""

import io
import os
import pathlib
import tempfile
import unittest

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

import ember.core as em
from ember import data, nn
from ember import tape as tape_lib
from ember.nn import layers

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)

# --- the stand-ins for the downloads (added) ---------------------------------------------


def load(name, n):
    x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
    return (np.asarray(x) * 255.0).round().reshape(-1, 28, 28, 1), np.asarray(y)


N_TRAIN = 60000 if FULL else 512 if SHORT else 10000
EPOCHS = 5 if FULL else 1 if SHORT else 3
N_TEST = 100 if SHORT else 1000  # the strict double's convolutions are slow
train_digits, train_labels = load("train", N_TRAIN)
test_digits, test_labels = load("test", N_TEST)
assert train_digits.shape == (N_TRAIN, 28, 28, 1) and test_digits.shape == (N_TEST, 28, 28, 1)

TMP = pathlib.Path(tempfile.mkdtemp())
# the "Labrador": the first test digit, as a 56x56 grayscale PNG (each pixel a 2x2 block)
Image.fromarray(np.kron(test_digits[0, :, :, 0], np.ones((2, 2))).astype(np.uint8)).save(
    TMP / 'YellowLabradorLooking_new.jpg', format='PNG')


def get_file(fname=None, origin=None):
  """tf.keras.utils.get_file, offline: the path of the stand-in written above."""
  return str(TMP / fname)


DIGIT_NAMES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine']


def decode_predictions(preds, top=5):
  """GAP 2 stand-in: [(class id, class name, score), ...] best first, for each row."""
  preds = np.asarray(preds)
  return [[(str(i), DIGIT_NAMES[i], float(p[i])) for i in np.argsort(-p)[:top]] for p in preds]


def make_pretrained_model():
  """GAP 1 stand-in: a small MobileNetV2-like classifier, trained on MNIST here."""
  def block(filters, strides):  # depthwise then pointwise, each with BN and ReLU6
    return [layers.DepthwiseConv2D(3, strides=strides, padding='same', use_bias=False),
            layers.BatchNormalization(momentum=0.9), layers.ReLU(6.),
            layers.Conv2D(filters, 1, use_bias=False), layers.BatchNormalization(momentum=0.9),
            layers.ReLU(6.)]
  model = nn.Sequential(
      [nn.Input(shape=(28, 28, 1)),
       layers.Conv2D(16, 3, strides=2, padding='same', use_bias=False),
       layers.BatchNormalization(momentum=0.9), layers.ReLU(6.)]
      + block(32, 2) + [layers.Flatten(), layers.Dense(10, activation='softmax')])
  model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])
  model.fit(train_digits / 127.5 - 1, train_labels, batch_size=64, epochs=EPOCHS, verbose=0)
  return model


# --- upstream ----------------------------------------------------------------------------

# GAP 1: pretrained_model = tf.keras.applications.MobileNetV2(include_top=True,
#                                                              weights='imagenet')
pretrained_model = make_pretrained_model()
pretrained_model.trainable = False

# ImageNet labels
# GAP 2: decode_predictions = tf.keras.applications.mobilenet_v2.decode_predictions
# (the stand-in is defined above)

# added: the classifier learnt MNIST (its "pretrained weights")
test_probs = pretrained_model.predict(test_digits / 127.5 - 1, verbose=0)
test_accuracy = float(np.mean(np.argmax(test_probs, -1) == test_labels))
print(f"test accuracy of the classifier: {test_accuracy:.3f}")
assert test_probs.shape == (N_TEST, 10)
np.testing.assert_allclose(test_probs.sum(-1), 1, rtol=1e-5)
assert SHORT or test_accuracy > 0.88, test_accuracy


# Helper function to preprocess the image so that it can be inputted in MobileNetV2
def preprocess(image):
  image = em.cast(image, em.float32)
  image = em.image.resize(image, (28, 28))  # upstream (224, 224), MobileNetV2's input
  # GAP 3: image = tf.keras.applications.mobilenet_v2.preprocess_input(image)
  image = image / 127.5 - 1.0
  image = image[None, ...]
  return image

# Helper function to extract labels from probability vector
def get_imagenet_label(probs):
  return decode_predictions(probs, top=1)[0][0]


image_path = get_file('YellowLabradorLooking_new.jpg', 'https://storage.googleapis.com/download.tensorflow.org/example_images/YellowLabradorLooking_new.jpg')
# GAP 4: image_raw = tf.io.read_file(image_path)
with open(image_path, 'rb') as f:
  image_raw = f.read()
# GAP 5: image = tf.image.decode_image(image_raw)
image = nn.utils.img_to_array(nn.utils.load_img(io.BytesIO(image_raw), color_mode='grayscale'),
                              dtype=np.uint8)
assert image.shape == (56, 56, 1) and image.dtype == np.uint8  # as decode_image gives it

image = preprocess(image)
image_probs = pretrained_model.predict(image)

# added: the shapes, and the pixels are the digit's (an exact halving, then [-1, 1])
assert image.shape == (1, 28, 28, 1) and image.dtype == em.float32, (image.shape, image.dtype)
np.testing.assert_allclose(image.numpy(), test_digits[:1] / 127.5 - 1, atol=1e-6)
assert image_probs.shape == (1, 10), image_probs.shape
np.testing.assert_allclose(image_probs, test_probs[:1], rtol=1e-5, atol=1e-6)

# plt.imshow(image[0]*0.5+0.5) is dropped; its title:
_, image_class, class_confidence = get_imagenet_label(image_probs)
print('{} : {:.2f}% Confidence'.format(image_class, class_confidence*100))  # noqa: UP032
assert image_class == DIGIT_NAMES[int(np.argmax(image_probs[0]))]

loss_object = nn.losses.CategoricalCrossentropy()

def create_adversarial_pattern(input_image, input_label):
  with tape_lib.GradientTape() as tape:
    tape.watch(input_image)
    prediction = pretrained_model(input_image)
    loss = loss_object(input_label, prediction)

  # Get the gradients of the loss w.r.t to the input image.
  gradient = tape.gradient(loss, input_image)
  # Get the sign of the gradients to create the perturbation
  signed_grad = em.sign(gradient)
  return signed_grad


# Get the input label of the image.
labrador_retriever_index = int(test_labels[0])  # upstream 208 (ImageNet's Labrador retriever)
label = em.one_hot(labrador_retriever_index, image_probs.shape[-1])
label = em.reshape(label, (1, image_probs.shape[-1]))

perturbations = create_adversarial_pattern(image, label)
# plt.imshow(perturbations[0]*0.5+0.5); # To change [-1, 1] to [0,1]   (dropped)

# --- added: the gradient and the perturbation against PyTorch's (float64, same weights) ----


def torch_forward(model, x):
  """The classifier in float64 PyTorch, with TF's SAME padding and BN in inference mode."""
  h = x.permute(0, 3, 1, 2)
  for layer in model.layers:
    name = type(layer).__name__
    if name in ('Conv2D', 'DepthwiseConv2D'):
      kernel = torch.tensor(layer.get_weights()[0], dtype=torch.float64)
      (k, _), (s, _) = layer.kernel_size, layer.strides
      size = h.shape[-1]
      pad = max((-(-size // s) - 1) * s + k - size, 0)  # TF: the odd pixel goes after
      h = F.pad(h, (pad // 2, pad - pad // 2, pad // 2, pad - pad // 2))
      if name == 'Conv2D':
        h = F.conv2d(h, kernel.permute(3, 2, 0, 1), stride=s)
      else:
        h = F.conv2d(h, kernel.permute(2, 3, 0, 1), stride=s, groups=h.shape[1])
    elif name == 'BatchNormalization':
      gamma, beta, mean, var = (torch.tensor(w, dtype=torch.float64)[:, None, None]
                                for w in layer.get_weights())
      h = gamma * (h - mean) / torch.sqrt(var + 1e-3) + beta  # Keras's default epsilon
    elif name == 'ReLU':
      h = torch.clamp(h, 0, 6)
    elif name == 'Flatten':  # in channels-last order
      h = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1)
    elif name == 'Dense':
      w, b = (torch.tensor(v, dtype=torch.float64) for v in layer.get_weights())
      h = torch.softmax(h @ w + b, dim=-1)
    else:
      raise AssertionError(name)
  return h


x64 = torch.tensor(image.numpy(), dtype=torch.float64, requires_grad=True)
p64 = torch_forward(pretrained_model, x64)
np.testing.assert_allclose(image_probs, p64.detach().numpy(), rtol=1e-4, atol=1e-6)
# Keras's categorical_crossentropy on probabilities: normalise, clip to [1e-7, 1 - 1e-7]
loss64 = -torch.log(torch.clamp(p64 / p64.sum(), 1e-7, 1 - 1e-7))[0, labrador_retriever_index]
(grad64,) = torch.autograd.grad(loss64, x64)
grad64 = grad64.numpy()

with tape_lib.GradientTape() as t_:
  t_.watch(image)
  ember_loss = loss_object(label, pretrained_model(image))
ember_grad = t_.gradient(ember_loss, image).numpy()
assert ember_loss.shape == () and ember_loss.dtype == em.float32
np.testing.assert_allclose(float(ember_loss), -np.log(image_probs[0, labrador_retriever_index]),
                           rtol=1e-4, atol=1e-6)
np.testing.assert_allclose(float(ember_loss), loss64.item(), rtol=1e-4, atol=1e-6)
scale = np.abs(grad64).max()
assert scale > 0
# float32 loses ~1e-7 / (1 - p[label]) of the gradient's scale in p - onehot
np.testing.assert_allclose(ember_grad, grad64, atol=2e-3 * scale)
assert perturbations.shape == (1, 28, 28, 1) and perturbations.dtype == em.float32
sure = np.abs(grad64) > 1e-2 * scale  # the pixels whose sign float32 cannot flip
print(f'{sure.mean():.2f} of the pixels have a sure sign')
assert sure.mean() > 0.3, sure.mean()
np.testing.assert_array_equal(perturbations.numpy()[sure], np.sign(grad64)[sure])
assert set(np.unique(perturbations.numpy())) <= {-1.0, 0.0, 1.0}

# --- upstream ----------------------------------------------------------------------------

shown = []  # added: what each plot would show


def display_images(image, description):
  _, label, confidence = get_imagenet_label(pretrained_model.predict(image))
  # plt.figure(); plt.imshow(image[0]*0.5+0.5) dropped; plt.title(...) printed:
  print('{} \n {} : {:.2f}% Confidence'.format(description,  # noqa: UP032
                                               label, confidence*100))
  shown.append((image, label, confidence))  # added


epsilons = [0, 0.01, 0.1, 0.15]
descriptions = [('Epsilon = {:0.3f}'.format(eps) if eps else 'Input')  # noqa: UP032
                for eps in epsilons]

for i, eps in enumerate(epsilons):
  adv_x = image + eps*perturbations
  adv_x = em.clip_by_value(adv_x, -1, 1)
  display_images(adv_x, descriptions[i])

# --- added: what the plots show ------------------------------------------------------------
assert descriptions == ['Input', 'Epsilon = 0.010', 'Epsilon = 0.100', 'Epsilon = 0.150']
assert len(shown) == 4 and shown[0][1] == image_class
np.testing.assert_allclose(shown[0][2], class_confidence, rtol=1e-5)
np.testing.assert_array_equal(shown[0][0].numpy(), image.numpy())
losses = []
for (adv_x, _, _), eps in zip(shown, epsilons):
  assert adv_x.dtype == em.float32 and adv_x.shape == (1, 28, 28, 1), (adv_x.dtype, adv_x.shape)
  expected = np.clip(image.numpy() + np.float32(eps) * perturbations.numpy(), -1, 1)
  np.testing.assert_allclose(adv_x.numpy(), expected, atol=1e-6)
  losses.append(float(loss_object(label, pretrained_model(adv_x))))
print('loss for each epsilon:', [f'{v:.4f}' for v in losses])
assert losses[1] > losses[0] and losses[3] > losses[2] > losses[0], losses

# frozen (trainable = False) BatchNormalization runs in inference mode, as in Keras
np.testing.assert_allclose(pretrained_model(image, training=True).numpy(), image_probs,
                           rtol=1e-5, atol=1e-6)

# upstream's create_adversarial_pattern on the test digits (the loss is their mean, whose
# gradient has each digit's sign), against random signs of the same size
test_images = em.constant(test_digits / 127.5 - 1, dtype=em.float32)
test_onehot = em.one_hot(test_labels, 10)
np.testing.assert_allclose(  # the batch's loss is the mean over its digits
    float(loss_object(test_onehot, pretrained_model(test_images))),
    -np.mean(np.log(test_probs[np.arange(N_TEST), test_labels].astype(np.float64))), rtol=1e-4)
batch_perturbations = create_adversarial_pattern(test_images, test_onehot)
assert batch_perturbations.shape == (N_TEST, 28, 28, 1)
np.testing.assert_array_equal(batch_perturbations.numpy()[:1][sure], perturbations.numpy()[sure])
random_signs = np.sign(np.random.uniform(-1, 1, size=test_digits.shape)).astype(np.float32)


def accuracy(x):
  return float(np.mean(np.argmax(pretrained_model.predict(x, verbose=0), -1) == test_labels))


fgsm_accuracy = accuracy(em.clip_by_value(test_images + 0.15 * batch_perturbations, -1, 1))
random_accuracy = accuracy(em.clip_by_value(test_images + 0.15 * random_signs, -1, 1))
print(f"accuracy at eps 0.15: clean {test_accuracy:.3f}, random signs {random_accuracy:.3f}, "
      f"FGSM {fgsm_accuracy:.3f}")
assert fgsm_accuracy <= random_accuracy
assert SHORT or fgsm_accuracy < random_accuracy - 0.3, (fgsm_accuracy, random_accuracy)

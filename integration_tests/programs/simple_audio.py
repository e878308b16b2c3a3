"""Port of tensorflow/docs site/en/tutorials/audio/simple_audio.ipynb ("Simple audio
recognition: Recognizing keywords"): the mini Speech Commands folders (8 command words, 16
kHz WAV files) read with audio_dataset_from_directory (80/20 split, seed 0, subset="both",
padded to 16,000 samples), squeezed, the validation set sharded into validation and test
halves, waveforms turned into STFT magnitude spectrograms (tf.signal.stft, frame_length
255, frame_step 128), cached, shuffled and prefetched, a CNN (Resizing to 32x32, a
Normalization adapted on the training spectrograms, two Conv2D, MaxPooling2D, Dropout,
Dense) compiled with Adam, SparseCategoricalCrossentropy (from_logits) and accuracy and
fit with EarlyStopping(patience=2), evaluated, a confusion matrix of the test set,
inference on one file, and an export model that takes a file name or a batch of waveforms,
saved and reloaded.

Upstream: https://github.com/tensorflow/docs/blob/67052a2760ffe671aea0b928db5fe58dbb204567/site/en/tutorials/audio/simple_audio.ipynb
(the notebook's last change; unchanged at master 7c36502 of 2026-03-11)
Changed: names only (tensorflow -> ember.core as em: tf.random.set_seed, tf.squeeze,
tf.signal.stft, tf.abs, tf.newaxis, tf.argmax, tf.concat, tf.nn.softmax -> em.nn_ops.softmax;
tf.data.AUTOTUNE -> ember.data.AUTOTUNE; tensorflow.keras layers/models -> ember.nn
layers/models; tf.keras.utils.get_file -> nn.utils.get_file, tf.keras.optimizers.Adam,
tf.keras.losses.SparseCategoricalCrossentropy, tf.keras.callbacks.EarlyStopping -> nn.*;
@tf.function -> @graph.function), except the GAPs below. The 182 MB download cannot be had
here (no network): SYNTHETIC files in its layout are written with the stdlib wave module
into data/mini_speech_commands under a temporary working directory (upstream: the working
directory), so upstream's `if not data_dir.exists()` skips the download and its relative
paths (the inference file no/01bb6a2a_nohash_0.wav among them) read them unchanged: a
README.md and eight folders down, go, left, no, right, stop, up, yes of <8 hex
digits>_nohash_<n>.wav files, mono 16-bit PCM at 16 kHz, 1 second or shorter (a fifth of
them 0.8-1 s, as some real clips, so the padding to 16,000 is exercised). Each "word" is
two voiced "syllables" (a fundamental with two harmonics and a vibrato) whose pitches are
the class's (down 2000->1000 Hz, no 1000->2000 Hz: order matters, so the spectrogram's
time axis does), each file with its own onset, syllable lengths, pitch (+-12%), loudness
and background noise. The plots (matplotlib, seaborn), display.Audio and model.summary()'s
table are dropped; what they would show is asserted. Reduced (EMBER_PROGRAMS_FULL=1
restores upstream's 1,000 files a class): 60 files a class (480: 384 train, 96 validation
in batches of 64 and 32, the first the test shard, the second the validation one);
upstream's batch 64 and 10 epochs with EarlyStopping are kept. EMBER_PROGRAMS_SHORT=1 (the
strict-GPU run): 16 files a class with batch 16 (so that shard still has two batches), 1
epoch, no check on what training reached.
Added: seeds for numpy and ember (upstream's 42); the commands found; the class names
(sorted folders) and the 80/20 split counts; each validation waveform equal to its file's
int16 samples / 32768 zero-padded to 16,000 (as tf.audio.decode_wav and desired_samples
give) and its label equal to its folder; the element shapes and dtypes; the shards holding
the even and the odd validation batches; a new training order on each pass
(reshuffle_each_iteration); the spectrogram's shape (124, 129, 1) and values against
numpy's rfft of 256 points of each Hann-windowed 255-sample frame (tf.signal.stft's
defaults: hann_window(255, periodic=True), which for an odd length is the symmetric window);
the Resizing layer against a numpy bilinear resize with half-pixel centres (TF's, antialias
off); the adapted Normalization's mean and variance against numpy's over every training
spectrogram; the model's parameter count against Keras's formulas and its logits (inference
mode) against a float64 numpy forward pass;
History's keys and EarlyStopping's rule (it stops only after 2 epochs without a lower
val_loss, re-run on the losses); the last epoch's val_loss and val_accuracy equal to
evaluate's; evaluate's accuracy and loss on the test set equal to numpy's from predict;
tf.argmax's int64; the confusion matrix against numpy's count (its diagonal is the
accuracy); the inference file's softmax sums to 1; the export model's class ids and names
agree with the model's argmax and label_names, from a file name and from a waveform batch;
the reloaded model gives identical output. What training reached (CPU run, not SHORT):
test accuracy at least 0.6 (chance is 1/8: untrained models of 4 seeds scored 0.08-0.19,
one trained on shuffled labels 0.14; trained, 5 seeds of the data and ember reached
0.86-0.92) and the inference file classified as "no".
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error; every one here is loud):
1. no tf.audio.decode_wav (em.audio: AttributeError): the stdlib wave module and numpy
stand in (decode_wav above, TF's contract: int16 / 32768, desired_channels,
desired_samples padding or cutting, the rate as int32).
2. no audio_dataset_from_directory, neither nn.utils's (Keras 3's; tf.keras.utils' name)
nor nn.preprocessing's (AttributeError; image_ and text_dataset_from_directory exist): a
function of Keras's steps stands in (listing, RandomState shuffle, split, shuffle buffer
8 * batch_size, decoding map, prefetch, batch, class_names).
3. no tf.io.gfile.listdir (em.io: AttributeError): os.listdir stands in (both readdir order).
4. (by design, docs/guide/coming-from.md: no string tensors) tf.io.read_file, the
`x.dtype == tf.string` test and tf.gather on the string array label_names:
Path.read_bytes, isinstance(x, str) and numpy indexing stand in.
8. no tf.Module (em.Module: AttributeError; the docs map it to nn.Layer/nn.Model, whose
__call__ this class would override): a plain class stands in.
9. graph.function has no get_concrete_function (AttributeError), and graph.TensorSpec takes
no string dtype (TypeError): the two signature lines are dropped (each call traces).
10. no tf.saved_model (em.saved_model: AttributeError): the wrapped Keras model is saved
with model.save("saved.keras") and reloaded with nn.models.load_model into a new
ExportModel, whose output is checked identical.
11. (by design, docs/guide/input-pipelines.md: dataset elements are numpy arrays) the
labels from the pipeline have no .numpy() (AttributeError): it is dropped.
Fixed in ember since the first version of this port: 7. fit(callbacks=<one Callback>),
upstream's call, raised TypeError ('EarlyStopping' object is not iterable), where tf.keras and
Keras 3 flatten a single callback, so a one-element list stood in; ember's fit, evaluate and
predict now take one callback, and upstream's line runs. 5. there was no tf.signal.stft
(em.signal: AttributeError) nor any FFT, so frames gathered and a complex64 matmul with the
periodic-Hann-windowed DFT matrix stood in; ember now has em.signal.stft (TF's defaults), and
upstream's line runs (checked against numpy's rfft). The stand-in's window divided by 255, not
TF's 254 for an odd length (a silent difference, under 1% of the peak), so the check's
numpy window is now TF's. 6. there was no tf.math.confusion_matrix (em.math:
AttributeError), so em.math.bincount of label * num_labels + prediction stood in; ember now
has em.math.confusion_matrix, and upstream's line runs (checked against numpy).
"""

import io
import os
import pathlib
import tempfile
import wave

import numpy as np

import ember.core as em
from ember import data, graph, nn
from ember.nn import layers, models

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
PER_CLASS = 1000 if FULL else 16 if SHORT else 60
BATCH_SIZE = 16 if SHORT else 64  # upstream's 64
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)  # upstream unzips data/mini_speech_commands into the working directory

# ---- Added: the synthetic mini_speech_commands (see the header) --------------------------
RATE = 16000
WORDS = {  # the two syllables' pitches in Hz
    "down": (2000, 1000), "go": (1300, 1300), "left": (1600, 2500), "no": (1000, 2000),
    "right": (2500, 1600), "stop": (3000, 1300), "up": (1300, 3000), "yes": (2000, 3200),
}


def synth_word(word, n_samples, rng):
    """One utterance of `word`: two voiced syllables on a noise floor, int16."""
    t = np.arange(n_samples) / RATE
    out = rng.normal(0.0, rng.uniform(0.02, 0.12), n_samples)
    start = rng.uniform(0.0, 0.15) * RATE
    for pitch in WORDS[word]:
        end = start + rng.uniform(0.12, 0.25) * RATE
        f0 = pitch * rng.uniform(0.88, 1.12)
        env = np.clip(np.minimum(t * RATE - start, end - t * RATE) / 400.0, 0, 1)
        phase = 2 * np.pi * f0 * (t - 0.02 * np.cos(2 * np.pi * 5.0 * t) / (2 * np.pi * 5.0))
        voiced = sum(a * np.sin(h * phase) for h, a in ((1, 1.0), (2, 0.4), (3, 0.2)))
        out += rng.uniform(0.05, 0.4) * env * voiced
        start = end + rng.uniform(0.02, 0.08) * RATE
    assert end < n_samples  # the word fits in the clip (at most 0.73 s)
    return np.clip(np.round(out * 32767), -32768, 32767).astype(np.int16)


def write_mini_speech_commands(root, per_class, seed=0):
    """Added: writes the folders; returns {int16 samples padded to 16,000 as bytes: word}."""
    rng = np.random.default_rng(seed)
    written = {}
    os.makedirs(root)
    pathlib.Path(root, "README.md").write_text("Synthetic stand-in for mini_speech_commands.\n")
    for word in WORDS:
        os.makedirs(os.path.join(root, word))
        for i in range(per_class):
            name = "01bb6a2a_nohash_0.wav" if (word, i) == ("no", 0) else (
                f"{rng.integers(16 ** 8):08x}_nohash_{rng.integers(5)}.wav")
            n_samples = RATE if rng.random() < 0.8 else int(rng.integers(12800, RATE))
            pcm = synth_word(word, n_samples, rng)
            with wave.open(os.path.join(root, word, name), "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(RATE)
                w.writeframes(pcm.tobytes())
            written[np.pad(pcm, (0, RATE - n_samples)).tobytes()] = word
    return written


WRITTEN = write_mini_speech_commands("data/mini_speech_commands", PER_CLASS)
assert len(WRITTEN) == 8 * PER_CLASS  # every file differs


def decode_wav(contents, desired_channels=-1, desired_samples=-1):  # GAP 1's stand-in
    """tf.audio.decode_wav's contract on 16-bit PCM: float32 [samples, channels] scaled
    by 1/32768, zero-padded or cut to desired_samples; and the sample rate (int32)."""
    with wave.open(io.BytesIO(contents)) as w:
        assert w.getsampwidth() == 2
        channels, rate = w.getnchannels(), w.getframerate()
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, channels)
    audio = pcm.astype(np.float32) / 32768.0
    if desired_channels > 0:
        audio = audio[:, :desired_channels]
    if desired_samples >= 0:
        audio = np.pad(audio[:desired_samples], ((0, max(0, desired_samples - len(audio))), (0, 0)))
    return em.constant(audio), em.constant(rate, dtype=em.int32)


def audio_dataset_from_directory(directory, batch_size=32, validation_split=None, seed=None,
                                 output_sequence_length=None, subset=None):  # GAP 2
    """Keras's steps (keras/src/utils/audio_dataset_utils.py, labels="inferred",
    label_mode="int", shuffle=True): the sorted class folders, each walked in sorted
    order, the whole list shuffled by np.random.RandomState(seed), the last
    int(validation_split * n) files for validation, a shuffle buffer of 8 * batch_size
    for training, decode_wav(desired_samples=output_sequence_length) in a parallel map,
    prefetch, batch."""
    directory = str(directory)
    class_names = sorted(d for d in os.listdir(directory)
                         if os.path.isdir(os.path.join(directory, d)) and not d.startswith("."))
    paths, labels = [], []
    for index, name in enumerate(class_names):
        for root, _, files in sorted(os.walk(os.path.join(directory, name))):
            for f in sorted(files):
                if f.lower().endswith(".wav"):
                    paths.append(os.path.join(root, f))
                    labels.append(index)
    np.random.RandomState(seed).shuffle(paths)
    np.random.RandomState(seed).shuffle(labels)
    print(f"Found {len(paths)} files belonging to {len(class_names)} classes.")
    n_val = int(validation_split * len(paths))

    def make(p, lab, shuffle):
        ds = data.Dataset.from_tensor_slices((np.array(p), np.array(lab, np.int32)))
        if shuffle:
            ds = ds.shuffle(buffer_size=batch_size * 8, seed=seed)
        ds = ds.map(lambda x, y: (decode_wav(pathlib.Path(x).read_bytes(),
                                             desired_samples=output_sequence_length)[0], y),
                    num_parallel_calls=data.AUTOTUNE)
        ds = ds.prefetch(data.AUTOTUNE).batch(batch_size)
        ds.class_names = class_names
        return ds

    print(f"Using {len(paths) - n_val} files for training.")
    print(f"Using {n_val} files for validation.")
    assert subset == "both"
    return (make(paths[:-n_val], labels[:-n_val], True),
            make(paths[-n_val:], labels[-n_val:], False))


# ---- Setup -------------------------------------------------------------------------------
# Set the seed value for experiment reproducibility.
seed = 42
em.random.set_seed(seed)
np.random.seed(seed)

# ---- Import the mini Speech Commands dataset ---------------------------------------------
DATASET_PATH = 'data/mini_speech_commands'

data_dir = pathlib.Path(DATASET_PATH)
if not data_dir.exists():
  nn.utils.get_file(
      'mini_speech_commands.zip',
      origin="http://storage.googleapis.com/download.tensorflow.org/data/mini_speech_commands.zip",
      extract=True,
      cache_dir='.', cache_subdir='data')

# GAP 3: commands = np.array(tf.io.gfile.listdir(str(data_dir)))
commands = np.array(os.listdir(str(data_dir)))
commands = commands[(commands != 'README.md') & (commands != '.DS_Store')]
print('Commands:', commands)
assert sorted(commands) == sorted(WORDS), commands

# GAP 2: train_ds, val_ds = tf.keras.utils.audio_dataset_from_directory(
train_ds, val_ds = audio_dataset_from_directory(
    directory=data_dir,
    batch_size=BATCH_SIZE,  # upstream: 64
    validation_split=0.2,
    seed=0,
    output_sequence_length=16000,
    subset='both')

label_names = np.array(train_ds.class_names)
print()
print("label names:", label_names)
assert list(label_names) == sorted(WORDS)

print(train_ds.element_spec)
assert [tuple(s.shape) for s in train_ds.element_spec] == [(None, 16000, 1), (None,)]


def squeeze(audio, labels):
  audio = em.squeeze(audio, axis=-1)
  return audio, labels


train_ds = train_ds.map(squeeze, data.AUTOTUNE)
val_ds = val_ds.map(squeeze, data.AUTOTUNE)

# Added: every validation waveform is its file's samples / 32768, padded; its label, its folder
n_val = int(0.2 * 8 * PER_CLASS)
seen = 0
for audio, labels in val_ds:
  audio = np.asarray(audio)
  assert audio.dtype == np.float32 and audio.shape[1:] == (16000,), audio.shape
  for wav, lab in zip(audio, np.asarray(labels)):
    key = np.round(wav * 32768).astype(np.int16).tobytes()
    assert np.array_equal(wav * 32768, np.round(wav * 32768))  # exact int16 / 32768
    assert WRITTEN[key] == label_names[lab], (WRITTEN.get(key), label_names[lab])
    seen += 1
assert seen == n_val, (seen, n_val)

val_labels = [np.asarray(labels) for _, labels in val_ds]  # added
test_ds = val_ds.shard(num_shards=2, index=0)
val_ds = val_ds.shard(num_shards=2, index=1)
# Added: the shards hold the even and the odd batches
assert [list(np.asarray(lab)) for _, lab in test_ds] == [list(v) for v in val_labels[0::2]]
assert [list(np.asarray(lab)) for _, lab in val_ds] == [list(v) for v in val_labels[1::2]]

for example_audio, example_labels in train_ds.take(1):
  print(example_audio.shape)
  print(example_labels.shape)
assert tuple(example_audio.shape) == (BATCH_SIZE, 16000) and example_audio.dtype == em.float32
assert tuple(example_labels.shape) == (BATCH_SIZE,) and example_labels.dtype == np.int32

print(label_names[[1,1,3,0]])
assert list(label_names[[1, 1, 3, 0]]) == ["go", "go", "no", "down"]
for i in range(9):  # added: what the waveform plots would show
  assert float(em.reduce_max(em.abs(example_audio[i]))) <= 1.0
  assert label_names[example_labels[i]] in WORDS


# ---- Convert waveforms to spectrograms ---------------------------------------------------
def get_spectrogram(waveform):
  # Convert the waveform to a spectrogram via a STFT.
  spectrogram = em.signal.stft(
      waveform, frame_length=255, frame_step=128)
  # Obtain the magnitude of the STFT.
  spectrogram = em.abs(spectrogram)
  # Add a `channels` dimension, so that the spectrogram can be used
  # as image-like input data with convolution layers (which expect
  # shape (`batch_size`, `height`, `width`, `channels`).
  spectrogram = spectrogram[..., em.newaxis]
  return spectrogram


def np_spectrogram(wav):
  """Added: numpy's STFT magnitude with TF's framing, window and fft_length."""
  wav = np.asarray(wav, np.float64)
  frames = np.stack([wav[s:s + 255] for s in range(0, len(wav) - 255 + 1, 128)])
  # TF's hann_window(255, periodic=True): an odd length gives the symmetric window (/ 254)
  window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(255) / 254)
  return np.abs(np.fft.rfft(frames * window, n=256))[..., None]


for i in range(3):
  label = label_names[example_labels[i]]
  waveform = example_audio[i]
  spectrogram = get_spectrogram(waveform)

  print('Label:', label)
  print('Waveform shape:', waveform.shape)
  print('Spectrogram shape:', spectrogram.shape)
  assert tuple(spectrogram.shape) == (124, 129, 1) and spectrogram.dtype == em.float32
  expected = np_spectrogram(waveform)
  np.testing.assert_allclose(spectrogram.numpy(), expected, rtol=1e-3,
                             atol=1e-4 * expected.max())


def make_spec_ds(ds):
  return ds.map(
      map_func=lambda audio,label: (get_spectrogram(audio), label),
      num_parallel_calls=data.AUTOTUNE)


train_spectrogram_ds = make_spec_ds(train_ds)
val_spectrogram_ds = make_spec_ds(val_ds)
test_spectrogram_ds = make_spec_ds(test_ds)

for example_spectrograms, example_spect_labels in train_spectrogram_ds.take(1):  # noqa: B007
  break
assert tuple(example_spectrograms.shape) == (BATCH_SIZE, 124, 129, 1)

rows = 3
cols = 3
n = rows*cols
for i in range(n):  # the plots are dropped; what they would show is checked
  # GAP 11 (by design): ax.set_title(label_names[example_spect_labels[i].numpy()])
  title = label_names[example_spect_labels[i]]
  assert title in WORDS and example_spectrograms[i].numpy().shape == (124, 129, 1)

# ---- Build and train the model -----------------------------------------------------------
train_spectrogram_ds = train_spectrogram_ds.cache().shuffle(10000).prefetch(data.AUTOTUNE)
val_spectrogram_ds = val_spectrogram_ds.cache().prefetch(data.AUTOTUNE)
test_spectrogram_ds = test_spectrogram_ds.cache().prefetch(data.AUTOTUNE)

# Added: each pass over the training set is shuffled anew (reshuffle_each_iteration)
orders = [np.concatenate([np.asarray(lab) for _, lab in train_spectrogram_ds]) for _ in range(2)]
assert sorted(orders[0]) == sorted(orders[1]) and list(orders[0]) != list(orders[1])

input_shape = example_spectrograms.shape[1:]
print('Input shape:', input_shape)
num_labels = len(label_names)

# Instantiate the `tf.keras.layers.Normalization` layer.
norm_layer = layers.Normalization()
# Fit the state of the layer to the spectrograms
# with `Normalization.adapt`.
norm_layer.adapt(data=train_spectrogram_ds.map(map_func=lambda spec, label: spec))

model = models.Sequential([
    layers.Input(shape=input_shape),
    # Downsample the input.
    layers.Resizing(32, 32),
    # Normalize.
    norm_layer,
    layers.Conv2D(32, 3, activation='relu'),
    layers.Conv2D(64, 3, activation='relu'),
    layers.MaxPooling2D(),
    layers.Dropout(0.25),
    layers.Flatten(),
    layers.Dense(128, activation='relu'),
    layers.Dropout(0.5),
    layers.Dense(num_labels),
])

model.summary()

# Added: the Resizing layer against numpy's bilinear resize (half-pixel centres, no antialias)
def np_resize_bilinear(img, size):
  """[h, w, c] -> [size[0], size[1], c], as tf.image.resize(method="bilinear")."""
  out = img.astype(np.float64)
  for axis, new in enumerate(size):
    old = out.shape[axis]
    pos = np.clip((np.arange(new) + 0.5) * old / new - 0.5, 0, old - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, old - 1)
    frac = (pos - lo).reshape([-1 if a == axis else 1 for a in range(out.ndim)])
    out = np.take(out, lo, axis) * (1 - frac) + np.take(out, hi, axis) * frac
  return out


specs = example_spectrograms.numpy()[:4]
np.testing.assert_allclose(model.layers[0](specs).numpy(),
                           [np_resize_bilinear(s, (32, 32)) for s in specs], rtol=1e-5, atol=1e-5)
# Added: the adapted mean and variance are numpy's over every training spectrogram (adapt is
# given the 124x129 spectrograms; the layer then normalizes the resized ones, as upstream)
count, total, total_sq = 0, 0.0, 0.0
for spec, _ in train_spectrogram_ds:
  spec = np.asarray(spec, np.float64)
  assert spec.shape[1:] == (124, 129, 1)
  count, total, total_sq = count + spec.size, total + spec.sum(), total_sq + (spec ** 2).sum()
assert count == (8 * PER_CLASS - n_val) * 124 * 129
np.testing.assert_allclose(np.ravel(norm_layer.mean), total / count, rtol=1e-4)
np.testing.assert_allclose(np.ravel(norm_layer.variance), total_sq / count - (total / count) ** 2,
                           rtol=1e-4)
# Added: Keras's parameter counts (3x3 kernels, biases; Normalization's 3 are not trainable)
assert model.count_params() == (3 + (9 * 1 * 32 + 32) + (9 * 32 * 64 + 64)
                                + (14 * 14 * 64 * 128 + 128) + (128 * 8 + 8))
assert model.output_shape == (None, num_labels)

model.compile(
    optimizer=nn.optimizers.Adam(),
    loss=nn.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=['accuracy'],
)

EPOCHS = 1 if SHORT else 10
history = model.fit(
    train_spectrogram_ds,
    validation_data=val_spectrogram_ds,
    epochs=EPOCHS,
    callbacks=nn.callbacks.EarlyStopping(verbose=1, patience=2),
)

metrics = history.history
assert set(metrics) == {'loss', 'accuracy', 'val_loss', 'val_accuracy'}, metrics.keys()
assert history.epoch == list(range(len(metrics['loss'])))
assert all(np.isfinite(metrics['loss'])) and all(np.isfinite(metrics['val_loss']))
# Added: EarlyStopping (val_loss, patience 2, min_delta 0) stops after the epoch that makes
# 2 epochs without a new lowest val_loss (Keras's rule, re-run here on the losses)
val_losses = metrics['val_loss']
wait, lowest, expected_epochs = 0, np.inf, EPOCHS
for epoch, value in enumerate(val_losses):
  wait, lowest = (0, value) if value < lowest else (wait + 1, lowest)
  if wait >= 2:
    expected_epochs = epoch + 1
    break
assert len(val_losses) == expected_epochs, val_losses
# Added: the last epoch's validation metrics are evaluate's on the final weights
last = model.evaluate(val_spectrogram_ds, return_dict=True, verbose=0)
np.testing.assert_allclose(last['loss'], metrics['val_loss'][-1], rtol=1e-5)
np.testing.assert_allclose(last['accuracy'], metrics['val_accuracy'][-1], rtol=1e-6)
print('loss', np.round(metrics['loss'], 3), 'val_accuracy', np.round(metrics['val_accuracy'], 3))

# ---- Evaluate the model performance ------------------------------------------------------
results = model.evaluate(test_spectrogram_ds, return_dict=True)
print(results)
assert set(results) == {'loss', 'accuracy'}, results

y_pred = model.predict(test_spectrogram_ds)
n_test = sum(len(v) for v in val_labels[0::2])  # added: the even validation batches
assert y_pred.shape == (n_test, num_labels), y_pred.shape
y_pred = em.argmax(y_pred, axis=1)
y_true = em.concat(list(test_spectrogram_ds.map(lambda s,lab: lab)), axis=0)
assert tuple(y_true.shape) == tuple(y_pred.shape) == (n_test,)
assert y_true.dtype == em.int32 and y_pred.dtype == em.int64  # as tf.argmax's default

# Added: evaluate's accuracy and loss are numpy's from predict's logits
logits = np.asarray(model.predict(test_spectrogram_ds), np.float64)
yt = np.asarray(y_true)
accuracy = float(np.mean(np.argmax(logits, 1) == yt))
log_softmax = logits - logits.max(1, keepdims=True)
log_softmax -= np.log(np.exp(log_softmax).sum(1, keepdims=True))
np.testing.assert_allclose(results['accuracy'], accuracy, rtol=1e-6)
np.testing.assert_allclose(results['loss'], -log_softmax[np.arange(len(yt)), yt].mean(), rtol=1e-4)

confusion_mtx = em.math.confusion_matrix(y_true, y_pred)
expected = np.zeros((num_labels, num_labels), np.int64)
np.add.at(expected, (yt, np.asarray(y_pred)), 1)
np.testing.assert_array_equal(np.asarray(confusion_mtx), expected)
assert np.trace(expected) / expected.sum() == accuracy
print(np.asarray(confusion_mtx))
print('test accuracy', accuracy)
assert SHORT or accuracy >= 0.6, accuracy

# Added: the logits (inference mode) against a float64 numpy forward pass of the network
def np_forward(specs):
  x = np.stack([np_resize_bilinear(s, (32, 32)) for s in np.asarray(specs, np.float64)])
  x = (x - np.ravel(norm_layer.mean)) / np.sqrt(np.ravel(norm_layer.variance))
  for conv in model.layers[2:4]:  # 'valid' 3x3 convolutions, stride 1, relu
    kernel, bias = (np.asarray(w, np.float64) for w in conv.get_weights())
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(1, 2))
    x = np.maximum(np.einsum('bhwcij,ijco->bhwo', windows, kernel) + bias, 0)
  b, h, w, c = x.shape  # 2x2 max pooling, stride 2
  x = x[:, :h // 2 * 2, :w // 2 * 2].reshape(b, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))
  x = x.reshape(b, -1)
  (k1, b1), (k2, b2) = ((np.asarray(w, np.float64) for w in d.get_weights())
                        for d in (model.layers[7], model.layers[9]))
  return np.maximum(x @ k1 + b1, 0) @ k2 + b2


np.testing.assert_allclose(model(example_spectrograms[:8], training=False).numpy(),
                           np_forward(example_spectrograms[:8]), rtol=1e-3, atol=1e-3)

# ---- Run inference on an audio file ------------------------------------------------------
x = data_dir/'no/01bb6a2a_nohash_0.wav'
# GAP 4 (by design): x = tf.io.read_file(str(x))
x = pathlib.Path(str(x)).read_bytes()
# GAP 1: x, sample_rate = tf.audio.decode_wav(x, desired_channels=1, desired_samples=16000,)
x, sample_rate = decode_wav(x, desired_channels=1, desired_samples=16000,)
assert int(sample_rate) == 16000 and tuple(x.shape) == (16000, 1)
x = em.squeeze(x, axis=-1)
waveform = x
x = get_spectrogram(x)
x = x[em.newaxis,...]

prediction = model(x)
x_labels = ['no', 'yes', 'down', 'go', 'left', 'up', 'right', 'stop']
probabilities = em.nn_ops.softmax(prediction[0])
np.testing.assert_allclose(float(em.reduce_sum(probabilities)), 1.0, rtol=1e-5)
print('probabilities:', np.round(probabilities.numpy(), 3))
assert SHORT or label_names[int(em.argmax(prediction[0]))] == 'no'


# ---- Export the model with preprocessing -------------------------------------------------
# GAP 8: class ExportModel(tf.Module):
class ExportModel:
  def __init__(self, model):
    self.model = model

    # Accept either a string-filename or a batch of waveforms.
    # You could add additional signatures for a single wave, or a ragged-batch.
    # GAP 9: self.__call__.get_concrete_function(
    #     x=tf.TensorSpec(shape=(), dtype=tf.string))
    # GAP 9: self.__call__.get_concrete_function(
    #    x=tf.TensorSpec(shape=[None, 16000], dtype=tf.float32))

  @graph.function
  def __call__(self, x):
    # If they pass a string, load the file and decode it.
    # GAP 4 (by design): if x.dtype == tf.string:
    if isinstance(x, str):
      # GAP 4 (by design): x = tf.io.read_file(x)
      x = pathlib.Path(x).read_bytes()
      # GAP 1: x, _ = tf.audio.decode_wav(x, desired_channels=1, desired_samples=16000,)
      x, _ = decode_wav(x, desired_channels=1, desired_samples=16000,)
      x = em.squeeze(x, axis=-1)
      x = x[em.newaxis, :]

    x = get_spectrogram(x)
    result = self.model(x, training=False)

    class_ids = em.argmax(result, axis=-1)
    # GAP 4 (by design): class_names = tf.gather(label_names, class_ids)
    class_names = label_names[np.asarray(class_ids)]
    return {'predictions':result,
            'class_ids': class_ids,
            'class_names': class_names}


export = ExportModel(model)
out = export(str(data_dir/'no/01bb6a2a_nohash_0.wav'))
print(out['class_names'])
np.testing.assert_allclose(out['predictions'].numpy(), model(x, training=False).numpy(),
                           rtol=1e-5, atol=1e-6)
assert list(out['class_names']) == [label_names[int(em.argmax(prediction[0]))]]

# GAP 10: tf.saved_model.save(export, "saved")
export.model.save("saved.keras")
# GAP 10: imported = tf.saved_model.load("saved")
imported = ExportModel(models.load_model("saved.keras"))
batch = example_audio[:5]
got, want = imported(waveform[em.newaxis, :]), export(waveform[em.newaxis, :])
np.testing.assert_array_equal(got['predictions'].numpy(), want['predictions'].numpy())
got, want = imported(batch), export(batch)
np.testing.assert_array_equal(got['predictions'].numpy(), want['predictions'].numpy())
np.testing.assert_array_equal(np.asarray(got['class_ids']),
                              np.argmax(model.predict(get_spectrogram(batch), verbose=0), -1))
assert list(got['class_names']) == list(label_names[np.asarray(got['class_ids'])])

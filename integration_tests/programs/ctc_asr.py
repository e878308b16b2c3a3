"""Port of keras-team/keras-io examples/audio/ctc_asr.py ("Automatic Speech Recognition
using CTC", the tf.keras version, last modified 2021/09/26): the LJSpeech archive fetched
with get_file, metadata.csv read with pandas (file name, normalized transcription),
shuffled and split 90/10, a vocabulary of 30 characters mapped to ids and back by two
StringLookup layers (oov_token=""), a tf.data pipeline (read and decode each WAV, the
magnitude of tf.signal.stft (frame_length 256, frame_step 160, fft_length 384) to the
power 0.5, each frame standardized over its frequencies; the lower-cased transcription's
characters to ids) batched by padded_batch, a DeepSpeech2-like functional model (Reshape to
an image, two Conv2D + BatchNormalization + ReLU blocks, Reshape to a sequence,
Bidirectional GRUs (reset_after) with Dropout, Dense + ReLU + Dropout, a softmax Dense with
a class for CTC's blank) compiled with Adam and a loss function that calls
keras.backend.ctc_batch_cost, fit with a callback that decodes the validation set greedily
(keras.backend.ctc_decode) and prints its word error rate (jiwer), then the same decoding
after training.

Upstream: https://github.com/keras-team/keras-io/blob/ad4fc805f5e1a4a4c0bcdd416aa9feac6608fb6c/examples/audio/ctc_asr.py
(the tf.keras version; keras-io's Keras 3 rewrite of 2026/01/27, PR #2262, replaced
tf.signal.stft and the keras.backend CTC functions by keras.ops)
Changed: names only (tensorflow -> ember.core as em: tf.squeeze, tf.cast, tf.float32,
tf.signal.stft, tf.abs, tf.math.pow, tf.math.reduce_mean, tf.math.reduce_std, tf.shape,
tf.ones, tf.transpose, tf.expand_dims, tf.math.log; tf.data -> ember.data,
tf.data.AUTOTUNE -> data.AUTOTUNE; tensorflow.keras / keras.layers -> ember.nn (kept as
the `keras.` prefix) / ember.nn.layers: keras.utils.get_file, StringLookup, Input,
Reshape, Conv2D, BatchNormalization, ReLU, GRU, Bidirectional, Dropout, Dense,
keras.Model, keras.optimizers.Adam, keras.callbacks.Callback, keras.backend.epsilon),
except the GAPs below. The figures (matplotlib, IPython's display.Audio) are dropped; what
they would show is asserted. pandas and jiwer are not installed: small stand-ins (below)
serve read_csv(sep="|", header=None, quoting=3), the columns, column selection,
sample(frac=1) (pandas draws np.random.choice(n, n, replace=False) from numpy's global
state), reset_index, head, row slices and len; and jiwer.wer (the corpus's word edits over
its reference words, words split on whitespace). The 2.6 GB LJSpeech archive cannot be had
here (no network): a SYNTHETIC one of its layout is written where get_file finds it
($KERAS_HOME/datasets/LJSpeech-1.1, KERAS_HOME a temporary directory), a tar.bz2 of
LJSpeech-1.1/metadata.csv (rows id|transcription|normalized transcription, UTF-8, no
quoting) and LJSpeech-1.1/wavs/LJnnn-nnnn.wav (mono 16-bit PCM at 22,050 Hz). Each
transcription is a short sentence as LJSpeech's are written (a capital first letter, one
or two words of one or two characters drawn uniformly from the 26 letters and the
apostrophe, ended by ".", "?" or "!" with odds 2:1:1); the clip "speaks" it as a sequence
of tones, one per character of the vocabulary (each of the 30 its own pitch, 689 to 10,680
Hz, 344 Hz apart: 6 bins of the 384-point FFT), with a jitter of +-40 Hz, a vibrato, a 5
ms attack and decay, a random loudness, each in a slot of 4 frames (640 samples, the tone
filling 60-80% of it), on a noise floor, after 4 frames of lead; "." (outside the
vocabulary: id 0, as upstream's lookup maps LJSpeech's commas and periods) is silent, as
punctuation is in speech, and so is the capital. So a clip's length is set by its number
of tones and its characters can be read from it, as a speaker's can. Reduced
(EMBER_PROGRAMS_FULL=1 restores upstream's 13,100 files, batch 32, rnn_units 512, 5 GRU
layers, 32 filters, learning rate 1e-4 and its 1 epoch): 320 files (288 train, 32
validate), batch 4, build_model(rnn_layers=2, rnn_units=64), 8 filters in each Conv2D
(upstream's 32; its 11x41 and 11x21 kernels and strides are kept); raised: Adam's learning
rate 3e-3 and 6 epochs of 72 steps (upstream's one epoch of 13,100 files in batches of 32
at 1e-4 is ~370 steps; CTC first sits on the plateau where it emits only blanks, and at
1e-4 this small run would not leave it: at 3e-3 it leaves it within 1 to 3 epochs).
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 16 files, 1 epoch, no check on what training
reached.
Added: seeds for numpy and ember; the table as read and shuffled (numpy's permutation) and
the split; the vocabulary ("" at 0, then the 30 characters) and its int64 ids, the
inverse lookup ("" for the decoder's -1 and for the blank); decode_wav's samples equal to
those written, / 32768; a spectrogram against numpy (float64: frames of 256 samples every
160, times the periodic Hann window, rfft of 384 points, magnitude, square root, each
frame minus its mean over its 193 frequencies, over their population standard deviation
+ 1e-10) and its label ids; a padded batch: shapes, dtypes, each example equal to its own
unpadded element and zeros beyond it (the labels padded with 0, the OOV id); the
visualization's trimmed spectrogram and title; the ctc_batch_cost stand-in against numpy's
CTC (the forward recursion in float64 on the softmax of log(y_pred + 1e-7), which
tf.compat.v1.nn.ctc_loss sees; blank the last class; the padding zeros of a label are
labels, as ctc_label_dense_to_sparse keeps every id within label_length) and its gradient
against central differences; every layer's parameter count against Keras's formulas (and
the total at upstream's sizes: 26,628,480, its rendered summary's) and the output shape;
predict's softmax rows; the model's probabilities on a validation batch against a float64
numpy forward pass of the trained weights (TF's "same" padding, BatchNormalization's
moving statistics with epsilon 1e-3, Keras's GRU with reset_after: gates z, r, h, the
reset gate on the recurrent product plus its bias, each Bidirectional's backward outputs
put back in step order); the greedy
decoding against numpy's (best class per frame, runs merged, blanks dropped, ids to
characters with "" for 0) and ctc_decode's dense (samples, frames) int64 result and
score; evaluate equal to numpy's CTC of predict's probabilities averaged over the texts
(Keras's loss function reduced by sum_over_batch_size, each batch weighted by its size)
and to the last val_loss; the wer stand-in on known cases.
What training reached (CPU run): CTC scores a distribution over label sequences, so a
model that does not tell which characters the tones are cannot average below their
entropy given what else it could hear, the clip's length (its number of tones):
H(text | tones) = 8.47 nats (computed below by enumerating the sentence shapes; 10.19
without the length; untrained models score 29-35, asserted above 8.47). The validation
loss must fall below half of it (4.24), and the greedy transcriptions must have a
character error rate (edit distance over reference characters) under 0.1 and a word error
rate under 0.25 (chance: 26 of 27 characters wrong). Ten seeds (data and weights) reached
val_loss 0.79-2.02 (most of it the count of a label's padding zeros, which a clip tells
only up to its slots; it moves by up to 0.4 from one epoch to the next), CER 0.009-0.034,
WER 0.02-0.074.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
1. nn.utils.get_file("LJSpeech-1.1", origin, untar=True) keeps the archive as
datasets/LJSpeech-1.1 (a given name with a dot) and extracts it into, and returns,
datasets/LJSpeech-1_extracted, which holds the archive's top folder LJSpeech-1.1/ (Keras
3's rule, keras/src/utils/file_utils.py; keras-io's Keras 3 rewrite reads data_path +
"/LJSpeech-1.1/wavs/"), where tf.keras keeps it as datasets/LJSpeech-1.1.tar.gz, extracts
it beside itself and returns datasets/LJSpeech-1.1, the archive's top folder; so
upstream's data_path + "/wavs/" and + "/metadata.csv" name nothing (FileNotFoundError at
read_csv): data_path + "/LJSpeech-1.1/..." stands in.
2. (by design, docs/guide/preprocessing.md: ember has no string tensors) tf.io.read_file,
tf.strings.lower, tf.strings.unicode_split and tf.strings.reduce_join(...).numpy().decode
(no em.io or em.strings: AttributeError): Path.read_bytes, str.lower, list(str) and
"".join stand in.
3. no tf.audio.decode_wav (em.audio: AttributeError): the stdlib wave module and numpy
stand in (decode_wav below: TF's int16 / 32768 as float32 [samples, channels], and the
rate).
4. (by design, docs/guide/input-pipelines.md: a batch's elements are numpy arrays) batch[0]
[0].numpy() (AttributeError): .numpy() is dropped.
5. no keras.backend.ctc_batch_cost (nn.backend has epsilon, floatx and the like:
AttributeError): tf.keras's body stands in, with em.nn_ops.ctc_loss(..., blank_index=-1)
on the dense labels for tf.compat.v1.nn.ctc_loss on ctc_label_dense_to_sparse's
SparseTensor (ember has no sparse tensors).
6. no keras.backend.ctc_decode (AttributeError): tf.keras's body stands in, with
em.nn_ops.ctc_greedy_decoder (which returns the dense labels tf.keras makes of TF's
SparseTensor with sparse.to_dense(default_value=-1)).
"""

import io
import itertools
import math
import os
import tarfile
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

import ember.core as em
from ember import data, nn, tape
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
T0 = time.time()
_tmp = tempfile.TemporaryDirectory()
os.environ["KERAS_HOME"] = _tmp.name  # get_file's cache: where the stand-in archive is put
N_FILES = 13100 if FULL else 16 if SHORT else 320

# ---- Added: the synthetic LJSpeech archive (see the header) ------------------------------
RATE = 22050
VOCABULARY = "abcdefghijklmnopqrstuvwxyz'?! "  # upstream's accepted characters, in its order
PITCH = {c: (6 * k + 12) * RATE / 384 for k, c in enumerate(VOCABULARY)}  # Hz, 6 FFT bins apart
SLOT, LEAD = 4 * 160, 4 * 160  # samples: a character's slot, the lead before the first
WORD_CHARACTERS = "abcdefghijklmnopqrstuvwxyz'"
ENDINGS = (".", ".", "?", "!")


def make_sentence(rng):
    """One or two words of one or two characters, a capital first letter, an ending."""
    words = ["".join(rng.choice(list(WORD_CHARACTERS), int(rng.integers(1, 3))))
             for _ in range(int(rng.integers(1, 3)))]
    text = " ".join(words)
    return text[0].upper() + text[1:] + str(rng.choice(ENDINGS))


def speak(text, rng):
    """The clip of `text`: a tone in its slot for each character of the vocabulary (the
    others are silent), on a noise floor; int16."""
    tones = [c for c in text.lower() if c in PITCH]
    n = LEAD + SLOT * len(tones) + 96
    t = np.arange(n) / RATE
    out = rng.normal(0.0, rng.uniform(0.003, 0.015), n)
    for i, c in enumerate(tones):
        start = (LEAD + i * SLOT) / RATE
        length = rng.uniform(0.6, 0.8) * SLOT / RATE
        f0 = PITCH[c] + rng.uniform(-40.0, 40.0)
        env = np.clip(np.minimum(t - start, start + length - t) / 0.005, 0.0, 1.0)
        phase = 2 * np.pi * (f0 * t + 15.0 * np.sin(2 * np.pi * 6.0 * t) / (2 * np.pi * 6.0))
        out += rng.uniform(0.15, 0.5) * env * np.sin(phase)
    return np.clip(np.round(out * 32767), -32768, 32767).astype(np.int16)


def write_ljspeech_archive(path, n, seed=0):
    """Added: the archive's layout with synthetic clips; returns {id: (text, int16 samples)}."""
    rng = np.random.default_rng(seed)
    written, rows = {}, []
    with tarfile.open(path, "w:bz2", compresslevel=1) as tar:
        def add(name, payload):
            info = tarfile.TarInfo(f"LJSpeech-1.1/{name}")
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))

        for i in range(n):
            file_id = f"LJ{1 + i // 400:03d}-{1 + i % 400:04d}"
            text = make_sentence(rng)
            pcm = speak(text, rng)
            buffer = io.BytesIO()
            with wave.open(buffer, "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(RATE)
                w.writeframes(pcm.tobytes())
            add(f"wavs/{file_id}.wav", buffer.getvalue())
            rows.append(f"{file_id}|{text}|{text}")
            written[file_id] = (text, pcm)
        add("metadata.csv", ("\n".join(rows) + "\n").encode("utf-8"))
    return written


os.makedirs(os.path.join(_tmp.name, "datasets"))
WRITTEN = write_ljspeech_archive(os.path.join(_tmp.name, "datasets", "LJSpeech-1.1"), N_FILES)
print(f"wrote {len(WRITTEN)} clips in {time.time() - T0:.1f} s")


# ---- Stand-ins for pandas and jiwer (not installed here): what the example asks of them --
class DataFrame:
    """Named columns (numpy object arrays, in order), as pandas holds them."""

    def __init__(self, columns):
        self._data = dict(columns)

    @property
    def columns(self):
        return list(self._data)

    @columns.setter
    def columns(self, names):
        assert len(names) == len(self._data)
        self._data = dict(zip(names, self._data.values()))

    def __getitem__(self, key):
        if isinstance(key, slice):  # rows by position (a RangeIndex)
            return DataFrame({k: v[key] for k, v in self._data.items()})
        if isinstance(key, list):
            return DataFrame({k: self._data[k] for k in key})
        return self._data[key]

    def __len__(self):
        return len(next(iter(self._data.values())))

    def sample(self, frac):
        # pandas: random_state None is numpy's global RandomState, and
        # rs.choice(n, size=round(frac * n), replace=False) chooses the rows
        rows = np.random.choice(len(self), size=round(frac * len(self)), replace=False)
        return DataFrame({k: v[rows] for k, v in self._data.items()})

    def reset_index(self, drop):
        assert drop  # the positions are the index here
        return self

    def head(self, n=5):
        return self[:n]


class pd:  # the module's name
    @staticmethod
    def read_csv(filepath_or_buffer, sep, header, quoting):
        assert header is None and quoting == 3  # no header row, csv.QUOTE_NONE
        lines = Path(filepath_or_buffer).read_text(encoding="utf-8").splitlines()
        cells = [line.split(sep) for line in lines if line]
        return DataFrame({i: np.array([row[i] for row in cells], dtype=object)
                          for i in range(len(cells[0]))})


def wer(reference, hypothesis):
    """jiwer.wer of two lists: the words' edit distance summed over the pairs, over the
    number of reference words (jiwer's default transform: spaces collapsed and stripped,
    then split into words)."""
    edits = sum(edit_distance(r.split(), h.split()) for r, h in zip(reference, hypothesis))
    return edits / sum(len(r.split()) for r in reference)


def edit_distance(a, b):
    """Levenshtein distance between two sequences."""
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            previous, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, previous + (x != y))
    return d[-1]


assert wer(["a b c", "d"], ["a x c", "d e"]) == 2 / 4  # a substitution and an insertion
assert wer([" a  b "], ["a b"]) == 0.0 and edit_distance("kitten", "sitting") == 3


def decode_wav(contents):  # GAP 3's stand-in
    """tf.audio.decode_wav's contract on 16-bit PCM: float32 [samples, channels] scaled by
    1/32768, and the sample rate (int32)."""
    with wave.open(io.BytesIO(contents)) as w:
        assert w.getsampwidth() == 2
        channels, rate = w.getnchannels(), w.getframerate()
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, channels)
    return em.constant(pcm.astype(np.float32) / 32768.0), em.constant(rate, dtype=em.int32)


"""
## Load the LJSpeech Dataset
"""

data_url = "https://data.keithito.com/data/speech/LJSpeech-1.1.tar.bz2"
data_path = keras.utils.get_file("LJSpeech-1.1", data_url, untar=True)
# GAP 1: wavs_path = data_path + "/wavs/"
wavs_path = data_path + "/LJSpeech-1.1/wavs/"
# GAP 1: metadata_path = data_path + "/metadata.csv"
metadata_path = data_path + "/LJSpeech-1.1" + "/metadata.csv"


# Read metadata file and parse it
metadata_df = pd.read_csv(metadata_path, sep="|", header=None, quoting=3)
metadata_df.columns = ["file_name", "transcription", "normalized_transcription"]
metadata_df = metadata_df[["file_name", "normalized_transcription"]]
permutation = np.random.RandomState(0).choice(N_FILES, N_FILES, replace=False)  # added
metadata_df = metadata_df.sample(frac=1).reset_index(drop=True)
metadata_df.head(3)

# Added: every row, in numpy's shuffled order (the global seed 0, as pandas draws it)
assert metadata_df.columns == ["file_name", "normalized_transcription"]
assert list(metadata_df["file_name"]) == [list(WRITTEN)[i] for i in permutation]
assert all(WRITTEN[f][0] == t for f, t in zip(metadata_df["file_name"],
                                                 metadata_df["normalized_transcription"]))


"""
We now split the data into training and validation set.
"""

split = int(len(metadata_df) * 0.90)
df_train = metadata_df[:split]
df_val = metadata_df[split:]

print(f"Size of the training set: {len(df_train)}")
print(f"Size of the training set: {len(df_val)}")
assert len(df_train) == int(0.9 * N_FILES) and len(df_train) + len(df_val) == N_FILES  # added


"""
## Preprocessing
"""

# The set of characters accepted in the transcription.
characters = [x for x in "abcdefghijklmnopqrstuvwxyz'?! "]
# Mapping characters to integers
char_to_num = keras.layers.StringLookup(vocabulary=characters, oov_token="")
# Mapping integers back to original characters
num_to_char = keras.layers.StringLookup(
    vocabulary=char_to_num.get_vocabulary(), oov_token="", invert=True
)

print(
    f"The vocabulary is: {char_to_num.get_vocabulary()} "
    f"(size ={char_to_num.vocabulary_size()})"
)
# Added: Keras's vocabulary, the OOV token "" at 0 then the characters; int64 ids; the
# inverse gives "" for 0, for the decoder's padding -1 and for the blank (31)
assert char_to_num.get_vocabulary() == [""] + characters and char_to_num.vocabulary_size() == 31
ids = char_to_num(list("it's a?."))
assert ids.dtype == em.int64 and ids.numpy().tolist() == [9, 20, 27, 19, 30, 1, 28, 0]
assert list(num_to_char(em.constant([-1, 0, 31, 30, 1], dtype=em.int64))) == ["", "", "", " ", "a"]

# An integer scalar Tensor. The window length in samples.
frame_length = 256
# An integer scalar Tensor. The number of samples to step.
frame_step = 160
# An integer scalar Tensor. The size of the FFT to apply.
# If not provided, uses the smallest power of 2 enclosing frame_length.
fft_length = 384


def encode_single_sample(wav_file, label):
    ###########################################
    ##  Process the Audio
    ##########################################
    # 1. Read wav file
    # GAP 2 (by design): file = tf.io.read_file(wavs_path + wav_file + ".wav")
    file = Path(wavs_path + wav_file + ".wav").read_bytes()
    # 2. Decode the wav file
    # GAP 3: audio, _ = tf.audio.decode_wav(file)
    audio, _ = decode_wav(file)
    audio = em.squeeze(audio, axis=-1)
    # 3. Change type to float
    audio = em.cast(audio, em.float32)
    # 4. Get the spectrogram
    spectrogram = em.signal.stft(
        audio, frame_length=frame_length, frame_step=frame_step, fft_length=fft_length
    )
    # 5. We only need the magnitude, which can be derived by applying tf.abs
    spectrogram = em.abs(spectrogram)
    spectrogram = em.math.pow(spectrogram, 0.5)
    # 6. normalisation
    means = em.math.reduce_mean(spectrogram, 1, keepdims=True)
    stddevs = em.math.reduce_std(spectrogram, 1, keepdims=True)
    spectrogram = (spectrogram - means) / (stddevs + 1e-10)
    ###########################################
    ##  Process the label
    ##########################################
    # 7. Convert label to Lower case
    # GAP 2 (by design): label = tf.strings.lower(label)
    label = str(label).lower()
    # 8. Split the label
    # GAP 2 (by design): label = tf.strings.unicode_split(label, input_encoding="UTF-8")
    label = list(label)
    # 9. Map the characters in label to numbers
    label = char_to_num(label)
    # 10. Return a dict as our model is expecting two inputs
    return spectrogram, label


def np_spectrogram(pcm):
    """Added: steps 2-6 in float64 numpy: frames of 256 every 160 samples, the periodic
    Hann window (tf.signal.hann_window's default), rfft of 384 points, magnitude ** 0.5,
    each frame standardized over its frequencies (population std, + 1e-10)."""
    audio = pcm.astype(np.float64) / 32768.0
    n_frames = 1 + (len(audio) - frame_length) // frame_step
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(frame_length) / frame_length)
    frames = np.stack([audio[i * frame_step:i * frame_step + frame_length] for i in range(n_frames)])
    s = np.abs(np.fft.rfft(frames * window, fft_length)) ** 0.5
    return (s - s.mean(1, keepdims=True)) / (s.std(1, keepdims=True) + 1e-10)


def np_label(text):
    """Added: the ids of a transcription, lower-cased, 0 for a character outside the list."""
    return np.array([1 + VOCABULARY.index(c) if c in VOCABULARY else 0 for c in text.lower()])


# Added: decode_wav gives the samples written; one element against numpy
first_id, first_text = df_train["file_name"][0], df_train["normalized_transcription"][0]
first_audio, first_rate = decode_wav(Path(wavs_path + first_id + ".wav").read_bytes())
assert first_audio.shape == (len(WRITTEN[first_id][1]), 1) and int(first_rate) == RATE
np.testing.assert_array_equal(first_audio.numpy()[:, 0], WRITTEN[first_id][1] / 32768.0)
first_spectrogram, first_label = encode_single_sample(first_id, first_text)
assert first_spectrogram.shape == (1 + (len(WRITTEN[first_id][1]) - 256) // 160, 193)
assert first_spectrogram.dtype == em.float32 and first_label.dtype == em.int64
np.testing.assert_allclose(first_spectrogram.numpy(), np_spectrogram(WRITTEN[first_id][1]), atol=2e-4)
np.testing.assert_array_equal(first_label.numpy(), np_label(first_text))


"""
## Creating `Dataset` objects
"""

batch_size = 32 if FULL else 4
# Define the trainig dataset
train_dataset = data.Dataset.from_tensor_slices(
    (list(df_train["file_name"]), list(df_train["normalized_transcription"]))
)
train_dataset = (
    train_dataset.map(encode_single_sample, num_parallel_calls=data.AUTOTUNE)
    .padded_batch(batch_size)
    .prefetch(buffer_size=data.AUTOTUNE)
)

# Define the validation dataset
validation_dataset = data.Dataset.from_tensor_slices(
    (list(df_val["file_name"]), list(df_val["normalized_transcription"]))
)
validation_dataset = (
    validation_dataset.map(encode_single_sample, num_parallel_calls=data.AUTOTUNE)
    .padded_batch(batch_size)
    .prefetch(buffer_size=data.AUTOTUNE)
)


"""
## Visualize the data
"""

# The figure (the spectrogram with its text as the title, the wave, an audio player) is
# dropped; what it shows is checked.
for batch in train_dataset.take(1):
    # GAP 4 (by design): spectrogram = batch[0][0].numpy()
    spectrogram = batch[0][0]
    spectrogram = np.array([np.trim_zeros(x) for x in np.transpose(spectrogram)])
    label = batch[1][0]
    # Spectrogram
    # GAP 2 (by design): label = tf.strings.reduce_join(num_to_char(label)).numpy().decode("utf-8")
    label = "".join(num_to_char(label))
    # Wav
    # GAP 2 (by design): file = tf.io.read_file(wavs_path + list(df_train["file_name"])[0] + ".wav")
    file = Path(wavs_path + list(df_train["file_name"])[0] + ".wav").read_bytes()
    # GAP 3: audio, _ = tf.audio.decode_wav(file)
    audio, _ = decode_wav(file)
    audio = audio.numpy()

    # Added: the padded batch (each element as it was alone, then zeros), the picture
    # (the first spectrogram without its padding frames, frequencies as rows), its title
    spectrograms, labels = batch
    assert spectrograms.dtype == np.float32 and labels.dtype == np.int64
    assert spectrograms.ndim == 3 and spectrograms.shape[::2] == (batch_size, 193)
    assert labels.shape[0] == batch_size
    for i in range(batch_size):
        text, pcm = WRITTEN[df_train["file_name"][i]]
        expected, ids = np_spectrogram(pcm), np_label(text)
        assert spectrograms.shape[1] >= len(expected) and labels.shape[1] >= len(ids)
        np.testing.assert_allclose(spectrograms[i, :len(expected)], expected, atol=2e-4)
        assert not spectrograms[i, len(expected):].any() and not labels[i, len(ids):].any()
        np.testing.assert_array_equal(labels[i, :len(ids)], ids)
    assert max(len(np_spectrogram(WRITTEN[f][1])) for f in df_train["file_name"][:batch_size]) \
        == spectrograms.shape[1]
    assert spectrogram.shape == (193, len(np_spectrogram(WRITTEN[first_id][1])))
    assert label == first_text.lower().replace(".", "")
    assert audio.shape == (len(WRITTEN[first_id][1]), 1)


"""
## Model

We first define the CTC Loss function.
"""


def np_ctc_loss(probs, label, blank):
    """Added: -log p(label | probs) by CTC's forward recursion in float64 numpy (the
    probabilities rescaled at each step), for one example's (T, C) probabilities."""
    ext = [blank]
    for c in label:
        ext += [int(c), blank]
    alpha = np.zeros(len(ext))
    alpha[:2] = probs[0, ext[:2]]
    log_scale = 0.0
    for t in range(1, len(probs)):
        new = alpha.copy()
        new[1:] += alpha[:-1]
        for s in range(2, len(ext)):
            if ext[s] != blank and ext[s] != ext[s - 2]:
                new[s] += alpha[s - 2]
        alpha = new * probs[t, ext]
        log_scale += np.log(alpha.sum())
        alpha /= alpha.sum()
    return -(np.log(alpha[-1] + alpha[-2]) + log_scale)


def np_ctc_batch_cost(y_true, y_pred):
    """Added: keras.backend.ctc_batch_cost on full-length inputs and labels, in numpy: TF's
    ctc_loss takes log(y_pred + epsilon) as logits, so per step it sees their softmax,
    (y_pred + 1e-7) / sum(y_pred + 1e-7); the blank is the last class."""
    p = y_pred.astype(np.float64) + 1e-7
    p /= p.sum(axis=-1, keepdims=True)
    return np.array([[np_ctc_loss(pi, yi, p.shape[-1] - 1)] for pi, yi in zip(p, y_true)])


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """Stand-in (GAP 5) for keras.backend.ctc_batch_cost: tf.keras's body, with
    em.nn_ops.ctc_loss (TF 2's tf.nn.ctc_loss, dense labels; blank_index=-1: the last
    class, the blank of tf.compat.v1.nn.ctc_loss) for tf.compat.v1.nn.ctc_loss on the
    SparseTensor of ctc_label_dense_to_sparse (ember has no sparse tensors)."""
    label_length = em.cast(em.squeeze(label_length, axis=-1), em.int32)
    input_length = em.cast(em.squeeze(input_length, axis=-1), em.int32)
    y_pred = em.math.log(em.transpose(y_pred, perm=[1, 0, 2]) + keras.backend.epsilon())
    return em.expand_dims(
        em.nn_ops.ctc_loss(em.cast(y_true, em.int32), y_pred, label_length, input_length,
                           blank_index=-1),
        1,
    )


def CTCLoss(y_true, y_pred):
    # Compute the training-time loss value
    batch_len = em.cast(em.shape(y_true)[0], dtype="int64")
    input_length = em.cast(em.shape(y_pred)[1], dtype="int64")
    label_length = em.cast(em.shape(y_true)[1], dtype="int64")

    input_length = input_length * em.ones(shape=(batch_len, 1), dtype="int64")
    label_length = label_length * em.ones(shape=(batch_len, 1), dtype="int64")

    # GAP 5: loss = keras.backend.ctc_batch_cost(y_true, y_pred, input_length, label_length)
    loss = ctc_batch_cost(y_true, y_pred, input_length, label_length)
    return loss


# Added: CTCLoss against numpy's CTC on random probabilities, with labels padded by zeros
# (the OOV id: a label like any other here, the blank being 31) and repeated ids, and its
# gradient against numpy's central differences
assert keras.backend.epsilon() == 1e-7
rng = np.random.default_rng(1)
probe_pred = rng.dirichlet(np.ones(32), size=(3, 12)).astype(np.float32)
probe_true = np.array([[3, 3, 5, 0, 0], [7, 30, 7, 28, 0], [1, 1, 1, 1, 1]], np.int64)
probe_cost = CTCLoss(probe_true, probe_pred)
assert probe_cost.shape == (3, 1) and probe_cost.dtype == em.float32
np.testing.assert_allclose(probe_cost.numpy(), np_ctc_batch_cost(probe_true, probe_pred), rtol=1e-5)
probe_var = em.Variable(probe_pred[:1])
with tape.GradientTape() as g:
    cost = CTCLoss(probe_true[:1], probe_var)
grad = g.gradient(cost, probe_var).numpy()[0]
fd = np.zeros_like(grad, dtype=np.float64)
for t, c in np.ndindex(*fd.shape):
    hi, lo = probe_pred[:1].astype(np.float64), probe_pred[:1].astype(np.float64)
    hi[0, t, c] += 1e-6
    lo[0, t, c] -= 1e-6
    fd[t, c] = (np_ctc_batch_cost(probe_true[:1], hi) - np_ctc_batch_cost(probe_true[:1], lo))[0, 0] / 2e-6
np.testing.assert_allclose(grad, fd, rtol=2e-3, atol=2e-3 * np.abs(fd).max())


"""
We now define our model. We will define a model similar to
[DeepSpeech2](https://nvidia.github.io/OpenSeq2Seq/html/speech-recognition/deepspeech2.html).
"""

CONV_FILTERS = 32 if FULL else 8  # upstream's 32 (reduced, see the header)


def build_model(input_dim, output_dim, rnn_layers=5, rnn_units=128):
    """Model similar to DeepSpeech2."""
    # Model's input
    input_spectrogram = layers.Input((None, input_dim), name="input")
    # Expand the dimension to use 2D CNN.
    x = layers.Reshape((-1, input_dim, 1), name="expand_dim")(input_spectrogram)
    # Convolution layer 1
    x = layers.Conv2D(
        filters=CONV_FILTERS,
        kernel_size=[11, 41],
        strides=[2, 2],
        padding="same",
        use_bias=False,
        name="conv_1",
    )(x)
    x = layers.BatchNormalization(name="conv_1_bn")(x)
    x = layers.ReLU(name="conv_1_relu")(x)
    # Convolution layer 2
    x = layers.Conv2D(
        filters=CONV_FILTERS,
        kernel_size=[11, 21],
        strides=[1, 2],
        padding="same",
        use_bias=False,
        name="conv_2",
    )(x)
    x = layers.BatchNormalization(name="conv_2_bn")(x)
    x = layers.ReLU(name="conv_2_relu")(x)
    # Reshape the resulted volume to feed the RNNs layers
    x = layers.Reshape((-1, x.shape[-2] * x.shape[-1]))(x)
    # RNN layers
    for i in range(1, rnn_layers + 1):
        recurrent = layers.GRU(
            units=rnn_units,
            activation="tanh",
            recurrent_activation="sigmoid",
            use_bias=True,
            return_sequences=True,
            reset_after=True,
            name=f"gru_{i}",
        )
        x = layers.Bidirectional(
            recurrent, name=f"bidirectional_{i}", merge_mode="concat"
        )(x)
        if i < rnn_layers:
            x = layers.Dropout(rate=0.5)(x)
    # Dense layer
    x = layers.Dense(units=rnn_units * 2, name="dense_1")(x)
    x = layers.ReLU(name="dense_1_relu")(x)
    x = layers.Dropout(rate=0.5)(x)
    # Classification layer
    output = layers.Dense(units=output_dim + 1, activation="softmax")(x)
    # Model
    model = keras.Model(input_spectrogram, output, name="DeepSpeech_2")
    # Optimizer
    opt = keras.optimizers.Adam(learning_rate=1e-4 if FULL else 3e-3)
    # Compile the model and return
    model.compile(optimizer=opt, loss=CTCLoss)
    return model


RNN_LAYERS, RNN_UNITS = (5, 512) if FULL else (2, 64)
# Get the model
model = build_model(
    input_dim=fft_length // 2 + 1,
    output_dim=char_to_num.vocabulary_size(),
    rnn_layers=RNN_LAYERS,  # upstream: the default, 5
    rnn_units=RNN_UNITS,  # upstream: 512
)
model.summary(line_length=110)


def expected_parameters(filters, rnn_layers, rnn_units):
    """Added: Keras's parameter counts ({layer: count}) of build_model at these sizes."""
    features = math.ceil(math.ceil(193 / 2) / 2) * filters  # strides of 2 on 193 frequencies: 49
    counts = {"conv_1": 11 * 41 * filters, "conv_1_bn": 4 * filters,
              "conv_2": 11 * 21 * filters * filters, "conv_2_bn": 4 * filters}
    for i in range(1, rnn_layers + 1):
        inputs = features if i == 1 else 2 * rnn_units
        # per direction: kernel, recurrent kernel, and reset_after's two biases
        counts[f"bidirectional_{i}"] = 2 * 3 * (rnn_units * (inputs + rnn_units) + 2 * rnn_units)
    counts["dense_1"] = (2 * rnn_units + 1) * 2 * rnn_units
    counts[model.layers[-1].name] = (2 * rnn_units + 1) * 32
    return counts


# Added: every layer's parameters; the output shape (frames halved by conv_1's stride)
for layer_name, count in expected_parameters(CONV_FILTERS, RNN_LAYERS, RNN_UNITS).items():
    assert model.get_layer(layer_name).count_params() == count, (layer_name, count)
assert model.count_params() == sum(expected_parameters(CONV_FILTERS, RNN_LAYERS, RNN_UNITS).values())
# upstream's model (its rendered summary: 14,432 for conv_1, 6,395,904 for bidirectional_1)
assert sum(expected_parameters(32, 5, 512).values()) == 26628480
assert tuple(model.output_shape) == (None, None, 32), model.output_shape


"""
## Training and Evaluating
"""


def ctc_decode(y_pred, input_length, greedy=True):
    """Stand-in (GAP 6) for keras.backend.ctc_decode: tf.keras's body (greedy), with
    em.nn_ops.ctc_greedy_decoder, which returns the dense labels (samples, steps) padded
    with -1 that tf.keras makes of TF's SparseTensor with sparse.to_dense."""
    assert greedy  # upstream decodes greedily; beam search is em.nn_ops.ctc_beam_search_decoder
    y_pred = em.math.log(em.transpose(y_pred, perm=[1, 0, 2]) + keras.backend.epsilon())
    input_length = em.cast(input_length, em.int32)
    decoded, log_prob = em.nn_ops.ctc_greedy_decoder(inputs=y_pred, sequence_length=input_length)
    return decoded, log_prob


# A utility function to decode the output of the network
def decode_batch_predictions(pred):
    input_len = np.ones(pred.shape[0]) * pred.shape[1]
    # Use greedy search. For complex tasks, you can use beam search
    # GAP 6: results = keras.backend.ctc_decode(pred, input_length=input_len, greedy=True)[0][0]
    results = ctc_decode(pred, input_length=input_len, greedy=True)[0][0]
    # Iterate over the results and get back the text
    output_text = []
    for result in results:
        # GAP 2 (by design): result = tf.strings.reduce_join(num_to_char(result)).numpy().decode("utf-8")
        result = "".join(num_to_char(result))
        output_text.append(result)
    return output_text


# A callback class to output a few transcriptions during training
class CallbackEval(keras.callbacks.Callback):
    """Displays a batch of outputs after every epoch."""

    def __init__(self, dataset):
        super().__init__()
        self.dataset = dataset

    def on_epoch_end(self, epoch: int, logs=None):
        predictions = []
        targets = []
        for batch in self.dataset:
            X, y = batch
            batch_predictions = model.predict(X)
            batch_predictions = decode_batch_predictions(batch_predictions)
            predictions.extend(batch_predictions)
            for label in y:
                # GAP 2 (by design): label = (
                #     tf.strings.reduce_join(num_to_char(label)).numpy().decode("utf-8")
                # )
                label = "".join(num_to_char(label))
                targets.append(label)
        wer_score = wer(targets, predictions)
        print("-" * 100)
        print(f"Word Error Rate: {wer_score:.4f}")
        print("-" * 100)
        for i in np.random.randint(0, len(predictions), 2):
            print(f"Target    : {targets[i]}")
            print(f"Prediction: {predictions[i]}")
            print("-" * 100)


# Added: what a model that does not read the characters cannot beat (see the header): the
# entropy of a transcription's ids given its number of tones, by enumerating the sentence
# shapes (words, their lengths, the ending) with their probabilities
shapes = {}
for n_words in (1, 2):
    for lengths in itertools.product((1, 2), repeat=n_words):
        for ending, p_ending in ((".", 0.5), ("?", 0.25), ("!", 0.25)):
            tones = sum(lengths) + n_words - 1 + (ending != ".")
            shapes[(lengths, ending)] = (0.5 * 0.5 ** n_words * p_ending, tones, sum(lengths))
p_tones = {}
for p, tones, _ in shapes.values():
    p_tones[tones] = p_tones.get(tones, 0.0) + p
TEXT_ENTROPY = sum(p * (-math.log(p) + letters * math.log(27)) for p, _, letters in shapes.values())
ENTROPY_GIVEN_TONES = sum(p * (-math.log(p / p_tones[tones]) + letters * math.log(27))
                          for p, tones, letters in shapes.values())
assert abs(sum(p for p, _, _ in shapes.values()) - 1) < 1e-12
print(f"entropy of a text {TEXT_ENTROPY:.2f} nats, given its number of tones "
      f"{ENTROPY_GIVEN_TONES:.2f}")
untrained_val_loss = model.evaluate(validation_dataset, verbose=0)
print(f"untrained val_loss {untrained_val_loss:.3f}")
assert untrained_val_loss > ENTROPY_GIVEN_TONES


"""
Let's start the training process.
"""

# Define the number of epochs.
epochs = 1 if FULL or SHORT else 6
# Callback function to check transcription on the val set.
validation_callback = CallbackEval(validation_dataset)
# Train the model
history = model.fit(
    train_dataset,
    validation_data=validation_dataset,
    epochs=epochs,
    callbacks=[validation_callback],
)
print({k: [round(v, 3) for v in vs] for k, vs in history.history.items()})
print(f"trained in {time.time() - T0:.1f} s from the start")
assert len(history.history["loss"]) == epochs and all(map(math.isfinite, history.history["val_loss"]))


"""
## Inference
"""

# Let's check results on more validation samples
predictions = []
targets = []
all_preds, all_labels = [], []  # added: kept for the checks below
for batch in validation_dataset:
    X, y = batch
    batch_predictions = model.predict(X)
    all_preds.append(batch_predictions)
    all_labels.append(y)
    batch_predictions = decode_batch_predictions(batch_predictions)
    predictions.extend(batch_predictions)
    for label in y:
        # GAP 2 (by design): label = tf.strings.reduce_join(num_to_char(label)).numpy().decode("utf-8")
        label = "".join(num_to_char(label))
        targets.append(label)
wer_score = wer(targets, predictions)
print("-" * 100)
print(f"Word Error Rate: {wer_score:.4f}")
print("-" * 100)
for i in np.random.randint(0, len(predictions), 5):
    print(f"Target    : {targets[i]}")
    print(f"Prediction: {predictions[i]}")
    print("-" * 100)


# ---- Added: the checks -------------------------------------------------------------------
def np_greedy_texts(pred):
    """The greedy decoding in numpy: best class per frame, runs merged, blanks (31)
    dropped, ids to characters ("" for 0, the OOV id)."""
    return ["".join(([""] + characters)[k] for k, _ in itertools.groupby(path) if k != 31)
            for path in pred.argmax(axis=-1)]


def np_forward(x):
    """The model in inference mode as a float64 numpy forward pass of its weights: TF's
    "same" padding (the extra row or column after), BatchNormalization's moving statistics
    (epsilon 1e-3), Keras's GRU with reset_after (gates z, r, h; the reset gate multiplies
    the recurrent product plus its bias), the backward GRU's outputs in step order."""
    def weights(name):
        return [w.astype(np.float64) for w in model.get_layer(name).get_weights()]

    def conv_same(x, kernel, strides):
        out_shape = [-(-n // s) for n, s in zip(x.shape[1:3], strides)]
        pads = [max((o - 1) * s + k - n, 0)
                for o, s, k, n in zip(out_shape, strides, kernel.shape, x.shape[1:3])]
        x = np.pad(x, ((0, 0), (pads[0] // 2, pads[0] - pads[0] // 2),
                       (pads[1] // 2, pads[1] - pads[1] // 2), (0, 0)))
        y = np.zeros((len(x), *out_shape, kernel.shape[-1]))
        for i, j in np.ndindex(*kernel.shape[:2]):
            y += x[:, i:i + strides[0] * out_shape[0]:strides[0],
                   j:j + strides[1] * out_shape[1]:strides[1]] @ kernel[i, j]
        return y

    def batch_norm_relu(x, name):
        gamma, beta, mean, variance = weights(name)
        return np.maximum((x - mean) / np.sqrt(variance + 1e-3) * gamma + beta, 0)

    def gru(x, kernel, recurrent, bias, backwards):
        h = np.zeros((len(x), recurrent.shape[0]))
        outputs = []
        for t in (range(x.shape[1])[::-1] if backwards else range(x.shape[1])):
            xz, xr, xh = np.split(x[:, t] @ kernel + bias[0], 3, axis=-1)
            hz, hr, hh = np.split(h @ recurrent + bias[1], 3, axis=-1)
            z, r = sigmoid(xz + hz), sigmoid(xr + hr)
            h = z * h + (1 - z) * np.tanh(xh + r * hh)
            outputs.append(h)
        return np.stack(outputs[::-1] if backwards else outputs, axis=1)

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    x = x.astype(np.float64)[..., None]
    x = batch_norm_relu(conv_same(x, weights("conv_1")[0], (2, 2)), "conv_1_bn")
    x = batch_norm_relu(conv_same(x, weights("conv_2")[0], (1, 2)), "conv_2_bn")
    x = x.reshape(len(x), x.shape[1], -1)
    for i in range(1, RNN_LAYERS + 1):
        w = weights(f"bidirectional_{i}")
        x = np.concatenate([gru(x, *w[:3], backwards=False), gru(x, *w[3:], backwards=True)], axis=-1)
    x = np.maximum(x @ weights("dense_1")[0] + weights("dense_1")[1], 0)
    logits = x @ weights(model.layers[-1].name)[0] + weights(model.layers[-1].name)[1]
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# predict's shape (frames halved, rounded up) and softmax rows; the model against numpy
first_X = next(iter(validation_dataset))[0]
assert all_preds[0].shape == (len(first_X), -(-first_X.shape[1] // 2), 32)
assert all_preds[0].dtype == np.float32
np.testing.assert_allclose(all_preds[0].sum(axis=-1), 1.0, rtol=1e-5)
np.testing.assert_allclose(all_preds[0], np_forward(first_X), rtol=1e-3, atol=2e-5)
# the decoding against numpy's; ctc_decode's dense result and score (TF's neg_sum_logits)
assert predictions == sum((np_greedy_texts(p) for p in all_preds), [])
decoded, log_prob = ctc_decode(all_preds[0], np.full(len(all_preds[0]), all_preds[0].shape[1]))
assert decoded[0].shape == all_preds[0].shape[:2] and decoded[0].dtype == em.int64
np.testing.assert_allclose(log_prob.numpy()[:, 0],
                           -np.log(all_preds[0].astype(np.float64) + 1e-7).max(-1).sum(-1),
                           rtol=1e-5, atol=2e-6)
# the targets are the transcriptions, lower-cased, without the (OOV) "."
assert targets == [t.lower().replace(".", "") for t in df_val["normalized_transcription"]]
# evaluate and the last val_loss: the mean over the texts of numpy's CTC of the
# predictions, each batch's labels padded to its longest
np_costs = np.concatenate([np_ctc_batch_cost(y, p)[:, 0] for y, p in zip(all_labels, all_preds)])
val_loss = model.evaluate(validation_dataset, verbose=0)
print(f"val_loss {val_loss:.4f}, numpy's CTC of the predictions {np_costs.mean():.4f}")
np.testing.assert_allclose(val_loss, np_costs.mean(), rtol=1e-4)
np.testing.assert_allclose(history.history["val_loss"][-1], val_loss, rtol=1e-4)
cer = sum(edit_distance(t, p) for t, p in zip(targets, predictions)) / sum(map(len, targets))
print(f"validation: CER {cer:.3f}, WER {wer_score:.3f}, val_loss {val_loss:.3f} "
      f"(the bound: {ENTROPY_GIVEN_TONES:.2f}); {time.time() - T0:.1f} s")
if not SHORT and not FULL:  # what training reached (see the header)
    assert val_loss < ENTROPY_GIVEN_TONES / 2, val_loss
    assert cer < 0.1 and wer_score < 0.25, (cer, wer_score, list(zip(targets, predictions)))

"""Port of keras-team/keras-io examples/generative/lstm_character_level_text_generation.py
("Character-level text generation with LSTM": a corpus read through keras.utils.get_file,
lower-cased, newlines made spaces, cut into semi-redundant 40-character sentences (step 3)
one-hot encoded as bool arrays with the next character as a one-hot target; a Sequential of
keras.Input, LSTM(128) and a softmax Dense, compiled with categorical_crossentropy and
RMSprop(learning_rate=0.01); each epoch a one-epoch fit, then 400 characters generated at
four diversities by predict on a float64 one-hot window and a temperature sampler on
np.random.multinomial).

Upstream: https://github.com/keras-team/keras-io/blob/61b6dba5e62808524df142b4c56d8266add5d349/examples/generative/lstm_character_level_text_generation.py
(the tf.keras version with the newline replacement and "...Generated:" printing; an earlier
one, 0a09cb6c7ca6769be21d946338c87563314c93db, wrote each character to sys.stdout)
Changed: names only (tensorflow.keras -> ember.nn, bound to `keras` as the example spells
it; tensorflow.keras.layers -> ember.nn.layers); the title block and the introduction's
prose are dropped. Nothing can be downloaded here, and Nietzsche's text is not typed in:
the program types in the first paragraph of the Preface of "Beyond Good and Evil" (Helen
Zimmern's translation, 1906, public domain) and generates the corpus from it: that
paragraph, then a walk of a Markov chain over its 65 distinct lower-cased words (with their
punctuation: "then?", "won;", "woman--what"), each word followed by the words that follow it
in the paragraph (so every word is reached) and by random others up to three, with
Dirichlet(1) weights. It is written as nietzsche.txt into $KERAS_HOME/datasets ($KERAS_HOME
a temporary directory), with capitals after ?, ! and ; and for Truth, in lines of at most 70
characters, where upstream's keras.utils.get_file finds it and does not download; upstream's
lower() and newline replacement turn it back into the walk, each word followed by a space.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 600,893 characters, as Nietzsche's text
counts after lower(), and 40 epochs; about 200,000 sentences): 24,000 characters (7,988
sentences) and 6 epochs, 400 characters a diversity as upstream; EMBER_PROGRAMS_SHORT=1 (the
strict-GPU run): 3,000 characters, 2 epochs, 20 characters a diversity, no thresholds.
Added: seeds for numpy, ember and random (upstream's start_index); get_file returned the
file written, which has capitals and newlines, and the text read is the walk; the sizes
(len(range(0, len(text) - 40, 3)) sentences) and bool dtypes, every row one-hot and decoding
back to its sentence and next character; Keras's input and output shapes and parameter
count (4 * (128 * (chars + 128) + 128) + 129 * chars); Keras's initial weights (the kernels
glorot_uniform within their limits with the uniform's spread, the recurrent kernel
orthogonal, zero biases but ones for the LSTM's forget gate: unit_forget_bias); predict
equals a float64 numpy forward pass of Keras's LSTM (gates i, f, c, o; sigmoid and tanh)
and the softmax Dense, for the bool rows and the float64 rows the sampling loop builds, both
giving float32; the untrained loss is log(chars) within 0.3; after training, the optimizer
ran epochs * ceil(sentences / 128) steps (the last batch partial), predict still equals the
numpy pass and evaluate's loss is numpy's cross-entropy of it. Thresholds (CPU run), on a
fresh 6,000-character walk the model never sees (best possible and blind losses computed
exactly from the chain): its loss is below by 0.1 the best loss of a predictor that knows
the letters typed so far of the current word but not the previous word (the word shares of
the corpus in place of the chain: 0.55), and not below the best possible loss (the chain's
own probabilities given the previous word and the letters typed: 0.12) by more than 0.03.
Untrained: 3.33; one character back (the entropy of the next character given the last,
counted on the corpus): 1.83; this run: 0.30, and 0.25 to 0.27 with seeds 1 to 3. At
diversity 0.2 the last epoch's text has over 75% of its words from the paragraph and over
half of its word pairs allowed by the chain (this run 0.89 and 0.76, caught in a loop on a
misspelling "preseng"; seeds 1 to 3: 1.00 and 0.98 to 1.00; random characters give almost
no words, and a model blind to the previous word pairs words at random, about 5% allowed).
A PyTorch mirror (outside this program: torch.nn.LSTM and Linear given ember's initial
weights, torch.optim.RMSprop(alpha=0.9, eps=1e-7), which stepped as ember's RMSprop did then,
the same unshuffled batches of 128 on 1,000 rows) gives the same epoch losses to 1e-7 and
the same weights to 1.3e-4 after 16 steps.
Found: no GAP: every upstream line runs as written (names changed only).
Fixed in ember since the first version of this port: RMSprop added epsilon after the square
root, v -= lr * g / (sqrt(ms) + epsilon) (tf.keras's optimizer_v2 without momentum, this
example's; PyTorch's), where Keras 3 (ember's contract) steps lr * g / sqrt(ms + epsilon),
and with momentum ember stepped as no TF or Keras version did; it steps as Keras 3 now
(the PyTorch mirror above ran before that change).
"""

import io
import os
import random
import tempfile
import time

import numpy as np

import ember.core as em
from ember import nn
from ember.nn import layers

keras = nn  # the example's `from tensorflow import keras`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
em.random.set_seed(0)
np.random.seed(0)
random.seed(0)
T0 = time.time()
_tmp = tempfile.TemporaryDirectory()
os.environ["KERAS_HOME"] = _tmp.name  # get_file's cache: where the stand-in nietzsche.txt is put

# ---------------------------------------------------------------------------------------
# The stand-in for nietzsche.txt (see the header): the words of the first paragraph of the
# Preface of "Beyond Good and Evil" (Helen Zimmern's translation, 1906, public domain),
# strung together by a Markov chain over them, so that the best possible prediction of
# every next character is known.
PARAGRAPH = """SUPPOSING that Truth is a woman--what then? Is there not ground for
suspecting that all philosophers, in so far as they have been dogmatists, have failed to
understand women--that the terrible seriousness and clumsy importunity with which they
have usually paid their addresses to Truth, have been unskilled and unseemly methods for
winning a woman? Certainly she has never allowed herself to be won; and at present every
kind of dogma stands with sad and discouraged mien--IF, indeed, it stands at all!"""
_PARAGRAPH_WORDS = PARAGRAPH.lower().split()
WORDS = sorted(set(_PARAGRAPH_WORDS))  # 65 tokens, punctuation kept ("then?", "won;")
CORPUS_CHARS = 600893 if FULL else 3000 if SHORT else 24000  # upstream: 600,893 after lower()


def _chain(rng):
    """Each word's successors: the words that follow it in the paragraph (so every word is
    reached), and random others up to three, with Dirichlet(1) probabilities."""
    successors = {}
    for w in WORDS:
        nxt = {_PARAGRAPH_WORDS[(k + 1) % len(_PARAGRAPH_WORDS)]
               for k, v in enumerate(_PARAGRAPH_WORDS) if v == w}
        while len(nxt) < 3:
            nxt.add(WORDS[rng.integers(len(WORDS))])
        nxt = sorted(nxt)
        successors[w] = dict(zip(nxt, rng.dirichlet(np.ones(len(nxt)))))
    return successors


_rng = np.random.default_rng(1886)
SUCCESSORS = _chain(_rng)


def _generate(n_chars, rng, words):
    """words, then a walk of the chain from the last of them, until the words, each followed
    by one space, fill n_chars."""
    words = list(words)
    length = sum(len(w) + 1 for w in words)
    while length < n_chars:
        nxt = list(SUCCESSORS[words[-1]])
        words.append(nxt[rng.choice(len(nxt), p=list(SUCCESSORS[words[-1]].values()))])
        length += len(words[-1]) + 1
    return words


def _as_file_text(words):
    """The walk written as the book is: a capital after ?, ! and ; and for Truth, lines of at
    most 70 characters, a newline at the end (all of which lower() and the newline
    replacement of upstream undo)."""
    lines, line, capital = [], "", True
    for w in words:
        shown = w.capitalize() if capital or w.startswith("truth") else w
        capital = w[-1] in "?!;"
        if line and len(line) + 1 + len(shown) > 70:
            lines.append(line)
            line = shown
        else:
            line = f"{line} {shown}" if line else shown
    return "\n".join(lines + [line]) + "\n"


CORPUS_WORDS = _generate(CORPUS_CHARS, _rng, _PARAGRAPH_WORDS)  # the paragraph, then the walk
HELD_OUT_WORDS = _generate(6000, _rng, ["supposing"])  # (added) a walk the model never sees
os.makedirs(os.path.join(_tmp.name, "datasets"))
with open(os.path.join(_tmp.name, "datasets", "nietzsche.txt"), "w", encoding="utf-8") as _f:
    _f.write(_as_file_text(CORPUS_WORDS))
# ---------------------------------------------------------------------------------------

"""
## Prepare the data
"""

path = keras.utils.get_file(
    "nietzsche.txt", origin="https://s3.amazonaws.com/text-datasets/nietzsche.txt"
)
with io.open(path, encoding="utf-8") as f:  # noqa: UP020
    text = f.read().lower()
text = text.replace("\n", " ")  # We remove newlines chars for nicer display
print("Corpus length:", len(text))

chars = sorted(list(set(text)))
print("Total chars:", len(chars))
char_indices = dict((c, i) for i, c in enumerate(chars))
indices_char = dict((i, c) for i, c in enumerate(chars))

# cut the text in semi-redundant sequences of maxlen characters
maxlen = 40
step = 3
sentences = []
next_chars = []
for i in range(0, len(text) - maxlen, step):
    sentences.append(text[i : i + maxlen])
    next_chars.append(text[i + maxlen])
print("Number of sequences:", len(sentences))

x = np.zeros((len(sentences), maxlen, len(chars)), dtype=np.bool)
y = np.zeros((len(sentences), len(chars)), dtype=np.bool)
for i, sentence in enumerate(sentences):
    for t, char in enumerate(sentence):
        x[i, t, char_indices[char]] = 1
    y[i, char_indices[next_chars[i]]] = 1

# Added: get_file found the stand-in without downloading, and the text upstream reads is the
# walk, each word followed by one space; the shapes; every row of x and y is one-hot and
# decodes back to its sentence and next character
assert path == os.path.join(_tmp.name, "datasets", "nietzsche.txt"), path
with open(path, encoding="utf-8") as f:
    raw = f.read()
assert raw != raw.lower() and raw.count("\n") == len(raw.splitlines()) > 1  # what upstream undoes
assert text == "".join(w + " " for w in CORPUS_WORDS)
assert len(sentences) == len(range(0, len(text) - maxlen, step)) == (len(text) - maxlen + 2) // 3
assert x.shape == (len(sentences), maxlen, len(chars)) and x.dtype == np.bool
assert y.shape == (len(sentences), len(chars)) and y.dtype == np.bool
assert (x.sum(-1) == 1).all() and (y.sum(-1) == 1).all()
assert all("".join(chars[k] for k in x[i].argmax(-1)) == text[i * step:i * step + maxlen]
           and chars[y[i].argmax()] == text[i * step + maxlen] for i in range(len(x)))


"""
## Build the model: a single LSTM layer
"""

model = keras.Sequential(
    [
        keras.Input(shape=(maxlen, len(chars))),
        layers.LSTM(128),
        layers.Dense(len(chars), activation="softmax"),
    ]
)
optimizer = keras.optimizers.RMSprop(learning_rate=0.01)
model.compile(loss="categorical_crossentropy", optimizer=optimizer)

# Added: Keras's shapes and parameter counts; Keras's initial weights (glorot_uniform kernels,
# an orthogonal recurrent kernel, zero biases but ones for the LSTM's forget gate, the gates
# in Keras's order i, f, c, o); predict equals a float64 numpy forward pass of those weights,
# for the float32 copy of the bool rows and for the float64 rows the sampling loop builds;
# the untrained loss is near log(len(chars))
V, U = len(chars), 128
assert model.input_shape == (None, maxlen, V) and model.output_shape == (None, V)
assert model.count_params() == 4 * (U * (V + U) + U) + (U * V + V), model.count_params()
kernel, recurrent_kernel, bias, dense_kernel, dense_bias = model.get_weights()
assert kernel.shape == (V, 4 * U) and recurrent_kernel.shape == (U, 4 * U), kernel.shape
assert bias.shape == (4 * U,) and dense_kernel.shape == (U, V) and dense_bias.shape == (V,)
np.testing.assert_array_equal(bias, np.r_[np.zeros(U), np.ones(U), np.zeros(2 * U)])
np.testing.assert_allclose(recurrent_kernel @ recurrent_kernel.T, np.eye(U), atol=1e-5)
for w, (fan_in, fan_out) in ((kernel, (V, 4 * U)), (dense_kernel, (U, V))):
    limit = np.sqrt(6 / (fan_in + fan_out))
    assert np.abs(w).max() <= limit and abs(w.std() - limit / np.sqrt(3)) < 0.1 * limit
assert not dense_bias.any()


def numpy_log_probs(rows, weights):
    """Keras's LSTM (sigmoid gates i, f, o; tanh cell and output) and the softmax Dense, in
    float64: the log-probabilities of the next character."""
    k, r, b, dk, db = (np.asarray(w, np.float64) for w in weights)
    u = r.shape[0]
    h = np.zeros((len(rows), u))
    c = np.zeros((len(rows), u))
    for t in range(rows.shape[1]):
        z = rows[:, t].astype(np.float64) @ k + h @ r + b
        gate_i, gate_f, gate_o = (1 / (1 + np.exp(-z[:, s * u:(s + 1) * u])) for s in (0, 1, 3))
        c = gate_f * c + gate_i * np.tanh(z[:, 2 * u:3 * u])
        h = gate_o * np.tanh(c)
    logits = h @ dk + db
    logits -= logits.max(-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


probs = model.predict(x[:64], verbose=0)
assert probs.shape == (64, V) and probs.dtype == np.float32, (probs.shape, probs.dtype)
np.testing.assert_allclose(probs, np.exp(numpy_log_probs(x[:64], model.get_weights())),
                           rtol=1e-4, atol=1e-6)
probs64 = model.predict(x[:8].astype(np.float64), verbose=0)
assert probs64.dtype == np.float32, probs64.dtype
np.testing.assert_allclose(probs64, probs[:8], rtol=1e-5, atol=1e-7)
untrained_loss = model.evaluate(x, y, batch_size=128, verbose=0)
print(f"untrained loss {untrained_loss:.3f} (log of {V} characters: {np.log(V):.3f})")
assert abs(untrained_loss - np.log(V)) < 0.3, untrained_loss

"""
## Prepare the text sampling function
"""


def sample(preds, temperature=1.0):
    # helper function to sample an index from a probability array
    preds = np.asarray(preds).astype("float64")
    preds = np.log(preds) / temperature
    exp_preds = np.exp(preds)
    preds = exp_preds / np.sum(exp_preds)
    probas = np.random.multinomial(1, preds, 1)
    return np.argmax(probas)


"""
## Train the model
"""

epochs = 40 if FULL else 2 if SHORT else 6
batch_size = 128
generate_chars = 20 if SHORT else 400  # (reduced in the SHORT run) upstream: 400
generated_by_diversity = {}  # (added) the last epoch's texts, checked below

for epoch in range(epochs):
    model.fit(x, y, batch_size=batch_size, epochs=1)
    print()
    print("Generating text after epoch: %d" % epoch)  # noqa: UP031

    start_index = random.randint(0, len(text) - maxlen - 1)
    for diversity in [0.2, 0.5, 1.0, 1.2]:
        print("...Diversity:", diversity)

        generated = ""
        sentence = text[start_index : start_index + maxlen]
        print('...Generating with seed: "' + sentence + '"')

        for i in range(generate_chars):  # noqa: B007
            x_pred = np.zeros((1, maxlen, len(chars)))
            for t, char in enumerate(sentence):
                x_pred[0, t, char_indices[char]] = 1.0
            preds = model.predict(x_pred, verbose=0)[0]
            next_index = sample(preds, diversity)
            next_char = indices_char[next_index]
            sentence = sentence[1:] + next_char
            generated += next_char

        print("...Generated: ", generated)
        print()
        generated_by_diversity[diversity] = (text[start_index : start_index + maxlen], generated)

print(f"trained in {time.time() - T0:.1f} s")

# Added: fit ran Keras's number of steps (the last batch partial); predict still equals the
# numpy forward pass with the trained weights, and evaluate's loss equals numpy's
# cross-entropy of those log-probabilities
assert int(optimizer.iterations) == epochs * -(-len(x) // batch_size), int(optimizer.iterations)
trained = model.get_weights()
log_probs = np.concatenate([numpy_log_probs(x[k:k + 4096], trained)
                            for k in range(0, len(x), 4096)])
np.testing.assert_allclose(model.predict(x[:256], verbose=0), np.exp(log_probs[:256]),
                           rtol=1e-3, atol=1e-5)
loss = model.evaluate(x, y, batch_size=batch_size, verbose=0)
np.testing.assert_allclose(loss, -log_probs[y].mean(), rtol=1e-4)


# Added: the thresholds (see the header). On a fresh walk of the chain: the loss of the trained
# model; the entropy of the next character given only the last one (counted on the training
# text, the least a model that looks one character back reaches there); the loss of the best
# possible prediction, which knows the chain: the previous word and the letters typed so far
# of the current one leave a few words possible, weighted by the chain's probabilities.
def vectorize(words):
    walk = "".join(w + " " for w in words)
    starts = range(0, len(walk) - maxlen, step)
    rows = np.zeros((len(starts), maxlen, len(chars)), dtype=np.bool)
    for n, s in enumerate(starts):
        rows[n, np.arange(maxlen), [char_indices[c] for c in walk[s:s + maxlen]]] = 1
    targets = np.array([char_indices[walk[s + maxlen]] for s in starts])
    # the best possible probability of each target
    word_of = np.repeat(np.arange(len(words)), [len(w) + 1 for w in words])
    best, blind = [], []  # the best probability of each target, knowing the previous word or not
    for s in starts:
        j = word_of[s + maxlen]
        typed = (s + maxlen) - (word_of[:s + maxlen] < j).sum()  # letters of word j so far
        cur = words[j] + " "
        for weights, out in ((SUCCESSORS[words[j - 1]], best), (WORD_SHARES, blind)):
            fits = {w + " ": p for w, p in weights.items() if (w + " ")[:typed] == cur[:typed]}
            out.append(sum(p for w, p in fits.items() if w[typed] == cur[typed])
                       / sum(fits.values()))
    return rows, targets, np.array(best), np.array(blind)


WORD_SHARES = {w: CORPUS_WORDS.count(w) / len(CORPUS_WORDS) for w in WORDS}
x_fresh, y_fresh, best_fresh, blind_fresh = vectorize(HELD_OUT_WORDS)
fresh_loss = -np.mean(np.log(model.predict(x_fresh, verbose=0)[np.arange(len(y_fresh)), y_fresh]))
best_loss = -np.mean(np.log(best_fresh))
blind_loss = -np.mean(np.log(blind_fresh))
ids = np.array([char_indices[c] for c in text])
pairs = np.zeros((V, V))
np.add.at(pairs, (ids[:-1], ids[1:]), 1)
bigram = -(pairs[pairs > 0] * np.log((pairs / pairs.sum(1, keepdims=True))[pairs > 0])).sum() / pairs.sum()
print(f"fresh walk: loss {fresh_loss:.3f}; one character back {bigram:.3f}; best blind to the "
      f"previous word {blind_loss:.3f}; best possible {best_loss:.3f}; training loss {loss:.3f}")
assert SHORT or fresh_loss < blind_loss - 0.1, (fresh_loss, blind_loss, bigram)
assert fresh_loss > best_loss - 0.03, (fresh_loss, best_loss)

# Added: at diversity 0.2 the last epoch's text is the chain's: its words (leaving out the
# two cut by the ends) are the paragraph's, and each follows the one before as the chain
# allows (random characters, or a model that ignores the previous word, would not)
seed_text, generated = generated_by_diversity[0.2]
words = (seed_text + generated).split(" ")[1:-1]
known = np.mean([w in SUCCESSORS for w in words])
allowed = np.mean([b in SUCCESSORS.get(a, ()) for a, b in zip(words, words[1:])])
print(f"diversity 0.2: {len(words)} words, {known:.2f} of them the paragraph's, {allowed:.2f} "
      f"of the pairs allowed by the chain; {time.time() - T0:.1f} s")
assert SHORT or (known > 0.75 and allowed > 0.5), (known, allowed, generated)

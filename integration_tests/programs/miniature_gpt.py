"""Port of keras-team/keras-io examples/generative/text_generation_with_miniature_gpt.py
("Text generation with a miniature GPT": a causal attention mask built with tf.range, cast,
reshape, concat and tile; MultiHeadAttention given that attention_mask in a Transformer
block whose call takes no training argument; token + position embeddings; a functional
model with two outputs compiled with loss=[loss_fn, None] and fit on one label array;
reviews read by TextLineDataset and vectorized in a parallel map by a TextVectorization
with a custom standardization; a callback sampling top-k text with predict each epoch).

Upstream: https://github.com/keras-team/keras-io/blob/b8bb4c0d5068d64290003740c2ef9e703eefa751/examples/generative/text_generation_with_miniature_gpt.py
Changed: names only (tf.* ops -> em.* through `tf = em`, tf.math.top_k -> em.top_k,
tf.data.TextLineDataset/AUTOTUNE -> ember.data.*, tensorflow.keras and its layers ->
ember.nn and nn.layers, tf.keras.losses -> nn.losses, TextVectorization from
ember.nn.layers), except where a GAP says otherwise. The IMDB archive cannot be
downloaded, so the reviews are generated in its layout (aclImdb/{train,test}/{pos,neg}/
<id>_<rating>.txt, one review a file, on one line) in a temporary directory made the
working directory (upstream's paths are relative), from a small grammar: "This movie is
<adjective>." and 2 to 5 of "The <noun> was <adverb> <adjective>.", "I <verb> the
<noun>!", "It's a <adjective> film, <adverb> <adjective>." and "I saw it with <Name>.",
now and then "<br /><br />", every adjective and verb of the review's sentiment: 75
distinct tokens, the 24 names rare, so the vocabulary keeps some and the rest read [UNK].
Reduced: vocab_size 64 in every mode (upstream 20,000: with 75 tokens, 19,923 output ids
would have no word, and the callback's detokenize raises IndexError on any it samples; see
below), maxlen 24, embed_dim and feed_forward_dim 32, 2,000 reviews, batch 32, 10 epochs,
10 tokens generated (upstream 80, 256, 256, 50,000, 128, 25 and 40, which
EMBER_PROGRAMS_FULL=1 restores); EMBER_PROGRAMS_SHORT=1: 256 reviews, 1 epoch, the callback
given print_every=2 (so it prints nothing), no thresholds.
Upstream's own (kept): the last Dense has vocab_size outputs and the vocabulary at most
vocab_size - 1 entries (max_tokens=vocab_size - 1), so id vocab_size - 1 has no word and
detokenize raises IndexError if it is sampled (TF's would too; after the SHORT run's 8
steps it is among the 10 likeliest for some seeds, hence that run's print_every); the
callback generates max_tokens + 1 tokens (`<=`) and, once the text outgrows maxlen, keeps
its first maxlen tokens (`start_tokens[:maxlen]`; later upstream: the last; not reached
here); the loss counts the padding positions (no mask).
Added: seeds for numpy, ember and random; the number of files; TextLineDataset's lines are
the files' texts in order; the vocabulary equals a plain-Python count of the standardized
tokens in Keras's order ("", "[UNK]", then by count, ties by the token, both descending,
cut at max_tokens); the ids of six texts (truncated, padded, out of vocabulary) equal a
Python lookup, as int64; a pipeline batch is int64 (batch, maxlen) with y x shifted by one,
and the parallel map keeps the plain map's order; the causal mask equals numpy's np.tri
(square, and n_dest < n_src) as bool on every batch row; predict's two outputs have
Keras's shapes and equal a float64 numpy forward pass from the weights (embeddings, the
heads' projections, the masked softmax, LayerNormalization with epsilon 1e-6, the
feed-forward network, the last Dense); changing the tokens after a position leaves every
output up to it unchanged and changes later ones (causality); evaluate's loss equals
numpy's cross-entropy of predict's logits (the None loss adds nothing); top_k equals
numpy's stable sort and the callback samples among it. Thresholds (CPU run): the epoch
loss falls; the loss on 400 fresh reviews is below H - 0.02, H the entropy of the next
token given the current token and its position, counted on the training reviews (the
least a model that does not look further back reaches on them; untrained: about
log 64 = 4.16; this run: 0.80 against H = 0.88); where the next word is an adjective or
a verb after the first sentence, the model puts more probability on the review's own
sentiment than on the other at over 90% of the 1,080 positions (this run: all; a model
that does not see the first sentence is right half the time, the two word lists being
symmetric); after "this movie is" the 10 likeliest tokens are all adjectives.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it):
1. (by design, docs/guide/preprocessing.md) no string tensors, so no tf.strings
(AttributeError): tf.strings.lower (ASCII letters only, TF's default encoding) and
regex_replace become numpy-vectorized str.translate and re.sub over the str array that
TextVectorization hands the standardization (re and RE2 read this pattern alike).
2. (by design) tf.expand_dims on the batch of strings raises DTypeError ("tensors hold
booleans and numbers"): np.expand_dims. Also by design: TextLineDataset's lines are str
(TF: bytes). No silent difference: every value checked above agrees with what TF/Keras
compute.
"""

import os
import random
import re
import string
import tempfile

import numpy as np

import ember.core as em
from ember import data, nn
from ember.nn import layers
from ember.nn.layers import TextVectorization

ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
tf = em  # the example's `tf.` prefix
keras = nn  # and its `keras.`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
em.random.set_seed(0)
np.random.seed(0)
random.seed(0)

"""
## Implement a Transformer block as a layer
"""


def causal_attention_mask(batch_size, n_dest, n_src, dtype):
    """
    Mask the upper half of the dot product matrix in self attention.
    This prevents flow of information from future tokens to current token.
    1's in the lower triangle, counting from the lower right corner.
    """
    i = tf.range(n_dest)[:, None]
    j = tf.range(n_src)
    m = i >= j - n_src + n_dest
    mask = tf.cast(m, dtype)
    mask = tf.reshape(mask, [1, n_dest, n_src])
    mult = tf.concat(
        [tf.expand_dims(batch_size, -1), tf.constant([1, 1], dtype=tf.int32)], 0
    )
    return tf.tile(mask, mult)


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super(TransformerBlock, self).__init__()  # noqa: UP008 (upstream spelling)
        self.att = layers.MultiHeadAttention(num_heads, embed_dim)
        self.ffn = keras.Sequential(
            [
                layers.Dense(ff_dim, activation="relu"),
                layers.Dense(embed_dim),
            ]
        )
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs):
        input_shape = tf.shape(inputs)
        batch_size = input_shape[0]
        seq_len = input_shape[1]
        causal_mask = causal_attention_mask(batch_size, seq_len, seq_len, tf.bool)
        attention_output = self.att(inputs, inputs, attention_mask=causal_mask)
        attention_output = self.dropout1(attention_output)
        out1 = self.layernorm1(inputs + attention_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output)
        return self.layernorm2(out1 + ffn_output)


"""
## Implement an embedding layer
"""


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super(TokenAndPositionEmbedding, self).__init__()  # noqa: UP008 (upstream spelling)
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        maxlen = tf.shape(x)[-1]
        positions = tf.range(start=0, limit=maxlen, delta=1)
        positions = self.pos_emb(positions)
        x = self.token_emb(x)
        return x + positions


"""
## Implement the miniature GPT model
"""
vocab_size = 64  # Only consider the top 20k words (upstream: 20000; see the header)
maxlen = 80 if FULL else 24  # Max sequence size
embed_dim = 256 if FULL else 32  # Embedding size for each token
num_heads = 2  # Number of attention heads
feed_forward_dim = 256 if FULL else 32  # Hidden layer size in feed forward network inside transformer


def create_model():
    inputs = layers.Input(shape=(maxlen,), dtype=tf.int32)
    embedding_layer = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)
    x = embedding_layer(inputs)
    transformer_block = TransformerBlock(embed_dim, num_heads, feed_forward_dim)
    x = transformer_block(x)
    outputs = layers.Dense(vocab_size)(x)
    model = keras.Model(inputs=inputs, outputs=[outputs, x])
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(
        "adam",
        loss=[loss_fn, None],
    )  # No loss and optimization based on word embeddings from transformer block
    return model


"""
## Prepare the data for word-level language modelling

Download the IMDB dataset and combine training and validation sets for a text
generation task. (Here: reviews generated in IMDB's layout, see below.)
"""

"""shell
curl -O https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz
tar -xf aclImdb_v1.tar.gz
"""

# Added: the reviews upstream downloads, generated here as aclImdb/{train,test}/{pos,neg}/
# <id>_<rating>.txt, one review per file on one line, in a temporary directory that
# becomes the working directory (upstream's paths are relative). A review opens with
# "This movie is <adjective>." and goes on with sentences whose adjectives and verbs all
# have the review's sentiment: predicting them needs the first sentence, many tokens
# back, not just the previous word.
POS_ADJ = ["great", "wonderful", "brilliant", "superb", "charming", "moving", "excellent",
           "delightful"]
NEG_ADJ = ["awful", "boring", "terrible", "dull", "tedious", "clumsy", "poor", "bad"]
POS_VERB = ["loved", "enjoyed", "liked", "adored"]
NEG_VERB = ["hated", "disliked", "regretted", "endured"]
NOUNS = ["acting", "plot", "music", "ending", "script", "cast", "story", "direction"]
ADVERBS = ["really", "truly", "quite", "very"]
NAMES = ["Anna", "Ben", "Carla", "Dev", "Elif", "Femi", "Gus", "Hana", "Ivo", "Jun", "Kai",
         "Lea", "Milo", "Nia", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tova", "Uma", "Vik",
         "Wren", "Yusuf"]  # rare words: the vocabulary keeps some, the rest become [UNK]


def make_review(rng, positive):
    adj, verb = (POS_ADJ, POS_VERB) if positive else (NEG_ADJ, NEG_VERB)
    sentences = [f"This movie is {rng.choice(adj)}."]
    for _ in range(rng.integers(2, 6)):
        kind = rng.integers(0, 4)
        if kind == 0:
            sentences.append(f"The {rng.choice(NOUNS)} was {rng.choice(ADVERBS)} "
                             f"{rng.choice(adj)}.")
        elif kind == 1:
            sentences.append(f"I {rng.choice(verb)} the {rng.choice(NOUNS)}!")
        elif kind == 2:
            sentences.append(f"It's a {rng.choice(adj)} film, {rng.choice(ADVERBS)} "
                             f"{rng.choice(adj)}.")
        else:
            sentences.append(f"I saw it with {rng.choice(NAMES)}.")
        if rng.random() < 0.2:
            sentences.append("<br /><br />")
    return " ".join(sentences)


n_reviews = 50000 if FULL else 256 if SHORT else 2000  # upstream: 50,000 files
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)
_rng = np.random.default_rng(1)
for k in range(n_reviews):
    split, label = ("train", "test")[k % 4 // 2], ("pos", "neg")[k % 2]
    os.makedirs(f"aclImdb/{split}/{label}", exist_ok=True)
    rating = 7 + k % 4 if label == "pos" else 1 + k % 4
    with open(f"aclImdb/{split}/{label}/{k}_{rating}.txt", "w", encoding="utf-8") as f:
        f.write(make_review(_rng, label == "pos"))

batch_size = 128 if FULL else 32

# The dataset contains each review in a separate text file
# The text files are present in four different folders
# Create a list all files
filenames = []
directories = [
    "aclImdb/train/pos",
    "aclImdb/train/neg",
    "aclImdb/test/pos",
    "aclImdb/test/neg",
]
for dir in directories:
    for f in os.listdir(dir):
        filenames.append(os.path.join(dir, f))

print(f"{len(filenames)} files")
assert len(filenames) == n_reviews  # Added

# Create a dataset from text files
random.shuffle(filenames)
text_ds = data.TextLineDataset(filenames)
text_ds = text_ds.shuffle(buffer_size=256)
text_ds = text_ds.batch(batch_size)

# Added: the lines are the files' texts, in the files' order (str here, bytes in TF)
lines = list(data.TextLineDataset(filenames[:5]))
for line, name in zip(lines, filenames[:5], strict=True):
    with open(name, encoding="utf-8") as fh:
        assert line == fh.read(), (line, name)


def lower(strings):  # GAP 1: tf.strings.lower (ASCII letters only, TF's default encoding)
    return np.vectorize(lambda s: s.translate(ASCII_LOWER), otypes=[str])(strings)


def regex_replace(strings, pattern, rewrite):  # GAP 1: tf.strings.regex_replace
    return np.vectorize(lambda s: re.sub(pattern, rewrite, s), otypes=[str])(strings)


def custom_standardization(input_string):
    """Remove html line-break tags and handle punctuation"""
    # GAP 1: lowercased = tf.strings.lower(input_string)
    lowercased = lower(input_string)
    # GAP 1: stripped_html = tf.strings.regex_replace(lowercased, "<br />", " ")
    stripped_html = regex_replace(lowercased, "<br />", " ")
    # GAP 1: return tf.strings.regex_replace(stripped_html, f"([{string.punctuation}])", r" \1")
    return regex_replace(stripped_html, f"([{string.punctuation}])", r" \1")


# Create a vectorization layer and adapt it to the text
vectorize_layer = TextVectorization(
    standardize=custom_standardization,
    max_tokens=vocab_size - 1,
    output_mode="int",
    output_sequence_length=maxlen + 1,
)
vectorize_layer.adapt(text_ds)
vocab = vectorize_layer.get_vocabulary()  # To get words back from token indices

# Added: the vocabulary and the token ids against a plain-Python reference: the
# standardization (lowercase, "<br />" -> " ", a space before each punctuation mark),
# whitespace split, Keras's order (padding "", "[UNK]", then by count, ties by the token,
# both descending), ids padded with 0 or truncated to maxlen + 1.
texts = []
for dir in directories:
    for f in sorted(os.listdir(dir)):
        with open(os.path.join(dir, f), encoding="utf-8") as fh:
            texts.append(fh.read())


def reference_tokens(text):
    text = "".join(c.lower() if "A" <= c <= "Z" else c for c in text).replace("<br />", " ")
    return "".join(" " + c if c in string.punctuation else c for c in text).split()


counts = {}
for text in texts:
    for token in reference_tokens(text):
        counts[token] = counts.get(token, 0) + 1
ranked = sorted(counts, key=lambda t: (counts[t], t), reverse=True)
assert vocab == ["", "[UNK]"] + ranked[:vocab_size - 3], (vocab[:10], ranked[:8])
assert set(POS_ADJ + NEG_ADJ + POS_VERB + NEG_VERB + ["'s", ",", "!", "."]) <= set(vocab)
assert "<br" not in vocab and "br" not in vocab
sample = np.array(texts[:5] + ["This movie is GREAT, <br />unseenword!"])
ids = vectorize_layer(np.expand_dims(sample, -1))
assert ids.shape == (6, maxlen + 1) and ids.dtype == np.int64, (ids.shape, ids.dtype)
for row, text in zip(ids.numpy(), sample):
    want = [vocab.index(t) if t in vocab else 1 for t in reference_tokens(text)]
    want = (want + [0] * (maxlen + 1))[:maxlen + 1]
    assert row.tolist() == want, (text, row, want)
print(f"{len(vocab)} words in the vocabulary:", " ".join(vocab[:12]), "...")


def prepare_lm_inputs_labels(text):
    """
    Shift word sequences by 1 position so that the target for position (i) is
    word at position (i+1). The model will use all words up till position (i)
    to predict the next word.
    """
    # GAP 2: text = tf.expand_dims(text, -1)
    text = np.expand_dims(text, -1)
    tokenized_sentences = vectorize_layer(text)
    x = tokenized_sentences[:, :-1]
    y = tokenized_sentences[:, 1:]
    return x, y


text_ds = text_ds.map(prepare_lm_inputs_labels, num_parallel_calls=data.AUTOTUNE)
text_ds = text_ds.prefetch(data.AUTOTUNE)

# Added: a batch of the pipeline is (x, y), int64 (batch_size, maxlen), y is x shifted by
# one; a parallel map keeps the order of a plain one (TF's map is deterministic by default)
for x, y in text_ds.take(1):
    assert x.shape == y.shape == (batch_size, maxlen) and x.dtype == y.dtype == np.int64
    assert np.array_equal(x.numpy()[:, 1:], y.numpy()[:, :-1])
plain = data.TextLineDataset(filenames).batch(batch_size).take(3)
for (x1, y1), (x2, y2) in zip(
        plain.map(prepare_lm_inputs_labels, num_parallel_calls=data.AUTOTUNE),
        plain.map(prepare_lm_inputs_labels)):
    assert np.array_equal(x1.numpy(), x2.numpy()) and np.array_equal(y1.numpy(), y2.numpy())


"""
## Implement a Keras callback for generating text
"""


class TextGenerator(keras.callbacks.Callback):
    """A callback to generate text from a trained model.
    1. Feed some starting prompt to the model
    2. Predict probabilities for the next token
    3. Sample the next token and add it to the next input

    Arguments:
        max_tokens: Integer, the number of tokens to be generated after prompt.
        start_tokens: List of integers, the token indices for the starting prompt.
        index_to_word: List of strings, obtained from the TextVectorization layer.
        top_k: Integer, sample from the `top_k` token predictions.
        print_every: Integer, print after this many epochs.
    """

    def __init__(
        self, max_tokens, start_tokens, index_to_word, top_k=10, print_every=1
    ):
        self.max_tokens = max_tokens
        self.start_tokens = start_tokens
        self.index_to_word = index_to_word
        self.print_every = print_every
        self.k = top_k

    def sample_from(self, logits):
        logits, indices = tf.top_k(logits, k=self.k, sorted=True)
        indices = np.asarray(indices).astype("int32")
        preds = keras.activations.softmax(tf.expand_dims(logits, 0))[0]
        preds = np.asarray(preds).astype("float32")
        return np.random.choice(indices, p=preds)

    def detokenize(self, number):
        return self.index_to_word[number]

    def on_epoch_end(self, epoch, logs=None):
        start_tokens = [_ for _ in self.start_tokens]
        if (epoch + 1) % self.print_every != 0:
            return
        num_tokens_generated = 0
        tokens_generated = []
        while num_tokens_generated <= self.max_tokens:
            pad_len = maxlen - len(start_tokens)
            sample_index = len(start_tokens) - 1
            if pad_len < 0:
                x = start_tokens[:maxlen]
                sample_index = maxlen - 1
            elif pad_len > 0:
                x = start_tokens + [0] * pad_len
            else:
                x = start_tokens
            x = np.array([x])
            y, _ = self.model.predict(x)
            sample_token = self.sample_from(y[0][sample_index])
            tokens_generated.append(sample_token)
            start_tokens.append(sample_token)
            num_tokens_generated = len(tokens_generated)
        txt = " ".join(
            [self.detokenize(_) for _ in self.start_tokens + tokens_generated]
        )
        print(f"generated text:\n{txt}\n")


# Tokenize starting prompt
word_to_index = {}
for index, word in enumerate(vocab):
    word_to_index[word] = index

start_prompt = "this movie is"
start_tokens = [word_to_index.get(_, 1) for _ in start_prompt.split()]
num_tokens_generated = 40 if FULL else 10
# SHORT: print_every=2 over 1 epoch, so no text (see the header: upstream's own IndexError)
text_gen_callback = TextGenerator(num_tokens_generated, start_tokens, vocab,
                                  print_every=2 if SHORT else 1)


"""
## Train the model

Note: This code should preferably be run on GPU.
"""

model = create_model()

epochs = 25 if FULL else 1 if SHORT else 10
history = model.fit(text_ds, verbose=2, epochs=epochs, callbacks=[text_gen_callback])
print({k: [round(v, 4) for v in vs] for k, vs in history.history.items()})


"""
## Added: checks that can fail
"""

# The causal mask: query i sees keys j <= i + (n_src - n_dest) (lower right corner), for
# every batch row, as bool.
for n_dest, n_src in ((5, 5), (3, 6)):
    m = causal_attention_mask(tf.constant(4), n_dest, n_src, tf.bool)
    assert m.shape == (4, n_dest, n_src) and m.dtype == np.bool_, (m.shape, m.dtype)
    assert np.array_equal(m.numpy(), np.broadcast_to(
        np.tri(n_dest, n_src, n_src - n_dest, dtype=bool), (4, n_dest, n_src)))

# Held-out reviews (drawn like the training ones)
held_rng = np.random.default_rng(2)
held_sentiment = held_rng.integers(0, 2, 64 if SHORT else 400)  # 0: positive
held = np.array([make_review(held_rng, s == 0) for s in held_sentiment])
x_held, y_held = (t.numpy() for t in prepare_lm_inputs_labels(held))
logits, embeddings = model.predict(x_held, verbose=0)
assert logits.shape == (len(held), maxlen, vocab_size), logits.shape
assert embeddings.shape == (len(held), maxlen, embed_dim), embeddings.shape


# The model's outputs against a numpy forward pass from its weights (dropout off)
def np_layer_norm(v, ln):
    mean, var = v.mean(-1, keepdims=True), v.var(-1, keepdims=True)
    return (v - mean) / np.sqrt(var + 1e-6) * ln.gamma.numpy() + ln.beta.numpy()


def np_forward(tokens):
    emb_layer, block, head = model.layers[1], model.layers[2], model.layers[3]
    h = (emb_layer.token_emb.embeddings.numpy()[tokens]
         + emb_layer.pos_emb.embeddings.numpy()[np.arange(tokens.shape[1])]).astype(np.float64)
    w = {v.name.split("/")[0] + "/" + v.name.split("/")[1].split(":")[0]: v.numpy()
         for v in block.att.weights}
    n, t, _ = h.shape

    def proj(name):  # (n, t, heads * key_dim) -> (n, heads, t, key_dim)
        z = h @ w[name + "/kernel"] + w[name + "/bias"]
        return z.reshape(n, t, num_heads, embed_dim).transpose(0, 2, 1, 3)

    q, k, v = proj("query"), proj("key"), proj("value")
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(embed_dim)
    scores = np.where(np.tril(np.ones((t, t), bool)), scores, -np.inf)
    att = np.exp(scores - scores.max(-1, keepdims=True))
    att /= att.sum(-1, keepdims=True)
    ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, t, num_heads * embed_dim)
    out1 = np_layer_norm(h + ctx @ w["attention_output/kernel"] + w["attention_output/bias"],
                         block.layernorm1)
    d1, d2 = block.ffn.layers
    ffn = np.maximum(out1 @ d1.kernel.numpy() + d1.bias.numpy(), 0) @ d2.kernel.numpy()
    out2 = np_layer_norm(out1 + ffn + d2.bias.numpy(), block.layernorm2)
    return out2 @ head.kernel.numpy() + head.bias.numpy(), out2


np_logits, np_embeddings = np_forward(x_held[:16])
np.testing.assert_allclose(embeddings[:16], np_embeddings, rtol=1e-4, atol=1e-4)
np.testing.assert_allclose(logits[:16], np_logits, rtol=1e-4, atol=1e-4)

# Causality: changing the tokens after position p changes no output at positions <= p
p = maxlen // 2
changed = x_held[:16].copy()
changed[:, p + 1:] = held_rng.integers(2, len(vocab), changed[:, p + 1:].shape)
logits_changed, _ = model.predict(changed, verbose=0)
np.testing.assert_allclose(logits_changed[:, :p + 1], logits[:16, :p + 1], rtol=1e-5, atol=1e-5)
assert not np.allclose(logits_changed[:, p + 1:], logits[:16, p + 1:], atol=1e-3)

# The loss: numpy's cross-entropy of the logits against evaluate's (the None loss of the
# second output adds nothing), and against the best a model that sees only the current
# token and its position can do on the training reviews (the entropy of the next token
# given those two, counted on them; padding included, as in the loss).
log_probs = logits - logits.max(-1, keepdims=True)
log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
held_loss = -np.take_along_axis(log_probs, y_held[..., None], -1).mean()
evaluated = model.evaluate(x_held, y_held, verbose=0)
evaluated = evaluated[0] if isinstance(evaluated, (list, tuple)) else evaluated
np.testing.assert_allclose(evaluated, held_loss, rtol=1e-4)
x_all, y_all = (t.numpy() for t in prepare_lm_inputs_labels(np.array(texts)))
pair_counts = np.zeros((maxlen, len(vocab), len(vocab)))
np.add.at(pair_counts, (np.broadcast_to(np.arange(maxlen), x_all.shape), x_all, y_all), 1)
seen = pair_counts > 0
bigram_entropy = -(pair_counts[seen] * np.log(
    (pair_counts / np.maximum(pair_counts.sum(-1, keepdims=True), 1))[seen])).sum() / x_all.size
print(f"held-out loss {held_loss:.4f} (evaluate {evaluated:.4f}); untrained: about "
      f"log({vocab_size}) = {np.log(vocab_size):.2f}; entropy of the next token given the "
      f"current one and its position {bigram_entropy:.4f}")

# Sentiment: after the first sentence, where the next word is an adjective or a verb, the
# model puts more probability on the review's own sentiment (chance: half the time).
pos_ids = [word_to_index[w] for w in POS_ADJ + POS_VERB]
neg_ids = [word_to_index[w] for w in NEG_ADJ + NEG_VERB]
probs = np.exp(log_probs)
right = []
for r, s in enumerate(held_sentiment):
    for t in range(3, maxlen):
        if y_held[r, t] in pos_ids + neg_ids:
            own = probs[r, t, pos_ids if s == 0 else neg_ids].sum()
            right.append(own > probs[r, t, neg_ids if s == 0 else pos_ids].sum())
print(f"sentiment kept at {len(right)} positions: {np.mean(right):.3f}")

# The prompt: after "this movie is" every one of the top 10 is an adjective, and the
# callback's sample is one of them (top_k against numpy's sort).
prompt_logits = model.predict(np.array([start_tokens + [0] * (maxlen - 3)]), verbose=0)[0][0, 2]
values, indices = tf.top_k(prompt_logits, k=10, sorted=True)
order = np.argsort(-prompt_logits, kind="stable")[:10]
assert np.array_equal(indices.numpy(), order) and np.allclose(values.numpy(), prompt_logits[order])
assert text_gen_callback.sample_from(prompt_logits) in order
top_words = [vocab[i] if i < len(vocab) else f"<id {i}>" for i in order]
print("after 'this movie is':", " ".join(top_words))

if not SHORT:
    assert history.history["loss"][-1] < history.history["loss"][0], history.history
    assert held_loss < bigram_entropy - 0.02, (held_loss, bigram_entropy)
    assert np.mean(right) > 0.9, np.mean(right)
    assert set(top_words) <= set(POS_ADJ + NEG_ADJ), top_words

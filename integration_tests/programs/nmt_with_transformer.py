"""Port of keras-team/keras-io examples/nlp/neural_machine_translation_with_transformer.py
("English-to-Spanish translation with a sequence-to-sequence Transformer": two
TextVectorization layers, one with a custom standardization; a PositionalEmbedding whose
compute_mask hides the padding; a TransformerEncoder and a TransformerDecoder built from
MultiHeadAttention with padding and causal masks; nested functional models trained with
compile/fit on dict inputs; greedy decoding of new sentences).

Upstream: https://github.com/keras-team/keras-io/blob/035d541043bd29938cc78a20f19d998ffaa4a05a/examples/nlp/neural_machine_translation_with_transformer.py
Changed: names only (keras.layers -> nn.layers, keras.Model/Input/Sequential -> nn.*,
tf.data -> ember.data, tf.cast/shape/range/minimum/reshape/concat/expand_dims/constant/
tile/math.not_equal -> em.*, tf.newaxis -> None), except where the example cannot run
here: the Anki spa-eng archive cannot be downloaded, so the sentence pairs are made by
this program from a small grammar (subject, verb, object, an optional adverb; the
Spanish puts the adverb first, opens questions with "¿", and every word has one
translation), 3,000 pairs split 70/15/15 as upstream; ember tensors hold no strings, so
the custom standardization works on the numpy string array TextVectorization hands it
(tf.strings.lower/regex_replace -> np.char.lower and re.sub), and the pipeline
vectorizes in its map as upstream. Reduced (EMBER_PROGRAMS_FULL=1 restores
the model's sizes: embed_dim 256, latent_dim 2048, 8 heads, vocabulary 15,000, batches of
64): embed_dim 32, latent_dim 64, 2 heads, the corpus's Spanish vocabulary (37 tokens:
decoding looks each predicted index up in it, so it must fill vocab_size, as upstream's
corpus fills 15,000), sequences of 10 (upstream
20), batches of 32, 6 epochs (upstream 1, "at least 30 for convergence").
EMBER_PROGRAMS_SHORT=1: 600 pairs, 1 epoch, no thresholds. Added: the masks reach the
attention (an encoder output at a padded step does not change a kept step's output),
and greedy decoding translates at least 60% of 30 test sentences exactly (CPU run).
"""

import os
import random
import re
import string

import numpy as np

import ember.core as em
from ember import data as tf_data
from ember import nn

keras = nn  # the example's `keras.` prefix
layers = nn.layers
TextVectorization = layers.TextVectorization
tf = em  # the example's tf.cast, tf.shape, tf.range, ...
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"
em.random.set_seed(0)
random.seed(0)

"""
## Downloading the data (made here: see the header)
"""

SUBJECTS = {"I": "yo", "You": "tú", "Tom": "tom", "Mary": "mary", "We": "nosotros",
            "They": "ellos", "She": "ella", "He": "él"}
VERBS = {"see": "veo", "like": "quiero", "want": "deseo", "have": "tengo", "eat": "como",
         "read": "leo", "buy": "compro", "draw": "dibujo"}
OBJECTS = {"the book": "el libro", "an apple": "una manzana", "the dog": "el perro",
           "a cat": "un gato", "the house": "la casa", "some water": "agua",
           "the car": "el coche", "a letter": "una carta"}
ADVERBS = {"": "", "today": "hoy", "now": "ahora", "again": "otra vez",
           "tomorrow": "mañana"}


def make_pair(rng):
    s, v, o, a = (rng.choice(list(t)) for t in (SUBJECTS, VERBS, OBJECTS, ADVERBS))
    question = rng.random() < 0.3
    eng = " ".join(w for w in (s, v, o, a) if w) + ("?" if question else ".")
    spa = " ".join(w for w in (ADVERBS[a], SUBJECTS[s], VERBS[v], OBJECTS[o]) if w)
    spa = ("¿" + spa + "?") if question else (spa[0].upper() + spa[1:] + ".")
    return eng, spa


rng = random.Random(42)
lines = ["\t".join(make_pair(rng)) for _ in range(600 if SHORT else 3000)]

"""
## Parsing the data
"""

text_pairs = []
for line in lines:
    eng, spa = line.split("\t")
    spa = "[start] " + spa + " [end]"
    text_pairs.append((eng, spa))

for _ in range(5):
    print(random.choice(text_pairs))

random.shuffle(text_pairs)
num_val_samples = int(0.15 * len(text_pairs))
num_train_samples = len(text_pairs) - 2 * num_val_samples
train_pairs = text_pairs[:num_train_samples]
val_pairs = text_pairs[num_train_samples : num_train_samples + num_val_samples]
test_pairs = text_pairs[num_train_samples + num_val_samples :]

print(f"{len(text_pairs)} total pairs")
print(f"{len(train_pairs)} training pairs")
print(f"{len(val_pairs)} validation pairs")
print(f"{len(test_pairs)} test pairs")

"""
## Vectorizing the text data
"""

strip_chars = string.punctuation + "¿"
strip_chars = strip_chars.replace("[", "")
strip_chars = strip_chars.replace("]", "")

# upstream's 15,000 is filled by the real corpus; decoding looks every predicted index
# up in the vocabulary, so here it is the made corpus's Spanish vocabulary, filled too
SPANISH_WORDS = {w for t in (SUBJECTS, VERBS, OBJECTS, ADVERBS) for v in t.values()
                 for w in v.split()}
vocab_size = 15000 if FULL else len(SPANISH_WORDS) + 4  # "", [UNK], [start], [end]
sequence_length = 20 if FULL else 10
batch_size = 64 if FULL else 32


def custom_standardization(input_string):
    lowercase = np.char.lower(input_string)
    return np.vectorize(lambda s: re.sub("[%s]" % re.escape(strip_chars), "", s))(  # noqa: UP031
        lowercase
    )


eng_vectorization = TextVectorization(
    max_tokens=vocab_size,
    output_mode="int",
    output_sequence_length=sequence_length,
)
spa_vectorization = TextVectorization(
    max_tokens=vocab_size,
    output_mode="int",
    output_sequence_length=sequence_length + 1,
    standardize=custom_standardization,
)
train_eng_texts = [pair[0] for pair in train_pairs]
train_spa_texts = [pair[1] for pair in train_pairs]
eng_vectorization.adapt(train_eng_texts)
spa_vectorization.adapt(train_spa_texts)
assert len(spa_vectorization.get_vocabulary()) == vocab_size


def format_dataset(eng, spa):
    eng = eng_vectorization(eng)
    spa = spa_vectorization(spa)
    return (
        {
            "encoder_inputs": eng,
            "decoder_inputs": spa[:, :-1],
        },
        spa[:, 1:],
    )


def make_dataset(pairs):
    eng_texts, spa_texts = zip(*pairs)
    eng_texts = list(eng_texts)
    spa_texts = list(spa_texts)
    dataset = tf_data.Dataset.from_tensor_slices((eng_texts, spa_texts))
    dataset = dataset.batch(batch_size)
    dataset = dataset.map(format_dataset)
    return dataset.shuffle(2048).prefetch(16).cache()


train_ds = make_dataset(train_pairs)
val_ds = make_dataset(val_pairs)

for inputs, targets in train_ds.take(1):
    print(f'inputs["encoder_inputs"].shape: {inputs["encoder_inputs"].shape}')
    print(f'inputs["decoder_inputs"].shape: {inputs["decoder_inputs"].shape}')
    print(f"targets.shape: {targets.shape}")

"""
## Building the model
"""


class TransformerEncoder(layers.Layer):
    def __init__(self, embed_dim, dense_dim, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.embed_dim = embed_dim
        self.dense_dim = dense_dim
        self.num_heads = num_heads
        self.attention = layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=embed_dim
        )
        self.dense_proj = keras.Sequential(
            [
                layers.Dense(dense_dim, activation="relu"),
                layers.Dense(embed_dim),
            ]
        )
        self.layernorm_1 = layers.LayerNormalization()
        self.layernorm_2 = layers.LayerNormalization()
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is not None:
            padding_mask = tf.cast(mask[:, None, :], dtype="int32")
        attention_output = self.attention(
            query=inputs, value=inputs, key=inputs, attention_mask=padding_mask
        )
        proj_input = self.layernorm_1(inputs + attention_output)
        proj_output = self.dense_proj(proj_input)
        return self.layernorm_2(proj_input + proj_output)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "embed_dim": self.embed_dim,
                "dense_dim": self.dense_dim,
                "num_heads": self.num_heads,
            }
        )
        return config


class PositionalEmbedding(layers.Layer):
    def __init__(self, sequence_length, vocab_size, embed_dim, **kwargs):
        super().__init__(**kwargs)
        self.token_embeddings = layers.Embedding(
            input_dim=vocab_size, output_dim=embed_dim
        )
        self.position_embeddings = layers.Embedding(
            input_dim=sequence_length, output_dim=embed_dim
        )
        self.sequence_length = sequence_length
        self.vocab_size = vocab_size
        self.embed_dim = embed_dim

    def call(self, inputs):
        length = tf.shape(inputs)[-1]
        positions = tf.range(start=0, limit=length, delta=1)
        embedded_tokens = self.token_embeddings(inputs)
        embedded_positions = self.position_embeddings(positions)
        return embedded_tokens + embedded_positions

    def compute_mask(self, inputs, mask=None):
        return em.not_equal(inputs, 0)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "vocab_size": self.vocab_size,
                "embed_dim": self.embed_dim,
            }
        )
        return config


class TransformerDecoder(layers.Layer):
    def __init__(self, embed_dim, latent_dim, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.embed_dim = embed_dim
        self.latent_dim = latent_dim
        self.num_heads = num_heads
        self.attention_1 = layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=embed_dim
        )
        self.attention_2 = layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=embed_dim
        )
        self.dense_proj = keras.Sequential(
            [
                layers.Dense(latent_dim, activation="relu"),
                layers.Dense(embed_dim),
            ]
        )
        self.layernorm_1 = layers.LayerNormalization()
        self.layernorm_2 = layers.LayerNormalization()
        self.layernorm_3 = layers.LayerNormalization()
        self.supports_masking = True

    def call(self, inputs, encoder_outputs, mask=None):
        causal_mask = self.get_causal_attention_mask(inputs)
        if mask is not None:
            padding_mask = tf.cast(mask[:, None, :], dtype="int32")
            padding_mask = tf.minimum(padding_mask, causal_mask)

        attention_output_1 = self.attention_1(
            query=inputs, value=inputs, key=inputs, attention_mask=causal_mask
        )
        out_1 = self.layernorm_1(inputs + attention_output_1)

        attention_output_2 = self.attention_2(
            query=out_1,
            value=encoder_outputs,
            key=encoder_outputs,
            attention_mask=padding_mask,
        )
        out_2 = self.layernorm_2(out_1 + attention_output_2)

        proj_output = self.dense_proj(out_2)
        return self.layernorm_3(out_2 + proj_output)

    def get_causal_attention_mask(self, inputs):
        input_shape = tf.shape(inputs)
        batch_size, sequence_length = input_shape[0], input_shape[1]
        i = tf.range(sequence_length)[:, None]
        j = tf.range(sequence_length)
        mask = tf.cast(i >= j, dtype="int32")
        mask = tf.reshape(mask, (1, input_shape[1], input_shape[1]))
        mult = tf.concat(
            [tf.expand_dims(batch_size, -1), tf.constant([1, 1], dtype=tf.int32)],
            axis=0,
        )
        return tf.tile(mask, mult)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "embed_dim": self.embed_dim,
                "latent_dim": self.latent_dim,
                "num_heads": self.num_heads,
            }
        )
        return config


embed_dim = 256 if FULL else 32
latent_dim = 2048 if FULL else 64
num_heads = 8 if FULL else 2

encoder_inputs = keras.Input(shape=(None,), dtype="int64", name="encoder_inputs")
x = PositionalEmbedding(sequence_length, vocab_size, embed_dim)(encoder_inputs)
encoder_outputs = TransformerEncoder(embed_dim, latent_dim, num_heads)(x)
encoder = keras.Model(encoder_inputs, encoder_outputs)

decoder_inputs = keras.Input(shape=(None,), dtype="int64", name="decoder_inputs")
encoded_seq_inputs = keras.Input(shape=(None, embed_dim), name="decoder_state_inputs")
x = PositionalEmbedding(sequence_length, vocab_size, embed_dim)(decoder_inputs)
x = TransformerDecoder(embed_dim, latent_dim, num_heads)(x, encoded_seq_inputs)
x = layers.Dropout(0.5)(x)
decoder_outputs = layers.Dense(vocab_size, activation="softmax")(x)
decoder = keras.Model([decoder_inputs, encoded_seq_inputs], decoder_outputs)

decoder_outputs = decoder([decoder_inputs, encoder_outputs])
transformer = keras.Model(
    [encoder_inputs, decoder_inputs], decoder_outputs, name="transformer"
)

"""
## Training our model
"""

epochs = 1 if SHORT else 6  # This should be at least 30 for convergence

transformer.summary()
transformer.compile(
    "rmsprop", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
)
history = transformer.fit(train_ds, epochs=epochs, validation_data=val_ds)

"""
## Decoding test sentences
"""

spa_vocab = spa_vectorization.get_vocabulary()
spa_index_lookup = dict(zip(range(len(spa_vocab)), spa_vocab))
max_decoded_sentence_length = 20 if FULL else sequence_length


def decode_sequence(input_sentence):
    tokenized_input_sentence = eng_vectorization([input_sentence])
    decoded_sentence = "[start]"
    for i in range(max_decoded_sentence_length):
        tokenized_target_sentence = spa_vectorization([decoded_sentence])[:, :-1]
        predictions = transformer([tokenized_input_sentence, tokenized_target_sentence])

        sampled_token_index = np.argmax(predictions[0, i, :])
        sampled_token = spa_index_lookup[sampled_token_index]
        decoded_sentence += " " + sampled_token

        if sampled_token == "[end]":
            break
    return decoded_sentence


test_eng_texts = [pair[0] for pair in test_pairs]
translations = []
for _ in range(30):
    input_sentence = random.choice(test_eng_texts)
    translated = decode_sequence(input_sentence)
    translations.append((input_sentence, translated))
    print(input_sentence, "->", translated)

"""
## Added checks
"""

# The masks reach the cross-attention: with the decoder's padding mask ANDed with the
# causal mask (upstream's attention_mask for it), the encoder outputs at the steps it
# hides (here every step from the fourth: the target has three tokens) change nothing.
ids = eng_vectorization(["Tom likes the dog."])
enc = encoder(ids)
kept = int(np.count_nonzero(np.asarray(ids)))
assert kept < sequence_length
noisy = enc.numpy().copy()
noisy[0, kept:] += 10.0
target = spa_vectorization(["[start] tom quiere"])[:, :-1]
a = decoder([target, enc]).numpy()
b = decoder([target, em.constant(noisy)]).numpy()
np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # the cross-attention mask holds

if not SHORT:
    reference = dict(test_pairs)
    right = sum(
        re.sub(f"[{re.escape(strip_chars)}]", "", reference[eng].lower()) == out
        for eng, out in translations
    )
    print(f"{right} of {len(translations)} test sentences translated exactly")
    assert right >= 0.6 * len(translations), (right, translations[:5])

"""Port of keras-team/keras-io examples/nlp/text_classification_with_transformer.py (a
Transformer block with MultiHeadAttention, LayerNormalization and a feed-forward network,
token + position embeddings, trained with compile/fit).

Upstream: https://github.com/keras-team/keras-io/blob/1909c6710cd3f5af6401f1176dcee9e26781b4f3/examples/nlp/text_classification_with_transformer.py
Changed: names only (keras.layers -> nn.layers, keras.Sequential -> nn.Sequential,
keras.ops.shape/arange -> em.shape/em.range). ember has no functional API, so
`inputs = layers.Input(shape=(maxlen,)); x = ...; keras.Model(inputs=inputs, outputs=outputs)`
becomes the same layers, in the same order, in an nn.Sequential. The IMDB download and
keras.utils.pad_sequences are replaced by synthetic reviews: token ids in [1, vocab_size)
where ten "positive" and ten "negative" words are planted, the label saying which kind
appears more often. Reduced (EMBER_PROGRAMS_FULL=1 restores it): vocab 200, maxlen 40, 1,200
training and 300 validation reviews (upstream 20,000, 200, 25,000 and 25,000). Added:
validation accuracy passes 80% (chance: 50%) after the two epochs, and the block keeps the sequence shape.
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): fewer examples and epochs, no threshold on
what training reached.
"""

import os

import numpy as np

import ember.core as em
from ember import nn
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
ops = em    # and its `keras.ops`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
em.random.set_seed(0)


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
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
        attn_output = self.att(inputs, inputs)
        attn_output = self.dropout1(attn_output)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output)
        return self.layernorm2(out1 + ffn_output)


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        maxlen = ops.shape(x)[-1]
        positions = ops.range(start=0, limit=maxlen, delta=1)
        positions = self.pos_emb(positions)
        x = self.token_emb(x)
        return x + positions


vocab_size = 20000 if FULL else 200  # Only consider the top 20k words
maxlen = 200 if FULL else 40  # Only consider the first 200 words of each movie review


def load_data(n):
    rng = np.random.default_rng(n)
    x = rng.integers(23, vocab_size, size=(n, maxlen))
    y = rng.integers(0, 2, size=n)
    for i in range(n):
        k = rng.integers(1, 6)
        strong = rng.integers(3, 13, size=k + 2) + 10 * (1 - y[i])  # 3..12 positive
        weak = rng.integers(3, 13, size=k) + 10 * y[i]              # 13..22 negative
        words = np.concatenate([strong, weak])
        x[i, rng.choice(maxlen, size=len(words), replace=False)] = words
    return x.astype(np.int32), y.astype(np.int32)


(x_train, y_train), (x_val, y_val) = load_data(25000 if FULL else 160 if SHORT else 1200), load_data(
    25000 if FULL else 64 if SHORT else 300)
print(len(x_train), "Training sequences")
print(len(x_val), "Validation sequences")

embed_dim = 32  # Embedding size for each token
num_heads = 2  # Number of attention heads
ff_dim = 32  # Hidden layer size in feed forward network inside transformer

embedding_layer = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)
transformer_block = TransformerBlock(embed_dim, num_heads, ff_dim)
model = keras.Sequential([
    embedding_layer,
    transformer_block,
    layers.GlobalAveragePooling1D(),
    layers.Dropout(0.1),
    layers.Dense(20, activation="relu"),
    layers.Dropout(0.1),
    layers.Dense(2, activation="softmax"),
])

model.compile(
    optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
)
history = model.fit(
    x_train, y_train, batch_size=32, epochs=1 if SHORT else 2, validation_data=(x_val, y_val)
)

print(history.history)
assert transformer_block(embedding_layer(x_val[:3])).shape == (3, maxlen, embed_dim)
assert SHORT or history.history["val_accuracy"][-1] > 0.80, history.history

"""Port of keras-team/keras-io examples/nlp/text_classification_with_switch_transformer.py
("Text classification with Switch Transformer": token + position embeddings, a Transformer
block whose feed-forward network is a Switch layer, a Mixture of Experts of ten two-layer
networks behind a top-1 Router with noisy logits in training, expert capacity by cumsum and
one_hot, einsum dispatch and combine, a load-balancing aux loss given to add_loss; then a
pooled classifier compiled with Adam and sparse_categorical_crossentropy and fit).

Upstream: https://github.com/keras-team/keras-io/blob/043312e4b422388ec2e0962ad550cefc0dff0dd9/examples/nlp/text_classification_with_switch_transformer.py
Changed: names only (tf.* ops -> em.* through `tf = em`: tf.shape, range, reduce_mean, cast,
dtypes.float32, random.uniform, math.top_k, one_hot, math.cumsum, math.less, reduce_sum,
expand_dims, squeeze, reshape, einsum, unstack, stack; tensorflow.keras and its layers ->
ember.nn and nn.layers through `keras = nn`, keras.utils.pad_sequences kept), except where a
GAP says otherwise; the prose cells are dropped. keras.datasets.imdb.load_data cannot
download here: imdb_load_data generates reviews in its layout (object arrays of lists of
word ids, 1 first (start_char), rank r as id r + 3, 2 for a word outside num_words, int64
labels), 16 to 63 words long, each word with probability 0.2 one of ten "positive" (ranks
1-10) or ten "negative" (11-20) words of its label's kind; upstream's pad_sequences then
pads and truncates them as IMDB's. Reduced (EMBER_PROGRAMS_FULL=1 restores it): vocab_size
200, num_tokens_per_example 32 (so 1,600 tokens a batch and expert capacity 160), 1,500
training and 500 validation reviews (upstream 20,000, 200, 25,000 and 25,000); batch 50,
3 epochs and every other hyperparameter as upstream. EMBER_PROGRAMS_SHORT=1: 200 and 100
reviews, 1 epoch, no thresholds.
Added: seeds for numpy and ember; the data's IMDB layout and pad_sequences (pre-padding,
pre-truncation, int32) against numpy; Keras's parameter count (38,540) and 60 trainable
variables, so the router's Dense and the list of experts, set before super().__init__(),
are tracked; the Switch layer's output and aux loss at inference against a per-token
float64 numpy computation (top-1 routing, tokens past capacity dropped, output gate *
expert(gate * token)) on inputs that overflow some experts, the same twice at inference and
different with training=True (the router's noise); the gradients of the Switch output and
the aux loss with respect to its input, the router and all experts against torch's
autograd; evaluate's loss equals numpy's cross-entropy of predict's probabilities plus the
mean aux loss computed in numpy from the block's attention output (fit and evaluate add the
layer's add_loss, as Keras's), and val_accuracy equals predict's accuracy. Thresholds (CPU
run): validation accuracy above 90% (chance and an untrained model: 50%; this run: 99.6%
after 3 epochs) and the training loss falls by 0.2 (this run: 1.56 to 1.03, the aux loss
staying near its balanced value 1).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it):
2. The functional API builds each layer by running it on zeros of batch 1 where the Input
leaves the batch open, as upstream's `Input(shape=(num_tokens_per_example,))` does (only an
Input with a fixed batch_size is probed at that size, and only by the layer called on it:
the embedding's output has batch None again). transformer_block(x) then reaches the
Switch's `tf.reshape(inputs, [num_tokens_per_batch, embed_dim])`, a reshape to the fixed
batch of 50 * 32 = 1,600 tokens, which raises InvalidArgumentError ("reshape: cannot reshape
a tensor of shape (1, 32, 32) (1024 elements) into (1600, 32)"); Keras traces symbolically
(batch None) and the reshape is checked only when run. Stand-in: the same layers, in the
same order, in an nn.Sequential.
Fixed in ember since the first version of this port: GAP 1, a layer whose call takes a
required `training` argument, called without one (Sequential's first call probes the model
with no training flag) raised TypeError "missing 1 required positional argument:
'training'"; ember now passes training=False where no call sets the flag, as tf.keras does,
and upstream's `def call(self, inputs, training):` runs now.
"""

import os

import numpy as np
import torch

import ember.core as em
from ember import nn, tape
from ember.nn import layers

tf = em      # the example's `tf.` prefix
keras = nn   # and its `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
em.random.set_seed(0)
np.random.seed(0)


def imdb_load_data(num_words, n_train, n_test, seed=113):
    """keras.datasets.imdb.load_data's layout: object arrays of lists of word ids (1 starts
    a review, 2 stands for a word outside num_words, ids count from index_from=3), int64
    labels. The words of rank 1..10 are positive, 11..20 negative; a review's planted words
    are all of its label's kind."""
    rng = np.random.default_rng(seed)

    def split(n):
        xs, ys = [], rng.integers(0, 2, size=n)
        for label in ys:
            length = int(rng.integers(num_tokens_per_example // 2, 2 * num_tokens_per_example))
            ranks = rng.integers(21, 2 * num_words, size=length)  # neutral; some >= num_words
            planted = rng.random(length) < 0.2
            ranks[planted] = rng.integers(1, 11, size=planted.sum()) + 10 * (1 - label)
            words = ranks + 3  # index_from=3: rank 1 (the commonest word) is id 4
            words[words >= num_words] = 2  # oov_char
            xs.append([1] + words.tolist())  # start_char
        x = np.empty(n, dtype=object)
        x[:] = xs
        return x, ys.astype(np.int64)

    return split(n_train), split(n_test)


"""
## Download and prepare dataset
"""

vocab_size = 20000 if FULL else 200  # Only consider the top 20k words
num_tokens_per_example = 200 if FULL else 32  # Only consider the first 200 words of each movie review
# No download here, generated in its layout:
# (x_train, y_train), (x_val, y_val) = keras.datasets.imdb.load_data(num_words=vocab_size)
(x_train, y_train), (x_val, y_val) = imdb_load_data(
    vocab_size, 25000 if FULL else 200 if SHORT else 1500, 25000 if FULL else 100 if SHORT else 500)
print(len(x_train), "Training sequences")
print(len(x_val), "Validation sequences")
x_train = keras.utils.pad_sequences(
    x_train, maxlen=num_tokens_per_example
)
x_val = keras.utils.pad_sequences(x_val, maxlen=num_tokens_per_example)

"""
## Define hyperparameters
"""

embed_dim = 32  # Embedding size for each token.
num_heads = 2  # Number of attention heads
ff_dim = 32  # Hidden layer size in feedforward network.
num_experts = 10  # Number of experts used in the Switch Transformer.
batch_size = 50  # Batch size.
learning_rate = 0.001  # Learning rate.
dropout_rate = 0.25  # Dropout rate.
num_epochs = 3 if FULL else 1 if SHORT else 3  # Number of epochs.
num_tokens_per_batch = (
    batch_size * num_tokens_per_example
)  # Total number of tokens per batch.
print(f"Number of tokens per batch: {num_tokens_per_batch}")

"""
## Implement token & position embedding layer

It consists of two seperate embedding layers, one for tokens, one for token index (positions).
"""


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        maxlen = tf.shape(x)[-1]
        positions = tf.range(start=0, limit=maxlen, delta=1)
        positions = self.pos_emb(positions)
        x = self.token_emb(x)
        return x + positions


"""
## Implement the feedforward network

This is used as the Mixture of Experts in the Switch Transformer.
"""


def create_feedforward_network(ff_dim, name=None):
    return keras.Sequential(
        [layers.Dense(ff_dim, activation="relu"), layers.Dense(ff_dim)], name=name
    )


"""
## Implement the load-balanced loss

This is an auxiliary loss to encourage a balanced load across experts.
"""


def load_balanced_loss(router_probs, expert_mask):
    # router_probs [tokens_per_batch, num_experts] is the probability assigned for
    # each expert per token. expert_mask [tokens_per_batch, num_experts] contains
    # the expert with the highest router probability in one−hot format.

    num_experts = tf.shape(expert_mask)[-1]
    # Get the fraction of tokens routed to each expert.
    # density is a vector of length num experts that sums to 1.
    density = tf.reduce_mean(expert_mask, axis=0)
    # Get fraction of probability mass assigned to each expert from the router
    # across all tokens. density_proxy is a vector of length num experts that sums to 1.
    density_proxy = tf.reduce_mean(router_probs, axis=0)
    # Want both vectors to have uniform allocation (1/num experts) across all
    # num_expert elements. The two vectors will be pushed towards uniform allocation
    # when the dot product is minimized.
    loss = tf.reduce_mean(density_proxy * density) * tf.cast(
        (num_experts**2), tf.dtypes.float32
    )
    return loss


"""
### Implement the router as a layer
"""


class Router(layers.Layer):
    def __init__(self, num_experts, expert_capacity):
        self.num_experts = num_experts
        self.route = layers.Dense(units=num_experts)
        self.expert_capacity = expert_capacity
        super().__init__()

    def call(self, inputs, training=False):
        # inputs shape: [tokens_per_batch, embed_dim]
        # router_logits shape: [tokens_per_batch, num_experts]
        router_logits = self.route(inputs)

        if training:
            # Add noise for exploration across experts.
            router_logits += tf.random.uniform(
                shape=router_logits.shape, minval=0.9, maxval=1.1
            )
        # Probabilities for each token of what expert it should be sent to.
        router_probs = keras.activations.softmax(router_logits, axis=-1)
        # Get the top−1 expert for each token. expert_gate is the top−1 probability
        # from the router for each token. expert_index is what expert each token
        # is going to be routed to.
        expert_gate, expert_index = tf.math.top_k(router_probs, k=1)
        # expert_mask shape: [tokens_per_batch, num_experts]
        expert_mask = tf.one_hot(expert_index, depth=self.num_experts)
        # Compute load balancing loss.
        aux_loss = load_balanced_loss(router_probs, expert_mask)
        self.add_loss(aux_loss)
        # Experts have a fixed capacity, ensure we do not exceed it. Construct
        # the batch indices, to each expert, with position in expert make sure that
        # not more that expert capacity examples can be routed to each expert.
        position_in_expert = tf.cast(
            tf.math.cumsum(expert_mask, axis=0) * expert_mask, tf.dtypes.int32
        )
        # Keep only tokens that fit within expert capacity.
        expert_mask *= tf.cast(
            tf.math.less(
                tf.cast(position_in_expert, tf.dtypes.int32), self.expert_capacity
            ),
            tf.dtypes.float32,
        )
        expert_mask_flat = tf.reduce_sum(expert_mask, axis=-1)
        # Mask out the experts that have overflowed the expert capacity.
        expert_gate *= expert_mask_flat
        # Combine expert outputs and scaling with router probability.
        # combine_tensor shape: [tokens_per_batch, num_experts, expert_capacity]
        combined_tensor = tf.expand_dims(
            expert_gate
            * expert_mask_flat
            * tf.squeeze(tf.one_hot(expert_index, depth=self.num_experts), 1),
            -1,
        ) * tf.squeeze(tf.one_hot(position_in_expert, depth=self.expert_capacity), 1)
        # Create binary dispatch_tensor [tokens_per_batch, num_experts, expert_capacity]
        # that is 1 if the token gets routed to the corresponding expert.
        dispatch_tensor = tf.cast(combined_tensor, tf.dtypes.float32)

        return dispatch_tensor, combined_tensor


"""
### Implement a Switch layer
"""


class Switch(layers.Layer):
    def __init__(self, num_experts, embed_dim, num_tokens_per_batch, capacity_factor=1):
        self.num_experts = num_experts
        self.embed_dim = embed_dim
        self.experts = [
            create_feedforward_network(embed_dim) for _ in range(num_experts)
        ]

        self.expert_capacity = num_tokens_per_batch // self.num_experts
        self.router = Router(self.num_experts, self.expert_capacity)
        super().__init__()

    def call(self, inputs):
        batch_size = tf.shape(inputs)[0]
        num_tokens_per_example = tf.shape(inputs)[1]

        # inputs shape: [num_tokens_per_batch, embed_dim]
        inputs = tf.reshape(inputs, [num_tokens_per_batch, self.embed_dim])
        # dispatch_tensor shape: [expert_capacity, num_experts, tokens_per_batch]
        # combine_tensor shape: [tokens_per_batch, num_experts, expert_capacity]
        dispatch_tensor, combine_tensor = self.router(inputs)
        # expert_inputs shape: [num_experts, expert_capacity, embed_dim]
        expert_inputs = tf.einsum("ab,acd->cdb", inputs, dispatch_tensor)
        expert_inputs = tf.reshape(
            expert_inputs, [self.num_experts, self.expert_capacity, self.embed_dim]
        )
        # Dispatch to experts
        expert_input_list = tf.unstack(expert_inputs, axis=0)
        expert_output_list = [
            self.experts[idx](expert_input)
            for idx, expert_input in enumerate(expert_input_list)
        ]
        # expert_outputs shape: [expert_capacity, num_experts, embed_dim]
        expert_outputs = tf.stack(expert_output_list, axis=1)
        # expert_outputs_combined shape: [tokens_per_batch, embed_dim]
        expert_outputs_combined = tf.einsum(
            "abc,xba->xc", expert_outputs, combine_tensor
        )
        # output shape: [batch_size, num_tokens_per_example, embed_dim]
        outputs = tf.reshape(
            expert_outputs_combined,
            [batch_size, num_tokens_per_example, self.embed_dim],
        )
        return outputs


"""
## Implement a Transformer block layer
"""


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ffn, dropout_rate=0.1):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        # The ffn can be either a standard feedforward network or a switch
        # layer with a Mixture of Experts.
        self.ffn = ffn
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(dropout_rate)
        self.dropout2 = layers.Dropout(dropout_rate)

    def call(self, inputs, training):
        attn_output = self.att(inputs, inputs)
        attn_output = self.dropout1(attn_output, training=training)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output, training=training)
        return self.layernorm2(out1 + ffn_output)


"""
## Implement the classifier

The `TransformerBlock` layer outputs one vector for each time step of our input sequence.
Here, we take the mean across all time steps and use a feedforward network on top
of it to classify text.
"""


def create_classifier():
    switch = Switch(num_experts, embed_dim, num_tokens_per_batch)
    transformer_block = TransformerBlock(ff_dim, num_heads, switch)

    # GAP 2: inputs = layers.Input(shape=(num_tokens_per_example,))
    embedding_layer = TokenAndPositionEmbedding(
        num_tokens_per_example, vocab_size, embed_dim
    )
    # GAP 2: x = embedding_layer(inputs)
    # GAP 2: x = transformer_block(x)
    # GAP 2: x = layers.GlobalAveragePooling1D()(x)
    # GAP 2: x = layers.Dropout(dropout_rate)(x)
    # GAP 2: x = layers.Dense(ff_dim, activation="relu")(x)
    # GAP 2: x = layers.Dropout(dropout_rate)(x)
    # GAP 2: outputs = layers.Dense(2, activation="softmax")(x)
    # GAP 2:
    # GAP 2: classifier = keras.Model(inputs=inputs, outputs=outputs)
    classifier = keras.Sequential([  # the same layers, in the same order
        embedding_layer,
        transformer_block,
        layers.GlobalAveragePooling1D(),
        layers.Dropout(dropout_rate),
        layers.Dense(ff_dim, activation="relu"),
        layers.Dropout(dropout_rate),
        layers.Dense(2, activation="softmax"),
    ])
    return classifier


"""
## Train and evaluate the model
"""


def run_experiment(classifier):
    classifier.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    history = classifier.fit(
        x_train,
        y_train,
        batch_size=batch_size,
        epochs=num_epochs,
        validation_data=(x_val, y_val),
    )
    return history


# Added: the layout of keras.datasets.imdb.load_data, and pad_sequences against numpy
# (pre-padding with 0, pre-truncation: the last num_tokens_per_example words are kept)
(raw_train, _), (raw_val, _) = imdb_load_data(vocab_size, len(x_train), len(x_val))
assert raw_train.dtype == object and y_train.dtype == np.int64 and set(y_train) == {0, 1}
assert all(r[0] == 1 and 2 <= min(r[1:]) and max(r) < vocab_size for r in raw_train)
assert any(len(r) < num_tokens_per_example for r in raw_train)
assert any(len(r) > num_tokens_per_example for r in raw_train)
for raw, padded in ((raw_train, x_train), (raw_val, x_val)):
    expect = np.zeros((len(raw), num_tokens_per_example), np.int32)
    for i, r in enumerate(raw):
        kept = r[-num_tokens_per_example:]
        expect[i, num_tokens_per_example - len(kept):] = kept
    assert padded.dtype == np.int32, padded.dtype
    np.testing.assert_array_equal(padded, expect)

classifier = create_classifier()
history = run_experiment(classifier)
print(history.history)

# Added: Keras's parameter count (the router's Dense and the ten experts, set as attributes
# before super().__init__(), are tracked): embeddings, the attention's four projections,
# two LayerNormalizations, ten two-layer experts, the router, the two Dense of the head
transformer_block = classifier.layers[1]
switch = transformer_block.ffn
d, e, h = embed_dim, num_experts, num_heads
n_params = ((vocab_size + num_tokens_per_example) * d + 3 * (d * h * ff_dim + h * ff_dim)
            + (h * ff_dim * d + d) + 4 * d + e * 2 * (d * d + d) + (d * e + e)
            + (d * ff_dim + ff_dim) + (ff_dim * 2 + 2))
assert len(classifier.trainable_variables) == 2 + 8 + 4 + 4 * e + 2 + 4
assert sum(int(np.prod(v.shape)) for v in classifier.trainable_variables) == n_params
assert len(switch.router.trainable_variables) == 2 and len(switch.experts) == e


def softmax(z):
    z = np.exp(z - z.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


def switch_numpy(x):
    """Switch.call at inference, computed per token in float64: route each token to its
    top-1 expert; the first expert_capacity - 1 tokens of each expert (position 1.. in
    upstream's cumsum) are kept; output = gate * expert(gate * token), zero if dropped."""
    w = [v.numpy().astype(np.float64) for v in switch.router.route.trainable_variables]
    tokens = x.reshape(-1, embed_dim).astype(np.float64)
    probs = softmax(tokens @ w[0] + w[1])
    index = probs.argmax(-1)
    gate = probs[np.arange(len(tokens)), index]
    position = np.zeros(len(tokens), np.int64)
    for i in range(num_experts):
        position[index == i] = np.arange(1, (index == i).sum() + 1)
    kept = position < switch.expert_capacity
    out = np.zeros_like(tokens)
    for i in range(num_experts):
        k1, b1, k2, b2 = (v.numpy().astype(np.float64) for v in switch.experts[i].trainable_variables)
        rows = (index == i) & kept
        g = gate[rows, None]
        out[rows] = g * (np.maximum(g * tokens[rows] @ k1 + b1, 0) @ k2 + b2)
    density = np.bincount(index, minlength=num_experts) / len(tokens)
    aux = np.mean(probs.mean(0) * density) * num_experts**2
    return out.reshape(x.shape), aux, kept


# Added: the Switch layer against numpy on normal inputs that overflow some experts'
# capacity, and its aux loss; at inference it adds no noise (twice the same output)
rng = np.random.default_rng(1)
x_probe = (rng.normal(size=(batch_size, num_tokens_per_example, embed_dim)) + 0.5).astype(np.float32)
out_np, aux_np, kept_np = switch_numpy(x_probe)
assert 0 < (~kept_np).sum() < kept_np.size, (~kept_np).sum()  # some tokens dropped
out_em = switch(x_probe, training=False)
assert out_em.shape == (batch_size, num_tokens_per_example, embed_dim)
np.testing.assert_allclose(out_em.numpy(), out_np, rtol=1e-4, atol=1e-5)
assert len(switch.losses) == 1, switch.losses
np.testing.assert_allclose(float(switch.losses[0]), aux_np, rtol=1e-5)
np.testing.assert_allclose(switch(x_probe).numpy(), out_em.numpy(), rtol=0, atol=0)
assert not np.allclose(switch(x_probe, training=True).numpy(), out_em.numpy())  # the noise


def switch_torch(x, weights):
    """switch_numpy's computation in torch (float64), for its gradients."""
    tokens = x.reshape(-1, embed_dim)
    probs = torch.softmax(tokens @ weights[0] + weights[1], -1)
    index = probs.argmax(-1)
    gate = probs.gather(1, index[:, None])
    one_hot = torch.nn.functional.one_hot(index, num_experts).double()
    kept = ((torch.cumsum(one_hot, 0) * one_hot).sum(-1) < switch.expert_capacity)[:, None]
    out = torch.zeros_like(tokens)
    for i in range(num_experts):
        k1, b1, k2, b2 = weights[2 + 4 * i:6 + 4 * i]
        ffn = torch.relu(gate * tokens @ k1 + b1) @ k2 + b2
        out = out + torch.where((index == i)[:, None] & kept, gate * ffn, 0.0)
    aux = torch.mean(probs.mean(0) * one_hot.mean(0)) * num_experts**2
    return out.reshape(x.shape), aux


# Added: the gradients through the router (top_k's values, the gate) and the experts, and
# of the aux loss, against torch's autograd
weights_em = switch.router.route.trainable_variables + [
    v for expert in switch.experts for v in expert.trainable_variables]
direction = rng.normal(size=x_probe.shape)
x_em = em.constant(x_probe)
with tape.GradientTape() as g:
    g.watch(x_em)
    objective = em.reduce_sum(switch(x_em) * direction.astype(np.float32)) + switch.losses[0]
grads_em = g.gradient(objective, [x_em] + weights_em)
x_t = torch.tensor(x_probe, dtype=torch.float64, requires_grad=True)
weights_t = [torch.tensor(v.numpy(), dtype=torch.float64, requires_grad=True) for v in weights_em]
out_t, aux_t = switch_torch(x_t, weights_t)
((out_t * torch.from_numpy(direction)).sum() + aux_t).backward()
for got, want in zip(grads_em, [x_t] + weights_t):
    want = want.grad.numpy()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-3, atol=1e-4 * np.abs(want).max())

# Added: evaluate's loss is the cross-entropy of predict's probabilities plus the mean of
# the router's aux loss over the batches (computed in numpy from the block's attention
# output); val_accuracy is predict's accuracy. Both with batch_size (the Switch reshapes
# to batch_size * num_tokens_per_example tokens, as upstream's, under TensorFlow too).
probs_val = classifier.predict(x_val, batch_size=batch_size, verbose=0)
assert probs_val.shape == (len(x_val), 2), probs_val.shape
np.testing.assert_allclose(probs_val.sum(-1), 1.0, rtol=1e-5)
val_loss, val_acc = classifier.evaluate(x_val, y_val, batch_size=batch_size, verbose=0)
ce = -np.log(np.clip(probs_val[np.arange(len(y_val)), y_val], 1e-7, 1 - 1e-7)).mean()
auxes = []
for start in range(0, len(x_val), batch_size):
    emb = classifier.layers[0](x_val[start:start + batch_size])
    out1 = transformer_block.layernorm1(emb + transformer_block.att(emb, emb))
    auxes.append(switch_numpy(out1.numpy())[1])
np.testing.assert_allclose(val_loss, ce + np.mean(auxes), rtol=1e-4)
accuracy = np.mean(probs_val.argmax(-1) == y_val)
np.testing.assert_allclose(val_acc, accuracy, atol=1e-6)
np.testing.assert_allclose(history.history["val_accuracy"][-1], accuracy, atol=1e-6)
np.testing.assert_allclose(history.history["val_loss"][-1], val_loss, rtol=1e-5)
print(f"val accuracy {accuracy:.3f}, cross-entropy {ce:.3f}, aux loss {np.mean(auxes):.3f}")

# Added (CPU run): training learns the planted words well past chance (50%); the loss,
# cross-entropy plus an aux loss of at least 1, falls
assert SHORT or accuracy > 0.9, history.history
assert SHORT or history.history["loss"][-1] < history.history["loss"][0] - 0.2, history.history

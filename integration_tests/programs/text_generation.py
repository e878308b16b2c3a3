"""Port of tensorflow/docs site/en/tutorials/text/text_generation.ipynb (character-level text
generation with Embedding + GRU in a subclassed model, trained with fit, sampled step by step
with the GRU state carried between calls).

Upstream: https://github.com/tensorflow/docs/blob/d16e549c8%5E/site/en/tutorials/text/text_generation.ipynb
(the version before the tutorial moved to tensorflow/text)
Changed: names only (tf.keras.layers -> nn.layers, tf.keras.Model -> nn.Model, tf.data ->
ember.data, tf.random.categorical -> em.random.categorical, tf.squeeze/tf.exp -> em.*,
tf.losses.SparseCategoricalCrossentropy -> nn.losses.SparseCategoricalCrossentropy,
tf.keras.callbacks.ModelCheckpoint(save_weights_only=True) -> a LambdaCallback that writes a
checkpoint.Checkpoint, @tf.function dropped: see generate_one_step). ember has no string tensors, so
StringLookup/tf.strings.unicode_split/reduce_join become a Python dict over the vocabulary
and "".join. The Shakespeare download is replaced by a repeated pangram.
Reduced (EMBER_PROGRAMS_FULL=1 restores it): seq_length 40, batch 16, embedding 16, 64 GRU
units, 6 epochs (upstream: 100, 64, 256, 1024, 20; EMBER_PROGRAMS_SHORT=1: a fifth of
the text, 2 epochs, 20 generated characters, no loss threshold). Added: the untrained mean loss is near
log(vocab size), training halves it, generation returns the requested length, and the
carried state matters (a second step with the state differs from one without).
"""

import os
import time

import numpy as np

import ember.core as em
from ember import checkpoint, data, nn

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
em.random.set_seed(0)

text = "The quick brown fox jumps over the lazy dog. " * (40 if SHORT else 200)
print(f'Length of text: {len(text)} characters')

# The unique characters in the file
vocab = sorted(set(text))
print(f'{len(vocab)} unique characters')

# StringLookup(vocabulary=list(vocab), mask_token=None): index 0 is '[UNK]'
lookup_vocabulary = ['[UNK]'] + list(vocab)
char_to_id = {c: i for i, c in enumerate(lookup_vocabulary)}


def ids_from_chars(chars):
  return np.array([char_to_id.get(c, 0) for c in chars], dtype=np.int64)


def chars_from_ids(ids):
  return [lookup_vocabulary[int(i)] for i in np.asarray(ids).reshape(-1)]


def text_from_ids(ids):
  return "".join(chars_from_ids(ids))


all_ids = ids_from_chars(list(text))
ids_dataset = data.Dataset.from_tensor_slices(all_ids)

seq_length = 100 if FULL else 40
examples_per_epoch = len(text)//(seq_length+1)

sequences = ids_dataset.batch(seq_length+1, drop_remainder=True)


def split_input_target(sequence):
    input_text = sequence[:-1]
    target_text = sequence[1:]
    return input_text, target_text


assert split_input_target(list("Tensorflow")) == (list("Tensorflo"), list("ensorflow"))

dataset = sequences.map(split_input_target)

for input_example, target_example in dataset.take(1):
    print("Input :", text_from_ids(input_example))
    print("Target:", text_from_ids(target_example))

# Batch size
BATCH_SIZE = 64 if FULL else 8

# Buffer size to shuffle the dataset
# (TF data is designed to work with possibly infinite sequences,
# so it doesn't attempt to shuffle the entire sequence in memory. Instead,
# it maintains a buffer in which it shuffles elements).
BUFFER_SIZE = 10000

dataset = (
    dataset
    .shuffle(BUFFER_SIZE)
    .batch(BATCH_SIZE, drop_remainder=True)
    .prefetch(data.AUTOTUNE))

# Length of the vocabulary in chars
vocab_size = len(vocab)

# The embedding dimension
embedding_dim = 256 if FULL else 16

# Number of RNN units
rnn_units = 1024 if FULL else 64


class MyModel(nn.Model):
  def __init__(self, vocab_size, embedding_dim, rnn_units):
    super().__init__(self)
    self.embedding = nn.layers.Embedding(vocab_size, embedding_dim)
    self.gru = nn.layers.GRU(rnn_units,
                             return_sequences=True,
                             return_state=True)
    self.dense = nn.layers.Dense(vocab_size)

  def call(self, inputs, states=None, return_state=False, training=False):
    x = inputs
    x = self.embedding(x, training=training)
    if states is None:
      states = self.gru.get_initial_state(x)
    x, states = self.gru(x, initial_state=states, training=training)
    x = self.dense(x, training=training)

    if return_state:
      return x, states
    else:
      return x


model = MyModel(
    # Be sure the vocabulary size matches the `StringLookup` layers.
    vocab_size=len(lookup_vocabulary),
    embedding_dim=embedding_dim,
    rnn_units=rnn_units)

for input_example_batch, target_example_batch in dataset.take(1):  # noqa: B007
    example_batch_predictions = model(input_example_batch)
    print(example_batch_predictions.shape, "# (batch_size, sequence_length, vocab_size)")
assert example_batch_predictions.shape == (BATCH_SIZE, seq_length, len(lookup_vocabulary))

model.summary()

sampled_indices = em.random.categorical(example_batch_predictions[0], num_samples=1)
sampled_indices = em.squeeze(sampled_indices, axis=-1).numpy()
assert sampled_indices.shape == (seq_length,)

print("Input:\n", text_from_ids(input_example_batch[0]))
print()
print("Next Char Predictions:\n", text_from_ids(sampled_indices))

loss = nn.losses.SparseCategoricalCrossentropy(from_logits=True)

example_batch_loss = loss(target_example_batch, example_batch_predictions)
mean_loss = example_batch_loss.numpy().mean()
print("Prediction shape: ", example_batch_predictions.shape, " # (batch_size, sequence_length, vocab_size)")
print("Mean loss:        ", mean_loss)
assert abs(mean_loss - np.log(len(lookup_vocabulary))) < 0.5, mean_loss
print(em.exp(mean_loss).numpy())

model.compile(optimizer='adam', loss=loss)

# Directory where the checkpoints will be saved
checkpoint_dir = './training_checkpoints'
# Name of the checkpoint files
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt_{epoch}")

checkpoint_callback = nn.callbacks.LambdaCallback(
    on_epoch_end=lambda epoch, logs: checkpoint.Checkpoint(model=model).write(
        checkpoint_prefix.format(epoch=epoch + 1)))

EPOCHS = 20 if FULL else 2 if SHORT else 6

history = model.fit(dataset, epochs=EPOCHS, callbacks=[checkpoint_callback])
losses = history.history["loss"]
print(losses)
assert SHORT or losses[-1] < mean_loss / 2, (mean_loss, losses)


class OneStep(nn.Model):
  def __init__(self, model, chars_from_ids, ids_from_chars, temperature=1.0):
    super().__init__()
    self.temperature = temperature
    self.model = model
    self.chars_from_ids = chars_from_ids
    self.ids_from_chars = ids_from_chars

    # Create a mask to prevent "[UNK]" from being generated.
    mask = np.zeros([len(lookup_vocabulary)], np.float32)
    mask[self.ids_from_chars(['[UNK]'])] = -float('inf')
    self.prediction_mask = em.constant(mask)

  # upstream: @tf.function. Its inputs are Python strings here (ember has no string
  # tensors), and graph.function traces once per Python value, so it stays eager.
  def generate_one_step(self, inputs, states=None):
    # Convert strings to token IDs.
    input_ids = em.constant(np.stack([self.ids_from_chars(list(s)) for s in inputs]))

    # Run the model.
    # predicted_logits.shape is [batch, char, next_char_logits]
    predicted_logits, states = self.model(inputs=input_ids, states=states,
                                          return_state=True)
    # Only use the last prediction.
    predicted_logits = predicted_logits[:, -1, :]
    predicted_logits = predicted_logits/self.temperature
    # Apply the prediction mask: prevent "[UNK]" from being generated.
    predicted_logits = predicted_logits + self.prediction_mask

    # Sample the output logits to generate token IDs.
    predicted_ids = em.random.categorical(predicted_logits, num_samples=1)
    predicted_ids = em.squeeze(predicted_ids, axis=-1)

    # Convert from token ids to characters
    predicted_chars = self.chars_from_ids(predicted_ids)

    # Return the characters and model state.
    return predicted_chars, states


one_step_model = OneStep(model, chars_from_ids, ids_from_chars)

start = time.time()
states = None
next_char = ['The quick ']
result = [next_char]

N_GENERATE = 1000 if FULL else 20 if SHORT else 60
for _n in range(N_GENERATE):
  next_char, states = one_step_model.generate_one_step(next_char, states=states)
  result.append(next_char)

result = ["".join(parts) for parts in zip(*result)]
end = time.time()
print(result[0], '\n\n' + '_'*80)
print('\nRun time:', end - start)
assert len(result[0]) == len('The quick ') + N_GENERATE
assert '[UNK]' not in result[0]

# The state carries the context: one step from "o" after "The quick br" differs from a fresh "o".
logits_fresh, _ = model(em.constant(ids_from_chars(list("o"))[None]), return_state=True)
_, st = model(em.constant(ids_from_chars(list("The quick br"))[None]), return_state=True)
logits_carried, _ = model(em.constant(ids_from_chars(list("o"))[None]), states=st,
                          return_state=True)
assert not np.allclose(logits_fresh.numpy(), logits_carried.numpy(), atol=1e-3)
restored = MyModel(vocab_size=len(lookup_vocabulary), embedding_dim=embedding_dim,
                   rnn_units=rnn_units)
checkpoint.Checkpoint(model=restored).restore(checkpoint_prefix.format(epoch=EPOCHS))
np.testing.assert_allclose(restored(input_example_batch).numpy(),
                           model(input_example_batch).numpy(), rtol=1e-5, atol=1e-6)

"""Port of tensorflow/docs site/en/tutorials/text/nmt_with_attention.ipynb (seq2seq with
Bahdanau attention: a GRU encoder, an attention layer and a GRU decoder, trained with a
custom GradientTape loop and teacher forcing, with a masked loss and checkpoints).

Upstream: https://github.com/tensorflow/docs/blob/d16e549c8%5E/site/en/tutorials/text/nmt_with_attention.ipynb
(the version before the tutorial moved to tensorflow/text)
Changed: names only (tf.keras.Model/layers -> nn.Model/nn.layers, tf.* ops -> em.*,
tf.nn.tanh/softmax -> em.tanh/em.nn_ops.softmax, tf.math.logical_not/equal -> em.*,
tf.keras.losses.SparseCategoricalCrossentropy -> nn.losses.SparseCategoricalCrossentropy,
tf.train.Checkpoint ->
checkpoint.Checkpoint, @tf.function -> @graph.function). ember has no text utilities, so the Spanish-English
download, tf.keras.preprocessing.text.Tokenizer, pad_sequences and sklearn's train_test_split
become a synthetic English -> Spanish number-word corpus, a ten-line Tokenizer and numpy.
Reduced (EMBER_PROGRAMS_FULL=1 restores it): 600 pairs, batch 16, embedding 32, 64 units,
6 epochs (upstream: 30,000 pairs, 64, 256, 1024, 10; EMBER_PROGRAMS_SHORT=1: 200 pairs,
2 epochs, no loss threshold). Added: shapes the tutorial prints, the
epoch loss falls by a factor 1.35, a translation holds only target-vocabulary words, and a
checkpoint restores the encoder exactly.
"""

import os
import re
import time
import unicodedata

import numpy as np

import ember.core as em
from ember import checkpoint as ckpt_lib
from ember import data, graph, nn, tape

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
em.random.set_seed(0)
rng = np.random.default_rng(0)

EN = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
ES = ["uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez"]


def synthetic_pairs(n):
  pairs = []
  for _ in range(n):
    idx = rng.integers(0, 10, size=rng.integers(2, 6))
    pairs.append((" ".join(EN[i] for i in idx) + ".", " ".join(ES[i] for i in idx) + "."))
  return pairs


# Converts the unicode file to ascii
def unicode_to_ascii(s):
  return ''.join(c for c in unicodedata.normalize('NFD', s)
                 if unicodedata.category(c) != 'Mn')


def preprocess_sentence(w):
  w = unicode_to_ascii(w.lower().strip())

  # creating a space between a word and the punctuation following it
  # eg: "he is a boy." => "he is a boy ."
  # Reference:- https://stackoverflow.com/questions/3645931/python-padding-punctuation-with-white-spaces-keeping-punctuation
  w = re.sub(r"([?.!,¿])", r" \1 ", w)
  w = re.sub(r'[" "]+', " ", w)

  # replacing everything with space except (a-z, A-Z, ".", "?", "!", ",")
  w = re.sub(r"[^a-zA-Z?.!,¿]+", " ", w)

  w = w.strip()

  # adding a start and an end token to the sentence
  # so that the model know when to start and stop predicting.
  w = '<start> ' + w + ' <end>'
  return w


en_sentence = "May I borrow this book?"
sp_sentence = "¿Puedo tomar prestado este libro?"
assert preprocess_sentence(en_sentence) == "<start> may i borrow this book ? <end>"
assert preprocess_sentence(sp_sentence) == "<start> ¿ puedo tomar prestado este libro ? <end>"


# 1. Remove the accents
# 2. Clean the sentences
# 3. Return word pairs in the format: [ENGLISH, SPANISH]
def create_dataset(num_examples):
  word_pairs = [[preprocess_sentence(w) for w in line]
                for line in synthetic_pairs(num_examples)]

  return zip(*word_pairs)


class Tokenizer:
  """What tf.keras.preprocessing.text.Tokenizer(filters='') does for these sentences."""

  def fit_on_texts(self, texts):
    counts = {}
    for t in texts:
      for w in t.split(' '):
        counts[w] = counts.get(w, 0) + 1
    order = sorted(counts, key=lambda w: -counts[w])
    self.word_index = {w: i + 1 for i, w in enumerate(order)}
    self.index_word = {i: w for w, i in self.word_index.items()}

  def texts_to_sequences(self, texts):
    return [[self.word_index[w] for w in t.split(' ')] for t in texts]


def pad_sequences(seqs, maxlen=None, padding='post'):
  maxlen = maxlen or max(len(s) for s in seqs)
  out = np.zeros((len(seqs), maxlen), np.int32)
  for i, s in enumerate(seqs):
    out[i, :len(s)] = s[:maxlen]
  return out


def tokenize(lang):
  lang_tokenizer = Tokenizer()
  lang_tokenizer.fit_on_texts(lang)

  tensor = lang_tokenizer.texts_to_sequences(lang)

  tensor = pad_sequences(tensor, padding='post')

  return tensor, lang_tokenizer


def load_dataset(num_examples=None):
  # creating cleaned input, output pairs
  inp_lang, targ_lang = create_dataset(num_examples)  # English -> Spanish here

  input_tensor, inp_lang_tokenizer = tokenize(inp_lang)
  target_tensor, targ_lang_tokenizer = tokenize(targ_lang)

  return input_tensor, target_tensor, inp_lang_tokenizer, targ_lang_tokenizer


# Try experimenting with the size of that dataset
num_examples = 30000 if FULL else 200 if SHORT else 600
input_tensor, target_tensor, inp_lang, targ_lang = load_dataset(num_examples)

# Calculate max_length of the target tensors
max_length_targ, max_length_inp = target_tensor.shape[1], input_tensor.shape[1]

# Creating training and validation sets using an 80-20 split
split = int(0.8 * len(input_tensor))
input_tensor_train, input_tensor_val = input_tensor[:split], input_tensor[split:]
target_tensor_train, target_tensor_val = target_tensor[:split], target_tensor[split:]

print(len(input_tensor_train), len(target_tensor_train), len(input_tensor_val), len(target_tensor_val))

BUFFER_SIZE = len(input_tensor_train)
BATCH_SIZE = 64 if FULL else 16
steps_per_epoch = len(input_tensor_train)//BATCH_SIZE
embedding_dim = 256 if FULL else 32
units = 1024 if FULL else 64
vocab_inp_size = len(inp_lang.word_index)+1
vocab_tar_size = len(targ_lang.word_index)+1

dataset = data.Dataset.from_tensor_slices((input_tensor_train, target_tensor_train)).shuffle(BUFFER_SIZE)
dataset = dataset.batch(BATCH_SIZE, drop_remainder=True)

example_input_batch, example_target_batch = next(iter(dataset))
assert example_input_batch.shape == (BATCH_SIZE, max_length_inp)
assert example_target_batch.shape == (BATCH_SIZE, max_length_targ)


class Encoder(nn.Model):
  def __init__(self, vocab_size, embedding_dim, enc_units, batch_sz):
    super().__init__()
    self.batch_sz = batch_sz
    self.enc_units = enc_units
    self.embedding = nn.layers.Embedding(vocab_size, embedding_dim)
    self.gru = nn.layers.GRU(self.enc_units,
                             return_sequences=True,
                             return_state=True,
                             recurrent_initializer='glorot_uniform')

  def call(self, x, hidden):
    x = self.embedding(x)
    output, state = self.gru(x, initial_state=hidden)
    return output, state

  def initialize_hidden_state(self):
    return em.zeros((self.batch_sz, self.enc_units))


encoder = Encoder(vocab_inp_size, embedding_dim, units, BATCH_SIZE)

# sample input
sample_hidden = encoder.initialize_hidden_state()
sample_output, sample_hidden = encoder(example_input_batch, sample_hidden)
assert sample_output.shape == (BATCH_SIZE, max_length_inp, units)
assert sample_hidden.shape == (BATCH_SIZE, units)


class BahdanauAttention(nn.layers.Layer):
  def __init__(self, units):
    super().__init__()
    self.W1 = nn.layers.Dense(units)
    self.W2 = nn.layers.Dense(units)
    self.V = nn.layers.Dense(1)

  def call(self, query, values):
    # query hidden state shape == (batch_size, hidden size)
    # query_with_time_axis shape == (batch_size, 1, hidden size)
    # values shape == (batch_size, max_len, hidden size)
    # we are doing this to broadcast addition along the time axis to calculate the score
    query_with_time_axis = em.expand_dims(query, 1)

    # score shape == (batch_size, max_length, 1)
    # we get 1 at the last axis because we are applying score to self.V
    # the shape of the tensor before applying self.V is (batch_size, max_length, units)
    score = self.V(em.tanh(
        self.W1(query_with_time_axis) + self.W2(values)))

    # attention_weights shape == (batch_size, max_length, 1)
    attention_weights = em.nn_ops.softmax(score, axis=1)

    # context_vector shape after sum == (batch_size, hidden_size)
    context_vector = attention_weights * values
    context_vector = em.reduce_sum(context_vector, axis=1)

    return context_vector, attention_weights


attention_layer = BahdanauAttention(10)
attention_result, attention_weights = attention_layer(sample_hidden, sample_output)
assert attention_result.shape == (BATCH_SIZE, units)
assert attention_weights.shape == (BATCH_SIZE, max_length_inp, 1)
np.testing.assert_allclose(attention_weights.numpy().sum(axis=1), 1.0, rtol=1e-5)


class Decoder(nn.Model):
  def __init__(self, vocab_size, embedding_dim, dec_units, batch_sz):
    super().__init__()
    self.batch_sz = batch_sz
    self.dec_units = dec_units
    self.embedding = nn.layers.Embedding(vocab_size, embedding_dim)
    self.gru = nn.layers.GRU(self.dec_units,
                             return_sequences=True,
                             return_state=True,
                             recurrent_initializer='glorot_uniform')
    self.fc = nn.layers.Dense(vocab_size)

    # used for attention
    self.attention = BahdanauAttention(self.dec_units)

  def call(self, x, hidden, enc_output):
    # enc_output shape == (batch_size, max_length, hidden_size)
    context_vector, attention_weights = self.attention(hidden, enc_output)

    # x shape after passing through embedding == (batch_size, 1, embedding_dim)
    x = self.embedding(x)

    # x shape after concatenation == (batch_size, 1, embedding_dim + hidden_size)
    x = em.concat([em.expand_dims(context_vector, 1), x], axis=-1)

    # passing the concatenated vector to the GRU
    output, state = self.gru(x)

    # output shape == (batch_size * 1, hidden_size)
    output = em.reshape(output, (-1, output.shape[2]))

    # output shape == (batch_size, vocab)
    x = self.fc(output)

    return x, state, attention_weights


decoder = Decoder(vocab_tar_size, embedding_dim, units, BATCH_SIZE)

sample_decoder_output, _, _ = decoder(em.random.uniform((BATCH_SIZE, 1)),
                                      sample_hidden, sample_output)
assert sample_decoder_output.shape == (BATCH_SIZE, vocab_tar_size)

optimizer = nn.optimizers.Adam()


loss_object = nn.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                       reduction='none')


def loss_function(real, pred):
  mask = em.logical_not(em.equal(real, 0))
  loss_ = loss_object(real, pred)

  mask = em.cast(mask, dtype=loss_.dtype)
  loss_ *= mask

  return em.reduce_mean(loss_)


checkpoint_dir = './training_checkpoints'
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
checkpoint = ckpt_lib.Checkpoint(optimizer=optimizer,
                                 encoder=encoder,
                                 decoder=decoder)


@graph.function
def train_step(inp, targ, enc_hidden):
  loss = 0

  with tape.GradientTape() as t:
    enc_output, enc_hidden = encoder(inp, enc_hidden)

    dec_hidden = enc_hidden

    dec_input = em.expand_dims([targ_lang.word_index['<start>']] * BATCH_SIZE, 1)

    # Teacher forcing - feeding the target as the next input
    for t_ in range(1, targ.shape[1]):
      # passing enc_output to the decoder
      predictions, dec_hidden, _ = decoder(dec_input, dec_hidden, enc_output)

      loss += loss_function(targ[:, t_], predictions)

      # using teacher forcing
      dec_input = em.expand_dims(targ[:, t_], 1)

  batch_loss = (loss / int(targ.shape[1]))

  variables = encoder.trainable_variables + decoder.trainable_variables

  gradients = t.gradient(loss, variables)

  optimizer.apply_gradients(zip(gradients, variables))

  return batch_loss


EPOCHS = 10 if FULL else 2 if SHORT else 6
epoch_losses = []

for epoch in range(EPOCHS):
  start = time.time()

  enc_hidden = encoder.initialize_hidden_state()
  total_loss = 0

  for (batch, (inp, targ)) in enumerate(dataset.take(steps_per_epoch)):
    batch_loss = train_step(inp, targ, enc_hidden)
    total_loss += batch_loss

    if batch % 100 == 0:
      print(f'Epoch {epoch+1} Batch {batch} Loss {batch_loss.numpy():.4f}')
  # saving (checkpoint) the model every 2 epochs
  if (epoch + 1) % 2 == 0:
    checkpoint.save(file_prefix=checkpoint_prefix)

  print(f'Epoch {epoch+1} Loss {total_loss/steps_per_epoch:.4f}')
  print(f'Time taken for 1 epoch {time.time()-start:.2f} sec\n')
  epoch_losses.append(float(total_loss/steps_per_epoch))

assert SHORT or epoch_losses[-1] < epoch_losses[0] / 1.35, epoch_losses


def evaluate(sentence):
  attention_plot = np.zeros((max_length_targ, max_length_inp))

  sentence = preprocess_sentence(sentence)

  inputs = [inp_lang.word_index[i] for i in sentence.split(' ')]
  inputs = pad_sequences([inputs],
                         maxlen=max_length_inp,
                         padding='post')
  inputs = em.convert_to_tensor(inputs)

  result = ''

  hidden = [em.zeros((1, units))]
  enc_out, enc_hidden = encoder(inputs, hidden)

  dec_hidden = enc_hidden
  dec_input = em.expand_dims([targ_lang.word_index['<start>']], 0)

  for t in range(max_length_targ):
    predictions, dec_hidden, attention_weights = decoder(dec_input,
                                                         dec_hidden,
                                                         enc_out)

    # storing the attention weights to plot later on
    attention_weights = em.reshape(attention_weights, (-1, ))
    attention_plot[t] = attention_weights.numpy()

    predicted_id = em.argmax(predictions[0]).numpy()

    result += targ_lang.index_word[int(predicted_id)] + ' '

    if targ_lang.index_word[int(predicted_id)] == '<end>':
      return result, sentence, attention_plot

    # the predicted ID is fed back into the model
    dec_input = em.expand_dims([predicted_id], 0)

  return result, sentence, attention_plot


def translate(sentence):
  result, sentence, attention_plot = evaluate(sentence)

  print('Input:', sentence)
  print('Predicted translation:', result)
  return result


encoder_before = encoder(em.constant(input_tensor_val[:BATCH_SIZE]),
                         encoder.initialize_hidden_state())[0].numpy()
# restoring the latest checkpoint in checkpoint_dir
checkpoint.restore(ckpt_lib.latest_checkpoint(checkpoint_dir))
np.testing.assert_allclose(
    encoder(em.constant(input_tensor_val[:BATCH_SIZE]),
            encoder.initialize_hidden_state())[0].numpy(), encoder_before, rtol=1e-6)

words = translate("two five.").split()
assert 0 < len(words) <= max_length_targ and set(words) <= set(targ_lang.word_index), words

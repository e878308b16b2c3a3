"""Port of keras-team/keras-io examples/nlp/ner_transformers.py ("Named Entity Recognition
using Transformers": CoNLL 2003 exported to a tab-separated file, read by TextLineDataset,
split and tag-shifted in a map, lowercased and turned into ids by a StringLookup, batched
with padded_batch; a keras.Model subclass of token + position embeddings, a Transformer
block and a softmax Dense per token; a custom Loss subclass that ignores the padding;
compile/fit, a sample prediction and conlleval's chunk F1 on the validation set).

Upstream: https://github.com/keras-team/keras-io/blob/1909c6710cd3f5af6401f1176dcee9e26781b4f3/examples/nlp/ner_transformers.py
Changed: names only (keras / keras.layers -> ember.nn / nn.layers, keras.ops -> nn.ops,
tf.data.TextLineDataset -> ember.data.TextLineDataset, tf.config.run_functions_eagerly ->
graph.run_functions_eagerly), except where a GAP says otherwise. Nothing can be downloaded
here: HuggingFace's load_dataset("conll2003") is replaced by a CoNLL-like corpus this
program generates (news sentences from 16 templates over lists of persons, organisations,
locations and MISC adjectives/events, with CoNLL's casing and its 9 IOB2 tags numbered as
HuggingFace's, 0 = O ... 8 = I-MISC; some words are ambiguous, the tag depending on the
context: "Washington" and "Jordan" are persons or locations, "European" MISC or the start
of an ORG, "United" B-ORG or I-ORG, a surname alone is B-PER and after a first name I-PER),
held in a small stand-in with HuggingFace's record iteration and column access (with
CoNLL's "-DOCSTART-" records and an empty one), so upstream's export_to_file and vocabulary
code run unchanged and write ./data/conll_*.txt in upstream's layout (in a temporary
directory made the working directory); the conlleval.py that upstream downloads
(sighsmile/conlleval) is a shortened copy of its evaluate (same counting and report, and
its verbose argument). calculate_metrics returns conlleval's scores (upstream drops them).
Reduced (EMBER_PROGRAMS_FULL=1 restores it): 1,200 training and 300 validation sentences,
8 epochs (upstream: CoNLL's 14,041 and 3,250, 10 epochs); vocab_size, maxlen, batch_size
and the model's sizes are upstream's. EMBER_PROGRAMS_SHORT=1: 160 and 60 sentences,
1 epoch, no thresholds.
Upstream's own (kept, but for one argument): `ops.reshape(sample_input, shape=[1, -1])`
raises TypeError in Keras 3 as in ember (keras.ops.reshape(x, newshape) has no `shape`
argument, Keras 3.15 included): the shape is passed by position.
Added: seeds; the generated files' lines (a count, the tokens, the tags) and what
TextLineDataset reads back; the tag table; StringLookup's vocabulary ("[UNK]" then the
words) and ids against a Python dict; each padded batch (int64, as long as its longest
sentence, padded with 0, the tags HuggingFace's + 1) against the corpus; the model's output
shape and a float64 numpy forward pass of its weights (embeddings, 4-head attention,
LayerNormalization with epsilon 1e-6, the feed-forward network, the softmax) against
predict, before and after training; the custom loss against numpy's masked cross-entropy
(probabilities clipped to [1e-7, 1 - 1e-7], as Keras) and evaluate's loss against the
batch-size-weighted mean of it over the batches (Keras 3's loss tracker; the last batch is
smaller); conlleval's stand-in on a hand-counted example; calculate_metrics's scores equal
those of tags computed in numpy; fit's loss falls below a fifth of its first epoch's and
below 0.1 log(10); the sample sentence is tagged as upstream's comment says (eu B-ORG,
german and british B-MISC; the corpus has its template); and the validation chunk F1 passes
90 and beats by 3 points tagging each word with its commonest training tag (92.35 here: the
most a tagger that ignores the context gets from these ambiguities; untrained: about 10;
this run 98.7, six other seeds 97.9 to 98.9).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
1. (by design, docs/guide/preprocessing.md) no string tensors, so no tf.strings
(AttributeError): tf.strings.split/to_number/lower become str.split, numpy's astype and
np.char.translate (ASCII letters only, as TF's default) on the numpy str array;
TextLineDataset's lines are str (TF: bytes).
Checked and the same as Keras 3.15 (not a gap): MultiHeadAttention draws its kernels with
glorot_uniform's fans over the contracted and the other axes (limit 0.194 here), as Keras
3.15's EinsumDense does (keras-team/keras#22789); Keras before 3.15 took its 3-D kernels'
fans as a convolution's (limits 0.072 and 0.153).
"""

import collections
import os
import random
import string
import tempfile
from collections import Counter

import numpy as np

import ember.core as em
from ember import data, graph, nn
from ember.nn import layers

ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
keras = nn  # the example's `keras.` prefix
ops = nn.ops  # and its `keras.ops`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
em.random.set_seed(0)
np.random.seed(0)
random.seed(0)
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)  # upstream writes ./data where it runs


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = keras.layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=embed_dim
        )
        self.ffn = keras.Sequential(
            [
                keras.layers.Dense(ff_dim, activation="relu"),
                keras.layers.Dense(embed_dim),
            ]
        )
        self.layernorm1 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = keras.layers.Dropout(rate)
        self.dropout2 = keras.layers.Dropout(rate)

    def call(self, inputs, training=False):
        attn_output = self.att(inputs, inputs)
        attn_output = self.dropout1(attn_output, training=training)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output, training=training)
        return self.layernorm2(out1 + ffn_output)


"""
Next, let's define a `TokenAndPositionEmbedding` layer:
"""


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = keras.layers.Embedding(
            input_dim=vocab_size, output_dim=embed_dim
        )
        self.pos_emb = keras.layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, inputs):
        maxlen = ops.shape(inputs)[-1]
        positions = ops.arange(start=0, stop=maxlen, step=1)
        position_embeddings = self.pos_emb(positions)
        token_embeddings = self.token_emb(inputs)
        return token_embeddings + position_embeddings


"""
## Build the NER model class as a `keras.Model` subclass
"""


class NERModel(keras.Model):
    def __init__(
        self, num_tags, vocab_size, maxlen=128, embed_dim=32, num_heads=2, ff_dim=32
    ):
        super().__init__()
        self.embedding_layer = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)
        self.transformer_block = TransformerBlock(embed_dim, num_heads, ff_dim)
        self.dropout1 = layers.Dropout(0.1)
        self.ff = layers.Dense(ff_dim, activation="relu")
        self.dropout2 = layers.Dropout(0.1)
        self.ff_final = layers.Dense(num_tags, activation="softmax")

    def call(self, inputs, training=False):
        x = self.embedding_layer(inputs)
        x = self.transformer_block(x)
        x = self.dropout1(x, training=training)
        x = self.ff(x)
        x = self.dropout2(x, training=training)
        x = self.ff_final(x)
        return x


"""
## Load the CoNLL 2003 dataset (generated here: nothing can be downloaded)

HuggingFace numbers the tags O 0, B-PER 1, I-PER 2, B-ORG 3, I-ORG 4, B-LOC 5, I-LOC 6,
B-MISC 7, I-MISC 8.
"""

HF_TAGS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
FIRST = ["Peter", "Anna", "John", "Maria", "Hans", "Mark", "Linda", "Ivan", "Paul", "Sofia",
         "Carlos", "Yuki", "George", "Michael"]
LAST = ["Blackburn", "Schmidt", "Jones", "Rossi", "Petrov", "Clarke", "Dubois", "Tanaka",
        "Novak", "Silva", "Meyer", "Walsh", "Washington", "Jordan"]
ORGS = ["EU", "European Commission", "United Nations", "Reuters", "Bayer", "Manchester United",
        "NATO", "Fiat", "Ajax", "Bundesbank", "Red Cross", "Sony", "United Airlines"]
LOCS = ["Germany", "Britain", "France", "New York", "Brussels", "Moscow", "Tokyo", "Bonn",
        "Italy", "Hong Kong", "Washington", "Jordan", "Sri Lanka", "Paris"]
MISCS = ["German", "British", "French", "European", "Russian", "Italian", "Japanese",
         "World Cup", "Olympic", "Dutch", "Australian Open"]
FILL = {"DAY": ["Monday", "Tuesday", "Wednesday", "Friday", "Sunday"],
        "NUM": ["1996", "two", "3-1", "10", "1.5", "seven", "2-0", "40"]}
TEMPLATES = [
    "ORG rejects MISC call to boycott MISC lamb .",
    "PER said on DAY that ORG would cut jobs in LOC .",
    "PER , a MISC official , arrived in LOC on DAY .",
    "The ORG met PER in LOC .",
    "LOC beat LOC NUM in the MISC league .",
    "Shares in ORG rose NUM percent on DAY .",
    "MISC farmers protested outside the ORG offices in LOC .",
    "PER told ORG that PER will visit LOC .",
    "Police in LOC arrested NUM people on DAY .",
    "ORG chairman PER resigned on DAY .",
    "PER won the MISC title in LOC .",
    "It was the first MISC win for PER since NUM .",
    "ORG said it expected NUM percent growth in LOC .",
    "MISC troops left LOC on DAY , ORG said .",
    "PER and PER met in LOC to discuss the MISC proposal .",
    "LOC 's central bank , the ORG , kept rates at NUM percent .",
]


def entity(kind, rng):
    if kind == "PER":
        r = rng.random()
        words = ([rng.choice(FIRST), rng.choice(LAST)] if r < 0.5 else
                 [rng.choice(LAST)] if r < 0.8 else [rng.choice(FIRST)])
    else:
        words = rng.choice({"ORG": ORGS, "LOC": LOCS, "MISC": MISCS}[kind]).split()
    first, inside = HF_TAGS.index("B-" + kind), HF_TAGS.index("I-" + kind)
    return words, [first] + [inside] * (len(words) - 1)


def make_split(n, seed):
    rng = random.Random(seed)
    records = []
    for i in range(n):
        if i % 40 == 0:  # CoNLL's document separators
            records.append({"tokens": ["-DOCSTART-"], "ner_tags": [0]})
        tokens, ner_tags = [], []
        for slot in rng.choice(TEMPLATES).split():
            if slot in ("PER", "ORG", "LOC", "MISC"):
                words, tags = entity(slot, rng)
            else:
                words, tags = [rng.choice(FILL[slot]) if slot in FILL else slot], [0]
            tokens += words
            ner_tags += tags
        records.append({"tokens": tokens, "ner_tags": ner_tags})
    records.append({"tokens": [], "ner_tags": []})  # CoNLL has empty records; export skips them
    return records


class Split(list):
    """A list of records that also gives a column by name, as a HuggingFace Dataset does."""

    def __getitem__(self, key):
        if isinstance(key, str):
            return [record[key] for record in self]
        return super().__getitem__(key)


def load_dataset(name):  # stands in for datasets.load_dataset (nothing can be downloaded)
    assert name == "conll2003"
    n_train, n_val = (14041, 3250) if FULL else (160, 60) if SHORT else (1200, 300)
    return {"train": Split(make_split(n_train, 1)), "validation": Split(make_split(n_val, 2))}


def evaluate(true_seqs, pred_seqs, verbose=True):
    """conlleval.py's evaluate (sighsmile/conlleval), shortened: chunk precision, recall, F1."""

    def split_tag(chunk_tag):
        return ("O", None) if chunk_tag == "O" else tuple(chunk_tag.split("-", maxsplit=1))

    def is_chunk_end(prev_tag, tag):
        (prefix1, type1), (prefix2, type2) = split_tag(prev_tag), split_tag(tag)
        if prefix1 == "O":
            return False
        if prefix2 == "O":
            return True
        return type1 != type2 or prefix2 in ["B", "S"] or prefix1 in ["E", "S"]

    def is_chunk_start(prev_tag, tag):
        (prefix1, type1), (prefix2, type2) = split_tag(prev_tag), split_tag(tag)
        if prefix2 == "O":
            return False
        if prefix1 == "O":
            return True
        return type1 != type2 or prefix2 in ["B", "S"] or prefix1 in ["E", "S"]

    correct_chunks, true_chunks, pred_chunks = (collections.defaultdict(int) for _ in range(3))
    correct_counts, true_counts = collections.defaultdict(int), collections.defaultdict(int)
    prev_true_tag, prev_pred_tag, correct_chunk = "O", "O", None
    for true_tag, pred_tag in zip(true_seqs, pred_seqs):
        if true_tag == pred_tag:
            correct_counts[true_tag] += 1
        true_counts[true_tag] += 1
        _, true_type = split_tag(true_tag)
        _, pred_type = split_tag(pred_tag)
        if correct_chunk is not None:
            true_end = is_chunk_end(prev_true_tag, true_tag)
            pred_end = is_chunk_end(prev_pred_tag, pred_tag)
            if pred_end and true_end:
                correct_chunks[correct_chunk] += 1
                correct_chunk = None
            elif pred_end != true_end or true_type != pred_type:
                correct_chunk = None
        true_start = is_chunk_start(prev_true_tag, true_tag)
        pred_start = is_chunk_start(prev_pred_tag, pred_tag)
        if true_start and pred_start and true_type == pred_type:
            correct_chunk = true_type
        if true_start:
            true_chunks[true_type] += 1
        if pred_start:
            pred_chunks[pred_type] += 1
        prev_true_tag, prev_pred_tag = true_tag, pred_tag
    if correct_chunk is not None:
        correct_chunks[correct_chunk] += 1

    def calc_metrics(tp, p, t):
        precision = tp / p if p else 0
        recall = tp / t if t else 0
        fb1 = 2 * precision * recall / (precision + recall) if precision + recall else 0
        return 100 * precision, 100 * recall, 100 * fb1

    n_correct, n_pred, n_true = (sum(c.values()) for c in (correct_chunks, pred_chunks,
                                                           true_chunks))
    prec, rec, f1 = calc_metrics(n_correct, n_pred, n_true)
    if not verbose:
        return prec, rec, f1
    n_tokens, non_o = sum(true_counts.values()), sum(v for k, v in true_counts.items() if k != "O")
    print(f"processed {n_tokens} tokens with {n_true} phrases; found: {n_pred} phrases; "
          f"correct: {n_correct}.")
    non_o_correct = sum(v for k, v in correct_counts.items() if k != "O")
    print(f"accuracy: {100 * non_o_correct / max(non_o, 1):6.2f}%; (non-O)")
    print(f"accuracy: {100 * sum(correct_counts.values()) / n_tokens:6.2f}%; precision: "
          f"{prec:6.2f}%; recall: {rec:6.2f}%; FB1: {f1:6.2f}")
    for t in sorted(set(true_chunks) | set(pred_chunks)):
        p, r, f = calc_metrics(correct_chunks[t], pred_chunks[t], true_chunks[t])
        print(f"{t:>17}: precision: {p:6.2f}%; recall: {r:6.2f}%; FB1: {f:6.2f}  {pred_chunks[t]}")
    return prec, rec, f1


# Added: conlleval's stand-in on a hand-counted example (2 true chunks, 3 found, 1 correct:
# "Peter Blackburn" found whole; "Bonn" found as ORG; "EU" found where there is none)
np.testing.assert_allclose(evaluate(["B-PER", "I-PER", "O", "B-LOC", "O"],
                                    ["B-PER", "I-PER", "O", "B-ORG", "B-ORG"], verbose=False),
                           (100 / 3, 50.0, 40.0))

conll_data = load_dataset("conll2003")

"""
We will export this data to a tab-separated file format which will be easy to read as a
`tf.data.Dataset` object.
"""


def export_to_file(export_file_path, data):
    with open(export_file_path, "w") as f:
        for record in data:
            ner_tags = record["ner_tags"]
            tokens = record["tokens"]
            if len(tokens) > 0:
                f.write(
                    str(len(tokens))
                    + "\t"
                    + "\t".join(tokens)
                    + "\t"
                    + "\t".join(map(str, ner_tags))
                    + "\n"
                )


os.mkdir("data")
export_to_file("./data/conll_train.txt", conll_data["train"])
export_to_file("./data/conll_val.txt", conll_data["validation"])

# Added: one line per non-empty record: its length, its tokens, its tags
with open("./data/conll_train.txt") as f:
    train_lines = f.read().splitlines()
assert len(train_lines) == len(conll_data["train"]) - 1
for line, record in zip(train_lines, conll_data["train"], strict=False):
    n = len(record["tokens"])
    assert line.split("\t") == [str(n)] + record["tokens"] + [str(t) for t in record["ner_tags"]]

"""
## Make the NER label lookup table
"""


def make_tag_lookup_table():
    iob_labels = ["B", "I"]
    ner_labels = ["PER", "ORG", "LOC", "MISC"]
    all_labels = [(label1, label2) for label2 in ner_labels for label1 in iob_labels]
    all_labels = ["-".join([a, b]) for a, b in all_labels]
    all_labels = ["[PAD]", "O"] + all_labels
    return dict(zip(range(0, len(all_labels) + 1), all_labels))


mapping = make_tag_lookup_table()
print(mapping)
# Added: 0 pads, and tag t of HuggingFace's numbering is mapping[t + 1]
assert mapping == dict(enumerate(["[PAD]"] + HF_TAGS))

"""
Get a list of all tokens in the training dataset. This will be used to create the
vocabulary.
"""

all_tokens = sum(conll_data["train"]["tokens"], [])
all_tokens_array = np.array(list(map(str.lower, all_tokens)))

counter = Counter(all_tokens_array)
print(len(counter))

num_tags = len(mapping)
vocab_size = 20000

# We only take (vocab_size - 2) most commons words from the training data since
# the `StringLookup` class uses 2 additional tokens - one denoting an unknown
# token and another one denoting a masking token
vocabulary = [token for token, count in counter.most_common(vocab_size - 2)]

# The StringLook class will convert tokens to token IDs
lookup_layer = keras.layers.StringLookup(vocabulary=vocabulary)

# Added: Keras's StringLookup has one OOV token ("[UNK]", id 0) and no mask token by
# default, so word i of the vocabulary is id i + 1
assert lookup_layer.get_vocabulary() == ["[UNK]"] + vocabulary
word_id = {w: i + 1 for i, w in enumerate(vocabulary)}

"""
Create 2 new `Dataset` objects from the training and validation data
"""

train_data = data.TextLineDataset("./data/conll_train.txt")
val_data = data.TextLineDataset("./data/conll_val.txt")

"""
Print out one line to make sure it looks good. The first record in the line is the number of tokens.
After that we will have all the tokens followed by all the ner tags.
"""

print(list(train_data.take(1).as_numpy_iterator()))
# Added: the lines read back are the lines written (str here; TF's are bytes, GAP 1)
assert list(train_data.as_numpy_iterator()) == train_lines

"""
We will be using the following map function to transform the data in the dataset:
"""


def map_record_to_training_data(record):
    # GAP 1: record = tf.strings.split(record, sep="\t")
    record = np.array(record.split("\t"))
    # GAP 1: length = tf.strings.to_number(record[0], out_type=tf.int32)
    length = record[0].astype(np.int32)
    tokens = record[1 : length + 1]
    tags = record[length + 1 :]
    # GAP 1: tags = tf.strings.to_number(tags, out_type=tf.int64)
    tags = tags.astype(np.int64)
    tags += 1
    return tokens, tags


def lowercase_and_convert_to_ids(tokens):
    # GAP 1: tokens = tf.strings.lower(tokens)   (ASCII letters only, TF's default encoding)
    tokens = np.char.translate(np.asarray(tokens, dtype=str), ASCII_LOWER)
    return lookup_layer(tokens)


# We use `padded_batch` here because each record in the dataset has a
# different length.
batch_size = 32
train_dataset = (
    train_data.map(map_record_to_training_data)
    .map(lambda x, y: (lowercase_and_convert_to_ids(x), y))
    .padded_batch(batch_size)
)
val_dataset = (
    val_data.map(map_record_to_training_data)
    .map(lambda x, y: (lowercase_and_convert_to_ids(x), y))
    .padded_batch(batch_size)
)

# Added: every padded batch against the corpus: int64 ids and tags, as long as the batch's
# longest sentence, padded with 0; the tags HuggingFace's + 1
records = [r for r in conll_data["train"] if r["tokens"]]
seen = 0
for x, y in train_dataset:
    batch = records[seen : seen + batch_size]
    width = max(len(r["tokens"]) for r in batch)
    assert x.dtype == np.int64 and y.dtype == np.int64, (x.dtype, y.dtype)
    assert x.shape == y.shape == (len(batch), width), (x.shape, y.shape)
    want_x, want_y = np.zeros((len(batch), width), np.int64), np.zeros((len(batch), width), np.int64)
    for i, r in enumerate(batch):
        want_x[i, : len(r["tokens"])] = [word_id[w.lower()] for w in r["tokens"]]
        want_y[i, : len(r["tokens"])] = np.array(r["ner_tags"]) + 1
    np.testing.assert_array_equal(np.asarray(x), want_x)
    np.testing.assert_array_equal(np.asarray(y), want_y)
    seen += len(batch)
assert seen == len(records)

ner_model = NERModel(num_tags, vocab_size, embed_dim=32, num_heads=4, ff_dim=64)

# (added) the attention kernels' glorot_uniform limit is Keras 3.15's: fan_in 32 (the
# contracted features), fan_out 128 (heads x key_dim)
ner_model(next(iter(train_dataset))[0][:1])
att = ner_model.transformer_block.att
assert np.abs(att.query_dense.kernel.numpy()).max() <= np.sqrt(6 / (32 + 4 * 32))

"""
We will be using a custom loss function that will ignore the loss from padded tokens.
"""


class CustomNonPaddingTokenLoss(keras.losses.Loss):
    def __init__(self, name="custom_ner_loss"):
        super().__init__(name=name)

    def call(self, y_true, y_pred):
        loss_fn = keras.losses.SparseCategoricalCrossentropy(
            from_logits=False, reduction=None
        )
        loss = loss_fn(y_true, y_pred)
        mask = ops.cast((y_true > 0), dtype="float32")
        loss = loss * mask
        return ops.sum(loss) / ops.sum(mask)


loss = CustomNonPaddingTokenLoss()


def numpy_loss(y_true, probs):  # added: the masked cross-entropy, in float64
    p = np.take_along_axis(probs.astype(np.float64), y_true[..., None], axis=-1)[..., 0]
    ce = -np.log(np.clip(p, 1e-7, 1 - 1e-7))
    mask = y_true > 0
    return (ce * mask).sum() / mask.sum()


def numpy_forward(model, ids):  # added: the model's forward pass in float64 numpy
    def f64(v):
        return v.numpy().astype(np.float64)

    def dense(x, layer):
        return x @ f64(layer.kernel) + f64(layer.bias)

    def layer_norm(x, layer):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-6) * f64(layer.gamma) + f64(layer.beta)

    def softmax(z):
        e = np.exp(z - z.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    emb, block = model.embedding_layer, model.transformer_block
    x = f64(emb.token_emb.embeddings)[ids] + f64(emb.pos_emb.embeddings)[: ids.shape[1]]
    heads, key_dim = block.att.num_heads, block.att.key_dim

    def split_heads(t):  # (batch, len, heads * key_dim) -> (batch, heads, len, key_dim)
        return t.reshape(t.shape[0], t.shape[1], heads, key_dim).transpose(0, 2, 1, 3)

    q, k, v = (split_heads(dense(x, d)) for d in (block.att.query_dense, block.att.key_dense,
                                                   block.att.value_dense))
    scores = softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(key_dim))
    attended = (scores @ v).transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[1], -1)
    out1 = layer_norm(x + dense(attended, block.att.output_dense), block.layernorm1)
    hidden = np.maximum(dense(out1, block.ffn.layers[0]), 0)
    out2 = layer_norm(out1 + dense(hidden, block.ffn.layers[1]), block.layernorm2)
    return softmax(dense(np.maximum(dense(out2, model.ff), 0), model.ff_final))


"""
## Compile and fit the model
"""

graph.run_functions_eagerly(True)
ner_model.compile(optimizer="adam", loss=loss)

# Added: before training, the output is one distribution over the tags per token, and the
# loss is numpy's masked cross-entropy of it
x0, y0 = next(iter(val_dataset))
probs0 = ner_model.predict(x0, verbose=0)
assert probs0.shape == x0.shape + (num_tags,), probs0.shape
np.testing.assert_allclose(probs0.sum(-1), 1.0, rtol=1e-5)
np.testing.assert_allclose(float(loss(y0, probs0)), numpy_loss(np.asarray(y0), probs0), rtol=1e-5)
np.testing.assert_allclose(probs0, numpy_forward(ner_model, np.asarray(x0)), rtol=1e-4, atol=1e-6)

def numpy_tags():  # added: calculate_metrics's tags, from numpy
    true_np, pred_np = [], []
    for x, y in val_dataset:
        x, y = np.asarray(x), np.asarray(y)
        pred = np.argmax(ner_model.predict(x, verbose=0), axis=-1).ravel()
        keep = (y.ravel() > 0) & (pred > 0)
        true_np += [mapping[t] for t in y.ravel()[keep]]
        pred_np += [mapping[t] for t in pred[keep]]
    return true_np, pred_np


untrained_f1 = evaluate(*numpy_tags(), verbose=False)[2]

history = ner_model.fit(train_dataset, epochs=10 if FULL else 1 if SHORT else 8)
print(history.history)

# Added: fit's loss falls from about log(num_tags) (untrained) to a fraction of it
assert SHORT or history.history["loss"][-1] < 0.2 * history.history["loss"][0], history.history
assert SHORT or history.history["loss"][-1] < 0.1 * np.log(num_tags), history.history


def tokenize_and_convert_to_ids(text):
    tokens = text.split()
    return lowercase_and_convert_to_ids(tokens)


# Sample inference using the trained model
sample_input = tokenize_and_convert_to_ids(
    "eu rejects german call to boycott british lamb"
)
# Upstream's own: sample_input = ops.reshape(sample_input, shape=[1, -1])   (TypeError in
# Keras 3 too: keras.ops.reshape(x, newshape))
sample_input = ops.reshape(sample_input, [1, -1])
print(sample_input)
# Added: int64 ids, as StringLookup gives in Keras
assert sample_input.shape == (1, 8) and sample_input.dtype == em.int64, sample_input
np.testing.assert_array_equal(sample_input.numpy()[0], [
    word_id.get(w, 0) for w in "eu rejects german call to boycott british lamb".split()])

output = ner_model.predict(sample_input)
prediction = np.argmax(output, axis=-1)[0]
prediction = [mapping[i] for i in prediction]

# eu -> B-ORG, german -> B-MISC, british -> B-MISC
print(prediction)
# Added: as the comment says (the generated corpus holds this sentence's template)
assert SHORT or prediction == ["B-ORG", "O", "B-MISC", "O", "O", "O", "B-MISC", "O"], prediction

# Added: the trained model still computes what numpy computes from its weights, and
# evaluate's loss is Keras 3's: the mean of the batches' losses weighted by their sizes
np.testing.assert_allclose(output, numpy_forward(ner_model, sample_input.numpy()), rtol=1e-4,
                           atol=1e-6)
val_batches = [(np.asarray(x), np.asarray(y)) for x, y in val_dataset]
batch_losses = [numpy_loss(y, ner_model.predict(x, verbose=0)) for x, y in val_batches]
sizes = [len(x) for x, _ in val_batches]
assert sizes[-1] < batch_size, sizes  # the last batch is smaller: the weighting matters
np.testing.assert_allclose(ner_model.evaluate(val_dataset, verbose=0),
                           np.average(batch_losses, weights=sizes), rtol=1e-5, atol=1e-6)

"""
## Metrics calculation

Here is a function to calculate the metrics. The function calculates F1 score for the
overall NER dataset as well as individual scores for each NER tag.
"""


def calculate_metrics(dataset):
    all_true_tag_ids, all_predicted_tag_ids = [], []

    for x, y in dataset:
        output = ner_model.predict(x, verbose=0)
        predictions = ops.argmax(output, axis=-1)
        predictions = ops.reshape(predictions, [-1])

        true_tag_ids = ops.reshape(y, [-1])

        mask = (true_tag_ids > 0) & (predictions > 0)
        true_tag_ids = true_tag_ids[mask]
        predicted_tag_ids = predictions[mask]

        all_true_tag_ids.append(true_tag_ids)
        all_predicted_tag_ids.append(predicted_tag_ids)

    all_true_tag_ids = np.concatenate(all_true_tag_ids)
    all_predicted_tag_ids = np.concatenate(all_predicted_tag_ids)

    predicted_tags = [mapping[tag] for tag in all_predicted_tag_ids]
    real_tags = [mapping[tag] for tag in all_true_tag_ids]

    return evaluate(real_tags, predicted_tags)  # added: return (upstream drops the scores)


precision, recall, f1 = calculate_metrics(val_dataset)

# Added: the same scores from tags computed in numpy (argmax of predict, on the tokens that
# are not padding and not predicted as padding); the untrained model's; and the baseline
# that ignores the context: each word tagged with its commonest training tag (O if unseen)
np.testing.assert_allclose((precision, recall, f1), evaluate(*numpy_tags(), verbose=False))
print(f"untrained: FB1 {untrained_f1:.2f}")
tag_counts = collections.defaultdict(Counter)
for r in conll_data["train"]:
    for w, t in zip(r["tokens"], r["ner_tags"]):
        tag_counts[w.lower()][t] += 1
baseline_true, baseline_pred = [], []
for r in conll_data["validation"]:
    for w, t in zip(r["tokens"], r["ner_tags"]):
        baseline_true.append(HF_TAGS[t])
        counts = tag_counts.get(w.lower())
        baseline_pred.append(HF_TAGS[counts.most_common(1)[0][0]] if counts else "O")
print("commonest tag per word:")
baseline_f1 = evaluate(baseline_true, baseline_pred)[2]
print(f"validation FB1 {f1:.2f}, commonest tag per word {baseline_f1:.2f}")
assert SHORT or (f1 > 90 and f1 > baseline_f1 + 3), (f1, baseline_f1, untrained_f1)

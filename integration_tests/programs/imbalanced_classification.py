"""Port of keras-team/keras-io examples/structured_data/imbalanced_classification.py
("Imbalanced classification: credit card fraud detection", the Keras 3 version): features
normalized by hand with the training mean and std, a Sequential MLP (three Dense(256, relu),
two Dropout(0.3), Dense(1, sigmoid)) trained with Adam(1e-2) on binary cross-entropy,
class_weight = {0: 1/negatives, 1: 1/positives}, the confusion-matrix metrics (fn, fp, tn,
tp, precision, recall), a ModelCheckpoint per epoch and validation_data.

Upstream: https://github.com/keras-team/keras-io/blob/0e2570ad95239574579c493d03eac955af344c24/examples/structured_data/imbalanced_classification.py
Changed: names only (keras.Sequential/Input/layers/metrics/optimizers/callbacks ->
nn.Sequential/Input/layers/metrics/optimizers/callbacks). The Kaggle creditcard.csv is not
available here (no network): a SYNTHETIC file of the same layout (a quoted header "Time",
"V1".."V28","Amount","Class"; Time in seconds over two days, V1..V28 normal with decreasing
scales, a log-normal Amount) is written by numpy into a temporary directory and read by
upstream's own loop; its positives (the frauds) have V1..V28 shifted (most strongly V14,
V17, V12, V10, as the real frauds) so the task is learnable. The checkpoints go into that
temporary directory (upstream writes them to the working directory). Reduced
(EMBER_PROGRAMS_FULL=1 restores upstream's 284,807 rows, 492 positives and 30 epochs):
10,000 rows, 150 positives (1.5%) and 4 epochs; EMBER_PROGRAMS_SHORT=1 (the strict-GPU
run): 3,000 rows, 45 positives, 2 epochs and no threshold on what training reached.
Added: a seed for ember; model.summary()'s parameter count (139,777, as Keras prints);
fit's History is kept, and from its last epoch: the validation counts add up to the
validation positives and negatives, precision and recall equal tp / (tp + fp) and
tp / (tp + fn) of the logged counts, and thresholding predict() at 0.5 gives the same
counts; the training metrics count whole transactions, as Keras 3's (class weights
become sample weights, which compile's metrics do not see: tp + fn == positives and
tn + fp == negatives; checked on Keras 3.15); validation recall is at least 0.8 (CPU run); one
fraud_model_at_epoch_{epoch}.keras file per epoch (epochs counted from 1), each loading with
nn.models.load_model, the last one compiled with the same metrics and evaluating to the
last epoch's val_ logs; the same model trained from the same initial weights without
class_weight also counts whole transactions in its training metrics and (CPU run) catches
fewer frauds while flagging no more legitimate transactions.
Found: ember had none of the six confusion-matrix metrics; they were added for it
(nn.metrics, checked against Keras 3's definition). ember weighed compile's metrics by
the class weights, where Keras 3 weighs only weighted_metrics; this port asserted ember's
numbers as Keras's until Keras 3.15 itself was run on a small case (fixed in ember).
"""

import os
import tempfile

import numpy as np

import ember.core as em
from ember import nn

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()


def write_synthetic_creditcard_csv(path, n_rows, n_pos, seed=0):
    """A stand-in for Kaggle's creditcard.csv: same columns and quoting, made up values."""
    rng = np.random.default_rng(seed)
    time = np.sort(rng.uniform(0, 172792, n_rows)).round()
    scales = np.linspace(2.0, 0.3, 28)
    v = rng.normal(size=(n_rows, 28)) * scales
    amount = np.exp(rng.normal(3.0, 1.5, n_rows)).round(2)
    label = np.zeros(n_rows, np.int64)
    label[rng.choice(n_rows, n_pos, replace=False)] = 1
    shift = rng.normal(0.0, 0.5, 28)
    shift[[13, 16, 11, 9]] = [-2.0, -2.0, -1.6, -1.3]  # V14, V17, V12, V10
    v[label == 1] += shift * scales
    amount[label == 1] *= 1.5
    names = ["Time"] + [f"V{i}" for i in range(1, 29)] + ["Amount", "Class"]
    with open(path, "w") as f:
        f.write(",".join(f'"{n}"' for n in names) + "\n")
        for t, row, a, c in zip(time, v, amount, label):
            f.write(",".join([repr(float(t)), *map(repr, row.tolist()), repr(float(a)),
                              f'"{c}"']) + "\n")


n_rows, n_pos = (284807, 492) if FULL else (3000, 45) if SHORT else (10000, 150)
fname = os.path.join(workdir.name, "creditcard.csv")
write_synthetic_creditcard_csv(fname, n_rows, n_pos)

"""
## First, vectorize the CSV data
"""

# The real data: https://www.kaggle.com/mlg-ulb/creditcardfraud/ (here, the synthetic file)
all_features = []
all_targets = []
with open(fname) as f:
    for i, line in enumerate(f):
        if i == 0:
            print("HEADER:", line.strip())
            continue  # Skip header
        fields = line.strip().split(",")
        all_features.append([float(v.replace('"', "")) for v in fields[:-1]])
        all_targets.append([int(fields[-1].replace('"', ""))])
        if i == 1:
            print("EXAMPLE FEATURES:", all_features[-1])

features = np.array(all_features, dtype="float32")
targets = np.array(all_targets, dtype="uint8")
print("features.shape:", features.shape)
print("targets.shape:", targets.shape)

"""
## Prepare a validation set
"""

num_val_samples = int(len(features) * 0.2)
train_features = features[:-num_val_samples]
train_targets = targets[:-num_val_samples]
val_features = features[-num_val_samples:]
val_targets = targets[-num_val_samples:]

print("Number of training samples:", len(train_features))
print("Number of validation samples:", len(val_features))

"""
## Analyze class imbalance in the targets
"""

counts = np.bincount(train_targets[:, 0])
print(
    "Number of positive samples in training data: {} ({:.2f}% of total)".format(  # noqa: UP032
        counts[1], 100 * float(counts[1]) / len(train_targets)
    )
)

weight_for_0 = 1.0 / counts[0]
weight_for_1 = 1.0 / counts[1]

"""
## Normalize the data using training set statistics
"""

mean = np.mean(train_features, axis=0)
train_features -= mean
val_features -= mean
std = np.std(train_features, axis=0)
train_features /= std
val_features /= std

"""
## Build a binary classification model
"""

model = keras.Sequential(
    [
        keras.Input(shape=train_features.shape[1:]),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dropout(0.3),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dropout(0.3),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.summary()
assert model.count_params() == 139777, model.count_params()  # the number Keras prints
initial_weights = model.get_weights()

"""
## Train the model with `class_weight` argument
"""

metrics = [
    keras.metrics.FalseNegatives(name="fn"),
    keras.metrics.FalsePositives(name="fp"),
    keras.metrics.TrueNegatives(name="tn"),
    keras.metrics.TruePositives(name="tp"),
    keras.metrics.Precision(name="precision"),
    keras.metrics.Recall(name="recall"),
]

model.compile(
    optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=metrics
)

callbacks = [keras.callbacks.ModelCheckpoint(
    os.path.join(workdir.name, "fraud_model_at_epoch_{epoch}.keras"))]
class_weight = {0: weight_for_0, 1: weight_for_1}
epochs = 30 if FULL else 2 if SHORT else 4

history = model.fit(
    train_features,
    train_targets,
    batch_size=2048,
    epochs=epochs,
    verbose=2,
    callbacks=callbacks,
    validation_data=(val_features, val_targets),
    class_weight=class_weight,
)

"""
## Added: checks
"""

logs = {k: float(v[-1]) for k, v in history.history.items()}
assert len(history.history["loss"]) == epochs, history.history
expected_keys = {"loss", "fn", "fp", "tn", "tp", "precision", "recall"}
assert set(logs) == expected_keys | {"val_" + k for k in expected_keys}, sorted(logs)
val_pos = int(val_targets.sum())
val_neg = len(val_targets) - val_pos
tp, fp, tn, fn = logs["val_tp"], logs["val_fp"], logs["val_tn"], logs["val_fn"]
print(f"Validation: {tp:.0f} of {val_pos} frauds caught, {fn:.0f} missed, "
      f"{fp:.0f} of {val_neg} legitimate transactions flagged")

# the validation counts are whole transactions and add up
assert tp + fn == val_pos and tn + fp == val_neg, (logs, val_pos, val_neg)
assert all(float(c).is_integer() for c in (tp, fp, tn, fn)), logs
np.testing.assert_allclose(logs["val_precision"], tp / max(tp + fp, 1), rtol=1e-5)
np.testing.assert_allclose(logs["val_recall"], tp / max(tp + fn, 1), rtol=1e-5)
# ... and they are those of predict() thresholded at 0.5 (the metrics' default threshold)
predicted = model.predict(val_features, batch_size=2048)[:, 0] > 0.5
actual = val_targets[:, 0] == 1
by_hand = {"val_tp": np.sum(predicted & actual), "val_fp": np.sum(predicted & ~actual),
           "val_tn": np.sum(~predicted & ~actual), "val_fn": np.sum(~predicted & actual)}
assert all(by_hand[k] == logs[k] for k in by_hand), (by_hand, logs)

# training metrics: Keras 3 turns class_weight into sample weights, which compile's
# metrics do not see (only its weighted_metrics do), so they count whole transactions
assert logs["tp"] + logs["fn"] == counts[1], logs
assert logs["tn"] + logs["fp"] == counts[0], logs
np.testing.assert_allclose(logs["precision"], logs["tp"] / (logs["tp"] + logs["fp"]),
                           rtol=1e-4)
np.testing.assert_allclose(logs["recall"], logs["tp"] / (logs["tp"] + logs["fn"]), rtol=1e-4)

# class_weight makes the model catch the frauds (the CPU run's threshold)
assert SHORT or logs["val_recall"] >= 0.8, logs

# one checkpoint per epoch, named by its epoch counted from 1, each loadable
saved = sorted(n for n in os.listdir(workdir.name) if n.endswith(".keras"))
assert saved == sorted(f"fraud_model_at_epoch_{e}.keras" for e in range(1, epochs + 1)), saved
reloaded = [keras.models.load_model(os.path.join(workdir.name, n)) for n in saved]
last = keras.models.load_model(os.path.join(workdir.name, f"fraud_model_at_epoch_{epochs}.keras"))
np.testing.assert_allclose(last.predict(val_features, batch_size=2048),
                           model.predict(val_features, batch_size=2048), rtol=1e-5, atol=1e-6)
scores = last.evaluate(val_features, val_targets, batch_size=2048, verbose=0, return_dict=True)
for k in ("fn", "fp", "tn", "tp", "precision", "recall"):
    np.testing.assert_allclose(scores[k], logs["val_" + k], rtol=1e-5, err_msg=k)
np.testing.assert_allclose(scores["loss"], logs["val_loss"], rtol=1e-4)

# without class_weight, from the same initial weights, the model catches fewer frauds and
# flags no more legitimate transactions
unweighted = keras.models.clone_model(model)
unweighted.set_weights(initial_weights)
unweighted.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy",
                   metrics=[m.__class__.from_config(m.get_config()) for m in metrics])
em.random.set_seed(0)
plain = unweighted.fit(train_features, train_targets, batch_size=2048, epochs=epochs,
                       verbose=0, validation_data=(val_features, val_targets)).history
plain = {k: float(v[-1]) for k, v in plain.items()}
print(f"Without class_weight: {plain['val_tp']:.0f} of {val_pos} frauds caught, "
      f"{plain['val_fp']:.0f} legitimate transactions flagged")
assert plain["tp"] + plain["fn"] == counts[1], plain  # whole transactions here too
assert plain["tn"] + plain["fp"] == counts[0], plain
assert SHORT or plain["val_tp"] < logs["val_tp"] and plain["val_fp"] <= logs["val_fp"], (
    plain, logs)
workdir.cleanup()

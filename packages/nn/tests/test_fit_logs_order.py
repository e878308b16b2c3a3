"""fit's logs come sorted by name, as Keras 3's (``_pythonify_logs``): History, the epoch
and batch logs callbacks get, and ``evaluate(return_dict=True)``; ``evaluate``'s list
keeps the metrics' order, the loss first."""

import numpy as np

from ember import nn


def _model():
    model = nn.Sequential([nn.layers.Dense(3, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy",
                  metrics=["accuracy", nn.metrics.SparseTopKCategoricalAccuracy(k=2, name="a_top2")])
    return model


def test_logs_sorted_by_name_as_keras3():
    rng = np.random.default_rng(0)
    x, y = rng.random((12, 4), dtype=np.float32), rng.integers(0, 3, 12)
    model = _model()
    seen = {}
    cb = nn.callbacks.LambdaCallback(
        on_train_batch_end=lambda b, logs: seen.setdefault("batch", list(logs)),
        on_epoch_end=lambda e, logs: seen.setdefault("epoch", list(logs)),
        on_test_batch_end=lambda b, logs: seen.setdefault("test_batch", list(logs)))
    history = model.fit(x, y, batch_size=4, epochs=1, validation_data=(x, y), verbose=0,
                        callbacks=[cb])
    want = ["a_top2", "accuracy", "loss", "val_a_top2", "val_accuracy", "val_loss"]
    assert list(history.history) == want
    assert seen["epoch"] == want
    assert seen["batch"] == want[:3] and seen["test_batch"] == want[:3]
    as_dict = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(as_dict) == want[:3]
    as_list = model.evaluate(x, y, verbose=0)
    # the list keeps model.metrics_names' order: the loss first
    assert as_list[0] == as_dict["loss"] and as_list[1:] == [as_dict["accuracy"],
                                                               as_dict["a_top2"]]

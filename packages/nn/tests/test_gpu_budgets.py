"""Transfer and sync budgets on the strict cupy-like GPU double: an eager training step with
the data on the device copies nothing back to the host, and ``fit`` syncs once per logging
interval; a traced step (graph mode) makes no sync and no host copy at all."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import graph, nn, tape

ONLY_BACKENDS = ["strict-gpu"]  # the counters belong to the strict double (conftest)
RNG = np.random.default_rng(0)


@pytest.fixture
def counters(backend):
    return em.get_device(backend).backend.counters


def _step(model, opt, loss_fn, x, y):
    with tape.GradientTape() as t:
        loss = loss_fn(y, model(x, training=True))
    variables = model.trainable_variables
    opt.apply_gradients(zip(t.gradient(loss, variables), variables))
    return loss


def _mlp():
    return nn.Sequential([nn.layers.Dense(32, activation="relu"), nn.layers.Dropout(0.1),
                          nn.layers.Dense(10)]), (16, 20)


def _cnn():
    return nn.Sequential([nn.layers.Conv2D(4, 3, activation="relu"), nn.layers.MaxPooling2D(2),
                          nn.layers.BatchNormalization(), nn.layers.Flatten(),
                          nn.layers.Dense(10)]), (8, 8, 8, 1)


def _lstm():
    return nn.Sequential([nn.layers.LSTM(8), nn.layers.Dense(10)]), (4, 5, 3)


@pytest.mark.parametrize("make", [_mlp, _cnn, _lstm], ids=["mlp", "cnn", "lstm"])
def test_eager_training_step_with_data_on_the_device_makes_no_host_copy(counters, make):
    model, shape = make()
    x = em.constant(RNG.standard_normal(shape).astype(np.float32))
    y = em.constant(RNG.integers(0, 10, shape[0]).astype(np.int32))
    assert x.device == y.device == "/gpu:0"
    opt = nn.optimizers.Adam(1e-2)
    loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)
    first = _step(model, opt, loss_fn, x, y)  # builds the weights and the optimizer slots
    counters.reset()
    for _ in range(3):
        loss = _step(model, opt, loss_fn, x, y)
    assert counters.to_host == 0 and counters.syncs == 0, counters
    # No uploads: dropout's masks are drawn on the device (Philox, its state there), and
    # Python numbers (learning rates, Adam's betas, the iteration's 1) are uploaded once
    # each: a pageable upload would make the host wait for the device.
    assert counters.from_host == 0, counters
    assert float(loss) < float(first)  # it trained (read after the budget was taken)


@pytest.mark.parametrize("make", [_mlp, _cnn, _lstm], ids=["mlp", "cnn", "lstm"])
def test_traced_training_step_makes_no_sync_and_no_copy(counters, make):
    model, shape = make()
    x = em.constant(RNG.standard_normal(shape).astype(np.float32))
    y = em.constant(RNG.integers(0, 10, shape[0]).astype(np.int32))
    opt = nn.optimizers.Adam(1e-2)
    loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)
    step = graph.function(_step)
    first = step(model, opt, loss_fn, x, y)  # makes the weights and the optimizer's slots
    step(model, opt, loss_fn, x, y)  # traces
    counters.reset()
    for _ in range(3):
        loss = step(model, opt, loss_fn, x, y)
    assert step.experimental_get_tracing_count() == 2  # the three calls above replayed
    assert counters.syncs == 0 and counters.to_host == 0, counters
    # no uploads: dropout's masks are drawn on the device (the same numbers as on the CPU);
    # the step, dropout included, is captured as a CUDA graph on the second of these three
    # replays (the first warms the caches) and launched from then on
    assert counters.from_host == 0, counters
    assert counters.graph_launches == 2, counters
    assert float(loss) < float(first)


def _data(n=160):
    x = RNG.standard_normal((n, 4)).astype(np.float32)
    return x, (x[:, 0] > 0).astype(np.int32)


def _compiled():
    model = nn.Sequential([nn.layers.Dense(8, activation="relu", input_shape=(4,)),
                           nn.layers.Dense(2)])
    model.compile(nn.optimizers.Adam(0.01),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def test_fit_syncs_once_per_epoch_without_a_progress_bar(counters):
    x, y = _data()
    batches = [(em.constant(x[i:i + 16]), em.constant(y[i:i + 16])) for i in range(0, 160, 16)]
    model = _compiled()
    model.fit(batches[:2], epochs=1, verbose=0)  # builds the model, traces the step
    counters.reset()
    hist = model.fit(batches, epochs=3, verbose=0)
    assert counters.syncs == 3 and counters.to_host == 3, counters  # the epoch-end logs
    assert len(hist.history["loss"]) == 3 and hist.history["loss"][-1] < hist.history["loss"][0]


def test_a_trace_on_a_gpu_syncs_once_to_check_its_fused_kernels(counters):
    x, y = _data()
    batches = [(em.constant(x[i:i + 16]), em.constant(y[i:i + 16])) for i in range(0, 64, 16)]
    model = _compiled()
    model.fit(batches[:1], epochs=1, verbose=0)  # builds the model
    counters.reset()
    model.fit(batches[:1], epochs=1, verbose=0)  # traces the step: its fused kernels' check
    assert counters.syncs == 2 and counters.to_host == 2, counters  # and the epoch's logs
    counters.reset()
    model.fit(batches, epochs=1, verbose=0)  # replays only
    assert counters.syncs == 1 and counters.to_host == 1, counters


def test_fit_on_device_tensors_batches_them_on_the_device(counters):
    """x and y already on the GPU: fit slices (or, shuffled, indexes) them there. It used to
    copy both to the host with np.asarray and upload every batch again."""
    x, y = _data()
    xd, yd = em.constant(x), em.constant(y)
    model = _compiled()
    model.fit(xd[:32], yd[:32], batch_size=16, epochs=1, verbose=0)  # builds, traces
    for shuffle in (True, False):
        counters.reset()
        hist = model.fit(xd, yd, batch_size=16, epochs=2, shuffle=shuffle, verbose=0)
        assert counters.to_host == 2 and counters.syncs == 2, (shuffle, counters)
        assert len(hist.history["loss"]) == 2


def test_fit_with_validation_reads_train_and_validation_logs_in_one_copy(counters):
    """Keras's logging interval without a bar is the epoch: one read per epoch, validation
    metrics included (they were read in a second copy). Validation data given as a tuple of
    device tensors used to be taken for an iterable of batches and failed."""
    x, y = _data()
    xd, yd = em.constant(x), em.constant(y)
    model = _compiled()
    model.fit(xd[:32], yd[:32], batch_size=16, epochs=1, verbose=0,  # builds, traces
              validation_data=(xd[:32], yd[:32]))
    for val in ((xd[:32], yd[:32]), (x[:32], y[:32])):
        counters.reset()
        hist = model.fit(xd, yd, batch_size=16, epochs=3, validation_data=val, verbose=0)
        assert counters.syncs == 3 and counters.to_host == 3, counters
        assert set(hist.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    counters.reset()
    hist = model.fit(xd, yd, batch_size=16, epochs=2, validation_split=0.2, verbose=0)
    assert counters.syncs == 2 and counters.to_host == 2, counters
    expected = model.evaluate(x[:32], y[:32], verbose=0, return_dict=True)
    got = model.evaluate((xd[:32], yd[:32]), verbose=0, return_dict=True)
    assert_allclose([got["loss"], got["accuracy"]], [expected["loss"], expected["accuracy"]],
                    rtol=1e-6)


def test_fit_progress_bar_syncs_once_per_logging_interval(counters, capsys):
    # the bar is tqdm's (an ember-nn dependency; fit runs without a bar where it is absent,
    # as on a bare GPU machine that has only cupy, numpy and pytest)
    pytest.importorskip("tqdm", reason="tqdm is not installed: fit shows no progress bar")
    from ember.nn import training

    x, y = _data(640)  # 20 steps of 32: the bar reads the logs back every 10 steps
    model = _compiled()
    model.fit(x[:64], y[:64], batch_size=32, epochs=1, verbose=0)  # builds, traces
    counters.reset()
    model.fit(x, y, batch_size=32, epochs=1, verbose=1)
    steps = 640 // 32
    assert counters.syncs <= steps // training.BAR_EVERY_STEPS + 1, counters
    assert "loss=" in capsys.readouterr().err


def test_train_step_returns_device_tensors_as_keras_3(counters):
    x, y = _data(32)
    model = _compiled()
    logs = model.train_step(x, y)
    assert set(logs) == {"loss", "accuracy"}
    assert all(isinstance(v, em.Tensor) and v.device == "/gpu:0" for v in logs.values())
    assert 0.0 <= float(logs["accuracy"]) <= 1.0


def test_cached_learning_rate_follows_assignments(counters):
    """The optimizer keeps the host value of its learning rate between steps; assigning the
    variable (a new value tensor) must still be honoured at the next step."""
    v = em.Variable([1.0, 2.0])
    opt = nn.optimizers.SGD(0.5)
    g = em.constant([1.0, 1.0])
    opt.apply_gradients([(g, v)])
    assert_allclose(v.numpy(), [0.5, 1.5])
    opt.learning_rate.assign(0.0)
    opt.apply_gradients([(g, v)])
    assert_allclose(v.numpy(), [0.5, 1.5])
    opt.learning_rate = 0.25
    opt.apply_gradients([(g, v)])
    assert_allclose(v.numpy(), [0.25, 1.25])
    assert int(opt.iterations.numpy()) == 3
    opt.iterations.assign(10)  # a restore: the next step reads the new count
    opt.apply_gradients([(g, v)])
    assert int(opt.iterations.numpy()) == 11


def test_predict_copies_its_result_to_the_host_once(counters):
    x, _ = _data(64)
    xd = em.constant(x)
    model = _compiled()
    model.predict(xd[:16], batch_size=16)  # builds, traces
    counters.reset()
    got = model.predict(xd, batch_size=16)  # 4 batches
    assert counters.syncs == 1 and counters.to_host == 1, counters
    assert isinstance(got, np.ndarray) and got.shape[0] == 64
    assert_allclose(got[16:32], model.predict(x[16:32], batch_size=16), rtol=1e-6)


def test_causal_attention_uploads_its_mask_once_per_size(counters):
    # the causal mask was made from numpy at every call: an upload a step, which makes the
    # host wait for a GPU; it is now made once per (Tq, Tv) and device
    layer = nn.layers.MultiHeadAttention(2, 4)
    x = em.constant(RNG.standard_normal((3, 5, 8)).astype(np.float32))
    first = layer(x, x, use_causal_mask=True)
    counters.reset()
    again = layer(x, x, use_causal_mask=True)
    assert counters.from_host == 0 and counters.syncs == 0
    assert_allclose(again.numpy(), first.numpy())
    longer = em.constant(RNG.standard_normal((3, 6, 8)).astype(np.float32))
    counters.reset()
    layer(longer, longer, use_causal_mask=True)  # a new size: its own mask, one upload
    assert counters.from_host == 1

"""Summaries written inside a traced training step (graph.function), as the seed guides
write them (seeds 000 and 002: ``record_summaries_every_n_global_steps`` around the step,
``summary.scalar('loss', loss)`` in it, the global step incremented by the step): the
step stays traced, its summaries are outputs of the replay handed to the writer after
each call, and the event file holds what eager execution writes, step for step and bit
for bit. Uses ember.summary and ember.graph together, so it lives here (neither package
depends on the other)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, nn, summary, tape

pytestmark = pytest.mark.usefixtures("backend")


@pytest.fixture(autouse=True)
def _no_global_step():
    nn.reset_global_step()
    summary.set_step(None)
    yield
    nn.reset_global_step()
    summary.set_step(None)


def _batches(n, rows=8):
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((rows, 4)).astype(np.float32),
             rng.standard_normal((rows, 1)).astype(np.float32)) for _ in range(n)]


def _events(path):
    """(tag, step, value) of each summary in an event file (a histogram's: its tensor)."""
    out = []
    for e in summary.read_events(path):
        if not e.HasField("summary"):
            continue
        for v in e.summary.value:
            value = v.simple_value if v.HasField("simple_value") else \
                v.tensor.SerializeToString()
            out.append((v.tag, e.step, value))
    return out


def _seed_training(logdir, traced, counter, every=3, steps=10):
    """The seeds' loop: a step counter counts steps (the optimizer increments it in the
    step), summaries are recorded every ``every`` of its steps. ``counter``: "global",
    the global step, found by the summaries (seed 000); "own", a variable of the loop's
    own passed to the condition as ``global_step`` (seed 001's ``step_counter``), the
    summaries' step given as ``step=`` too."""
    em.random.set_seed(0)
    gs = nn.get_or_create_global_step() if counter == "global" else em.Variable(np.int64(0))
    step_arg = {} if counter == "global" else {"step": gs}
    every_arg = {} if counter == "global" else {"global_step": gs}
    model = nn.Sequential([nn.layers.Dense(8, activation="relu"), nn.layers.Dense(1)])
    opt = nn.optimizers.SGD(0.05)

    def step(x, y):
        with tape.GradientTape() as t:
            loss = em.reduce_mean(em.square(model(x) - y))
        grads = t.gradient(loss, model.trainable_variables)
        summary.scalar("loss", loss, **step_arg)  # the step: the counter before this step
        opt.apply_gradients(zip(grads, model.trainable_variables), global_step=gs)
        return loss

    f = graph.function(step) if traced else step
    writer = summary.create_file_writer(str(logdir))
    losses = []
    with writer.as_default():
        for x, y in _batches(steps):
            with summary.record_summaries_every_n_global_steps(every, **every_arg):
                losses.append(f(x, y).numpy())
    writer.close()
    nn.reset_global_step()
    return losses, _events(writer.path), f


@pytest.mark.parametrize("counter", ["global", "own"])
def test_the_seeds_training_loop_writes_what_eager_writes_and_stays_traced(tmp_path, counter):
    eager_losses, eager_events, _ = _seed_training(tmp_path / "eager", False, counter)
    losses, events, f = _seed_training(tmp_path / "traced", True, counter)
    assert_array_equal(losses, eager_losses)
    assert events == eager_events
    assert [s for _, s, _ in events] == [0, 3, 6, 9]
    assert [v for _, _, v in events] == [float(eager_losses[s]) for s in (0, 3, 6, 9)]
    # the first call made the variables (not kept), the second traced, the rest replayed
    assert f.experimental_get_tracing_count() == 2


def _elementwise_step(w):
    """A step of element-wise ops and reductions only (a float matmul calls cuBLAS, which
    a CUDA graph capture refuses), writing its loss."""

    def step(x, y):
        err = em.reduce_sum(x * w, axis=1, keepdims=True) - y
        loss = em.reduce_mean(err * err)
        summary.scalar("loss", loss)
        w.assign_sub(0.05 * em.reduce_mean(2.0 * err * x, axis=0))
        return loss

    return step


def test_a_scalar_every_step_traces_once_and_reads_only_its_value(tmp_path, backend):
    w = em.Variable(np.zeros(4, np.float32))
    f = graph.function(_elementwise_step(w))
    writer = summary.create_file_writer(str(tmp_path))
    counters = getattr(em.get_device(backend).backend, "counters", None)
    losses, syncs = [], []
    with writer.as_default():
        for i, (x, y) in enumerate(_batches(8)):
            x, y = em.constant(x), em.constant(y)
            summary.set_step(i)
            if counters is not None:
                counters.reset()
            loss = f(x, y)
            if counters is not None:
                syncs.append(counters.syncs)
            losses.append(loss.numpy())
    writer.close()
    assert f.experimental_get_tracing_count() == 1
    assert _events(writer.path) == [("loss", i, float(v)) for i, v in enumerate(losses)]
    if counters is not None:  # the strict GPU double: one read a replay, the writer's own
        # (the tracing call also reads its fused kernels' results once, to check them)
        assert syncs[1:] == [1] * 7
        assert f.cuda_graph_status() == ["call: captured (launched 6 times)"]


def test_no_writer_reads_nothing(tmp_path, backend):
    w = em.Variable(np.zeros(4, np.float32))
    f = graph.function(_elementwise_step(w))
    counters = getattr(em.get_device(backend).backend, "counters", None)
    for k, (x, y) in enumerate(_batches(4)):
        x, y = em.constant(x), em.constant(y)
        if counters is not None:
            counters.reset()
        f(x, y)
        if counters is not None and k > 0:  # replays (the trace checks its fused kernels)
            assert counters.syncs == 0
    assert f.experimental_get_tracing_count() == 1


def test_a_writer_and_a_condition_set_inside_the_step_are_kept_from_its_trace(tmp_path):
    """What the function sets itself (a writer, ``record_if`` on a tensor it computes)
    was set while it was traced; the condition is the tensor's value in each call."""
    writer = summary.create_file_writer(str(tmp_path))
    gs = em.Variable(np.int64(0))

    @graph.function
    def step(x):
        m = em.reduce_mean(x)
        with writer.as_default(step=gs), summary.record_if(m > 0.0):
            summary.scalar("mean", m)
        gs.assign_add(1)
        return m

    means = [float(step(em.constant([v, 1.0]))) for v in (1.0, -5.0, 3.0, -2.0, 0.5)]
    writer.close()
    assert step.experimental_get_tracing_count() == 1
    assert _events(writer.path) == [("mean", i, m) for i, m in enumerate(means) if m > 0]
    assert summary.default_step() is None  # the step set inside did not leak out


def test_histograms_of_weights_are_their_values_where_they_were_written(tmp_path):
    def run(traced, logdir):
        w = em.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), name="w")

        def step(x):
            summary.weight_histograms([w], step=0)  # before this step's update
            w.assign_add(x)
            summary.histogram("w_after", w, step=1)
            return w.value()

        f = graph.function(step) if traced else step
        writer = summary.create_file_writer(str(logdir))
        with writer.as_default():
            for k in range(4):
                f(em.fill([3, 4], float(k)))
        writer.close()
        return _events(writer.path), f

    eager, _ = run(False, tmp_path / "eager")
    traced, f = run(True, tmp_path / "traced")
    assert traced == eager and len(traced) == 8
    assert f.experimental_get_tracing_count() == 1


def test_a_step_variable_set_outside_is_read_where_the_summary_was_written(tmp_path):
    """``set_step(variable)`` outside the step, the step incrementing it after the summary:
    each summary has the value before the increment, as eagerly."""
    gs = em.Variable(np.int64(10))
    writer = summary.create_file_writer(str(tmp_path))

    @graph.function
    def step(x):
        summary.scalar("x", em.reduce_sum(x))
        gs.assign_add(5)
        return x

    with writer.as_default(step=gs):
        for k in range(3):
            step(em.constant([float(k)]))
    writer.close()
    assert _events(writer.path) == [("x", 10, 0.0), ("x", 15, 1.0), ("x", 20, 2.0)]
    assert step.experimental_get_tracing_count() == 1


def test_the_writer_and_step_set_outside_are_those_of_each_call(tmp_path):
    """One traced function, called under two writers in turn (a train and a validation
    writer, say), and with a step set before each call: each file holds its own calls."""
    writers = [summary.create_file_writer(str(tmp_path / name)) for name in ("a", "b")]

    @graph.function
    def step(x):
        summary.scalar("x", em.reduce_sum(x))
        return x

    for k in range(6):
        summary.set_step(100 + k)
        with writers[k % 2].as_default():
            step(em.constant([float(k)]))
    with summary.never_record_summaries(), writers[0].as_default():
        step(em.constant([99.0]))  # not recorded: the condition outside holds for the call
    for w in writers:
        w.close()
    assert step.experimental_get_tracing_count() == 1
    assert _events(writers[0].path) == [("x", 100 + k, float(k)) for k in (0, 2, 4)]
    assert _events(writers[1].path) == [("x", 100 + k, float(k)) for k in (1, 3, 5)]


def test_images_audio_and_text_in_a_traced_step_are_written_as_eagerly(tmp_path):
    def run(traced, logdir):
        def step(x):
            pictures = em.sigmoid(x)  # [k, h, w, 1] in [0, 1]
            summary.image("pictures", pictures, step=0, max_outputs=2)
            summary.audio("sound", em.tanh(em.reshape(x, [2, 8, 1])), 8000, step=0)
            summary.text("note", "traced", step=0)
            return pictures

        f = graph.function(step) if traced else step
        writer = summary.create_file_writer(str(logdir))
        with writer.as_default():
            for k in range(3):
                f(em.constant(np.linspace(-k, k, 16, dtype=np.float32).reshape(2, 2, 4, 1)))
        writer.close()
        return _events(writer.path), f

    eager, _ = run(False, tmp_path / "eager")
    traced, f = run(True, tmp_path / "traced")
    assert traced == eager and len(traced) == 9
    assert len({v for tag, _, v in traced if tag == "pictures"}) == 3  # each call's own
    assert f.experimental_get_tracing_count() == 1

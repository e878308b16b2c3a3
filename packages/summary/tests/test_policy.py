"""Recording policy and steps: record_if and friends, default steps, step-like objects."""

from __future__ import annotations

import sys
import threading

import pytest

from ember import summary


def steps_of(writer, tag="x"):
    return [e.step for e in summary.read_events(writer.path)
            if e.HasField("summary") and e.summary.value[0].tag == tag]


def test_every_100_global_steps_over_1000_keeps_exactly_the_multiples(tmp_path, tb):
    writer = summary.create_file_writer(tmp_path)
    with writer.as_default(), summary.record_summaries_every_n_global_steps(100):
        for step in range(1000):
            summary.set_step(step)
            summary.scalar("loss", 1.0 / (step + 1))
    writer.close()
    assert [e.step for e in tb.accumulator(tmp_path).Scalars("loss")] == list(range(0, 1000, 100))


def test_every_n_reads_a_step_variable_at_write_time(tmp_path, fake_step):
    global_step = fake_step(0)
    writer = summary.create_file_writer(tmp_path)
    with writer.as_default(), summary.record_summaries_every_n_global_steps(3, global_step):
        recorded = []
        for _ in range(10):
            recorded.append(summary.scalar("x", 1.0, step=global_step))
            global_step.assign_add(1)
    writer.close()
    assert recorded == [s % 3 == 0 for s in range(10)]
    assert steps_of(writer) == [0, 3, 6, 9]


def test_default_step_is_a_step_like_object_read_at_each_write(tmp_path, fake_step):
    step = fake_step(5)
    writer = summary.create_file_writer(tmp_path)
    with writer.as_default(step=step):
        summary.scalar("x", 1.0)
        step.assign_add(2)
        summary.scalar("x", 2.0)
        summary.scalar("x", 3.0, step=100)  # an explicit step wins
    writer.close()
    assert steps_of(writer) == [5, 7, 100]
    assert summary.get_step() is None  # as_default(step=) is scoped


def test_a_summary_with_no_step_anywhere_is_a_clear_error(tmp_path, monkeypatch):
    # "anywhere": not even ember.nn's global step, which another package's tests in the
    # same process may have created
    monkeypatch.delitem(sys.modules, "ember.nn", raising=False)
    writer = summary.create_file_writer(tmp_path)
    with writer.as_default(), pytest.raises(ValueError, match="no step"):
        summary.scalar("x", 1.0)
    with writer.as_default(), summary.record_summaries_every_n_global_steps(2), \
            pytest.raises(ValueError, match="needs a step"):
        summary.scalar("x", 1.0)
    writer.close()


def test_non_integral_steps_are_errors(tmp_path):
    writer = summary.create_file_writer(tmp_path)
    with writer.as_default():
        with pytest.raises(ValueError, match="integer"):
            summary.scalar("x", 1.0, step=1.5)
        with pytest.raises(TypeError, match="step"):
            summary.scalar("x", 1.0, step="three")
        assert summary.scalar("x", 1.0, step=2.0)
    writer.close()


def test_record_if_bool_callable_and_nesting(tmp_path):
    flag = {"on": False}
    writer = summary.create_file_writer(tmp_path)
    with writer.as_default(step=0):
        assert summary.should_record_summaries()
        with summary.record_if(lambda: flag["on"]):
            assert not summary.scalar("x", 1.0)
            flag["on"] = True
            assert summary.scalar("x", 2.0)
            with summary.never_record_summaries():
                assert not summary.scalar("x", 3.0)
                with summary.always_record_summaries():
                    assert summary.scalar("x", 4.0)
            assert summary.scalar("x", 5.0)
        with summary.record_if(False):
            assert not summary.histogram("h", [1.0, 2.0])
            assert not summary.image("i", [[[[0]]]])  # not recorded, so not even checked
    writer.close()
    values = [e.summary.value[0].simple_value for e in summary.read_events(writer.path)
              if e.HasField("summary")]
    assert values == [2.0, 4.0, 5.0]


def test_no_default_writer_means_nothing_is_recorded():
    assert summary.scalar("x", 1.0, step=0) is False
    assert summary.histogram("x", [1.0], step=0) is False
    summary.flush()  # no writer: nothing to do


def test_every_n_rejects_a_bad_period():
    with pytest.raises(ValueError, match="n must be at least 1"):
        summary.record_summaries_every_n_global_steps(0)
    with pytest.raises(TypeError, match="n must be a whole number"):
        summary.record_summaries_every_n_global_steps(2.5)


def test_state_is_per_thread(tmp_path):
    """The default writer, step and policy live in context variables: a new thread
    starts clean, and its settings do not leak back."""
    writer = summary.create_file_writer(tmp_path)
    writer.set_as_default(step=1)
    seen = {}

    def worker():
        seen["recorded"] = summary.scalar("x", 1.0)
        summary.set_step(99)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen["recorded"] is False
    assert summary.get_step() == 1
    assert summary.scalar("x", 1.0)
    writer.close()

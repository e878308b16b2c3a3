"""The writer: background thread, flush/close guarantees, several writers, errors."""

from __future__ import annotations

import os
import threading
import time
import warnings

import pytest

from ember import summary


def scalar_steps(path, tag=None):
    return [e.step for e in summary.read_events(path)
            if e.HasField("summary") and (tag is None or e.summary.value[0].tag == tag)]


def test_flush_puts_everything_queued_in_the_file(tmp_path):
    writer = summary.create_file_writer(tmp_path, max_queue=10**6, flush_millis=10**7)
    with writer.as_default():
        for step in range(500):
            summary.scalar("x", step, step=step)
        writer.flush()
        assert scalar_steps(writer.path) == list(range(500))
    writer.close()


def test_flush_millis_writes_without_being_asked(tmp_path):
    writer = summary.create_file_writer(tmp_path, max_queue=10**6, flush_millis=20)
    writer.set_as_default()
    summary.scalar("x", 1.0, step=1)
    deadline = time.monotonic() + 5
    while scalar_steps(writer.path) != [1] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert scalar_steps(writer.path) == [1]
    writer.close()


def test_max_queue_wakes_the_writer(tmp_path):
    writer = summary.create_file_writer(tmp_path, max_queue=5, flush_millis=10**7)
    with writer.as_default():
        for step in range(5):
            summary.scalar("x", step, step=step)
        deadline = time.monotonic() + 5
        while len(scalar_steps(writer.path)) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert scalar_steps(writer.path) == list(range(5))
    writer.close()


def test_a_loop_that_queues_faster_than_the_thread_writes_still_sees_the_file_grow(
        tmp_path, monkeypatch):
    # Encoding made slower than queueing: a writer that drained until the queue was empty
    # never finished a batch while the loop ran, and a process killed then had only the
    # header on disk (what test_faults' kill loop hit on a busy machine).
    from ember.summary import _writer

    real_frame = _writer.frame

    def slow_frame(data):
        time.sleep(0.0005)
        return real_frame(data)

    monkeypatch.setattr(_writer, "frame", slow_frame)
    writer = summary.create_file_writer(tmp_path, max_queue=1, flush_millis=1)
    header = os.path.getsize(writer.path)
    grew_at = None
    with writer.as_default():
        step, start = 0, time.monotonic()
        while time.monotonic() - start < 3 and grew_at is None:
            summary.scalar("x", 1.0, step=step)
            step += 1
            if os.path.getsize(writer.path) > header:
                grew_at = step
    assert grew_at is not None, f"{step} summaries queued, none written while queueing"
    writer.close()
    assert scalar_steps(writer.path) == list(range(step))


def test_several_writers_at_once(tmp_path):
    train = summary.create_file_writer(tmp_path / "train")
    test = summary.create_file_writer(tmp_path / "test")
    for step in range(10):
        with train.as_default(step=step):
            summary.scalar("loss", 1.0)
            with test.as_default():
                summary.scalar("loss", 2.0)
            summary.scalar("acc", 0.5)
    train.close()
    test.close()
    assert scalar_steps(train.path, "loss") == list(range(10))
    assert scalar_steps(train.path, "acc") == list(range(10))
    assert scalar_steps(test.path, "loss") == list(range(10))


def test_two_writers_in_one_logdir_get_two_files(tmp_path):
    a = summary.create_file_writer(tmp_path)
    b = summary.create_file_writer(tmp_path)
    assert a.path != b.path
    a.close()
    b.close()
    assert len(os.listdir(tmp_path)) == 2


def test_writes_from_many_threads(tmp_path):
    writer = summary.create_file_writer(tmp_path)

    def work(i):
        with writer.as_default():
            for step in range(200):
                summary.scalar(f"t{i}", step, step=step)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    for i in range(4):
        assert scalar_steps(writer.path, f"t{i}") == list(range(200))


def test_set_as_default_stays_until_replaced(tmp_path):
    a = summary.create_file_writer(tmp_path / "a")
    b = summary.create_file_writer(tmp_path / "b")
    a.set_as_default(step=3)
    summary.scalar("x", 1.0)
    with b.as_default():
        summary.scalar("x", 2.0)
    summary.scalar("x", 3.0)  # back to a
    a.close()
    b.close()
    assert scalar_steps(a.path) == [3, 3]
    assert scalar_steps(b.path) == [3]


def test_close_is_idempotent_and_writing_after_it_is_an_error(tmp_path):
    writer = summary.create_file_writer(tmp_path)
    writer.close()
    writer.close()
    writer.flush()  # nothing to do
    with writer.as_default(), pytest.raises(ValueError, match="closed"):
        summary.scalar("x", 1.0, step=0)
    assert "closed" in repr(writer)


def test_an_error_in_the_writer_thread_surfaces_on_the_next_call(tmp_path):
    writer = summary.create_file_writer(tmp_path)
    core = writer._core
    real = core.write_all

    def disk_full(data):
        raise OSError(28, "No space left on device")

    core.write_all = disk_full
    with writer.as_default():
        summary.scalar("x", 1.0, step=0)
        with pytest.raises(summary.SummaryWriterError, match="No space left") as info:
            writer.flush()
        assert isinstance(info.value.__cause__, OSError)
        assert info.value.lost == 1
        core.write_all = real  # the disk has room again: the writer carries on
        summary.scalar("x", 2.0, step=1)
        writer.flush()
    writer.close()
    assert scalar_steps(writer.path) == [1]
    assert writer.lost_events == 1


def test_an_error_raised_while_encoding_surfaces_on_the_next_summary(tmp_path):
    from ember.summary._metadata import Kind

    def explode(value, payload):
        raise RuntimeError("cannot encode")

    writer = summary.create_file_writer(tmp_path)
    writer._put((Kind("scalars", explode), "bad", None, 0, 0.0, None))
    writer._core.wake.set()
    deadline = time.monotonic() + 5
    while writer._core.error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with writer.as_default(), pytest.raises(summary.SummaryWriterError, match="cannot encode"):
        summary.scalar("x", 1.0, step=0)
    writer.close()


def test_the_training_loop_does_not_wait_for_the_disk(tmp_path):
    """A slow disk delays the writer thread, never the summary call."""
    writer = summary.create_file_writer(tmp_path, max_queue=1)
    core = writer._core
    real = core.write_all

    def slow(data):
        time.sleep(0.2)
        real(data)

    core.write_all = slow
    with writer.as_default():
        start = time.perf_counter()
        for step in range(100):
            summary.scalar("x", step, step=step)
        elapsed = time.perf_counter() - start
    writer.close()
    assert elapsed < 0.2
    assert scalar_steps(writer.path) == list(range(100))


def test_bad_writer_arguments(tmp_path):
    with pytest.raises(ValueError, match="max_queue"):
        summary.create_file_writer(tmp_path, max_queue=0)
    with pytest.raises(ValueError, match="flush_millis"):
        summary.create_file_writer(tmp_path, flush_millis=0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_cannot_write_to_the_parents_writer(tmp_path):
    writer = summary.create_file_writer(tmp_path)
    writer.set_as_default(step=0)
    summary.scalar("x", 1.0)
    read, write = os.pipe()
    with warnings.catch_warnings():  # 3.12+ warns about forking with threads running
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: report what a write does, then leave without cleanup
        try:
            summary.scalar("x", 2.0)
            message = b"wrote"
        except ValueError as e:
            message = str(e).encode()
        os.write(write, message)
        os._exit(0)
    os.close(write)
    message = os.read(read, 4096).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert "create writers after forking" in message
    summary.scalar("x", 3.0)  # the parent's writer is untouched
    writer.close()
    assert [e.summary.value[0].simple_value for e in summary.read_events(writer.path)
            if e.HasField("summary")] == [1.0, 3.0]

"""Nothing queued is lost: killed writers, runs that never close, runs that crash."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ember import summary

SRC = str(pathlib.Path(summary.__file__).parents[2])  # the directory holding ember/


def run_python(code: str, logdir, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [SRC, os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(logdir)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)


def steps_in(logdir) -> list[int]:
    (name,) = os.listdir(logdir)
    return [e.step for e in summary.read_events(os.path.join(logdir, name))
            if e.HasField("summary")]


def test_a_killed_writer_leaves_every_flushed_event_readable(tmp_path, tb):
    proc = run_python("""
        import sys, time
        from ember import summary
        writer = summary.create_file_writer(sys.argv[1], max_queue=7, flush_millis=5)
        with writer.as_default():
            for step in range(1000):
                summary.scalar("loss", step * 0.5, step=step)
            writer.flush()
            print("flushed", flush=True)
            step = 1000
            while True:  # keep writing until killed, mid-record or not
                summary.scalar("loss", step * 0.5, step=step)
                step += 1
                if step % 997 == 0:
                    time.sleep(0.001)
        """, tmp_path)
    try:
        assert proc.stdout.readline().strip() == "flushed", proc.stderr.read()
        proc.stdout.close()
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    steps = steps_in(tmp_path)  # every complete record's CRCs verified
    assert len(steps) >= 1000
    assert steps == list(range(len(steps)))
    scalars = tb.accumulator(tmp_path).Scalars("loss")
    assert [s.step for s in scalars[:1000]] == list(range(1000))
    assert [s.value for s in scalars[:1000]] == [s * 0.5 for s in range(1000)]


@pytest.mark.parametrize("ending", ["return", "raise", "sys.exit(3)"])
def test_a_run_that_never_closes_still_leaves_a_complete_file(tmp_path, ending):
    statement = {"return": "pass", "raise": "raise RuntimeError('boom')",
                 "sys.exit(3)": "sys.exit(3)"}[ending]
    proc = run_python(f"""
        import sys
        from ember import summary
        writer = summary.create_file_writer(sys.argv[1], max_queue=10**6, flush_millis=10**8)
        writer.set_as_default()
        for step in range(5000):
            summary.scalar("loss", 1.0, step=step)
        summary.histogram("w", [1.0, 2.0, 3.0], step=0)
        {statement}
        """, tmp_path)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == {"return": 0, "raise": 1, "sys.exit(3)": 3}[ending], err
    steps = steps_in(tmp_path)
    assert steps == [*range(5000), 0]
    (name,) = os.listdir(tmp_path)
    assert list(summary.read_events(os.path.join(tmp_path, name), strict=True))

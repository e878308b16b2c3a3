"""bench/bench_gpu.py runs only on a GPU machine, rarely: these checks keep it from rotting
between runs. Without a GPU it exits 0 and writes nothing; its table has issue #28's
columns, computed from the measurements it is given; CUPTI's events are counted as
kernels, copies, fills and host launches; the PyTorch twins start from ember's weights
(the same loss, before and after a step); and a whole workload's measuring runs end to
end with ember on the CPU."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))  # bench_gpu imports _harness from beside it
_spec = importlib.util.spec_from_file_location("ember_bench_gpu", BENCH / "bench_gpu.py")
assert _spec is not None and _spec.loader is not None
bench_gpu = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench_gpu  # its dataclasses look their module up there
_spec.loader.exec_module(bench_gpu)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_without_a_gpu_it_exits_0_and_writes_nothing(monkeypatch, capsys):
    written = []
    monkeypatch.setattr(bench_gpu, "_gpu", lambda: None)
    monkeypatch.setattr(bench_gpu, "write", lambda *a: written.append(a))
    assert bench_gpu.main([]) == 0
    assert written == []
    assert "skipped: no usable GPU" in capsys.readouterr().out


def test_the_script_itself_skips_here_leaving_the_results_as_they_are():
    if bench_gpu._gpu() is not None:
        pytest.skip("this machine has a GPU: the script would measure")
    results = BENCH / "results" / "gpu.md"
    before = results.read_bytes() if results.exists() else None
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(p) for p in sorted((BENCH.parent / "packages").glob("*/src"))])}
    run = subprocess.run([sys.executable, str(BENCH / "bench_gpu.py")], cwd=BENCH.parent,
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "skipped" in run.stdout and "left as it is" in run.stdout
    assert (results.read_bytes() if results.exists() else None) == before


def test_an_unknown_model_is_rejected_by_name(capsys):
    with pytest.raises(SystemExit) as e:
        bench_gpu.main(["--models", "mlp,resnet"])
    assert e.value.code == 2 and "unknown model 'resnet'" in capsys.readouterr().err


def test_the_table_has_the_issues_columns_and_ratios_to_pytorch_eager():
    M = bench_gpu.Measurement
    mlp, lstm = bench_gpu.WORKLOADS["mlp"], bench_gpu.WORKLOADS["lstm"]
    rows = [
        M(mlp, bench_gpu.EMBER_EAGER, 200.0, 40.0, 0.0, 2.0, 42.0, 2.30261),
        M(mlp, bench_gpu.EMBER_GRAPH, 1000.0, 37.0, 0.0, 0.0, 1.0, 2.30261,
          status=["call: captured (launched 12 times)"], graph_launches=1.0),
        M(mlp, bench_gpu.TORCH_EAGER, 400.0, 30.2, 0.0, 1.0, None, 2.30262),
        M(lstm, bench_gpu.EMBER_EAGER, 50.0, 146.0),
        M(lstm, bench_gpu.TORCH_EAGER, error="RuntimeError: no CUDA"),
    ]
    text = bench_gpu.steps_table("sgd", rows)
    lines = text.splitlines()
    assert lines[0] == "### " + bench_gpu.OPTIMIZERS["sgd"]
    table = [line for line in lines if line.startswith("|")]
    assert tuple(_cells(table[0])) == bench_gpu.COLUMNS
    body = [_cells(line) for line in table[2:]]
    assert len(body) == len(rows) and all(len(r) == len(bench_gpu.COLUMNS) for r in body)
    col = {c: i for i, c in enumerate(bench_gpu.COLUMNS)}
    ratio, steps = col["ratio to PyTorch eager"], col["steps/s"]
    assert [r[ratio] for r in body[:3]] == ["0.50x", "2.50x", "1.00x"]
    assert [r[steps] for r in body[:3]] == ["200", "1,000", "400"]
    assert body[2][col["kernels/step"]] == "30.2" and body[2][col["host launches/step"]] == "-"
    assert body[1][col["loss at step 1"]] == "2.30261"
    assert body[3][ratio] == "-"  # the LSTM has no PyTorch eager figure to divide by
    assert body[4][col["steps/s"]] == "failed: RuntimeError: no CUDA"
    assert "`call: captured (launched 12 times)`; 1 graph launches a step" in text


def test_cupti_events_are_counted_per_step():
    events = [("cupy_add__float32_float32_float32", "kernel"), ("sm90_xmma_gemm_f32", "kernel"),
              ("Memcpy HtoD (Pageable -> Device)", "gpu_memcpy"),
              ("Memset (Device)", "gpu_memset"),
              ("Optimizer.step#SGD.step", "gpu_user_annotation"),  # a range, not a kernel
              ("cudaLaunchKernel", "cuda_runtime"), ("cuLaunchKernel", "cuda_driver"),
              ("cudaGraphLaunch", "cuda_runtime"), ("cudaMemsetAsync", "cuda_runtime"),
              ("cudaDeviceSynchronize", "cuda_runtime"), ("aten::addmm", "cpu_op"),
              ("cudaLaunchKernel", "user_annotation")] * 2
    assert bench_gpu.count_events(events, steps=2) == {
        "kernels": 2.0, "memcpy": 1.0, "memset": 1.0, "host_launches": 4.0}


@pytest.mark.filterwarnings("ignore:CUDA is not available")  # CPU torch: operators only
def test_the_profilers_events_come_as_name_and_activity():
    torch = pytest.importorskip("torch")
    x = torch.ones(3)
    events = bench_gpu.profiled_events(torch, lambda: x + 1, lambda: None, steps=2)
    assert ("aten::add", "cpu_op") in events


class _Event:
    """A profiler event as PyTorch 2.11 gives it: no ``activity_type()``."""

    def __init__(self, name, device, annotation=False):
        self._name, self._device, self._annotation = name, device, annotation

    def name(self):
        return self._name

    def device_type(self):
        return f"DeviceType.{self._device}"

    def is_user_annotation(self):
        return self._annotation


def test_activities_are_told_from_device_and_name_where_pytorch_has_no_activity_type():
    events = [_Event("void gemm_kernel<float>", "CUDA"), _Event("Memcpy HtoD", "CUDA"),
              _Event("Memset (Device)", "CUDA"), _Event("cudaLaunchKernel", "CPU"),
              _Event("cuLaunchKernel", "CPU"), _Event("aten::add", "CPU"),
              _Event("ProfilerStep#1", "CUDA", annotation=True),
              _Event("cudaDeviceSynchronize", "CPU")]
    kinds = [bench_gpu.activity_of(e) for e in events]
    assert kinds == ["kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
                     "cpu_op", "gpu_user_annotation", "cuda_runtime"]
    counts = bench_gpu.count_events(zip((e.name() for e in events), kinds), steps=1)
    assert counts == {"kernels": 1, "memcpy": 1, "memset": 1, "host_launches": 2}


@pytest.mark.parametrize(("name", "optimizer"), [
    ("mlp", "sgd"), ("mlp", "adam"), ("lenet", "sgd"), ("lstm", "sgd"), ("lstm", "adam")])
def test_pytorchs_twin_starts_from_embers_weights_and_steps_alike(name, optimizer):
    torch = pytest.importorskip("torch")
    weights = bench_gpu.initial_weights(name)
    x, y = bench_gpu.data(name)
    ours = bench_gpu.prepare_ember(name, optimizer, "eager", weights, x, y, "/cpu:0",
                                   warmup=0)
    theirs = bench_gpu.prepare_torch(torch, name, optimizer, False, weights, x, y, "cpu",
                                     warmup=0)
    assert ours.first_loss == pytest.approx(theirs.first_loss, rel=1e-5)
    # after one update by each side's optimizer the next loss still agrees: to rounding for
    # SGD; for Adam less closely, since Keras (so ember) adds epsilon to the uncorrected
    # sqrt(v) and PyTorch to the corrected one, which moves weights with tiny gradients
    rel = 1e-4 if optimizer == "sgd" else 2e-3
    assert float(ours.call()) == pytest.approx(float(theirs.call().detach()), rel=rel)


def test_a_workload_is_measured_end_to_end_with_ember_on_the_cpu():
    rows = bench_gpu.measure(None, "mlp", "sgd", sync=lambda: None, rounds=1,
                             device="/cpu:0", seconds=0.02)
    by = {m.contender: m for m in rows}
    assert [m.contender for m in rows] == list(bench_gpu.CONTENDERS)
    for k in (bench_gpu.EMBER_EAGER, bench_gpu.EMBER_GRAPH, bench_gpu.EMBER_REPLAY):
        assert by[k].error is None and by[k].steps_per_s > 0, by[k]
        assert by[k].first_loss == pytest.approx(by[bench_gpu.EMBER_EAGER].first_loss)
    assert by[bench_gpu.EMBER_GRAPH].status and by[bench_gpu.EMBER_EAGER].status is None
    assert "not installed" in by[bench_gpu.TORCH_EAGER].error
    assert bench_gpu.steps_table("sgd", rows).count("\n| ") == 1 + len(rows)  # the header


def test_the_chart_draws_every_contender_of_the_committed_table(tmp_path):
    pytest.importorskip("matplotlib")
    text = (bench_gpu.RESULTS / "gpu.md").read_text()
    out = bench_gpu.chart(text, tmp_path / "gpu.svg")
    svg = out.read_text()
    assert all(c in svg for c in bench_gpu.CONTENDERS)  # the legend
    assert "SGD" in svg and "Adam" in svg  # one panel per optimizer
    with pytest.raises(ValueError, match="no steps table"):
        bench_gpu.chart("## nothing measured\n", tmp_path / "none.svg")

"""Every convolution algorithm against the op table's numpy references, on every backend;
``em.config.conv_algorithm``; the autotuner."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember.core._ops import conv_select
from ember.core.testing import (
    OP_SPECS,
    case_id,
    check_case_forward,
    iter_cases,
    recorded_op_names,
)

CONV_SPECS = [s for s in OP_SPECS if s.name in (
    "nn_ops.conv2d", "nn_ops.conv1d", "nn_ops.conv2d_transpose", "conv2d_backprop_input",
    "conv2d_backprop_filter")]
CASES = list(iter_cases(CONV_SPECS))
ALGORITHMS = ("im2col", "fft", "winograd")
# the cases of stride 1 and dilation 1 with filters of 2 to 5 taps a side (or 1 x 2 to
# 5), where Winograd applies
WINOGRAD_CASES = {("nn_ops.conv2d", "valid"), ("nn_ops.conv2d", "same_3x3"),
                  ("nn_ops.conv2d", "same_5x5"), ("nn_ops.conv2d", "groups_2_same"),
                  ("nn_ops.conv1d", "valid"),
                  ("nn_ops.conv2d_transpose", "valid"),
                  *((op, c) for op in ("conv2d_backprop_input", "conv2d_backprop_filter")
                    for c in ("valid_3x3", "same_3x3", "same_5x5", "wide_pads_2x3"))}
# grouped with one input channel per group: a depthwise convolution, none of these
DEPTHWISE_CASES = {("nn_ops.conv2d", "groups_depthwise")}




def _tolerance(algorithm: str, dtype: object):
    """Winograd's float32 rounding error is bounded relative to the largest output (its
    transforms mix a whole tile), not to each element: up to about 1e-5 of it (7e-6 seen
    on the host, 1.02e-5 on the strict GPU once its cheap products were planned without
    split-K, which rounds as another cuBLASLt algorithm). Elsewhere the op table's
    tolerance."""
    if algorithm != "winograd" or np.dtype(dtype) != np.float32:
        return None
    return lambda want: (1e-5, 2e-5 * float(np.abs(want).max(initial=1.0)))


@pytest.fixture(params=ALGORITHMS)
def conv_algorithm(request: pytest.FixtureRequest):
    """Forces one algorithm for the test (and restores the setting after it)."""
    with em.config.using(conv_algorithm=request.param):
        yield request.param


class _Spy:
    """Wraps the algorithms' functions to record which ran."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ran: list[tuple[str, int]] = []
        for name, fns in list(conv_select.ALGORITHMS.items()):
            monkeypatch.setitem(conv_select.ALGORITHMS, name, tuple(
                self._wrap(name, i, f) for i, f in enumerate(fns)))

    def _wrap(self, name, i, f):
        def run(*a):
            self.ran.append((name, i))
            return f(*a)
        return run


@pytest.mark.parametrize(("spec", "case", "dtype"), CASES, ids=[case_id(*c) for c in CASES])
def test_every_algorithm_matches_the_reference(spec, case, dtype, device, conv_algorithm,
                                               monkeypatch):
    spy = _Spy(monkeypatch)
    check_case_forward(spec, case, dtype, device, tol=_tolerance(conv_algorithm, dtype))
    used = {name for name, _ in spy.ran}
    if (spec.name, case.name) in DEPTHWISE_CASES:
        assert not used, used
        return
    assert used, "no convolution algorithm ran"
    # the forced algorithm ran wherever it applies (winograd: 3x3, stride 1, dilation 1)
    if conv_algorithm != "winograd" or (spec.name, case.name) in WINOGRAD_CASES:
        assert used == {conv_algorithm}, (used, conv_algorithm)
    else:
        assert used == {"im2col"}, used


def test_config_rejects_unknown_values_and_names():
    with pytest.raises(em.InvalidArgumentError, match="conv_algorithm.*'direct'"):
        em.config.conv_algorithm = "direct"
    with pytest.raises(AttributeError, match="no setting 'conv_algo'"):
        em.config.conv_algo = "fft"
    with pytest.raises(AttributeError, match="no setting"):
        with em.config.using(conv_algo="fft"):
            pass
    assert em.config.conv_algorithm == "auto"


def test_config_setting_is_honoured_and_restored(monkeypatch):
    spy = _Spy(monkeypatch)
    x, w = em.ones((1, 4, 4, 2)), em.ones((3, 3, 2, 2))
    em.config.conv_algorithm = "fft"
    try:
        em.nn_ops.conv2d(x, w)
    finally:
        em.config.conv_algorithm = "auto"
    assert spy.ran == [("fft", 0)]
    with em.config.using(conv_algorithm="winograd"):
        em.nn_ops.conv2d(x, w)
    assert spy.ran[-1] == ("winograd", 0)
    assert em.config.conv_algorithm == "auto"


def test_autotuner_times_each_candidate_and_caches_the_choice(monkeypatch):
    monkeypatch.setattr(conv_select, "AUTOTUNE_DROP", float("inf"))  # every run counted
    spy = _Spy(monkeypatch)
    conv_select.clear_chosen()
    rng = np.random.default_rng(0)
    x = em.constant(rng.standard_normal((2, 16, 16, 16)).astype(np.float32))
    w = em.constant(rng.standard_normal((3, 3, 16, 16)).astype(np.float32))
    y1 = em.nn_ops.conv2d(x, w, padding="SAME")  # 2*16*16*16*9*16 MACs: autotuned
    tried = sorted({name for name, _ in spy.ran})
    assert tried == ["fft", "im2col", "winograd"]
    assert len(spy.ran) == 3 * conv_select.AUTOTUNE_RUNS  # interleaved rounds
    assert [n for n, _ in spy.ran[:3]] == [n for n, _ in spy.ran[3:6]]
    (key, choice), = conv_select.chosen_algorithms().items()
    assert key[0] == "conv2d" and key[2] == "float32" and choice in tried
    spy.ran.clear()
    y2 = em.nn_ops.conv2d(x, w, padding="SAME")
    assert spy.ran == [(choice, 0)]
    assert_allclose(y1.numpy(), y2.numpy(), rtol=1e-4, atol=1e-4)
    conv_select.clear_chosen()


class _Clock:
    """A fake ``time.perf_counter`` that the fake algorithms below advance."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _timed_algorithms(monkeypatch, clock, seconds):
    """Replace the forward of each algorithm by one that takes ``seconds[name]`` (a list
    consumed run by run) on ``clock`` and returns a result naming it."""
    monkeypatch.setattr(conv_select.time, "perf_counter", clock)
    for name, fns in list(conv_select.ALGORITHMS.items()):
        def fwd(xp, x, w, g, name=name):
            clock.now += seconds[name].pop(0)
            return xp.full(g.y_shape, ALGORITHMS.index(name), dtype=x.dtype)
        monkeypatch.setitem(conv_select.ALGORITHMS, name, (fwd,) + fns[1:])


@pytest.mark.parametrize(("seconds", "want"), [
    # one slow run (the machine was busy) does not lose winograd the choice ...
    ({"im2col": [0.30, 0.20, 0.21], "fft": [0.5, 0.45, 0.45], "winograd": [0.30, 0.9, 0.10]},
     "winograd"),
    # ... nor does one lucky run win it
    ({"im2col": [0.30, 0.20, 0.21], "fft": [0.5, 0.45, 0.45], "winograd": [0.19, 0.25, 0.3]},
     "im2col"),
    ({"im2col": [0.20, 0.20, 0.20], "fft": [0.1, 0.1, 0.1], "winograd": [0.3, 0.3, 0.3]},
     "fft"),
])
def test_autotuner_prefers_the_faster_candidate_by_its_best_run(monkeypatch, seconds, want):
    conv_select.clear_chosen()
    clock = _Clock()
    _timed_algorithms(monkeypatch, clock, seconds)
    x, w = em.ones((2, 16, 16, 16)), em.ones((3, 3, 16, 16))
    try:
        y = em.nn_ops.conv2d(x, w, padding="SAME")
        (choice,) = conv_select.chosen_algorithms().values()
    finally:
        conv_select.clear_chosen()
    assert choice == want
    assert all(not s for s in seconds.values())  # every candidate ran AUTOTUNE_RUNS times
    assert_allclose(y.numpy(), ALGORITHMS.index(want))  # the chosen one's result


def test_autotuner_stops_timing_a_candidate_far_slower_than_the_fastest(monkeypatch):
    conv_select.clear_chosen()
    clock = _Clock()
    # fft runs once: 2.0 s is over AUTOTUNE_DROP (3) times the fastest first run (0.25 s);
    # im2col, the fallback, runs every round however slow
    seconds = {"im2col": [0.9, 0.9, 0.9], "fft": [2.0], "winograd": [0.25, 0.3, 0.2]}
    _timed_algorithms(monkeypatch, clock, seconds)
    try:
        em.nn_ops.conv2d(em.ones((2, 16, 16, 16)), em.ones((3, 3, 16, 16)), padding="SAME")
        (choice,) = conv_select.chosen_algorithms().values()
    finally:
        conv_select.clear_chosen()
    assert choice == "winograd"
    assert all(not s for s in seconds.values())  # fft's one run, the others' three


def test_pick_keeps_im2col_unless_another_is_clearly_faster():
    assert conv_select.pick({"im2col": [1.0], "winograd": [0.95]}) == "im2col"
    assert conv_select.pick({"im2col": [1.0], "winograd": [0.85]}) == "winograd"
    assert conv_select.pick({"fft": [2.0, 1.0], "winograd": [1.1]}) == "fft"


def test_small_convolutions_use_im2col_untimed(monkeypatch):
    spy = _Spy(monkeypatch)
    em.nn_ops.conv2d(em.ones((1, 5, 5, 2)), em.ones((3, 3, 2, 2)))
    assert spy.ran == [("im2col", 0)]


def test_integer_dtypes_fall_back_to_im2col(monkeypatch):
    spy = _Spy(monkeypatch)
    with em.config.using(conv_algorithm="fft"):
        y = em.nn_ops.conv2d(em.ones((1, 4, 4, 1), dtype=em.int32),
                             em.ones((3, 3, 1, 1), dtype=em.int32))
    assert spy.ran == [("im2col", 0)]
    assert y.dtype == em.int32 and int(y[0, 0, 0, 0]) == 9


@pytest.mark.parametrize("op", ["conv2d_backprop_input", "conv2d_backprop_filter"])
def test_gradient_products_check_the_output_gradient_shape(op):
    f = getattr(conv_select, op)
    a = em.ones((1, 5, 5, 2)) if op.endswith("filter") else em.ones((1, 2, 2, 3))
    b = em.ones((1, 2, 2, 3)) if op.endswith("filter") else em.ones((3, 3, 2, 3))
    with pytest.raises(em.InvalidArgumentError, match=f"{op}: the output gradient has shape"):
        f(a, b, (1, 5, 5, 2) if op.endswith("input") else (3, 3, 2, 3), (1, 1), (1, 1),
          ((0, 0), (0, 0)))


@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
def test_pools_whose_windows_tile_the_input_are_one_op_or_a_view_and_one(pool):
    x = em.constant(np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3))
    with recorded_op_names() as seen:
        y = getattr(em.nn_ops, pool)(x, 2, padding="SAME")  # SAME pads nothing here
    # max: one fused op (with its own backward op); mean: a reshape (a view) and a mean
    assert seen == (["max_pool_tiled"] if pool == "max_pool2d" else ["reshape", "reduce_mean"])
    blocks = x.numpy().reshape(2, 2, 2, 3, 2, 3)
    want = blocks.max((2, 4)) if pool == "max_pool2d" else blocks.mean((2, 4))
    assert_allclose(y.numpy(), want)
    with recorded_op_names() as seen:
        getattr(em.nn_ops, pool)(x, 3, 1)  # overlapping windows: gathered
    assert "extract_patches" in seen


F64_CASES = [c for c in CASES if c[2] == np.float64]


@pytest.mark.parametrize(("spec", "case", "dtype"), F64_CASES,
                         ids=[case_id(*c) for c in F64_CASES])
def test_batch_chunks_match_the_reference(spec, case, dtype, device, monkeypatch,
                                          conv_algorithm):
    """Every algorithm works through the batch in chunks (bounded workspace), on the
    host and on a GPU (whose chunks are larger: ``conv_gather``)."""
    from ember.core._ops import conv_gather, conv_geometry, conv_im2col

    monkeypatch.setattr(conv_geometry, "CHUNK_ELEMENTS", 64)  # one image a chunk
    monkeypatch.setattr(conv_gather, "GPU_CHUNK_ELEMENTS", 64)
    monkeypatch.setattr(conv_im2col, "SHIFT_CHUNK_ELEMENTS", 64)  # im2col's input gradient
    check_case_forward(spec, case, dtype, device)


@pytest.mark.parametrize("min_channels", [1, 1 << 30], ids=["per_tap", "window_matrix"])
@pytest.mark.parametrize(("spec", "case", "dtype"), F64_CASES,
                         ids=[case_id(*c) for c in F64_CASES])
def test_both_im2col_input_gradients_match_the_reference(spec, case, dtype, device,
                                                         monkeypatch, min_channels):
    """im2col's input gradient: one product per filter tap, or (few channels) the window
    matrix and its scatter-add; each on every geometry of the table."""
    from ember.core._ops import conv_im2col

    monkeypatch.setattr(conv_im2col, "SHIFT_MIN_CHANNELS", min_channels)
    with em.config.using(conv_algorithm="im2col"):
        check_case_forward(spec, case, dtype, device)


def test_config_reports_and_clears_the_autotuners_choices():
    em.config.clear_conv_choices()
    assert em.config.conv_choices() == {}
    x, w = em.ones((2, 16, 16, 16)), em.ones((3, 3, 16, 16))
    em.nn_ops.conv2d(x, w, padding="SAME")
    (key, algo), = em.config.conv_choices().items()
    assert key[0] == "conv2d" and key[1][:2] == ((2, 16, 16, 16), (3, 3, 16, 16))
    assert algo in ALGORITHMS
    em.config.clear_conv_choices()
    assert em.config.conv_choices() == {}


@pytest.mark.parametrize("algorithm", ["winograd", "fft"])
@pytest.mark.parametrize("product", [0, 1, 2])
def test_workspace_stays_near_one_chunk(monkeypatch, product, algorithm):
    import tracemalloc

    from ember.core._ops import conv_geometry

    # fft: few channels, so that the images' spectra, not the filter's, are the workspace
    chunk, n, c = (1 << 18, 4, 16) if algorithm == "winograd" else (1 << 18, 48, 4)
    monkeypatch.setattr(conv_geometry, "CHUNK_ELEMENTS", chunk)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 32, 32, c)).astype(np.float32)
    w = rng.standard_normal((3, 3, c, c)).astype(np.float32)
    g = conv_geometry.Geometry(x.shape, w.shape, (1, 1), (1, 1), ((1, 1), (1, 1)))
    dy = rng.standard_normal(g.y_shape).astype(np.float32)
    fn = conv_select.ALGORITHMS[algorithm][product]
    args = [(x, w), (dy, w), (x, dy)][product]
    want = conv_select.ALGORITHMS["im2col"][product](np, *args, g)
    tracemalloc.start()
    try:
        got = fn(np, *args, g)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    # a chunk's buffers together under the chunk size (winograd: it was each one; fft:
    # the whole batch's spectra at once)
    workspace = peak - got.nbytes
    assert workspace < 2 * chunk * 4, f"{workspace / 2**20:.1f} MiB of workspace"


@pytest.mark.parametrize("r", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("m", [1, 2, 4])
def test_winograd_transforms_compute_the_correlation_with_exact_entries(m, r):
    from ember.core._ops.conv_winograd import matrices

    at, g, bt = matrices(m, r)
    rng = np.random.default_rng(m * 10 + r)
    d, w = rng.standard_normal(m + r - 1), rng.standard_normal(r)
    want = np.correlate(d, w, mode="valid")
    assert_allclose(at @ ((g @ w) * (bt @ d)), want, rtol=1e-12, atol=1e-12)
    # no solver residue in B^T (squared in the 2-D transform, it made float32 products of
    # small gradients subnormal, 1.5x slower): every entry a multiple of 1/4, zeros exact
    assert np.array_equal(bt * 4, np.round(bt * 4))

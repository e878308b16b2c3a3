"""Placement and device scopes, on simulated numpy-backed GPUs (and real ones when present)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core.testing import gpu_skip_reason, real_gpu_available, simulated_gpus


def test_cpu_only_placement():
    with simulated_gpus(0):
        assert em.num_gpus() == 0
        assert em.list_devices() == ["/cpu:0"]
        assert em.constant(1.0).device == "/cpu:0"
        assert em.current_device().name == "/cpu:0"
        with pytest.raises(em.DeviceError, match=r"'/gpu:0' is not available \(no usable GPU"):
            em.constant(1.0).gpu()
        with pytest.raises(em.DeviceError, match="devices here: /cpu:0"):
            with em.device("/gpu:0"):
                pass


@pytest.mark.parametrize("n", [1, 2])
def test_default_placement_on_gpu0(n):
    with simulated_gpus(n) as gpus:
        assert em.num_gpus() == n
        assert em.list_devices() == ["/cpu:0"] + [f"/gpu:{i}" for i in range(n)]
        for t in (em.constant(1.0), em.zeros([2]), em.random.normal([2]), em.range(3),
                  em.convert_to_tensor(np.ones(2))):
            assert t.device == "/gpu:0"
        assert em.current_device() is gpus[0]
    # scope ended: back to this machine's own default (/gpu:0 where a GPU is present)
    assert em.constant(1.0).device == em.current_device().name


@pytest.mark.parametrize("n", [0, 2])
def test_config_lists_devices_as_tensorflow_does(n):
    with simulated_gpus(n):
        phys = em.config.list_physical_devices()
        assert [(d.name, d.device_type) for d in phys] == (
            [("/physical_device:CPU:0", "CPU")]
            + [(f"/physical_device:GPU:{i}", "GPU") for i in range(n)])
        gpus = em.config.list_physical_devices("GPU")
        assert bool(gpus) == (n > 0) and gpus == em.config.list_physical_devices("gpu")
        logical = em.config.list_logical_devices("GPU")
        assert [d.name for d in logical] == [f"/gpu:{i}" for i in range(n)]
        for d in logical:  # each name places a tensor there
            with em.device(d.name):
                assert em.constant(1.0).device == d.name
        assert em.config.list_logical_devices("TPU") == []
    with pytest.raises(em.InvalidArgumentError, match="list_physical_devices: device_type"):
        em.config.list_physical_devices(0)


@pytest.mark.parametrize("name", ["/cpu:0", "cpu:0", "CPU:0", "/device:CPU:0",
                                  "/job:localhost/replica:0/task:0/device:CPU:0", "cpu"])
def test_cpu_scope_spellings(name):
    with simulated_gpus(1):
        with em.device(name) as d:
            assert d.name == "/cpu:0"
            assert em.constant([1, 2]).device == "/cpu:0"


@pytest.mark.parametrize("name", ["/gpu:0", "gpu:0", "GPU:0", "/device:GPU:0", "gpu"])
def test_gpu_scope_spellings(name):
    with simulated_gpus(1):
        with em.device("/cpu:0"):
            with em.device(name):
                assert em.ones([2]).device == "/gpu:0"
            assert em.ones([2]).device == "/cpu:0"


def test_bad_device_names():
    with pytest.raises(em.DeviceError, match="cannot parse device name 'tpu:0'"):
        em.get_device("tpu:0")
    with pytest.raises(em.DeviceError, match="ember has one CPU device"):
        em.get_device("/cpu:1")


def test_gpu_and_cpu_copies():
    with simulated_gpus(2):
        with em.device("/cpu:0"):
            x = em.constant([1.0, 2.0])
        g = x.gpu()
        assert g.device == "/gpu:0" and g is not x
        assert_array_equal(g.numpy(), [1.0, 2.0])
        g1 = x.gpu(1)
        assert g1.device == "/gpu:1"
        assert g.cpu().device == "/cpu:0"
        assert x.cpu() is x  # already there
        assert g.gpu(0) is g
        assert x.to("GPU:1").device == "/gpu:1"


def test_missing_gpu_error_names_available_devices():
    with simulated_gpus(1):
        with pytest.raises(em.DeviceError,
                           match=r"'/gpu:1' is not available; devices here: /cpu:0, /gpu:0"):
            em.constant(1.0).gpu(1)


def test_mixing_devices_names_both():
    with simulated_gpus(2):
        a = em.constant([1.0, 2.0])  # /gpu:0
        b = a.gpu(1)
        c = a.cpu()
        with pytest.raises(em.DeviceError,
                           match=r"add: operands are on different devices \(input 0 on /gpu:0, "
                                 r"input 1 on /gpu:1\)"):
            em.add(a, b)
        with pytest.raises(em.DeviceError, match=r"input 0 on /cpu:0, input 1 on /gpu:0"):
            c * a
        with pytest.raises(em.DeviceError, match="matmul: operands are on different devices"):
            em.matmul(em.ones([2, 2]), em.ones([2, 2]).cpu())
        with pytest.raises(em.DeviceError, match="concat: operands are on different devices"):
            em.concat([a, c], 0)


def test_variable_mixed_with_other_device():
    with simulated_gpus(1):
        with em.device("/cpu:0"):
            v = em.Variable([1.0, 2.0])
        with pytest.raises(em.DeviceError, match="/cpu:0.*/gpu:0"):
            v + em.constant([1.0, 1.0])


def test_python_and_numpy_operands_follow_the_op():
    with simulated_gpus(2):
        g1 = em.constant([1.0, 2.0]).gpu(1)
        with em.device("/cpu:0"):  # the scope does not move ops on existing tensors
            r = g1 + 1.0
            s = np.array([1.0, 1.0], np.float32) * g1
            w = em.where(g1 > 1.5, g1, 0.0)
        assert r.device == s.device == w.device == "/gpu:1"
        assert_array_equal(r.numpy(), [2.0, 3.0])


def test_ops_run_where_their_inputs_live():
    with simulated_gpus(2):
        x = em.ones([2, 2]).gpu(1)
        for r in (em.matmul(x, x), em.reduce_sum(x), x[0], em.nn_ops.softmax(x),
                  em.reshape(x, [4]), em.split(x, 2)[0], em.zeros_like(x)):
            assert r.device == "/gpu:1"


def test_scopes_are_per_thread():
    seen = {}

    def worker():
        seen["device"] = em.constant(1.0).device
        seen["gpus"] = em.num_gpus()

    with simulated_gpus(1):
        with em.device("/gpu:0"):
            assert em.constant(1.0).device == "/gpu:0"
            t = threading.Thread(target=worker)
            t.start()
            t.join()
    # the other thread sees neither the scope nor the simulated GPU: the machine's own
    # default device and GPU count (a present GPU, real or the double, is the process's)
    assert seen == {"device": em.current_device().name, "gpus": em.num_gpus()}


def test_scope_restored_after_exception():
    with simulated_gpus(1):
        with pytest.raises(RuntimeError):
            with em.device("/cpu:0"):
                raise RuntimeError
        assert em.constant(1).device == "/gpu:0"


def test_simulated_gpus_have_distinct_backends():
    with simulated_gpus(2) as (g0, g1):
        assert g0.backend is not g1.backend
        assert g0.kind == "gpu" and g1.index == 1 and repr(g1) == "Device('/gpu:1')"


# --- real GPU (cupy) ----------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.skipif(not real_gpu_available(), reason=gpu_skip_reason() or "no GPU")
def test_real_gpu_roundtrip():
    x = em.constant([[1.0, 2.0]]).gpu()
    assert x.device == "/gpu:0"
    y = em.matmul(x, em.transpose(x))
    assert type(y.numpy()) is np.ndarray
    assert_array_equal(y.cpu().numpy(), [[5.0]])


def test_device_fixture_runs_on_backend(device):
    with em.device(device):
        t = em.constant([1.0, 2.0]) * 2
    assert t.device == device
    assert_array_equal(t.numpy(), [2.0, 4.0])


def test_shape_rank_size_live_on_the_input_device():
    import ember.core as em
    from ember.core.testing import simulated_gpus

    with simulated_gpus(1):
        with em.device("/cpu:0"):
            x = em.zeros([2, 3])
        with em.device("/gpu:0"):
            s, r, n = em.shape(x), em.rank(x), em.size(x)
        assert (s.device, r.device, n.device) == ("/cpu:0",) * 3
        assert s.numpy().tolist() == [2, 3] and int(r) == 2 and int(n) == 6

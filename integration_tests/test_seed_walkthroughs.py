"""The seed guides' walkthroughs in ember's names, with every package installed."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import ember.core as em
from ember import checkpoint, data, graph, summary, tape

# every walkthrough runs on the CPU and on the strict cupy-like GPU double (conftest.py)
pytestmark = pytest.mark.usefixtures("backend")


def test_basics_tensors_numpy_and_python_values():
    x = [[2.0]]
    m = em.matmul(x, x)
    assert f"hello, {m}" == "hello, [[4.]]"  # the seed's own output
    a = em.constant([[1, 2], [3, 4]])
    b = em.add(a, 1)
    np.testing.assert_array_equal((a * b).numpy(), [[2, 6], [12, 20]])
    c = np.multiply(a, b)
    assert isinstance(c, np.ndarray)
    np.testing.assert_array_equal(c, [[2, 6], [12, 20]])
    assert str(em.constant(5)) == "ember.Tensor(5, shape=(), dtype=int32)"


def test_autodiff_square_orders_and_custom_gradient():
    def square(x):
        return em.multiply(x, x)

    grad = tape.gradients_function(square)
    gradgrad = tape.gradients_function(lambda x: grad(x)[0])
    assert [float(square(3.0)), float(grad(3.0)[0]), float(gradgrad(3.0)[0])] == [9.0, 6.0, 2.0]


def _linear_regression(traced: bool) -> tuple[float, float]:
    em.random.set_seed(1)
    n = 1000
    xs = em.random.normal([n])
    ys = xs * 3.0 + 2.0 + em.random.normal([n]) * 0.1
    W, B = em.Variable(5.0), em.Variable(10.0)

    def loss():
        return em.reduce_mean(em.square(W * xs + B - ys))

    grad_fn = tape.implicit_gradients(loss)

    def step():
        for g, v in grad_fn():
            v.assign_sub(g * 0.1)

    run = graph.function(step) if traced else step
    for _ in range(200):
        run()
    return float(W), float(B)


def test_linear_regression_with_gradients_function_reaches_w3_b2():
    """Also as the seeds advise, "code that runs both eagerly and as a graph": the step
    under graph.function ends at the same weights, bit for bit."""
    w, b = _linear_regression(traced=False)
    assert abs(w - 3.0) < 0.05 and abs(b - 2.0) < 0.05
    assert _linear_regression(traced=True) == (w, b)


def test_checkpoint_save_then_restore_prints_2(tmp_path):
    x = em.Variable(10.0)
    ckpt = checkpoint.Checkpoint(x=x)
    x.assign(2.0)
    save_path = ckpt.save(str(tmp_path / "ckpt" / "ckpt"))
    x.assign(11.0)
    ckpt.restore(save_path)
    assert float(x) == 2.0
    assert checkpoint.latest_checkpoint(str(tmp_path / "ckpt")) == save_path


def test_checkpoint_restores_a_random_generator_and_tape_trained_variable(tmp_path):
    em.random.set_seed(3)
    w = em.Variable(em.random.normal([3, 2]))
    gen = em.random.Generator(7)
    ckpt = checkpoint.Checkpoint(w=w, gen=gen)
    path = ckpt.save(str(tmp_path / "c"))
    expected = gen.normal([4]).numpy()
    before = w.numpy().copy()
    w.assign(np.zeros((3, 2), np.float32))
    gen.normal([10])
    ckpt.restore(path)
    np.testing.assert_array_equal(w.numpy(), before)
    np.testing.assert_array_equal(gen.normal([4]).numpy(), expected)


def test_summaries_every_100_steps_of_an_int64_global_step(tmp_path):
    global_step = em.Variable(0, dtype=em.int64, trainable=False)
    writer = summary.create_file_writer(str(tmp_path))
    with writer.as_default(), summary.record_summaries_every_n_global_steps(100, global_step):
        for _ in range(1000):
            summary.scalar("loss", em.constant(1.5) * 2, step=global_step)
            global_step.assign_add(1)
    writer.close()
    files = glob.glob(os.path.join(str(tmp_path), "events.out.tfevents.*"))
    assert len(files) == 1
    steps = [e.step for e in summary.read_events(files[0]) if e.summary.value]
    assert steps == list(range(0, 1000, 100))


def test_dataset_pipeline_shapes_and_ember_tensors():
    images = em.random.uniform([100, 784]).numpy()
    labels = np.arange(100) % 10
    ds = data.Dataset.from_tensor_slices((images, labels)).shuffle(100, seed=0).repeat(4).batch(32)
    batches = list(ds)
    assert len(batches) == int(np.ceil(4 * 100 / 32))
    x, y = batches[0]
    logits = em.matmul(x, em.zeros([784, 10]))
    assert logits.shape == (32, 10)
    seen = np.concatenate([b[1] for b in batches])
    assert np.bincount(seen, minlength=10).tolist() == [40] * 10


def test_gpu_walkthrough_matmul_and_gradient_on_gpu(backend):
    # runs on the strict GPU double (and on a real GPU); asked at run time, not at import,
    # so the double's /gpu:0 counts
    if backend == "/cpu:0" or em.num_gpus() == 0:
        pytest.skip("the GPU walkthrough runs on the GPU backends (strict-gpu, gpu)")
    with em.device("/gpu:0"):
        x = em.random.normal([100, 100])
        w = em.Variable(em.random.normal([100, 10]))
    with tape.GradientTape() as t:
        loss = em.reduce_sum(em.matmul(x, w))
    g = t.gradient(loss, w)
    assert g.device == "/gpu:0"
    np.testing.assert_allclose(g.numpy(), np.repeat(x.numpy().sum(0)[:, None], 10, 1),
                               rtol=1e-4)

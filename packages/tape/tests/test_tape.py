"""GradientTape behaviour and the seeds' automatic-differentiation examples."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import ember.core as em
from ember import tape


def test_seed_w_times_w_gives_2w():
    w = em.Variable([[1.0]])
    with tape.GradientTape() as t:
        loss = w * w
    np.testing.assert_allclose(t.gradient(loss, w).numpy(), [[2.0]])


def test_persistent_tape_gives_several_gradients():
    x = em.ones((2, 2))
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
        y = em.reduce_sum(x)
        z = em.multiply(y, y)
    np.testing.assert_allclose(t.gradient(z, x).numpy(), np.full((2, 2), 8.0))
    np.testing.assert_allclose(t.gradient(z, y).numpy(), 8.0)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), np.ones((2, 2)))


def test_non_persistent_tape_used_twice_raises():
    x = em.constant(3.0)
    with tape.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x)
    with pytest.raises(RuntimeError, match="only be called once.*persistent=True"):
        t.gradient(y, x)


def test_nested_tapes_second_derivative():
    x = em.Variable(1.0)
    with tape.GradientTape() as t:
        with tape.GradientTape() as t2:
            y = x * x
        dy_dx = t2.gradient(y, x)
    assert float(dy_dx) == 2.0
    assert float(t.gradient(dy_dx, x)) == 2.0


def test_gradients_function_orders_one_two_three():
    def square(x):
        return em.multiply(x, x)

    grad = tape.gradients_function(square)
    gradgrad = tape.gradients_function(lambda x: grad(x)[0])
    gradgradgrad = tape.gradients_function(lambda x: gradgrad(x)[0])
    assert float(square(3.0)) == 9.0
    assert float(grad(3.0)[0]) == 6.0
    assert float(gradgrad(3.0)[0]) == 2.0
    assert gradgradgrad(3.0) == [None]


def test_abs_through_python_if():
    def abs_(x):
        return x if x > 0.0 else -x

    grad = tape.gradients_function(abs_)
    assert float(grad(2.0)[0]) == 1.0
    assert float(grad(-2.0)[0]) == -1.0


def test_log1pexp_unstable_then_custom_gradient():
    def log1pexp(x):
        return em.log(1 + em.exp(x))

    grad = tape.gradients_function(log1pexp)
    assert float(grad(0.0)[0]) == 0.5
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(float(grad(100.0)[0]))

    @tape.custom_gradient
    def log1pexp_fixed(x):
        e = em.exp(x)

        def grad_fn(dy):
            return dy * (1 - 1 / (1 + e))

        return em.log(1 + e), grad_fn

    grad2 = tape.gradients_function(log1pexp_fixed)
    assert float(grad2(0.0)[0]) == 0.5
    with np.errstate(over="ignore"):
        assert float(grad2(100.0)[0]) == 1.0


def test_clip_gradient_by_norm_custom_gradient():
    @tape.custom_gradient
    def clip_gradient_by_norm(x, norm):
        y = em.identity(x)

        def grad_fn(dresult):
            return [em.clip_by_norm(dresult, norm), None]

        return y, grad_fn

    x = em.constant([3.0, 4.0])
    with tape.GradientTape() as t:
        t.watch(x)
        y = clip_gradient_by_norm(x, 1.0) * 10.0
    g = t.gradient(y, x).numpy()
    np.testing.assert_allclose(np.linalg.norm(g), 1.0, rtol=1e-6)


def test_custom_gradient_composes_with_second_order():
    @tape.custom_gradient
    def cube(x):
        def grad_fn(dy):
            return dy * 3 * x * x
        return x * x * x, grad_fn

    x = em.constant(2.0)
    with tape.GradientTape() as outer:
        outer.watch(x)
        with tape.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        dy = inner.gradient(y, x)
    assert float(dy) == 12.0
    assert float(outer.gradient(dy, x)) == 12.0  # d/dx 3x^2 = 6x


def test_custom_gradient_with_variables():
    v = em.Variable(2.0)

    @tape.custom_gradient
    def scaled(x):
        def grad_fn(dy, variables=None):
            return [dy * v], [dy * x * 10.0]
        return x * v, grad_fn

    x = em.constant(3.0)
    with tape.GradientTape() as t:
        t.watch(x)
        y = scaled(x)
    gx, gv = t.gradient(y, [x, v])
    assert float(gx) == 2.0
    assert float(gv) == 30.0  # the custom rule, not the true 3.0


def test_unconnected_gives_none_or_zeros():
    x, y = em.constant(1.0), em.constant(2.0)
    with tape.GradientTape(persistent=True) as t:
        t.watch([x, y])
        z = x * 3
    assert t.gradient(z, y) is None
    assert float(t.gradient(z, y, unconnected_gradients="zero")) == 0.0


def test_unwatched_constants_and_integer_tensors_get_none():
    x = em.constant(1.0)
    i = em.constant(2)
    with tape.GradientTape() as t:
        with pytest.warns(UserWarning, match=r"watch: tensor 0 has dtype int32"):
            t.watch(i)
        z = x * 3 + em.cast(i, em.float32)
    with pytest.warns(UserWarning, match=r"source 1 has dtype int32.*gets None"):
        assert t.gradient(z, [x, i]) == [None, None]


@pytest.mark.parametrize("dtype", [em.int32, em.int64, em.bool_])
def test_integer_and_bool_sources_warn_naming_index_and_dtype(dtype):
    x = em.constant(2.0)
    i = em.cast(em.constant([1, 0]), dtype)
    v = em.Variable(em.cast(em.constant([1, 1]), dtype))
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    with pytest.warns(UserWarning) as w:
        g = t.gradient(y, [x, i, v], unconnected_gradients="zero")
    # unconnected_gradients="zero": zeros of the source's own dtype, as TensorFlow's
    # (tf.int32 [0, 0], tf.bool [False, False]; it gave None before)
    assert float(g[0]) == 4.0
    for gk in g[1:]:
        assert gk.dtype == dtype and gk.shape == (2,)
        np.testing.assert_array_equal(gk.numpy(), np.zeros(2, dtype))
    with pytest.warns(UserWarning, match="gets None"):
        assert t.gradient(y, [i, v]) == [None, None]
    name = np.dtype(dtype).name
    assert [str(r.message).split(";")[0] for r in w] == [
        f"GradientTape.gradient: source 1 has dtype {name}",
        f"GradientTape.gradient: source 2 has dtype {name}"]
    assert all(r.filename == __file__ for r in w)  # points at the caller's line


def test_float_sources_do_not_warn():
    x = em.constant(2.0)
    with tape.GradientTape() as t:
        t.watch(x)
        y = x * x
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(t.gradient(y, x)) == 4.0


def test_watch_after_the_tape_exited_raises():
    x = em.constant(1.0)
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
    with pytest.raises(RuntimeError, match="exited its `with` block"):
        t.watch(x)
    with t:  # re-entering resumes recording, and watch works again
        t.watch(x)
        y = x * 5
    np.testing.assert_allclose(t.gradient(y, x).numpy(), 5.0)


def test_watch_in_a_nested_reentry_is_allowed_until_the_last_exit():
    x = em.constant(1.0)
    t = tape.GradientTape()
    with t:
        with t:
            pass
        t.watch(x)  # still inside the outer block
        y = x * 2
    assert float(t.gradient(y, x)) == 2.0


def test_wrong_shaped_output_gradients_names_the_argument_and_both_shapes():
    x = em.constant([1.0, 2.0, 3.0])
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = em.reduce_sum(x)
    with pytest.raises(ValueError, match=r"output_gradients has shape \(2,\) but its target "
                                         r"has shape \(3,\)"):
        t.gradient(y, x, output_gradients=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"output_gradients\[1\] has shape \(3,\).*\(\)"):
        t.gradient([y, z], x, output_gradients=[em.ones([3]), em.ones([3])])
    # broadcastable is not enough: (1,) would silently scale every element alike
    with pytest.raises(ValueError, match="output_gradients"):
        t.gradient(y, x, output_gradients=[1.0])


def test_nested_sources_keep_their_structure():
    a, b = em.Variable(1.0), em.Variable(2.0)
    with tape.GradientTape() as t:
        y = a * b
    g = t.gradient(y, {"a": a, "pair": (b, a)})
    assert set(g) == {"a", "pair"}
    assert float(g["a"]) == 2.0
    assert float(g["pair"][0]) == 1.0 and float(g["pair"][1]) == 2.0


def test_output_gradients_and_list_targets():
    x = em.constant([1.0, 2.0])
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = x * 3
    np.testing.assert_allclose(t.gradient(y, x, output_gradients=[1.0, 10.0]).numpy(), [2, 40])
    np.testing.assert_allclose(t.gradient([y, z], x).numpy(), [5, 7])


def test_watch_accessed_variables_false_and_trainable_false():
    v = em.Variable(2.0)
    frozen = em.Variable(3.0, trainable=False)
    with tape.GradientTape(watch_accessed_variables=False) as t:
        y = v * v
    assert t.gradient(y, v) is None
    with tape.GradientTape() as t:
        y = frozen * v
    assert t.watched_variables() == [v]


def test_stop_recording_and_stop_gradient():
    x = em.constant(2.0)
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
        with t.stop_recording():
            a = x * x
        b = em.stop_gradient(x * x) + x
    assert t.gradient(a, x) is None
    assert float(t.gradient(b, x)) == 1.0


def test_gradient_inside_the_tapes_own_block():
    x = em.constant(3.0)
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        g = t.gradient(y, x)
        z = y * 2
    assert float(g) == 6.0
    assert float(t.gradient(z, x)) == 12.0


def test_reset_forgets_recorded_ops():
    x = em.constant(3.0)
    with tape.GradientTape() as t:
        t.watch(x)
        y = x * x
        t.reset()
        t.watch(x)
        z = x * 2
    assert float(t.gradient(z, x)) == 2.0
    del y


def test_variable_reads_before_and_after_assign_both_count():
    v = em.Variable(1.0)
    with tape.GradientTape() as t:
        a = v * 2.0
        v.assign(5.0)
        b = v * 3.0
        y = a + b
    assert float(t.gradient(y, v)) == 5.0


def test_broadcasting_gradients_reduce_to_source_shape():
    x = em.constant(np.ones((3, 1)))
    b = em.constant(np.ones((4,)))
    with tape.GradientTape() as t:
        t.watch([x, b])
        y = em.reduce_sum(x * b)
    gx, gb = t.gradient(y, [x, b])
    assert gx.shape == (3, 1) and gb.shape == (4,)
    np.testing.assert_allclose(gx.numpy(), np.full((3, 1), 4.0))
    np.testing.assert_allclose(gb.numpy(), np.full((4,), 3.0))


def test_repeated_advanced_indices_accumulate():
    x = em.constant([1.0, 2.0, 3.0])
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.reduce_sum(x[em.constant([0, 0, 2, 0])])
    np.testing.assert_allclose(t.gradient(y, x).numpy(), [3.0, 0.0, 1.0])


def test_jacobian_and_batch_jacobian():
    x = em.constant([1.0, 2.0, 3.0])
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    np.testing.assert_allclose(t.jacobian(y, x).numpy(), np.diag([2.0, 4.0, 6.0]))
    xb = em.constant(np.arange(6.0).reshape(2, 3))
    w = em.constant(np.arange(12.0).reshape(3, 4))
    with tape.GradientTape() as t:
        t.watch(xb)
        yb = em.matmul(xb, w)
    bj = t.batch_jacobian(yb, xb).numpy()
    assert bj.shape == (2, 4, 3)
    np.testing.assert_allclose(bj[0], w.numpy().T)
    np.testing.assert_allclose(bj[1], w.numpy().T)


def test_implicit_gradients_pairs_over_read_variables():
    w = em.Variable(2.0)
    b = em.Variable(1.0)
    unused = em.Variable(7.0)

    def loss(x):
        return w * x + b

    pairs = tape.implicit_gradients(loss)(3.0)
    assert [v is w or v is b for _, v in pairs] == [True, True]
    assert unused not in [v for _, v in pairs]
    assert [float(g) for g, _ in pairs] == [3.0, 1.0]
    value, pairs = tape.implicit_value_and_gradients(loss)(3.0)
    assert float(value) == 7.0 and len(pairs) == 2


def test_value_and_gradients_function_and_params():
    f = tape.value_and_gradients_function(lambda x, y: x * y * y, params=[1])
    value, grads = f(2.0, 3.0)
    assert float(value) == 18.0
    assert len(grads) == 1 and float(grads[0]) == 12.0


def test_tapes_are_per_thread():
    x = em.constant(2.0)
    seen = {}

    def other():
        y = x * x  # runs while the main thread's tape is active
        seen["y"] = y

    with tape.GradientTape() as t:
        t.watch(x)
        th = threading.Thread(target=other)
        th.start()
        th.join()
        z = x * 3
    assert t.gradient(seen["y"], x) is None
    assert float(t.gradient.__self__ is t) == 1.0
    del z


def test_non_persistent_tape_releases_records():
    x = em.constant(np.ones(1000))
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.reduce_sum(em.exp(x))
    t.gradient(y, x)
    assert t._records == [] and t._tracked == {}


def test_linear_regression_reaches_w3_b2():
    em.random.set_seed(0)
    n = 1000
    xs = em.random.normal([n])
    noise = em.random.normal([n])
    ys = xs * 3.0 + 2.0 + noise * 0.1
    W, B = em.Variable(5.0), em.Variable(10.0)
    lr = 0.1
    for _ in range(200):
        with tape.GradientTape() as t:
            loss = em.reduce_mean(em.square(ys - (W * xs + B)))
        dW, dB = t.gradient(loss, [W, B])
        W.assign_sub(dW * lr)
        B.assign_sub(dB * lr)
    assert abs(float(W) - 3.0) < 0.05
    assert abs(float(B) - 2.0) < 0.05


def test_line_search_dynamic_model_with_python_control_flow():
    # The seeds' dynamic model: a backtracking line search inside the forward pass.
    def line_search_step(fn, init_x, rate=1.0):
        with tape.GradientTape() as t:
            t.watch(init_x)
            value = fn(init_x)
        grad = t.gradient(value, init_x)
        grad_norm = em.reduce_sum(grad * grad)
        init_value = value
        while value > init_value - rate * grad_norm:
            x = init_x - rate * grad
            value = fn(x)
            rate /= 2.0
        return x, value

    x, value = line_search_step(lambda v: em.square(v - 1.0), em.constant(3.0))
    assert float(value) < 4.0
    assert abs(float(x) - 1.0) < 2.0


def test_check_gradients_reports_a_wrong_rule():
    @tape.custom_gradient
    def wrong(x):
        return x * x, lambda dy: dy * 3.0  # true gradient is 2x

    with pytest.raises(tape.GradientCheckError, match="max \\|analytic - numeric\\|"):
        tape.check_gradients(wrong, [np.array([1.0, 2.0])], order=1)


def test_no_auto_watch_skips_variables_read_inside_but_watch_still_works():
    v, w = em.Variable(2.0), em.Variable(3.0)
    with tape.GradientTape() as t:
        with tape.no_auto_watch():
            a = v * 5.0
            t.watch(w)
            b = w * 7.0
        y = a + b
    gv, gw = t.gradient(y, [v, w])
    assert gv is None
    assert float(gw) == 7.0


@pytest.mark.parametrize("first,second", [("gradient", "jacobian"),
                                          ("jacobian", "batch_jacobian"),
                                          ("batch_jacobian", "gradient")])
def test_non_persistent_tape_is_used_once_by_any_method(first, second):
    x = em.constant([[1.0, 2.0]])
    with tape.GradientTape() as t:
        t.watch(x)
        y = x * x
    getattr(t, first)(y, x)
    with pytest.raises(RuntimeError, match=f"GradientTape.{second} can only be called once.*"
                                           "persistent=True"):
        getattr(t, second)(y, x)


def test_custom_gradient_records_the_registered_op():
    seen = []

    class Names:
        def record_op(self, op, inputs, attrs, outputs):
            seen.append(op)

        def variable_read(self, variable, value):
            pass

    @tape.custom_gradient
    def double(x):
        return x * 2, lambda dy: dy * 2

    from ember.core import extend

    with extend.recording_to(Names()):
        double(em.constant(1.0))
    assert seen == [em.REGISTRY["custom_gradient"]]


def test_the_tape_is_core_differentiator_and_records_a_call_as_one_op():
    from ember.core import recording

    d = recording.differentiator()
    assert d is not None
    x = em.constant([1.0, 2.0])
    y, variables, grad = d.differentiate(lambda: x * x, [x])
    assert variables == []
    np.testing.assert_array_equal(grad([y], [em.ones_like(y)])[0].numpy(), [2.0, 4.0])
    with tape.GradientTape() as t:
        t.watch(x)
        out = em.constant([7.0, 7.0])  # computed "elsewhere" (a replay)
        d.record_call([x], [out], lambda dys: [dys[0] * 3.0])
    np.testing.assert_array_equal(t.gradient(out, x).numpy(), [3.0, 3.0])


def test_custom_gradient_returning_its_input_clips_only_its_own_use():
    """TensorFlow wraps custom_gradient's results in identity. ember returned the input
    itself, so the custom gradient reached every other use of that input (TF: 12, was 2)."""
    @tape.custom_gradient
    def clip_gradients(y):
        return y, lambda dy: em.clip_by_norm(dy, 0.5)

    v = em.Variable(2.0)
    with tape.GradientTape(persistent=True) as t:
        a = v * v
        out = clip_gradients(a)
        other = a * 3.0
        both = out + a
    assert out is not a
    assert float(t.gradient(other, v)) == 12.0
    assert float(t.gradient(out, v)) == 2.0  # 0.5 (clipped) * 2v
    assert float(t.gradient(both, v)) == 6.0  # (0.5 + 1) * 2v
    with tape.GradientTape() as t:
        o = clip_gradients(v)  # a variable's value is the input
    assert float(t.gradient(o, v)) == 0.5
    x = em.constant(2.0)
    with tape.GradientTape() as t:
        t.watch(x)
        o = clip_gradients(x) * x
    assert float(t.gradient(o, x)) == 2.5  # 0.5 * x clipped to 0.5, plus out = 2


def test_stop_recording_outside_the_tapes_block_raises():
    t = tape.GradientTape()
    with pytest.raises(RuntimeError, match="not recording"):
        with t.stop_recording():
            pass
    with t:
        with t.stop_recording():
            pass


def test_batch_jacobian_checks_ranks_and_the_batch_dimension():
    x = em.constant(np.ones((4, 3), np.float32))
    with tape.GradientTape(persistent=True) as t:
        t.watch(x)
        y = em.reshape(x * 2.0, (3, 4))
        z = em.reduce_sum(x, 1)
    with pytest.raises(em.InvalidArgumentError, match=r"target shape \(3, 4\).*\(4, 3\)"):
        t.batch_jacobian(y, x)
    with pytest.raises(em.InvalidArgumentError, match="rank 2"):
        t.batch_jacobian(z, x)


def test_second_derivative_through_leaky_relu_is_connected_zeros():
    """TF's LeakyReluGrad (and torch's leaky_relu_backward) give the features' gradient
    as zeros; the composite where() gave None."""
    x = em.Variable([-1.5, -0.5, 0.5, 2.0])
    with tape.GradientTape() as outer:
        with tape.GradientTape() as inner:
            y = em.reduce_sum(em.nn_ops.leaky_relu(x, 0.2))
        g = inner.gradient(y, x)
        s = em.reduce_sum(g * g)
    np.testing.assert_allclose(g.numpy(), [0.2, 0.2, 1.0, 1.0])
    h = outer.gradient(s, x)
    assert h is not None
    np.testing.assert_array_equal(h.numpy(), np.zeros(4, np.float32))


def test_custom_gradient_returning_a_tensor_made_before_it_ran_is_a_new_tensor():
    c = em.constant(3.0)

    @tape.custom_gradient
    def passthrough(x):
        return c, lambda dy: dy * 0.0

    x = em.constant(1.0)
    with tape.GradientTape(persistent=True) as t:
        t.watch([x, c])
        out = passthrough(x)
        other = c * 2.0
    assert out is not c
    assert float(t.gradient(other, c)) == 2.0  # the custom rule did not take c's other use
    assert float(t.gradient(out, x)) == 0.0

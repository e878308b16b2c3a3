"""em.linalg: TF's conventions (return orders, norms of matrices) and errors that name the
function, the argument and the shapes. Values against numpy and PyTorch are in the op table
(testing/_table_linalg.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember.core import InvalidArgumentError
from ember.core.testing import simulated_gpus

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


def test_matrix_inverse_is_inv():
    assert em.linalg.matrix_inverse is em.linalg.inv
    np.testing.assert_allclose(em.linalg.matrix_inverse(A).numpy(), np.linalg.inv(A))


def test_svd_returns_s_u_v_in_tensorflows_order_with_v_not_its_transpose():
    a = np.random.default_rng(0).normal(size=(4, 3))
    s, u, v = em.linalg.svd(a)
    assert (s.shape, u.shape, v.shape) == ((3,), (4, 3), (3, 3))
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, a, atol=1e-12)
    s2, u2, v2 = em.linalg.svd(a, full_matrices=True)
    assert (u2.shape, v2.shape) == ((4, 4), (3, 3))


@pytest.mark.parametrize("ord,axis,want", [
    (1, [0, 1], lambda a: np.abs(a).sum(0).max()),       # largest column sum (as TF)
    (1, [1, 0], lambda a: np.abs(a).sum(1).max()),       # axes in the given order
    (np.inf, [0, 1], lambda a: np.abs(a).sum(1).max()),  # largest row sum
    (2, [0, 1], lambda a: np.linalg.svd(a, compute_uv=False)[0]),
    (3, None, lambda a: (np.abs(a) ** 3).sum() ** (1 / 3)),
])
def test_norm_of_matrices_follows_tensorflow(ord, axis, want):
    a = np.array([[1.0, -7.0, 2.0], [3.0, 4.0, -0.5]])
    np.testing.assert_allclose(em.norm(a, ord=ord, axis=axis).numpy(), want(a), rtol=1e-12)
    np.testing.assert_allclose(em.linalg.norm(a, ord=ord, axis=axis).numpy(), want(a),
                               rtol=1e-12)


@pytest.mark.parametrize("ord", [0, -1, "nuc", True])
def test_norm_rejects_unsupported_orders_by_name(ord):
    with pytest.raises(InvalidArgumentError, match=r"norm: unsupported ord"):
        em.linalg.norm(A, ord=ord, axis=-1)


@pytest.mark.parametrize("fn", ["inv", "det", "slogdet", "cholesky", "qr", "svd", "eigh"])
def test_integer_input_is_rejected_naming_the_function_and_dtype(fn):
    with pytest.raises(InvalidArgumentError, match=rf"linalg.{fn}: expected a float32 or "
                                                   r"float64 tensor, got int32"):
        getattr(em.linalg, fn)(em.constant([[1, 2], [3, 4]]))


@pytest.mark.parametrize("fn", ["inv", "det", "slogdet", "cholesky", "eigh"])
def test_non_square_input_is_rejected_with_its_shape(fn):
    with pytest.raises(InvalidArgumentError, match=rf"linalg.{fn}: expected square matrices, "
                                                   r"got shape \(2, 3\)"):
        getattr(em.linalg, fn)(np.ones((2, 3)))


def test_vectors_are_not_matrices():
    with pytest.raises(InvalidArgumentError, match=r"linalg.svd: .*rank >= 2.*\(3,\)"):
        em.linalg.svd(np.ones(3))


def test_solve_names_both_shapes_when_rows_differ():
    with pytest.raises(InvalidArgumentError, match=r"linalg.solve: rhs has 2 rows.*\(3, 3\).*"
                                                   r"\(2, 1\)"):
        em.linalg.solve(A, np.ones((2, 1)))
    with pytest.raises(InvalidArgumentError, match=r"matrix is float64 but rhs is float32"):
        em.linalg.solve(A, em.ones([3, 1]))


@pytest.mark.parametrize("a_shape,b_shape", [
    ((2, 3, 3), (3, 2)),        # one right-hand side for a batch of matrices
    ((3, 3), (2, 3, 2)),        # one matrix for a batch of right-hand sides
    ((2, 1, 3, 3), (4, 3, 1)),  # both broadcast
])
def test_solve_broadcasts_batch_dimensions_on_every_backend(device, a_shape, b_shape):
    """numpy broadcasts them and cupy does not (it refuses b): ember does it itself."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=a_shape) + 4 * np.eye(3)
    b = rng.normal(size=b_shape)
    x = em.linalg.solve(a, b)
    assert x.device == device
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=1e-10)


def test_solve_refuses_batch_dimensions_that_do_not_broadcast():
    with pytest.raises(InvalidArgumentError, match=r"linalg.solve: the batch dimensions of "
                                                   r"matrix \(2, 3, 3\) and rhs \(4, 3, 1\) "
                                                   "do not broadcast"):
        em.linalg.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)))


def test_singular_and_indefinite_matrices_raise_naming_the_op(device):
    """On every backend: cupy gives garbage for these unless asked to check, and the
    strict double gives NaN (see the next test)."""
    with pytest.raises(InvalidArgumentError, match="matrix_inverse: Singular matrix"):
        em.linalg.inv(np.ones((2, 2), np.float32))
    with pytest.raises(InvalidArgumentError, match="matrix_solve: Singular matrix"):
        em.linalg.solve(np.ones((3, 2, 2)), np.ones((3, 2, 1)))
    with pytest.raises(InvalidArgumentError, match="cholesky: Matrix is not positive definite"):
        em.linalg.cholesky(-np.eye(2))
    assert float(em.linalg.det(np.ones((2, 2)))) == 0.0  # singular is no error for det


def test_the_strict_double_reports_a_failed_factorization_only_when_asked():
    with simulated_gpus(1, strict=True) as (gpu,):
        be = gpu.backend
        a = be.xp.asarray(np.ones((3, 2, 2)))
        assert np.isnan(be.xp.linalg.inv(a).get()).all()  # cupy: garbage, no error
        assert be.xp.linalg.solve(a, be.xp.asarray(np.ones((3, 2, 1)))).shape == (3, 2, 1)
        with pytest.raises(ValueError, match=r"b must have \(\.\.\., M, K\) for "
                                             "multidimensional b"):  # cupy 14 does not broadcast b
            be.xp.linalg.solve(a, be.xp.asarray(np.ones((2, 1))))
        with be.linalg_errors(), pytest.raises(np.linalg.LinAlgError, match="cuSOLVER"):
            be.xp.linalg.cholesky(a)


@pytest.mark.parametrize("fn", [em.linalg.diag, em.linalg.diag_part])
def test_off_diagonals_are_rejected_not_ignored(fn):
    with pytest.raises(InvalidArgumentError, match=r"only the main diagonal \(k=0\).*k=1"):
        fn(np.ones((2, 2)), k=1)


def test_band_part_bounds_must_be_integers():
    with pytest.raises(InvalidArgumentError, match="band_part: num_lower must be an integer"):
        em.linalg.band_part(A, "x", 0)


def test_cholesky_and_eigh_read_the_lower_triangle_only():
    upper_noise = A + np.triu(np.full((3, 3), 5.0), 1)
    np.testing.assert_allclose(em.linalg.cholesky(upper_noise).numpy(), np.linalg.cholesky(A))
    np.testing.assert_allclose(em.linalg.eigh(upper_noise)[0].numpy(), np.linalg.eigvalsh(A))


def test_batched_like_tensorflow():
    b = np.stack([A, 2 * A])
    np.testing.assert_allclose(em.linalg.det(b).numpy(), np.linalg.det(b))
    np.testing.assert_allclose(em.linalg.trace(b).numpy(), [9.0, 18.0])
    np.testing.assert_allclose(em.linalg.triangular_solve(b, np.ones((2, 3, 1))).numpy(),
                               np.linalg.solve(np.tril(b), np.ones((2, 3, 1))))


def test_results_stay_on_the_input_device():
    from ember.core.testing import simulated_gpus

    with simulated_gpus(2):
        with em.device("/gpu:1"):
            x = em.constant(A)
        for out in (em.linalg.diag_part(x), em.linalg.band_part(x, 0, 0),
                    em.linalg.diag(em.linalg.diag_part(x)), em.linalg.trace(x)):
            assert out.device == "/gpu:1"

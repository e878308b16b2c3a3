"""Gradients of matmul and einsum."""

from __future__ import annotations

from typing import Any

import ember.core as em
from ember.core import Tensor

from . import REAL, Gradients, OpContext
from . import register_gradient as reg


def _swap(x: Tensor) -> Tensor:
    p = list(range(x.ndim))
    p[-1], p[-2] = p[-2], p[-1]
    return em.transpose(x, p)


@reg("matmul")
def _matmul(op: OpContext, dy: Tensor) -> Gradients:
    x, y = op.inputs
    nx, ny = op.needs
    return (em.matmul(dy, _swap(y)) if nx else None,
            em.matmul(_swap(x), dy) if ny else None)


@reg("einsum")
def _einsum(op: OpContext, dy: Tensor) -> Gradients:
    subs, out = _explicit(op.attrs["equation"], [x.shape for x in op.inputs], dy.shape)
    grads: list[Any] = []
    for i, x in enumerate(op.inputs):
        if not op.needs[i]:
            grads.append(None)
            continue
        others = [(t, v) for j, (t, v) in enumerate(zip(subs, op.inputs)) if j != i]
        grads.append(_einsum_operand_grad(subs[i], x, out, dy, others))
    return tuple(grads)


def _einsum_operand_grad(s: str, x: Any, out: str, dy: Any, others: list[Any]) -> Any:
    """d/dx of einsum for the operand with (explicit) subscripts ``s``.

    Repeated letters in ``s`` (a diagonal, as in 'ii->i') are differentiated as one letter,
    and the result is put back on the diagonal; letters summed inside this operand alone
    are broadcast back.
    """
    uniq = "".join(dict.fromkeys(s))
    present = set(out).union(*[set(t) for t, _ in others])
    kept = "".join(c for c in uniq if c in present)
    g = em.einsum(",".join([out] + [t for t, _ in others]) + "->" + kept, dy,
                  *[v for _, v in others])
    size = {c: x.shape[s.index(c)] for c in uniq}
    if kept != uniq:
        g = em.broadcast_to(em.reshape(g, [size[c] if c in kept else 1 for c in uniq]),
                            [size[c] for c in uniq])
    if uniq == s:
        return g
    # scatter onto the diagonal: one identity per repeated occurrence
    fresh = iter(sorted(set(_LETTERS) - set(s) - present))
    target, eyes = "", []
    for c in s:
        if c in target:
            d = next(fresh)
            eyes.append((c + d, _eye_like(x, size[c])))
            target += d
        else:
            target += c
    return em.einsum(",".join([uniq] + [e for e, _ in eyes]) + "->" + target, g,
                     *[t for _, t in eyes])


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _explicit(equation: str, shapes: list[tuple[int, ...]], out_shape: tuple[int, ...]
              ) -> tuple[list[str], str]:
    """Subscripts with '...' spelled out in fresh letters, and letters that an operand
    broadcasts (size 1 against a larger size elsewhere) renamed to fresh ones, so that each
    letter has one size everywhere (then d/dx never has to undo a broadcast)."""
    lhs, out = equation.replace(" ", "").split("->")
    subs = lhs.split(",")
    fresh = iter(c for c in _LETTERS if c not in equation)
    n_ell = max([len(sh) - (len(t) - 3) for t, sh in zip(subs, shapes) if "..." in t],
                default=0)
    ell = "".join(next(fresh) for _ in range(n_ell))
    subs = [t.replace("...", ell[n_ell - (len(sh) - (len(t) - 3)):]) if "..." in t else t
            for t, sh in zip(subs, shapes)]
    out = out.replace("...", ell[n_ell - (len(out_shape) - (len(out) - 3)):]) if "..." in out \
        else out
    size: dict[str, int] = {}
    for t, sh in zip(subs, shapes):
        for c, d in zip(t, sh):
            size[c] = max(size.get(c, 1), d)
    renamed = []
    for t, sh in zip(subs, shapes):
        renamed.append("".join(next(fresh) if d == 1 and size[c] > 1 else c
                               for c, d in zip(t, sh)))
    return renamed, out


# --- matrix functions and decompositions (written in ember ops: higher orders work) -------
# For real matrices only (REAL): their forwards refuse complex ones, and the complex
# versions need conjugate transposes (solve's adjoint, the Hermitian decompositions), which
# these rules, written with plain transposes, do not have.
def _eye_like(x: Tensor, n: int) -> Tensor:
    """The n x n identity in x's dtype, on x's device."""
    with em.device(x.device):
        return em.eye(n, dtype=x.dtype)


def _col(v: Tensor) -> Tensor:
    return em.expand_dims(v, -1)


def _row(v: Tensor) -> Tensor:
    return em.expand_dims(v, -2)


def _lower_only(g: Tensor) -> Tensor:
    """The gradient for an op that reads only the lower triangle of its (symmetric) input.

    ``g`` is right for symmetric perturbations; the input entry (i, j), i > j, stands for
    both (i, j) and (j, i), so it gets g_ij + g_ji; the upper triangle gets nothing.
    """
    both = em.linalg.band_part(em.add(g, _swap(g)), -1, 0)
    return em.subtract(both, em.linalg.diag(em.linalg.diag_part(g)))


@reg("matrix_inverse", complex=REAL)
def _inv(op: OpContext, dy: Tensor) -> Gradients:
    ainv_t = _swap(op.output)
    return em.negative(em.matmul(ainv_t, em.matmul(dy, ainv_t)))


@reg("matrix_determinant", complex=REAL)
def _det(op: OpContext, dy: Tensor) -> Gradients:
    (a,) = op.inputs
    scale = _col(_col(em.multiply(dy, op.output)))
    return em.multiply(scale, _swap(em.linalg.inv(a)))


@reg("log_matrix_determinant", complex=REAL)
def _slogdet(op: OpContext, dys: list[Tensor]) -> Gradients:
    (a,) = op.inputs
    _, dlog = dys  # the sign is piecewise constant: no gradient
    return em.multiply(_col(_col(dlog)), _swap(em.linalg.inv(a)))


@reg("cholesky", complex=REAL)
def _cholesky(op: OpContext, dl: Tensor) -> Gradients:
    # Murray (2016), as TF: A^-bar = L^-T Phi(L^T L^-bar) L^-1, Phi: lower, halved diagonal.
    low = op.output
    linv = em.linalg.inv(low)
    middle = em.matmul(_swap(low), dl)
    middle = em.subtract(em.linalg.band_part(middle, -1, 0),
                         em.multiply(0.5, em.linalg.diag(em.linalg.diag_part(middle))))
    g = em.matmul(_swap(linv), em.matmul(middle, linv))
    return _lower_only(em.multiply(0.5, em.add(g, _swap(g))))


@reg("matrix_solve", complex=REAL)
def _solve(op: OpContext, dy: Tensor) -> Gradients:
    a, _ = op.inputs
    gb = em.linalg.solve(a, dy, adjoint=True)
    ga = em.negative(em.matmul(gb, _swap(op.output))) if op.needs[0] else None
    return ga, gb


def _times_rinv_t(x: Tensor, r: Tensor) -> Tensor:
    """x @ R^-T for upper-triangular R."""
    return _swap(em.linalg.triangular_solve(r, _swap(x), lower=False))


def _qr_tall(q: Tensor, r: Tensor, dq: Tensor, dr: Tensor) -> tuple[Tensor, Tensor]:
    """The QR gradient for M >= N (reduced) or square input (TF's QrGrad)."""
    qdq = em.matmul(_swap(q), dq)
    rdr = em.matmul(r, _swap(dr))
    low = em.linalg.band_part(em.add(em.subtract(qdq, _swap(qdq)), em.subtract(rdr, _swap(rdr))),
                              -1, 0)
    grad_a = em.matmul(q, em.add(dr, _times_rinv_t(low, r)))
    grad_b = _times_rinv_t(em.subtract(dq, em.matmul(q, qdq)), r)
    return em.add(grad_a, grad_b)


@reg("qr", complex=REAL)
def _qr(op: OpContext, dys: list[Tensor]) -> Gradients:
    (a,) = op.inputs
    q, r = op.outputs
    dq, dr = dys
    m, n = a.shape[-2], a.shape[-1]
    if op.attrs["full_matrices"] and m > n:
        raise NotImplementedError(
            f"qr gradient: not defined for full_matrices=True with more rows than columns "
            f"(input shape {a.shape}); the extra columns of q are not unique. Use "
            "full_matrices=False")
    if m >= n:
        return _qr_tall(q, r, dq, dr)
    # wide: a = [x, y], r = [u, v] with u square; x = q u is the square case
    u, dv = r[..., :, :m], dr[..., :, m:]
    y = a[..., :, m:]
    dx = _qr_tall(q, u, em.add(dq, em.matmul(y, _swap(dv))), dr[..., :, :m])
    return em.concat([dx, em.matmul(q, dv)], -1)


@reg("svd", complex=REAL)
def _svd(op: OpContext, dys: Tensor | list[Tensor]) -> Gradients:
    (a,) = op.inputs
    m, n = a.shape[-2], a.shape[-1]
    if not op.attrs["compute_uv"]:  # one output, s: dys is its gradient
        assert isinstance(dys, Tensor)
        _, u, v = em.linalg.svd(a, full_matrices=False)
        return em.matmul(em.multiply(u, _row(dys)), _swap(v))
    if op.attrs["full_matrices"] and m != n:
        raise NotImplementedError(
            f"svd gradient: not defined for full_matrices=True on non-square input (shape "
            f"{a.shape}); the extra singular vectors are not unique. Use full_matrices=False")
    s, u, v = op.outputs
    assert isinstance(dys, list)
    ds, du, dv = dys
    k = min(m, n)
    s2 = em.square(s)
    # E_jk = s_k^2 - s_j^2 off the diagonal (1 on it, where the skew parts vanish)
    e = em.add(em.subtract(_row(s2), _col(s2)), _eye_like(s, k))
    utdu = em.matmul(_swap(u), du)
    vtdv = em.matmul(_swap(v), dv)
    ju = em.divide(em.subtract(utdu, _swap(utdu)), e)
    jv = em.divide(em.subtract(vtdv, _swap(vtdv)), e)
    inner = em.add(em.add(em.multiply(ju, _row(s)), em.multiply(_col(s), jv)),
                   em.linalg.diag(ds))
    ga = em.matmul(u, em.matmul(inner, _swap(v)))
    sinv = em.reciprocal(s)
    if m > k:  # (I - U U^T) dU S^-1 V^T
        ga = em.add(ga, em.matmul(em.multiply(em.subtract(du, em.matmul(u, utdu)), _row(sinv)),
                                  _swap(v)))
    if n > k:  # U S^-1 dV^T (I - V V^T)
        ga = em.add(ga, em.matmul(em.multiply(u, _row(sinv)),
                                  _swap(em.subtract(dv, em.matmul(v, vtdv)))))
    return ga


@reg("self_adjoint_eig", complex=REAL)
def _eigh(op: OpContext, dys: list[Tensor]) -> Gradients:
    e, v = op.outputs
    de, dv = dys
    n = e.shape[-1]
    # F_ij = 1 / (e_j - e_i) off the diagonal, 0 on it
    gap = em.add(em.subtract(_row(e), _col(e)), _eye_like(e, n))
    f = em.subtract(em.reciprocal(gap), _eye_like(e, n))
    inner = em.add(em.linalg.diag(de), em.multiply(f, em.matmul(_swap(v), dv)))
    return _lower_only(em.matmul(v, em.matmul(inner, _swap(v))))

"""Forward + backward of reduce_sum(x*x + x) on a (2, 2) tensor, and the tape's cost per op."""

from __future__ import annotations

import numpy as np
from _harness import compare, table, try_import, write

import ember.core as em
from ember import tape

NAN = float("nan")


def _fwd_bwd() -> str:
    a = np.ones((2, 2), np.float32)
    x = em.constant(a)

    def numpy_by_hand() -> object:
        y = a * a + a
        s = y.sum()
        g = np.ones_like(a) * (2 * a + 1)  # d/dx sum(x*x + x)
        return s, g

    def ember_tape() -> object:
        with tape.GradientTape() as t:
            t.watch(x)
            s = em.reduce_sum(x * x + x)
        return t.gradient(s, x)

    c = {"numpy by hand": numpy_by_hand, "ember GradientTape": ember_tape}
    torch = try_import("torch")
    if torch is not None:
        torch.set_num_threads(1)

        def torch_autograd() -> object:
            tx = torch.ones((2, 2), requires_grad=True)
            s = (tx * tx + tx).sum()
            s.backward()
            return tx.grad

        c["PyTorch autograd"] = torch_autograd
    tf = try_import("tensorflow")
    if tf is not None:
        tc = tf.ones((2, 2))

        def tf_tape() -> object:
            with tf.GradientTape() as g:
                g.watch(tc)
                s = tf.reduce_sum(tc * tc + tc)
            return g.gradient(s, tc)

        c["TensorFlow GradientTape"] = tf_tape
    times = compare(c, number=3000)
    if torch is None:
        times["PyTorch autograd"] = NAN
    if tf is None:
        times["TensorFlow GradientTape"] = NAN
    return table("forward + backward of reduce_sum(x*x + x), (2, 2) float32", times,
                 "numpy by hand")


def _per_op() -> str:
    x = em.constant(np.ones((2, 2), np.float32))
    n_ops = 20

    def chain() -> object:
        y = x
        for _ in range(n_ops):
            y = em.multiply(y, x)
        return y

    def chain_on_tape() -> object:
        with tape.GradientTape() as t:
            t.watch(x)
            return chain()

    times = compare({"no tape": chain, "recorded on a tape": chain_on_tape}, number=2000)
    extra = (times["recorded on a tape"] - times["no tape"]) / n_ops
    return table(f"a chain of {n_ops} multiplies, (2, 2) float32", times, "no tape",
                 note=f"The tape's extra cost per recorded op: {extra * 1e6:.2f} us.")


def main() -> None:
    write("tape", "## ember-tape: gradient overhead\n\n" + _fwd_bwd() + "\n" + _per_op())


if __name__ == "__main__":
    main()

"""Training steps per second: MLP, LeNet-style CNN and LSTM; ember vs numpy by hand
(the limit for a numpy-backed framework) vs PyTorch eager vs TensorFlow eager."""

from __future__ import annotations

import bench_recurrent
import numpy as np
from _harness import compare, try_import, write

import ember.core as em
from ember import nn, tape

NAN = float("nan")
rng = np.random.default_rng(0)
L = nn.layers


def _glorot(*shape):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / sum(shape[-2:]))).astype(np.float32)


def _ce_grad(logits, y):
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(y)), y] -= 1
    return p / len(y)


def _ember_step(model, opt, x, y):
    def step():
        with tape.GradientTape() as t:
            loss = nn.losses.sparse_softmax_cross_entropy(y, model(x, training=True))
        vs = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, vs), vs))
    return step


def _tf_step(tf, model, x, y):
    """TensorFlow eager (no tf.function): GradientTape + keras SGD, as the seeds train."""
    opt = tf.keras.optimizers.SGD(0.01)
    xt, yt = tf.constant(x), tf.constant(y)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step():
        with tf.GradientTape() as t:
            loss = loss_fn(yt, model(xt, training=True))
        vs = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, vs), vs))
    step()  # build the model and the optimizer's state outside the timing
    return step


def _torch_step(torch, model, x, y, make_opt=None):
    """A PyTorch eager training step (SGD 0.01, or ``make_opt(parameters)``)."""
    opt = (make_opt or (lambda p: torch.optim.SGD(p, lr=0.01)))(model.parameters())
    xt, yt = torch.tensor(x), torch.tensor(y, dtype=torch.long)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(xt), yt).backward()
        opt.step()
    # For the memory benchmarks: the gradients a step leaves in ``.grad`` are the step's
    # memory, not the model's (ember's die with the step); drop them before a baseline.
    step.release = lambda: opt.zero_grad(set_to_none=True)
    return step


# --- MLP 784-256-256-10, batch 128 ------------------------------------------------------
def mlp(torch, tf=None):
    x = rng.random((128, 784), dtype=np.float32)
    y = rng.integers(0, 10, 128)
    W = [_glorot(784, 256), _glorot(256, 256), _glorot(256, 10)]
    B = [np.zeros(256, np.float32), np.zeros(256, np.float32), np.zeros(10, np.float32)]

    def numpy_by_hand():
        h1 = np.maximum(x @ W[0] + B[0], 0)
        h2 = np.maximum(h1 @ W[1] + B[1], 0)
        d3 = _ce_grad(h2 @ W[2] + B[2], y)
        d2 = (d3 @ W[2].T) * (h2 > 0)
        d1 = (d2 @ W[1].T) * (h1 > 0)
        for w, b, a, d in ((W[2], B[2], h2, d3), (W[1], B[1], h1, d2), (W[0], B[0], x, d1)):
            w -= 0.01 * (a.T @ d)
            b -= 0.01 * d.sum(0)

    model = nn.Sequential([L.Dense(256, activation="relu", input_shape=(784,)),
                           L.Dense(256, activation="relu"), L.Dense(10)])
    c = {"numpy by hand": numpy_by_hand,
         "ember": _ember_step(model, nn.optimizers.SGD(0.01), em.constant(x), em.constant(y))}
    if torch is not None:
        tm = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                 torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                 torch.nn.Linear(256, 10))
        c["PyTorch eager"] = _torch_step(torch, tm, x, y)
    if tf is not None:
        K = tf.keras.layers
        c["TensorFlow eager"] = _tf_step(tf, tf.keras.Sequential(
            [K.Dense(256, activation="relu"), K.Dense(256, activation="relu"), K.Dense(10)]), x, y)
    return c, 50


# --- LeNet-style CNN on 28x28x1, batch 64 -----------------------------------------------
def _im2col(x, k):
    n, h, w, c = x.shape
    p = k // 2
    xp = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
    s = xp.strides
    cols = np.lib.stride_tricks.as_strided(xp, (n, h, w, k, k, c), s[:3] + s[1:])
    return cols.reshape(n * h * w, k * k * c)


def _col2im(d, shape, k):
    n, h, w, c = shape
    p = k // 2
    d = d.reshape(n, h, w, k, k, c)
    out = np.zeros((n, h + 2 * p, w + 2 * p, c), np.float32)
    for i in range(k):
        for j in range(k):
            out[:, i:i + h, j:j + w] += d[:, :, :, i, j]
    return out[:, p:p + h, p:p + w]


def _pool(x):
    n, h, w, c = x.shape
    b = x.reshape(n, h // 2, 2, w // 2, 2, c)
    m = b.max((2, 4))
    return m, (b == m[:, :, None, :, None]), b.shape


def _unpool(d, mask, bshape):
    return (mask * d[:, :, None, :, None]).reshape(bshape[0], bshape[1] * 2, bshape[3] * 2,
                                                   bshape[5])


def cnn(torch, tf=None):
    x = rng.random((64, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, 64)
    K1, K2 = _glorot(25, 32), _glorot(25 * 32, 64)
    W3, W4 = _glorot(3136, 1024), _glorot(1024, 10)
    b1, b2, b3, b4 = (np.zeros(n, np.float32) for n in (32, 64, 1024, 10))

    def numpy_by_hand():
        c1 = _im2col(x, 5)
        a1 = np.maximum((c1 @ K1 + b1).reshape(64, 28, 28, 32), 0)
        p1, m1, s1 = _pool(a1)
        c2 = _im2col(p1, 5)
        a2 = np.maximum((c2 @ K2 + b2).reshape(64, 14, 14, 64), 0)
        p2, m2, s2 = _pool(a2)
        f = p2.reshape(64, 3136)
        h = np.maximum(f @ W3 + b3, 0)
        d4 = _ce_grad(h @ W4 + b4, y)
        dh = (d4 @ W4.T) * (h > 0)
        df = (dh @ W3.T).reshape(p2.shape)
        da2 = _unpool(df, m2, s2) * (a2 > 0)
        da2 = da2.reshape(-1, 64)
        dp1 = _col2im(da2 @ K2.T, p1.shape, 5)
        da1 = (_unpool(dp1, m1, s1) * (a1 > 0)).reshape(-1, 32)
        for w, b, a, d in ((W4, b4, h, d4), (W3, b3, f, dh), (K2, b2, c2, da2),
                           (K1, b1, c1, da1)):
            w -= 0.01 * (a.T @ d)
            b -= 0.01 * d.sum(0)

    model = nn.Sequential([
        L.Conv2D(32, 5, padding="same", activation="relu", input_shape=(28, 28, 1)),
        L.MaxPool2D(), L.Conv2D(64, 5, padding="same", activation="relu"), L.MaxPool2D(),
        L.Flatten(), L.Dense(1024, activation="relu"), L.Dense(10)])
    c = {"numpy by hand": numpy_by_hand,
         "ember": _ember_step(model, nn.optimizers.SGD(0.01), em.constant(x), em.constant(y))}
    if torch is not None:
        F = torch.nn

        class Net(F.Module):
            def __init__(self):
                super().__init__()
                self.c1, self.c2 = F.Conv2d(1, 32, 5, padding=2), F.Conv2d(32, 64, 5, padding=2)
                self.f1, self.f2 = F.Linear(3136, 1024), F.Linear(1024, 10)

            def forward(self, t):
                t = t.permute(0, 3, 1, 2)
                t = F.functional.max_pool2d(F.functional.relu(self.c1(t)), 2)
                t = F.functional.max_pool2d(F.functional.relu(self.c2(t)), 2)
                return self.f2(F.functional.relu(self.f1(t.flatten(1))))

        c["PyTorch eager"] = _torch_step(torch, Net(), x, y)
    if tf is not None:
        K = tf.keras.layers
        c["TensorFlow eager"] = _tf_step(tf, tf.keras.Sequential([
            K.Conv2D(32, 5, padding="same", activation="relu"), K.MaxPool2D(),
            K.Conv2D(64, 5, padding="same", activation="relu"), K.MaxPool2D(),
            K.Flatten(), K.Dense(1024, activation="relu"), K.Dense(10)]), x, y)
    return c, 3


# --- LSTM 128 units, 28 steps of 28 features, batch 64 ---------------------------------
def lstm(torch, tf=None):
    n, t_, f, u = 64, 28, 28, 128
    x = rng.random((n, t_, f), dtype=np.float32)
    y = rng.integers(0, 10, n)
    # the same hand-written LSTM step as bench_recurrent's (its forward caches what the
    # backward needs, nothing else)
    numpy_by_hand = bench_recurrent.numpy_lstm(x, y)

    model = nn.Sequential([L.LSTM(u, input_shape=(t_, f)), L.Dense(10)])
    c = {"numpy by hand": numpy_by_hand,
         "ember": _ember_step(model, nn.optimizers.SGD(0.01), em.constant(x), em.constant(y))}
    if torch is not None:
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = torch.nn.LSTM(f, u, batch_first=True)
                self.out = torch.nn.Linear(u, 10)

            def forward(self, t):
                return self.out(self.lstm(t)[0][:, -1])

        c["PyTorch eager"] = _torch_step(torch, Net(), x, y)
    if tf is not None:
        K = tf.keras.layers
        c["TensorFlow eager"] = _tf_step(tf, tf.keras.Sequential([K.LSTM(u), K.Dense(10)]), x, y)
    return c, 5


def _threads() -> int:
    try:
        from threadpoolctl import threadpool_info
        return max((i.get("num_threads", 1) for i in threadpool_info()
                    if i.get("user_api") == "blas"), default=1)
    except ImportError:
        return 1


def main() -> None:
    torch = try_import("torch")
    threads = _threads()
    if torch is not None:
        torch.set_num_threads(threads)
    tf = try_import("tensorflow")
    if tf is not None:
        try:
            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        except RuntimeError:  # TF already initialised by an earlier benchmark in this process
            pass
    rows = []
    for name, make in (("MLP 784-256-256-10, batch 128, SGD", mlp),
                       ("LeNet CNN 28x28x1 (conv32-pool-conv64-pool-1024-10), batch 64, SGD", cnn),
                       ("LSTM 128 units, 28 steps x 28 features, batch 64, SGD", lstm)):
        contenders, number = make(torch, tf)
        times = compare(contenders, number=number, rounds=5)
        if torch is None:
            times["PyTorch eager"] = NAN
        if tf is None:
            times["TensorFlow eager"] = NAN
        rows.append((name, times))
    lines = ["# ember-nn: training steps per second", "",
             f"Same process, contenders alternating, best of 5 rounds; BLAS/torch threads: "
             f"{threads}. Ratio = steps/s relative to numpy by hand (higher is better).", ""]
    for name, times in rows:
        ref = times["numpy by hand"]
        lines += [f"### {name}", "", "| contender | steps/s | ratio to numpy by hand |",
                  "|---|---:|---:|"]
        for k, v in times.items():
            if v != v:
                lines.append(f"| {k} | not installed | - |")
            else:
                lines.append(f"| {k} | {1 / v:.1f} | {ref / v:.2f}x |")
        lines.append("")
    write("nn", "\n".join(lines))


if __name__ == "__main__":
    main()

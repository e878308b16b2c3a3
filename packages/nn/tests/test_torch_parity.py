"""Outputs and gradients against PyTorch CPU with copied weights; optimizer trajectories."""

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape

torch = pytest.importorskip("torch")
L = nn.layers
TOL = {"rtol": 2e-4, "atol": 2e-5}


def T(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64 if np.asarray(a).dtype == np.float64
                        else torch.float32, requires_grad=True)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def ember_grads(layer, x, w_out, *extra):
    """Output, d(sum(out * w_out))/d(input) and /d(each variable)."""
    xt = em.constant(x)
    with tape.GradientTape() as t:
        t.watch(xt)
        y = layer(xt, *extra)
        loss = em.reduce_sum(y * w_out)
    gs = t.gradient(loss, [xt] + layer.trainable_variables)
    return y.numpy(), [g.numpy() for g in gs]


def test_dense():
    x, layer = rand(4, 5), L.Dense(3, activation="tanh")
    layer(em.constant(x))
    w_out = rand(4, 3, seed=1)
    y, (gx, gk, gb) = ember_grads(layer, x, w_out)
    lin = torch.nn.Linear(5, 3)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(layer.kernel.numpy().T))
        lin.bias.copy_(torch.tensor(layer.bias.numpy()))
    xt = T(x)
    yt = torch.tanh(lin(xt))
    (yt * torch.tensor(w_out)).sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), **TOL)
    np.testing.assert_allclose(gx, xt.grad.numpy(), **TOL)
    np.testing.assert_allclose(gk, lin.weight.grad.numpy().T, **TOL)
    np.testing.assert_allclose(gb, lin.bias.grad.numpy(), **TOL)


@pytest.mark.parametrize("kw,size", [
    ({"padding": "valid"}, 8), ({"padding": "same"}, 8), ({"strides": 2}, 9),
    ({"dilation_rate": 2, "padding": "same"}, 9), ({"strides": 2, "padding": "same"}, 8)])
def test_conv2d(kw, size):
    x = rand(2, size, size, 3)
    layer = L.Conv2D(4, 3, **kw)
    y0 = layer(em.constant(x))
    w_out = rand(*y0.shape, seed=1)
    y, (gx, gk, gb) = ember_grads(layer, x, w_out)
    s, d = kw.get("strides", 1), kw.get("dilation_rate", 1)
    xt = T(x)
    xin = xt.permute(0, 3, 1, 2)
    if kw.get("padding") == "same":  # TensorFlow SAME: extra padding at the bottom/right
        out = -(-size // s)
        total = max((out - 1) * s + 2 * d + 1 - size, 0)
        xin = torch.nn.functional.pad(xin, (total // 2, total - total // 2) * 2)
    wt = torch.tensor(layer.kernel.numpy().transpose(3, 2, 0, 1), requires_grad=True)
    bt = torch.tensor(layer.bias.numpy(), requires_grad=True)
    yt = torch.nn.functional.conv2d(xin, wt, bt, stride=s, dilation=d).permute(0, 2, 3, 1)
    (yt * torch.tensor(w_out)).sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), **TOL)
    np.testing.assert_allclose(gx, xt.grad.numpy(), **TOL)
    np.testing.assert_allclose(gk, wt.grad.numpy().transpose(2, 3, 1, 0), **TOL)
    np.testing.assert_allclose(gb, bt.grad.numpy(), **TOL)


@pytest.mark.parametrize("cls,tfn,k,s", [
    (L.MaxPool2D, "max_pool2d", 2, 2), (L.MaxPool2D, "max_pool2d", 3, 2),
    (L.AvgPool2D, "avg_pool2d", 2, 2), (L.AvgPool2D, "avg_pool2d", 3, 1)])
def test_pooling(cls, tfn, k, s):
    x = rand(2, 7, 7, 3) if k == 3 else rand(2, 8, 8, 3)
    layer = cls(k, s)
    y0 = layer(em.constant(x))
    w_out = rand(*y0.shape, seed=1)
    y, (gx,) = ember_grads(layer, x, w_out)
    xt = T(x)
    yt = getattr(torch.nn.functional, tfn)(xt.permute(0, 3, 1, 2), k, s).permute(0, 2, 3, 1)
    (yt * torch.tensor(w_out)).sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), **TOL)
    np.testing.assert_allclose(gx, xt.grad.numpy(), **TOL)


@pytest.mark.parametrize("training", [True, False])
def test_batch_normalization(training):
    x = rand(16, 4) * 3 + 1
    bn = L.BatchNormalization(epsilon=1e-3, momentum=0.9)
    bn(em.constant(x))
    bn.gamma.assign(rand(4, seed=2))
    bn.beta.assign(rand(4, seed=3))
    bn.moving_mean.assign(rand(4, seed=4))
    bn.moving_variance.assign(np.abs(rand(4, seed=5)) + 0.5)
    tb = torch.nn.BatchNorm1d(4, eps=1e-3, momentum=0.1)
    with torch.no_grad():
        tb.weight.copy_(torch.tensor(bn.gamma.numpy()))
        tb.bias.copy_(torch.tensor(bn.beta.numpy()))
        tb.running_mean.copy_(torch.tensor(bn.moving_mean.numpy()))
        tb.running_var.copy_(torch.tensor(bn.moving_variance.numpy()))
    tb.train(training)
    w_out = rand(16, 4, seed=1)
    y, (gx, gg, gbeta) = ember_grads(bn, x, w_out, training)
    xt = T(x)
    yt = tb(xt)
    (yt * torch.tensor(w_out)).sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), **TOL)
    np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gg, tb.weight.grad.numpy(), **TOL)
    np.testing.assert_allclose(gbeta, tb.bias.grad.numpy(), **TOL)
    if training:  # torch's running variance is unbiased; Keras's (ours) is biased
        np.testing.assert_allclose(bn.moving_mean.numpy(), tb.running_mean.numpy(), **TOL)


def test_layer_normalization():
    x = rand(3, 5, 6)
    ln = L.LayerNormalization(epsilon=1e-5)
    ln(em.constant(x))
    ln.gamma.assign(rand(6, seed=2))
    ln.beta.assign(rand(6, seed=3))
    w_out = rand(3, 5, 6, seed=1)
    y, (gx, gg, gb) = ember_grads(ln, x, w_out)
    tl = torch.nn.LayerNorm(6, eps=1e-5)
    with torch.no_grad():
        tl.weight.copy_(torch.tensor(ln.gamma.numpy()))
        tl.bias.copy_(torch.tensor(ln.beta.numpy()))
    xt = T(x)
    yt = tl(xt)
    (yt * torch.tensor(w_out)).sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), **TOL)
    np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gg, tl.weight.grad.numpy(), **TOL)
    np.testing.assert_allclose(gb, tl.bias.grad.numpy(), **TOL)


def test_embedding():
    ids = np.array([[1, 3, 3], [0, 9, 1]], np.int32)
    emb = L.Embedding(10, 4)
    emb(em.constant(ids))
    w_out = rand(2, 3, 4, seed=1)
    with tape.GradientTape() as t:
        loss = em.reduce_sum(emb(em.constant(ids)) * w_out)
    g = np.asarray(t.gradient(loss, emb.embeddings))
    te = torch.nn.Embedding(10, 4)
    with torch.no_grad():
        te.weight.copy_(torch.tensor(emb.embeddings.numpy()))
    (te(torch.tensor(ids, dtype=torch.long)) * torch.tensor(w_out)).sum().backward()
    np.testing.assert_allclose(g, te.weight.grad.numpy(), **TOL)


def _rnn_check(layer, torch_rnn, copy, x, seq):
    y0 = layer(em.constant(x))
    copy()
    w_out = rand(*y0.shape, seed=1)
    y, grads = ember_grads(layer, x, w_out)
    xt = T(x)
    out, _ = torch_rnn(xt)
    yt = out if seq else out[:, -1]
    (yt * torch.tensor(w_out)).sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), **TOL)
    np.testing.assert_allclose(grads[0], xt.grad.numpy(), rtol=1e-3, atol=1e-4)
    return grads


@pytest.mark.parametrize("seq", [False, True])
def test_lstm(seq):
    x, u = rand(3, 5, 4), 6
    layer = L.LSTM(u, return_sequences=seq)
    tl = torch.nn.LSTM(4, u, batch_first=True)

    def copy():  # Keras gates i, f, c, o = PyTorch's i, f, g, o
        with torch.no_grad():
            tl.weight_ih_l0.copy_(torch.tensor(layer.kernel.numpy().T))
            tl.weight_hh_l0.copy_(torch.tensor(layer.recurrent_kernel.numpy().T))
            tl.bias_ih_l0.copy_(torch.tensor(layer.bias.numpy()))
            tl.bias_hh_l0.zero_()

    gx, gk, gr, gb = _rnn_check(layer, tl, copy, x, seq)
    np.testing.assert_allclose(gk, tl.weight_ih_l0.grad.numpy().T, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gr, tl.weight_hh_l0.grad.numpy().T, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gb, tl.bias_ih_l0.grad.numpy(), rtol=1e-3, atol=1e-4)


def test_lstm_return_state_and_initial_state():
    x = rand(2, 4, 3)
    layer = L.LSTM(5, return_state=True)
    out, h, c = layer(em.constant(x))
    np.testing.assert_array_equal(out.numpy(), h.numpy())
    out2 = layer(em.constant(x), initial_state=[h, c])[0]
    tl = torch.nn.LSTM(3, 5, batch_first=True)
    with torch.no_grad():
        tl.weight_ih_l0.copy_(torch.tensor(layer.kernel.numpy().T))
        tl.weight_hh_l0.copy_(torch.tensor(layer.recurrent_kernel.numpy().T))
        tl.bias_ih_l0.copy_(torch.tensor(layer.bias.numpy()))
        tl.bias_hh_l0.zero_()
    init = (torch.tensor(h.numpy())[None], torch.tensor(c.numpy())[None])
    ref = tl(torch.tensor(x), init)[0][:, -1].detach().numpy()
    np.testing.assert_allclose(out2.numpy(), ref, **TOL)


@pytest.mark.parametrize("seq", [False, True])
def test_gru(seq):
    x, u = rand(3, 5, 4), 6
    layer = L.GRU(u, return_sequences=seq)
    tg = torch.nn.GRU(4, u, batch_first=True)

    def reorder(a):  # Keras z, r, h -> PyTorch r, z, n along the gate axis
        z, r, h = np.split(a, 3, axis=-1)
        return np.concatenate([r, z, h], axis=-1)

    def copy():
        layer.bias.assign(rand(2, 3 * u, seed=9) * 0.1)
        with torch.no_grad():
            tg.weight_ih_l0.copy_(torch.tensor(reorder(layer.kernel.numpy()).T))
            tg.weight_hh_l0.copy_(torch.tensor(reorder(layer.recurrent_kernel.numpy()).T))
            tg.bias_ih_l0.copy_(torch.tensor(reorder(layer.bias.numpy()[0])))
            tg.bias_hh_l0.copy_(torch.tensor(reorder(layer.bias.numpy()[1])))

    gx, gk, gr, gb = _rnn_check(layer, tg, copy, x, seq)
    np.testing.assert_allclose(reorder(gk), tg.weight_ih_l0.grad.numpy().T, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(reorder(gr), tg.weight_hh_l0.grad.numpy().T, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(reorder(gb[1]), tg.bias_hh_l0.grad.numpy(), rtol=1e-3, atol=1e-4)


def _attention_twins(q, kv, e, h):
    """ember's MultiHeadAttention and PyTorch's, built on ``q``/``kv`` and holding the
    same projections (PyTorch's packed in_proj, biases copied into ember's)."""
    mha = L.MultiHeadAttention(num_heads=h, key_dim=e // h)
    mha(em.constant(q), em.constant(kv))
    tm = torch.nn.MultiheadAttention(e, h, batch_first=True)
    ws = [mha.query_dense, mha.key_dense, mha.value_dense]
    with torch.no_grad():
        tm.in_proj_weight.copy_(torch.tensor(np.concatenate([d.kernel.numpy().T for d in ws])))
        tm.in_proj_bias.copy_(torch.tensor(np.concatenate([rand(e, seed=i) for i in range(3)])))
        for i, d in enumerate(ws):
            d.bias.assign(tm.in_proj_bias.numpy()[i * e:(i + 1) * e])
        tm.out_proj.weight.copy_(torch.tensor(mha.output_dense.kernel.numpy().T))
        tm.out_proj.bias.copy_(torch.tensor(rand(e, seed=7)))
        mha.output_dense.bias.assign(tm.out_proj.bias.numpy())
    return mha, tm


def _attention_grads(mha, q, kv, w_out, **call):
    qe, kve = em.constant(q), em.constant(kv)
    with tape.GradientTape() as t:
        t.watch([qe, kve])
        y = mha(qe, kve, **call)
        loss = em.reduce_sum(y * w_out)
    return y, t.gradient(loss, [qe, kve, mha.query_dense.kernel])


def _torch_grads(tm, q, kv, w_out, **call):
    qt, kvt = T(q), T(kv)
    yt, _ = tm(qt, kvt, kvt, **call)
    (yt * torch.tensor(w_out)).sum().backward()
    return yt.detach().numpy(), qt.grad.numpy(), kvt.grad.numpy()


def test_multi_head_attention():
    e, h = 8, 2
    q, kv = rand(2, 3, e), rand(2, 5, e, seed=4)
    mha, tm = _attention_twins(q, kv, e, h)
    w_out = rand(2, 3, e, seed=1)
    y, (gq, gkv, gw) = _attention_grads(mha, q, kv, w_out)
    yt, gqt, gkvt = _torch_grads(tm, q, kv, w_out)
    np.testing.assert_allclose(y.numpy(), yt, **TOL)
    np.testing.assert_allclose(gq.numpy(), gqt, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gkv.numpy(), gkvt, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gw.numpy(), tm.in_proj_weight.grad.numpy()[:e].T,
                               rtol=1e-3, atol=1e-4)


def test_multi_head_attention_with_padded_keys_and_a_causal_mask():
    """An Embedding's mask on the value (PyTorch's key_padding_mask) and a causal mask
    (its attn_mask, True where hidden), with copied weights: outputs and gradients."""
    e, h = 8, 2
    q, kv = rand(3, 4, e), rand(3, 6, e, seed=4)
    keep = np.ones((3, 6), bool)
    keep[0, 4:], keep[1, 1:] = False, False  # no query row loses every key
    mha, tm = _attention_twins(q, kv, e, h)
    w_out = rand(3, 4, e, seed=1)
    y, (gq, gkv, gw) = _attention_grads(mha, q, kv, w_out, value_mask=keep,
                                        use_causal_mask=True)
    hidden = torch.tensor(~np.tril(np.ones((4, 6), bool)))  # PyTorch's: top-left, as Keras
    yt, gqt, gkvt = _torch_grads(tm, q, kv, w_out, key_padding_mask=torch.tensor(~keep),
                                 attn_mask=hidden)
    np.testing.assert_allclose(y.numpy(), yt, **TOL)
    np.testing.assert_allclose(gq.numpy(), gqt, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gkv.numpy(), gkvt, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gw.numpy(), tm.in_proj_weight.grad.numpy()[:e].T,
                               rtol=1e-3, atol=1e-4)


OPTS = [
    ("sgd", lambda: nn.optimizers.SGD(0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    ("momentum", lambda: nn.optimizers.SGD(0.1, momentum=0.9),
     lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    ("nesterov", lambda: nn.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
     lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True)),
    ("adam", lambda: nn.optimizers.Adam(0.05, epsilon=1e-8),
     lambda p: torch.optim.Adam(p, lr=0.05, eps=1e-8)),
    ("amsgrad", lambda: nn.optimizers.Adam(0.05, epsilon=1e-8, amsgrad=True),
     lambda p: torch.optim.Adam(p, lr=0.05, eps=1e-8, amsgrad=True)),
    ("adamw", lambda: nn.optimizers.AdamW(0.05, weight_decay=0.1, epsilon=1e-8),
     lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.1, eps=1e-8)),
    ("rmsprop", lambda: nn.optimizers.RMSProp(0.01, rho=0.9, epsilon=1e-8),
     lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-8)),
    ("rmsprop_centered_momentum",
     lambda: nn.optimizers.RMSProp(0.01, rho=0.9, momentum=0.5, centered=True, epsilon=1e-8),
     lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-8, momentum=0.5,
                                   centered=True)),
    ("adagrad", lambda: nn.optimizers.Adagrad(0.1, initial_accumulator_value=0.1, epsilon=1e-10),
     lambda p: torch.optim.Adagrad(p, lr=0.1, initial_accumulator_value=0.1, eps=1e-10)),
    # (PyTorch's Adamax adds eps inside the maximum, Keras's after it: a small eps)
    ("adamax", lambda: nn.optimizers.Adamax(0.05, epsilon=1e-10),
     lambda p: torch.optim.Adamax(p, lr=0.05, eps=1e-10)),
    ("adadelta", lambda: nn.optimizers.Adadelta(1.0, rho=0.9, epsilon=1e-6),
     lambda p: torch.optim.Adadelta(p, lr=1.0, rho=0.9, eps=1e-6)),
    # (Keras's Nadam is PyTorch's NAdam with momentum_decay=1)
    ("nadam", lambda: nn.optimizers.Nadam(0.05, epsilon=1e-8),
     lambda p: torch.optim.NAdam(p, lr=0.05, eps=1e-8, momentum_decay=1.0)),
    # (PyTorch clamps the estimate at eps1 ** 2 where Keras adds eps1 to g^2)
    ("adafactor", lambda: nn.optimizers.Adafactor(0.1, epsilon_1=1e-30),
     lambda p: torch.optim.Adafactor(p, lr=0.1, eps=(1e-30, 1e-3))),
]


@pytest.mark.parametrize("name,make,make_torch", OPTS, ids=[o[0] for o in OPTS])
def test_optimizer_trajectory_20_steps(name, make, make_torch):
    a0, target = rand(4, 3), rand(4, 3, seed=1)
    w = em.Variable(a0)
    wt = torch.tensor(a0, requires_grad=True)
    opt, topt = make(), make_torch([wt])

    def loss_e():
        return em.reduce_sum(em.square(w - target) * em.abs(w))

    for _ in range(20):
        opt.minimize(loss_e, var_list=[w])
        topt.zero_grad()
        ((wt - torch.tensor(target)) ** 2 * wt.abs()).sum().backward()
        topt.step()
    np.testing.assert_allclose(w.numpy(), wt.detach().numpy(), rtol=1e-4, atol=1e-5)

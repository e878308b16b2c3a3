"""The GPU report's bench models at its shapes (``bench/bench_nn.py``'s, issue #28's
budgets) and the training step the GPU tests run on them: one place, so the launch
budgets, the capture tests and the depthwise capture test step the same way."""

from ember import nn, tape

L = nn.layers


def mlp():
    """MLP 784-256-256-10 and its batch shape."""
    return nn.Sequential([L.Dense(256, activation="relu", input_shape=(784,)),
                          L.Dense(256, activation="relu"), L.Dense(10)]), (128, 784)


def lenet():
    """LeNet (conv32-conv64-1024) and its batch shape."""
    return nn.Sequential([
        L.Conv2D(32, 5, padding="same", activation="relu", input_shape=(28, 28, 1)),
        L.MaxPool2D(), L.Conv2D(64, 5, padding="same", activation="relu"), L.MaxPool2D(),
        L.Flatten(), L.Dense(1024, activation="relu"), L.Dense(10)]), (64, 28, 28, 1)


def lstm():
    """LSTM(128) over 28 steps of 28 features, then Dense(10), and its batch shape."""
    return nn.Sequential([L.LSTM(128, input_shape=(28, 28)), L.Dense(10)]), (64, 28, 28)


MODELS = {"mlp": mlp, "lenet": lenet, "lstm": lstm}


def train_step(model, opt, x, y):
    """Sparse softmax cross-entropy, its gradient by a tape, one optimizer update."""
    with tape.GradientTape() as t:
        loss = nn.losses.sparse_softmax_cross_entropy(y, model(x, training=True))
    variables = model.trainable_variables
    opt.apply_gradients(zip(t.gradient(loss, variables), variables))
    return loss

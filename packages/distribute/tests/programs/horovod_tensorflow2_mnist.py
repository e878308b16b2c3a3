"""Port of horovod/horovod examples/tensorflow2/tensorflow2_mnist.py (Horovod's TensorFlow 2
MNIST example with a custom training loop: hvd.init, one GPU per local rank, the same
convnet on every rank, Adam at 0.001 * size, a tf.function training step whose tape is
wrapped in hvd.DistributedGradientTape, rank 0's variables and optimizer state broadcast
after the first step, 10000 // size steps, a checkpoint written by rank 0 only).

Upstream: https://github.com/horovod/horovod/blob/2626dc87a3a8eb8fb7d2216198ce45bce0f9e65a/examples/tensorflow2/tensorflow2_mnist.py
Changed: names only (hvd -> ember.distribute, tf.keras.Sequential/layers -> nn.Sequential/
nn.layers, tf.losses.SparseCategoricalCrossentropy -> nn.losses.SparseCategoricalCrossentropy,
tf.optimizers.Adam -> nn.optimizers.Adam, tf.train.Checkpoint -> checkpoint.Checkpoint,
tf.function -> graph.function, tf.GradientTape -> tape.GradientTape, tf.cast -> em.cast);
tf.keras.datasets.mnist.load_data() -> the real MNIST files read with
ember.data.datasets.mnist (found as integration_tests/programs/mnist_convnet.py finds them:
$EMBER_DATA, else ~/.cache/ember/datasets/mnist; skips when absent), turned back into
load_data()'s uint8 images. Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 10000 //
size steps): 120 // size steps. Run as `python horovod_tensorflow2_mnist.py` (a world of
one) or `mpiexec -n 2 python horovod_tensorflow2_mnist.py` (upstream's horovodrun).
Added: a per-rank seed (1000 + rank: the ranks start from different weights and draw
different shuffles and dropout masks, as upstream's unseeded ranks do, but repeatably);
every loss is kept, and the mean over the ranks of the last 10 steps' losses is below 60%
of the first 10 steps'; after training, DistributedGradientTape's gradient of one fixed
batch per rank equals the mean over the ranks (allgather) of the plain tape's gradients;
every rank's model and optimizer variables hash to the same sha256 (allgather of the
digests), and each rank prints `rank r/n: weights sha256 <hex>` for the test to compare;
rank 0 checks that its checkpoint exists and restores into a fresh model to the trained
weights; every rank prints `written: <files>` for what it left in its working
directory (the test runs each rank in its own directory: only rank 0 writes).
Found (each a GAP below, upstream's line kept above its stand-in): ember.core has no
tf.config.experimental (list_physical_devices, set_memory_growth, set_visible_devices)
(GAP 1); ember.nn's optimizer `variables` is a property (Keras 3), not TF 2's method, so
upstream's opt.variables() raises TypeError (GAP 2); ember.distribute's collectives read
tensors on the host, where Horovod's allreduce is a graph op, so a graph.function cannot
replay a step that averages over the ranks: with more than one rank the traced step runs
eagerly after its second trace, with one UserWarning per rank ("cannot be replayed because
it took the result of a collective with the other ranks ...") (GAP 3; it trains
correctly, only slower; a world of one makes no collective and replays the trace);
ember.distribute has no horovod.run (GAP 4).
Fixed in ember since the first version of this port: the collectives' host reads were
guards whose value changed every step, so the traced step was retraced each call until it
ran eagerly, and a rank whose gradients came out exactly as at a traced call (all zero,
say) passed the guards and replayed that trace, silently: the average of that call, baked
in, was applied again, no allreduce was made, and its next allreduce paired with another
step's on the other ranks until the ranks' counts of collectives differed
(CommunicationTimeout) (GAP 3's silent case); a collective with the other ranks now marks
the trace as one that cannot be replayed, so the step runs eagerly, warned, and every call
averages.
"""

import hashlib
import os
import pathlib
import sys
import unittest

import numpy as np

import ember.core as em
from ember import checkpoint, data, distribute, graph, nn, tape

hvd = distribute  # the example's `hvd.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
STEPS = 10000 if FULL else 120


def load_data():
    """tf.keras.datasets.mnist.load_data(): ((uint8 images [n, 28, 28], labels), test)."""
    def split(name):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).batch(100000)))
        return (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8), \
            np.asarray(y).astype(np.uint8)
    return split("train"), split("test")


def variables_digest(model, opt):
    """sha256 of the bytes of every model and optimizer variable, in order."""
    h = hashlib.sha256()
    for v in list(model.variables) + list(opt.variables):
        h.update(np.ascontiguousarray(v.numpy()).tobytes())
    return h.digest()


def main():
    # Horovod: initialize Horovod.
    hvd.init()
    em.random.set_seed(1000 + hvd.rank())  # (added: see the header)

    # Horovod: pin GPU to be used to process local rank (one GPU per process)
    # GAP 1: gpus = tf.config.experimental.list_physical_devices('GPU')
    # ember.core has no config.experimental; em.list_devices() names the devices ember sees
    gpus = [d for d in em.list_devices() if d.startswith("/gpu:")]
    # GAP 1: for gpu in gpus:
    # GAP 1:     tf.config.experimental.set_memory_growth(gpu, True)
    # (no stand-in: ember takes GPU memory as it needs it)
    # GAP 1: if gpus:
    # GAP 1:     tf.config.experimental.set_visible_devices(gpus[hvd.local_rank()], 'GPU')
    # no process-wide visible-device setting; the rank's GPU is made the default device
    if gpus:
        em.device(gpus[hvd.local_rank()]).__enter__()

    (mnist_images, mnist_labels), _ = \
        load_data()  # tf.keras.datasets.mnist.load_data(path='mnist-%d.npz' % hvd.rank())

    dataset = data.Dataset.from_tensor_slices(
        (em.cast(mnist_images[..., np.newaxis] / 255.0, em.float32),
                 em.cast(mnist_labels, em.int64))
    )
    dataset = dataset.repeat().shuffle(10000).batch(128)

    mnist_model = nn.Sequential([
        nn.layers.Conv2D(32, [3, 3], activation='relu'),
        nn.layers.Conv2D(64, [3, 3], activation='relu'),
        nn.layers.MaxPooling2D(pool_size=(2, 2)),
        nn.layers.Dropout(0.25),
        nn.layers.Flatten(),
        nn.layers.Dense(128, activation='relu'),
        nn.layers.Dropout(0.5),
        nn.layers.Dense(10, activation='softmax')
    ])
    loss = nn.losses.SparseCategoricalCrossentropy()

    # Horovod: adjust learning rate based on number of GPUs.
    opt = nn.optimizers.Adam(0.001 * hvd.size())

    checkpoint_dir = './checkpoints'
    ckpt = checkpoint.Checkpoint(model=mnist_model, optimizer=opt)  # upstream: checkpoint = ...

    # GAP 3: @tf.function (ember's collectives read values on the host: with more than one
    # rank this step runs eagerly after its second trace, warned; see the header)
    @graph.function
    def training_step(images, labels, first_batch):
        with tape.GradientTape() as tape_:
            probs = mnist_model(images, training=True)
            loss_value = loss(labels, probs)

        # Horovod: add Horovod Distributed GradientTape.
        tape_ = hvd.DistributedGradientTape(tape_)

        grads = tape_.gradient(loss_value, mnist_model.trainable_variables)
        opt.apply_gradients(zip(grads, mnist_model.trainable_variables))

        # Horovod: broadcast initial variable states from rank 0 to all other processes.
        # This is necessary to ensure consistent initialization of all workers when
        # training is started with random weights or restored from a checkpoint.
        #
        # Note: broadcast should be done after the first gradient step to ensure optimizer
        # initialization.
        if first_batch:
            hvd.broadcast_variables(mnist_model.variables, root=0)
            # GAP 2: hvd.broadcast_variables(opt.variables(), root_rank=0)
            # opt.variables is a list-valued property in ember (Keras 3), not a method
            hvd.broadcast_variables(opt.variables, root=0)

        return loss_value

    losses = []  # (added)
    # Horovod: adjust number of steps based on number of GPUs.
    for batch, (images, labels) in enumerate(dataset.take(STEPS // hvd.size())):
        loss_value = training_step(images, labels, batch == 0)
        losses.append(float(loss_value))

        if batch % 10 == 0 and hvd.rank() == 0:
            print('Step #%d\tLoss: %.6f' % (batch, loss_value))  # noqa: UP031 (upstream's)

    # Horovod: save checkpoints only on worker 0 to prevent other workers from
    # corrupting it.
    saved = None
    if hvd.rank() == 0:
        saved = ckpt.save(checkpoint_dir)

    check(mnist_model, opt, loss, losses, mnist_images, mnist_labels, saved)


def check(mnist_model, opt, loss, losses, mnist_images, mnist_labels, saved):
    """(added) What must hold on every rank after training."""
    rank, size = hvd.rank(), hvd.size()
    # the loss falls: the ranks' mean of the first 10 and of the last 10 steps' losses
    per_step = hvd.allreduce(np.asarray(losses, np.float64))
    first, last = float(per_step[:10].mean()), float(per_step[-10:].mean())
    print(f"rank {rank}/{size}: loss {first:.4f} -> {last:.4f} over {len(losses)} steps")
    assert last < 0.6 * first, (first, last)

    # DistributedGradientTape's gradient is the ranks' mean of the plain gradients
    rows = slice(64 * rank, 64 * rank + 64)  # a different fixed batch on each rank
    images = em.cast(mnist_images[rows, :, :, np.newaxis] / 255.0, em.float32)
    labels = em.cast(mnist_labels[rows], em.int64)
    variables = mnist_model.trainable_variables
    with tape.GradientTape() as plain:
        value = loss(labels, mnist_model(images, training=False))
    local = [g.numpy() for g in plain.gradient(value, variables)]
    with tape.GradientTape() as t:
        value = loss(labels, mnist_model(images, training=False))
    averaged = [g.numpy() for g in hvd.DistributedGradientTape(t).gradient(value, variables)]
    for g_local, g_avg in zip(local, averaged):
        every = hvd.allgather(g_local[None].astype(np.float64))
        np.testing.assert_allclose(g_avg, every.mean(axis=0), rtol=1e-5, atol=1e-7)
    if size > 1:  # else the comparison above proves nothing
        spread = hvd.allgather(local[-1][None])
        assert not np.allclose(spread[0], spread[1]), "the ranks' batches gave equal gradients"

    # every rank ends with the same weights and optimizer state
    digest = variables_digest(mnist_model, opt)
    digests = hvd.allgather(np.frombuffer(digest, np.uint8)[None])
    print(f"rank {rank}/{size}: weights sha256 {digest.hex()}")
    assert all(bytes(d) == digest for d in digests), [bytes(d).hex() for d in digests]

    # only rank 0 saved, and what it saved restores to the trained values
    if rank == 0:
        assert saved is not None and list(pathlib.Path(".").glob(os.path.basename(saved) + "*")), saved
        model2 = nn.Sequential([
            nn.layers.Conv2D(32, [3, 3], activation='relu'),
            nn.layers.Conv2D(64, [3, 3], activation='relu'),
            nn.layers.MaxPooling2D(pool_size=(2, 2)),
            nn.layers.Dropout(0.25),
            nn.layers.Flatten(),
            nn.layers.Dense(128, activation='relu'),
            nn.layers.Dropout(0.5),
            nn.layers.Dense(10, activation='softmax')
        ])
        checkpoint.Checkpoint(model=model2, optimizer=nn.optimizers.Adam()).restore(saved)
        model2(images[:1])
        for a, b in zip(mnist_model.variables, model2.variables):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    else:
        assert saved is None
    hvd.barrier()  # every rank has finished writing before any lists its directory
    print(f"rank {rank}/{size}: written: {sorted(p.name for p in pathlib.Path('.').iterdir())}")


if __name__ == '__main__':
    if len(sys.argv) == 4:
        # run training through horovod.run
        np_ = int(sys.argv[1])
        hosts = sys.argv[2]
        comm = sys.argv[3]
        print('Running training through horovod.run')
        # GAP 4: horovod.run(main, np=np, hosts=hosts, use_gloo=comm == 'gloo', use_mpi=comm == 'mpi')
        # ember.distribute has no launcher of its own: mpiexec starts the ranks
        sys.exit(f"ember.distribute has no horovod.run: use mpiexec -n {np_} python {sys.argv[0]}")
    else:
        # this is running via horovodrun
        main()

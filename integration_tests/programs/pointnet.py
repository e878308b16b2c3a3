"""Port of keras-team/keras-io examples/vision/pointnet.py ("Point cloud classification with
PointNet", the tf.keras version, last modified 2020/05/26): ModelNet10's .off meshes read with
trimesh and sampled into point clouds of 2,048 points, a class map from the folder names, a
tf.data pipeline (from_tensor_slices, shuffle, a map that jitters every point with
tf.random.uniform in float64 and permutes the points with tf.random.shuffle, batch), PointNet
built with the functional API (Conv1D kernel 1 / Dense + BatchNormalization(momentum=0.0) +
relu blocks, two T-nets whose last Dense starts at the identity matrix (zeros kernel,
Constant(np.eye(k).flatten()) bias) with an activity regularizer subclassing
keras.regularizers.Regularizer (tf.eye, tf.tensordot, tf.reshape, tf.reduce_sum), a
Reshape and a Dot(axes=(2, 1)) applying the transform, GlobalMaxPooling1D, Dropout, a
softmax Dense), compile with sparse_categorical_crossentropy, Adam(0.001) and
sparse_categorical_accuracy, fit with validation_data, then predict on a test batch and name
the predicted classes (tf.math.argmax, the class map).

Upstream: https://github.com/keras-team/keras-io/blob/4ddadb70592b4c1884b2c9720656cae41b2e70c1/examples/vision/pointnet.py
Changed: names only (tf.random.set_seed/uniform/shuffle, tf.eye/reshape/tensordot/reduce_sum/
square, tf.float64 -> em.*, tf.math.argmax -> em.argmax, tf.data -> ember.data, keras ->
ember.nn, tensorflow.keras.layers -> ember.nn.layers). ModelNet10 cannot be downloaded here
(no network), and trimesh is not installed: tf.keras.utils.get_file is replaced by SYNTHETIC
.off meshes written with numpy in ModelNet10's layout into a temporary directory
(ModelNet10/<class>/{train,test}/<class>_NNNN.off and a README.txt, which upstream's glob
"[!README]*" skips), one class per simple solid (box, sphere, cylinder, cone; with
EMBER_PROGRAMS_FULL=1 also torus, pyramid, octahedron, tetrahedron, table, dome: ten, as
ModelNet10), each mesh scaled at random along each axis and moved a little; `trimesh` is a
small stand-in in this file (trimesh.load reads an OFF file, .sample(n) draws n points
uniformly on the surface as trimesh.sample.sample_surface does: faces by area, then
barycentric coordinates, float64), so parse_dataset runs as upstream's. The mesh.show()
preview and the matplotlib plots are dropped; the plot titles are printed instead.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream: 2,048 points, 10 classes, ~400 training and
~90 test meshes per class as ModelNet10 has, 20 epochs): 128 points, 4 classes of 40
training and 16 test meshes, 8 epochs, the layer widths kept; EMBER_PROGRAMS_SHORT=1 (the
strict-GPU run): 64 points, 4 classes of 8 and 4 meshes, 1 epoch, no accuracy threshold.
Added: seeds for numpy and ember; the layout and the parsed arrays (shapes, float64 points
on the box's surface, labels and the class map following the folders); the augmentation
against numpy (each augmented cloud is its source cloud's rows reordered and moved by at
most 0.005 per coordinate, float64 as in TF, with new jitter and order for each cloud and
each pass) and the test set reshuffled on each pass; the model's shapes and parameter counts
against Keras's formulas (upstream's ten classes: 748,979, of which 6,080 non-trainable, as
Keras's summary reads); the untrained T-nets are the identity (their Dense gives eye(k)
flattened, the first Dot returns its input cast to float32); Dot(axes=(2, 1)) and
GlobalMaxPooling1D against numpy; the OrthogonalRegularizer (whose tensordot over axis 2 of
two (batch, k, k) arrays pairs every two matrices of the batch, as upstream's does) against
numpy and, with its gradient, PyTorch; model.losses after a call: the two penalties divided
by the batch size (tf.keras's rule for activity regularizers); fit's History; evaluate() on
the test set in one batch against predict() and numpy: the cross-entropy from the logits
(tf.keras's for a softmax output; float64, from the last Dense's input) plus the trained
T-nets' penalties; BatchNormalization(momentum=0.0): after a training call the moving
statistics are that batch's, biased variance (tf.keras's non-fused rule for 3-D inputs);
argmax's int64; and (CPU run) the untrained model's test accuracy stays under 0.5 (it
predicts one class: 0.25) and the trained one's, in evaluate() and in the last epoch's
val_sparse_categorical_accuracy, reaches 0.75 (6 seeds gave 0.89-0.97 after 8 epochs).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it):
1. (by design, docs/guide/input-pipelines.md) dataset elements are numpy arrays, which have
no .numpy(): `points = points.numpy()` and `labels.numpy()[i]` raise AttributeError;
np.asarray stands in. Also seen (not a GAP, upstream's line runs): model.summary() of a
functional model that is not a chain prints a long "name (Type)" past its column and then
the parameter count runs into the "Connected to" column with no space ("... (None, 128, 32)
128conv1d_5[0][0]"); tf.keras cuts each field to its column.
"""

import glob
import os
import tempfile
import types

import numpy as np
import torch

import ember.core as em
from ember import data, nn, tape
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)  # upstream's get_file cache; the synthetic ModelNet10 goes here

em.random.set_seed(1234)

"""
## Load dataset (synthetic ModelNet10, see the header)
"""

CLASSES = (["box", "sphere", "cylinder", "cone", "torus", "pyramid", "octahedron",
            "tetrahedron", "table", "dome"] if FULL else ["box", "sphere", "cylinder", "cone"])
PER_CLASS = (400, 90) if FULL else (8, 4) if SHORT else (40, 16)  # (train, test) meshes


def _grid_surface(f, n_u, n_v, closed_u, closed_v):
    """(added) vertices f(u, v) on an n_u x n_v grid, two triangles per cell."""
    uu, vv = np.meshgrid(np.arange(n_u), np.arange(n_v), indexing="ij")
    verts = f(uu / (n_u if closed_u else n_u - 1), vv / (n_v if closed_v else n_v - 1))
    faces = []
    for i in range(n_u if closed_u else n_u - 1):
        for j in range(n_v if closed_v else n_v - 1):
            a, b = i * n_v + j, ((i + 1) % n_u) * n_v + j
            c, d = ((i + 1) % n_u) * n_v + (j + 1) % n_v, i * n_v + (j + 1) % n_v
            faces += [(a, b, c), (a, c, d)]
    return verts.reshape(-1, 3), np.array(faces)


def _box(lo=(-0.5, -0.5, -0.5), hi=(0.5, 0.5, 0.5)):
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])], np.float64)
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
             (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    return corners, np.array(faces)


def _sphere(top=1.0):
    def f(u, v):
        lat, lon = np.pi * (0.5 - top * u), 2 * np.pi * v
        return 0.5 * np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon),
                               np.sin(lat)], -1)
    verts, faces = _grid_surface(f, 13, 16, False, True)
    if top < 1.0:  # a dome: close its base with a fan
        base = len(verts)
        ring = np.arange(12 * 16, 13 * 16)
        verts = np.vstack([verts, [[0.0, 0.0, 0.0]]])
        faces = np.vstack([faces, [(base, ring[(j + 1) % 16], ring[j]) for j in range(16)]])
    return verts, faces


def _solid_of_revolution(radius_bottom, radius_top, n=20):
    ang = 2 * np.pi * np.arange(n) / n
    ring = np.stack([np.cos(ang), np.sin(ang)], -1) * 0.5
    verts = np.vstack([np.c_[ring * radius_bottom, np.full(n, -0.5)],
                       np.c_[ring * radius_top, np.full(n, 0.5)],
                       [[0, 0, -0.5], [0, 0, 0.5]]])
    faces = []
    for j in range(n):
        k = (j + 1) % n
        faces += [(j, k, n + k), (j, n + k, n + j), (2 * n, k, j), (2 * n + 1, n + j, n + k)]
    return verts, np.array(faces)


def _torus():
    def f(u, v):
        a, b = 2 * np.pi * u, 2 * np.pi * v
        r = 0.35 + 0.15 * np.cos(b)
        return np.stack([r * np.cos(a), r * np.sin(a), 0.15 * np.sin(b)], -1)
    return _grid_surface(f, 20, 10, True, True)


def _polyhedron(verts, faces):
    return np.array(verts, np.float64), np.array(faces)


def _table():
    parts = [_box((-0.5, -0.5, 0.4), (0.5, 0.5, 0.5))]
    for x in (-0.45, 0.35):
        for y in (-0.45, 0.35):
            parts.append(_box((x, y, -0.5), (x + 0.1, y + 0.1, 0.4)))
    verts, faces, offset = [], [], 0
    for v, f in parts:
        verts.append(v)
        faces.append(f + offset)
        offset += len(v)
    return np.vstack(verts), np.vstack(faces)


SOLIDS = {
    "box": _box,
    "sphere": _sphere,
    "cylinder": lambda: _solid_of_revolution(1.0, 1.0),
    "cone": lambda: _solid_of_revolution(1.0, 0.0),
    "torus": _torus,
    "pyramid": lambda: _polyhedron([[-.5, -.5, -.5], [.5, -.5, -.5], [.5, .5, -.5], [-.5, .5, -.5],
                                    [0, 0, .5]], [(0, 2, 1), (0, 3, 2), (0, 1, 4), (1, 2, 4),
                                                  (2, 3, 4), (3, 0, 4)]),
    "octahedron": lambda: _polyhedron(
        [[.5, 0, 0], [-.5, 0, 0], [0, .5, 0], [0, -.5, 0], [0, 0, .5], [0, 0, -.5]],
        [(0, 2, 4), (2, 1, 4), (1, 3, 4), (3, 0, 4), (2, 0, 5), (1, 2, 5), (3, 1, 5), (0, 3, 5)]),
    "tetrahedron": lambda: _polyhedron([[.5, .5, .5], [.5, -.5, -.5], [-.5, .5, -.5],
                                        [-.5, -.5, .5]], [(0, 1, 2), (0, 3, 1), (0, 2, 3), (1, 3, 2)]),
    "table": _table,
    "dome": lambda: _sphere(top=0.5),
}


def write_synthetic_modelnet(root, rng):
    """(added) ModelNet10's layout with made-up meshes: <class>/{train,test}/<class>_NNNN.off."""
    os.makedirs(root)
    with open(os.path.join(root, "README.txt"), "w") as f:
        f.write("synthetic ModelNet10 (see pointnet.py)\n")
    written = {}
    for name in CLASSES:
        number = 0
        for split, count in zip(("train", "test"), PER_CLASS):
            os.makedirs(os.path.join(root, name, split))
            for _ in range(count):
                number += 1
                verts, faces = SOLIDS[name]()
                verts = verts * rng.uniform(0.6, 1.4, 3) + rng.uniform(-0.1, 0.1, 3)
                path = os.path.join(root, name, split, f"{name}_{number:04d}.off")
                with open(path, "w") as f:
                    f.write(f"OFF\n{len(verts)} {len(faces)} 0\n")
                    f.writelines(f"{x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in verts)
                    f.writelines(f"3 {a} {b} {c}\n" for a, b, c in faces)
                written[path] = (np.loadtxt(path, skiprows=2, max_rows=len(verts)), faces)
    return written


class _Mesh:
    """(added) the part of trimesh.Trimesh that upstream uses."""

    def __init__(self, vertices, faces):
        self.vertices, self.faces = vertices, faces
        self.triangles = vertices[faces]

    def sample(self, count):
        # trimesh.sample.sample_surface: faces drawn by area, then a uniform point in each
        area = 0.5 * np.linalg.norm(np.cross(self.triangles[:, 1] - self.triangles[:, 0],
                                             self.triangles[:, 2] - self.triangles[:, 0]), axis=1)
        cumulative = np.cumsum(area)
        face_index = np.searchsorted(cumulative, np.random.random(count) * cumulative[-1])
        origins = self.triangles[face_index, 0]
        vectors = self.triangles[face_index, 1:] - origins[:, None]
        lengths = np.random.random((count, 2, 1))
        lengths[lengths.sum(axis=1).reshape(-1) > 1.0] -= 1.0
        return (vectors * np.abs(lengths)).sum(axis=1) + origins


def _load_off(path):
    with open(path) as f:
        tokens = f.read().split()
    if tokens[0] != "OFF":  # ModelNet's files sometimes read "OFF490 518 0"
        tokens = ["OFF", tokens[0][3:]] + tokens[1:]
    nv, nf = int(tokens[1]), int(tokens[2])
    verts = np.array(tokens[4:4 + 3 * nv], np.float64).reshape(nv, 3)
    rest = tokens[4 + 3 * nv:]
    faces = []
    for _ in range(nf):
        k = int(rest[0])
        poly = [int(t) for t in rest[1:1 + k]]
        faces += [(poly[0], poly[i], poly[i + 1]) for i in range(1, k - 1)]  # a fan
        rest = rest[1 + k:]
    return _Mesh(verts, np.array(faces))


trimesh = types.SimpleNamespace(load=_load_off)  # (added) the stand-in, see the header

# DATA_DIR = tf.keras.utils.get_file(
#     "modelnet.zip",
#     "http://3dvision.princeton.edu/projects/2014/3DShapeNets/ModelNet10.zip",
#     extract=True,
# )
DATA_DIR = os.path.join(workdir.name, "modelnet.zip")  # (added) where get_file would put it
written = write_synthetic_modelnet(os.path.join(os.path.dirname(DATA_DIR), "ModelNet10"),
                                   np.random.default_rng(0))
DATA_DIR = os.path.join(os.path.dirname(DATA_DIR), "ModelNet10")

"""
We can use the `trimesh` package to read and visualize the `.off` mesh files.
"""

mesh = trimesh.load(os.path.join(DATA_DIR, "box/train/box_0001.off"))  # upstream: chair
# mesh.show()   (the 3-D viewer, dropped)

points = mesh.sample(2048)

# (the matplotlib scatter plot, dropped) added: what it would show
assert points.shape == (2048, 3) and points.dtype == np.float64
verts = written[os.path.join(DATA_DIR, "box/train/box_0001.off")][0]
lo, hi = verts.min(0), verts.max(0)
assert (points >= lo - 1e-9).all() and (points <= hi + 1e-9).all()
# on the box's surface: every point lies on one of its six faces (its own axis-aligned box)
assert (np.minimum(np.abs(points - lo), np.abs(points - hi)).min(1) < 1e-9).all()


def parse_dataset(num_points=2048):

    train_points = []
    train_labels = []
    test_points = []
    test_labels = []
    class_map = {}
    folders = glob.glob(os.path.join(DATA_DIR, "[!README]*"))

    for i, folder in enumerate(folders):
        print("processing class: {}".format(os.path.basename(folder)))  # noqa: UP032
        # store folder name with ID so we can retrieve later
        class_map[i] = folder.split("/")[-1]
        # gather all files
        train_files = glob.glob(os.path.join(folder, "train/*"))
        test_files = glob.glob(os.path.join(folder, "test/*"))

        for f in train_files:
            train_points.append(trimesh.load(f).sample(num_points))
            train_labels.append(i)

        for f in test_files:
            test_points.append(trimesh.load(f).sample(num_points))
            test_labels.append(i)

    return (
        np.array(train_points),
        np.array(test_points),
        np.array(train_labels),
        np.array(test_labels),
        class_map,
    )


"""
Set the number of points to sample and batch size and parse the dataset.
"""

NUM_POINTS = 2048 if FULL else 64 if SHORT else 128
NUM_CLASSES = len(CLASSES)  # upstream: 10, ModelNet10's classes
BATCH_SIZE = 32

train_points, test_points, train_labels, test_labels, CLASS_MAP = parse_dataset(
    NUM_POINTS
)

# (added) the arrays parse_dataset returns
n_train, n_test = NUM_CLASSES * PER_CLASS[0], NUM_CLASSES * PER_CLASS[1]
assert train_points.shape == (n_train, NUM_POINTS, 3) and train_points.dtype == np.float64
assert test_points.shape == (n_test, NUM_POINTS, 3) and test_points.dtype == np.float64
assert train_labels.shape == (n_train,) and train_labels.dtype == np.int64
assert sorted(CLASS_MAP.values()) == sorted(CLASSES) and sorted(CLASS_MAP) == list(range(NUM_CLASSES))
np.testing.assert_array_equal(np.bincount(train_labels), [PER_CLASS[0]] * NUM_CLASSES)
np.testing.assert_array_equal(np.bincount(test_labels), [PER_CLASS[1]] * NUM_CLASSES)
# each cloud lies within the bounding box of a mesh of its class (labels follow the folders)
bounds = {}
for path, (v, _) in written.items():
    name = path.split(os.sep)[-3]
    b = bounds.setdefault(name, [np.inf, -np.inf])
    b[0], b[1] = np.minimum(b[0], v.min(0)), np.maximum(b[1], v.max(0))
for cloud, label in zip(train_points, train_labels):
    b = bounds[CLASS_MAP[label]]
    assert (cloud >= b[0] - 1e-9).all() and (cloud <= b[1] + 1e-9).all()

"""
Our data can now be read into a `tf.data.Dataset()` object. We set the shuffle buffer
size to the entire size of the dataset as prior to this the data is ordered by class.
Data augmentation is important when working with point cloud data. We create a
augmentation function to jitter and shuffle the train dataset.
"""


def augment(points, label):
    # jitter points
    points += em.random.uniform(points.shape, -0.005, 0.005, dtype=em.float64)
    # shuffle points
    points = em.random.shuffle(points)
    return points, label


train_dataset = data.Dataset.from_tensor_slices((train_points, train_labels))
test_dataset = data.Dataset.from_tensor_slices((test_points, test_labels))

# (added) the augmentation against numpy, on the first two clouds in order, in two passes
plain = data.Dataset.from_tensor_slices((train_points[:2], train_labels[:2])).map(augment)
passes = [[(np.asarray(p), int(y)) for p, y in plain] for _ in range(2)]
jitters = []
for pass_ in passes:
    for k, (p, y) in enumerate(pass_):
        assert p.shape == (NUM_POINTS, 3) and p.dtype == np.float64 and y == train_labels[k]
        source = train_points[k]
        # each augmented point is a source point moved by at most 0.005 per coordinate, and
        # every source point well apart from the others (> 0.02) is matched by exactly one
        dist = np.abs(p[:, None] - source[None]).max(-1)  # (augmented, source), Chebyshev
        nearest = np.argmin(dist, 1)
        assert dist.min(1).max() <= 0.005, dist.min(1).max()
        apart = np.sort(np.abs(source[:, None] - source[None]).max(-1), 1)[:, 1] > 0.02
        assert apart.mean() > 0.5
        np.testing.assert_array_equal(np.bincount(nearest, minlength=NUM_POINTS)[apart], 1)
        jitter = p - source[nearest]
        assert 0.001 < np.abs(jitter).mean() < 0.004  # uniform in [-0.005, 0.005): 0.0025
        jitters.append(jitter[np.argsort(nearest)])
        assert (nearest != np.arange(NUM_POINTS)).mean() > 0.9  # the order did change
assert not np.array_equal(passes[0][0][0], passes[1][0][0])  # fresh draws each pass
assert not np.allclose(jitters[0], jitters[1])  # each cloud its own jitter

train_dataset = train_dataset.shuffle(len(train_points)).map(augment).batch(BATCH_SIZE)
test_dataset = test_dataset.shuffle(len(test_points)).batch(BATCH_SIZE)

# (added) every pass over the shuffled test set is a new order of all of it (TF's default
# reshuffle_each_iteration=True)
orders = [np.concatenate([np.asarray(y) for _, y in test_dataset]) for _ in range(2)]
for order in orders:
    np.testing.assert_array_equal(np.sort(order), np.sort(test_labels))
assert not np.array_equal(orders[0], orders[1]) and not np.array_equal(orders[0], test_labels)

"""
### Build a model

Each convolution and fully-connected layer (with exception for end layers) consits of
Convolution / Dense -> Batch Normalization -> ReLU Activation.
"""


def conv_bn(x, filters):
    x = layers.Conv1D(filters, kernel_size=1, padding="valid")(x)
    x = layers.BatchNormalization(momentum=0.0)(x)
    return layers.Activation("relu")(x)


def dense_bn(x, filters):
    x = layers.Dense(filters)(x)
    x = layers.BatchNormalization(momentum=0.0)(x)
    return layers.Activation("relu")(x)


"""
PointNet consists of two core components. The primary MLP network, and the transformer
net (T-net). The T-net aims to learn an affine transformation matrix by its own mini
network. The T-net is used twice. The first time to transform the input features (n, 3)
into a canonical representation. The second is an affine transformation for alignment in
feature space (n, 3). As per the original paper we constrain the transformation to be
close to an orthogonal matrix (i.e. ||X*X^T - I|| = 0).
"""


class OrthogonalRegularizer(keras.regularizers.Regularizer):
    def __init__(self, num_features, l2reg=0.001):
        self.num_features = num_features
        self.l2reg = l2reg
        self.eye = em.eye(num_features)

    def __call__(self, x):
        x = em.reshape(x, (-1, self.num_features, self.num_features))
        xxt = em.tensordot(x, x, axes=(2, 2))
        xxt = em.reshape(xxt, (-1, self.num_features, self.num_features))
        return em.reduce_sum(self.l2reg * em.square(xxt - self.eye))


def orthogonal_penalty_np(x, k, l2reg=0.001):
    """(added) upstream's regularizer in numpy: the tensordot over axis 2 of both (batch, k,
    k) arrays gives (batch, k, batch, k), reshaped to (batch * batch, k, k), as in TF."""
    x = np.asarray(x, np.float64).reshape(-1, k, k)
    xxt = np.tensordot(x, x, axes=(2, 2)).reshape(-1, k, k)
    return np.sum(l2reg * np.square(xxt - np.eye(k)))


# (added) the regularizer's value and gradient against PyTorch's tensordot, on 4 random
# 3x3 matrices (the penalty reads every pair of them)
reg_x = np.random.randn(4, 9).astype(np.float32)
with tape.GradientTape() as t:
    reg_v = em.constant(reg_x)
    t.watch(reg_v)
    penalty = OrthogonalRegularizer(3)(reg_v)
reg_grad = t.gradient(penalty, reg_v)
tx = torch.tensor(reg_x, dtype=torch.float64, requires_grad=True)
tm = tx.reshape(-1, 3, 3)
tp = torch.sum(0.001 * torch.square(torch.tensordot(tm, tm, dims=([2], [2])).reshape(-1, 3, 3)
                                    - torch.eye(3, dtype=torch.float64)))
tp.backward()
np.testing.assert_allclose(float(penalty), tp.item(), rtol=1e-5)
np.testing.assert_allclose(float(penalty), orthogonal_penalty_np(reg_x, 3), rtol=1e-5)
np.testing.assert_allclose(reg_grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)

"""
 We can then define a general function to build T-net layers.
"""


def tnet(inputs, num_features):

    # Initalise bias as the indentity matrix
    bias = keras.initializers.Constant(np.eye(num_features).flatten())
    reg = OrthogonalRegularizer(num_features)

    x = conv_bn(inputs, 32)
    x = conv_bn(x, 64)
    x = conv_bn(x, 512)
    x = layers.GlobalMaxPooling1D()(x)
    x = dense_bn(x, 256)
    x = dense_bn(x, 128)
    x = layers.Dense(
        num_features * num_features,
        kernel_initializer="zeros",
        bias_initializer=bias,
        activity_regularizer=reg,
    )(x)
    feat_T = layers.Reshape((num_features, num_features))(x)
    # Apply affine transformation to input features
    return layers.Dot(axes=(2, 1))([inputs, feat_T])


"""
The main network can be then implemented in the same manner where the t-net mini models
can be dropped in a layers in the graph. Here we replicate the network architecture
published in the original paper but with half the number of weights at each layer as we
are using the smaller 10 class ModelNet dataset.
"""

inputs = keras.Input(shape=(NUM_POINTS, 3))

x = tnet(inputs, 3)
x = conv_bn(x, 32)
x = conv_bn(x, 32)
x = tnet(x, 32)
x = conv_bn(x, 32)
x = conv_bn(x, 64)
x = conv_bn(x, 512)
x = layers.GlobalMaxPooling1D()(x)
x = dense_bn(x, 256)
x = layers.Dropout(0.3)(x)
x = dense_bn(x, 128)
x = layers.Dropout(0.3)(x)

outputs = layers.Dense(NUM_CLASSES, activation="softmax")(x)

model = keras.Model(inputs=inputs, outputs=outputs, name="pointnet")
model.summary()

# (added) shapes and Keras's parameter counts: Conv1D(kernel 1) and Dense n_in * n + n,
# BatchNormalization 4 * n of which 2 * n (moving mean, variance) not trainable
assert model.input_shape == (None, NUM_POINTS, 3) and model.output_shape == (None, NUM_CLASSES)


def block_counts(widths):
    """(trainable, non-trainable) of the conv_bn/dense_bn blocks n_in -> n -> ..."""
    trainable = sum(a * b + b + 2 * b for a, b in zip(widths, widths[1:]))
    return trainable, sum(2 * b for b in widths[1:])


def tnet_counts(k):
    conv, fixed_conv = block_counts([k, 32, 64, 512])
    dense, fixed_dense = block_counts([512, 256, 128])
    return conv + dense + 128 * k * k + k * k, fixed_conv + fixed_dense


main = [block_counts([3, 32, 32]), block_counts([32, 32, 64, 512]),
        block_counts([512, 256, 128]), (128 * NUM_CLASSES + NUM_CLASSES, 0),
        tnet_counts(3), tnet_counts(32)]
trainable_count = sum(t for t, _ in main)
fixed_count = sum(n for _, n in main)
assert model.count_params() == trainable_count + fixed_count, (model.count_params(),
                                                                trainable_count, fixed_count)
assert sum(int(np.prod(v.shape)) for v in model.trainable_weights) == trainable_count
if NUM_CLASSES == 10:  # Keras's summary of upstream's model
    assert (trainable_count + fixed_count, fixed_count) == (748979, 6080)

# (added) the layers the checks below look into: the T-nets' last Dense and their Dot
tnet_dense = [layer for layer in model.layers if layer.activity_regularizer is not None]
dots = [layer for layer in model.layers if isinstance(layer, layers.Dot)]
assert len(tnet_dense) == 2 and len(dots) == 2
probe = keras.Model(inputs, [tnet_dense[0].output, tnet_dense[1].output, dots[0].output,
                             dots[0].input[0], dots[1].output, dots[1].input[0]])

batch = train_points[:8]
d3, d32, dot0, dot0_in, dot1, dot1_in = (t.numpy() for t in probe(batch, training=False))
# untrained, each T-net is the identity: its Dense gives eye(k) whatever the input
np.testing.assert_array_equal(d3, np.tile(np.eye(3).flatten(), (8, 1)))
np.testing.assert_array_equal(d32, np.tile(np.eye(32).flatten(), (8, 1)))
np.testing.assert_array_equal(dot0_in, batch.astype(np.float32))  # the Input casts to float32
np.testing.assert_allclose(dot0, dot0_in, rtol=1e-6)
np.testing.assert_allclose(dot1, dot1_in, rtol=1e-6)
probs = model(batch, training=False)
assert probs.shape == (8, NUM_CLASSES) and probs.dtype == em.float32
np.testing.assert_allclose(probs.numpy().sum(-1), 1.0, rtol=1e-5)
# the activity losses of that call: the regularizer's value divided by the batch size (8)
want = (orthogonal_penalty_np(d3, 3) + orthogonal_penalty_np(d32, 32)) / 8
assert want > 0  # the cross-batch tensordot: not 0 even for identity matrices
np.testing.assert_allclose(sum(float(v) for v in model.losses), want, rtol=1e-5)
assert len(model.losses) == 2

# (added) Dot(axes=(2, 1)) and GlobalMaxPooling1D against numpy
a = np.random.randn(2, 5, 3).astype(np.float32)
m = np.random.randn(2, 3, 3).astype(np.float32)
np.testing.assert_allclose(layers.Dot(axes=(2, 1))([a, m]).numpy(),
                           np.einsum("bnk,bkj->bnj", a, m), rtol=1e-5, atol=1e-6)
np.testing.assert_array_equal(layers.GlobalMaxPooling1D()(a).numpy(), a.max(1))

"""
### Train model

Once the model is defined it can be trained like any other standard classification model
using `.compile()` and `.fit()`.
"""

# (added) the untrained model's test accuracy, for the threshold below
untrained_acc = np.mean(np.argmax(model.predict(test_points, verbose=0), -1) == test_labels)
print(f"untrained test accuracy {untrained_acc:.3f}")
assert SHORT or untrained_acc < 0.5, untrained_acc

model.compile(
    loss="sparse_categorical_crossentropy",
    optimizer=keras.optimizers.Adam(learning_rate=0.001),
    metrics=["sparse_categorical_accuracy"],
)

EPOCHS = 20 if FULL else 1 if SHORT else 8
history = model.fit(train_dataset, epochs=EPOCHS, validation_data=test_dataset)

# (added) the History
assert set(history.history) == {"loss", "sparse_categorical_accuracy", "val_loss",
                                "val_sparse_categorical_accuracy"}, history.history.keys()
assert all(len(v) == EPOCHS and np.isfinite(v).all() for v in history.history.values())
print({k: [round(x, 3) for x in v] for k, v in history.history.items()})

# (added) evaluate() on the whole test set in one batch against predict() and numpy: the
# loss is the cross-entropy plus the two activity losses (each divided by the batch size)
loss, acc = model.evaluate(test_points, test_labels, batch_size=len(test_points), verbose=0)
p = np.asarray(model.predict(test_points, batch_size=len(test_points), verbose=0), np.float64)
assert p.shape == (n_test, NUM_CLASSES)
d3, d32 = (t.numpy() for t in probe(test_points, training=False)[:2])
assert np.abs(d32 - np.eye(32).flatten()).max() > 1e-3  # the T-nets did train
# the cross-entropy from the logits (tf.keras's, for a softmax output), in float64 from the
# last Dense's input
last = model.layers[-1]
h = keras.Model(inputs, last.input)(test_points, training=False).numpy().astype(np.float64)
logits = h @ last.kernel.numpy().astype(np.float64) + last.bias.numpy()
log_z = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
np.testing.assert_allclose(p, np.exp(logits - log_z[:, None]), rtol=1e-4, atol=1e-6)
ce = np.mean(log_z - logits[np.arange(n_test), test_labels])
reg = (orthogonal_penalty_np(d3, 3) + orthogonal_penalty_np(d32, 32)) / n_test
np.testing.assert_allclose(loss, ce + reg, rtol=1e-4)
np.testing.assert_allclose(acc, np.mean(np.argmax(p, -1) == test_labels), atol=1e-6)
print(f"test loss {loss:.4f} (cross-entropy {ce:.4f} + orthogonal penalty {reg:.4f}), "
      f"accuracy {acc:.3f}")
# (CPU run) it learnt the shapes: chance is 1 / NUM_CLASSES = 0.25
assert SHORT or acc >= 0.75, acc
assert SHORT or history.history["val_sparse_categorical_accuracy"][-1] >= 0.75, history.history

"""
## Visualize predictions
"""

data = test_dataset.take(1)

points, labels = list(data)[0]
points = points[:8, ...]
labels = labels[:8, ...]

# run test data through model
preds = model.predict(points)
preds = em.argmax(preds, -1)

# GAP 1 (by design): points = points.numpy()   (dataset elements are numpy arrays already)
points = np.asarray(points)

# plot points with predicted class and label
# (matplotlib dropped: fig = plt.figure(figsize=(15, 10)))
for i in range(8):
    # (matplotlib dropped: ax = fig.add_subplot(2, 4, i + 1, projection="3d"), ax.scatter)
    # GAP 1 (by design): ax.set_title(..., CLASS_MAP[labels.numpy()[i]]), printed here
    print(
        "pred: {:}, label: {:}".format(  # noqa: UP032 (upstream's)
            CLASS_MAP[preds[i].numpy()], CLASS_MAP[np.asarray(labels)[i]]
        )
    )

assert preds.shape == (8,) and preds.dtype == em.int64  # (added) tf.math.argmax's int64

# (added) BatchNormalization(momentum=0.0): after a training call its moving statistics are
# that batch's (the biased variance: tf.keras's rule for 3-D inputs), here the first block's,
# fed by the first T-net's Conv1D on the raw points
conv = next(layer for layer in model.layers if isinstance(layer, layers.Conv1D))
bn = next(layer for layer in model.layers if isinstance(layer, layers.BatchNormalization))
one = train_points[:BATCH_SIZE]
np.testing.assert_array_equal(keras.Model(inputs, conv.input)(one).numpy(), one.astype(np.float32))
model(one, training=True)
kernel, bias = (w.numpy().astype(np.float64) for w in conv.weights)
feat = one.astype(np.float32).astype(np.float64) @ kernel[0] + bias
np.testing.assert_allclose(bn.moving_mean.numpy(), feat.mean((0, 1)), rtol=1e-4, atol=1e-6)
np.testing.assert_allclose(bn.moving_variance.numpy(), feat.var((0, 1)), rtol=1e-4, atol=1e-7)

"""Port of tensorflow/docs site/en/guide/advanced_autodiff.ipynb ("Advanced automatic
differentiation"): stop_recording, reset, stop_gradient, a custom gradient (and the same
function behind a traced function), multiple tapes, second derivatives, input gradient
regularization, jacobians (scalar and tensor sources), a Hessian and a Newton step, and
batch jacobians (with the BatchNormalization caution).

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/guide/advanced_autodiff.ipynb
Changed: names only (tf.GradientTape -> tape.GradientTape, tf.Variable/constant ->
em.Variable/constant, tf.custom_gradient -> tape.custom_gradient, tf.function/TensorSpec
-> graph.function/TensorSpec, tf.math.sin -> em.sin, tf.nn.sigmoid/relu/elu ->
em.nn_ops.sigmoid/relu/elu, tf.linalg.solve -> em.linalg.solve, other tf.* ops -> em.*,
tf.keras.layers -> nn.layers); the tape variable is `t` because `tape` names the module
(upstream's `tape` is `t`, its `tape0`/`tape1`/`t1`/`t2` keep their names). Dropped: the
matplotlib setup and the plotting cells (the sigmoid and dy/dx plot, imshow of the Hessian
and of the jacobian slices); the two plotting helpers keep their tensor work, their
`plt.*` lines dropped, and return what they would have drawn so it can be checked.
Added: every value the guide prints or shows is asserted: stop_recording, reset and
stop_gradient give dz/dx = 4 and dz/dy = None; the clipped custom gradient is 2 (also
through the traced function) and reaches only clip_gradients's output (another use of its
input keeps its own gradient); the two tapes' cos(0) = 1 and sigmoid'(0) = 0.25; 3x**2 = 3
and 6x = 6; the input gradient, its norm, and the norm's gradient against numpy and central
differences of a float64 numpy forward; the scalar-source jacobian against s*(1-s); the
kernel jacobian against its closed form and its sum against gradient(); the Hessian against
central differences of the closed-form gradient, its symmetry, and the Newton step against
a float64 solve; the batch jacobian, its full jacobian (with the zero off-diagonal batch
blocks), the sum and einsum against central differences; with BatchNormalization the full
jacobian against central differences of a numpy batch norm (off-diagonal blocks non-zero)
and batch_jacobian equal to what TF computes there (the gradient of each target column's
sum over the batch: sum over the target's batch axis of the full jacobian); and, after the
guide's caution, that batch_jacobian refuses mismatched first dimensions.
Found (each open gap a `# GAP n:` comment holding upstream's line, with the stand-in after
it): 1. ember has no tf.Module (em.Module: AttributeError): a plain class stands in;
2. ember has no tf.saved_model (save, load, SaveOptions(experimental_custom_gradients=)):
AttributeError, so the saved-and-loaded custom gradient cannot be checked; the traced
method is called directly instead.
Fixed in ember since the first version of this port: batch_jacobian with mismatched first
dimensions raised a reshape's error, and rank-1 targets were accepted (no upstream line:
both now raise an InvalidArgumentError naming the shapes, as TF's ValueError); a custom_gradient function that
returns its argument, as upstream's clip_gradients does, handed back that very tensor
where TF returns a new one (an identity), so every other use of the argument also went
through `backward` (GAP 3, silent; the guide's own value was right): with a = v * v,
output = clip_gradients(a), the gradient of a * 3.0 was 2.0 (TF: 12.0) and of output + a
2.0 (TF: 6.0), and clip_gradients(v) * v of a Variable v = 2 gave 4.5 (TF: 2.5), through
graph.function too. custom_gradient's results are now new tensors, and these checks
(TF's values) are restored.
"""

import numpy as np

import ember.core as em
from ember import graph, nn, tape

em.random.set_seed(0)


def close(a, b, rtol=1e-5, atol=1e-6):
  np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                             rtol=rtol, atol=atol)


def central_diff(f, p, eps=1e-6):
  """d f(p) / d p by central differences in float64: shape f(p).shape + p.shape."""
  p = np.array(p, dtype=np.float64)
  cols = []
  for i in range(p.size):
    d = np.zeros(p.size)
    d[i] = eps
    d = d.reshape(p.shape)
    cols.append((np.asarray(f(p + d)) - np.asarray(f(p - d))) / (2 * eps))
  out = np.stack(cols, axis=-1)
  return out.reshape(np.shape(f(p)) + p.shape)


def relu_np(z):
  return np.maximum(z, 0.0)


def elu_np(z):
  return np.where(z > 0, z, np.expm1(np.minimum(z, 0.0)))


# ## Controlling gradient recording
# ### Stop recording

x = em.Variable(2.0)
y = em.Variable(3.0)

with tape.GradientTape() as t:
  x_sq = x * x
  with t.stop_recording():
    y_sq = y * y
  z = x_sq + y_sq

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
assert grad['x'].numpy() == 4.0 and grad['y'] is None, grad
assert z.numpy() == 13.0

# ### Reset/start recording from scratch

x = em.Variable(2.0)
y = em.Variable(3.0)
reset = True

with tape.GradientTape() as t:
  y_sq = y * y
  if reset:
    # Throw out all the tape recorded so far.
    t.reset()
  z = x * x + y_sq

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
assert grad['x'].numpy() == 4.0 and grad['y'] is None, grad
# reset forgets y's read: only x, read after it, is watched (as a new TF tape would have it)
assert [v is x for v in t.watched_variables()] == [True], t.watched_variables()

# ## Stop gradient flow with precision

x = em.Variable(2.0)
y = em.Variable(3.0)

with tape.GradientTape() as t:
  y_sq = y**2
  z = x**2 + em.stop_gradient(y_sq)

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
assert grad['x'].numpy() == 4.0 and grad['y'] is None, grad
assert z.numpy() == 13.0


# ## Custom gradients

# Establish an identity operation, but clip during the gradient pass.
@tape.custom_gradient
def clip_gradients(y):
  def backward(dy):
    return em.clip_by_norm(dy, 0.5)
  return y, backward

v = em.Variable(2.0)
with tape.GradientTape() as t:
  output = clip_gradients(v * v)
clipped = t.gradient(output, v)
print(clipped)  # calls "backward", which clips 4 to 2
# the incoming gradient 1.0 is clipped to 0.5, then times d(v*v)/dv = 4: 2.0
assert clipped.numpy() == 2.0, clipped
assert output.numpy() == 4.0  # the forward pass is the identity

# Added: the clipping belongs to clip_gradients's output only. TF returns a new tensor (an
# identity of the result), so another use of the same input keeps its own gradient.
v = em.Variable(2.0)
with tape.GradientTape(persistent=True) as t:
  a = v * v
  output = clip_gradients(a)
  other = a * 3.0
  both = output + a
assert output is not a
assert t.gradient(other, v).numpy() == 12.0   # d(3 v**2)/dv
assert t.gradient(both, v).numpy() == 6.0     # 0.5 * 4 + 1 * 4
assert t.gradient(output, v).numpy() == 2.0  # the guide's value
del t
# and with a Variable argument used beside the output: 0.5 (clipped 2) + 2
with tape.GradientTape() as t:
  used_twice = clip_gradients(v) * v
assert t.gradient(used_twice, v).numpy() == 2.5


# ### Custom gradients in SavedModel

# GAP 1: class MyModule(tf.Module):
# ember has no tf.Module (em.Module: AttributeError); a plain class stands in.
class MyModule:

  @graph.function(input_signature=[graph.TensorSpec(None)])
  def call_custom_grad(self, x):
    return clip_gradients(x)

model = MyModule()

# GAP 2: tf.saved_model.save(
#     model,
#     'saved_model',
#     options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))
# ember has no tf.saved_model (em.saved_model: AttributeError); the traced method of the
# unsaved module stands in for the loaded one.

# The loaded gradients will be the same as the above example.
v = em.Variable(2.0)
# GAP 2: loaded = tf.saved_model.load('saved_model')
loaded = model
with tape.GradientTape() as t:
  output = loaded.call_custom_grad(v * v)
traced_clipped = t.gradient(output, v)
print(traced_clipped)
assert traced_clipped.numpy() == 2.0, traced_clipped
# Added: through the traced method too, the clipping reaches only the function's output
with tape.GradientTape() as t:
  a = v * v
  both = loaded.call_custom_grad(a) + a
assert t.gradient(both, v).numpy() == 6.0  # 0.5 * 4 + 1 * 4

# ## Multiple tapes

x0 = em.constant(0.0)
x1 = em.constant(0.0)

with tape.GradientTape() as tape0, tape.GradientTape() as tape1:
  tape0.watch(x0)
  tape1.watch(x1)

  y0 = em.sin(x0)
  y1 = em.nn_ops.sigmoid(x1)

  y = y0 + y1

  ys = em.reduce_sum(y)

g0 = tape0.gradient(ys, x0).numpy()   # cos(x) => 1.0
print(g0)
g1 = tape1.gradient(ys, x1).numpy()   # sigmoid(x1)*(1-sigmoid(x1)) => 0.25
print(g1)
assert g0 == 1.0 and g1 == 0.25, (g0, g1)
# each tape saw only its own source
assert tape0.watched_variables() == [] and tape1.watched_variables() == []

# ### Higher-order gradients

x = em.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0

with tape.GradientTape() as t2:
  with tape.GradientTape() as t1:
    y = x * x * x

  # Compute the gradient inside the outer `t2` context manager
  # which means the gradient computation is differentiable as well.
  dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)

print('dy_dx:', dy_dx.numpy())  # 3 * x**2 => 3.0
print('d2y_dx2:', d2y_dx2.numpy())  # 6 * x => 6.0
assert dy_dx.numpy() == 3.0 and d2y_dx2.numpy() == 6.0, (dy_dx, d2y_dx2)

# #### Example: Input gradient regularization

x = em.random.normal([7, 5])

layer = nn.layers.Dense(10, activation=em.nn_ops.relu)

with tape.GradientTape() as t2:
  # The inner tape only takes the gradient with respect to the input,
  # not the variables.
  with tape.GradientTape(watch_accessed_variables=False) as t1:
    t1.watch(x)
    y = layer(x)
    out = em.reduce_sum(layer(x)**2)
  # 1. Calculate the input gradient.
  g1 = t1.gradient(out, x)
  # 2. Calculate the magnitude of the input gradient.
  g1_mag = em.norm(g1)

# 3. Calculate the gradient of the magnitude with respect to the model.
dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)

shapes = [var.shape for var in dg1_mag]
print(shapes)
assert shapes == [(5, 10), (10,)], shapes
assert t1.watched_variables() == []  # the inner tape never watched the kernel or bias

x_np = x.numpy().astype(np.float64)
k_np = layer.kernel.numpy().astype(np.float64)
b_np = layer.bias.numpy().astype(np.float64)


def input_grad_np(kernel, bias):
  # d sum(relu(x @ k + b)**2) / dx = 2 relu(x @ k + b) @ k.T
  return 2 * relu_np(x_np @ kernel + bias) @ kernel.T


close(g1.numpy(), input_grad_np(k_np, b_np), rtol=1e-5, atol=1e-5)
close(g1_mag.numpy(), np.linalg.norm(input_grad_np(k_np, b_np)), rtol=1e-5)
close(dg1_mag[0].numpy(),
      central_diff(lambda k: np.linalg.norm(input_grad_np(k, b_np)), k_np),
      rtol=1e-4, atol=1e-5)
close(dg1_mag[1].numpy(),
      central_diff(lambda b: np.linalg.norm(input_grad_np(k_np, b)), b_np),
      rtol=1e-4, atol=1e-5)

# ## Jacobians
# ### Scalar source

x = em.linspace(-10.0, 10.0, 200+1)
delta = em.Variable(0.0)

with tape.GradientTape() as t:
  y = em.nn_ops.sigmoid(x+delta)

dy_dx = t.jacobian(y, delta)

print(y.shape)
print(dy_dx.shape)
assert y.shape == (201,) and dy_dx.shape == (201,), (y.shape, dy_dx.shape)
s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
close(y.numpy(), s, rtol=1e-6, atol=1e-7)
# (near saturation s*(1-s) cancels: a few float32 ulps of s, as in autodiff_guide.py)
close(dy_dx.numpy(), s * (1 - s), rtol=1e-4, atol=5e-7)

# (plotting cell dropped: y and dy/dx against x)

# ### Tensor source

x = em.random.normal([7, 5])
layer = nn.layers.Dense(10, activation=em.nn_ops.relu)

with tape.GradientTape(persistent=True) as t:
  y = layer(x)

print(y.shape)
assert y.shape == (7, 10)

print(layer.kernel.shape)
assert layer.kernel.shape == (5, 10)

j = t.jacobian(y, layer.kernel)
print(j.shape)
assert j.shape == (7, 10, 5, 10), j.shape
# y[i, k] = relu(x[i] @ kernel[:, k] + b[k]): dy[i, k]/dkernel[a, c] = [z[i, k] > 0] x[i, a] [k == c]
x_np = x.numpy().astype(np.float64)
z_np = x_np @ layer.kernel.numpy() + layer.bias.numpy()
j_np = np.einsum('ik,ia,kc->ikac', (z_np > 0).astype(np.float64), x_np, np.eye(10))
close(j.numpy(), j_np, rtol=1e-6, atol=0)

g = t.gradient(y, layer.kernel)
print('g.shape:', g.shape)

j_sum = em.reduce_sum(j, axis=[0, 1])
delta = em.reduce_max(abs(g - j_sum)).numpy()
assert delta < 1e-3
print('delta:', delta)
close(g.numpy(), j_np.sum(axis=(0, 1)), rtol=1e-5, atol=1e-6)

# #### Example: Hessian

x = em.random.normal([7, 5])
layer1 = nn.layers.Dense(8, activation=em.nn_ops.relu)
layer2 = nn.layers.Dense(6, activation=em.nn_ops.relu)
x_in = x.numpy().astype(np.float64)  # (upstream rebinds x inside the tape)

with tape.GradientTape() as t2:
  with tape.GradientTape() as t1:
    x = layer1(x)
    x = layer2(x)
    loss = em.reduce_mean(x**2)

  g = t1.gradient(loss, layer1.kernel)

h = t2.jacobian(g, layer1.kernel)

print(f'layer.kernel.shape: {layer1.kernel.shape}')
print(f'h.shape: {h.shape}')
assert layer1.kernel.shape == (5, 8) and h.shape == (5, 8, 5, 8), h.shape

b1_np = layer1.bias.numpy().astype(np.float64)
k2_np = layer2.kernel.numpy().astype(np.float64)
b2_np = layer2.bias.numpy().astype(np.float64)


def loss_grad_np(k1):
  """d mean(relu(relu(x @ k1 + b1) @ k2 + b2)**2) / d k1, in closed form."""
  z1 = x_in @ k1 + b1_np
  a1 = relu_np(z1)
  z2 = a1 @ k2_np + b2_np
  a2 = relu_np(z2)
  dz2 = 2 * a2 / a2.size * (z2 > 0)
  dz1 = (dz2 @ k2_np.T) * (z1 > 0)
  return x_in.T @ dz1


k1_np = layer1.kernel.numpy().astype(np.float64)
close(g.numpy(), loss_grad_np(k1_np), rtol=1e-4, atol=1e-6)
h_np = central_diff(loss_grad_np, k1_np)  # (5, 8, 5, 8): the gradient is piecewise linear
close(h.numpy(), h_np, rtol=1e-4, atol=1e-5)
assert np.abs(h_np).max() > 1e-3  # a Hessian that is not all zeros

n_params = em.reduce_prod(layer1.kernel.shape)

g_vec = em.reshape(g, [n_params, 1])
h_mat = em.reshape(h, [n_params, n_params])
assert int(n_params.numpy()) == 40 and g_vec.shape == (40, 1) and h_mat.shape == (40, 40)

# The Hessian matrix should be symmetric:
h_mat_np = h_mat.numpy().astype(np.float64)
close(h_mat_np, h_mat_np.T, rtol=1e-5, atol=1e-6)


def imshow_zero_center(image, **kwargs):
  lim = em.reduce_max(abs(image))
  # (matplotlib dropped: plt.imshow(image, vmin=-lim, vmax=lim, cmap='seismic', **kwargs);
  #  plt.colorbar())
  return image, lim


_, lim = imshow_zero_center(h_mat)
close(lim.numpy(), np.abs(h_mat_np).max(), rtol=0, atol=0)

eps = 1e-3
eye_eps = em.eye(h_mat.shape[0])*eps

# X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
# h_mat = ∇²f(X(k))
# g_vec = ∇f(X(k))
update = em.linalg.solve(h_mat + eye_eps, g_vec)

kernel_before = layer1.kernel.numpy()
# Reshape the update and apply it to the variable.
_ = layer1.kernel.assign_sub(em.reshape(update, layer1.kernel.shape))

a_np = h_mat_np + np.eye(40) * eps
g_np = g_vec.numpy().astype(np.float64)
u_np = update.numpy().astype(np.float64)
assert update.shape == (40, 1)
# a float32 solve: its residual is small against |A| |u| (the system is ill-conditioned)
resid = np.abs(a_np @ u_np - g_np).max()
assert resid < 1e-4 * (np.abs(a_np).max() * np.abs(u_np).max() + np.abs(g_np).max()), resid
close(layer1.kernel.numpy(), kernel_before - update.numpy().reshape(5, 8), rtol=1e-6, atol=1e-7)

# ### Batch Jacobian

x = em.random.normal([7, 5])

layer1 = nn.layers.Dense(8, activation=em.nn_ops.elu)
layer2 = nn.layers.Dense(6, activation=em.nn_ops.elu)

with tape.GradientTape(persistent=True, watch_accessed_variables=False) as t:
  t.watch(x)
  y = layer1(x)
  y = layer2(y)

print(y.shape)
assert y.shape == (7, 6)
assert t.watched_variables() == []

x_np = x.numpy().astype(np.float64)
w1 = [layer1.kernel.numpy().astype(np.float64), layer1.bias.numpy().astype(np.float64)]
w2 = [layer2.kernel.numpy().astype(np.float64), layer2.bias.numpy().astype(np.float64)]


def mlp_np(xx):
  return elu_np(elu_np(xx @ w1[0] + w1[1]) @ w2[0] + w2[1])


close(y.numpy(), mlp_np(x_np), rtol=1e-5, atol=1e-6)
j_fd = central_diff(mlp_np, x_np)  # (7, 6, 7, 5)

j = t.jacobian(y, x)
print(j.shape)
assert j.shape == (7, 6, 7, 5), j.shape
close(j.numpy(), j_fd, rtol=1e-4, atol=1e-6)

# (plotting cell dropped: imshow_zero_center(j[:, 0, :, 0]), "A (batch, batch) slice")
slice00 = j[:, 0, :, 0].numpy()
assert slice00.shape == (7, 7)
off_diagonal = ~np.eye(7, dtype=bool)
# every (batch, batch) slice is diagonal: exact zeros off the diagonal
assert (np.einsum('aibk->abik', j.numpy())[off_diagonal] == 0).all()
assert (np.abs(np.diagonal(slice00)) > 0).all()


def plot_as_patches(j):
  # Reorder axes so the diagonals will each form a contiguous patch.
  j = em.transpose(j, [1, 0, 3, 2])
  # Pad in between each patch.
  lim = em.reduce_max(abs(j))
  j = em.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]],
             constant_values=-lim)
  # Reshape to form a single image.
  s = j.shape
  j = em.reshape(j, [s[0]*s[1], s[2]*s[3]])
  # (matplotlib dropped:
  #  imshow_zero_center(j, extent=[-0.5, s[2]-0.5, s[0]-0.5, -0.5]))
  return j, lim


patches, lim = plot_as_patches(j)
# (plotting dropped: plt.title('All (batch, batch) slices are diagonal'))
assert patches.shape == (6 * 9, 5 * 9), patches.shape
patches_np = np.pad(np.transpose(j.numpy(), [1, 0, 3, 2]), [[0, 0], [1, 1], [0, 0], [1, 1]],
                    constant_values=-np.abs(j.numpy()).max()).reshape(54, 45)
close(patches.numpy(), patches_np, rtol=0, atol=0)

j_sum = em.reduce_sum(j, axis=2)
print(j_sum.shape)
j_select = em.einsum('bxby->bxy', j)
print(j_select.shape)
assert j_sum.shape == (7, 6, 5) and j_select.shape == (7, 6, 5)
jb_fd = np.einsum('bxby->bxy', j_fd)  # the per-example jacobians
close(j_sum.numpy(), jb_fd, rtol=1e-4, atol=1e-6)
close(j_select.numpy(), jb_fd, rtol=1e-4, atol=1e-6)

jb = t.batch_jacobian(y, x)
print(jb.shape)
assert jb.shape == (7, 6, 5), jb.shape

error = em.reduce_max(abs(jb - j_sum))
assert error < 1e-3
print(error.numpy())
close(jb.numpy(), jb_fd, rtol=1e-4, atol=1e-6)

x = em.random.normal([7, 5])

layer1 = nn.layers.Dense(8, activation=em.nn_ops.elu)
bn = nn.layers.BatchNormalization()
layer2 = nn.layers.Dense(6, activation=em.nn_ops.elu)

with tape.GradientTape(persistent=True, watch_accessed_variables=False) as t:
  t.watch(x)
  y = layer1(x)
  y = bn(y, training=True)
  y = layer2(y)

j = t.jacobian(y, x)
print(f'j.shape: {j.shape}')
assert j.shape == (7, 6, 7, 5), j.shape

x_np = x.numpy().astype(np.float64)
w1 = [layer1.kernel.numpy().astype(np.float64), layer1.bias.numpy().astype(np.float64)]
w2 = [layer2.kernel.numpy().astype(np.float64), layer2.bias.numpy().astype(np.float64)]
gamma = bn.gamma.numpy().astype(np.float64)
beta = bn.beta.numpy().astype(np.float64)
assert bn.epsilon == 1e-3  # Keras's default


def bn_mlp_np(xx):
  """Keras's BatchNormalization(training=True): the batch's mean and biased variance."""
  h = elu_np(xx @ w1[0] + w1[1])
  h = (h - h.mean(axis=0)) / np.sqrt(h.var(axis=0) + 1e-3) * gamma + beta
  return elu_np(h @ w2[0] + w2[1])


close(y.numpy(), bn_mlp_np(x_np), rtol=1e-4, atol=1e-5)
j_fd = central_diff(bn_mlp_np, x_np)
close(j.numpy(), j_fd, rtol=1e-3, atol=1e-5)

patches, lim = plot_as_patches(j)
# (plotting dropped: plt.title('These slices are not diagonal'),
#  plt.xlabel("Don't use `batch_jacobian`"))
assert patches.shape == (54, 45)
# the batch norm couples the examples: the off-diagonal (batch, batch) blocks are not zero
assert np.abs(np.einsum('aibk->abik', j_fd)[off_diagonal]).max() > 1e-2
assert np.abs(np.einsum('aibk->abik', j.numpy())[off_diagonal]).max() > 1e-2

jb = t.batch_jacobian(y, x)
print(f'jb.shape: {jb.shape}')
assert jb.shape == (7, 6, 5), jb.shape
# What TF's batch_jacobian computes here: for each target column i, the gradient of
# y[:, i] summed over the batch, i.e. jb[b, i, k] = sum_a j[a, i, b, k] (not the
# per-example diagonal blocks j[b, i, b, k], which differ once examples are coupled)
close(jb.numpy(), np.einsum('aibk->bik', j_fd), rtol=1e-3, atol=1e-5)
assert np.abs(np.einsum('aibk->bik', j_fd) - np.einsum('bibk->bik', j_fd)).max() > 1e-2

# Added (the caution above: batch_jacobian checks that the first dimensions match)
x = em.random.normal([4, 3])
with tape.GradientTape() as t:
  t.watch(x)
  y = em.reshape(x, [3, 4])
try:
  t.batch_jacobian(y, x)
except ValueError as e:
  # (TF: "Need first dimension of target shape (3, 4) and source shape (4, 3) to match.";
  #  ember's message speaks of a reshape, see Found)
  print('batch_jacobian refused:', e)
else:
  raise AssertionError("batch_jacobian must refuse targets and sources of different batch")

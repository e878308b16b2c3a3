"""Port of tensorflow/docs site/en/guide/autodiff.ipynb ("Introduction to gradients and
automatic differentiation"): tapes over variables and tensors, structures of sources and
targets, persistent tapes, what is watched, control flow, and the cases that give None.

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/guide/autodiff.ipynb
Changed: names only (tf.GradientTape -> tape.GradientTape, tf.Variable/constant ->
em.Variable/constant, tf.* ops -> em.*, tf.math.sin -> em.sin, tf.nn.softplus/sigmoid ->
em.softplus/em.sigmoid, tf.keras.layers.Dense -> nn.layers.Dense,
tf.UnconnectedGradients.ZERO -> "zero"). The plotting cells and the tf.image.adjust_contrast
cell (an op without a gradient; ember has no tf.image) are dropped; the tape variable is `t`
because `tape` names the module. Added: every value the guide prints is asserted.
"""

import warnings

import numpy as np

import ember.core as em
from ember import nn, tape

em.random.set_seed(0)

x = em.Variable(3.0)

with tape.GradientTape() as t:
  y = x**2

# dy = 2x * dx
dy_dx = t.gradient(y, x)
assert dy_dx.numpy() == 6.0

w = em.Variable(em.random.normal((3, 2)), name='w')
b = em.Variable(em.zeros(2, dtype=em.float32), name='b')
x = [[1., 2., 3.]]

with tape.GradientTape(persistent=True) as t:
  y = x @ w + b
  loss = em.reduce_mean(y**2)

[dl_dw, dl_db] = t.gradient(loss, [w, b])
print(w.shape)
print(dl_dw.shape)
assert dl_dw.shape == w.shape
y_np = np.array(x) @ w.numpy() + b.numpy()
np.testing.assert_allclose(dl_dw.numpy(), np.array(x).T @ y_np, rtol=1e-5)  # d mean(y^2)/dw

my_vars = {
    'w': w,
    'b': b
}

grad = t.gradient(loss, my_vars)
np.testing.assert_allclose(grad['b'].numpy(), y_np[0], rtol=1e-5)

layer = nn.layers.Dense(2, activation='relu')
x = em.constant([[1., 2., 3.]])

with tape.GradientTape() as t:
  # Forward pass
  y = layer(x)
  loss = em.reduce_mean(y**2)

# Calculate gradients with respect to every trainable variable
grad = t.gradient(loss, layer.trainable_variables)

for var, g in zip(layer.trainable_variables, grad):
  print(f'{var.name}, shape: {g.shape}')
  assert g.shape == var.shape

# A trainable variable
x0 = em.Variable(3.0, name='x0')
# Not trainable
x1 = em.Variable(3.0, name='x1', trainable=False)
# Not a Variable: A variable + tensor returns a tensor.
x2 = em.Variable(2.0, name='x2') + 1.0
# Not a variable
x3 = em.constant(3.0, name='x3')

with tape.GradientTape() as t:
  y = (x0**2) + (x1**2) + (x2**2)

grad = t.gradient(y, [x0, x1, x2, x3])

for g in grad:
  print(g)
assert float(grad[0]) == 6.0 and grad[1:] == [None, None, None], grad

assert [var.name for var in t.watched_variables()] == [x0.name], t.watched_variables()

x = em.constant(3.0)
with tape.GradientTape() as t:
  t.watch(x)
  y = x**2

# dy = 2x * dx
dy_dx = t.gradient(y, x)
print(dy_dx.numpy())
assert dy_dx.numpy() == 6.0

x0 = em.Variable(0.0)
x1 = em.Variable(10.0)

with tape.GradientTape(watch_accessed_variables=False) as t:
  t.watch(x1)
  y0 = em.sin(x0)
  y1 = em.softplus(x1)
  y = y0 + y1
  ys = em.reduce_sum(y)

# dys/dx1 = exp(x1) / (1 + exp(x1)) = sigmoid(x1)
grad = t.gradient(ys, {'x0': x0, 'x1': x1})

print('dy/dx0:', grad['x0'])
print('dy/dx1:', grad['x1'].numpy())
assert grad['x0'] is None
np.testing.assert_allclose(grad['x1'].numpy(), 1 / (1 + np.exp(-10.0)), rtol=1e-6)

x = em.constant(3.0)

with tape.GradientTape() as t:
  t.watch(x)
  y = x * x
  z = y * y

# Use the tape to compute the gradient of z with respect to the
# intermediate value y.
# dz_dy = 2 * y and y = x ** 2 = 9
dz_dy = t.gradient(z, y)
print(dz_dy.numpy())
assert dz_dy.numpy() == 18.0

x = em.constant([1, 3.0])
with tape.GradientTape(persistent=True) as t:
  t.watch(x)
  y = x * x
  z = y * y

print(t.gradient(z, x).numpy())  # [4.0, 108.0] (4 * x**3 at x = [1.0, 3.0])
print(t.gradient(y, x).numpy())  # [2.0, 6.0] (2 * x at x = [1.0, 3.0])
np.testing.assert_allclose(t.gradient(z, x).numpy(), [4.0, 108.0])
np.testing.assert_allclose(t.gradient(y, x).numpy(), [2.0, 6.0])

del t   # Drop the reference to the tape

x = em.Variable(2.0)
with tape.GradientTape(persistent=True) as t:
  y0 = x**2
  y1 = 1 / x

print(t.gradient(y0, x).numpy())
print(t.gradient(y1, x).numpy())
assert (t.gradient(y0, x).numpy(), t.gradient(y1, x).numpy()) == (4.0, -0.25)

x = em.Variable(2.0)
with tape.GradientTape() as t:
  y0 = x**2
  y1 = 1 / x

g = t.gradient({'y0': y0, 'y1': y1}, x)
print(g.numpy())
assert g.numpy() == 3.75

x = em.Variable(2.)

with tape.GradientTape() as t:
  y = x * [3., 4.]

g = t.gradient(y, x)
print(g.numpy())
assert g.numpy() == 7.0

x = em.linspace(-10.0, 10.0, 200+1)

with tape.GradientTape() as t:
  t.watch(x)
  y = em.sigmoid(x)

dy_dx = t.gradient(y, x)
s = 1 / (1 + np.exp(-x.numpy()))
# (near saturation s*(1-s) cancels: a GPU's sigmoid, 1-2 ulp from numpy's, moves it by
#  a few float32 ulps of s, about 2e-7; the strict double rounds as a GPU does)
np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-4, atol=5e-7)

x = em.constant(1.0)

v0 = em.Variable(2.0)
v1 = em.Variable(2.0)

with tape.GradientTape(persistent=True) as t:
  t.watch(x)
  if x > 0.0:
    result = v0
  else:
    result = v1**2

dv0, dv1 = t.gradient(result, [v0, v1])

print(dv0)
print(dv1)
assert float(dv0) == 1.0 and dv1 is None

dx = t.gradient(result, x)

print(dx)
assert dx is None

x = em.Variable(2.)
y = em.Variable(3.)

with tape.GradientTape() as t:
  z = y * y
unconnected = t.gradient(z, x)
print(unconnected)
assert unconnected is None

x = em.Variable(2.0)

seen = []
for epoch in range(2):  # noqa: B007
  with tape.GradientTape() as t:
    y = x+1

  seen.append(t.gradient(y, x))
  print(type(x).__name__, ":", seen[-1])
  x = x + 1   # This should be `x.assign_add(1)`
assert float(seen[0]) == 1.0 and seen[1] is None, seen

x = em.Variable([[1.0, 2.0],
                 [3.0, 4.0]], dtype=em.float32)

with tape.GradientTape() as t:
  x2 = x**2

  # This step is calculated with NumPy
  y = np.mean(x2, axis=0)

  # Like most ops, reduce_mean will cast the NumPy array to a constant tensor
  # using `tf.convert_to_tensor`.
  y = em.reduce_mean(y, axis=0)

through_numpy = t.gradient(y, x)
print(through_numpy)
assert through_numpy is None

x = em.constant(10)

with warnings.catch_warnings(record=True) as caught:
  warnings.simplefilter("always")
  with tape.GradientTape() as g:
    g.watch(x)
    y = x * x

  print(g.gradient(y, x))
assert caught, "an integer source must be warned about (TF logs a warning)"

x0 = em.Variable(3.0)
x1 = em.Variable(0.0)

with tape.GradientTape() as t:
  # Update x1 = x1 + x0.
  x1.assign_add(x0)
  # The tape starts recording from x1.
  y = x1**2   # y = (x1 + x0)**2

# This doesn't work.
after_assign = t.gradient(y, x0)
print(after_assign)   # dy/dx0 = 2*(x1 + x0)
assert after_assign is None

x = em.Variable([2., 2.])
y = em.Variable(3.)

with tape.GradientTape() as t:
  z = y**2
zero = t.gradient(z, x, unconnected_gradients="zero")
print(zero)
np.testing.assert_array_equal(zero.numpy(), [0.0, 0.0])

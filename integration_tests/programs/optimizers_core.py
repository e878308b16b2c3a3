"""Port of tensorflow/docs site/en/guide/core/optimizers_core.ipynb ("Optimizers with Core
APIs"): gradient descent, gradient descent with momentum and Adam written by hand as
modules with an apply_gradients method, each tested for convergence from x = 2 on the
one-variable loss L(x) = 2x^4 + 3x^3 + 2 (a saddle point at 0, the global minimum at -9/8)
with learning rates 1e-3, 1e-2 and 1e-1 (a convergence test with a GradientTape, a stop
when an update leaves x unchanged and a stop when the gradient is NaN), and the parameter
paths over a contour plot of the log loss.

Upstream: https://github.com/tensorflow/docs/blob/bab3160b5dbe496dbc8d700a825f026e423169d0/site/en/guide/core/optimizers_core.ipynb
Changed: names only (tf.__version__, tf.random.set_seed/linspace/cast/Variable/zeros/square/
sqrt/range/meshgrid/math.is_nan/math.log -> em.*, tf.GradientTape -> tape.GradientTape, tf.Module
-> nn.Layer, which docs/guide/coming-from.md maps it to), except the GAP below. The plots
(matplotlib) are dropped; what they would show is asserted, and viz_paths returns what it
computes (its grid, the log loss and the paths) to be checked. The program needs no data:
the loss function is the data. Sizes: upstream's (2,000 iterations at most per test, nine
tests) are kept by default and with EMBER_PROGRAMS_FULL=1; EMBER_PROGRAMS_SHORT=1 (the
strict-GPU run) stops each test after 300 iterations (max_iters=300) and checks no
threshold. A numpy seed is added beside upstream's tf.random.set_seed(22) (nothing here is
random).
Added: x_vals against numpy; the loss and the tape's gradient on the 201 points against
numpy (8x^3 + 9x^2 in float64), and the gradient zero at the saddle point and at the
minimum, with the loss there 2 and 0.93212890625; one apply_gradients of each optimizer
against its formula (gradient descent: x - lr * g; momentum over two steps with its
`change`; Adam over three steps against numpy's moments, bias corrections and t); every
convergence test's whole parameter path against an independent numpy float32 run of the
same update rules (the gradient written out as 8x^3 + 9x^2), the same outcome (converged,
exploded at the same iteration with an empty path, or stopped at max_iters) and, for the
two that converge, the iteration count within 5% of numpy's (the stop is an exact float
equality, so the last ulps of rounding move it by a few iterations); viz_paths' grid
(201 x 2099 for 'xy' indexing), its log loss against numpy, and the paths and markers it
plots. Thresholds (not in the short run), each a result upstream's prose states: gradient
descent with learning rates 1e-3 and 1e-2 is stuck on the plateau by the saddle point (x
between 0 and 0.1 after 2,000 iterations, far from the minimum) and explodes with 1e-1 (as
does momentum with 1e-1); momentum with 1e-2 and Adam with 1e-1 converge to the global
minimum (|x + 9/8| < 1e-3, where they start from x = 2 and loss 58; a sign error, a
missing bias correction or a wrong moment would not land there), and Adam with 1e-3 and
1e-2 has not converged after 2,000 iterations (its steps are about lr in size).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value or behaviour and no error):
1. (silent, harmless here) em.linspace(-2, 2, 201) is float32; TensorFlow's linspace gives
float64 for int start and stop (its delta is an int32 true division) and in general the
dtype of start (em.linspace of a float64 start is float32 too: ember takes a `dtype`
argument, float32 by default, and ignores the inputs' dtype; as mlp_core.py's GAP 4);
upstream casts to float32 on the next line.
Also seen, with no effect on this program: an nn.Layer that has not called
super().__init__() keeps a list assigned in __init__ as a plain list, so variables appended
to it later are not tracked (Adam's slots: adam.variables stays []; tf.Module wraps the list
and lists them until apply_gradients replaces them with tensors); and ember's ops let
numpy's RuntimeWarnings (overflow in power, invalid value in add) reach stderr when the
exploding runs overflow, where TensorFlow warns of nothing.
"""

import os

import numpy as np

import ember.core as em
from ember import nn
from ember import tape as tape_lib

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
MAX_ITERS = 300 if SHORT else 2000  # upstream: 2000 (convergence_test's and viz_paths' default)
np.random.seed(0)

# ---------------------------------------------------------------------------------------
# ## Setup
# (import matplotlib; plt; rcParams['figure.figsize'] = [9, 6]: dropped with the plots)

print(em.__version__)
# set random seed for reproducible results
em.random.set_seed(22)


# ## Gradient descent

class GradientDescent(nn.Layer):

  def __init__(self, learning_rate=1e-3):
    # Initialize parameters
    self.learning_rate = learning_rate
    self.title = f"Gradient descent optimizer: learning rate={self.learning_rate}"

  def apply_gradients(self, grads, vars):
    # Update variables
    for grad, var in zip(grads, vars):
      var.assign_sub(self.learning_rate*grad)


x_vals = em.linspace(-2, 2, 201)
# GAP 1 (silent): TF's x_vals is float64 here (int start and stop); ember's is float32
assert x_vals.dtype == em.float32
x_vals = em.cast(x_vals, em.float32)


def loss(x):
  return 2*(x**4) + 3*(x**3) + 2


def grad(f, x):
  with tape_lib.GradientTape() as tape:
    tape.watch(x)
    result = f(x)
  return tape.gradient(result, x)


# The plot of the loss and its gradient is dropped; what it shows (Added):
_x = np.linspace(-2, 2, 201)
assert x_vals.shape == (201,) and x_vals.dtype == em.float32
np.testing.assert_allclose(x_vals.numpy(), _x, rtol=0, atol=1e-6)
_xf = x_vals.numpy().astype(np.float64)
loss_vals, grad_vals = loss(x_vals), grad(loss, x_vals)
assert loss_vals.shape == grad_vals.shape == (201,)
assert loss_vals.dtype == grad_vals.dtype == em.float32
np.testing.assert_allclose(loss_vals.numpy(), 2 * _xf**4 + 3 * _xf**3 + 2, rtol=1e-6, atol=1e-6)
np.testing.assert_allclose(grad_vals.numpy(), 8 * _xf**3 + 9 * _xf**2, rtol=1e-5, atol=1e-5)
assert loss(0) == 2 and loss(-9/8) == 0.93212890625  # the inflection point and the minimum
assert float(grad(loss, em.constant(0.))) == 0.0
assert abs(float(grad(loss, em.constant(-9/8)))) < 1e-5
assert abs(float(x_vals[int(np.argmin(loss_vals.numpy()))]) + 1.12) < 1e-6  # the grid's minimum
assert float(grad(loss, em.Variable(2.))) == 100.0  # the steep start: 8 * 8 + 9 * 4


def convergence_test(optimizer, loss_fn, grad_fn=grad, init_val=2., max_iters=MAX_ITERS):
  # Function for optimizer convergence test
  print(optimizer.title)
  print("-------------------------------")
  # Initializing variables and structures
  x_star = em.Variable(init_val)
  param_path = []
  converged = False

  for iter in range(1, max_iters + 1):
    x_grad = grad_fn(loss_fn, x_star)

    # Case for exploding gradient
    if em.math.is_nan(x_grad):
      print(f"Gradient exploded at iteration {iter}\n")
      outcomes.append(("exploded", iter))  # Added
      return []

    # Updating the variable and storing its old-version
    x_old = x_star.numpy()
    optimizer.apply_gradients([x_grad], [x_star])
    param_path.append(x_star.numpy())

    # Checking for convergence
    if x_star == x_old:
      print(f"Converged in {iter} iterations\n")
      converged = True
      break

  # Print early termination message
  if not converged:
    print(f"Exceeded maximum of {max_iters} iterations. Test terminated.\n")
  outcomes.append(("converged" if converged else "max_iters", len(param_path)))  # Added
  return param_path


# ---------------------------------------------------------------------------------------
# Added: an independent numpy float32 run of each update rule (the gradient written out)
def np_convergence_test(update, init_val=2., max_iters=MAX_ITERS):
  x, path = np.float32(init_val), []
  with np.errstate(over="ignore", invalid="ignore"):
    for it in range(1, max_iters + 1):
      g = np.float32(8) * x**3 + np.float32(9) * x**2
      if np.isnan(g):
        return ("exploded", it), []
      old, x = x, update(x, g)
      path.append(x)
      if x == old:
        return ("converged", it), path
  return ("max_iters", max_iters), path


def np_gd(lr):
  return lambda x, g: x - np.float32(lr) * g


def np_momentum(lr, p=0.7):
  state = {"change": np.float32(0)}

  def update(x, g):
    state["change"] = np.float32(lr) * g + np.float32(p) * state["change"]
    return x - state["change"]
  return update


def np_adam(lr, b1=0.9, b2=0.999, ep=1e-7):
  state = {"v": np.float32(0), "s": np.float32(0), "t": 1.}

  def update(x, g):
    state["v"] = np.float32(b1) * state["v"] + np.float32(1 - b1) * g
    state["s"] = np.float32(b2) * state["s"] + np.float32(1 - b2) * g * g
    v_bc = state["v"] / np.float32(1 - b1**state["t"])
    s_bc = state["s"] / np.float32(1 - b2**state["t"])
    state["t"] += 1.
    return x - np.float32(lr) * (v_bc / (np.sqrt(s_bc) + np.float32(ep)))
  return update


def check_paths(name, param_map, np_update):
  """Each test's path and outcome against numpy's run of the same rule."""
  for learning_rate, outcome in zip(param_map, outcomes[-3:]):
    path = param_map[learning_rate]
    np_outcome, np_path = np_convergence_test(np_update(learning_rate))
    assert outcome[0] == np_outcome[0], (name, learning_rate, outcome, np_outcome)
    if outcome[0] == "exploded":
      assert path == [] and outcome[1] == np_outcome[1], (name, learning_rate, outcome, np_outcome)
    elif outcome[0] == "max_iters":
      assert len(path) == MAX_ITERS
    else:  # the stop is an exact float equality: its iteration moves with the last ulps
      assert abs(outcome[1] - np_outcome[1]) <= 0.05 * np_outcome[1], (name, outcome, np_outcome)
    assert all(type(p) is np.float32 for p in path)
    n = min(len(path), len(np_path))
    np.testing.assert_allclose(np.array(path[:n], np.float64), np.array(np_path[:n], np.float64),
                               rtol=1e-4, atol=1e-5, err_msg=f"{name} {learning_rate}")
    print(f"  {name} lr={learning_rate}: {outcome} (numpy: {np_outcome})")


outcomes = []
# ---------------------------------------------------------------------------------------

# Added: one apply_gradients against its formula
_v = em.Variable(2.)
GradientDescent(learning_rate=0.1).apply_gradients([em.constant(100.)], [_v])
assert _v.dtype == em.float32 and abs(float(_v) - (2. - 0.1 * 100.)) < 1e-6

param_map_gd = {}
learning_rates = [1e-3, 1e-2, 1e-1]
for learning_rate in learning_rates:
  param_map_gd[learning_rate] = (convergence_test(
      GradientDescent(learning_rate=learning_rate), loss_fn=loss))
check_paths("gradient descent", param_map_gd, np_gd)  # Added


def viz_paths(param_map, x_vals, loss_fn, title, max_iters=MAX_ITERS):
  # Creating a controur plot of the loss function
  t_vals = em.range(1., max_iters + 100.)
  t_grid, x_grid = em.meshgrid(t_vals, x_vals)
  loss_grid = em.math.log(loss_fn(x_grid))
  # plt.pcolormesh(t_vals, x_vals, loss_grid, vmin=0, shading='nearest') is dropped
  colors = ['r', 'w', 'c']
  lines = []  # Added: what the plot would draw
  # Plotting the parameter paths over the contour plot
  for i, learning_rate in enumerate(param_map):
    param_path = param_map[learning_rate]
    if len(param_path) > 0:
      x_star = param_path[-1]
      # plt.plot(t_vals[:len(param_path)], param_path, c=colors[i]) and
      # plt.plot(len(param_path), x_star, marker='o', c=colors[i],
      #          label = f"x*: learning rate={learning_rate}") are dropped; what they draw:
      lines.append((t_vals[:len(param_path)], param_path, colors[i],
                    (len(param_path), x_star), f"x*: learning rate={learning_rate}"))
  # (plt.xlabel, ylabel, legend and title(f"{title} parameter paths") are dropped)
  return t_vals, t_grid, x_grid, loss_grid, lines  # Added: returned to be checked


def check_viz(param_map, viz):  # Added
  t_vals, t_grid, x_grid, loss_grid, lines = viz
  n_t = MAX_ITERS + 99
  assert t_vals.shape == (n_t,) and t_vals.dtype == em.float32
  np.testing.assert_array_equal(t_vals.numpy(), np.arange(1., MAX_ITERS + 100.))
  assert t_grid.shape == x_grid.shape == loss_grid.shape == (201, n_t)  # 'xy': rows follow x
  np.testing.assert_array_equal(t_grid.numpy(), np.broadcast_to(t_vals.numpy(), (201, n_t)))
  np.testing.assert_array_equal(x_grid.numpy(), np.broadcast_to(x_vals.numpy()[:, None], (201, n_t)))
  np.testing.assert_allclose(loss_grid.numpy()[:, 0], np.log(2 * _xf**4 + 3 * _xf**3 + 2),
                             rtol=1e-5, atol=1e-6)
  np.testing.assert_array_equal(loss_grid.numpy(), np.broadcast_to(loss_grid.numpy()[:, :1],
                                                                   (201, n_t)))
  assert -0.071 < float(em.reduce_min(loss_grid)) < -0.070  # log(0.9321...) at x = -1.12
  drawn = [lr for lr in param_map if len(param_map[lr]) > 0]
  assert len(lines) == len(drawn)
  for (ts, path, color, marker, label), lr in zip(lines, drawn):
    assert ts.shape == (len(path),) and float(ts[-1]) == len(path)
    assert marker == (len(path), path[-1]) and label == f"x*: learning rate={lr}"
    assert color == ['r', 'w', 'c'][list(param_map).index(lr)]


check_viz(param_map_gd, viz_paths(param_map_gd, x_vals, loss, "Gradient descent"))
if not SHORT:  # Added: what the prose says of gradient descent
  for lr in (1e-3, 1e-2):  # stuck on the plateau by the saddle point
    assert outcomes[learning_rates.index(lr)][0] == "max_iters"
    assert 0 < param_map_gd[lr][-1] < 0.1, (lr, param_map_gd[lr][-1])
  assert outcomes[2] == ("exploded", 6) and param_map_gd[1e-1] == []  # too large a step


# ## Gradient descent with momentum

class Momentum(nn.Layer):

  def __init__(self, learning_rate=1e-3, momentum=0.7):
    # Initialize parameters
    self.learning_rate = learning_rate
    self.momentum = momentum
    self.change = 0.
    self.title = f"Gradient descent optimizer: learning rate={self.learning_rate}"

  def apply_gradients(self, grads, vars):
    # Update variables
    for grad, var in zip(grads, vars):
      curr_change = self.learning_rate*grad + self.momentum*self.change
      var.assign_sub(curr_change)
      self.change = curr_change


# Added: two steps against the rule (change_1 = lr g1; change_2 = lr g2 + p change_1)
_v, _m = em.Variable(2.), Momentum(learning_rate=0.01)
_m.apply_gradients([em.constant(100.)], [_v])
assert abs(float(_v) - 1.0) < 1e-6 and abs(float(_m.change) - 1.0) < 1e-6
_m.apply_gradients([em.constant(17.)], [_v])
assert abs(float(_m.change) - (0.01 * 17. + 0.7 * 1.0)) < 1e-6
assert abs(float(_v) - (1.0 - 0.87)) < 1e-6 and _v.dtype == em.float32

param_map_mtm = {}
learning_rates = [1e-3, 1e-2, 1e-1]
for learning_rate in learning_rates:
  param_map_mtm[learning_rate] = (convergence_test(
      Momentum(learning_rate=learning_rate),
      loss_fn=loss, grad_fn=grad))
check_paths("momentum", param_map_mtm, np_momentum)  # Added

check_viz(param_map_mtm, viz_paths(param_map_mtm, x_vals, loss, "Momentum"))
if not SHORT:  # Added: momentum moves past the plateau to the minimum with 1e-2
  assert outcomes[3][0] == "max_iters" and 0 < param_map_mtm[1e-3][-1] < 0.1
  assert outcomes[4][0] == "converged" and abs(param_map_mtm[1e-2][-1] + 9 / 8) < 1e-3
  assert outcomes[5] == ("exploded", 6) and param_map_mtm[1e-1] == []


# ## Adaptive moment estimation (Adam)

class Adam(nn.Layer):

    def __init__(self, learning_rate=1e-3, beta_1=0.9, beta_2=0.999, ep=1e-7):
      # Initialize the Adam parameters
      self.beta_1 = beta_1
      self.beta_2 = beta_2
      self.learning_rate = learning_rate
      self.ep = ep
      self.t = 1.
      self.v_dvar, self.s_dvar = [], []
      self.title = f"Adam: learning rate={self.learning_rate}"
      self.built = False

    def apply_gradients(self, grads, vars):
      # Set up moment and RMSprop slots for each variable on the first call
      if not self.built:
        for var in vars:
          v = em.Variable(em.zeros(shape=var.shape))
          s = em.Variable(em.zeros(shape=var.shape))
          self.v_dvar.append(v)
          self.s_dvar.append(s)
        self.built = True
      # Perform Adam updates
      for i, (d_var, var) in enumerate(zip(grads, vars)):
        # Moment calculation
        self.v_dvar[i] = self.beta_1*self.v_dvar[i] + (1-self.beta_1)*d_var
        # RMSprop calculation
        self.s_dvar[i] = self.beta_2*self.s_dvar[i] + (1-self.beta_2)*em.square(d_var)
        # Bias correction
        v_dvar_bc = self.v_dvar[i]/(1-(self.beta_1**self.t))
        s_dvar_bc = self.s_dvar[i]/(1-(self.beta_2**self.t))
        # Update model variables
        var.assign_sub(self.learning_rate*(v_dvar_bc/(em.sqrt(s_dvar_bc) + self.ep)))
      # Increment the iteration counter
      self.t += 1.


# Added: the first step is a smoothed sign (v_bc / sqrt(s_bc) = g / |g|): x moves by lr
_v = em.Variable(2.)
Adam(learning_rate=0.1).apply_gradients([em.constant(100.)], [_v])
assert abs(float(_v) - (2. - 0.1 / (1 + 1e-9))) < 1e-6
# Added: three steps on two variables against numpy's moments, bias corrections and t
_adam = Adam(learning_rate=0.1)
_w, _b = em.Variable([[1., -2.], [0.5, 3.]]), em.Variable([0., 1., -1.])
_np_vars = [_w.numpy().astype(np.float64), _b.numpy().astype(np.float64)]
_np_v = [np.zeros((2, 2)), np.zeros(3)]
_np_s = [np.zeros((2, 2)), np.zeros(3)]
_steps = [([[0.5, -1.], [2., 0.]], [4., -0.25, 1e-3]), ([[-3., 1.], [0.1, 2.]], [4., 0.5, 0.]),
          ([[0.5, -1.], [2., 0.]], [-1., -0.25, 1e-3])]
for _t, _gs in enumerate(_steps, start=1):
  _adam.apply_gradients([em.constant(g) for g in _gs], [_w, _b])
  assert _adam.built and _adam.t == _t + 1.
  for i, (g, var) in enumerate(zip(_gs, (_w, _b))):
    g = np.asarray(g, np.float64)
    _np_v[i] = 0.9 * _np_v[i] + 0.1 * g
    _np_s[i] = 0.999 * _np_s[i] + 0.001 * g * g
    _np_vars[i] = _np_vars[i] - 0.1 * (_np_v[i] / (1 - 0.9**_t)) / (
        np.sqrt(_np_s[i] / (1 - 0.999**_t)) + 1e-7)
    np.testing.assert_allclose(var.numpy(), _np_vars[i], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_adam.v_dvar[i].numpy(), _np_v[i], rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(_adam.s_dvar[i].numpy(), _np_s[i], rtol=1e-5, atol=1e-12)
    assert var.dtype == _adam.v_dvar[i].dtype == _adam.s_dvar[i].dtype == em.float32
assert len(_adam.v_dvar) == len(_adam.s_dvar) == 2

param_map_adam = {}
learning_rates = [1e-3, 1e-2, 1e-1]
for learning_rate in learning_rates:
  param_map_adam[learning_rate] = (convergence_test(
      Adam(learning_rate=learning_rate), loss_fn=loss))
check_paths("Adam", param_map_adam, np_adam)  # Added

check_viz(param_map_adam, viz_paths(param_map_adam, x_vals, loss, "Adam"))
if not SHORT:  # Added: slow with small learning rates, past the plateau to the minimum with 1e-1
  assert [o[0] for o in outcomes[6:]] == ["max_iters", "max_iters", "converged"], outcomes[6:]
  assert 0.5 < param_map_adam[1e-3][-1] < 1.0  # steps of about lr: 2 - 2000 * 1e-3 < x
  assert abs(param_map_adam[1e-1][-1] + 9 / 8) < 1e-3, param_map_adam[1e-1][-1]
  for lr in learning_rates:  # no explosion: every step is at most about lr
    assert np.abs(np.diff([2.] + param_map_adam[lr])).max() < 5 * lr
  assert len(param_map_adam[1e-1]) > outcomes[4][1]  # slower than momentum at 1e-2

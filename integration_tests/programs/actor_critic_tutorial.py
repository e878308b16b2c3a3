"""Port of tensorflow/docs site/en/tutorials/reinforcement_learning/actor_critic.ipynb
("Playing CartPole with the Actor-Critic method": a subclassed Keras model, one shared
Dense(128, relu) layer with a two-logit actor head and a one-unit critic head, trained one
episode per call of a tf.function train_step: run_episode loops `for t in tf.range(...)`
with a `break`, collects the chosen actions' probabilities, the critic's values and the
rewards in tf.TensorArrays, samples with tf.random.categorical and steps the environment
through tf.numpy_function; get_expected_return computes standardised discounted returns in
another TensorArray loop; the loss is -sum(log pi * advantage) plus a summed Huber loss,
minimised with Adam(0.01) until the mean reward of the last 100 episodes passes 475).

Upstream: https://github.com/tensorflow/docs/blob/16f268f6b2168fd5460be5ad67f2d6aea7daa518/site/en/tutorials/reinforcement_learning/actor_critic.ipynb
Changed: names only (tensorflow -> ember.core as em, tf.keras.Model -> nn.Model,
tensorflow.keras.layers -> ember.nn.layers, tf.keras.optimizers.Adam/Optimizer ->
nn.optimizers.*, tf.keras.losses.Huber -> nn.losses.Huber, tf.GradientTape ->
tape_lib.GradientTape (ember.tape imported as tape_lib, since upstream names its tape
`tape`), tf.function -> graph.function, tf.TensorArray/range/expand_dims/squeeze/cast/
shape/constant/bool/float32/int32 -> em.*, tf.math.log/reduce_mean/reduce_std/reduce_sum
-> em.*, tf.random.categorical -> em.random.categorical, tf.nn.softmax ->
em.nn_ops.softmax); the kept structure is upstream's, graph-mode loops and all. Dropped:
the pip/apt install cells, the IPython display import and the tensorflow_docs embed of the
GIF (neither is installed; the GIF is still written). gym is not installed here, so a
minimal CartPole-v1 below stands in for `import gym`: gym 0.26.2's
classic_control/cartpole.py (Sutton's cart-pole equations and constants, Euler
integration, tau 0.02; terminated when |x| > 2.4 or |theta| > 12 degrees; reward 1.0 on
every step including the fall, 0.0 after it; the float64 state reset uniformly in
[-0.05, 0.05]; a float32 observation; step() asserting Discrete(2).contains(action)), the
TimeLimit wrapper of its registration (truncated after 500 steps), OrderEnforcing's
step-before-reset check, gym.Env's seeding (reset(seed=s) makes
Generator(PCG64(SeedSequence(s))), else OS entropy) and, for the visualisation, an
"rgb_array" render() that draws the cart, pole and track with numpy (gym's uses pygame).
Upstream never seeds the environment (its gym 0.26 code dropped env.seed(seed)), so an
added env.reset(seed=seed) follows its tf/np seeds, and render_env is seeded likewise.
Reduced: the loop stops once the mean reward of the last 100 episodes (upstream's
running_reward) passes 150 with at least 100 episodes run, or after 400 episodes
(upstream: 475, 10,000 episodes); this seed passes 150 at episode 335 (13 s on one core),
seeds 0 to 5 at episodes 100 to 315 (11 to 27 s); EMBER_PROGRAMS_FULL=1 restores 475 and
10,000 episodes (solved here at episode 413, 476.9, in 30 s of CPU);
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 5 episodes, no thresholds.
Added: the stand-in checked against gym's numbers (the seeded reset equals
default_rng(42)'s draws, one step worked out by hand from the equations, a fall
terminating an episode with reward 1.0 and 0.0 after it, Discrete(2) refusing 2 and a
float, a balancing controller truncated at exactly 500 steps); the model's output shapes
and dtypes and Keras's weights (shapes, glorot_uniform limits, zero biases); env_step
through em.numpy_function (numpy values in) against a second environment seeded alike (state,
float32 (4,), int32 scalar reward and done); get_expected_return against numpy's
sum_t' gamma^(t'-t) r_t', with and without standardising (population std + eps);
compute_loss against numpy; one episode run eagerly under a tape as train_step runs it:
the probabilities of the actions taken and the critic's values against a numpy forward
pass over the states the environment gave, all rewards 1, the loss and all six gradients
against a numpy backward pass (the gradient reaches the critic both through the advantage
and through the Huber loss, as in TensorFlow, where neither is stopped); train_step's first
call against numpy: its reward is the episode's length and the weights after it are
Keras's first Adam step (lr * sqrt(1 - beta_2) / (1 - beta_1) * m / (sqrt(v) + 1e-7)) on
numpy's gradients of that episode; every episode's reward equals the number of
environment steps it took; running_reward against the last 100 rewards; and the
thresholds: the mean reward of the last 100 episodes passes 150 (a random policy lasts
about 22 steps, this run's first 10 episodes average 24: the trained policy must keep the
pole up about 7 times longer for 100 episodes in a row, which a broken gradient, sampler
or update would not), and the greedy policy's rendered episode lasts over 100 steps
(untrained networks of 10 seeds: 8 to 72; trained, seeds 0 to 5: 113 to 500), with one
GIF frame per 10 steps.
Also added: how ember runs train_step. TensorFlow's AutoGraph turns the `for t in
tf.range` loop and its `if ...: break` into a tf.while_loop: one graph, traced once. ember has
no AutoGraph (by design: docs/guide/graphs.md): the `break`'s bool(done) at every step is a
guard, so a replay of an episode that ends at another step fails it and traces again, and
after 4 failed replays train_step runs eagerly with a warning. The first call traces but
keeps no trace (it makes Adam's slot variables). Checked: each call traces or not exactly as
that rule says from the episode lengths, and this seed traces 5 times (episodes 0 to 4, of
18, 18, 29, 47 and 26 steps; the first kept trace is episode 1's), then runs eagerly from
episode 5 on (25 steps: the 4th failed replay), with ember's warning (printed after the
loop). Replays give an eager run's rewards (graph.run_functions_eagerly(True): the same
episodes, for this seed and for seeds 4 to 15, some of which replay calls between traces).
Found: nothing in the end. Fixed in ember since the port was written: em.numpy_function
(GAP 1, tf.numpy_function: AttributeError) now exists, numpy arrays in and no gradient, so
train_step, which calls it under its GradientTape, traces and replays (the port's stand-in,
em.py_function on the inputs' numpy values, is differentiable, and a traced function that
calls a py_function under a tape cannot be replayed: train_step ran eagerly on every call);
a Keras loss object now takes nn.losses.Reduction's values (TF 1's
tf.compat.v1.losses.Reduction, whose SUM is "weighted_sum") as the Keras reductions they
mean, where it raised ValueError "unknown reduction 'weighted_sum'" (GAP 2: SUM is "sum",
as tf.keras.losses.Reduction.SUM). Upstream's lines are restored.
"""

import collections
import math
import os
import statistics
import warnings
from typing import Any, List, Sequence, Tuple  # noqa: F401, UP035

import numpy as np
import tqdm
from matplotlib import pyplot as plt  # noqa: F401

import ember.core as em
from ember import graph, nn
from ember import tape as tape_lib
from ember.nn import layers

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)

"""
## A minimal CartPole-v1 (gym 0.26.2: classic_control/cartpole.py, TimeLimit, seeding)
"""


class Discrete:  # gym.spaces.Discrete(n) (start 0): its n and contains()
    def __init__(self, n):
        self.n = n

    def contains(self, x) -> bool:
        if isinstance(x, int):
            as_int = x
        elif isinstance(x, (np.generic, np.ndarray)) and (
            np.issubdtype(x.dtype, np.integer) and x.shape == ()
        ):
            as_int = int(x)
        else:
            return False
        return 0 <= as_int < self.n


def np_random(seed=None):  # gym.utils.seeding.np_random
    if seed is not None and not (isinstance(seed, int) and 0 <= seed):
        raise ValueError(f"Seed must be a non-negative integer or omitted, not {seed}")
    seed_seq = np.random.SeedSequence(seed)
    np_seed = seed_seq.entropy
    rng = np.random.Generator(np.random.PCG64(seed_seq))
    return rng, np_seed


class CartPoleEnv:  # gym.envs.classic_control.cartpole.CartPoleEnv
    def __init__(self, render_mode=None):
        self.gravity = 9.8
        self.masscart = 1.0
        self.masspole = 0.1
        self.total_mass = self.masspole + self.masscart
        self.length = 0.5  # actually half the pole's length
        self.polemass_length = self.masspole * self.length
        self.force_mag = 10.0
        self.tau = 0.02  # seconds between state updates
        self.kinematics_integrator = "euler"
        # Angle at which to fail the episode
        self.theta_threshold_radians = 12 * 2 * math.pi / 360
        self.x_threshold = 2.4
        self.action_space = Discrete(2)
        self.render_mode = render_mode
        self.screen_width = 600
        self.screen_height = 400
        self.state = None
        self.steps_beyond_terminated = None
        self._np_random = None

    @property
    def np_random(self):  # gym.Env.np_random: from OS entropy unless reset(seed=) was given
        if self._np_random is None:
            self._np_random, _ = np_random()
        return self._np_random

    def step(self, action):
        err_msg = f"{action!r} ({type(action)}) invalid"
        assert self.action_space.contains(action), err_msg
        assert self.state is not None, "Call reset before using step method."
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta = math.cos(theta)
        sintheta = math.sin(theta)
        temp = (force + self.polemass_length * theta_dot**2 * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta**2 / self.total_mass))
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        x = x + self.tau * x_dot  # kinematics_integrator == "euler"
        x_dot = x_dot + self.tau * xacc
        theta = theta + self.tau * theta_dot
        theta_dot = theta_dot + self.tau * thetaacc
        self.state = (x, x_dot, theta, theta_dot)
        terminated = bool(
            x < -self.x_threshold
            or x > self.x_threshold
            or theta < -self.theta_threshold_radians
            or theta > self.theta_threshold_radians)
        if not terminated:
            reward = 1.0
        elif self.steps_beyond_terminated is None:
            # Pole just fell!
            self.steps_beyond_terminated = 0
            reward = 1.0
        else:  # gym warns here: stepping after termination is undefined behaviour
            self.steps_beyond_terminated += 1
            reward = 0.0
        return np.array(self.state, dtype=np.float32), reward, terminated, False, {}

    def reset(self, *, seed=None, options=None):
        if seed is not None:  # gym.Env.reset
            self._np_random, seed = np_random(seed)
        self.state = self.np_random.uniform(low=-0.05, high=0.05, size=(4,))
        self.steps_beyond_terminated = None
        return np.array(self.state, dtype=np.float32), {}

    def render(self):  # "rgb_array" only: the cart, the pole and the track drawn with numpy
        assert self.render_mode == "rgb_array" and self.state is not None
        scale = self.screen_width / (self.x_threshold * 2)
        img = np.full((self.screen_height, self.screen_width, 3), 255, np.uint8)
        cartx, carty = int(self.state[0] * scale + self.screen_width / 2.0), 100
        img[carty, :] = 0  # the track
        img[carty - 15:carty + 15, max(cartx - 25, 0):max(cartx + 25, 0)] = 0  # the cart
        along = np.linspace(0.0, scale * 2 * self.length, 200)
        px = np.clip((cartx + along * np.sin(self.state[2])).astype(int), 0, self.screen_width - 1)
        py = np.clip((carty + 7 + along * np.cos(self.state[2])).astype(int), 0,
                     self.screen_height - 1)
        img[py, px] = (202, 152, 101)  # the pole
        return img[::-1].copy()  # pygame's y axis points down


class Env:  # gym.make's wrappers: TimeLimit, and OrderEnforcing's step-before-reset check
    def __init__(self, env, max_episode_steps):
        self.env = env
        self.action_space = env.action_space
        self._max_episode_steps = max_episode_steps
        self._elapsed_steps = None

    def step(self, action):
        assert self._elapsed_steps is not None, "Cannot call env.step() before calling env.reset()"
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._elapsed_steps += 1
        if self._elapsed_steps >= self._max_episode_steps:
            truncated = True
        return observation, reward, terminated, truncated, info

    def reset(self, **kwargs):
        self._elapsed_steps = 0
        return self.env.reset(**kwargs)

    def render(self):
        return self.env.render()


def _make(env_id, render_mode=None):
    assert env_id == "CartPole-v1", env_id  # registered with max_episode_steps=500
    return Env(CartPoleEnv(render_mode=render_mode), max_episode_steps=500)


gym = collections.namedtuple("gym", "make Env")(_make, Env)  # the stand-in for `import gym`

# added: the stand-in against gym's numbers: seeding, one step by hand, termination, limit
_env = gym.make("CartPole-v1")
_s0, _info = _env.reset(seed=42)
assert _s0.dtype == np.float32 and _s0.shape == (4,) and _info == {}
np.testing.assert_array_equal(  # gym 0.26: Generator(PCG64(SeedSequence(seed)))
    _s0, np.random.default_rng(42).uniform(-0.05, 0.05, size=4).astype(np.float32))
_x, _xd, _th, _thd = _env.env.state  # float64, as gym keeps it
_s1, _r, _term, _trunc, _ = _env.step(np.int64(1))
_tmp = (10.0 + 0.05 * _thd ** 2 * np.sin(_th)) / 1.1
_thacc = (9.8 * np.sin(_th) - np.cos(_th) * _tmp) / (0.5 * (4 / 3 - 0.1 * np.cos(_th) ** 2 / 1.1))
_xacc = _tmp - 0.05 * _thacc * np.cos(_th) / 1.1
np.testing.assert_allclose(_s1, np.float32([_x + 0.02 * _xd, _xd + 0.02 * _xacc,
                                            _th + 0.02 * _thd, _thd + 0.02 * _thacc]))
assert (_r, _term, _trunc) == (1.0, False, False) and _s1.dtype == np.float32
_n = 1
while not _term:  # always pushing right: the pole falls to the left within a few dozen steps
    _s, _r, _term, _trunc, _ = _env.step(1)
    _n += 1
assert _r == 1.0 and not _trunc and 5 < _n < 100 and _s[2] < -12 * 2 * math.pi / 360, (_n, _s)
assert _env.step(1)[1] == 0.0  # a step after the fall earns nothing
assert not _env.action_space.contains(2) and not _env.action_space.contains(np.float32(1))
_s, _n, _term, _trunc = _env.reset()[0], 0, False, False
while not (_term or _trunc):  # pushing the way the pole turns: only the 500-step limit ends it
    _s, _r, _term, _trunc, _ = _env.step(int(_s[2] + 0.5 * _s[3] > 0))
    _n += 1
assert (_n, _term, _trunc) == (500, False, True), (_n, _term, _trunc)

"""
## Setup
"""

# Create the environment
env = gym.make("CartPole-v1")

# Set seed for experiment reproducibility
seed = 42
em.random.set_seed(seed)
np.random.seed(seed)
env.reset(seed=seed)  # added: gym 0.26 seeds at reset; upstream's env is never seeded

# Small epsilon value for stabilizing division operations
eps = np.finfo(np.float32).eps.item()

"""
## The model
"""


class ActorCritic(nn.Model):
  """Combined actor-critic network."""

  def __init__(
      self,
      num_actions: int,
      num_hidden_units: int):
    """Initialize."""
    super().__init__()

    self.common = layers.Dense(num_hidden_units, activation="relu")
    self.actor = layers.Dense(num_actions)
    self.critic = layers.Dense(1)

  def call(self, inputs: em.Tensor) -> Tuple[em.Tensor, em.Tensor]:  # noqa: UP006
    x = self.common(inputs)
    return self.actor(x), self.critic(x)


num_actions = env.action_space.n  # 2
num_hidden_units = 128

model = ActorCritic(num_actions, num_hidden_units)

"""
## Train the agent
"""

# added: a log of what each env_step call took and gave, for the checks below
episode_log = []


# Wrap Gym's `env.step` call as an operation in a TensorFlow function.
# This would allow it to be included in a callable TensorFlow graph.

@em.numpy_function(Tout=[em.float32, em.int32, em.int32])
def env_step(action: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:  # noqa: UP006
  """Returns state, reward and done flag given an action."""

  state, reward, done, truncated, info = env.step(action)
  episode_log.append((action, state))  # added
  return (state.astype(np.float32),
          np.array(reward, np.int32),
          np.array(done, np.int32))


def run_episode(
    initial_state: em.Tensor,
    model: nn.Model,
    max_steps: int) -> Tuple[em.Tensor, em.Tensor, em.Tensor]:  # noqa: UP006
  """Runs a single episode to collect training data."""

  action_probs = em.TensorArray(dtype=em.float32, size=0, dynamic_size=True)
  values = em.TensorArray(dtype=em.float32, size=0, dynamic_size=True)
  rewards = em.TensorArray(dtype=em.int32, size=0, dynamic_size=True)

  initial_state_shape = initial_state.shape
  state = initial_state

  for t in em.range(max_steps):
    # Convert state into a batched tensor (batch size = 1)
    state = em.expand_dims(state, 0)

    # Run the model and to get action probabilities and critic value
    action_logits_t, value = model(state)

    # Sample next action from the action probability distribution
    action = em.random.categorical(action_logits_t, 1)[0, 0]
    action_probs_t = em.nn_ops.softmax(action_logits_t)

    # Store critic values
    values = values.write(t, em.squeeze(value))

    # Store log probability of the action chosen
    action_probs = action_probs.write(t, action_probs_t[0, action])

    # Apply action to the environment to get next state and reward
    state, reward, done = env_step(action)
    state.set_shape(initial_state_shape)

    # Store reward
    rewards = rewards.write(t, reward)

    if em.cast(done, em.bool):
      break

  action_probs = action_probs.stack()
  values = values.stack()
  rewards = rewards.stack()

  return action_probs, values, rewards


def get_expected_return(
    rewards: em.Tensor,
    gamma: float,
    standardize: bool = True) -> em.Tensor:
  """Compute expected returns per timestep."""

  n = em.shape(rewards)[0]
  returns = em.TensorArray(dtype=em.float32, size=n)

  # Start from the end of `rewards` and accumulate reward sums
  # into the `returns` array
  rewards = em.cast(rewards[::-1], dtype=em.float32)
  discounted_sum = em.constant(0.0)
  discounted_sum_shape = discounted_sum.shape
  for i in em.range(n):
    reward = rewards[i]
    discounted_sum = reward + gamma * discounted_sum
    discounted_sum.set_shape(discounted_sum_shape)
    returns = returns.write(i, discounted_sum)
  returns = returns.stack()[::-1]

  if standardize:
    returns = ((returns - em.reduce_mean(returns)) /
               (em.reduce_std(returns) + eps))

  return returns


huber_loss = nn.losses.Huber(reduction=nn.losses.Reduction.SUM)

def compute_loss(
    action_probs: em.Tensor,
    values: em.Tensor,
    returns: em.Tensor) -> em.Tensor:
  """Computes the combined Actor-Critic loss."""

  advantage = returns - values

  action_log_probs = em.log(action_probs)
  actor_loss = -em.reduce_sum(action_log_probs * advantage)

  critic_loss = huber_loss(values, returns)

  return actor_loss + critic_loss


"""
## Added: the pieces against numpy, before training
"""


def numpy_forward(weights, states):  # the model in float64 numpy
  w1, b1, w2, b2, w3, b3 = weights
  h = np.maximum(np.asarray(states, np.float32).astype(np.float64) @ w1 + b1, 0)
  logits = h @ w2 + b2
  p = np.exp(logits - logits.max(-1, keepdims=True))
  return h, p / p.sum(-1, keepdims=True), (h @ w3 + b3)[:, 0]


def numpy_returns(rewards, gamma, standardize=True):  # G_t = sum_t' gamma^(t'-t) r_t'
  n = len(rewards)
  g = np.array([sum(gamma ** (k - j) * rewards[k] for k in range(j, n)) for j in range(n)])
  return (g - g.mean()) / (g.std() + eps) if standardize else g


def numpy_huber(e, delta=1.0):
  e = np.abs(e)
  return np.where(e <= delta, 0.5 * e ** 2, delta * e - 0.5 * delta ** 2)


def numpy_loss_and_gradients(weights, states, actions, returns):  # compute_loss, by hand
  w1, b1, w2, b2, w3, b3 = weights
  h, p, v = numpy_forward(weights, states)
  log_p = np.log(p[np.arange(len(actions)), actions])
  loss = -np.sum(log_p * (returns - v)) + np.sum(numpy_huber(returns - v))
  # d/dv: +log_p through the advantage (not stopped, as in TF) and the Huber term's clip
  dv = log_p + np.clip(v - returns, -1.0, 1.0)
  dlogits = -(returns - v)[:, None] * (np.eye(2)[actions] - p)
  dh = (dlogits @ w2.T + dv[:, None] @ w3.T) * (h > 0)
  x = np.asarray(states, np.float32).astype(np.float64)
  return loss, [x.T @ dh, dh.sum(0), h.T @ dlogits, dlogits.sum(0), h.T @ dv[:, None],
                np.array([dv.sum()])]


def logged_episode(initial_state):  # the states the model saw and the actions it took
  actions = np.array([int(a) for a, _ in episode_log])
  states = np.array([initial_state] + [s for _, s in episode_log[:-1]])
  return states, actions


# The model: Keras's weights (glorot_uniform kernels, zero biases) and outputs
_logits, _value = model(em.constant([[0.01, -0.02, 0.03, 0.04]]))
assert _logits.shape == (1, 2) and _value.shape == (1, 1)
assert _logits.dtype == em.float32 and _value.dtype == em.float32
assert [tuple(v.shape) for v in model.trainable_variables] == [
    (4, 128), (128,), (128, 2), (2,), (128, 1), (1,)], [v.shape for v in model.trainable_variables]
for _w in model.trainable_variables:
  _w = _w.numpy()
  assert _w.dtype == np.float32
  if _w.ndim == 1:
    assert not _w.any()
  else:
    assert 0.8 * math.sqrt(6 / sum(_w.shape)) < np.abs(_w).max() <= math.sqrt(6 / sum(_w.shape))

# env_step: gym's step through em.numpy_function, with TF's dtypes
_check_env = gym.make("CartPole-v1")
_check_env.reset(seed=7)
env.reset(seed=7)
_state, _reward, _done = env_step(em.constant(1, dtype=em.int64))
_expected = _check_env.step(1)
assert _state.shape == (4,) and _state.dtype == em.float32
assert _reward.shape == () and _reward.dtype == em.int32 and int(_reward) == 1
assert _done.shape == () and _done.dtype == em.int32 and int(_done) == 0
np.testing.assert_array_equal(_state.numpy(), _expected[0])
assert isinstance(episode_log[0][0], (np.integer, np.ndarray)) and episode_log[0][0] == 1
env.reset(seed=seed)  # back to the setup's seeding
episode_log.clear()

# get_expected_return and compute_loss on made-up numbers
_rw = np.array([1, 1, 0, 1, 1, 1, 1], np.int32)
for _std in (False, True):
  _g = get_expected_return(em.constant(_rw), 0.99, standardize=_std)
  assert _g.shape == (7,) and _g.dtype == em.float32
  np.testing.assert_allclose(_g.numpy(), numpy_returns(_rw, 0.99, _std), rtol=1e-5, atol=1e-6)
_rng = np.random.default_rng(0)
_p, _v, _g = (_rng.uniform(0.1, 0.9, (6, 1)).astype(np.float32),
              _rng.normal(0, 1.5, (6, 1)).astype(np.float32),
              _rng.normal(0, 1.5, (6, 1)).astype(np.float32))
_l = compute_loss(em.constant(_p), em.constant(_v), em.constant(_g))
assert _l.shape == () and _l.dtype == em.float32
_p, _v, _g = (a.astype(np.float64) for a in (_p, _v, _g))
np.testing.assert_allclose(float(_l), -np.sum(np.log(_p) * (_g - _v)) + np.sum(numpy_huber(_g - _v)),
                           rtol=1e-5)

# One episode, run and differentiated eagerly as train_step does, against numpy
_initial_state = env.reset()[0]
with tape_lib.GradientTape() as _tape:
  _probs, _values, _rewards = run_episode(em.constant(_initial_state), model, 500)
  _returns = get_expected_return(_rewards, 0.99)
  _loss = compute_loss(*[em.expand_dims(x, 1) for x in [_probs, _values, _returns]])
_grads = _tape.gradient(_loss, model.trainable_variables)
_n = len(episode_log)
assert _probs.shape == _values.shape == _rewards.shape == (_n,) and 5 < _n < 100, _n
assert _probs.dtype == _values.dtype == em.float32 and _rewards.dtype == em.int32
assert _rewards.numpy().tolist() == [1] * _n  # the last step, the fall, earns 1 too
_weights = [w.numpy().astype(np.float64) for w in model.trainable_variables]
_states, _actions = logged_episode(_initial_state)
_, _p, _v = numpy_forward(_weights, _states)
np.testing.assert_allclose(_probs.numpy(), _p[np.arange(_n), _actions], rtol=1e-5)
np.testing.assert_allclose(_values.numpy(), _v, rtol=1e-4, atol=1e-6)
_g = numpy_returns(np.ones(_n), 0.99)
np.testing.assert_allclose(_returns.numpy(), _g, rtol=1e-4, atol=1e-5)
_loss_np, _grads_np = numpy_loss_and_gradients(_weights, _states, _actions, _g)
assert _loss.shape == () and _loss.dtype == em.float32
np.testing.assert_allclose(float(_loss), _loss_np, rtol=1e-4, atol=1e-5)
for _g, _g_np in zip(_grads, _grads_np):
  assert _g.shape == _g_np.shape and _g.dtype == em.float32
  np.testing.assert_allclose(_g.numpy(), _g_np, rtol=2e-3, atol=2e-5 * np.abs(_g_np).max())
episode_log.clear()

"""
## Train
"""

optimizer = nn.optimizers.Adam(learning_rate=0.01)


@graph.function
def train_step(
    initial_state: em.Tensor,
    model: nn.Model,
    optimizer: nn.optimizers.Optimizer,
    gamma: float,
    max_steps_per_episode: int) -> em.Tensor:
  """Runs a model training step."""

  with tape_lib.GradientTape() as tape:

    # Run the model for one episode to collect training data
    action_probs, values, rewards = run_episode(
        initial_state, model, max_steps_per_episode)

    # Calculate the expected returns
    returns = get_expected_return(rewards, gamma)

    # Convert training data to appropriate TF tensor shapes
    action_probs, values, returns = [
        em.expand_dims(x, 1) for x in [action_probs, values, returns]]

    # Calculate the loss values to update our network
    loss = compute_loss(action_probs, values, returns)

  # Compute the gradients from the loss
  grads = tape.gradient(loss, model.trainable_variables)

  # Apply the gradients to the model's parameters
  optimizer.apply_gradients(zip(grads, model.trainable_variables))

  episode_reward = em.reduce_sum(rewards)

  return episode_reward


min_episodes_criterion = 100
max_episodes = 10000 if FULL else 5 if SHORT else 400
max_steps_per_episode = 500

# `CartPole-v1` is considered solved if average reward is >= 475 over 500
# consecutive trials
reward_threshold = 475 if FULL else 150
running_reward = 0

# The discount factor for future rewards
gamma = 0.99

# Keep the last episodes reward
episodes_reward: collections.deque = collections.deque(maxlen=min_episodes_criterion)
all_episode_rewards = []  # added
episode_traces = []  # added: how many times each call traced train_step
_caught_warnings = warnings.catch_warnings(record=True)  # added: ember's warnings, checked
caught_warnings = _caught_warnings.__enter__()
warnings.simplefilter("always")

t = tqdm.trange(max_episodes)
for i in t:
    initial_state, info = env.reset()
    if i == 0:  # added: for the check of the first step below
        first_state = initial_state
        weights_before = [w.numpy().astype(np.float64) for w in model.trainable_variables]
    initial_state = em.constant(initial_state, dtype=em.float32)
    traces_before = train_step.experimental_get_tracing_count()  # added
    episode_reward = int(train_step(
        initial_state, model, optimizer, gamma, max_steps_per_episode))
    episode_traces.append(train_step.experimental_get_tracing_count() - traces_before)  # added

    if i == 0:  # added: the first step's Adam update against numpy's gradients
        _states, _actions = logged_episode(first_state)
        _, _grads_np = numpy_loss_and_gradients(
            weights_before, _states, _actions, numpy_returns(np.ones(len(_actions)), gamma))
        assert episode_reward == len(_actions)
        assert train_step.cache_size() == 0  # traced, not kept: it made Adam's slots
        for _w, _w0, _g in zip(model.trainable_variables, weights_before, _grads_np):
            _m, _s = (1 - 0.9) * _g, (1 - 0.999) * _g * _g  # Keras: epsilon outside sqrt(v)
            _lr_t = 0.01 * math.sqrt(1 - 0.999) / (1 - 0.9)
            np.testing.assert_allclose(_w.numpy(), _w0 - _lr_t * _m / (np.sqrt(_s) + 1e-7),
                                       rtol=1e-5, atol=2e-5)
    assert episode_reward == len(episode_log) <= max_steps_per_episode  # added
    episode_log.clear()  # added
    all_episode_rewards.append(episode_reward)  # added

    episodes_reward.append(episode_reward)
    running_reward = statistics.mean(episodes_reward)


    t.set_postfix(
        episode_reward=episode_reward, running_reward=running_reward)

    # Show the average episode reward every 10 episodes
    if i % 10 == 0:
      pass # print(f'Episode {i}: average reward: {avg_reward}')

    if running_reward > reward_threshold and i >= min_episodes_criterion:
        break

print(f'\nSolved at episode {i}: average reward: {running_reward:.2f}!')
_caught_warnings.__exit__(None, None, None)  # added: shown, then checked below
for _w in caught_warnings:
  print(f"{_w.category.__name__}: {_w.message}")

# added: what training reached
assert len(all_episode_rewards) == i + 1
assert running_reward == statistics.mean(all_episode_rewards[-min_episodes_criterion:])
print("first 10 episodes:", all_episode_rewards[:10], "last 10:", all_episode_rewards[-10:])
assert SHORT or (running_reward > reward_threshold and i >= min_episodes_criterion), (
    i, running_reward)


def expected_traces(lengths):  # added: ember's rule for train_step (see the header)
  kept, failures, traces = set(), 0, []
  for n, length in enumerate(lengths):
    if n == 0:  # the first call makes Adam's slots: traced, and its trace not kept
      traces.append(1)
    elif failures >= 4 or length in kept:  # eager, or a replay whose guards all hold
      traces.append(0)
    else:  # no trace yet, or the replays fail the guard on `done` where the lengths differ
      failures += 1 if kept else 0
      traces.append(0 if failures >= 4 else 1)  # the 4th failed replay: eager from here on
      kept.add(length)
  return traces


print("train_step traces per episode:", episode_traces[:10], "in all:", sum(episode_traces))
assert episode_traces == expected_traces(all_episode_rewards), episode_traces[:10]
assert train_step.experimental_get_tracing_count() == sum(episode_traces) == 5  # TF: 1
assert episode_traces[:5] == [1] * 5 and not any(episode_traces[5:])
_eager_warnings = [str(w.message) for w in caught_warnings
                   if "train_step" in str(w.message) and "now runs eagerly" in str(w.message)]
assert len(_eager_warnings) == (len(all_episode_rewards) > 5), _eager_warnings

"""
## Visualization
"""

# Render an episode and save as a GIF file

from PIL import Image  # noqa: E402

render_env = gym.make("CartPole-v1", render_mode='rgb_array')

def render_episode(env: gym.Env, model: nn.Model, max_steps: int):
  state, info = env.reset()
  state = em.constant(state, dtype=em.float32)
  screen = env.render()
  images = [Image.fromarray(screen)]

  for i in range(1, max_steps + 1):
    state = em.expand_dims(state, 0)
    action_probs, _ = model(state)
    action = np.argmax(np.squeeze(action_probs))

    state, reward, done, truncated, info = env.step(action)
    state = em.constant(state, dtype=em.float32)

    # Render screen every 10 steps
    if i % 10 == 0:
      screen = env.render()
      images.append(Image.fromarray(screen))

    if done:
      break

  return images


render_env.reset(seed=seed)  # added: seeded like env
# Save GIF image
images = render_episode(render_env, model, max_steps_per_episode)
image_file = 'cartpole-v1.gif'
# loop=0: loop forever, duration=1: play each frame for 1ms
images[0].save(
    image_file, save_all=True, append_images=images[1:], loop=0, duration=1)

# added: the GIF holds a frame for the start and one for every 10 steps of the episode
_steps = render_env._elapsed_steps
print("greedy episode:", _steps, "steps")
assert len(images) == 1 + _steps // 10, (len(images), _steps)
assert 1 < Image.open(image_file).n_frames <= len(images)  # Pillow merges equal frames
assert SHORT or _steps > 100, _steps  # the greedy policy (untrained: 8 to 72 steps)
assert images[0].size == (600, 400)

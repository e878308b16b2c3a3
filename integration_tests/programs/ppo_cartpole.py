"""Port of keras-team/keras-io examples/rl/ppo_cartpole.py ("Proximal Policy Optimization",
the tf.keras version: an actor and a critic, each a functional MLP of two Dense(64, tanh)
layers (the actor's two logits, the critic's one value squeezed to a vector), a Buffer of
one epoch's steps with GAE-lambda advantages and rewards-to-go computed by
scipy.signal.lfilter (gamma 0.99, lam 0.95: the Buffer's defaults, since upstream never
passes it its `lam = 0.97`), a @tf.function sample_action drawing with tf.random.categorical, a
@tf.function train_policy maximising the PPO-Clip objective (clip 0.2, Adam 3e-4, up to 80
updates, stopped early once the KL passes 1.5 * 0.01) and a @tf.function
train_value_function (mean squared error, Adam 1e-3, 80 updates), on CartPole-v0).

Upstream: https://github.com/keras-team/keras-io/blob/ef4cd453400aae442632ffdba260673ecc09500a/examples/rl/ppo_cartpole.py
Changed: names only (tensorflow -> ember.core as em, tensorflow.keras / .layers -> ember.nn /
ember.nn.layers, tf.tanh / tf.one_hot / tf.reduce_sum / tf.reduce_mean / tf.exp / tf.where /
tf.minimum / tf.squeeze / tf.random.categorical -> em.*, tf.nn.log_softmax ->
em.nn_ops.log_softmax, tf.GradientTape -> tape_lib.GradientTape (ember.tape imported as
tape_lib, since upstream names its tape `tape`), @tf.function -> @graph.function); the prose
and the GIFs are dropped. gym is not installed here, so a minimal CartPole stands in for
gym.make("CartPole-v0"), which is kept: gym 0.18's classic_control/cartpole.py (Sutton's
cart-pole equations and constants, Euler integration, tau 0.02, done when |x| > 2.4 or
|theta| > 12 degrees, reward 1.0 on every step including the last, the float64 state reset
uniformly in [-0.05, 0.05], Discrete(2).contains refusing anything but an integer scalar,
the float32 Box observation space), the TimeLimit wrapper of its registrations
(CartPole-v0: done after 200 steps; CartPole-v1: 500) and gym.utils.seeding.np_random, so
seeded resets equal gym's; upstream never seeds the environment (gym then seeds from
os.urandom): env.seed(0) is added. The keras.io page now shows the Keras 3 version of this
example (CartPole-v1 through gymnasium, keras.ops, keras.random.categorical with a
SeedGenerator, the same three @tf.function steps); no commit of it is stored here to cite,
so this ports the tf.keras version above and its CartPole-v0. scipy is not installed here
either: a first-order lfilter (y[n] = x[n] - a1 * y[n - 1], the only filter upstream asks
for) stands in for scipy.signal.lfilter.
Reduced: 1,000 steps per epoch and 10 epochs (upstream: 4,000 and 30; EMBER_PROGRAMS_FULL=1
restores them: 37 s of CPU here; the mean return climbs as in keras.io's logged run: here
23 27 40 58 73 103 133 174 190 200 for epochs 1 to 10 and 200 for the last eight, there
18 22 27 37 48 67 133 167 182 190 and 200 for the last six);
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 200 steps and 2 epochs, no threshold.
Added: seeds for numpy and ember; the stand-in checked against gym's numbers (the seeded
reset equals a RandomState seeded as gym seeds it, one step worked out by hand, a fall ending
an episode, both step limits, the action space refusing a 1-element array) and the lfilter
stand-in against the discounted sums written out; Keras's weight shapes and initialisers
(glorot_uniform limits, zero biases); the actor's and critic's outputs (float32 from the
float64 states, which Keras casts; the critic's squeezed to (batch,)) against a numpy forward
pass of their weights, and logprobabilities() against a numpy log-softmax; every epoch, the
buffer against numpy (the stored values and log-probabilities from the weights the epoch ran
with, the advantages and rewards-to-go recomputed step by step, the normalised advantages)
and the sampled actions against the policy's probabilities (their sum within 5 standard
deviations of the expected sum, so a replay of sample_action that repeated a draw would
fail); the first epoch's policy and value losses and gradients, eagerly, against a numpy
backward pass (tf.minimum's gradient to its first argument where it is <=), and the first
two updates of each @graph.function (a trace, then a replay) against Keras's Adam in numpy
(lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + 1e-7)); each epoch's first KL
against numpy log-probabilities of the weights the update left; sample_action traced once
and no function traced again after the first epoch; and the training threshold: the mean
return (upstream's printed number, steps / episodes) of each of the last two epochs must
pass 100 (195, CartPole-v0's reward threshold, with EMBER_PROGRAMS_FULL=1), i.e. at most 9
episodes in 1,000 steps, where the untrained policy's episodes last about 22 steps (a random
policy's mean on CartPole; this run's first epoch: 25.0) and a broken gradient, update or
replay would leave it there. This seed reaches 167, 143, 143 over the last three epochs
(about 4 s of CPU on one core); numpy/ember/environment seeds 1 to 6 give 125 to 167.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error): none open. Fixed in ember since the first
version of this port: `value = tf.squeeze(mlp(...), axis=1)` on the functional API's
symbolic tensor raised TypeError (GAP 1, loud; tf.keras wraps it as a TFOpLambda layer);
it now makes a node of the graph, and upstream's line is restored. Every upstream line runs
as written, and every value checked agrees with what TensorFlow and Keras give.
"""

import hashlib
import math
import os
import struct
import time
import types

import numpy as np

import ember.core as em
from ember import graph, nn
from ember import tape as tape_lib
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
np.random.seed(0)
em.random.set_seed(0)
T0 = time.time()

"""
## A minimal CartPole-v0 (gym 0.18's cartpole.py, TimeLimit, spaces and seeding.np_random)
"""


def _bigint_from_bytes(bytes_):
    sizeof_int = 4
    padding = sizeof_int - len(bytes_) % sizeof_int
    bytes_ += b"\0" * padding
    int_count = int(len(bytes_) / sizeof_int)
    unpacked = struct.unpack(f"{int_count}I", bytes_)
    accum = 0
    for i, val in enumerate(unpacked):
        accum += 2 ** (sizeof_int * 8 * i) * val
    return accum


def _int_list_from_bigint(bigint):
    if bigint == 0:
        return [0]
    ints = []
    while bigint > 0:
        bigint, mod = divmod(bigint, 2 ** 32)
        ints.append(mod)
    return ints


def np_random(seed):  # gym.utils.seeding.np_random for a non-negative int seed
    seed = seed % 2 ** 64  # create_seed(seed, max_bytes=8)
    rng = np.random.RandomState()
    digest = hashlib.sha512(str(seed).encode("utf8")).digest()  # hash_seed(seed)
    rng.seed(_int_list_from_bigint(_bigint_from_bytes(digest[:8])))
    return rng, seed


class Discrete:  # gym.spaces.Discrete(n)
    def __init__(self, n):
        self.n = n
        self.shape = ()

    def contains(self, x):
        if isinstance(x, int):
            as_int = x
        elif isinstance(x, (np.generic, np.ndarray)) and (
                x.dtype.char in np.typecodes["AllInteger"] and x.shape == ()):
            as_int = int(x)
        else:
            return False
        return as_int >= 0 and as_int < self.n


def _box(low, high):  # gym.spaces.Box(low, high, dtype=np.float32)
    return types.SimpleNamespace(low=low.astype(np.float32), high=high.astype(np.float32),
                                 shape=low.shape)


class CartPoleEnv:
    def __init__(self, max_episode_steps=200):
        self.gravity = 9.8
        self.masscart = 1.0
        self.masspole = 0.1
        self.total_mass = (self.masspole + self.masscart)
        self.length = 0.5  # actually half the pole's length
        self.polemass_length = (self.masspole * self.length)
        self.force_mag = 10.0
        self.tau = 0.02  # seconds between state updates
        self.kinematics_integrator = "euler"
        # Angle at which to fail the episode
        self.theta_threshold_radians = 12 * 2 * math.pi / 360
        self.x_threshold = 2.4
        # Angle limit set to 2 * theta_threshold_radians so failing observation
        # is still within bounds.
        high = np.array([self.x_threshold * 2, np.finfo(np.float32).max,
                         self.theta_threshold_radians * 2, np.finfo(np.float32).max],
                        dtype=np.float32)
        self.action_space = Discrete(2)
        self.observation_space = _box(-high, high)
        self.max_episode_steps = max_episode_steps  # TimeLimit (the registration's)
        self.np_random = np.random.RandomState()  # gym seeds from os.urandom here
        self.state = None
        self.steps_beyond_done = None
        self._elapsed_steps = None

    def seed(self, seed=None):
        self.np_random, seed = np_random(seed)
        return [seed]

    def step(self, action):
        err_msg = f"{action!r} ({type(action)}) invalid"
        assert self.action_space.contains(action), err_msg
        assert self._elapsed_steps is not None, "Cannot call env.step() before calling reset()"
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta = math.cos(theta)
        sintheta = math.sin(theta)
        temp = (force + self.polemass_length * theta_dot ** 2 * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta ** 2 / self.total_mass))
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        x = x + self.tau * x_dot  # kinematics_integrator == 'euler'
        x_dot = x_dot + self.tau * xacc
        theta = theta + self.tau * theta_dot
        theta_dot = theta_dot + self.tau * thetaacc
        self.state = (x, x_dot, theta, theta_dot)
        done = bool(x < -self.x_threshold or x > self.x_threshold
                    or theta < -self.theta_threshold_radians
                    or theta > self.theta_threshold_radians)
        if not done:
            reward = 1.0
        elif self.steps_beyond_done is None:
            self.steps_beyond_done = 0  # Pole just fell!
            reward = 1.0
        else:
            self.steps_beyond_done += 1
            reward = 0.0
        info = {}
        self._elapsed_steps += 1  # the TimeLimit wrapper
        if self._elapsed_steps >= self.max_episode_steps:
            info["TimeLimit.truncated"] = not done
            done = True
        return np.array(self.state), reward, done, info

    def reset(self):
        self._elapsed_steps = 0
        self.state = self.np_random.uniform(low=-0.05, high=0.05, size=(4,))
        self.steps_beyond_done = None
        return np.array(self.state)

    def render(self, mode="human"):
        pass


def _make(env_id):
    # gym/envs/__init__.py: CartPole-v0 (200 steps, reward threshold 195) and v1 (500, 475)
    return CartPoleEnv(max_episode_steps={"CartPole-v0": 200, "CartPole-v1": 500}[env_id])


gym = types.SimpleNamespace(make=_make)  # the stand-in for `import gym`


def _lfilter(b, a, x, axis=-1):  # scipy.signal.lfilter for b == [1], a == [1, a1]
    assert list(b) == [1] and len(a) == 2 and a[0] == 1 and axis == 0
    y = np.empty(len(x), dtype=np.float64)
    acc = 0.0
    for i, xi in enumerate(x):  # y[n] = x[n] - a1 * y[n - 1]
        acc = xi - a[1] * acc
        y[i] = acc
    return y


scipy = types.SimpleNamespace(signal=types.SimpleNamespace(lfilter=_lfilter))

# added: the stand-in against gym's numbers: seeding, one step by hand, the limits, spaces
_env = gym.make("CartPole-v0")
_env.seed(42)
_rng = np.random.RandomState(_int_list_from_bigint(_bigint_from_bytes(
    hashlib.sha512(b"42").digest()[:8])))
_s0 = _env.reset()
assert _s0.dtype == np.float64 and _s0.shape == (4,)
np.testing.assert_array_equal(_s0, _rng.uniform(-0.05, 0.05, size=4))
assert _env.observation_space.shape == (4,) and _env.action_space.n == 2
assert not _env.action_space.contains(np.array([1])) and not _env.action_space.contains(1.0)
assert _env.action_space.contains(np.int64(1)) and not _env.action_space.contains(2)
_s1, _r, _d, _ = _env.step(1)
_x, _xd, _th, _thd = _s0
_tmp = (10.0 + 0.05 * _thd ** 2 * np.sin(_th)) / 1.1
_thacc = (9.8 * np.sin(_th) - np.cos(_th) * _tmp) / (0.5 * (4 / 3 - 0.1 * np.cos(_th) ** 2 / 1.1))
_xacc = _tmp - 0.05 * _thacc * np.cos(_th) / 1.1
np.testing.assert_allclose(_s1, [_x + 0.02 * _xd, _xd + 0.02 * _xacc, _th + 0.02 * _thd,
                                 _thd + 0.02 * _thacc], rtol=1e-12)
assert (_r, _d) == (1.0, False)
_n = 1
while not _d:  # always pushing right: the pole falls to the left within a few dozen steps
    _s, _r, _d, _info = _env.step(1)
    _n += 1
assert _r == 1.0 and 5 < _n < 200 and _s[2] < -12 * 2 * math.pi / 360 and _info == {}, _n
for _env_id, _limit in [("CartPole-v0", 200), ("CartPole-v1", 500)]:
    _env = gym.make(_env_id)
    _env.seed(1)
    _s, _n, _d = _env.reset(), 0, False
    while not _d:  # pushing the way the pole turns keeps it up: only the step limit ends it
        _s, _r, _d, _info = _env.step(int(_s[2] + 0.5 * _s[3] > 0))
        _n += 1
    assert _n == _limit and _info == {"TimeLimit.truncated": True}, (_env_id, _n, _info)
_x = np.array([1.0, 0.5, 2.0, 0.0, -1.0])
np.testing.assert_allclose(_lfilter([1], [1, -0.9], _x, axis=0),
                           [sum(0.9 ** (i - j) * _x[j] for j in range(i + 1)) for i in range(5)])

"""
## Functions and class
"""


def discounted_cumulative_sums(x, discount):
    # Discounted cumulative sums of vectors for computing rewards-to-go and advantage estimates
    return scipy.signal.lfilter([1], [1, float(-discount)], x[::-1], axis=0)[::-1]


class Buffer:
    # Buffer for storing trajectories
    def __init__(self, observation_dimensions, size, gamma=0.99, lam=0.95):
        # Buffer initialization
        self.observation_buffer = np.zeros(
            (size, observation_dimensions), dtype=np.float32
        )
        self.action_buffer = np.zeros(size, dtype=np.int32)
        self.advantage_buffer = np.zeros(size, dtype=np.float32)
        self.reward_buffer = np.zeros(size, dtype=np.float32)
        self.return_buffer = np.zeros(size, dtype=np.float32)
        self.value_buffer = np.zeros(size, dtype=np.float32)
        self.logprobability_buffer = np.zeros(size, dtype=np.float32)
        self.gamma, self.lam = gamma, lam
        self.pointer, self.trajectory_start_index = 0, 0

    def store(self, observation, action, reward, value, logprobability):
        # Append one step of agent-environment interaction
        self.observation_buffer[self.pointer] = observation
        self.action_buffer[self.pointer] = action
        self.reward_buffer[self.pointer] = reward
        self.value_buffer[self.pointer] = value
        self.logprobability_buffer[self.pointer] = logprobability
        self.pointer += 1

    def finish_trajectory(self, last_value=0):
        # Finish the trajectory by computing advantage estimates and rewards-to-go
        path_slice = slice(self.trajectory_start_index, self.pointer)
        rewards = np.append(self.reward_buffer[path_slice], last_value)
        values = np.append(self.value_buffer[path_slice], last_value)

        deltas = rewards[:-1] + self.gamma * values[1:] - values[:-1]

        self.advantage_buffer[path_slice] = discounted_cumulative_sums(
            deltas, self.gamma * self.lam
        )
        self.return_buffer[path_slice] = discounted_cumulative_sums(
            rewards, self.gamma
        )[:-1]

        self.trajectory_start_index = self.pointer

    def get(self):
        # Get all data of the buffer and normalize the advantages
        self.pointer, self.trajectory_start_index = 0, 0
        advantage_mean, advantage_std = (
            np.mean(self.advantage_buffer),
            np.std(self.advantage_buffer),
        )
        self.advantage_buffer = (self.advantage_buffer - advantage_mean) / advantage_std
        return (
            self.observation_buffer,
            self.action_buffer,
            self.advantage_buffer,
            self.return_buffer,
            self.logprobability_buffer,
        )


def mlp(x, sizes, activation=em.tanh, output_activation=None):
    # Build a feedforward neural network
    for size in sizes[:-1]:
        x = layers.Dense(units=size, activation=activation)(x)
    return layers.Dense(units=sizes[-1], activation=output_activation)(x)


def logprobabilities(logits, a):
    # Compute the log-probabilities of taking actions a by using the logits (i.e. the output of the actor)
    logprobabilities_all = em.nn_ops.log_softmax(logits)
    logprobability = em.reduce_sum(
        em.one_hot(a, num_actions) * logprobabilities_all, axis=1
    )
    return logprobability


# Sample action from actor
@graph.function
def sample_action(observation):
    logits = actor(observation)
    action = em.squeeze(em.random.categorical(logits, 1), axis=1)
    return logits, action


# Train the policy by maxizing the PPO-Clip objective
@graph.function
def train_policy(
    observation_buffer, action_buffer, logprobability_buffer, advantage_buffer
):

    with tape_lib.GradientTape() as tape:  # Record operations for automatic differentiation.
        ratio = em.exp(
            logprobabilities(actor(observation_buffer), action_buffer)
            - logprobability_buffer
        )
        min_advantage = em.where(
            advantage_buffer > 0,
            (1 + clip_ratio) * advantage_buffer,
            (1 - clip_ratio) * advantage_buffer,
        )

        policy_loss = -em.reduce_mean(
            em.minimum(ratio * advantage_buffer, min_advantage)
        )
    policy_grads = tape.gradient(policy_loss, actor.trainable_variables)
    policy_optimizer.apply_gradients(zip(policy_grads, actor.trainable_variables))

    kl = em.reduce_mean(
        logprobability_buffer
        - logprobabilities(actor(observation_buffer), action_buffer)
    )
    kl = em.reduce_sum(kl)
    return kl


# Train the value function by regression on mean-squared error
@graph.function
def train_value_function(observation_buffer, return_buffer):
    with tape_lib.GradientTape() as tape:  # Record operations for automatic differentiation.
        value_loss = em.reduce_mean((return_buffer - critic(observation_buffer)) ** 2)
    value_grads = tape.gradient(value_loss, critic.trainable_variables)
    value_optimizer.apply_gradients(zip(value_grads, critic.trainable_variables))


"""
## Hyperparameters
"""

# Hyperparameters of the PPO algorithm
steps_per_epoch = 4000 if FULL else 200 if SHORT else 1000
epochs = 30 if FULL else 2 if SHORT else 10
gamma = 0.99
clip_ratio = 0.2
policy_learning_rate = 3e-4
value_function_learning_rate = 1e-3
train_policy_iterations = 80
train_value_iterations = 80
lam = 0.97
target_kl = 0.01
hidden_sizes = (64, 64)
THRESHOLD = 195 if FULL else 100  # added: see the header

# True if you want to render the environment
render = False

"""
## Initializations
"""

# Initialize the environment and get the dimensionality of the
# observation space and the number of possible actions
env = gym.make("CartPole-v0")
env.seed(0)  # added: upstream's gym seeds from os.urandom
observation_dimensions = env.observation_space.shape[0]
num_actions = env.action_space.n

# Initialize the buffer
buffer = Buffer(observation_dimensions, steps_per_epoch)

# Initialize the actor and the critic as keras models
observation_input = keras.Input(shape=(observation_dimensions,), dtype=em.float32)
logits = mlp(observation_input, list(hidden_sizes) + [num_actions], em.tanh, None)
actor = keras.Model(inputs=observation_input, outputs=logits)
value = em.squeeze(
    mlp(observation_input, list(hidden_sizes) + [1], em.tanh, None), axis=1
)
critic = keras.Model(inputs=observation_input, outputs=value)

# Initialize the policy and the value function optimizers
policy_optimizer = keras.optimizers.Adam(learning_rate=policy_learning_rate)
value_optimizer = keras.optimizers.Adam(learning_rate=value_function_learning_rate)

# Initialize the observation, episode return and episode length
observation, episode_return, episode_length = env.reset(), 0, 0

# added: Keras's weights and initialisers (glorot_uniform kernels, zero biases), the shapes
for _model in (actor, critic):
    _out = 2 if _model is actor else 1
    assert [tuple(v.shape) for v in _model.trainable_variables] == [
        (4, 64), (64,), (64, 64), (64,), (64, _out), (_out,)], _model.trainable_variables
    for v in _model.trainable_variables:
        w = v.numpy()
        assert w.dtype == np.float32
        if w.ndim == 1:
            assert not w.any()
        else:
            limit = math.sqrt(6 / sum(w.shape))
            assert np.abs(w).max() <= limit and np.abs(w).max() > 0.5 * limit


def weights_of(model):  # added
    return [v.numpy().astype(np.float64) for v in model.trainable_variables]


def mlp_np(w, x):  # added: the tanh MLP in float64 numpy; its hidden layers and output
    h1 = np.tanh(x.astype(np.float32).astype(np.float64) @ w[0] + w[1])
    h2 = np.tanh(h1 @ w[2] + w[3])
    return h1, h2, h2 @ w[4] + w[5]


def log_softmax_np(z):  # added
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def backward_np(w, x, h1, h2, dout):  # added: the MLP's gradients from d loss / d output
    dz2 = dout @ w[4].T * (1 - h2 ** 2)
    dz1 = dz2 @ w[2].T * (1 - h1 ** 2)
    x = x.astype(np.float64)
    return [x.T @ dz1, dz1.sum(0), h1.T @ dz2, dz2.sum(0), h2.T @ dout, dout.sum(0)]


def policy_loss_and_grads_np(w, obs, act, logp_old, adv):  # added: the PPO-Clip loss
    h1, h2, z = mlp_np(w, obs)
    logp_all = log_softmax_np(z)
    n = len(act)
    ratio = np.exp(logp_all[np.arange(n), act] - logp_old)
    min_adv = np.where(adv > 0, (1 + clip_ratio) * adv, (1 - clip_ratio) * adv)
    surrogate = np.minimum(ratio * adv, min_adv)
    through_ratio = ratio * adv <= min_adv  # tf.minimum's gradient goes to x where x <= y
    dlogp = -np.where(through_ratio, ratio * adv, 0.0) / n
    dz = dlogp[:, None] * (np.eye(num_actions)[act] - np.exp(logp_all))
    return -surrogate.mean(), backward_np(w, obs, h1, h2, dz)


def value_loss_and_grads_np(w, obs, ret):  # added: mean squared error of the critic
    h1, h2, v = mlp_np(w, obs)
    v = v[:, 0]
    dv = -2 * (ret - v) / len(ret)
    return np.mean((ret - v) ** 2), backward_np(w, obs, h1, h2, dv[:, None])


def adam_np(w, grads, state, lr):  # added: Keras's Adam (epsilon 1e-7 outside the
    state["t"] += 1  # bias correction of v: lr_t * m / (sqrt(v) + eps))
    t = state["t"]
    lr_t = lr * math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    new = []
    for i, (wi, g) in enumerate(zip(w, grads)):
        state["m"][i] = 0.9 * state["m"][i] + 0.1 * g
        state["v"][i] = 0.999 * state["v"][i] + 0.001 * g * g
        new.append(wi - lr_t * state["m"][i] / (np.sqrt(state["v"][i]) + 1e-7))
    return new


def gae_np(rewards, values, ends):  # added: advantages and rewards-to-go, step by step
    adv, ret = np.zeros(len(rewards)), np.zeros(len(rewards))
    start = 0
    for end, last in ends:
        next_adv, next_value, next_ret = 0.0, last, last
        for i in range(end, start - 1, -1):
            delta = rewards[i] + buffer.gamma * next_value - values[i]
            adv[i] = next_adv = delta + buffer.gamma * buffer.lam * next_adv
            ret[i] = next_ret = rewards[i] + buffer.gamma * next_ret
            next_value = values[i]
        start = end + 1
    return adv, ret



# added: the models' outputs (float32 from the float64 states, which Keras casts) against
# numpy, and the log-probabilities of logprobabilities() against a numpy log-softmax
_obs = np.stack([observation, -observation, 2 * observation, [0.1, -2.0, 0.2, 3.0]])
_logits, _value = actor(_obs), critic(_obs)
assert _logits.shape == (4, 2) and _logits.dtype == em.float32
assert _value.shape == (4,) and _value.dtype == em.float32  # the critic's axis 1 squeezed
np.testing.assert_allclose(_logits.numpy(), mlp_np(weights_of(actor), _obs)[2],
                           rtol=1e-4, atol=1e-6)
np.testing.assert_allclose(_value.numpy(), mlp_np(weights_of(critic), _obs)[2][:, 0],
                           rtol=1e-4, atol=1e-6)
_z = np.array([[0.5, -1.0], [30.0, -30.0], [2.0, 2.0]], np.float32)
_lp = logprobabilities(em.constant(_z), em.constant([1, 0, 1], dtype=em.int64))
assert _lp.shape == (3,) and _lp.dtype == em.float32
np.testing.assert_allclose(_lp.numpy(), log_softmax_np(_z.astype(np.float64))[[0, 1, 2], [1, 0, 1]],
                           rtol=1e-6, atol=1e-6)

epoch_returns, policy_iterations = [], []  # added: for the checks
traced, tracing_counts = (sample_action, train_policy, train_value_function), None  # added

"""
## Train
"""
# Iterate over the number of epochs
for epoch in range(epochs):
    # Initialize the sum of the returns, lengths and number of episodes for each epoch
    sum_return = 0
    sum_length = 0
    num_episodes = 0
    actor_w, critic_w, ends = weights_of(actor), weights_of(critic), []  # added

    # Iterate over the steps of each epoch
    for t in range(steps_per_epoch):
        if render:
            env.render()

        # Get the logits, action, and take one step in the environment
        observation = observation.reshape(1, -1)
        logits, action = sample_action(observation)
        observation_new, reward, done, _ = env.step(action[0].numpy())
        episode_return += reward
        episode_length += 1

        # Get the value and log-probability of the action
        value_t = critic(observation)
        logprobability_t = logprobabilities(logits, action)

        # Store obs, act, rew, v_t, logp_pi_t
        buffer.store(observation, action, reward, value_t, logprobability_t)

        # Update the observation
        observation = observation_new

        # Finish trajectory if reached to a terminal state
        terminal = done
        if terminal or (t == steps_per_epoch - 1):
            last_value = 0 if done else critic(observation.reshape(1, -1))
            buffer.finish_trajectory(last_value)
            ends.append((t, 0.0 if done else float(last_value[0])))  # added
            sum_return += episode_return
            sum_length += episode_length
            num_episodes += 1
            observation, episode_return, episode_length = env.reset(), 0, 0

    # Get values from the buffer
    (
        observation_buffer,
        action_buffer,
        advantage_buffer,
        return_buffer,
        logprobability_buffer,
    ) = buffer.get()

    # added: the buffer against numpy: the stored values and log-probabilities from a numpy
    # forward pass of the weights the epoch ran with, the advantages and rewards-to-go step
    # by step, and the sampled actions against the policy's probabilities
    n = steps_per_epoch
    assert buffer.value_buffer.dtype == np.float32 and advantage_buffer.dtype == np.float32
    _, _, logits_np = mlp_np(actor_w, observation_buffer)
    logp_np = log_softmax_np(logits_np)
    np.testing.assert_allclose(logprobability_buffer, logp_np[np.arange(n), action_buffer],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(buffer.value_buffer, mlp_np(critic_w, observation_buffer)[2][:, 0],
                               rtol=1e-4, atol=1e-5)
    assert ends[-1][0] == n - 1 and sum(buffer.reward_buffer) == sum_return == n
    assert (buffer.gamma, buffer.lam) == (0.99, 0.95)  # upstream's `lam = 0.97` is unused
    adv_np, ret_np = gae_np(buffer.reward_buffer, buffer.value_buffer.astype(np.float64), ends)
    np.testing.assert_allclose(return_buffer, ret_np, rtol=1e-5)
    np.testing.assert_allclose(advantage_buffer, (adv_np - adv_np.mean()) / adv_np.std(),
                               rtol=1e-4, atol=1e-4)
    p1 = np.exp(logp_np[:, 1])  # a replay that repeated its first draw would fail this
    z = (action_buffer.sum() - p1.sum()) / math.sqrt((p1 * (1 - p1)).sum())
    assert set(np.unique(action_buffer)) == {0, 1} and abs(z) < 5, z
    if epoch == 0:  # one trace of sample_action; no function retraced after the first epoch
        assert sample_action.experimental_get_tracing_count() == 1
    else:
        assert [f.experimental_get_tracing_count() for f in traced] == tracing_counts
    if epoch == 0:  # added: the loss and its gradients, eagerly, against a numpy backward pass
        with tape_lib.GradientTape() as _tape:  # upstream's expressions, run eagerly
            _ratio = em.exp(logprobabilities(actor(observation_buffer), action_buffer)
                            - logprobability_buffer)
            _min_advantage = em.where(advantage_buffer > 0, (1 + clip_ratio) * advantage_buffer,
                                      (1 - clip_ratio) * advantage_buffer)
            _loss = -em.reduce_mean(em.minimum(_ratio * advantage_buffer, _min_advantage))
        _grads = _tape.gradient(_loss, actor.trainable_variables)
        _loss_np, _grads_np = policy_loss_and_grads_np(
            actor_w, observation_buffer, action_buffer, logprobability_buffer, advantage_buffer)
        assert _loss.shape == () and _loss.dtype == em.float32
        np.testing.assert_allclose(float(_loss), _loss_np, rtol=1e-4, atol=1e-6)
        for g, g_np in zip(_grads, _grads_np):
            assert g.shape == g_np.shape and g.dtype == em.float32
            np.testing.assert_allclose(g.numpy(), g_np, rtol=1e-3, atol=1e-4 * np.abs(g_np).max())
        with tape_lib.GradientTape() as _tape:
            _loss = em.reduce_mean((return_buffer - critic(observation_buffer)) ** 2)
        _grads = _tape.gradient(_loss, critic.trainable_variables)
        _loss_np, _grads_np = value_loss_and_grads_np(critic_w, observation_buffer, return_buffer)
        np.testing.assert_allclose(float(_loss), _loss_np, rtol=1e-4)
        for g, g_np in zip(_grads, _grads_np):
            np.testing.assert_allclose(g.numpy(), g_np, rtol=1e-3, atol=1e-4 * np.abs(g_np).max())
        policy_adam = {"t": 0, "m": [0.0] * 6, "v": [0.0] * 6}
        value_adam = {"t": 0, "m": [0.0] * 6, "v": [0.0] * 6}

    # Update the policy and implement early stopping using KL divergence
    for _ in range(train_policy_iterations):
        kl = train_policy(
            observation_buffer, action_buffer, logprobability_buffer, advantage_buffer
        )
        if _ == 0:  # added: the KL of the first update (the trace, then replays) from the
            w_after = weights_of(actor)  # numpy log-probabilities of the weights it left
            kl_np = np.mean(logprobability_buffer - log_softmax_np(mlp_np(
                w_after, observation_buffer)[2])[np.arange(n), action_buffer])
            assert kl.shape == () and kl.dtype == em.float32
            np.testing.assert_allclose(float(kl), kl_np, rtol=1e-3, atol=2e-6)
        if epoch == 0 and _ < 2:  # added: the first two updates (a trace and a replay)
            _loss_np, g_np = policy_loss_and_grads_np(actor_w, observation_buffer, action_buffer,
                                                      logprobability_buffer, advantage_buffer)
            actor_w = adam_np(actor_w, g_np, policy_adam, policy_learning_rate)
            for v, w_np in zip(actor.trainable_variables, actor_w):
                np.testing.assert_allclose(v.numpy(), w_np, rtol=1e-5, atol=1e-6)
        if kl > 1.5 * target_kl:
            # Early Stopping
            break

    policy_iterations.append(_ + 1)  # added

    # Update the value function
    for _ in range(train_value_iterations):
        train_value_function(observation_buffer, return_buffer)
        if epoch == 0 and _ < 2:  # added: the first two updates (a trace and a replay)
            _loss_np, g_np = value_loss_and_grads_np(critic_w, observation_buffer, return_buffer)
            critic_w = adam_np(critic_w, g_np, value_adam, value_function_learning_rate)
            for v, w_np in zip(critic.trainable_variables, critic_w):
                np.testing.assert_allclose(v.numpy(), w_np, rtol=1e-5, atol=1e-6)

    # Print mean return and length for each epoch
    print(
        f" Epoch: {epoch + 1}. Mean Return: {sum_return / num_episodes}. Mean Length: {sum_length / num_episodes}"  # noqa: E501
    )
    epoch_returns.append(sum_return / num_episodes)  # added
    tracing_counts = [f.experimental_get_tracing_count() for f in traced]  # added

# added: what training reached
print("policy iterations per epoch:", policy_iterations, f"({time.time() - T0:.1f} s)")
assert len(epoch_returns) == epochs and all(1 <= k <= train_policy_iterations
                                            for k in policy_iterations)
assert SHORT or min(epoch_returns[-2:]) > THRESHOLD, epoch_returns

"""Port of keras-team/keras-io examples/rl/ddpg_pendulum.py ("Deep Deterministic Policy
Gradient (DDPG)", the tf.keras version: an actor (Dense 256-256 relu, a tanh Dense(1) with a
uniform(-0.003, 0.003) kernel, times the action bound 2.0) and a critic (the state through
Dense 16-32, the action through Dense 32, Concatenate, Dense 256-256, Dense(1)), target
copies made equal with set_weights, Ornstein-Uhlenbeck exploration noise, a replay Buffer
whose @tf.function update trains the critic on the mean squared TD error and then the actor
on -mean(Q(s, actor(s))) with Adam(0.002) / Adam(0.001), and a @tf.function update_target
moving the targets' variables by tau = 0.005 after every step, on Pendulum-v0).

Upstream: https://github.com/keras-team/keras-io/blob/8bda227c08adf855a8b9ec579840e2a7171fff60/examples/rl/ddpg_pendulum.py
(2020/09/21, the last tf.keras version: keras-io's file now is the Keras 3 conversion, with
keras.ops, Pendulum-v1 and an update_target on get_weights/set_weights without tf.function)
Changed: names only (tensorflow -> ember.core as em, tensorflow.keras.layers ->
ember.nn.layers, tf.keras.Model / tf.keras.optimizers.Adam -> nn.*, tf.GradientTape ->
tape_lib.GradientTape (ember.tape imported as tape_lib, since upstream names its tape
`tape`), @tf.function -> @graph.function, tf.math.reduce_mean / tf.math.square ->
em.reduce_mean / em.square, tf.convert_to_tensor / tf.cast / tf.float32 / tf.squeeze /
tf.expand_dims -> em.*); the plot (matplotlib) and most prose are dropped. gym is not
installed here, so a minimal Pendulum-v0 below stands in for gym.make("Pendulum-v0"): gym
0.17's classic_control/pendulum.py (g 10, m 1, l 1, dt 0.05, max_speed 8, max_torque 2;
the torque clipped, the reward -(angle_normalize(th)^2 + 0.1 thdot^2 + 0.001 u^2) of the
state before the step, thdot += (-3g/(2l) sin(th + pi) + 3/(ml^2) u) dt, th += thdot dt,
then thdot clipped; reset uniform in [-pi, pi] x [-1, 1]; the float64 observation
[cos th, sin th, thdot]; float32 Box spaces, so upper_bound is np.float32(2.0)), the
TimeLimit wrapper of its registration (done after 200 steps, info TimeLimit.truncated) and
gym.utils.seeding.np_random (env.seed(n) seeds a RandomState with the SHA-512 hash of n, as
gym does), so seeded resets equal gym's. Upstream never seeds the environment (gym then
seeds from os.urandom); env.seed(0) is added.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream: 100 episodes, Dense(256) layers; 49 s of
CPU here, the average of the last 40 episodes passing -300 at episode 59 and reaching -158
at 69, where keras.io's logged run, of the Keras 3 version, passes -250 at 49 and -135
at 55): 40 episodes and Dense(64)
for upstream's four Dense(256) (9 s of CPU on one core); EMBER_PROGRAMS_SHORT=1 (the
strict-GPU run): 2 episodes, 1 noiseless evaluation, no threshold.
Added: seeds for numpy and ember; the stand-in checked against gym's numbers (the seeded
reset equals a RandomState seeded as gym seeds it, one clipped step worked out by hand,
every reward within [-16.2736044, 0], the 200-step limit); Keras's weight shapes and order
(a functional model lists the state's Dense(16) and Dense(32) before the action's
Dense(32), as tf.keras orders layers by depth), dtypes and initialisers (glorot_uniform
kernels, zero biases, the actor's last kernel within +-0.003, from Keras's RandomUniform);
set_weights makes the targets equal without sharing variables; the actor and critic outputs
(float32 from float64 states and actions, as Keras casts to floatx) against a numpy forward
pass of their weights; the first four steps (an eager first call that makes Adam's slots, a
traced one, two replays) against numpy: the action is clip(actor(s) + the OU noise drawn),
the batch's dtypes and shapes, the critic's step (numpy's backward pass of the TD loss
through Q, with targets from mu' and Q', then Keras's Adam:
lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + 1e-7)), then the actor's step (the
gradient through the critic *as just updated*: in a tf.function TensorFlow orders the
second tape's reads after the first apply_gradients), the targets untouched by update and
moved by update_target to tau * w + (1 - tau) * w_target; each function traced twice
(update: a first call making variables, then one trace; update_target: once for the actor's
list of variables, once for the critic's) and replayed after; the episode rewards and the
40-episode averages recomputed; the saved weights load back into fresh models exactly.
Thresholds (CPU run): the trained actor without noise, from 5 seeded starts, has a median
episode reward above -400, where the untrained actor (its tanh output near 0: the pendulum
swings unforced) has a median below -600 (this run: -243 against -1303; seeds 0-7: trained
medians -121 to -243, untrained -862 to -1303; a 40-episode actor sometimes leaves one
start in five hanging, hence the median), and the last 10 training episodes average above
-600 (-361; seeds 0-7: -111 to -361; the first 25 episodes, before the swing-up is learnt,
average -1322; learnt episodes score 0 to about -400, most near -120).
Fixed in ember since the port was written: TF 2's top-level initializers
(tf.random_uniform_initializer, random_normal_, zeros_, ones_ and constant_initializer)
were missing (GAP 1: AttributeError: module 'ember.core' has no attribute
'random_uniform_initializer'; nn.initializers.RandomUniform stood in):
em.random_uniform_initializer now exists, and a Keras layer given one uses Keras's
RandomUniform of the same range (checked on the actor's last Dense). Upstream's line is
restored.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
2. actor_model.save_weights("pendulum_actor.h5") (and the three lines after it) is refused
("ValueError: save_weights: the filename must end in `.weights.h5` or `.safetensors`"):
Keras 3's rule (ember follows it, docs/guide/saving.md), where tf.keras, which this
upstream uses, writes an HDF5 file for any name ending in .h5; "<name>.weights.h5" stands
in. Everything else upstream calls (Input(shape=3) with an int shape, a functional model
times a numpy float32, Concatenate, get_weights/set_weights, model.variables, a
graph.function method of a class, a graph.function given lists of variables, em.cast /
squeeze / expand_dims, Adam) runs as upstream's lines and gives TensorFlow's numbers.
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

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
SEED = 0  # added: numpy, ember and the environment
np.random.seed(SEED)
em.random.set_seed(SEED)
T0 = time.time()

"""
## A minimal Pendulum-v0 (gym 0.17's pendulum.py, TimeLimit and seeding.np_random)
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


def _box(low, high, shape):  # gym.spaces.Box(low, high, shape, dtype=np.float32)
    return types.SimpleNamespace(low=np.full(shape, low).astype(np.float32),
                                 high=np.full(shape, high).astype(np.float32), shape=shape)


def angle_normalize(x):
    return (((x + np.pi) % (2 * np.pi)) - np.pi)


class PendulumEnv:
    def __init__(self, g=10.0, max_episode_steps=200):
        self.max_speed = 8
        self.max_torque = 2.
        self.dt = .05
        self.g = g
        self.m = 1.
        self.l = 1.
        high = np.array([1., 1., self.max_speed], dtype=np.float32)
        self.action_space = _box(-self.max_torque, self.max_torque, (1,))
        self.observation_space = _box(-high, high, (3,))
        self.max_episode_steps = max_episode_steps  # TimeLimit (Pendulum-v0's registration)
        self._elapsed_steps = None
        self.np_random = np.random.RandomState()  # gym seeds from os.urandom here

    def seed(self, seed=None):
        self.np_random, seed = np_random(seed)
        return [seed]

    def step(self, u):
        assert self._elapsed_steps is not None, "Cannot call env.step() before calling reset()"
        th, thdot = self.state  # th := theta

        g = self.g
        m = self.m
        l = self.l
        dt = self.dt

        u = np.clip(u, -self.max_torque, self.max_torque)[0]
        self.last_u = u  # for rendering
        costs = angle_normalize(th) ** 2 + .1 * thdot ** 2 + .001 * (u ** 2)

        newthdot = thdot + (-3 * g / (2 * l) * np.sin(th + np.pi) + 3. / (m * l ** 2) * u) * dt
        newth = th + newthdot * dt
        newthdot = np.clip(newthdot, -self.max_speed, self.max_speed)

        self.state = np.array([newth, newthdot])
        done, info = False, {}
        self._elapsed_steps += 1
        if self._elapsed_steps >= self.max_episode_steps:
            info["TimeLimit.truncated"] = not done
            done = True
        return self._get_obs(), -costs, done, info

    def reset(self):
        self._elapsed_steps = 0
        high = np.array([np.pi, 1])
        self.state = self.np_random.uniform(low=-high, high=high)
        self.last_u = None
        return self._get_obs()

    def _get_obs(self):
        theta, thetadot = self.state
        return np.array([np.cos(theta), np.sin(theta), thetadot])


def _make(env_id):
    assert env_id == "Pendulum-v0", env_id
    return PendulumEnv(max_episode_steps=200)


gym = types.SimpleNamespace(make=_make)  # the stand-in for `import gym`

# added: the stand-in against gym's numbers: seeding, one step by hand, the limits
_env = gym.make("Pendulum-v0")
_env.seed(42)
_rng = np.random.RandomState(_int_list_from_bigint(_bigint_from_bytes(
    hashlib.sha512(b"42").digest()[:8])))
_o0 = _env.reset()
_th, _thd = _rng.uniform(low=[-np.pi, -1.0], high=[np.pi, 1.0])
assert _o0.dtype == np.float64 and _o0.shape == (3,)
np.testing.assert_array_equal(_o0, [np.cos(_th), np.sin(_th), _thd])
_o1, _r, _d, _info = _env.step([np.array(3.0)])  # a torque beyond the bound is clipped to 2
_thd1 = _thd + (15.0 * np.sin(_th) + 3.0 * 2.0) * 0.05  # -3g/2l sin(th + pi) = 15 sin(th)
np.testing.assert_allclose(_o1, [np.cos(_th + 0.05 * _thd1), np.sin(_th + 0.05 * _thd1),
                                 np.clip(_thd1, -8, 8)], rtol=1e-12)
_a = (_th + np.pi) % (2 * np.pi) - np.pi
np.testing.assert_allclose(_r, -(_a ** 2 + 0.1 * _thd ** 2 + 0.001 * 4.0), rtol=1e-12)
assert (_d, _info) == (False, {})
_n, _rewards = 1, [_r]
while not _d:
    _o, _r, _d, _info = _env.step([np.array(0.0)])
    _rewards.append(_r)
    _n += 1
    assert abs(_o[2]) <= 8 and abs(np.hypot(_o[0], _o[1]) - 1) < 1e-12
assert _n == 200 and _info == {"TimeLimit.truncated": True}, (_n, _info)
assert all(-(np.pi ** 2 + 0.1 * 64 + 0.001 * 4) <= r <= 0 for r in _rewards)  # -16.2736044

"""
## Setup
"""

problem = "Pendulum-v0"
env = gym.make(problem)
env.seed(SEED)  # added: upstream leaves gym to seed from os.urandom

num_states = env.observation_space.shape[0]
print("Size of State Space ->  {}".format(num_states))  # noqa: UP032
num_actions = env.action_space.shape[0]
print("Size of Action Space ->  {}".format(num_actions))  # noqa: UP032

upper_bound = env.action_space.high[0]
lower_bound = env.action_space.low[0]

print("Max Value of Action ->  {}".format(upper_bound))  # noqa: UP032
print("Min Value of Action ->  {}".format(lower_bound))  # noqa: UP032
assert (num_states, num_actions, upper_bound, lower_bound) == (3, 1, 2.0, -2.0)
assert type(upper_bound) is np.float32

"""
To implement better exploration by the Actor network, we use noisy perturbations,
specifically
an **Ornstein-Uhlenbeck process** for generating noise, as described in the paper.
It samples noise from a correlated normal distribution.
"""


class OUActionNoise:
    def __init__(self, mean, std_deviation, theta=0.15, dt=1e-2, x_initial=None):
        self.theta = theta
        self.mean = mean
        self.std_dev = std_deviation
        self.dt = dt
        self.x_initial = x_initial
        self.reset()

    def __call__(self):
        # Formula taken from https://www.wikipedia.org/wiki/Ornstein-Uhlenbeck_process.
        x = (
            self.x_prev
            + self.theta * (self.mean - self.x_prev) * self.dt
            + self.std_dev * np.sqrt(self.dt) * np.random.normal(size=self.mean.shape)
        )
        # Store x into x_prev
        # Makes next noise dependent on current one
        self.x_prev = x
        return x

    def reset(self):
        if self.x_initial is not None:
            self.x_prev = self.x_initial
        else:
            self.x_prev = np.zeros_like(self.mean)


"""
The `Buffer` class implements Experience Replay.
"""


class Buffer:
    def __init__(self, buffer_capacity=100000, batch_size=64):
        # Number of "experiences" to store at max
        self.buffer_capacity = buffer_capacity
        # Num of tuples to train on.
        self.batch_size = batch_size

        # Its tells us num of times record() was called.
        self.buffer_counter = 0

        # Instead of list of tuples as the exp.replay concept go
        # We use different np.arrays for each tuple element
        self.state_buffer = np.zeros((self.buffer_capacity, num_states))
        self.action_buffer = np.zeros((self.buffer_capacity, num_actions))
        self.reward_buffer = np.zeros((self.buffer_capacity, 1))
        self.next_state_buffer = np.zeros((self.buffer_capacity, num_states))

    # Takes (s,a,r,s') obervation tuple as input
    def record(self, obs_tuple):
        # Set index to zero if buffer_capacity is exceeded,
        # replacing old records
        index = self.buffer_counter % self.buffer_capacity

        self.state_buffer[index] = obs_tuple[0]
        self.action_buffer[index] = obs_tuple[1]
        self.reward_buffer[index] = obs_tuple[2]
        self.next_state_buffer[index] = obs_tuple[3]

        self.buffer_counter += 1

    # Eager execution is turned on by default in TensorFlow 2. Decorating with tf.function allows
    # TensorFlow to build a static graph out of the logic and computations in our function.
    # This provides a large speed up for blocks of code that contain many small TensorFlow operations such as this one.  # noqa: E501
    @graph.function
    def update(
        self,
        state_batch,
        action_batch,
        reward_batch,
        next_state_batch,
    ):
        # Training and updating Actor & Critic networks.
        # See Pseudo Code.
        with tape_lib.GradientTape() as tape:
            target_actions = target_actor(next_state_batch, training=True)
            y = reward_batch + gamma * target_critic(
                [next_state_batch, target_actions], training=True
            )
            critic_value = critic_model([state_batch, action_batch], training=True)
            critic_loss = em.reduce_mean(em.square(y - critic_value))

        critic_grad = tape.gradient(critic_loss, critic_model.trainable_variables)
        critic_optimizer.apply_gradients(
            zip(critic_grad, critic_model.trainable_variables)
        )

        with tape_lib.GradientTape() as tape:
            actions = actor_model(state_batch, training=True)
            critic_value = critic_model([state_batch, actions], training=True)
            # Used `-value` as we want to maximize the value given
            # by the critic for our actions
            actor_loss = -em.reduce_mean(critic_value)

        actor_grad = tape.gradient(actor_loss, actor_model.trainable_variables)
        actor_optimizer.apply_gradients(
            zip(actor_grad, actor_model.trainable_variables)
        )

    # We compute the loss and update parameters
    def learn(self):
        # Get sampling range
        record_range = min(self.buffer_counter, self.buffer_capacity)
        # Randomly sample indices
        batch_indices = np.random.choice(record_range, self.batch_size)

        # Convert to tensors
        state_batch = em.convert_to_tensor(self.state_buffer[batch_indices])
        action_batch = em.convert_to_tensor(self.action_buffer[batch_indices])
        reward_batch = em.convert_to_tensor(self.reward_buffer[batch_indices])
        reward_batch = em.cast(reward_batch, dtype=em.float32)
        next_state_batch = em.convert_to_tensor(self.next_state_buffer[batch_indices])
        self.last_batch = (state_batch, action_batch, reward_batch, next_state_batch)  # added

        self.update(state_batch, action_batch, reward_batch, next_state_batch)


# This update target parameters slowly
# Based on rate `tau`, which is much less than one.
@graph.function
def update_target(target_weights, weights, tau):
    for (a, b) in zip(target_weights, weights):
        a.assign(b * tau + a * (1 - tau))


"""
Here we define the Actor and Critic networks. These are basic Dense models
with `ReLU` activation.
"""

HIDDEN = 256 if FULL else 64  # added: the width of upstream's Dense(256) layers


def get_actor():
    # Initialize weights between -3e-3 and 3-e3
    last_init = em.random_uniform_initializer(minval=-0.003, maxval=0.003)

    inputs = layers.Input(shape=(num_states,))
    out = layers.Dense(HIDDEN, activation="relu")(inputs)
    out = layers.Dense(HIDDEN, activation="relu")(out)
    outputs = layers.Dense(1, activation="tanh", kernel_initializer=last_init)(out)

    # Our upper bound is 2.0 for Pendulum.
    outputs = outputs * upper_bound
    model = nn.Model(inputs, outputs)
    return model


def get_critic():
    # State as input
    state_input = layers.Input(shape=(num_states))
    state_out = layers.Dense(16, activation="relu")(state_input)
    state_out = layers.Dense(32, activation="relu")(state_out)

    # Action as input
    action_input = layers.Input(shape=(num_actions))
    action_out = layers.Dense(32, activation="relu")(action_input)

    # Both are passed through seperate layer before concatenating
    concat = layers.Concatenate()([state_out, action_out])

    out = layers.Dense(HIDDEN, activation="relu")(concat)
    out = layers.Dense(HIDDEN, activation="relu")(out)
    outputs = layers.Dense(1)(out)

    # Outputs single value for give state-action
    model = nn.Model([state_input, action_input], outputs)

    return model


"""
`policy()` returns an action sampled from our Actor network plus some noise for
exploration.
"""


def policy(state, noise_object):
    sampled_actions = em.squeeze(actor_model(state))
    noise = noise_object()
    # Adding noise to action
    sampled_actions = sampled_actions.numpy() + noise

    # We make sure action is within bounds
    legal_action = np.clip(sampled_actions, lower_bound, upper_bound)

    return [np.squeeze(legal_action)]


# added: the two models in float64 numpy, forward and backward (Keras casts the float64
# states and actions to float32, its floatx, before the first layer)
def _f32(x):
    return np.asarray(x, np.float32).astype(np.float64)


def numpy_actor(w, s):
    (k0, b0, k1, b1, k2, b2) = w
    h0 = np.maximum(_f32(s) @ k0 + b0, 0)
    h1 = np.maximum(h0 @ k1 + b1, 0)
    t = np.tanh(h1 @ k2 + b2)
    return t * 2.0, (_f32(s), h0, h1, t)


def numpy_actor_grads(w, cache, d_out):  # d_out: dLoss/dActions, shape (n, 1)
    (k0, b0, k1, b1, k2, b2) = w
    s, h0, h1, t = cache
    d = d_out * 2.0 * (1 - t * t)
    dh1 = d @ k2.T * (h1 > 0)
    dh0 = dh1 @ k1.T * (h0 > 0)
    return [s.T @ dh0, dh0.sum(0), h0.T @ dh1, dh1.sum(0), h1.T @ d, d.sum(0)]


def numpy_critic(w, s, a):
    (k0, b0, k1, b1, k2, b2, k3, b3, k4, b4, k5, b5) = w
    s, a = _f32(s), _f32(a)
    hs0 = np.maximum(s @ k0 + b0, 0)
    hs1 = np.maximum(hs0 @ k1 + b1, 0)
    ha = np.maximum(a @ k2 + b2, 0)
    cat = np.concatenate([hs1, ha], axis=-1)  # Concatenate()([state_out, action_out])
    h3 = np.maximum(cat @ k3 + b3, 0)
    h4 = np.maximum(h3 @ k4 + b4, 0)
    return h4 @ k5 + b5, (s, a, hs0, hs1, ha, cat, h3, h4)


def numpy_critic_grads(w, cache, d_q):  # -> the weights' gradients and dLoss/dAction
    (k0, b0, k1, b1, k2, b2, k3, b3, k4, b4, k5, b5) = w
    s, a, hs0, hs1, ha, cat, h3, h4 = cache
    dh4 = d_q @ k5.T * (h4 > 0)
    dh3 = dh4 @ k4.T * (h3 > 0)
    dcat = dh3 @ k3.T
    dhs1 = dcat[:, :hs1.shape[1]] * (hs1 > 0)
    dha = dcat[:, hs1.shape[1]:] * (ha > 0)
    dhs0 = dhs1 @ k1.T * (hs0 > 0)
    grads = [s.T @ dhs0, dhs0.sum(0), hs0.T @ dhs1, dhs1.sum(0), a.T @ dha, dha.sum(0),
             cat.T @ dh3, dh3.sum(0), h3.T @ dh4, dh4.sum(0), h4.T @ d_q, d_q.sum(0)]
    return grads, dha @ k2.T


class NumpyAdam:  # added: Keras's Adam (epsilon 1e-7, outside the bias correction of v)
    def __init__(self, lr, weights):
        self.lr, self.t = lr, 0
        self.m = [np.zeros_like(w) for w in weights]
        self.v = [np.zeros_like(w) for w in weights]
        self.gmax = [np.zeros_like(w) for w in weights]

    def step(self, weights, grads):
        self.t += 1
        lr_t = self.lr * math.sqrt(1 - 0.999 ** self.t) / (1 - 0.9 ** self.t)
        new = []
        for i, (w, g) in enumerate(zip(weights, grads)):
            self.m[i] = self.m[i] + (g - self.m[i]) * (1 - 0.9)
            self.v[i] = self.v[i] + (g * g - self.v[i]) * (1 - 0.999)
            self.gmax[i] = np.maximum(self.gmax[i], np.abs(g))
            new.append(w - lr_t * self.m[i] / (np.sqrt(self.v[i]) + 1e-7))
        return new


def check_step(name, adam, before, after, expected):
    """ember's weights after a step against numpy's: where some gradient so far was not
    tiny, to 1e-3 of the step (Adam's step is ~lr * sign(g): elements whose gradients are
    all near zero have an ill-determined sign in float32), elsewhere a bounded step."""
    covered = nonzero = 0
    for b, a, e, gmax in zip(before, after, expected, adam.gmax):
        well = gmax > 1e-4 * gmax.max()
        covered, nonzero = covered + well.sum(), nonzero + (gmax > 0).sum()
        np.testing.assert_allclose((a - b)[well], (e - b)[well], rtol=1e-3,
                                   atol=1e-3 * adam.lr, err_msg=name)
        assert np.all(np.abs(a - b)[~well] <= 3 * adam.lr), name
    assert covered > 0.8 * nonzero > 0.1 * sum(b.size for b in before), (name, covered, nonzero)


def weights64(model):
    return [np.asarray(w, np.float64) for w in model.get_weights()]


def evaluate(model, env, episodes):  # added: the actor without noise, one reward a run
    totals = []
    for _ in range(episodes):
        obs, done, total = env.reset(), False, 0.0
        while not done:
            act = em.squeeze(model(em.expand_dims(em.convert_to_tensor(obs), 0))).numpy()
            obs, r, done, _ = env.step([np.clip(act, lower_bound, upper_bound)])
            total += r
        totals.append(total)
    return totals


def check_update(batch, before):  # added: Buffer.update against numpy
    s_b, a_b, r_b, s2_b = (x.numpy() for x in batch)
    assert (s_b.dtype, a_b.dtype, r_b.dtype, s2_b.dtype) == (
        np.float64, np.float64, np.float32, np.float64)
    assert s_b.shape == s2_b.shape == (64, 3) and a_b.shape == r_b.shape == (64, 1)
    w_actor, w_critic, w_tactor, w_tcritic = before
    # the critic: mean((r + gamma * Q'(s', mu'(s')) - Q(s, a))^2)
    y = r_b + gamma * numpy_critic(w_tcritic, s2_b, numpy_actor(w_tactor, s2_b)[0])[0]
    q, cache = numpy_critic(w_critic, s_b, a_b)
    critic_grads, _ = numpy_critic_grads(w_critic, cache, -2 * (y - q) / len(q))
    new_critic = weights64(critic_model)
    check_step("critic", critic_adam, w_critic, new_critic,
               critic_adam.step(w_critic, critic_grads))
    # the actor: -mean(Q(s, mu(s))) through the critic just updated (TensorFlow orders the
    # read after the assignment in a tf.function)
    mu, a_cache = numpy_actor(w_actor, s_b)
    _, c_cache = numpy_critic(new_critic, s_b, mu)
    _, d_mu = numpy_critic_grads(new_critic, c_cache, np.full((len(mu), 1), -1 / len(mu)))
    actor_grads = numpy_actor_grads(w_actor, a_cache, d_mu)
    check_step("actor", actor_adam, w_actor, weights64(actor_model),
               actor_adam.step(w_actor, actor_grads))
    for m, w in ((target_actor, w_tactor), (target_critic, w_tcritic)):  # not trained
        for a, b in zip(weights64(m), w):
            np.testing.assert_array_equal(a, b)


"""
## Training hyperparameters
"""

std_dev = 0.2
ou_noise = OUActionNoise(mean=np.zeros(1), std_deviation=float(std_dev) * np.ones(1))

actor_model = get_actor()
critic_model = get_critic()

target_actor = get_actor()
target_critic = get_critic()

# added: Keras's weight shapes and order (a functional model lists its layers by depth
# from the inputs: the state's Dense(16), its Dense(32), then the action's Dense(32)) and
# initialisers (glorot_uniform kernels, zero biases, the actor's last kernel in +-0.003)
H = HIDDEN
assert [tuple(v.shape) for v in actor_model.trainable_variables] == [
    (3, H), (H,), (H, H), (H,), (H, 1), (1,)], actor_model.trainable_variables
assert [tuple(v.shape) for v in critic_model.trainable_variables] == [
    (3, 16), (16,), (16, 32), (32,), (1, 32), (32,), (64, H), (H,), (H, H), (H,), (H, 1),
    (1,)], critic_model.trainable_variables
assert len(actor_model.variables) == 6 and len(critic_model.variables) == 12
for _w in actor_model.get_weights() + critic_model.get_weights():
    assert _w.dtype == np.float32
for _k, _b in zip(*[iter(actor_model.get_weights()[:4] + critic_model.get_weights())] * 2):
    assert not _b.any() and 0.8 < np.abs(_k).max() / math.sqrt(6 / sum(_k.shape)) <= 1
_last, _last_bias = actor_model.get_weights()[4:]
assert 0.002 < np.abs(_last).max() <= 0.003 and not _last_bias.any(), _last
_last_init = [x for x in actor_model.layers if isinstance(x, layers.Dense)][-1].kernel_initializer
assert type(_last_init) is nn.initializers.RandomUniform, _last_init  # Keras's, from TF's
assert (_last_init.minval, _last_init.maxval) == (-0.003, 0.003)
assert not np.allclose(target_actor.get_weights()[0], actor_model.get_weights()[0])

# Making the weights equal initially
target_actor.set_weights(actor_model.get_weights())
target_critic.set_weights(critic_model.get_weights())
for _a, _b in zip(target_actor.variables + target_critic.variables,
                  actor_model.variables + critic_model.variables):  # added
    np.testing.assert_array_equal(_a.numpy(), _b.numpy())
    assert _a is not _b

# added: both models (float64 input, as the environment's states) against numpy
_s = np.random.RandomState(1).uniform(-1, 1, (5, 3)) * [1, 1, 8]
_a = np.random.RandomState(2).uniform(-2, 2, (5, 1))
_out = actor_model(em.convert_to_tensor(_s))
assert _out.shape == (5, 1) and _out.dtype == em.float32, _out
np.testing.assert_allclose(_out.numpy(), numpy_actor(weights64(actor_model), _s)[0],
                           rtol=1e-5, atol=1e-7)
_q = critic_model([em.convert_to_tensor(_s), em.convert_to_tensor(_a)])
assert _q.shape == (5, 1) and _q.dtype == em.float32, _q
np.testing.assert_allclose(_q.numpy(), numpy_critic(weights64(critic_model), _s, _a)[0],
                           rtol=1e-5, atol=1e-6)

# Learning rate for actor-critic models
critic_lr = 0.002
actor_lr = 0.001

critic_optimizer = nn.optimizers.Adam(critic_lr)
actor_optimizer = nn.optimizers.Adam(actor_lr)

total_episodes = 100 if FULL else 2 if SHORT else 40
CHECK_STEPS = 4  # added: steps checked against numpy (the 3rd and 4th replay the traces)
EVAL_EPISODES = 1 if SHORT else 5  # added: noiseless runs of the actor
# Discount factor for future rewards
gamma = 0.99
# Used to update target networks
tau = 0.005

buffer = Buffer(50000, 64)

"""
Now we implement our main training loop, and iterate over episodes.
"""

eval_env = gym.make(problem)  # added: the actor without noise, before and after training
eval_env.seed(SEED + 1)
untrained_rewards = evaluate(actor_model, eval_env, EVAL_EPISODES)
eval_env.seed(SEED + 1)  # the same starting states
critic_adam = NumpyAdam(critic_lr, weights64(critic_model))  # added: numpy's optimizers
actor_adam = NumpyAdam(actor_lr, weights64(actor_model))
step_count = 0  # added
episode_rewards = []  # added: every reward the environment gave

# To store reward history of each episode
ep_reward_list = []
# To store average reward history of last few episodes
avg_reward_list = []

# Takes about 4 min to train
for ep in range(total_episodes):

    prev_state = env.reset()
    episodic_reward = 0

    while True:
        # Uncomment this to see the Actor in action
        # But not in a python notebook.
        # env.render()

        tf_prev_state = em.expand_dims(em.convert_to_tensor(prev_state), 0)

        action = policy(tf_prev_state, ou_noise)
        # Recieve state and reward from environment.
        state, reward, done, info = env.step(action)

        buffer.record((prev_state, action, reward, state))
        episodic_reward += reward
        episode_rewards.append(reward)  # added
        if step_count < CHECK_STEPS:  # added: the weights before this step's update
            before = [weights64(m) for m in (actor_model, critic_model, target_actor,
                                             target_critic)]
            assert tf_prev_state.shape == (1, 3) and tf_prev_state.dtype == em.float64
            assert isinstance(action, list) and np.shape(action[0]) == ()
            np.testing.assert_allclose(action[0], np.clip(numpy_actor(
                before[0], prev_state[None])[0][0, 0] + ou_noise.x_prev[0], -2, 2), rtol=1e-6)
            assert np.shape(reward) == () and buffer.reward_buffer[step_count, 0] == reward

        buffer.learn()
        if step_count < CHECK_STEPS:  # added: the update against numpy
            check_update(buffer.last_batch, before)
        update_target(target_actor.variables, actor_model.variables, tau)
        update_target(target_critic.variables, critic_model.variables, tau)
        if step_count < CHECK_STEPS:  # added: the targets moved by tau
            for m, t_old, src in ((target_actor, before[2], actor_model),
                                  (target_critic, before[3], critic_model)):
                for w, w_old, w_src in zip(weights64(m), t_old, weights64(src)):
                    np.testing.assert_allclose(w, tau * w_src + (1 - tau) * w_old,
                                               rtol=1e-6, atol=1e-8)
        step_count += 1  # added

        # End this episode when `done` is True
        if done:
            break

        prev_state = state

    ep_reward_list.append(episodic_reward)

    # Mean of last 40 episodes
    avg_reward = np.mean(ep_reward_list[-40:])
    if ep % 10 == 9 or ep == total_episodes - 1:  # added: a line every 10 episodes
        print("Episode * {} * Avg Reward is ==> {}".format(ep, avg_reward))  # noqa: UP032
    avg_reward_list.append(avg_reward)

# added: what the loop did
assert len(ep_reward_list) == total_episodes and step_count == 200 * total_episodes
assert buffer.buffer_counter == step_count
np.testing.assert_allclose(ep_reward_list, np.reshape(episode_rewards, (-1, 200)).sum(1),
                           rtol=1e-12)
np.testing.assert_allclose(avg_reward_list, [np.mean(ep_reward_list[max(0, i - 39):i + 1])
                                             for i in range(total_episodes)], rtol=1e-12)
# the step replayed its trace (a first call that made Adam's slots, then one trace) and
# update_target traced once for the actor's variables and once for the critic's
assert buffer.update.experimental_get_tracing_count() == 2
assert update_target.experimental_get_tracing_count() == 2

"""
If training proceeds correctly, the average episodic reward will increase with time.
"""

# Save the weights
# GAP 2: actor_model.save_weights("pendulum_actor.h5")
actor_model.save_weights("pendulum_actor.weights.h5")
# GAP 2: critic_model.save_weights("pendulum_critic.h5")
critic_model.save_weights("pendulum_critic.weights.h5")

# GAP 2: target_actor.save_weights("pendulum_target_actor.h5")
target_actor.save_weights("pendulum_target_actor.weights.h5")
# GAP 2: target_critic.save_weights("pendulum_target_critic.h5")
target_critic.save_weights("pendulum_target_critic.weights.h5")

# added: the saved weights load into fresh models, and the trained actor is better
for _model, _path in ((actor_model, "pendulum_actor"), (critic_model, "pendulum_critic"),
                      (target_actor, "pendulum_target_actor"),
                      (target_critic, "pendulum_target_critic")):
    _fresh = get_actor() if "actor" in _path else get_critic()
    _fresh.load_weights(_path + ".weights.h5")
    for _a, _b in zip(_fresh.get_weights(), _model.get_weights()):
        np.testing.assert_array_equal(_a, _b)
trained_rewards = evaluate(actor_model, eval_env, EVAL_EPISODES)
print("untrained actor:", np.round(untrained_rewards), "trained:", np.round(trained_rewards),
      "last 10 episodes:", np.round(ep_reward_list[-10:]), f"{time.time() - T0:.1f} s")
assert all(-16.2736044 * 200 <= r <= 0 for r in ep_reward_list + untrained_rewards)
assert SHORT or np.median(trained_rewards) > -400, trained_rewards
assert SHORT or np.mean(ep_reward_list[-10:]) > -600, ep_reward_list
assert SHORT or np.median(untrained_rewards) < -600, untrained_rewards

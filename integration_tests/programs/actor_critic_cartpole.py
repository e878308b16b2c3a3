"""Port of keras-team/keras-io examples/rl/actor_critic_cartpole.py ("Actor Critic Method":
a functional model with one shared Dense(128, relu) layer, a softmax actor head over the two
actions and a one-unit critic head, trained on CartPole-v0 one episode at a time: every step
of an episode runs under one GradientTape, the action is drawn with np.random.choice from
the actor's probabilities, the discounted returns are normalised, and the loss is the sum of
-log_prob * (return - value) and the Huber loss of the critic, minimised with Adam(0.01)
until the running reward passes 195).

Upstream: https://github.com/keras-team/keras-io/blob/0df30d775727a6789b7bdb4028561f2026cc4d52/examples/rl/actor_critic_cartpole.py
Changed: names only (tensorflow / tensorflow.keras / tensorflow.keras.layers -> ember.core /
ember.nn / ember.nn.layers, tf.GradientTape -> tape_lib.GradientTape (ember.tape imported as
tape_lib, since upstream names its tape `tape`), tf.convert_to_tensor /
tf.expand_dims -> em.*, tf.math.log -> em.log); the prose and the visualisation GIFs are
dropped. gym is not installed here, so a minimal CartPole-v0 below stands in for
gym.make("CartPole-v0"): gym 0.17.1's classic_control/cartpole.py (Sutton's cart-pole
equations and constants, Euler integration, tau 0.02, done when |x| > 2.4 or |theta| > 12
degrees, reward 1.0 on every step including the last, the float64 state reset uniformly in
[-0.05, 0.05]), the TimeLimit wrapper of its registration (done after 200 steps) and
gym.utils.seeding.np_random (env.seed(42) seeds a RandomState with the SHA-512 hash of 42,
as gym does), so seeded resets equal gym's.
Reduced: the run stops once the running reward passes 120, or after 300 episodes (upstream:
195, no cap; this seed passes 120 at episode 183, 4 s); EMBER_PROGRAMS_FULL=1 restores
upstream's loop and 195 (solved here at episode 464, 21 s on one core; keras.io's logged
run, the Keras 3 version, solved at episode 322; six other numpy/ember seeds pass 120 at
episodes 80 to 274); EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 6 episodes, no threshold.
Added: seeds for numpy and ember (upstream seeds only the environment); the environment
checked against gym's seeding (the reset equals a RandomState seeded as gym seeds it), one
step worked out by hand from the equations, a fall ending an episode and the 200-step
limit; Keras's weight shapes and initialisers (glorot_uniform limits, zero biases); the
model's output shapes and dtypes (float32 from the float64 state, which Keras casts) and,
for the states of the first episode, its actor and critic outputs against a numpy forward
pass of its weights; the Huber loss against numpy on both sides of delta; the first
episode's loss and gradients against a numpy backward pass (the gradient reaches the critic
through both `diff = ret - value` and the Huber loss's y_true, as in TensorFlow, where
neither stops it); Keras's first Adam step against numpy (lr * sqrt(1 - beta_2^t) /
(1 - beta_1^t) * m / (sqrt(v) + 1e-7)); the running reward recomputed from the episode
lengths; and the training threshold: the running reward (an exponential average, weight
0.05, starting at 0) must pass 120, i.e. the policy keeps the pole up for well over 120 of
the 200 steps for tens of episodes in a row, where the untrained, near-uniform policy lasts
about 22 steps (a random policy's mean on CartPole; this run's first 10 episodes average
15), and a broken gradient or update would leave it there.
Found: no GAP: every upstream line runs as written (names changed only), and every value
checked agrees with what Keras gives. Outside upstream's lines: ember's loss objects
(Huber, MeanSquaredError, ...) keep a float64 input's dtype and return float64 where Keras
casts y_true and y_pred to the loss's dtype (floatx, float32) and returns float32; they take
no `dtype=` argument (TypeError) nor Keras 3's reductions None, "mean" and
"mean_with_sample_weight" (ValueError); and nn.losses has no `huber` function
(keras.losses.huber; AttributeError).
"""

import hashlib
import math
import os
import struct
import types

import numpy as np

import ember.core as em
from ember import nn
from ember import tape as tape_lib
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
MAX_EPISODES = None if FULL else 6 if SHORT else 300
SOLVED = 195 if FULL else 120
np.random.seed(0)
em.random.set_seed(0)

"""
## A minimal CartPole-v0 (gym 0.17.1's cartpole.py, TimeLimit and seeding.np_random)
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
        # Angle at which to fail the episode
        self.theta_threshold_radians = 12 * 2 * math.pi / 360
        self.x_threshold = 2.4
        self.max_episode_steps = max_episode_steps  # TimeLimit (CartPole-v0's registration)
        self.np_random = np.random.RandomState()  # gym seeds from os.urandom here
        self.state = None
        self.steps_beyond_done = None
        self._elapsed_steps = None

    def seed(self, seed=None):
        self.np_random, seed = np_random(seed)
        return [seed]

    def step(self, action):
        assert isinstance(action, (int, np.integer)) and 0 <= action < 2, (
            f"{action!r} ({type(action)}) invalid")  # action_space.contains(action): Discrete(2)
        assert self._elapsed_steps is not None, "Cannot call env.step() before calling reset()"
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta = math.cos(theta)
        sintheta = math.sin(theta)
        temp = (force + self.polemass_length * theta_dot * theta_dot * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta * costheta / self.total_mass))
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
        self._elapsed_steps += 1
        if self._elapsed_steps >= self.max_episode_steps:
            info["TimeLimit.truncated"] = not done
            done = True
        return np.array(self.state), reward, done, info

    def reset(self):
        self._elapsed_steps = 0
        self.state = self.np_random.uniform(low=-0.05, high=0.05, size=(4,))
        self.steps_beyond_done = None
        return np.array(self.state)


def _make(env_id):
    assert env_id == "CartPole-v0", env_id
    return CartPoleEnv(max_episode_steps=200)


gym = types.SimpleNamespace(make=_make)  # the stand-in for `import gym`

# added: the stand-in against gym's numbers: seeding, one step by hand, the limits
_env = gym.make("CartPole-v0")
_env.seed(42)
_rng = np.random.RandomState(_int_list_from_bigint(_bigint_from_bytes(
    hashlib.sha512(b"42").digest()[:8])))
_s0 = _env.reset()
assert _s0.dtype == np.float64 and _s0.shape == (4,)
np.testing.assert_array_equal(_s0, _rng.uniform(-0.05, 0.05, size=4))
assert np.all(np.abs(_s0) <= 0.05)
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
assert _r == 1.0 and 5 < _n < 200 and _s[2] < -12 * 2 * math.pi / 360, (_n, _s)
_s, _n, _d = _env.reset(), 0, False
while not _d:  # pushing the way the pole turns keeps it up: only the 200-step limit ends it
    _s, _r, _d, _info = _env.step(int(_s[2] + 0.5 * _s[3] > 0))
    _n += 1
assert _n == 200 and _info == {"TimeLimit.truncated": True}, (_n, _info)

"""
## Setup
"""

# Configuration parameters for the whole setup
seed = 42
gamma = 0.99  # Discount factor for past rewards
max_steps_per_episode = 10000
env = gym.make("CartPole-v0")  # Create the environment
env.seed(seed)
eps = np.finfo(np.float32).eps.item()  # Smallest number such that 1.0 + eps != 1.0

"""
## Implement Actor Critic network
"""

num_inputs = 4
num_actions = 2
num_hidden = 128

inputs = layers.Input(shape=(num_inputs,))
common = layers.Dense(num_hidden, activation="relu")(inputs)
action = layers.Dense(num_actions, activation="softmax")(common)
critic = layers.Dense(1)(common)

model = keras.Model(inputs=inputs, outputs=[action, critic])

# added: Keras's weights and their initialisers (glorot_uniform kernels, zero biases)
assert [tuple(v.shape) for v in model.trainable_variables] == [
    (4, 128), (128,), (128, 2), (2,), (128, 1), (1,)], [v.shape for v in model.trainable_variables]
for v in model.trainable_variables:
    w = v.numpy()
    assert w.dtype == np.float32
    if w.ndim == 1:
        assert not w.any()
    else:
        limit = math.sqrt(6 / sum(w.shape))
        assert np.abs(w).max() <= limit and np.abs(w).max() > 0.8 * limit


def numpy_forward(weights, states):  # added: the model in float64 numpy
    w1, b1, w2, b2, w3, b3 = weights
    h = np.maximum(states.astype(np.float32).astype(np.float64) @ w1 + b1, 0)
    logits = h @ w2 + b2
    p = np.exp(logits - logits.max(-1, keepdims=True))
    return h, p / p.sum(-1, keepdims=True), h @ w3 + b3


def huber_np(y_true, y_pred, delta=1.0):  # added: Keras's Huber, mean over the last axis
    e = np.abs(y_pred - y_true)
    return np.mean(np.where(e <= delta, 0.5 * e ** 2, delta * e - 0.5 * delta ** 2), axis=-1)


def numpy_gradients(weights, states, actions, returns):  # added: the loss below, by hand
    w1, b1, w2, b2, w3, b3 = weights
    h, p, v = numpy_forward(weights, states)
    v = v[:, 0]
    idx = np.arange(len(actions))
    log_p = np.log(p[idx, actions])
    diff = returns - v
    loss = np.sum(-log_p * diff) + np.sum(huber_np(v[:, None], returns[:, None]))
    # d/dv: +log_p from the actor's diff, clip(v - ret, -1, 1) from the Huber loss
    dv = log_p + np.clip(v - returns, -1.0, 1.0)
    dlogits = -diff[:, None] * (np.eye(2)[actions] - p)
    dh = (dlogits @ w2.T + dv[:, None] @ w3.T) * (h > 0)
    x = states.astype(np.float32).astype(np.float64)
    grads = [x.T @ dh, dh.sum(0), h.T @ dlogits, dlogits.sum(0), h.T @ dv[:, None],
             np.array([dv.sum()])]
    return loss, grads


# added: the Huber loss against numpy, both sides of delta, and its reduction to a scalar
_h = keras.losses.Huber()(em.constant([[0.2, 3.0]]), em.constant([[0.5, 0.0]]))
assert _h.shape == () and _h.dtype == em.float32
np.testing.assert_allclose(float(_h), huber_np(np.array([0.2, 3.0]), np.array([0.5, 0.0])),
                           rtol=1e-6)

"""
## Train
"""

optimizer = keras.optimizers.Adam(learning_rate=0.01)
huber_loss = keras.losses.Huber()
action_probs_history = []
critic_value_history = []
rewards_history = []
running_reward = 0
episode_count = 0
episode_states, episode_actions, episode_lengths = [], [], []  # added: for the checks

while True:  # Run until solved
    state = env.reset()
    episode_reward = 0
    with tape_lib.GradientTape() as tape:
        for timestep in range(1, max_steps_per_episode):
            # env.render(); Adding this line would show the attempts
            # of the agent in a pop up window.
            episode_states.append(state)  # added

            state = em.convert_to_tensor(state)
            state = em.expand_dims(state, 0)

            # Predict action probabilities and estimated future rewards
            # from environment state
            action_probs, critic_value = model(state)
            critic_value_history.append(critic_value[0, 0])
            if episode_count == 0 and timestep == 1:  # added: shapes and dtypes
                assert state.dtype == em.float64 and state.shape == (1, 4)
                assert action_probs.shape == (1, num_actions) and critic_value.shape == (1, 1)
                assert action_probs.dtype == em.float32 and critic_value.dtype == em.float32
                assert critic_value[0, 0].shape == ()

            # Sample action from action probability distribution
            action = np.random.choice(num_actions, p=np.squeeze(action_probs))
            action_probs_history.append(em.log(action_probs[0, action]))
            episode_actions.append(action)  # added

            # Apply the sampled action in our environment
            state, reward, done, _ = env.step(action)
            rewards_history.append(reward)
            episode_reward += reward

            if done:
                break

        # Update running reward to check condition for solving
        running_reward = 0.05 * episode_reward + (1 - 0.05) * running_reward

        # Calculate expected value from rewards
        # - At each timestep what was the total reward received after that timestep
        # - Rewards in the past are discounted by multiplying them with gamma
        # - These are the labels for our critic
        returns = []
        discounted_sum = 0
        for r in rewards_history[::-1]:
            discounted_sum = r + gamma * discounted_sum
            returns.insert(0, discounted_sum)

        # Normalize
        returns = np.array(returns)
        returns = (returns - np.mean(returns)) / (np.std(returns) + eps)
        returns = returns.tolist()

        # Calculating loss values to update our network
        history = zip(action_probs_history, critic_value_history, returns)
        actor_losses = []
        critic_losses = []
        for log_prob, value, ret in history:
            # At this point in history, the critic estimated that we would get a
            # total reward = `value` in the future. We took an action with log probability
            # of `log_prob` and ended up recieving a total reward = `ret`.
            # The actor must be updated so that it predicts an action that leads to
            # high rewards (compared to critic's estimate) with high probability.
            diff = ret - value
            actor_losses.append(-log_prob * diff)  # actor loss

            # The critic must be updated so that it predicts a better estimate of
            # the future rewards.
            critic_losses.append(
                huber_loss(em.expand_dims(value, 0), em.expand_dims(ret, 0))
            )

        # Backpropagation
        loss_value = sum(actor_losses) + sum(critic_losses)
        grads = tape.gradient(loss_value, model.trainable_variables)
        if episode_count == 0:  # added: the first episode's loss and gradients against numpy
            weights_before = [v.numpy().astype(np.float64) for v in model.trainable_variables]
            states_np = np.array(episode_states)
            _, probs_np, values_np = numpy_forward(weights_before, states_np)
            np.testing.assert_allclose([float(em.exp(lp)) for lp in action_probs_history],
                probs_np[np.arange(len(episode_actions)), episode_actions], rtol=1e-5)
            np.testing.assert_allclose([float(v) for v in critic_value_history],
                                       values_np[:, 0], rtol=1e-4, atol=1e-6)
            loss_np, grads_np = numpy_gradients(weights_before, states_np,
                                                np.array(episode_actions), np.array(returns))
            assert loss_value.shape == () and loss_value.dtype == em.float32, loss_value
            np.testing.assert_allclose(float(loss_value), loss_np, rtol=1e-4)
            for g, g_np in zip(grads, grads_np):
                assert g.shape == g_np.shape and g.dtype == em.float32
                np.testing.assert_allclose(g.numpy(), g_np, rtol=2e-3,
                                           atol=2e-5 * np.abs(g_np).max())
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if episode_count == 0:  # added: Keras's first Adam step (epsilon 1e-7 outside the
            for v, w0, g in zip(model.trainable_variables, weights_before, grads):  # bias
                g = g.numpy().astype(np.float64)  # correction of v: lr_t * m / (sqrt(v) + eps))
                lr_t = 0.01 * math.sqrt(1 - 0.999) / (1 - 0.9)
                m, v_hat = (1 - 0.9) * g, (1 - 0.999) * g * g
                np.testing.assert_allclose(v.numpy(), w0 - lr_t * m / (np.sqrt(v_hat) + 1e-7),
                                           rtol=1e-5, atol=1e-7)

        # Clear the loss and reward history
        action_probs_history.clear()
        critic_value_history.clear()
        rewards_history.clear()
        episode_states.clear()  # added
        episode_actions.clear()  # added

    # Log details
    episode_count += 1
    episode_lengths.append(episode_reward)  # added
    if episode_count % 10 == 0:
        template = "running reward: {:.2f} at episode {}"
        print(template.format(running_reward, episode_count))

    if running_reward > SOLVED:  # Condition to consider the task solved (upstream: 195)
        print("Solved at episode {}!".format(episode_count))  # noqa: UP032
        break
    if MAX_EPISODES is not None and episode_count >= MAX_EPISODES:  # added: the cap
        break

# added: what training reached
assert all(1 <= n <= 200 for n in episode_lengths), episode_lengths
assert len(episode_lengths) == episode_count
_avg = 0.0
for n in episode_lengths:
    _avg = 0.05 * n + 0.95 * _avg
assert abs(_avg - running_reward) < 1e-9
print("episodes:", episode_count, "last 10 lengths:", episode_lengths[-10:])
assert SHORT or running_reward > SOLVED, (running_reward, episode_lengths)

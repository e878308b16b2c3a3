"""Port of keras-team/keras-io guides/sequential_model.py ("The Sequential model": layers,
add/pop, weights created on the first call, summary with an Input first or an
input_shape, the add()+summary() workflow on a conv stack, feature extraction through the
layers' `output` and `get_layer`, and freezing all layers but the last).

Upstream: https://github.com/keras-team/keras-io/blob/0a57de48c864d63b80083820e8988368ee5c3149/guides/sequential_model.py
Changed: names only (keras -> nn, tf.ones -> em.ones). The transfer-learning blueprints
the guide shows as code blocks with `...` (load_weights(...), compile(...), Xception) are
not run, except the loop that freezes all layers but the last. Added: assertions of what
the guide prints or says in comments (2 layers after pop, the weights' shapes, 6 weights,
the (40, 40, 32) and (4, 4, 32) output shapes, the extracted features' shapes, the
trainable weights after freezing).
"""

import ember.core as em
from ember import nn
from ember.nn import layers

tf = em  # the guide's `tf.`
keras = nn  # and its `keras.`

# Define Sequential model with 3 layers
model = keras.Sequential(
    [
        layers.Dense(2, activation="relu", name="layer1"),
        layers.Dense(3, activation="relu", name="layer2"),
        layers.Dense(4, name="layer3"),
    ]
)
# Call model on a test input
x = tf.ones((3, 3))
y = model(x)
assert y.shape == (3, 4)

# Create 3 layers
layer1 = layers.Dense(2, activation="relu", name="layer1")
layer2 = layers.Dense(3, activation="relu", name="layer2")
layer3 = layers.Dense(4, name="layer3")

# Call layers on a test input
x = tf.ones((3, 3))
y = layer3(layer2(layer1(x)))
assert y.shape == (3, 4)

"""
## Creating a Sequential model
"""

model = keras.Sequential(
    [
        layers.Dense(2, activation="relu"),
        layers.Dense(3, activation="relu"),
        layers.Dense(4),
    ]
)

print(model.layers)
assert len(model.layers) == 3

model = keras.Sequential()
model.add(layers.Dense(2, activation="relu"))
model.add(layers.Dense(3, activation="relu"))
model.add(layers.Dense(4))

model.pop()
print(len(model.layers))  # 2
assert len(model.layers) == 2

model = keras.Sequential(name="my_sequential")
model.add(layers.Dense(2, activation="relu", name="layer1"))
model.add(layers.Dense(3, activation="relu", name="layer2"))
model.add(layers.Dense(4, name="layer3"))
assert model.name == "my_sequential"

"""
## Specifying the input shape in advance
"""

layer = layers.Dense(3)
print(layer.weights)  # Empty
assert layer.weights == []

# Call layer on a test input
x = tf.ones((1, 4))
y = layer(x)
print(layer.weights)  # Now it has weights, of shape (4, 3) and (3,)
assert [tuple(w.shape) for w in layer.weights] == [(4, 3), (3,)]

model = keras.Sequential(
    [
        layers.Dense(2, activation="relu"),
        layers.Dense(3, activation="relu"),
        layers.Dense(4),
    ]
)  # No weights at this stage!

# Call the model on a test input
x = tf.ones((1, 4))
y = model(x)
print("Number of weights after calling the model:", len(model.weights))  # 6
assert len(model.weights) == 6

model.summary()

model = keras.Sequential()
model.add(keras.Input(shape=(4,)))
model.add(layers.Dense(2, activation="relu"))

model.summary()

print(model.layers)
assert len(model.layers) == 1  # the Input is not a layer

model = keras.Sequential()
model.add(layers.Dense(2, activation="relu", input_shape=(4,)))

model.summary()
assert len(model.weights) == 2  # built before seeing any data

"""
## A common debugging workflow: `add()` + `summary()`
"""

model = keras.Sequential()
model.add(keras.Input(shape=(250, 250, 3)))  # 250x250 RGB images
model.add(layers.Conv2D(32, 5, strides=2, activation="relu"))
model.add(layers.Conv2D(32, 3, activation="relu"))
model.add(layers.MaxPooling2D(3))

# Can you guess what the current output shape is at this point? Probably not.
# Let's just print it:
model.summary()

# The answer was: (40, 40, 32), so we can keep downsampling...
assert model.output_shape == (None, 40, 40, 32), model.output_shape

model.add(layers.Conv2D(32, 3, activation="relu"))
model.add(layers.Conv2D(32, 3, activation="relu"))
model.add(layers.MaxPooling2D(3))
model.add(layers.Conv2D(32, 3, activation="relu"))
model.add(layers.Conv2D(32, 3, activation="relu"))
model.add(layers.MaxPooling2D(2))

# And now?
model.summary()
assert model.output_shape == (None, 4, 4, 32), model.output_shape

# Now that we have 4x4 feature maps, time to apply global max pooling.
model.add(layers.GlobalMaxPooling2D())

# Finally, we add a classification layer.
model.add(layers.Dense(10))
assert model.output_shape == (None, 10)

"""
## Feature extraction with a Sequential model
"""

initial_model = keras.Sequential(
    [
        keras.Input(shape=(250, 250, 3)),
        layers.Conv2D(32, 5, strides=2, activation="relu"),
        layers.Conv2D(32, 3, activation="relu"),
        layers.Conv2D(32, 3, activation="relu"),
    ]
)
feature_extractor = keras.Model(
    inputs=initial_model.inputs,
    outputs=[layer.output for layer in initial_model.layers],
)

# Call feature extractor on test input.
x = tf.ones((1, 250, 250, 3))
features = feature_extractor(x)
assert [tuple(f.shape) for f in features] == [(1, 123, 123, 32), (1, 121, 121, 32),
                                               (1, 119, 119, 32)]
assert float(em.reduce_max(em.abs(features[-1] - initial_model(x)))) == 0.0

initial_model = keras.Sequential(
    [
        keras.Input(shape=(250, 250, 3)),
        layers.Conv2D(32, 5, strides=2, activation="relu"),
        layers.Conv2D(32, 3, activation="relu", name="my_intermediate_layer"),
        layers.Conv2D(32, 3, activation="relu"),
    ]
)
feature_extractor = keras.Model(
    inputs=initial_model.inputs,
    outputs=initial_model.get_layer(name="my_intermediate_layer").output,
)
# Call feature extractor on test input.
x = tf.ones((1, 250, 250, 3))
features = feature_extractor(x)
assert tuple(features.shape) == (1, 121, 121, 32)

"""
## Transfer learning with a Sequential model
"""

model = keras.Sequential([
    keras.Input(shape=(784,)),
    layers.Dense(32, activation='relu'),
    layers.Dense(32, activation='relu'),
    layers.Dense(32, activation='relu'),
    layers.Dense(10),
])

# Freeze all layers except the last one.
for layer in model.layers[:-1]:
    layer.trainable = False
assert len(model.trainable_weights) == 2  # the last layer's kernel and bias
print("done")

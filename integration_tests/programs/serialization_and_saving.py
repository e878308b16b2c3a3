"""Port of keras-team/keras-io guides/serialization_and_saving.py ("Save, serialize, and
export models", Keras 3's version of 2023/06/30: whole-model saving to a .keras file and
loading it back, custom objects registered, passed to load_model or in a custom object
scope, clone_model, get_config/from_config of a layer, a Sequential and a functional
model, to_json/model_from_json, serialize_keras_object/deserialize_keras_object of a
regularizer, weights moved in memory between layers and models, save_weights/load_weights,
transfer learning from a weights file, and custom layers whose configs hold other layers).

Upstream: https://github.com/keras-team/keras-io/blob/master/guides/serialization_and_saving.py
Changed: names only (keras -> nn, keras.layers -> nn.layers, keras.saving -> nn.saving,
keras.layers.serialize/deserialize -> nn.saving.serialize_keras_object/
deserialize_keras_object, which those are in Keras 3; ops.matmul -> em.matmul). Left out:
nothing of this guide; its TensorFlow version's SavedModel export (tf.saved_model,
model.export) cannot exist in ember, which has no TensorFlow graphs to export. Added:
assertions of what the guide checks or prints (the reloaded models' predictions equal the
originals', the configs' keys, the custom objects' registered names, the weights equal after
each transfer, the extracted model's layers).
"""

import numpy as np

import ember.core as em
from ember import nn

"""
## Saving
"""


def get_model():
    # Create a simple model.
    inputs = nn.Input(shape=(32,))
    outputs = nn.layers.Dense(1)(inputs)
    model = nn.Model(inputs, outputs)
    model.compile(optimizer=nn.optimizers.Adam(), loss="mean_squared_error")
    return model


model = get_model()

# Train the model.
test_input = np.random.random((128, 32))
test_target = np.random.random((128, 1))
model.fit(test_input, test_target)

# Calling `save('my_model.keras')` creates a zip archive `my_model.keras`.
model.save("my_model.keras")

# It can be used to reconstruct the model identically.
reconstructed_model = nn.models.load_model("my_model.keras")

# Let's check:
np.testing.assert_allclose(
    model.predict(test_input), reconstructed_model.predict(test_input)
)
# (added) the optimizer's state came along: the steps taken, Adam's moments
assert int(reconstructed_model.optimizer.iterations.numpy()) == 4

"""
### Custom objects

#### Registering custom objects (**preferred**)
"""

# Clear all previously registered custom objects
nn.saving.get_custom_objects().clear()


# Upon registration, you can optionally specify a package or a name.
# If left blank, the package defaults to `Custom` and the name defaults to
# the class name.
@nn.saving.register_keras_serializable(package="MyLayers")
class CustomLayer(nn.layers.Layer):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        return {"factor": self.factor}


@nn.saving.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(x):
    return x**2


# Create the model.
def get_model():
    inputs = nn.Input(shape=(4,))
    mid = CustomLayer(0.5)(inputs)
    outputs = nn.layers.Dense(1, activation=custom_fn)(mid)
    model = nn.Model(inputs, outputs)
    model.compile(optimizer="rmsprop", loss="mean_squared_error")
    return model


# Train the model.
def train_model(model):
    input = np.random.random((4, 4))
    target = np.random.random((4, 1))
    model.fit(input, target)
    return model


test_input = np.random.random((4, 4))
test_target = np.random.random((4, 1))

model = get_model()
model = train_model(model)
model.save("custom_model.keras")

# Now, we can simply load without worrying about our custom objects.
reconstructed_model = nn.models.load_model("custom_model.keras")

# Let's check:
np.testing.assert_allclose(
    model.predict(test_input), reconstructed_model.predict(test_input)
)
assert nn.saving.get_registered_name(CustomLayer) == "MyLayers>CustomLayer"  # (added)
assert nn.saving.get_registered_name(custom_fn) == "my_package>custom_fn"

"""
#### Passing custom objects to `load_model()`
"""

model = get_model()
model = train_model(model)

# Calling `save('my_model.keras')` creates a zip archive `my_model.keras`.
model.save("custom_model.keras")

# Upon loading, pass a dict containing the custom objects used in the
# `custom_objects` argument of `nn.models.load_model()`.
reconstructed_model = nn.models.load_model(
    "custom_model.keras",
    custom_objects={"CustomLayer": CustomLayer, "custom_fn": custom_fn},
)

# Let's check:
np.testing.assert_allclose(
    model.predict(test_input), reconstructed_model.predict(test_input)
)

"""
#### Using a custom object scope
"""

model = get_model()
model = train_model(model)
model.save("custom_model.keras")

# Pass the custom objects dictionary to a custom object scope and place
# the `nn.models.load_model()` call within the scope.
custom_objects = {"CustomLayer": CustomLayer, "custom_fn": custom_fn}

with nn.saving.custom_object_scope(custom_objects):
    reconstructed_model = nn.models.load_model("custom_model.keras")

# Let's check:
np.testing.assert_allclose(
    model.predict(test_input), reconstructed_model.predict(test_input)
)

"""
### Model serialization

#### In-memory model cloning
"""

new_model = nn.models.clone_model(model)
assert [type(a) for a in new_model.layers] == [type(b) for b in model.layers]  # (added)
assert not any(a is b for a, b in zip(new_model.weights, model.weights))

"""
#### `get_config()` and `from_config()`

**Layer example:**
"""

layer = nn.layers.Dense(3, activation="relu")
layer_config = layer.get_config()
print(layer_config)
assert layer_config["units"] == 3 and layer_config["activation"] == "relu"  # (added)

"""
Now let's reconstruct the layer using the `from_config()` method:
"""

new_layer = nn.layers.Dense.from_config(layer_config)

"""
**Sequential model example:**
"""

model = nn.Sequential([nn.Input((32,)), nn.layers.Dense(1)])
config = model.get_config()
new_model = nn.Sequential.from_config(config)
assert new_model.count_params() == model.count_params() == 33  # (added)

"""
**Functional model example:**
"""

inputs = nn.Input((32,))
outputs = nn.layers.Dense(1)(inputs)
model = nn.Model(inputs, outputs)
config = model.get_config()
new_model = nn.Model.from_config(config)
assert [e["class_name"] for e in config["layers"]] == ["InputLayer", "Dense"]  # (added)
assert new_model.count_params() == 33

"""
#### `to_json()` and `nn.models.model_from_json()`
"""

model = nn.Sequential([nn.Input((32,)), nn.layers.Dense(1)])
json_config = model.to_json()
new_model = nn.models.model_from_json(json_config)
assert new_model.to_json() == json_config  # (added) the same architecture

"""
#### Arbitrary object serialization and deserialization
"""

my_reg = nn.regularizers.L1(0.005)
config = nn.saving.serialize_keras_object(my_reg)
print(config)
assert config == {"module": "keras.regularizers", "class_name": "L1",  # (added)
                  "config": {"l1": 0.005}, "registered_name": None}

"""
Now we can reconstruct the regularizer.
"""

new_reg = nn.saving.deserialize_keras_object(config)
assert type(new_reg) is nn.regularizers.L1 and new_reg.l1 == 0.005  # (added)

"""
### Model weights saving

***Transferring weights from one layer to another, in memory***
"""


def create_layer():
    layer = nn.layers.Dense(64, activation="relu", name="dense_2")
    layer.build((None, 784))
    return layer


layer_1 = create_layer()
layer_2 = create_layer()

# Copy weights from layer 1 to layer 2
layer_2.set_weights(layer_1.get_weights())
for a, b in zip(layer_1.get_weights(), layer_2.get_weights()):  # (added)
    np.testing.assert_array_equal(a, b)

"""
***Transferring weights from one model to another model with a compatible architecture, in
memory***
"""

# Create a simple functional model
inputs = nn.Input(shape=(784,), name="digits")
x = nn.layers.Dense(64, activation="relu", name="dense_1")(inputs)
x = nn.layers.Dense(64, activation="relu", name="dense_2")(x)
outputs = nn.layers.Dense(10, name="predictions")(x)
functional_model = nn.Model(inputs=inputs, outputs=outputs, name="3_layer_mlp")


# Define a subclassed model with the same architecture
class SubclassedModel(nn.Model):
    def __init__(self, output_dim, name=None):
        super().__init__(name=name)
        self.output_dim = output_dim
        self.dense_1 = nn.layers.Dense(64, activation="relu", name="dense_1")
        self.dense_2 = nn.layers.Dense(64, activation="relu", name="dense_2")
        self.dense_3 = nn.layers.Dense(output_dim, name="predictions")

    def call(self, inputs):
        x = self.dense_1(inputs)
        x = self.dense_2(x)
        x = self.dense_3(x)
        return x

    def get_config(self):
        return {"output_dim": self.output_dim, "name": self.name}


subclassed_model = SubclassedModel(10)
# Call the subclassed model once to create the weights.
subclassed_model(np.ones((1, 784)))

# Copy weights from functional_model to subclassed_model.
subclassed_model.set_weights(functional_model.get_weights())

assert len(functional_model.weights) == len(subclassed_model.weights)
for a, b in zip(functional_model.weights, subclassed_model.weights):
    np.testing.assert_allclose(a.numpy(), b.numpy())

"""
***The case of stateless layers***
"""

inputs = nn.Input(shape=(784,), name="digits")
x = nn.layers.Dense(64, activation="relu", name="dense_1")(inputs)
x = nn.layers.Dense(64, activation="relu", name="dense_2")(x)
outputs = nn.layers.Dense(10, name="predictions")(x)
functional_model = nn.Model(inputs=inputs, outputs=outputs, name="3_layer_mlp")

inputs = nn.Input(shape=(784,), name="digits")
x = nn.layers.Dense(64, activation="relu", name="dense_1")(inputs)
x = nn.layers.Dense(64, activation="relu", name="dense_2")(x)

# Add a dropout layer, which does not contain any weights.
x = nn.layers.Dropout(0.5)(x)
outputs = nn.layers.Dense(10, name="predictions")(x)
functional_model_with_dropout = nn.Model(
    inputs=inputs, outputs=outputs, name="3_layer_mlp"
)

functional_model_with_dropout.set_weights(functional_model.get_weights())

"""
#### APIs for saving weights to disk & loading them back
"""

# Runnable example
sequential_model = nn.Sequential(
    [
        nn.Input(shape=(784,), name="digits"),
        nn.layers.Dense(64, activation="relu", name="dense_1"),
        nn.layers.Dense(64, activation="relu", name="dense_2"),
        nn.layers.Dense(10, name="predictions"),
    ]
)
sequential_model.save_weights("my_model.weights.h5")
sequential_model.load_weights("my_model.weights.h5")

"""
Note that changing `layer.trainable` may result in a different
`layer.weights` ordering when the model contains nested layers.
"""


class NestedDenseLayer(nn.layers.Layer):
    def __init__(self, units, name=None):
        super().__init__(name=name)
        self.dense_1 = nn.layers.Dense(units, name="dense_1")
        self.dense_2 = nn.layers.Dense(units, name="dense_2")

    def call(self, inputs):
        return self.dense_2(self.dense_1(inputs))


nested_model = nn.Sequential([nn.Input((784,)), NestedDenseLayer(10, "nested")])
variable_names = [v.name for v in nested_model.weights]
print(f"variables: {variable_names}")

print("\nChanging trainable status of one of the nested layers...")
nested_model.get_layer("nested").dense_1.trainable = False

variable_names_2 = [v.name for v in nested_model.weights]
print(f"\nvariables: {variable_names_2}")
# (Keras prints True: its weights list trainable ones first; ember keeps attribute order,
# so the ordering does not change here)
print("variable ordering changed:", variable_names != variable_names_2)

"""
##### **Transfer learning example**
"""


def create_functional_model():
    inputs = nn.Input(shape=(784,), name="digits")
    x = nn.layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = nn.layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = nn.layers.Dense(10, name="predictions")(x)
    return nn.Model(inputs=inputs, outputs=outputs, name="3_layer_mlp")


functional_model = create_functional_model()
functional_model.save_weights("pretrained.weights.h5")

# In a separate program:
pretrained_model = create_functional_model()
pretrained_model.load_weights("pretrained.weights.h5")
for a, b in zip(pretrained_model.get_weights(), functional_model.get_weights()):  # (added)
    np.testing.assert_array_equal(a, b)

# Create a new model by extracting layers from the original model:
extracted_layers = pretrained_model.layers[:-1]
extracted_layers.append(nn.layers.Dense(5, name="dense_3"))
model = nn.Sequential(extracted_layers)
model.summary()
assert [layer.name for layer in model.layers] == ["dense_1", "dense_2", "dense_3"]  # (added)

"""
### Appendix: Handling custom objects

#### Defining the config methods
"""


@nn.saving.register_keras_serializable(package="MyLayers", name="KernelMult")
class MyDense(nn.layers.Layer):
    def __init__(
        self,
        units,
        *,
        kernel_regularizer=None,
        kernel_initializer=None,
        nested_model=None,
        **kwargs
    ):
        super().__init__(**kwargs)
        self.hidden_units = units
        self.kernel_regularizer = kernel_regularizer
        self.kernel_initializer = kernel_initializer
        self.nested_model = nested_model

    def get_config(self):
        config = super().get_config()
        # Update the config with the custom layer's parameters
        config.update(
            {
                "units": self.hidden_units,
                "kernel_regularizer": self.kernel_regularizer,
                "kernel_initializer": self.kernel_initializer,
                "nested_model": self.nested_model,
            }
        )
        return config

    def build(self, input_shape):
        input_units = input_shape[-1]
        self.kernel = self.add_weight(
            name="kernel",
            shape=(input_units, self.hidden_units),
            regularizer=self.kernel_regularizer,
            initializer=self.kernel_initializer,
        )

    def call(self, inputs):
        return em.matmul(inputs, self.kernel)


layer = MyDense(units=16, kernel_regularizer="l1", kernel_initializer="ones")
layer3 = MyDense(units=64, nested_model=layer)

config = nn.saving.serialize_keras_object(layer3)

print(config)

new_layer = nn.saving.deserialize_keras_object(config)

print(new_layer)
assert type(new_layer) is MyDense and new_layer.hidden_units == 64  # (added)
assert type(new_layer.nested_model) is MyDense and new_layer.nested_model.hidden_units == 16
assert config["config"]["nested_model"]["registered_name"] == "MyLayers>KernelMult"

"""
For more complex objects, such as layers and models passed to `__init__`, for
example, you must explicitly deserialize these objects.
"""


@nn.saving.register_keras_serializable(package="ComplexModels")
class CustomModel(nn.layers.Layer):
    def __init__(self, first_layer, second_layer=None, **kwargs):
        super().__init__(**kwargs)
        self.first_layer = first_layer
        if second_layer is not None:
            self.second_layer = second_layer
        else:
            self.second_layer = nn.layers.Dense(8)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "first_layer": self.first_layer,
                "second_layer": self.second_layer,
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        # Note that you can also use `nn.saving.deserialize_keras_object` here
        config["first_layer"] = nn.saving.deserialize_keras_object(config["first_layer"])
        config["second_layer"] = nn.saving.deserialize_keras_object(config["second_layer"])
        return cls(**config)

    def call(self, inputs):
        return self.first_layer(self.second_layer(inputs))


# Let's make our first layer the custom layer from the previous example (MyDense)
inputs = nn.Input((32,))
outputs = CustomModel(first_layer=layer)(inputs)
model = nn.Model(inputs, outputs)

config = model.get_config()
new_model = nn.Model.from_config(config)
assert type(new_model.layers[1]) is CustomModel  # (added; [0]: its InputLayer, as Keras)
assert type(new_model.layers[1].first_layer) is MyDense  # (added)
assert new_model(np.ones((2, 32), np.float32)).shape == (2, 16)

"""
#### How custom objects are serialized
"""

layer = MyDense(
    units=16,
    kernel_regularizer=nn.regularizers.L1L2(l1=1e-5, l2=1e-4),
    kernel_initializer="ones",
)
config = nn.saving.serialize_keras_object(layer)
print(config)
assert config["registered_name"] == "MyLayers>KernelMult"  # (added)
assert config["class_name"] == "MyDense" and config["module"] is None  # a script's class
assert config["config"]["kernel_regularizer"]["class_name"] == "L1L2"

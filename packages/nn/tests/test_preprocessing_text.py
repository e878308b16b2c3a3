"""StringLookup, IntegerLookup and TextVectorization against Keras's documented examples
and numbers taken from Keras 3.15.1 (TensorFlow backend). They run on the host; what they
return is an ember Tensor on the test's device."""

import numpy as np
import pytest

import ember.core as em
from ember import nn

L = nn.layers
VOCAB = ["a", "b", "c", "d"]
DATA = [["a", "c", "d", "d"], ["d", "z", "b", "z"]]


def test_string_lookup_keras_examples():
    np.testing.assert_array_equal(
        L.StringLookup(vocabulary=VOCAB)([["a", "c", "d"], ["d", "z", "b"]]).numpy(),
        [[1, 3, 4], [4, 0, 2]])
    layer = L.StringLookup()
    layer.adapt([["a", "c", "d"], ["d", "z", "b"]])
    assert layer.get_vocabulary() == ["[UNK]", "d", "z", "c", "b", "a"]
    np.testing.assert_array_equal(layer([["a", "c", "d"], ["d", "z", "b"]]).numpy(),
                                  [[5, 3, 1], [1, 2, 4]])
    np.testing.assert_array_equal(
        L.StringLookup(vocabulary=VOCAB, num_oov_indices=2)([["a", "c", "d"],
                                                             ["m", "z", "b"]]).numpy(),
        [[2, 4, 5], [0, 1, 3]])
    inv = L.StringLookup(vocabulary=VOCAB, invert=True)([[1, 3, 4], [4, 0, 2]])
    assert inv.tolist() == [["a", "c", "d"], ["d", "[UNK]", "b"]]


def test_string_lookup_encodings_as_keras():
    out = L.StringLookup(vocabulary=VOCAB, output_mode="one_hot")(["a", "b", "c", "d", "z"])
    assert out.dtype == np.int64  # Keras's eager output is int64 too
    np.testing.assert_array_equal(out.numpy(), np.eye(5)[[1, 2, 3, 4, 0]])
    np.testing.assert_array_equal(L.StringLookup(vocabulary=VOCAB, output_mode="multi_hot")(
        DATA).numpy(), [[0, 1, 0, 1, 1], [1, 0, 1, 0, 1]])
    np.testing.assert_array_equal(L.StringLookup(vocabulary=VOCAB, output_mode="count")(
        DATA).numpy(), [[0, 1, 0, 1, 2], [2, 0, 1, 0, 1]])
    np.testing.assert_array_equal(
        L.StringLookup(vocabulary=VOCAB, output_mode="count", mask_token="")(
            [["a", "", "d"], ["", "", "b"]]).numpy(), [[0, 1, 0, 0, 1], [0, 0, 1, 0, 0]])
    np.testing.assert_array_equal(L.StringLookup(vocabulary=VOCAB, mask_token="")(
        [["a", "", "d"], ["", "q", "b"]]).numpy(), [[2, 0, 5], [0, 1, 3]])
    inv = L.StringLookup(vocabulary=VOCAB, mask_token="", invert=True)
    assert inv([[0, 1, 2, 7]]).tolist() == [["", "[UNK]", "a", "[UNK]"]]
    assert inv.get_vocabulary() == ["", "[UNK]", "a", "b", "c", "d"]


def test_tf_idf_as_keras():
    layer = L.StringLookup(output_mode="tf_idf")
    layer.set_vocabulary(VOCAB, idf_weights=[0.25, 0.75, 0.6, 0.4])
    np.testing.assert_allclose(layer(DATA).numpy(), [[0, 0.25, 0, 0.6, 0.8],
                                                     [1.0, 0, 0.75, 0, 0.4]], rtol=1e-6)
    layer = L.StringLookup(output_mode="tf_idf")
    layer.set_vocabulary(["[UNK]"] + VOCAB, idf_weights=[0.9, 0.25, 0.75, 0.6, 0.4])
    np.testing.assert_allclose(layer(DATA).numpy(), [[0, 0.25, 0, 0.6, 0.8],
                                                     [1.8, 0, 0.75, 0, 0.4]], rtol=1e-6)
    layer = L.StringLookup(output_mode="tf_idf")
    layer.adapt([["a", "b", "b"], ["b", "c", ""], ["c", "c", "d"]])
    assert layer.get_vocabulary() == ["[UNK]", "c", "b", "d", "a", ""]
    out = layer([["a", "b", "b", "q"], ["d", "d", "c", "e"]])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), [
        [0.8270333409309387, 0.0, 1.3862943649291992, 0.0, 0.9162907600402832, 0.0],
        [0.8270333409309387, 0.6931471824645996, 0.0, 1.8325815200805664, 0.0, 0.0]],
        rtol=1e-6)


def test_out_of_vocabulary_buckets_as_keras():
    words = [["m", "z", "q", "hello", "world", "x", "yy", "lorem", "ipsum"]]
    np.testing.assert_array_equal(L.StringLookup(vocabulary=VOCAB, num_oov_indices=3)(
        words).numpy(), [[0, 1, 2, 1, 1, 2, 1, 2, 2]])
    np.testing.assert_array_equal(
        L.StringLookup(vocabulary=VOCAB, num_oov_indices=3, salt=[133, 137])(words).numpy(),
        [[2, 2, 1, 0, 0, 1, 0, 1, 1]])
    ints = np.array([[100, 300, 700, 1100, 1700, 2000, -5, 37]])
    np.testing.assert_array_equal(L.IntegerLookup(vocabulary=[10, 20, 30], num_oov_indices=4)(
        ints).numpy(), [[0, 0, 0, 0, 0, 0, 3, 1]])
    np.testing.assert_array_equal(L.IntegerLookup(vocabulary=[10, 20, 30], num_oov_indices=4,
                                                  oov_method="farmhash")(ints).numpy(),
                                  [[3, 3, 2, 2, 0, 1, 0, 3]])
    np.testing.assert_array_equal(L.IntegerLookup(vocabulary=[10, 20, 30], num_oov_indices=4,
                                                  oov_method="farmhash", salt=7)(ints).numpy(),
                                  [[2, 0, 3, 2, 0, 0, 1, 3]])
    with pytest.raises(ValueError, match="num_oov_indices=0"):
        L.StringLookup(vocabulary=VOCAB, num_oov_indices=0)([["a", "zz"]])


def test_integer_lookup_keras_examples():
    data = np.array([[12, 1138, 42], [42, 1000, 36]])
    np.testing.assert_array_equal(L.IntegerLookup(vocabulary=[12, 36, 1138, 42])(data).numpy(),
                                  [[1, 3, 4], [4, 0, 2]])
    layer = L.IntegerLookup()
    layer.adapt(data)
    assert layer.get_vocabulary() == [-1, 42, 1138, 1000, 36, 12]
    np.testing.assert_array_equal(layer(em.constant(data)).numpy(), [[5, 2, 1], [1, 3, 4]])
    np.testing.assert_array_equal(
        L.IntegerLookup(vocabulary=[12, 36, 1138, 42], num_oov_indices=2)(
            np.array([[12, 1138, 42], [37, 1000, 36]])).numpy(), [[2, 4, 5], [1, 0, 3]])
    padded = L.IntegerLookup(mask_token=0, output_mode="multi_hot", pad_to_max_tokens=True,
                             max_tokens=8, vocabulary=[4, 5, 6])
    np.testing.assert_array_equal(padded([[4, 0, 6], [9, 9, 0]]).numpy(),
                                  [[0, 1, 0, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0]])
    inv = L.IntegerLookup(vocabulary=[12, 36], invert=True)(np.array([[1, 2, 0, 9]]))
    np.testing.assert_array_equal(inv.numpy(), [[12, 36, -1, -1]])


def test_adapt_orders_ties_and_caps_as_keras():
    layer = L.StringLookup(max_tokens=4)
    layer.adapt(np.array(["x", "y", "y", "z", "z", "w", "w", "v"]))
    assert layer.get_vocabulary() == ["[UNK]", "z", "y", "w"]
    ints = L.IntegerLookup()
    ints.adapt(np.array([[5, 3, 3], [9, 9, 1]]))
    assert ints.get_vocabulary() == [-1, 9, 3, 5, 1]


def test_lookups_refuse_ember_tensors_of_text_and_bad_vocabularies():
    with pytest.raises(TypeError, match="host"):
        L.StringLookup(vocabulary=VOCAB)(em.constant([1, 2]))
    with pytest.raises(ValueError, match="repeats"):
        L.StringLookup(vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="mask token"):
        L.StringLookup(vocabulary=["a", ""], mask_token="")
    with pytest.raises(ValueError, match="sparse"):
        L.StringLookup(output_mode="count", sparse=True)
    with pytest.raises(ValueError, match="vocabulary_dtype"):
        L.IntegerLookup(vocabulary_dtype="int32")
    with pytest.raises(RuntimeError, match="vocabulary"):
        L.StringLookup(output_mode="multi_hot")(["a"])
    with pytest.raises(ValueError, match="adapted"):
        L.StringLookup(vocabulary=VOCAB).adapt(["a"])


def test_lookup_vocabulary_file_and_config_round_trip(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("a\nb\nc\nd\n")
    from_file = L.StringLookup(vocabulary=str(path))
    assert from_file.get_vocabulary() == ["[UNK]"] + VOCAB
    layer = L.StringLookup(vocabulary=VOCAB, num_oov_indices=2, mask_token="")
    again = L.StringLookup.from_config(layer.get_config())
    assert again.get_vocabulary() == layer.get_vocabulary()
    np.testing.assert_array_equal(again([["a", "q", ""]]).numpy(), layer([["a", "q", ""]]).numpy())


def test_lookups_adapt_on_an_ember_dataset():
    data = pytest.importorskip("ember.data")
    ds = data.Dataset.from_tensor_slices(np.array([["a", "b"], ["b", "c"], ["b", "a"]])).batch(2)
    layer = L.StringLookup()
    layer.adapt(ds)
    assert layer.get_vocabulary() == ["[UNK]", "b", "a", "c"]


# --- TextVectorization ----------------------------------------------------------------------
def test_text_vectorization_keras_examples():
    layer = L.TextVectorization(max_tokens=5000, output_mode="int", output_sequence_length=4)
    layer.adapt(["foo bar", "bar baz", "baz bada boom"])
    out = layer([["foo qux bar"], ["qux baz"]])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.numpy(), [[4, 1, 3, 0], [1, 2, 0, 0]])
    given = L.TextVectorization(max_tokens=5000, output_sequence_length=4,
                                vocabulary=["earth", "wind", "and", "fire"])
    assert given.get_vocabulary() == ["", "[UNK]", "earth", "wind", "and", "fire"]


def test_text_vectorization_as_keras():
    layer = L.TextVectorization(output_sequence_length=6)
    layer.adapt(["The cat sat on the mat.", "The dog ate my homework!", "A cat, a dog; the end?"])
    assert layer.get_vocabulary() == ["", "[UNK]", "the", "dog", "cat", "a", "sat", "on", "my",
                                      "mat", "homework", "end", "ate"]
    np.testing.assert_array_equal(layer(np.array(["the cat ate the dog's mat",
                                                  "unknown words here"])).numpy(),
                                  [[2, 4, 12, 2, 1, 9], [1, 1, 1, 0, 0, 0]])
    bigrams = L.TextVectorization(ngrams=2, output_mode="count", max_tokens=12)
    bigrams.adapt(["a b c a b", "b c d"])
    assert bigrams.get_vocabulary() == ["[UNK]", "b", "c", "b c", "a b", "a", "d", "c d", "c a"]
    np.testing.assert_array_equal(bigrams(["a b c", "d d e"]).numpy(),
                                  [[0, 1, 1, 1, 1, 1, 0, 0, 0], [3, 0, 0, 0, 0, 0, 2, 0, 0]])
    chars = L.TextVectorization(split="character", standardize="lower")
    chars.adapt(["Abc", "bcd"])
    assert chars.get_vocabulary() == ["", "[UNK]", "c", "b", "d", "a"]
    np.testing.assert_array_equal(chars(["abZ", "d"]).numpy(), [[5, 3, 1], [4, 0, 0]])
    tfidf = L.TextVectorization(output_mode="tf_idf", ngrams=(1, 3))
    tfidf.adapt(["x y z", "x x y", "z"])
    assert tfidf.get_vocabulary() == ["[UNK]", "x", "z", "y", "x y z", "x x y"]
    np.testing.assert_allclose(tfidf(["x y z x", "y"]).numpy(), [
        [0.7824046015739441, 1.3862943649291992, 0.6931471824645996, 0.6931471824645996,
         0.9162907600402832, 0.0], [0.0, 0.0, 0.0, 0.6931471824645996, 0.0, 0.0]], rtol=1e-6)
    whole = L.TextVectorization(output_mode="multi_hot", standardize=None, split=None,
                                vocabulary=["Hi there", "yo"])
    np.testing.assert_array_equal(whole(["Hi there", "hi there", "yo"]).numpy(), [1, 1, 1])


def test_text_vectorization_lowercases_ascii_only_and_takes_callables():
    layer = L.TextVectorization(vocabulary=["école", "École"])
    np.testing.assert_array_equal(layer(["École ÉCOLE"]).numpy(), [[3, 3]])  # "École": as TF
    custom = L.TextVectorization(standardize=lambda a: np.char.upper(a),
                                 split=lambda a: [s.split("-") for s in a],
                                 vocabulary=["A", "B"])
    np.testing.assert_array_equal(custom(["a-b-c", "b"]).numpy(), [[2, 3, 1], [3, 0, 0]])


def test_text_vectorization_refuses_what_ember_cannot_do():
    with pytest.raises(TypeError, match="ember tensors hold numbers"):
        L.TextVectorization(vocabulary=["a"])(em.constant([1.0]))
    with pytest.raises(ValueError, match="ragged"):
        L.TextVectorization(ragged=True)
    with pytest.raises(ValueError, match="sparse"):
        L.TextVectorization(output_mode="count", sparse=True)
    with pytest.raises(ValueError, match="standardize"):
        L.TextVectorization(standardize="upper")
    with pytest.raises(ValueError, match="output_sequence_length"):
        L.TextVectorization(output_mode="count", output_sequence_length=3)
    with pytest.raises(ValueError, match="batch_size"):
        L.TextVectorization().adapt(["a"], batch_size=4)


def test_text_vectorization_config_and_dataset():
    layer = L.TextVectorization(max_tokens=10, output_sequence_length=3)
    config = layer.get_config()
    assert config["max_tokens"] == 10 and config["output_sequence_length"] == 3
    assert config["standardize"] == "lower_and_strip_punctuation" and config["ragged"] is False
    given = L.TextVectorization(vocabulary=["a", "b"], output_sequence_length=3)
    again = L.TextVectorization.from_config(given.get_config())
    np.testing.assert_array_equal(again(["b a q"]).numpy(), given(["b a q"]).numpy())
    data = pytest.importorskip("ember.data")
    ds = data.Dataset.from_tensor_slices(np.array(["b a", "b c", "b"])).batch(2)
    layer.adapt(ds)
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "c", "a"]
    mapped = ds.map(lambda t: layer(t).numpy())
    np.testing.assert_array_equal(next(iter(mapped)), [[2, 4, 0], [2, 3, 0]])


@pytest.mark.parametrize("factory,adapt_data,probe", [
    (lambda: L.StringLookup(mask_token="", num_oov_indices=2), [["a", "b", "b"], ["c", "", "a"]],
     [["a", "q", ""]]),
    (lambda: L.StringLookup(output_mode="tf_idf", max_tokens=8, pad_to_max_tokens=True),
     [["a", "b", "b"], ["c", "a", "a"]], [["a", "b", "z"]]),
    (lambda: L.IntegerLookup(output_mode="count"), np.array([[4, 4, 7], [9, 7, 7]]),
     np.array([[7, 9, 1]])),
    (lambda: L.TextVectorization(output_mode="tf_idf", ngrams=2),
     ["the cat sat", "the dog", "a cat"], ["the cat ran"]),
    (lambda: L.TextVectorization(output_sequence_length=5), ["the cat sat", "the dog"],
     ["the dog sat on it"]),
])
def test_an_adapted_vocabulary_survives_get_config(factory, adapt_data, probe):
    layer = factory()
    layer.adapt(adapt_data)
    again = type(layer).from_config(layer.get_config())
    assert again.get_vocabulary() == layer.get_vocabulary()
    np.testing.assert_allclose(again(probe).numpy(), layer(probe).numpy(), rtol=1e-6)
    again.adapt(adapt_data)  # still adaptable, as the original
    assert again.get_vocabulary() == layer.get_vocabulary()


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_a_model_given_text_says_where_strings_go(run_eagerly):
    # the word-embeddings tutorial's Sequential([vectorize_layer, Embedding, ...]): the
    # error was "cannot make a tensor from ndarray data of dtype <U12"
    vectorize = nn.layers.TextVectorization()
    vectorize.adapt(["a great film", "a bad one"])
    model = nn.Sequential([vectorize, nn.layers.Embedding(10, 2),
                           nn.layers.GlobalAveragePooling1D(), nn.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.run_eagerly = run_eagerly
    text = np.array(["a great film", "bad"])
    with pytest.raises(TypeError, match=r"'sequential(_\d+)?' \(Sequential\) was given strings: .*"
                                        r"map the data through them"):
        model.fit(text, np.array([1.0, 0.0]), verbose=0)
    with pytest.raises(TypeError, match="was given strings"):
        model(text)
    for objects in (text, text.astype(object)):  # predict too (the multi-label example)
        with pytest.raises(TypeError, match="was given strings"):
            model.predict(objects, verbose=0)
    assert vectorize(text).dtype == em.int64  # on its own, the layer takes the strings


def test_lookups_take_ragged_rows_where_their_output_is_not_ragged():
    # keras-io multi-label classification: StringLookup(output_mode="multi_hot") adapted
    # on and applied to rows of several lengths (tf.ragged.constant there)
    terms = [["cs.LG"], ["cs.CV", "cs.LG"], ["stat.ML", "cs.LG", "cs.CV"]]
    lookup = nn.layers.StringLookup(output_mode="multi_hot")
    lookup.adapt(terms)
    assert lookup.get_vocabulary() == ["[UNK]", "cs.LG", "cs.CV", "stat.ML"]
    got = lookup([["cs.LG"], ["cs.CV", "cs.LG", "astro-ph"]]).numpy()
    np.testing.assert_array_equal(got, [[0, 1, 0, 0], [1, 1, 1, 0]])
    rows = np.empty(2, dtype=object)
    rows[:] = [["stat.ML"], ["cs.CV", "cs.CV"]]
    np.testing.assert_array_equal(lookup(rows).numpy(), [[0, 0, 0, 1], [0, 0, 1, 0]])
    counts = nn.layers.IntegerLookup(output_mode="count")
    counts.adapt([[1, 2], [2], [3, 3, 3]])
    np.testing.assert_array_equal(counts([[1, 2, 2], [3]]).numpy(), [[0, 0, 2, 1], [0, 1, 0, 0]])
    with pytest.raises(TypeError, match="rows of several lengths .* output_mode='int'"):
        nn.layers.StringLookup(vocabulary=["a"])([["a"], ["a", "a"]])
    with pytest.raises(TypeError, match="expects strings, got int"):
        lookup([["cs.LG"], ["cs.CV", 3]])


def test_one_string_gives_its_tokens():
    """Keras 3 splits a scalar string into one row of ids (no batch axis)."""
    layer = nn.layers.TextVectorization(vocabulary=["a", "b"], output_sequence_length=4)
    np.testing.assert_array_equal(layer("a b").numpy(), [2, 3, 0, 0])
    np.testing.assert_array_equal(layer(np.array("b zz")).numpy(), [3, 1, 0, 0])
    np.testing.assert_array_equal(layer(["a b"]).numpy(), [[2, 3, 0, 0]])

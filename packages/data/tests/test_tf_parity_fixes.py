"""Answers ember gave silently unlike TensorFlow 2.21's ``tf.data`` (a differential sweep):
each test writes TensorFlow's answer beside the assertion (TF gives strings as bytes where
ember gives numpy strings)."""

import threading

import numpy as np
import pytest
from ember_data_testutil import as_list

from ember.data import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetSpec,
    TensorSpec,
)


def varlen():
    """Elements [1], [2, 2], [3, 3, 3] (int64)."""
    return Dataset.range(1, 4).map(lambda n: np.full(int(n), n))


def finishes(fn, seconds=20):
    """``fn()``'s result, or a failure if it has not returned within ``seconds``."""
    out = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert out, f"did not finish within {seconds}s"
    return out[0]


# --- 1. dicts are matched by key ------------------------------------------------------

def test_padded_batch_matches_dict_shapes_and_values_by_key():
    ds = Dataset.zip({"a": varlen(), "b": varlen()}).padded_batch(
        3, padded_shapes={"b": [5], "a": [4]},
        padding_values={"b": np.int64(-2), "a": np.int64(-1)})
    b = next(iter(ds))
    # TF: {'a': [[1, -1, -1, -1], [2, 2, -1, -1], [3, 3, 3, -1]],
    #      'b': [[1, -2, -2, -2, -2], [2, 2, -2, -2, -2], [3, 3, 3, -2, -2]]}
    assert b["a"].tolist() == [[1, -1, -1, -1], [2, 2, -1, -1], [3, 3, 3, -1]]
    assert b["b"].tolist() == [[1, -2, -2, -2, -2], [2, 2, -2, -2, -2], [3, 3, 3, -2, -2]]
    assert list(b) == ["a", "b"]
    # TF: {'a': TensorSpec((None, 4)), 'b': TensorSpec((None, 5))}
    assert ds.element_spec == {"a": TensorSpec((None, 4), np.dtype(np.int64)),
                               "b": TensorSpec((None, 5), np.dtype(np.int64))}
    # a None value takes the default (TF); a dict of other keys is refused (TF's
    # "The two structures don't have the same sequence length")
    ds = Dataset.zip({"a": varlen(), "b": varlen()}).padded_batch(
        2, padding_values={"b": None, "a": np.int64(-1)})
    b = next(iter(ds))
    assert b["a"].tolist() == [[1, -1], [2, 2]] and b["b"].tolist() == [[1, 0], [2, 2]]
    with pytest.raises(ValueError, match="padded_shapes.*keys"):
        Dataset.zip({"a": varlen(), "b": varlen()}).padded_batch(2, padded_shapes={"a": [4]})


def test_dicts_written_in_another_key_order_flatten_alike():
    def f(x):  # the same keys, written in another order for odd elements
        return {"a": x, "b": -x} if x % 2 else {"b": -x, "a": x}

    # batched by key (ember stacked a's and b's values together by position)
    assert as_list(Dataset.range(4).map(f).batch(4)) == [{"a": [0, 1, 2, 3],
                                                          "b": [0, -1, -2, -3]}]
    ds = Dataset.range(1, 3).map(lambda x: {"a": np.full(int(x), x)} if x == 1 else
                                 {"a": np.full(int(x), x)})
    assert as_list(ds.padded_batch(2)) == [{"a": [[1, 0], [2, 2]]}]
    # from_generator's output_shapes by key, however written (they were taken in order)
    def gen():
        yield {"a": 1, "b": [1.0, 2.0]}

    ds = Dataset.from_generator(gen, output_types={"a": np.int64, "b": np.float32},
                                output_shapes={"b": (2,), "a": ()})
    assert ds.element_spec == {"a": TensorSpec((), np.dtype(np.int64)),
                               "b": TensorSpec((2,), np.dtype(np.float32))}
    assert as_list(ds) == [{"a": 1, "b": [1.0, 2.0]}]
    # zip and from_tensor_slices of dicts keep the given keys and order
    z = Dataset.zip({"y": Dataset.range(2), "x": Dataset.range(10, 12)})
    assert [list(e) for e in z] == [["y", "x"]] * 2
    assert as_list(z) == [{"y": 0, "x": 10}, {"y": 1, "x": 11}]
    s = Dataset.from_tensor_slices({"y": np.arange(2), "x": np.arange(10, 12)})
    assert as_list(s.batch(2)) == [{"y": [0, 1], "x": [10, 11]}]


def test_batch_refuses_elements_of_other_keys():
    ds = Dataset.range(2).map(lambda x: {"a": x} if x == 0 else {"c": x})
    with pytest.raises(ValueError, match=r"batch: element 1 of batch 0.*'c'.*'a'"):
        list(ds.batch(2))
    with pytest.raises(ValueError, match=r"padded_batch: element 1 of batch 0"):
        list(Dataset.from_generator(lambda: iter([{"a": 0}, {"c": 1}])).padded_batch(2))


# --- 2. strings in padded_batch ----------------------------------------------------------

def test_padded_batch_of_strings_pads_with_the_whole_value_and_the_empty_string():
    words = Dataset.from_tensor_slices(np.array([["a", "b"], ["c", "d"]]))
    # TF: [[b'a', b'b', b'<pad>'], [b'c', b'd', b'<pad>']] (ember cut it to '<')
    out = next(iter(words.padded_batch(2, padded_shapes=[3], padding_values="<pad>")))
    assert out.tolist() == [["a", "b", "<pad>"], ["c", "d", "<pad>"]]
    # TF: [[b'a', b'b', b''], [b'c', b'd', b'']] (ember padded with '0')
    assert next(iter(words.padded_batch(2, padded_shapes=[3]))).tolist() == [
        ["a", "b", ""], ["c", "d", ""]]

    def gen():
        yield ["a"]
        yield ["bb", "c"]

    ds = Dataset.from_generator(gen, output_signature=TensorSpec((None,), np.dtype(object)))
    # TF: [[b'a', b''], [b'bb', b'c']] (ember padded with 0)
    assert next(iter(ds.padded_batch(2))).tolist() == [["a", ""], ["bb", "c"]]

    def gen_bytes():
        yield [b"a"]
        yield [b"bb", b"c"]

    ds = Dataset.from_generator(gen_bytes,
                                output_signature=TensorSpec((None,), np.dtype(object)))
    assert next(iter(ds.padded_batch(2))).tolist() == [[b"a", b""], [b"bb", b"c"]]


def test_padded_batch_of_scalar_strings_holds_the_strings():
    ds = Dataset.from_tensor_slices(np.array(["a", "b"])).map(lambda s: (s, s)).padded_batch(2)
    first = next(iter(ds))[0]
    # TF: [b'a', b'b'] (ember's batch held two 0-d object arrays)
    assert first.tolist() == ["a", "b"]
    assert all(isinstance(x, str) for x in first)


# --- 3. zip's cardinality ----------------------------------------------------------------

def test_zip_with_an_input_of_unknown_length_has_unknown_length():
    filtered = Dataset.range(3).filter(lambda x: x > 0)
    z = Dataset.zip(filtered, Dataset.range(5))
    assert z.cardinality() == UNKNOWN_CARDINALITY  # TF: -2 (ember said 5)
    with pytest.raises(TypeError, match="unknown"):  # TF: "The dataset length is unknown."
        len(z)
    assert len(list(z)) == 2
    # TF's ZipDatasetOp: -2, -2, -2, -1, 2
    assert Dataset.zip(filtered, Dataset.range(0)).cardinality() == UNKNOWN_CARDINALITY
    assert Dataset.zip(Dataset.range(0), filtered).cardinality() == UNKNOWN_CARDINALITY
    assert Dataset.zip(filtered, Dataset.range(3).repeat()).cardinality() == \
        UNKNOWN_CARDINALITY
    assert Dataset.zip(Dataset.range(3).repeat(), Dataset.range(3).repeat()).cardinality() \
        == INFINITE_CARDINALITY
    assert Dataset.zip(Dataset.range(2), Dataset.range(3).repeat()).cardinality() == 2
    with pytest.raises(TypeError, match="infinite"):  # TF: "The dataset is infinite."
        len(Dataset.range(3).repeat())


# --- 4. a map returning a list -----------------------------------------------------------

def test_a_list_returned_by_map_is_a_tuple_of_components():
    ds = Dataset.range(3).map(lambda x: [x, x + 1])
    first = next(iter(ds))
    assert isinstance(first, tuple) and first == (0, 1)  # TF: (0, 1)
    # TF: (TensorSpec((), int64), TensorSpec((), int64))
    assert ds.element_spec == (TensorSpec((), np.dtype(np.int64)),) * 2
    a, b = next(iter(ds.batch(2)))  # TF: ([0, 1], [1, 2])
    assert a.tolist() == [0, 1] and b.tolist() == [1, 2]
    assert as_list(Dataset.range(3).map(lambda x: [x, x + 1], num_parallel_calls=2)) == [
        (0, 1), (1, 2), (2, 3)]
    # a list inside a tuple stays one component: TF (TensorSpec(()), TensorSpec((2,)))
    nested = Dataset.range(3).map(lambda x: (x, [x, x]))
    assert [s.shape for s in nested.element_spec] == [(), (2,)]


# --- 5. shuffle's reshuffle_each_iteration=None ------------------------------------------

def test_shuffle_reshuffle_none_reshuffles_each_pass():
    ds = Dataset.range(30).shuffle(5, seed=3, reshuffle_each_iteration=None)
    a, b = as_list(ds), as_list(ds)
    assert a != b and sorted(a) == sorted(b)  # TF: the passes differ
    same = Dataset.range(30).shuffle(5, seed=3, reshuffle_each_iteration=True)
    assert as_list(same) == a and as_list(same) == b
    ds = Dataset.range(30).shuffle(5, seed=3, name="s")  # TF's default: None
    assert as_list(ds) == a
    assert as_list(Dataset.from_tensor_slices(np.arange(3), name="x")) == [0, 1, 2]


# --- 6. element_spec ---------------------------------------------------------------------

def test_a_maps_spec_leaves_a_size_that_varies_with_the_values_unknown():
    ds = varlen()
    assert ds.element_spec == TensorSpec((None,), np.dtype(np.int64))  # TF: (None,)
    assert [e.shape for e in ds] == [(1,), (2,), (3,)]
    # TF: (None, None)
    assert ds.padded_batch(2).map(lambda b: b).element_spec.shape == (None, None)
    # sizes that do not vary stay known (TF traces them)
    spec = Dataset.range(4).map(lambda x: (np.zeros(3, np.float32), x)).element_spec
    assert spec[0].shape == (3,) and spec[1].shape == ()
    # an empty input: TF's spec from tracing, here from an element made from the input's
    assert Dataset.range(0).map(lambda x: x).element_spec == TensorSpec((), np.dtype(np.int64))


def test_a_generators_spec_leaves_a_size_its_first_elements_differ_in_unknown():
    def gen():
        yield np.zeros(1, np.int64)
        yield np.zeros(2, np.int64)

    ds = Dataset.from_generator(gen)
    assert ds.element_spec.shape == (None,)
    assert ds.padded_batch(2).element_spec.shape == (None, None)  # TF's batch_bad_shapes


def test_padded_batch_reports_its_padded_shapes():
    # TF: (None, 6) (ember: (None, None))
    assert varlen().padded_batch(2, padded_shapes=[6]).element_spec.shape == (None, 6)
    assert varlen().padded_batch(2, padded_shapes=6).element_spec.shape == (None, 6)
    rows = Dataset.from_tensor_slices(np.zeros((4, 3)))
    assert rows.padded_batch(2).element_spec.shape == (None, 3)  # TF: (None, 3)
    assert rows.padded_batch(2, padded_shapes=[None]).element_spec.shape == (None, None)
    assert rows.padded_batch(2, drop_remainder=True).element_spec.shape == (2, 3)
    cube = Dataset.from_tensor_slices(np.zeros((2, 2, 2)))
    assert cube.padded_batch(2, padded_shapes=[-1, 4]).element_spec.shape == (None, None, 4)
    pair = Dataset.zip((varlen(), Dataset.range(1, 4)))
    # TF: (TensorSpec((None, 7)), TensorSpec((None,)))
    assert [s.shape for s in pair.padded_batch(2, padded_shapes=([7], [])).element_spec] == [
        (None, 7), (None,)]
    # TF: "The padded shape (4, 4) is not compatible with the shape (3,) of the
    # corresponding input component", at construction
    with pytest.raises(ValueError, match=r"padded shape \(4, 4\).*not compatible.*\(3,\)"):
        rows.padded_batch(2, padded_shapes=[4, 4])
    with pytest.raises(ValueError, match=r"padded shape \(2,\).*not compatible.*\(3,\)"):
        rows.padded_batch(2, padded_shapes=[2])


def test_flat_maps_spec_is_that_of_the_datasets_it_makes():
    ds = Dataset.range(7).window(3).flat_map(lambda w: w.batch(3))
    assert ds.element_spec.shape == (None,)  # TF: (None,) (ember: (3,))
    assert [e.shape for e in ds] == [(3,), (3,), (1,)]
    # no windows at all: TF (None,) (ember raised: the dataset is empty)
    empty = Dataset.range(7).window(10, drop_remainder=True).flat_map(lambda w: w.batch(10))
    assert empty.element_spec == TensorSpec((None,), np.dtype(np.int64))
    assert list(empty) == []
    # TF: (None,)
    assert Dataset.range(0).flat_map(
        lambda x: Dataset.from_tensors(x).batch(2)).element_spec.shape == (None,)
    # children of sizes that differ
    ds = Dataset.range(1, 4).flat_map(lambda x: Dataset.from_tensors(np.zeros(int(x))))
    assert ds.element_spec.shape == (None,)


# --- 7. window on tuples and dicts; its cardinality -------------------------------------

def test_window_of_a_tuple_is_a_tuple_of_datasets():
    pairs = Dataset.zip(Dataset.range(5), Dataset.range(10, 15))
    first = next(iter(pairs.window(2)))
    assert isinstance(first, tuple) and all(isinstance(w, Dataset) for w in first)
    assert [as_list(w) for w in first] == [[0, 1], [10, 11]]
    # TF: [([0, 1], [10, 11]), ([2, 3], [12, 13]), ([4], [14])]
    ds = pairs.window(2).flat_map(lambda a, b: Dataset.zip(a.batch(2), b.batch(2)))
    assert as_list(ds) == [([0, 1], [10, 11]), ([2, 3], [12, 13]), ([4], [14])]
    spec = pairs.window(2).element_spec  # TF: (DatasetSpec(TensorSpec(())), ...)
    assert spec == (DatasetSpec(TensorSpec((), np.dtype(np.int64))),) * 2
    assert [s.shape for s in ds.element_spec] == [(None,), (None,)]


def test_window_of_a_dict_is_a_dict_of_datasets():
    d = Dataset.zip({"a": Dataset.range(5), "b": Dataset.range(5)})
    # TF: [(array([0, 1]), 0), (array([2, 3]), 2), (array([4]), 4)]
    ds = d.window(2).flat_map(lambda w: Dataset.zip(w["a"].batch(2), w["b"]))
    assert as_list(ds) == [([0, 1], 0), ([2, 3], 2), ([4], 4)]
    spec = Dataset.zip((Dataset.range(5), {"x": Dataset.range(5)})).window(2).element_spec
    leaf = DatasetSpec(TensorSpec((), np.dtype(np.int64)))
    assert spec == (leaf, {"x": leaf})  # TF: (DatasetSpec(...), {'x': DatasetSpec(...)})
    assert d.window(2).cardinality() == 3


# TF's cardinalities of range(7).window(size, shift, stride, drop_remainder)
@pytest.mark.parametrize("args,tf_card", [
    ((3, None, 1, False), 3), ((3, None, 1, True), 2), ((3, 1, 1, False), 7),
    ((3, 1, 1, True), 5), ((3, 2, 2, False), 4), ((3, 2, 2, True), 2),
    ((2, 4, 1, False), 2), ((2, 4, 1, True), 2), ((4, 1, 3, False), 7),
    ((4, 1, 3, True), 0), ((1, 1, 1, False), 7), ((10, 1, 1, False), 7),
    ((10, 1, 1, True), 0)])
def test_window_cardinality_is_tensorflows(args, tf_card):
    ds = Dataset.range(7).window(*args)
    assert ds.cardinality() == tf_card
    assert len(list(ds)) == tf_card


def test_window_cardinality_of_endless_and_unknown_inputs():
    assert Dataset.range(3).repeat().window(2).cardinality() == INFINITE_CARDINALITY
    assert Dataset.range(3).filter(lambda x: x > 0).window(2).cardinality() == \
        UNKNOWN_CARDINALITY
    assert next(iter(Dataset.range(7).window(3))).cardinality() == 3  # TF: 3


# --- 8. mixed dtypes ---------------------------------------------------------------------

def test_concatenate_refuses_elements_of_another_dtype_or_structure():
    ints32 = Dataset.from_tensor_slices(np.arange(2, dtype=np.int32))
    # TF: TypeError "Incompatible dataset elements: TensorSpec(shape=(), dtype=tf.int64)
    # vs. TensorSpec(shape=(), dtype=tf.int32)", when concatenate is called
    with pytest.raises(TypeError, match=r"concatenate: incompatible.*int64.*int32"):
        Dataset.range(2).concatenate(ints32)
    with pytest.raises(TypeError, match="concatenate: incompatible"):
        Dataset.range(2).concatenate(Dataset.zip(Dataset.range(2), Dataset.range(2)))
    # strings of any width are one dtype: TF [b'a', b'bb']
    words = Dataset.from_tensor_slices(np.array(["a"])).concatenate(
        Dataset.from_tensor_slices(np.array(["bb"])))
    assert as_list(words) == ["a", "bb"] and words.element_spec.shape == ()
    # sizes that differ are unknown: TF (None,)
    rows = Dataset.from_tensor_slices(np.zeros((2, 3))).concatenate(
        Dataset.from_tensor_slices(np.zeros((2, 4))))
    assert rows.element_spec.shape == (None,)


def test_padded_batch_refuses_padding_values_of_another_dtype():
    # TF: TypeError "`padding_values` values type int32 does not match type int64 of the
    # corresponding input component" (a Python int is int32)
    with pytest.raises(TypeError, match=r"padded_batch: the padding value.*int32.*int64"):
        varlen().padded_batch(2, padding_values=-1)
    floats = Dataset.from_tensor_slices(np.zeros((2, 2), np.float32))
    with pytest.raises(TypeError, match=r"padding value.*float64.*float32"):
        floats.padded_batch(2, padded_shapes=[3], padding_values=np.float64(1))
    with pytest.raises(TypeError, match=r"padding value.*int32.*float32"):
        floats.padded_batch(2, padded_shapes=[3], padding_values=1)
    words = Dataset.from_tensor_slices(np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(TypeError, match=r"padding value.*int64"):
        words.padded_batch(2, padded_shapes=[3], padding_values=np.int64(0))
    pair = Dataset.zip({"a": varlen(), "b": varlen()})
    with pytest.raises(TypeError, match=r"padding value of component \['b'\].*int32"):
        pair.padded_batch(2, padding_values={"a": np.int64(0), "b": 0})
    # TF: "`padding_values` values should be scalars, but got (2,)"
    with pytest.raises(ValueError, match=r"must be a scalar.*\(2,\)"):
        floats.padded_batch(2, padded_shapes=[3], padding_values=np.zeros(2, np.float32))
    # the dtypes TF takes: a Python float for float32, a Python int for int32, bytes for
    # strings (TF: [[b'a', b'b', b'x'], ...])
    assert next(iter(floats.padded_batch(2, padded_shapes=[3], padding_values=1.5))).tolist() \
        == [[0, 0, 1.5], [0, 0, 1.5]]
    ints = Dataset.from_tensor_slices(np.zeros((2, 2), np.int32))
    assert next(iter(ints.padded_batch(2, padded_shapes=[3], padding_values=7)))[:, 2].tolist() \
        == [7, 7]
    assert next(iter(words.padded_batch(2, padded_shapes=[3], padding_values=b"x"))).tolist() \
        == [["a", "b", "x"], ["c", "d", "x"]]
    # one value for every component: TF [[[1, -1], [2, 2]], [[1, -1], [2, 2]]]
    both = Dataset.zip(varlen(), varlen()).take(2).padded_batch(2, padding_values=np.int64(-1))
    assert as_list(both) == [([[1, -1], [2, 2]], [[1, -1], [2, 2]])]


# --- 9. skip(-1) -------------------------------------------------------------------------

def test_skip_minus_one_skips_everything_even_of_an_endless_input():
    # TF: [] (ember skipped 2**62 elements of the endless range: it never ended)
    assert finishes(lambda: as_list(Dataset.range(3).repeat().skip(-1).take(2))) == []
    endless_rows = Dataset.from_tensor_slices(np.arange(3)).repeat()
    assert finishes(lambda: as_list(endless_rows.skip(-1).take(2))) == []
    assert finishes(lambda: as_list(endless_rows.skip(-1).batch(2).take(2))) == []
    assert finishes(lambda: as_list(Dataset.range(3).filter(lambda x: x > 0).repeat()
                                    .skip(-1).take(2))) == []
    assert as_list(Dataset.range(5).skip(-1)) == []
    # TF: -1 and 0
    assert Dataset.range(3).repeat().skip(-1).cardinality() == INFINITE_CARDINALITY
    assert Dataset.range(3).skip(-1).cardinality() == 0


# --- 10. list_files ----------------------------------------------------------------------

def test_list_files_lists_a_file_once_per_pattern_it_matches(tmp_path):
    for name in ("a.txt", "ab.txt", "b.txt"):
        (tmp_path / name).write_text("")
    ds = Dataset.list_files([str(tmp_path / "a*"), str(tmp_path / "*.txt")], shuffle=False)
    names = [str(x).rsplit("/", 1)[-1] for x in ds]
    assert names == ["a.txt", "a.txt", "ab.txt", "ab.txt", "b.txt"]  # TF's order
    assert ds.cardinality() == 5


# --- get_single_element ------------------------------------------------------------------

def test_get_single_element():
    x, pair = Dataset.range(1).map(lambda x: (x, [x, x])).get_single_element()
    assert x == 0 and np.asarray(pair).tolist() == [0, 0]  # TF: (0, [0, 0])
    with pytest.raises(ValueError, match="get_single_element: the dataset was empty"):
        Dataset.range(0).get_single_element()  # TF: "Dataset was empty."
    with pytest.raises(ValueError, match="more than one element"):
        Dataset.range(2).get_single_element()  # TF: "Dataset had more than one element."

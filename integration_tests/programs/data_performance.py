"""Port of tensorflow/docs site/en/guide/data_performance.ipynb ("Better performance with
the tf.data API"): an artificial dataset that sleeps to simulate opening and reading a
file, a training loop that sleeps to simulate a step, and the guide's optimizations of it
(prefetch, sequential and parallel interleave, sequential and parallel map, cache, scalar
against vectorized map), then the "Reproducing the figures" part: a dataset that records
the time of each step, a benchmark that collects those timings into a timeline, and the
naive and optimized pipelines whose timelines the guide plots.

Upstream: https://github.com/tensorflow/docs/blob/e4210b940833a4e4e7c5d35a19ca46cafc27c7c5/site/en/guide/data_performance.ipynb
Changed: names only (tf.data -> ember.data, tf.data.AUTOTUNE -> data.AUTOTUNE,
tf.TensorSpec -> data.TensorSpec, tf.dtypes.float32/int32/int64 -> em.*, tf.py_function
-> em.py_function, tf.concat/zeros/tile -> em.*, tf.print -> em.print). Reduced: every
sleep of upstream is scaled by SCALE = 0.1 (EMBER_PROGRAMS_FULL=1: 1, upstream's;
EMBER_PROGRAMS_SHORT=1: 0.05), by a `time` whose sleep scales (and counts) what upstream's
lines ask for, so those lines are kept as they are; fast_dataset has 10,000 elements and
the timelines 50 samples per file, as upstream (EMBER_PROGRAMS_SHORT=1: 2,000 and 10).
The plotting (matplotlib, the body of draw_timeline past its numpy part) is dropped: the
numpy part is kept and what the plots would show is asserted. No model is trained here
and nothing is downloaded (the datasets are upstream's artificial ones), so the program
needs no MNIST and never skips.
Added (orders and contents, never speeds): each pipeline's elements, dtypes and shapes
against TF's (e.g. the sequential and parallel interleaves both give 0 0 1 1 2 2, as TF's
deterministic interleave with a cycle of the cores this process may run on); the sleeps
each benchmark asked for, counted (the cache runs the generator and the map once in five
epochs, TF's "executed only during the first epoch"); the parallel interleave's two "open"
sleeps running at once (each waits, up to 10 s, for the other before it sleeps: they meet
only if both files are opened at the same time, so no timing luck is involved); scalar and
vectorized mapping give the same elements, numpy's arange + 1; each timeline's shapes,
dtypes, row kinds in order (Open, Read, Map, Train ... Epoch), every (instance, epoch,
sample) annotation worked out by hand against TF's, every timed duration at least the
(scaled) sleep it timed, and the cached rows of the optimized pipeline repeating those of
its first epoch bit for bit while the map after the cache runs again each epoch;
draw_timeline's step order and entry counts.
Fixed in ember since the port was written: from_generator split a yielded tuple past the
declared structure (GAP 1: upstream's `yield (sample_idx,)` against one TensorSpec of shape
(1,) raised ValueError; it now splits a value only as deep as output_signature, TF's
flatten_up_to, and upstream's line is restored); interleave's num_parallel_calls was
accepted and ignored (GAP 2, silent: the files were opened and read one at a time; they
are now opened and read ahead on a thread pool, in the sequential order, and the two opens
are asserted to run at once).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value or behaviour and no error):
3. (silent) a function given to flat_map/interleave runs on every input element of every
pass, where TF traces it once into a graph: upstream's TimeMeasuredDataset takes its
instance number from a Python counter while being built, so in TF every file of a
pipeline is instance 0 (naive) or 1 (optimized) and the generator's epoch counter counts
its runs (0..9), while in ember each file of each pass is a new instance (0..9, then 10
and 11, in the order the parallel opens ran) whose epoch is always 0. Kept as upstream;
ember's annotations are asserted, TF's worked out beside them.
4. (by design: ember tensors hold numbers only, docs/guide/coming-from.md) no tf.string:
tf.dtypes.string (no em.string, AttributeError), tf.zeros/concat/tile of strings and
em.py_function on string inputs (DTypeError: "cannot make a tensor from ndarray data of
dtype |S4"). The steps (b"Open", b"Read", ...) stay numpy arrays of bytes objects, what TF's
.numpy() gives; three small numpy helpers stand in for tf.zeros/concat/tile on them, and
map_decorator calls the function directly (ember's map runs Python on each element
already, which is what upstream's py_function is for); `.numpy()` on those arrays is
dropped.
"""

import collections
import os
import threading
import time as real_time
import types

import numpy as np

import ember.core as em
from ember import data

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
SCALE = 1.0 if FULL else 0.05 if SHORT else 0.1
em.random.set_seed(0)
np.random.seed(0)

# upstream's `time`, with each sleep scaled by SCALE and counted (by the duration upstream
# asks for), and the most sleeps running at once noted (in all, and of each duration), to
# assert what each pipeline did
SLEPT = collections.Counter()
_running = {"now": 0, "most": 0}
_running_of, _most_of = collections.Counter(), collections.Counter()  # by duration
_meet = {}  # duration -> how many sleeps of it wait for each other (meet)
_cond = threading.Condition()


def _sleep(seconds):
  with _cond:
    SLEPT[seconds] += 1
    _running["now"] += 1
    _running["most"] = max(_running["most"], _running["now"])
    _running_of[seconds] += 1
    _most_of[seconds] = max(_most_of[seconds], _running_of[seconds])
    _cond.notify_all()
    n = _meet.get(seconds)
    if n:  # they meet only if they run at once; else each gives up after 10 s
      _cond.wait_for(lambda: _running_of[seconds] >= n, timeout=10)
  try:
    real_time.sleep(seconds * SCALE)
  finally:
    with _cond:
      _running["now"] -= 1
      _running_of[seconds] -= 1


def meet(seconds, n):
  """From now on each sleep of `seconds` waits (up to 10 s) until n of them run at once
  (n=None: no longer): a pipeline that runs n of them in parallel always gets n at once,
  one that runs them one after the other never does, whatever the timing."""
  with _cond:
    if n is None:
      _meet.pop(seconds, None)
    else:
      _meet[seconds] = n


def slept(of=None):
  """The sleeps asked for since the last call ({seconds: count}) and the most at once (of
  any duration, or of the duration `of`)."""
  with _cond:
    out = dict(SLEPT), _running["most"] if of is None else _most_of[of]
    SLEPT.clear()
    _running["most"] = 0
    _most_of.clear()
  return out


time = types.SimpleNamespace(sleep=_sleep, perf_counter=real_time.perf_counter)

# interleave's default cycle_length (AUTOTUNE) is the number of cores this process may run
# on (sched_getaffinity), TF's and ember's; the order of two files is the same from 2 up
CYCLE = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def interleaved(sequences, cycle=None):
  """The order of interleave(cycle_length=cycle, block_length=1) over these sequences."""
  cycle = CYCLE if cycle is None else cycle
  out, pending, slots = [], list(sequences), []
  while pending or slots:
    while pending and len(slots) < cycle:
      slots.append(iter(pending.pop(0)))
    for it in list(slots):
      try:
        out.append(next(it))
      except StopIteration:
        slots.remove(it)
  return out


def ints(elements):
  return [np.asarray(e).tolist() for e in elements]


# ---------------------------------------------------------------------------------------
# The dataset
class ArtificialDataset(data.Dataset):
    def _generator(num_samples):
        # Opening the file
        time.sleep(0.03)

        for sample_idx in range(num_samples):
            # Reading data (line, record) from the file
            time.sleep(0.015)

            yield (sample_idx,)

    def __new__(cls, num_samples=3):
        return data.Dataset.from_generator(
            cls._generator,
            output_signature = data.TensorSpec(shape = (1,), dtype = em.int64),
            args=(num_samples,)
        )


elements = list(ArtificialDataset())
assert ints(elements) == [[0], [1], [2]]
assert all(e.shape == (1,) and e.dtype == np.int64 for e in elements)
assert slept() == ({0.03: 1, 0.015: 3}, 1)
# the tuple, declared as one TensorSpec, is one leaf of shape (1,), as in TF (not a tuple)
[one] = data.Dataset.from_generator(lambda: iter([(7,)]),
                                    output_signature=data.TensorSpec(shape=(1,), dtype=em.int64))
assert not isinstance(one, tuple) and one.shape == (1,) and ints([one]) == [[7]], one


# The training loop
def benchmark(dataset, num_epochs=2):
    start_time = time.perf_counter()
    for epoch_num in range(num_epochs):  # noqa: B007
        for sample in dataset:  # noqa: B007
            # Performing a training step
            time.sleep(0.01)
    print("Execution time:", time.perf_counter() - start_time)


# ---------------------------------------------------------------------------------------
# Optimize performance
# The naive approach
benchmark(ArtificialDataset())
# two epochs, each: open, three reads, three training steps, one after the other
assert slept() == ({0.03: 2, 0.015: 6, 0.01: 6}, 1)

# Prefetching
benchmark(
    ArtificialDataset()
    .prefetch(data.AUTOTUNE)
)
assert slept()[0] == {0.03: 2, 0.015: 6, 0.01: 6}
assert ints(ArtificialDataset().prefetch(data.AUTOTUNE)) == [[0], [1], [2]]
slept()

# Parallelizing data extraction
# Sequential interleave
benchmark(
    data.Dataset.range(2)
    .interleave(lambda _: ArtificialDataset())
)
assert slept() == ({0.03: 4, 0.015: 12, 0.01: 12}, 1)
expected = interleaved([[[0], [1], [2]]] * 2)  # [0] [0] [1] [1] [2] [2] with 2+ cores
assert ints(data.Dataset.range(2).interleave(lambda _: ArtificialDataset())) == expected
slept()

# Parallel interleave
meet(0.03, min(2, CYCLE))  # (added) each file's open waits for the other's
benchmark(
    data.Dataset.range(2)
    .interleave(
        lambda _: ArtificialDataset(),
        num_parallel_calls=data.AUTOTUNE
    )
)
meet(0.03, None)
# the two files are opened at the same time (with two or more cores), as in TF
assert slept(of=0.03) == ({0.03: 4, 0.015: 12, 0.01: 12}, min(2, CYCLE))
# the order is TF's (deterministic by default)
assert ints(data.Dataset.range(2).interleave(
    lambda _: ArtificialDataset(), num_parallel_calls=data.AUTOTUNE)) == expected
slept()


# Parallelizing data transformation
def mapped_function(s):
    # Do some hard pre-processing
    em.py_function(lambda: time.sleep(0.03), [], ())
    return s


assert em.py_function(lambda: time.sleep(0.03), [], ()) == []  # TF: [] (Tout is empty)
slept()

# Sequential mapping
benchmark(
    ArtificialDataset()
    .map(mapped_function)
)
# per epoch: one open and three maps (0.03 s each), three reads and three steps
assert slept() == ({0.03: 8, 0.015: 6, 0.01: 6}, 1)

# Parallel mapping
benchmark(
    ArtificialDataset()
    .map(
        mapped_function,
        num_parallel_calls=data.AUTOTUNE
    )
)
assert slept()[0] == {0.03: 8, 0.015: 6, 0.01: 6}
assert ints(ArtificialDataset().map(mapped_function, num_parallel_calls=data.AUTOTUNE)) == \
    [[0], [1], [2]]  # in the input's order (deterministic by default)
slept()

# Caching
benchmark(
    ArtificialDataset()
    .map(  # Apply time consuming operations before cache
        mapped_function
    ).cache(
    ),
    5
)
# the open, the three reads and the three maps run in the first epoch only; the five
# epochs take 15 steps
assert slept() == ({0.03: 1 + 3, 0.015: 3, 0.01: 15}, 1)

# Vectorizing mapping
fast_dataset = data.Dataset.range(2000 if SHORT else 10000)

def fast_benchmark(dataset, num_epochs=2):
    start_time = time.perf_counter()
    for _ in data.Dataset.range(num_epochs):
        for _ in dataset:
            pass
    em.print("Execution time:", time.perf_counter() - start_time)

def increment(x):
    return x+1


n_fast = len(fast_dataset)

# Scalar mapping
fast_benchmark(
    fast_dataset
    # Apply function one item at a time
    .map(increment)
    # Batch
    .batch(256)
)
scalar = list(fast_dataset.map(increment).batch(256))

# Vectorized mapping
fast_benchmark(
    fast_dataset
    .batch(256)
    # Apply function on a batch of items
    # The tf.Tensor.__add__ method already handle batches
    .map(increment)
)
vectorized = list(fast_dataset.batch(256).map(increment))
assert [b.shape for b in scalar] == [b.shape for b in vectorized] == \
    [(256,)] * (n_fast // 256) + [(n_fast % 256,)]
assert all(b.dtype == np.int64 for b in scalar + vectorized)
np.testing.assert_array_equal(np.concatenate(scalar), np.arange(n_fast) + 1)
np.testing.assert_array_equal(np.concatenate(vectorized), np.arange(n_fast) + 1)


# ---------------------------------------------------------------------------------------
# Reproducing the figures
# (import itertools, defaultdict, numpy, matplotlib: matplotlib is dropped with the plots)
import itertools  # noqa: E402
from collections import defaultdict  # noqa: E402


# GAP 4 (by design, no string tensors): tf.zeros([0, 1], dtype=tf.string), tf.concat and
# tf.tile of strings stand in as numpy arrays of bytes objects, what TF's .numpy() of a
# tf.string tensor is:
def string_tensor(x):
  return np.asarray(x, dtype=np.bytes_).astype(object)


def string_zeros(shape):
  return np.full(shape, b'', dtype=object)


def string_concat(values, axis):
  return np.concatenate([string_tensor(v) for v in values], axis=axis)


def string_tile(x, multiples):
  return np.tile(string_tensor(x), multiples)


assert not hasattr(em, 'string')


# The dataset
class TimeMeasuredDataset(data.Dataset):
    # OUTPUT: (steps, timings, counters)
    # GAP 4: OUTPUT_TYPES = (tf.dtypes.string, tf.dtypes.float32, tf.dtypes.int32)
    OUTPUT_TYPES = (np.bytes_, em.float32, em.int32)
    OUTPUT_SHAPES = ((2, 1), (2, 2), (2, 3))

    _INSTANCES_COUNTER = itertools.count()  # Number of datasets generated
    _EPOCHS_COUNTER = defaultdict(itertools.count)  # Number of epochs done for each dataset

    def _generator(instance_idx, num_samples):
        epoch_idx = next(TimeMeasuredDataset._EPOCHS_COUNTER[instance_idx])

        # Opening the file
        open_enter = time.perf_counter()
        time.sleep(0.03)
        open_elapsed = time.perf_counter() - open_enter

        for sample_idx in range(num_samples):
            # Reading data (line, record) from the file
            read_enter = time.perf_counter()
            time.sleep(0.015)
            read_elapsed = time.perf_counter() - read_enter

            yield (
                [("Open",), ("Read",)],
                [(open_enter, open_elapsed), (read_enter, read_elapsed)],
                [(instance_idx, epoch_idx, -1), (instance_idx, epoch_idx, sample_idx)]
            )
            open_enter, open_elapsed = -1., -1.  # Negative values will be filtered


    def __new__(cls, num_samples=3):
        return data.Dataset.from_generator(
            cls._generator,
            output_types=cls.OUTPUT_TYPES,
            output_shapes=cls.OUTPUT_SHAPES,
            args=(next(cls._INSTANCES_COUNTER), num_samples)
        )


# The iteration loop
def timelined_benchmark(dataset, num_epochs=2):
    # Initialize accumulators
    # GAP 4: steps_acc = tf.zeros([0, 1], dtype=tf.dtypes.string)
    steps_acc = string_zeros([0, 1])
    times_acc = em.zeros([0, 2], dtype=em.float32)
    values_acc = em.zeros([0, 3], dtype=em.int32)

    start_time = time.perf_counter()
    for epoch_num in range(num_epochs):
        epoch_enter = time.perf_counter()
        for (steps, times, values) in dataset:
            # Record dataset preparation informations
            # GAP 4: steps_acc = tf.concat((steps_acc, steps), axis=0)
            steps_acc = string_concat((steps_acc, steps), axis=0)
            times_acc = em.concat((times_acc, times), axis=0)
            values_acc = em.concat((values_acc, values), axis=0)

            # Simulate training time
            train_enter = time.perf_counter()
            time.sleep(0.01)
            train_elapsed = time.perf_counter() - train_enter

            # Record training informations
            # GAP 4: steps_acc = tf.concat((steps_acc, [["Train"]]), axis=0)
            steps_acc = string_concat((steps_acc, [["Train"]]), axis=0)
            times_acc = em.concat((times_acc, [(train_enter, train_elapsed)]), axis=0)
            values_acc = em.concat((values_acc, [values[-1]]), axis=0)

        epoch_elapsed = time.perf_counter() - epoch_enter
        # Record epoch informations
        # GAP 4: steps_acc = tf.concat((steps_acc, [["Epoch"]]), axis=0)
        steps_acc = string_concat((steps_acc, [["Epoch"]]), axis=0)
        times_acc = em.concat((times_acc, [(epoch_enter, epoch_elapsed)]), axis=0)
        values_acc = em.concat((values_acc, [[-1, epoch_num, -1]]), axis=0)
        time.sleep(0.001)

    em.print("Execution time:", time.perf_counter() - start_time)
    return {"steps": steps_acc, "times": times_acc, "values": values_acc}


# The plotting method: its numpy part; what it would plot is returned, by step, instead
def draw_timeline(timeline, title, width=0.5, annotate=False, save=False):
    # Remove invalid entries (negative times, or empty steps) from the timelines
    invalid_mask = np.logical_and(timeline['times'] > 0, timeline['steps'] != b'')[:,0]
    # GAP 4: steps = timeline['steps'][invalid_mask].numpy()   (steps are numpy already)
    steps = timeline['steps'][invalid_mask]
    times = timeline['times'][invalid_mask].numpy()
    values = timeline['values'][invalid_mask].numpy()

    # Get a set of different steps, ordered by the first time they are encountered
    step_ids, indices = np.stack(np.unique(steps, return_index=True))
    step_ids = step_ids[np.argsort(indices)]

    # Shift the starting time to 0 and compute the maximal time value
    min_time = times[:,0].min()
    times[:,0] = (times[:,0] - min_time)
    end = max(width, (times[:,0]+times[:,1]).max() + 0.01)

    plotted = {}  # step name -> (bars, annotations): what each row of the figure shows
    for i, step in enumerate(step_ids):  # noqa: B007
        step_name = step.decode()

        # Get timings and annotation for the given step
        entries_mask = np.squeeze(steps==step)
        serie = np.unique(times[entries_mask], axis=0)
        annotations = values[entries_mask]

        plotted[step_name] = (serie, annotations)
    assert 0 <= times[:, 0].min() and (times[:, 0] + times[:, 1]).max() + 0.01 <= end
    return plotted


# Use wrappers for mapped function
def map_decorator(func):
    def wrapper(steps, times, values):
        # Use a tf.py_function to prevent auto-graph from compiling the method
        # GAP 4: return tf.py_function(func, inp=(steps, times, values),
        #     Tout=(steps.dtype, times.dtype, values.dtype))   (DTypeError: a tensor of
        # strings; ember's map calls the function on each element, as py_function does)
        return func(steps, times, values)
    return wrapper


try:
  em.py_function(lambda s: s, inp=(np.array([[b'Open']]),), Tout=np.bytes_)
  gap4 = None
except (TypeError, em.DTypeError) as e:
  gap4 = e
assert gap4 is not None and "|S4" in str(gap4)

# Pipelines comparison
_batch_map_num_items = 10 if SHORT else 50

def dataset_generator_fun(*args):
    return TimeMeasuredDataset(num_samples=_batch_map_num_items)


# Naive
@map_decorator
def naive_map(steps, times, values):
    map_enter = time.perf_counter()
    time.sleep(0.001)  # Time consuming step
    time.sleep(0.0001)  # Memory consuming step
    map_elapsed = time.perf_counter() - map_enter

    return (
        # GAP 4: tf.concat((steps, [["Map"]]), axis=0),
        string_concat((steps, [["Map"]]), axis=0),
        em.concat((times, [[map_enter, map_elapsed]]), axis=0),
        em.concat((values, [values[-1]]), axis=0)
    )

slept()
naive_timeline = timelined_benchmark(
    data.Dataset.range(2)
    .flat_map(dataset_generator_fun)
    .map(naive_map)
    .batch(_batch_map_num_items, drop_remainder=True)
    .unbatch(),
    5
)
N = _batch_map_num_items
assert slept() == ({0.03: 10, 0.015: 10 * N, 0.001: 10 * N + 5, 0.0001: 10 * N,
                    0.01: 10 * N}, 1)


# Optimized
@map_decorator
def time_consuming_map(steps, times, values):
    map_enter = time.perf_counter()
    time.sleep(0.001 * values.shape[0])  # Time consuming step
    map_elapsed = time.perf_counter() - map_enter

    return (
        # GAP 4: tf.concat((steps, tf.tile([[["1st map"]]], [steps.shape[0], 1, 1])), axis=1),
        string_concat((steps, string_tile([[["1st map"]]], [steps.shape[0], 1, 1])), axis=1),
        em.concat((times, em.tile([[[map_enter, map_elapsed]]], [times.shape[0], 1, 1])), axis=1),
        em.concat((values, em.tile([[values[:][-1][0]]], [values.shape[0], 1, 1])), axis=1)
    )


@map_decorator
def memory_consuming_map(steps, times, values):
    map_enter = time.perf_counter()
    time.sleep(0.0001 * values.shape[0])  # Memory consuming step
    map_elapsed = time.perf_counter() - map_enter

    # Use tf.tile to handle batch dimension
    return (
        # GAP 4: tf.concat((steps, tf.tile([[["2nd map"]]], [steps.shape[0], 1, 1])), axis=1),
        string_concat((steps, string_tile([[["2nd map"]]], [steps.shape[0], 1, 1])), axis=1),
        em.concat((times, em.tile([[[map_enter, map_elapsed]]], [times.shape[0], 1, 1])), axis=1),
        em.concat((values, em.tile([[values[:][-1][0]]], [values.shape[0], 1, 1])), axis=1)
    )


slept()
optimized_timeline = timelined_benchmark(
    data.Dataset.range(2)
    .interleave(  # Parallelize data reading
        dataset_generator_fun,
        num_parallel_calls=data.AUTOTUNE
    )
    .batch(  # Vectorize your mapped function
        _batch_map_num_items,
        drop_remainder=True)
    .map(  # Parallelize map transformation
        time_consuming_map,
        num_parallel_calls=data.AUTOTUNE
    )
    .cache()  # Cache data
    .map(  # Reduce memory usage
        memory_consuming_map,
        num_parallel_calls=data.AUTOTUNE
    )
    .prefetch(  # Overlap producer and consumer works
        data.AUTOTUNE
    )
    .unbatch(),
    5
)
# the files are opened and read, and the first map runs, in the first epoch only; the
# second map runs on both batches of every epoch
counts, _ = slept()
expected = collections.Counter({0.03: 2, 0.015: 2 * N, 0.01: 10 * N, 0.001: 5})
expected.update({0.001 * N: 2})  # (with N = 10 these are 0.01 and 0.001 too)
expected.update({0.0001 * N: 10})
assert counts == expected, counts

plotted = {
    "Naive": draw_timeline(naive_timeline, "Naive", 15),
    "Optimized": draw_timeline(optimized_timeline, "Optimized", 15),
}

# ---------------------------------------------------------------------------------------
# What the timelines hold, row by row
for timeline, per_element in ((naive_timeline, 4), (optimized_timeline, 5)):
  rows = 5 * (2 * N * per_element + 1)  # per element its rows and Train, per epoch Epoch
  assert timeline['steps'].shape == (rows, 1) and timeline['steps'].dtype == object
  assert timeline['times'].shape == (rows, 2) and timeline['times'].dtype == em.float32
  assert timeline['values'].shape == (rows, 3) and timeline['values'].dtype == em.int32

# The naive pipeline: per epoch, file 0's N samples then file 1's (flat_map), each element
# [Open, Read, Map] then Train, and one Epoch row. The (instance, epoch) of file c in pass
# k: TF traces dataset_generator_fun once, so every file is instance 0 and the
# generator's epoch counter counts its runs: (0, 2k + c).
# GAP 3 (silent): ember calls dataset_generator_fun for each file of each pass, each a new
# instance whose epoch is 0: (2k + c, 0).
steps = naive_timeline['steps'][:, 0].tolist()
values = naive_timeline['values'].numpy()
times = naive_timeline['times'].numpy()
expected_steps, expected_values, expected_values_tf = [], [], []
for k in range(5):
  for c in range(2):
    for s in range(N):
      for ie, out in (((2 * k + c, 0), expected_values), ((0, 2 * k + c), expected_values_tf)):
        out += [(*ie, -1), (*ie, s), (*ie, s), (*ie, s)]
      expected_steps += [b'Open', b'Read', b'Map', b'Train']
  expected_steps.append(b'Epoch')
  expected_values.append((-1, k, -1))
  expected_values_tf.append((-1, k, -1))
assert steps == expected_steps
# assert values.tolist() == [list(v) for v in expected_values_tf]   (TF)
assert values.tolist() == [list(v) for v in expected_values]
assert values.tolist() != [list(v) for v in expected_values_tf]
# the files opened: one valid Open row per file per pass, the rest -1
is_open = np.array(steps) == b'Open'
first_of_file = np.zeros(len(steps), bool)
first_of_file[np.flatnonzero(is_open)[::N]] = True
assert (times[is_open & ~first_of_file] == -1).all()
assert (times[first_of_file, 1] >= 0.99 * 0.03 * SCALE).all()
for name, sleep in ((b'Read', 0.015), (b'Map', 0.0011), (b'Train', 0.01)):
  durations = times[np.array(steps) == name, 1]
  assert len(durations) == 10 * N and (durations >= 0.99 * sleep * SCALE).all(), name

# The optimized pipeline: the interleave alternates the two files (with two or more
# cores); per batch of N, [Open, Read] from the file, then "1st map" and "2nd map", each
# annotated with the batch's last element's (instance, epoch, -1); then Train. TF: both
# files are instance 1 and their epochs 0 and 1 (in the order the parallel opens ran).
# GAP 3 (silent): ember's are the instances 10 and 11 (also in the order the parallel opens
# ran: the first element is file 0's), epoch 0.
steps = optimized_timeline['steps'][:, 0].tolist()
values = optimized_timeline['values'].numpy()
times = optimized_timeline['times'].numpy()
file0 = int(values[0, 0])
assert file0 in (10, 11), values[0]
order = interleaved([[(file0, s) for s in range(N)], [(21 - file0, s) for s in range(N)]])
expected_steps, expected_values = [], []
for k in range(5):
  for b in range(2):
    batch = order[b * N:(b + 1) * N]
    last = (batch[-1][0], 0, -1)
    for i, s in batch:
      expected_steps += [b'Open', b'Read', b'1st map', b'2nd map', b'Train']
      expected_values += [(i, 0, -1), (i, 0, s), last, last, last]
  expected_steps.append(b'Epoch')
  expected_values.append((-1, k, -1))
assert steps == expected_steps
assert values.tolist() == [list(v) for v in expected_values]
# the cache: the rows made before it (Open, Read, 1st map) repeat those of the first epoch
# bit for bit in every later epoch; the 2nd map is timed anew each epoch
per_epoch = 2 * N * 5 + 1
cached = np.isin(np.array(steps[:per_epoch]), [b'Open', b'Read', b'1st map'])
second = np.array(steps[:per_epoch]) == b'2nd map'
first_epoch = times[:per_epoch]
for k in range(1, 5):
  epoch = times[k * per_epoch:(k + 1) * per_epoch]
  np.testing.assert_array_equal(epoch[cached], first_epoch[cached])
  assert (epoch[second, 0] >= first_epoch[second, 0]).all()
for name, sleep in ((b'Read', 0.015), (b'1st map', 0.001 * N), (b'2nd map', 0.0001 * N),
                    (b'Train', 0.01)):
  durations = times[np.array(steps) == name, 1]
  assert (durations >= 0.99 * sleep * SCALE).all(), name

# What the plots would show: the steps in order, and how many bars each row has
for title, names in (("Naive", ['Open', 'Read', 'Map', 'Train', 'Epoch']),
                     ("Optimized", ['Open', 'Read', '1st map', '2nd map', 'Train', 'Epoch'])):
  assert list(plotted[title]) == names, (title, list(plotted[title]))
serie, annotations = plotted["Naive"]["Open"]
assert len(annotations) == 10 and len(serie) <= 10  # one valid Open per file per pass
assert len(plotted["Naive"]["Read"][1]) == 10 * N and len(plotted["Naive"]["Epoch"][1]) == 5
assert [a.tolist() for a in plotted["Naive"]["Epoch"][1]] == [[-1, k, -1] for k in range(5)]
serie, annotations = plotted["Optimized"]["Open"]
assert len(annotations) == 10 and len(serie) <= 2  # two opens, cached for the four others
print("Steps plotted (naive):", list(plotted["Naive"]),
      "(optimized):", list(plotted["Optimized"]))

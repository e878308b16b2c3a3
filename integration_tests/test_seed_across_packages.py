"""``em.random.set_seed`` makes ember.data's unseeded shuffles repeat, in either import order.

ember-data does not import ember-core: ``ember.core.random.set_seed`` sets ember.data's
global seed when ember.data is loaded, and ember.data imported later adopts core's seed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

_SHUFFLE = ("print([int(x) for x in data.Dataset.from_tensor_slices(np.arange(30))"
            ".shuffle(30).repeat(2)], [int(x) for x in data.Dataset.range(30).shuffle(8)])")
PROGRAMS = {
    # data imported first: set_seed reaches it
    "data_first": "import numpy as np\nfrom ember import data\nimport ember.core as em\n"
                  "em.random.set_seed(0)\n" + _SHUFFLE,
    # core seeded first: data adopts the seed when imported
    "core_first": "import numpy as np\nimport ember.core as em\nem.random.set_seed(0)\n"
                  "from ember import data\n" + _SHUFFLE,
}


def _run(program: str) -> str:
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_set_seed_makes_unseeded_shuffle_repeat(name):
    first, second = _run(PROGRAMS[name]), _run(PROGRAMS[name])
    assert first.strip()
    assert first == second


def test_both_import_orders_give_the_same_order():
    assert _run(PROGRAMS["data_first"]) == _run(PROGRAMS["core_first"])


def test_a_random_map_draws_from_its_own_stream_not_the_programs():
    # keras-io CutMix: a map drawing em.random numbers prefetched in background threads
    # while the model was built, so the model's initial weights (the global stream's
    # draws) changed from run to run under set_seed. Each map now has a stream of its own,
    # keyed when it is made: the program's draws and the map's both repeat.
    import numpy as np

    import ember.core as em
    from ember import data

    def run():
        em.random.set_seed(0)
        ds = data.Dataset.range(64).map(lambda x: em.random.uniform(()),
                                        num_parallel_calls=data.AUTOTUNE)
        it = iter(ds.prefetch(data.AUTOTUNE))
        first = float(next(it))
        mine = [float(em.random.uniform(())) for _ in range(100)]
        rest = sorted(float(v) for v in it)
        return first, mine, rest

    em.random.set_seed(0)
    alone = [float(em.random.uniform(())) for _ in range(100)]
    a, b = run(), run()
    assert a[1] == alone and b[1] == alone  # the map took nothing from the global stream
    assert a[0] == b[0] and a[2] == b[2]    # and its own draws repeat
    assert len(set(np.round(a[2], 6))) == 63  # (distinct draws, not one number repeated)
    # the element spec's probe draws nothing from either stream
    em.random.set_seed(0)
    ds = data.Dataset.range(4).map(lambda x: em.random.uniform(()))
    _ = ds.element_spec
    assert float(em.random.uniform(())) == alone[0]
    first_pass, second_pass = [float(v) for v in ds], [float(v) for v in ds]
    assert first_pass != second_pass  # each pass draws on, as a TF map's random op does
